/* SPDX-License-Identifier: MIT */
/*
 * Layer 2 (policy): what is decided beyond the fast path's cache. A site's
 * tier and DRAM head, from the placement, decided when the policy first
 * sees the site (the mechanisms create sites and never call up into
 * placement matching); the start of the policy (placement, tiers, DRAM
 * limit); and where DRAM objects over TIERWISE_DRAM_LIMIT go (the slow
 * tier; the limit's account itself: tw_dram_limit.c).
 */
#define _GNU_SOURCE
#include "tw_dram_limit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <valgrind/helgrind.h>

/* The placement's slow tiers in order (default tier first), then pmem:
 * the first available one takes what the DRAM limit turns away. Decided on
 * first use (the tiers are opened by then, or open now). */
int tw_dram_overflow_tier(void) {
  static int cached = -2;
  int t = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
  if (t != -2)
    return t;
  t = -1;
  int d = tw_placement_default_tier();
  if (d != TW_TIER_DRAM && tw_tier_available(d))
    t = d;
  for (int i = 0; t < 0 && i < tw_placement_nsites(); i++) {
    int s = tw_placement_tier(i);
    if (s != TW_TIER_DRAM && tw_tier_available(s))
      t = s;
  }
  if (t < 0 && tw_tier_available(TW_TIER_PMEM))
    t = TW_TIER_PMEM;
  __atomic_store_n(&cached, t, __ATOMIC_RELEASE);
  return t;
}

/* A site's tier and head, decided once (placement matching): the
 * mechanisms create sites, the policy decides them when it first sees one,
 * so site creation never calls up into placement matching. Published by
 * s->decided (release; helgrind does not model C11 atomics: annotated). */
static pthread_mutex_t tw_decide_lock = PTHREAD_MUTEX_INITIALIZER;

/* Whether some placement site starts in the module of \p s's first frame,
 * asked once per module (tw_decide_lock held): 0 unknown, 1 no, 2 yes.
 * The same answer as tw_placement_leads(s->stack) (a frame names its
 * module by basename), without reading the stack string. */
static uint8_t tw_mod_leads[TW_MODULES_MAX];

static int tw_leads_module(const tw_site *s) {
  int m = s->first_mod - 1;
  if (m < 0 || m >= TW_MODULES_MAX)
    return tw_placement_leads(s->stack);
  if (!tw_mod_leads[m])
    tw_mod_leads[m] = (uint8_t)(1 + tw_placement_leads(tw_module_base(m)));
  return tw_mod_leads[m] - 1;
}

void tw_decide(tw_site *s) {
  pthread_mutex_lock(&tw_decide_lock);
  if (!s->decided) {
    int tier = tw_placement_default_tier();
    /* A placement site matches a stack it is a frame-wise prefix of: its
     * first frame is the stack's, so a stack whose first frame's module
     * starts no placement site matches none (most of an Open MPI
     * start-up's ~1,400 one-frame sites): not looked up. */
    s->mod_leads = tw_leads_module(s);
    /* (by frame: once per site, in the modules some site starts in) */
    s->leads = s->mod_leads && tw_placement_leads_frame(s->stack);
    s->placed = s->leads ? tw_placement_match(s->stack, &tier) : -1;
    s->tier = tier;
    s->dram_head =
        tier != TW_TIER_DRAM ? tw_placement_dram_bytes(s->placed) : 0;
    s->dram_frac =
        tier != TW_TIER_DRAM ? tw_placement_dram_fraction(s->placed) : 0;
    if (TW_UNLIKELY(tw_vg == TW_VG_OTHER)) {
      VALGRIND_HG_DISABLE_CHECKING(&s->decided, sizeof(s->decided));
      ANNOTATE_HAPPENS_BEFORE(&s->decided);
    }
    __atomic_store_n(&s->decided, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&tw_decide_lock);
}


void tw_policy_atfork(int phase) { tw_mutex_atfork(&tw_decide_lock, phase); }

/* A tier that makes its backend at its first allocation (pmem: loading
 * libmemkind) makes it now when a site of that tier starts in a module
 * this process has loaded: later, after a program has dlopen'ed libraries
 * into the global scope (Open MPI's ~100 components), loading libmemkind
 * costs more (14M instructions against 8.4M at start, its relocations
 * looked up through them). A process none of whose modules start such a
 * site (orted under an MPI job's placement) never loads it. */
static void tw_prepare_at(void *ctx, const char *path, const char *base,
                          const char *build_id) {
  (void)path;
  (void)build_id;
  int *want = ctx;
  for (int t = 0; t < TW_TIER_COUNT; t++)
    if (want[t] && tw_placement_tier_starts_in(t, base)) {
      want[t] = 0;
      tw_tier_prepare(t);
    }
}

int tw_policy_init(void) {
  int placed =
      tw_cfg.placement_path ? tw_placement_load(tw_cfg.placement_path) : 0;
  if (placed && tw_placement_depth() > 0)
    tw_cfg.depth = tw_placement_depth();
  /* Open the tiers the placement uses now, so warnings come at start. */
  int used[TW_TIER_COUNT] = {0};
  used[tw_placement_default_tier()] = 1;
  for (int i = 0; i < tw_placement_nsites(); i++)
    used[tw_placement_tier(i)] = 1;
  tw_tiers_open(used);
  tw_room_init(); /* the DRAM node's room (and a limit set to it: auto) */
  if (tw_cfg.dram_limit) /* (an unavailable tier says so when opened) */
    tw_dram_overflow_tier();
  if (placed)
    tw_placement_check_modules();
  used[TW_TIER_DRAM] = 0;
  if (placed)
    tw_modules_each(tw_prepare_at, used);
  tw_dram_limit_init(); /* reservations in the placement's rank order */
  return placed;
}
