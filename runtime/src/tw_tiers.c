/* SPDX-License-Identifier: MIT */
/*
 * Layer 1 (mechanisms): the tier table - which backend (an ops table,
 * tw_mech.h) serves which tier - and the calls every path makes on a tier
 * through it. dram: glibc; pmem: memkind's file kind; hbw: memkind HBW;
 * kmem: memkind KMEM-DAX where memkind finds such a node, else the NUMA node
 * backend on this machine's memory-only nodes; numa:N: the NUMA node
 * backend. A tier that cannot be opened is reported once (by its backend)
 * and its sites fall back to DRAM; a tier that cannot serve one allocation
 * is reported once, and that allocation falls back.
 */
#define _GNU_SOURCE
#include "tw_mech.h"
#include "tw_clientreq.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

/* realloc within a tier takes the thread cache up to this size (a block
 * of the new size, the copy, the old block cached); larger blocks are
 * memkind's. memkind's realloc of a large block makes a new extent each
 * time (~24,000 instructions besides the copy, with its arenas' locks):
 * tw_stress, 1 thread, every site in pmem, against the program alone:
 * 1.032x its instructions at 32 KiB, 1.022x at 256 KiB (memcpy's vector
 * loop; counting rep movsb per byte 1.054x and 1.044x); wall 1.007x and
 * 0.991x, at 4 threads 0.991x and 0.977x (test/bench/slow_tier_alloc.py) */
#define TW_TC_REALLOC_MAX ((size_t)256 << 10)

/* DRAM is always there: glibc from the first allocation on. */
static const tw_tier_ops *tw_be[TW_TIER_COUNT] = {[TW_TIER_DRAM] =
                                                      &tw_glibc_ops};
/* Per tier: 0 never opened, 1 being opened (tw_open_lock held by the
 * opener), 2 opened or failed (tw_be says which). */
static int tw_tried[TW_TIER_COUNT] = {[TW_TIER_DRAM] = 2},
           tw_warned[TW_TIER_COUNT];
static pthread_mutex_t tw_open_lock = PTHREAD_MUTEX_INITIALIZER;
/* This thread is opening a tier: the backend's own allocations (memkind
 * calls malloc) must not wait for the open they are part of. */
static __thread int tw_opening_here;

const tw_tier_ops *tw_tier_backend(int tier) {
  return tier >= 0 && tier < TW_TIER_COUNT ? tw_be[tier] : NULL;
}

/* The backend being opened (tw_open_lock held), NULL: none. */
static const tw_tier_ops *tw_opening;

/* The backend for \p tier, opened (tw_open_lock held). */
static void tw_tier_open(int tier) {
  const tw_tier_ops *ops = NULL;
  __atomic_store_n(&tw_tried[tier], 1, __ATOMIC_RELAXED);
  switch (tier) {
  case TW_TIER_PMEM:
    ops = &tw_mk_pmem_ops;
    break;
  case TW_TIER_HBW:
    ops = &tw_mk_hbw_ops;
    break;
  default: /* kmem, numa:N */
    ops = &tw_numa_ops;
  }
  /* (memkind maps its arenas' metadata while the tier opens: bound like
   * the tier's later mappings, tw_tier_mapped) */
  tw_opening = ops;
  tw_opening_here = 1;
  int failed = ops->open && ops->open(tier);
  tw_opening_here = 0;
  tw_opening = NULL;
  if (!failed)
    __atomic_store_n(&tw_be[tier], ops, __ATOMIC_RELEASE);
  __atomic_store_n(&tw_tried[tier], 2, __ATOMIC_RELEASE);
}

void tw_tiers_open(const int used[TW_TIER_COUNT]) {
  pthread_mutex_lock(&tw_open_lock);
  for (int t = 0; t < TW_TIER_COUNT; t++)
    if (used[t] && !tw_tried[t])
      tw_tier_open(t);
  pthread_mutex_unlock(&tw_open_lock);
}

void tw_tier_prepare(int tier) {
  const tw_tier_ops *ops = tw_tier_backend(tier);
  if (ops && ops->prepare)
    ops->prepare(tier);
}

int tw_tier_available(int tier) {
  if (tier < 0 || tier >= TW_TIER_COUNT)
    return 0;
  if (TW_LIKELY(__atomic_load_n(&tw_be[tier], __ATOMIC_ACQUIRE) != NULL))
    return 1;
  if (__atomic_load_n(&tw_tried[tier], __ATOMIC_ACQUIRE) != 2 &&
      !tw_opening_here) {
    /* tw_malloc() of a tier no placement named: opened now, or being
     * opened by another thread, which this one waits for (a second
     * thread's blocks went to DRAM, silently, while the first opened it) */
    pthread_mutex_lock(&tw_open_lock);
    if (!tw_tried[tier])
      tw_tier_open(tier);
    pthread_mutex_unlock(&tw_open_lock);
  }
  return tw_be[tier] != NULL;
}

