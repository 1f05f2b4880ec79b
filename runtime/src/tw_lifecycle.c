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

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <valgrind/helgrind.h>

/* fork: the runtime's locks are held across fork so that the child's copies
 * of the tables are consistent (taken top-down: sites, then the memory
 * below them); the child keeps tracking (census output under per-pid
 * names, see tw_census.c; run report path with %p). Two sets, around
 * memkind's jemalloc, which registers fork handlers of its own when a tier
 * opens it, and whose locks sit between ours: the runtime calls into memkind
 * holding its upper locks (a tier opened under tw_open_lock, a block
 * allocated under the split table's), and memkind calls back into the
 * runtime's mmap holding its own, which takes the lower ones (the page
 * map's, the file-mapping table's). fork runs prepare handlers in reverse
 * order of registration: the upper set is registered after the tiers are
 * open (its prepare runs before jemalloc's), the lower set first (its
 * prepare runs after). One order everywhere, so fork cannot deadlock beside
 * a thread inside memkind (helgrind checks it, check_sanitizers.sh). Every
 * lock a child can take on its first allocation is in one of the sets (the
 * backends' own - the pmem kind's renewal, the NUMA backend's kept
 * mappings - under tw_tiers_atfork), and fork waits for other threads'
 * unwinding to end: libunwind's own mutexes have no fork handlers
 * (tw_stack_atfork). */
static void tw_atfork_upper(int phase) {
  if (phase == 0) {
    tw_policy_atfork(0);
    tw_fast_atfork(0);
    tw_room_atfork(0);
    tw_dram_limit_atfork(0);
    tw_stack_atfork(0);
    tw_census_atfork(0);
    tw_sample_atfork(0);
    tw_split_atfork(0);
    tw_maps_atfork(0);
    tw_tiers_atfork(0);
    return;
  }
  tw_tiers_atfork(phase);
  tw_maps_atfork(phase);
  tw_split_atfork(phase);
  tw_sample_atfork(phase);
  tw_census_atfork(phase);
  tw_stack_atfork(phase);
  tw_dram_limit_atfork(phase);
  tw_room_atfork(phase);
  tw_fast_atfork(phase);
  tw_policy_atfork(phase);
}
/* libmemkind loaded after start (the pmem kind is made at its first
 * allocation, tw_be_memkind.c): jemalloc's handlers come after the upper
 * set, so its prepare would run first. A second upper set is registered
 * then (tw_upper_late), and the fork takes the upper locks in whichever
 * set's prepare runs first while that order holds: the late set's once it
 * is there, else the first's; the same set releases them (tw_upper_took,
 * per forking thread). */
static int tw_late_on; /* atomic: the late set is registered */
static __thread int tw_upper_took;
static void tw_upper_take(int set) {
  if (!tw_upper_took) {
    tw_atfork_upper(0);
    tw_upper_took = set;
  }
}
static void tw_upper_give(int set, int phase) {
  if (tw_upper_took == set) {
    tw_upper_took = 0;
    tw_atfork_upper(phase);
  }
}
static void tw_upper_prepare(void) { tw_upper_take(1); }
static void tw_upper_parent(void) { tw_upper_give(1, 1); }
static void tw_upper_child(void) { tw_upper_give(1, 2); }
static void tw_late_prepare(void) {
  if (__atomic_load_n(&tw_late_on, __ATOMIC_ACQUIRE)) {
    if (TW_UNLIKELY(tw_vg == TW_VG_OTHER)) /* helgrind: no C11 atomics */
      ANNOTATE_HAPPENS_AFTER(&tw_late_on);
    tw_upper_take(2);
  }
}
static void tw_late_parent(void) { tw_upper_give(2, 1); }
static void tw_late_child(void) { tw_upper_give(2, 2); }
static void tw_upper_late(void) {
  static int done; /* (called under tw_be_memkind's lock, once) */
  if (done++)
    return;
  pthread_atfork(tw_late_prepare, tw_late_parent, tw_late_child);
  if (TW_UNLIKELY(tw_vg == TW_VG_OTHER)) {
    VALGRIND_HG_DISABLE_CHECKING(&tw_late_on, sizeof(tw_late_on));
    ANNOTATE_HAPPENS_BEFORE(&tw_late_on);
  }
  __atomic_store_n(&tw_late_on, 1, __ATOMIC_RELEASE);
}
static void tw_lower_prepare(void) {
  tw_fork_atfork(0);
  tw_sys_atfork(0);
}
static void tw_lower_parent(void) {
  tw_sys_atfork(1);
  tw_fork_atfork(1);
}
static void tw_lower_child(void) {
  tw_sys_atfork(2);
  tw_fork_atfork(2); /* private copies of shared file mappings */
  tw_tc_atfork(2);   /* the thread cache's blocks are the parent's */
}

