/* SPDX-License-Identifier: MIT */
/*
 * Layer 2 of the runtime, the policy (runtime/README.md "Layers"): which
 * tier a site's objects go to (placement.json matching, tw_placement.c),
 * the DRAM limit and where objects over it go (tw_policy.c), and the
 * per-thread cache of those decisions (tw_fastpath.c, tw_fast.h). Calls
 * only into itself, the mechanisms and the base. Not installed.
 */
#pragma once

#include "tw_mech.h"

#include <valgrind/helgrind.h>

/* ---- tw_placement.c: placement.json ---- */
TW_HIDDEN int tw_placement_load(const char *path);
TW_HIDDEN int tw_placement_parse(const char *text, const char *name);
TW_HIDDEN int tw_placement_match(const char *stack, int *tier);
TW_HIDDEN int tw_placement_default_tier(void);
TW_HIDDEN int tw_placement_depth(void);
TW_HIDDEN int tw_placement_nsites(void);
TW_HIDDEN const char *tw_placement_field(int i, int which); /* 0 stack,
                                                             1 location */
TW_HIDDEN int tw_placement_tier(int i);
TW_HIDDEN uint64_t tw_placement_dram_bytes(int i); /* 0 for -1 */
TW_HIDDEN double tw_placement_dram_fraction(int i); /* 0: none, or -1 */
/* The advisor's DRAM rank of site \p i (0: none) and *planned bytes. */
TW_HIDDEN int tw_placement_rank(int i, uint64_t *planned);
/* Site \p i's planned DRAM bytes at each instant of the advisor's plan
 * (placement planned_live; *live NULL and 0: none, its planned bytes at
 * every instant). Returns the number of instants. */
TW_HIDDEN int tw_placement_live(int i, const uint64_t **live);
TW_HIDDEN void tw_placement_check_modules(void);

/* ---- tw_policy.c: decisions beyond the placement ---- */
/* A site's tier and head, decided once (tw_policy.c). */
TW_HIDDEN void tw_decide(tw_site *s);
/* The site of the current call stack (tw_site_here), its tier and DRAM
 * head decided (placement matching, once per site). Inline: no frame of
 * its own for the unwinder to walk. */
static inline __attribute__((always_inline)) uint32_t
tw_policy_site_here(void) {
  uint32_t i = tw_site_here();
  if (i == TW_SITE_NONE)
    return i;
  if (TW_UNLIKELY(!__atomic_load_n(&tw_site_get(i)->decided, __ATOMIC_ACQUIRE)))
    tw_decide(tw_site_get(i));
  else if (TW_UNLIKELY(tw_vg == TW_VG_OTHER)) /* helgrind: see tw_decide */
    ANNOTATE_HAPPENS_AFTER(&tw_site_get(i)->decided);
  return i;
}
TW_HIDDEN void tw_policy_atfork(int phase); /* 0 prepare, 1 parent, 2 child */
/* Load the placement (placement mode), classify sites by it from now on,
 * open the tiers it uses. 1: a placement is loaded. */
TW_HIDDEN int tw_policy_init(void);
/* The tier DRAM objects over the limit go to: the first slow tier the
 * placement names that is available, else pmem; -1: none available. */
TW_HIDDEN int tw_dram_overflow_tier(void);
