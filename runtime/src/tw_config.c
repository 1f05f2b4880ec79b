/* SPDX-License-Identifier: MIT */
/*
 * Layer 0 (base): the configuration from the environment (read once, on the
 * first allocation or in the constructor, whichever comes first), the
 * monotonic clock of the census, and warnings: one line on stderr each, the
 * first TW_MAX_WARNINGS kept for the run report (which reads them; warning
 * never calls upward into the report writer).
 */
#define _GNU_SOURCE
#include "tw_base.h"
#include "tw_clientreq.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

tw_config tw_cfg;
volatile int tw_mode_now;
__thread int tw_in_core __attribute__((tls_model("initial-exec")));
__thread int tw_in_tier __attribute__((tls_model("initial-exec")));
__thread int tw_mk_loading __attribute__((tls_model("initial-exec")));

/* Interposed: while this thread loads libmemkind (tw_mk_loading,
 * tw_be_memkind.c), JEMK_MALLOC_CONF is "thp:never" unless the user set
 * it - how memkind's jemalloc is configured without changing the
 * environment, which the program's other threads may be reading. Else
 * glibc's own definition: nothing in a setuid/setgid process (AT_SECURE),
 * getenv otherwise. memkind reads its variables with secure_getenv;
 * glibc's internal calls do not come here. */
__attribute__((visibility("default"))) char *secure_getenv(const char *name) {
  static char thp[] = "thp:never";
  char *v = getauxval(AT_SECURE) ? NULL : getenv(name);
  if (TW_UNLIKELY(tw_mk_loading) && !v && !strcmp(name, "JEMK_MALLOC_CONF"))
    return thp;
  return v;
}
/* Client requests cost a few instructions each: issue them only under
 * Valgrind (RUNNING_ON_VALGRIND and the tool are checked once, when the
 * config is read). */
int tw_vg;
int tw_hdr_mode;
int tw_free_slow;
static atomic_int tw_init_state; /* 0 none, 1 running, 2 config read */
static uint64_t tw_t0;

uint64_t tw_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec - tw_t0;
}

#define TW_WARNING_MAX 512
static char tw_warnings[TW_MAX_WARNINGS][TW_WARNING_MAX];
static int tw_warning_done[TW_MAX_WARNINGS]; /* published (release) */
static int tw_nwarnings;

static void tw_warning_keep(const char *line, size_t n) {
  int i = __atomic_fetch_add(&tw_nwarnings, 1, __ATOMIC_RELAXED);
  if (i >= TW_MAX_WARNINGS)
    return;
  memcpy(tw_warnings[i], line, n + 1);
  __atomic_store_n(&tw_warning_done[i], 1, __ATOMIC_RELEASE);
}

int tw_warnings_count(void) {
  int n = __atomic_load_n(&tw_nwarnings, __ATOMIC_RELAXED);
  return n < TW_MAX_WARNINGS ? n : TW_MAX_WARNINGS;
}

const char *tw_warning(int i) {
  return __atomic_load_n(&tw_warning_done[i], __ATOMIC_ACQUIRE) ? tw_warnings[i]
                                                                 : "";
}

void tw_warn(const char *a, const char *b, const char *c) {
  char line[TW_WARNING_MAX + 10];
  size_t n = 0;
  const char *parts[4] = {"tierwise: ", a, b, c};
  for (int i = 0; i < 4; i++)
    for (const char *s = parts[i]; s && *s && n < sizeof(line) - 2; s++)
      line[n++] = *s;
  line[n] = 0;
  tw_warning_keep(line + 10, n - 10);
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

int tw_config_ready(void) {
  return TW_LIKELY(atomic_load_explicit(&tw_init_state, memory_order_relaxed) ==
                   2);
}

void tw_config_read(void) {
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
  tw_cfg.sysfs_node = secure_getenv("TIERWISE_SYSFS_NODE");
  tw_cfg.depth = (int)tw_env_size("TIERWISE_DEPTH", TW_DEFAULT_DEPTH);
  if (tw_cfg.depth < 1 || tw_cfg.depth > TW_MAX_DEPTH)
    tw_cfg.depth = TW_DEFAULT_DEPTH;
  tw_cfg.objects_min = tw_env_size("TIERWISE_OBJECTS_MIN", 4096);
  tw_cfg.fast_max = tw_env_size("TIERWISE_FASTPATH_MAX", 64 << 10);
  tw_cfg.fast_learn = (unsigned)tw_env_size("TIERWISE_FASTPATH_LEARN", 8);
  tw_cfg.fast_check = (unsigned)tw_env_size("TIERWISE_FASTPATH_CHECK", 1024);
  const char *lim = secure_getenv("TIERWISE_DRAM_LIMIT");
  tw_cfg.dram_limit_auto = lim && !strcmp(lim, "auto");
  /* auto: set from the DRAM node's room when the placement loads
   * (tw_room.c) */
  tw_cfg.dram_limit =
      tw_cfg.dram_limit_auto ? 0 : tw_env_size("TIERWISE_DRAM_LIMIT", 0);
  tw_cfg.room = tw_env_size("TIERWISE_ROOM", 1) != 0;
  tw_cfg.room_interval_ms = tw_env_size("TIERWISE_ROOM_INTERVAL", 100);
  const char *nm = secure_getenv("TIERWISE_NUMA_MODE");
  tw_cfg.numa_migrate = nm && !strcmp(nm, "migrate");
  if (nm && *nm && !tw_cfg.numa_migrate && strcmp(nm, "policy"))
    tw_warn("TIERWISE_NUMA_MODE: not policy or migrate: ", nm, "");
  tw_cfg.unmatched_min = tw_env_size("TIERWISE_UNMATCHED_MIN", 1 << 20);
  tw_cfg.slow_cache = tw_env_size("TIERWISE_SLOW_CACHE", 4 << 20);
#ifdef TW_WITH_PMU
  /* libtierwise-pmu.so: the pmu profiler is the census into
   * TIERWISE_PMU_OUT plus sampling (tw_sample.c); objects below
   * TIERWISE_PMU_MIN_BYTES have no site (their samples are [unknown]). */
  const char *pmu_out = secure_getenv("TIERWISE_PMU_OUT");
  if (pmu_out && *pmu_out) {
    tw_cfg.census_dir = pmu_out;
    tw_cfg.sampling = 1;
    tw_cfg.objects_min = tw_cfg.site_min =
        tw_env_size("TIERWISE_PMU_MIN_BYTES", 4096);
  }
#endif
  if (tw_cfg.census_dir && *tw_cfg.census_dir) {
    tw_cfg.mode = TW_MODE_CENSUS;
    tw_hdr_mode = 1;
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
