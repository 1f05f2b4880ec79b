/* SPDX-License-Identifier: MIT */
/*
 * Layer 4 (entry points): the runtime's lifecycle - the constructor (the
 * configuration, the placement and the tiers it uses, the fast path), the
 * destructor (census or run report), and the fork handlers, which call each
 * module's atfork in layer order. The one place that starts and stops the
 * modules; none of them registers handlers of its own.
 */
#define _GNU_SOURCE
#include "tw_paths.h"

#include <pthread.h>
#include <stdatomic.h>

/* fork: the runtime's locks are held across fork so that the child's copies
 * of the tables are consistent (taken top-down: sites, then the memory
 * below them); the child keeps tracking (census output under per-pid
 * names, see tw_census.c; run report path with %p). */
static void tw_atfork_prepare(void) {
  tw_policy_atfork(0);
  tw_fork_atfork(0);
  tw_stack_atfork(0);
  tw_census_atfork(0);
  tw_sample_atfork(0);
  tw_tiers_atfork(0);
  tw_sys_atfork(0);
}
static void tw_atfork_parent(void) {
  tw_sys_atfork(1);
  tw_tiers_atfork(1);
  tw_sample_atfork(1);
  tw_census_atfork(1);
  tw_stack_atfork(1);
  tw_fork_atfork(1);
  tw_policy_atfork(1);
}
static void tw_atfork_child(void) {
  tw_sys_atfork(2);
  tw_tiers_atfork(2);
  tw_sample_atfork(2);
  tw_census_atfork(2);
  tw_stack_atfork(2);
  tw_fork_atfork(2); /* private copies of shared file mappings */
  tw_policy_atfork(2);
}

static void tw_init(void) {
  static atomic_int done;
  tw_config_read();
  if (atomic_exchange(&done, 1))
    return;
  tw_in_core++;
  pthread_atfork(tw_atfork_prepare, tw_atfork_parent, tw_atfork_child);
  tw_glibc_init();
  if (tw_cfg.mode == TW_MODE_CENSUS && tw_cfg.sampling && tw_sample_start()) {
    /* pmu profiler without its events: no profile (the backend says why) */
    tw_cfg.mode = TW_MODE_PASS;
    tw_mode_now = TW_MODE_PASS;
  }
  if (tw_cfg.mode == TW_MODE_CENSUS)
    tw_census_claim();
  if (tw_cfg.mode == TW_MODE_PLACE) {
    tw_report_claim();
    tw_policy_init();
    tw_mode_now = TW_MODE_PLACE;
    /* The inline fast path (tw_fast.h); a DRAM limit needs the accounting
     * of tw_place.c on every allocation. */
    if (tw_cfg.fast_learn && !tw_cfg.dram_limit)
      tw_fast_limit = tw_cfg.fast_max;
  }
  tw_in_core--;
}

__attribute__((constructor(101))) static void tw_ctor(void) { tw_init(); }

__attribute__((destructor(101))) static void tw_dtor(void) {
  int mode = tw_mode_now;
  tw_in_core++;
  tw_mode_now = TW_MODE_PASS; /* later allocations: served, not tracked */
  tw_fast_limit = 0;
  if (mode == TW_MODE_CENSUS) {
    tw_sample_stop();
    tw_census_write();
    tw_sample_end();
  }
  else if (mode == TW_MODE_PLACE)
    tw_report_write();
  tw_in_core--;
}