/* The end of tracking: census output or the run report, once. At exit (the
 * destructor) or at a terminating signal (tw_on_signal). */
static void tw_finish(void) {
  static atomic_int finished;
  if (atomic_exchange(&finished, 1))
    return;
  int mode = tw_mode_now;
  tw_in_core++;
  tw_mode_now = TW_MODE_PASS; /* later allocations: served, not tracked */
  tw_fast_limit = 0;
  if (mode == TW_MODE_CENSUS) {
    tw_sample_stop();
    tw_census_write();
    tw_sample_end();
  } else if (mode == TW_MODE_PLACE ||
             (tw_foreign == 1 && tw_cfg.report_path && !tw_cfg.census_dir))
    tw_report_write(); /* (stood down: "stood_down" says why) */
  tw_in_core--;
}

/* Another copy of the runtime comes first in the process's symbol lookup
 * (a program linked with libtierwise run with the runtime preloaded, as
 * `tierwise run` does): that copy serves every allocation (malloc,
 * tw_malloc, ... resolve to it), so this one stands down - no tracking and
 * no report, which would overwrite the serving copy's with 0 bytes. */
static int tw_shadowed(void) {
  Dl_info me, first;
  void *f = dlsym(RTLD_DEFAULT, "tw_tier_of");
  return f && dladdr((void *)tw_shadowed, &me) && dladdr(f, &first) &&
         me.dli_fbase != first.dli_fbase;
}

static void tw_init(void) {
  static atomic_int done;
  tw_config_read();
  if (atomic_exchange(&done, 1))
    return;
  if (tw_foreign) { /* the program's allocator serves (tw_config.c): a
                       report that says so, nothing else */
    tw_cfg.mode = TW_MODE_PASS;
    if (tw_cfg.report_path && !tw_cfg.census_dir) {
      tw_in_core++;
      tw_report_claim();
      tw_signal_catch(tw_finish); /* (a job ended by SIGTERM says it
                                     stood down; tw_signal.c) */
      tw_in_core--;
    }
    return;
  }
  if (tw_shadowed()) {
    tw_cfg.mode = TW_MODE_PASS;
    tw_mode_now = TW_MODE_PASS;
    return;
  }
  tw_in_core++;
  pthread_atfork(tw_lower_prepare, tw_lower_parent, tw_lower_child);
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
  /* after the tiers the placement uses are open (see tw_atfork_upper) */
  pthread_atfork(tw_upper_prepare, tw_upper_parent, tw_upper_child);
  tw_memkind_late = tw_upper_late;
  if ((tw_cfg.mode == TW_MODE_CENSUS && !tw_cfg.sampling) ||
      (tw_cfg.mode == TW_MODE_PLACE && tw_cfg.report_path))
    tw_signal_catch(tw_finish);
  tw_in_core--;
}

__attribute__((constructor(101))) static void tw_ctor(void) { tw_init(); }

__attribute__((destructor(101))) static void tw_dtor(void) { tw_finish(); }
