/* SPDX-License-Identifier: MIT */
/*
 * The core of the tierwise runtime: configuration from the environment,
 * start and exit, fork handlers, and the dispatch of the interposed malloc
 * family to the census paths (tw_hdr.c, blocks with a header) or the
 * placement/pass-through paths (tw_place.c, no header). DRAM comes from
 * glibc (__libc_malloc & co, so no dlsym bootstrap is needed), the other
 * tiers from memkind (tw_tiers.c).
 */
#define _GNU_SOURCE
#include "tw_core.h"
#include "tw_clientreq.h"
#include "tw_fast.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

tw_config tw_cfg;
volatile int tw_mode_now;
__thread int tw_in_core __attribute__((tls_model("initial-exec")));
static atomic_int tw_init_state; /* 0 none, 1 running, 2 config read */
/* Client requests cost a few instructions each: issue them only under
 * Valgrind (tw_core.h; RUNNING_ON_VALGRIND and the tool are checked once,
 * when the config is read). */
int tw_vg;
int tw_hdr_mode;
static size_t (*tw_usable_fn)(void *); /* glibc's malloc_usable_size */

size_t tw_glibc_usable(void *p) { return tw_usable_fn ? tw_usable_fn(p) : 0; }
static uint64_t tw_t0;

uint64_t tw_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec - tw_t0;
}

void tw_warn(const char *a, const char *b, const char *c) {
  char line[512];
  size_t n = 0;
  const char *parts[4] = {"tierwise: ", a, b, c};
  for (int i = 0; i < 4; i++)
    for (const char *s = parts[i]; s && *s && n < sizeof(line) - 2; s++)
      line[n++] = *s;
  line[n] = 0;
  tw_report_warning(line + 10);
  line[n++] = '\n';
  if (write(2, line, n) < 0)
    return;
}

static size_t tw_env_size(const char *name, size_t dflt) {
  const char *s = secure_getenv(name);
  uint64_t v;
  if (!s || !*s)
    return dflt;
  if (tw_parse_size(s, &v)) {
    tw_warn(name, ": not a size: ", s);
    return dflt;
  }
  return v;
}

/* Read the environment: cheap, done on the first call (which may come before
 * our constructor). */
static void tw_config_read(void) {
  int expect = 0;
  if (!atomic_compare_exchange_strong(&tw_init_state, &expect, 1))
    return;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  tw_t0 = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
  if (RUNNING_ON_VALGRIND > 0) {
    const char *v = secure_getenv("TIERWISE_VALGRIND_REQUESTS");
    if (!v || strcmp(v, "0")) /* 0: measuring the native path (callgrind) */
      tw_vg = TW_CLREQ_HELLO() ? TW_VG_SIM : TW_VG_OTHER;
  }
  /* setuid/setgid (AT_SECURE): secure_getenv ignores the environment, which
   * another user controls (report and pmem paths, placement). */
  if (getauxval(AT_SECURE) &&
      (getenv("TIERWISE_PLACEMENT") || getenv("TIERWISE_REPORT") ||
       getenv("TIERWISE_CENSUS") || getenv("TIERWISE_PMEM_DIR")))
    tw_warn("setuid/setgid program: the TIERWISE_* variables are ignored",
            "", "");
  tw_cfg.census_dir = secure_getenv("TIERWISE_CENSUS");
  tw_cfg.placement_path = secure_getenv("TIERWISE_PLACEMENT");
  tw_cfg.pmem_dir = secure_getenv("TIERWISE_PMEM_DIR");
  tw_cfg.report_path = secure_getenv("TIERWISE_REPORT");
  tw_cfg.maps_copy = secure_getenv("TIERWISE_MAPS_COPY");
  tw_cfg.verbose = secure_getenv("TIERWISE_VERBOSE") != NULL;
  tw_cfg.depth = (int)tw_env_size("TIERWISE_DEPTH", TW_DEFAULT_DEPTH);
  if (tw_cfg.depth < 1 || tw_cfg.depth > TW_MAX_DEPTH)
    tw_cfg.depth = TW_DEFAULT_DEPTH;
  tw_cfg.objects_min = tw_env_size("TIERWISE_OBJECTS_MIN", 4096);
  tw_cfg.fast_max = tw_env_size("TIERWISE_FASTPATH_MAX", 64 << 10);
  tw_cfg.fast_learn = (unsigned)tw_env_size("TIERWISE_FASTPATH_LEARN", 8);
  tw_cfg.fast_check = (unsigned)tw_env_size("TIERWISE_FASTPATH_CHECK", 1024);
  tw_cfg.dram_limit = tw_env_size("TIERWISE_DRAM_LIMIT", 0);
  tw_cfg.unmatched_min = tw_env_size("TIERWISE_UNMATCHED_MIN", 1 << 20);
  if (tw_cfg.census_dir && *tw_cfg.census_dir) {
    tw_cfg.mode = TW_MODE_CENSUS;
    tw_hdr_mode = 1;
    tw_census_claim();
  } else if (tw_cfg.placement_path || tw_cfg.report_path)
    tw_cfg.mode = TW_MODE_PLACE;
  else
    tw_cfg.mode = TW_MODE_PASS;
  /* (under another Valgrind tool glibc's blocks are not announced: their
   * free stays the fast one) */
  tw_free_slow = tw_hdr_mode || tw_vg == TW_VG_SIM || tw_cfg.dram_limit;
  /* Census is exact from the first allocation; placement needs the file
   * and the tiers, which the constructor loads. */
  tw_mode_now = tw_cfg.mode == TW_MODE_CENSUS ? TW_MODE_CENSUS : TW_MODE_PASS;
  atomic_store(&tw_init_state, 2);
}

