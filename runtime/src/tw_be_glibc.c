/* SPDX-License-Identifier: MIT */
/*
 * Layer 1 (mechanisms): the DRAM backend, glibc's allocator itself
 * (__libc_malloc & co: no dlsym bootstrap, same layout and footprint as
 * without tierwise). The entry points' inline fast path calls glibc
 * directly for a DRAM hit; everything else goes through this table. Its
 * split_head makes a split object's head prefer the node the allocating
 * thread runs on when the tail is a NUMA node's (one mapping, head local,
 * tail on the slow node; tw_range_prefer); with a pmem tail the head is
 * plain anonymous memory.
 */
#define _GNU_SOURCE
#include "tw_mech.h"

#include <dlfcn.h>

static size_t (*tw_usable_fn)(void *); /* glibc's malloc_usable_size */

void tw_glibc_init(void) {
  if (!tw_usable_fn)
    *(void **)&tw_usable_fn = dlsym(RTLD_NEXT, "malloc_usable_size");
}

size_t tw_glibc_usable(void *p) { return tw_usable_fn ? tw_usable_fn(p) : 0; }

static void *tw_glibc_malloc(int tier, size_t size) {
  (void)tier;
  return __libc_malloc(size);
}
static void *tw_glibc_calloc(int tier, size_t size) {
  (void)tier;
  return __libc_calloc(1, size);
}
static void *tw_glibc_aligned(int tier, size_t align, size_t size) {
  (void)tier;
  return __libc_memalign(align, size);
}
static void *tw_glibc_realloc(int tier, void *p, size_t size) {
  (void)tier;
  return __libc_realloc(p, size);
}
static void tw_glibc_free(int tier, void *p) {
  (void)tier;
  __libc_free(p);
}
static size_t tw_glibc_usable_op(int tier, void *p) {
  (void)tier;
  return tw_glibc_usable(p);
}

static int tw_glibc_split_head(int tier, void *p, size_t len, int tail_tier) {
  (void)tier;
  if (!tw_tier_is_numa(tail_tier) && tail_tier != TW_TIER_KMEM)
    return 0; /* anonymous memory: first touch decides, as for glibc */
  /* preferred, not bound: a full local node never kills (README) */
  tw_range_prefer((uintptr_t)p, (uintptr_t)p + len, tw_cpu_node());
  return 0;
}

const tw_tier_ops tw_glibc_ops = {
    .name = "glibc",
    .malloc = tw_glibc_malloc,
    .calloc = tw_glibc_calloc,
    .aligned = tw_glibc_aligned,
    .realloc = tw_glibc_realloc,
    .free = tw_glibc_free,
    .usable = tw_glibc_usable_op,
    .split_head = tw_glibc_split_head,
    .id = "glibc",
};
