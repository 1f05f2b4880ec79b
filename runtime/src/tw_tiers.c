/* SPDX-License-Identifier: MIT */
/*
 * Memory tiers through memkind: pmem = a file-backed kind on
 * TIERWISE_PMEM_DIR (memkind_create_pmem: an unlinked temporary file, so its
 * data is private to the process), kmem = MEMKIND_DAX_KMEM, hbw =
 * MEMKIND_HBW. DRAM never comes here (glibc serves it, tw_core.c). A tier
 * that is unavailable is reported once and its sites fall back to DRAM.
 */
#define _GNU_SOURCE
#include "tw_core.h"

#include <dlfcn.h>
#include <errno.h>
#include <memkind.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static memkind_t tw_kinds[TW_NTIERS];
static int tw_tried[TW_NTIERS], tw_warned[TW_NTIERS];
static int tw_kinds_dead; /* memkind destroyed our kinds at exit */
static const char *const tw_names[TW_NTIERS] = {"dram", "pmem", "kmem", "hbw"};

const char *tw_tier_str(int tier) {
  return tier >= 0 && tier < TW_NTIERS ? tw_names[tier] : NULL;
}

int tw_tier_parse(const char *name) {
  for (int i = 0; i < TW_NTIERS; i++)
    if (name && !strcmp(name, tw_names[i]))
      return i;
  return -1;
}

static void tw_tier_open(int tier) {
  char msg[128];
  tw_tried[tier] = 1;
  if (tier == TW_T_PMEM) {
    const char *dir = tw_cfg.pmem_dir;
    struct stat st;
    if (!dir || !*dir) {
      tw_warn("TIERWISE_PMEM_DIR is not set: ",
              "the pmem tier falls back to dram", "");
      return;
    }
    if (stat(dir, &st) || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK)) {
      tw_warn("TIERWISE_PMEM_DIR ", dir,
              ": not a writable directory; the pmem tier falls back to dram");
      return;
    }
    int err = memkind_create_pmem(dir, 0, &tw_kinds[tier]);
    if (err) {
      memkind_error_message(err, msg, sizeof(msg));
      tw_warn("memkind_create_pmem failed on ", dir, msg);
      tw_kinds[tier] = NULL;
    }
    return;
  }
  memkind_t k = tier == TW_T_KMEM ? MEMKIND_DAX_KMEM : MEMKIND_HBW;
  if (memkind_check_available(k) == 0)
    tw_kinds[tier] = k;
  else
    tw_warn("tier ", tw_names[tier],
            " is not available on this machine; its sites fall back to dram");
}

void tw_tiers_init(void) {
  /* Open the tiers the placement uses now, so warnings come at start. */
  int used[TW_NTIERS] = {0};
  used[tw_placement_default_tier()] = 1;
  for (int i = 0; i < tw_placement_nsites(); i++)
    used[tw_placement_tier(i)] = 1;
  if (tw_cfg.dram_limit)
    used[TW_T_PMEM] = 1;
  for (int t = 1; t < TW_NTIERS; t++)
    if (used[t])
      tw_tier_open(t);
}

int tw_tier_available(int tier) {
  if (tier == TW_T_DRAM)
    return 1;
  if (tw_kinds_dead)
    return 0;
  if (tier < 0 || tier >= TW_NTIERS)
    return 0;
  if (!tw_tried[tier]) /* tw_malloc() of a tier no placement named */
    tw_tier_open(tier);
  return tw_kinds[tier] != NULL;
}

void *tw_tier_malloc(int tier, size_t size, size_t align) {
  void *p = NULL;
  if (!tw_tier_available(tier))
    return NULL;
  int err = align > 16 ? memkind_posix_memalign(tw_kinds[tier], &p, align, size)
                       : ((p = memkind_malloc(tw_kinds[tier], size)) ? 0 : 1);
  if (err || !p) {
    if (size > ((size_t)1 << 60)) /* fails everywhere: not a tier problem */
      return NULL;
    if (!__atomic_exchange_n(&tw_warned[tier], 1, __ATOMIC_RELAXED))
      tw_warn("tier ", tw_names[tier],
              " could not serve an allocation (full?); falling back to dram");
    return NULL;
  }
  return p;
}

void tw_tier_free(int tier, void *base) {
  if (!tw_kinds_dead) /* after memkind's destructor: leak, never crash */
    memkind_free(tw_kinds[tier], base);
}

/*
 * memkind's destructor destroys every pmem kind, unmapping its memory, before
 * exit() flushes stdio - whose buffers may live in pmem. Interposed (memkind
 * calls it through its PLT): our kinds are left mapped until the process
 * ends, and from then on the runtime serves DRAM and leaks pmem frees.
 */
struct memkind;
__attribute__((visibility("default"))) int
memkind_arena_destroy(struct memkind *kind) {
  static int (*real)(struct memkind *);
  for (int t = 1; t < TW_NTIERS; t++)
    if (kind && (memkind_t)kind == tw_kinds[t] && t == TW_T_PMEM) {
      tw_kinds_dead = 1;
      return 0;
    }
  if (!real)
    real = (int (*)(struct memkind *))dlsym(RTLD_NEXT, "memkind_arena_destroy");
  return real ? real(kind) : 0;
}