/* fork: the runtime's locks are held across fork so that the child's copies
 * of the tables are consistent; the child keeps tracking (census output
 * under per-pid names, see tw_census.c; run report path with %p). */
static void tw_atfork_prepare(void) {
  tw_fork_prepare();
  tw_stack_atfork(0);
  tw_census_atfork(0);
}
static void tw_atfork_parent(void) {
  tw_census_atfork(1);
  tw_stack_atfork(1);
  tw_fork_parent();
}
static void tw_atfork_child(void) {
  tw_census_atfork(2);
  tw_stack_atfork(2);
  tw_fork_child();
}

__attribute__((constructor(101))) static void tw_ctor(void) { tw_init(); }

void tw_init(void) {
  static atomic_int done;
  tw_config_read();
  if (atomic_exchange(&done, 1))
    return;
  tw_in_core++;
  pthread_atfork(tw_atfork_prepare, tw_atfork_parent, tw_atfork_child);
  *(void **)&tw_usable_fn = dlsym(RTLD_NEXT, "malloc_usable_size");
  if (tw_cfg.mode == TW_MODE_PLACE) {
    int placed =
        tw_cfg.placement_path ? tw_placement_load(tw_cfg.placement_path) : 0;
    if (placed && tw_placement_depth() > 0)
      tw_cfg.depth = tw_placement_depth();
    tw_tiers_init();
    if (placed)
      tw_placement_check_modules();
    tw_mode_now = TW_MODE_PLACE;
    /* The inline fast path (tw_fast.h); a DRAM limit needs the accounting
     * of tw_pl_place on every allocation. */
    if (tw_cfg.fast_learn && !tw_cfg.dram_limit)
      tw_fast_limit = tw_cfg.fast_max;
  }
  tw_in_core--;
}

__attribute__((destructor(101))) static void tw_dtor(void) {
  int mode = tw_mode_now;
  tw_in_core++;
  tw_mode_now = TW_MODE_PASS; /* later allocations: served, not tracked */
  tw_fast_limit = 0;
  if (mode == TW_MODE_CENSUS)
    tw_census_write();
  else if (mode == TW_MODE_PLACE)
    tw_report_write();
  tw_in_core--;
}

/* ---- the allocation paths: census blocks (tw_hdr.c) or header-less
 * placement and pass-through blocks (tw_place.c) ---- */

static inline int tw_size_ok(size_t size) {
  if (TW_LIKELY(size <= PTRDIFF_MAX - 4096))
    return 1;
  errno = ENOMEM; /* fails as in glibc, in every mode */
  return 0;
}

void *tw_alloc(size_t size, size_t align, int zero, void *ra, void *sp) {
  if (TW_UNLIKELY(tw_init_state != 2))
    tw_config_read();
  if (TW_UNLIKELY(!tw_size_ok(size)))
    return NULL;
  if (TW_LIKELY(!tw_hdr_mode))
    return tw_pl_alloc(size, align, zero, ra, sp);
  return tw_hb_alloc(size, align, zero);
}

void *tw_alloc_tier(int tier, uint64_t dram_bytes, size_t size, size_t align,
                    int zero) {
  if (TW_UNLIKELY(tw_init_state != 2))
    tw_config_read();
  if (!tw_size_ok(size))
    return NULL;
  if (!tw_hdr_mode)
    return tw_pl_alloc_tier(tier, dram_bytes, size, align, zero);
  /* census blocks have a header and are never split: a head only decides
   * that an object within it is DRAM's */
  return tw_hb_alloc_tier(dram_bytes && size <= dram_bytes ? TW_T_DRAM : tier,
                          size, align, zero);
}

void tw_core_free(void *p) {
  if (!p)
    return;
  if (TW_LIKELY(!tw_hdr_mode))
    tw_pl_free(p);
  else
    tw_hb_free(p);
}

size_t tw_usable(void *p) {
  if (!p)
    return 0;
  return tw_hdr_mode ? tw_hb_usable(p) : tw_pl_usable(p);
}

int tw_tier_of_ptr(const void *p) {
  if (!p)
    return -1;
  if (tw_hdr_mode)
    return tw_hb_tier_of(p);
  int tier = tw_page_tier(p);
  tw_split_info b;
  if (tier == TW_PAGE_SPLIT) /* the tier of the page p is in */
    return !tw_split_find(p, &b) ? -1
           : (uintptr_t)p - b.base < b.head ? TW_T_DRAM
                                              : b.tier;
  return tier;
}

void *tw_core_realloc(void *p, size_t size, void *ra, void *sp) {
  if (!p)
    return tw_alloc(size, 0, 0, ra, sp);
  if (size == 0) {
    tw_core_free(p);
    return NULL;
  }
  if (!tw_size_ok(size))
    return NULL;
  return tw_hdr_mode ? tw_hb_realloc(p, size) : tw_pl_realloc(p, size, ra, sp);
}