size_t tw_tier_describe(int tier, char *buf, size_t cap) {
  if (tier < 0 || tier >= TW_TIER_COUNT || !cap)
    return 0;
  const tw_tier_ops *ops = __atomic_load_n(&tw_be[tier], __ATOMIC_ACQUIRE);
  int tried = __atomic_load_n(&tw_tried[tier], __ATOMIC_ACQUIRE) == 2;
  const char *id = !ops && tried           ? "unavailable"
                   : ops && !ops->describe ? ops->id
                                           : NULL;
  if (ops && ops->describe)
    return ops->describe(tier, buf, cap);
  size_t n = 0;
  for (; id && id[n] && n + 1 < cap; n++)
    buf[n] = id[n];
  buf[n] = 0;
  return n;
}

void *tw_tier_alloc(int tier, size_t size, size_t align, int zero) {
  if (TW_UNLIKELY(!tw_tier_available(tier)))
    return NULL;
  const tw_tier_ops *ops = tw_be[tier];
  void *p;
  if (tier != TW_TIER_DRAM && !size)
    size = 1;
  if (ops->cache_max && (p = tw_tc_get(tier, size, align < 16 ? 16 : align))) {
    if (zero) /* (a cached block is in use: this one costs no lock) */
      memset(p, 0, size);
    return p;
  }
  int saved = errno;
  errno = 0;
  if (align > 16) {
    p = ops->aligned(tier, align, size);
    if (p && zero)
      memset(p, 0, size);
  } else
    p = zero ? ops->calloc(tier, size) : ops->malloc(tier, size);
  int quiet = errno == EAGAIN;
  errno = saved;
  if (!p && !quiet && tier != TW_TIER_DRAM && size <= ((size_t)1 << 60) &&
      !__atomic_exchange_n(&tw_warned[tier], 1, __ATOMIC_RELAXED))
    /* (a size that fails everywhere is not a tier problem) */
    tw_warn("tier ", tw_tier_str(tier),
            " could not serve an allocation (full?); falling back to dram");
  return p;
}

/* Free \p p of \p tier, into the thread cache where it takes it; \p usable:
 * its usable size, 0: not known. */
static void tw_tier_free_sized(int tier, void *p, size_t usable) {
  const tw_tier_ops *ops = tw_be[tier];
  if (!tw_tc_put(tier, ops, p, usable))
    ops->free(tier, p);
}

void tw_tier_free(int tier, void *p) { tw_tier_free_sized(tier, p, 0); }

void *tw_tier_realloc(int tier, void *p, size_t size) {
  const tw_tier_ops *ops = tw_be[tier];
  if (ops->cache_max && tw_tc_on()) {
    size_t u = ops->usable(tier, p);
    /* in place while the block holds the size and is not over twice it
     * (what memkind's realloc does, without its arena's locks) */
    if (size <= u && size >= u / 2)
      return p;
    if (size <= TW_TC_REALLOC_MAX) {
      /* within the thread cache's sizes: a block of the new size (perhaps
       * a cached one), the old one freed (perhaps cached) */
      void *q = tw_tier_alloc(tier, size, 0, 0);
      if (q) {
        memcpy(q, p, u < size ? u : size);
        tw_tier_free_sized(tier, p, u); /* (its size: not asked again) */
      }
      return q;
    }
  }
  return ops->realloc(tier, p, size);
}

size_t tw_tier_usable(int tier, void *p) {
  return tw_be[tier]->usable(tier, p);
}

void tw_tier_mapped(int tier, void *p, size_t len, int flags) {
  /* (a mapping for a tier is made by the thread that opens it, or once it
   * is open) */
  const tw_tier_ops *ops = tw_tier_backend(tier);
  if (!ops)
    ops = tw_opening;
  if (ops && ops->mapped)
    ops->mapped(tier, p, len, flags);
}

void tw_tiers_atfork(int phase) {
  if (phase == 0)
    pthread_mutex_lock(&tw_open_lock);
  for (int t = 0; t < TW_TIER_COUNT; t++)
    if (tw_be[t] && tw_be[t]->atfork)
      tw_be[t]->atfork(t, phase);
  if (phase != 0)
    pthread_mutex_unlock(&tw_open_lock);
}

/* Tell the sim tool (tierwise simulate) about a block and its tier; another
 * Valgrind tool about a memkind block (tw_base.h, tw_vg), its usable size:
 * malloc_usable_size promises the program those bytes. */
void tw_announce(void *p, size_t size, int tier) {
  if (!tw_vg_tracks(tier))
    return;
  if (tw_vg == TW_VG_SIM) {
    VALGRIND_MALLOCLIKE_BLOCK(p, size, 0, 0);
    TW_CLREQ_TIER(p, tier);
  } else
    VALGRIND_MALLOCLIKE_BLOCK(p, tw_tier_usable(tier, p), 0, 0);
}

void tw_unannounce(void *p, int tier) {
  if (tw_vg_tracks(tier))
    VALGRIND_FREELIKE_BLOCK(p, 0);
}
