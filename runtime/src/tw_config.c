/* SPDX-License-Identifier: MIT */
/*
 * Layer 0 (base): the configuration from the environment (read once, on the
 * first allocation or in the constructor, whichever comes first), the
 * monotonic clock of the census, and warnings: one line on stderr each, the
 * first TW_MAX_WARNINGS kept for the run report (which reads them; warning
 * never calls upward into the report writer), and whether another malloc
 * implementation serves the process (a program linked with jemalloc,
 * tcmalloc or mimalloc): then the runtime stands down and forwards every
 * call of the malloc family to it (tw_foreign).
 */
#define _GNU_SOURCE
#include "tw_base.h"
#include "tw_clientreq.h"

#include <dlfcn.h>
#include <link.h>
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

/* A path variable, relative ones made absolute against the directory the
 * program started in: the run report, the census and the pmem files are
 * written later, often after the program changed its directory (the report
 * of `run --report r.json` went to r.json in the program's new directory,
 * where it could replace a file of that name, and the CLI found none).
 * Too long to be made absolute: as given. */
static const char *tw_env_path(const char *name) {
  static char bufs[8][4096];
  static int used;
  const char *v = secure_getenv(name);
  if (!v || !*v || *v == '/' || used == 8)
    return v;
  char *b = bufs[used];
  if (!getcwd(b, sizeof(bufs[0])))
    return v;
  size_t n = strlen(b), m = strlen(v);
  if (n + 1 + m + 1 > sizeof(bufs[0]))
    return v;
  b[n] = '/';
  memcpy(b + n + 1, v, m + 1);
  used++;
  return b;
}
/* Client requests cost a few instructions each: issue them only under
 * Valgrind (RUNNING_ON_VALGRIND and the tool are checked once, when the
 * config is read). */
int tw_vg;
int tw_hdr_mode;
/* 1 until the configuration is read: a free before the first allocation
 * (the program's allocator freeing through our free, tw_foreign) must not
 * go to glibc unseen. */
int tw_free_slow = 1;
size_t tw_free_big;
static atomic_int tw_init_state; /* 0 none, 1 running, 2 config read */
static uint64_t tw_t0;

uint64_t tw_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec - tw_t0;
}

uint64_t tw_thread_cpu_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
    return 0;
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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

/* TIERWISE_DRAM_LIMIT=auto in a job with several processes on this node
 * (MPI ranks): each gets an equal share of the DRAM node's room, by the
 * count of local processes the launcher gives each of them (the first of
 * TIERWISE_LOCAL_RANKS, Open MPI's OMPI_COMM_WORLD_LOCAL_SIZE, MPICH's
 * MPI_LOCALNRANKS, MVAPICH2's MV2_COMM_WORLD_LOCAL_SIZE that is a number
 * from 1 to 65536); 1 without any. */
static void tw_local_ranks(void) {
  static const char *const vars[] = {
      "TIERWISE_LOCAL_RANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
      "MV2_COMM_WORLD_LOCAL_SIZE"};
  tw_cfg.local_ranks = 1;
  tw_cfg.local_ranks_from = NULL;
  for (unsigned i = 0; i < sizeof(vars) / sizeof(*vars); i++) {
    const char *v = secure_getenv(vars[i]);
    if (!v || !*v)
      continue;
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    if (*end || n < 1 || n > 65536 || *v == '-' || *v == '+') {
      tw_warn(vars[i], ": not a count of local processes, ignored: ", v);
      continue;
    }
    tw_cfg.local_ranks = (unsigned)n;
    tw_cfg.local_ranks_from = vars[i];
    return;
  }
}

/* Each setting answers to something: a kernel behaviour (cited), or the
 * cost it bounds. Units: bytes take the size grammar (4K, 1MiB, ...). */
const tw_option tw_options[TW_O_COUNT] = {
    /* frames of a site's stack (a placement's `depth` overrides it) */
    [TW_O_DEPTH] = {"TIERWISE_DEPTH", "depth", "frames", TW_DEFAULT_DEPTH, 1,
                    TW_MAX_DEPTH},
    /* census: objects recorded one by one from this size */
    [TW_O_OBJECTS_MIN] = {"TIERWISE_OBJECTS_MIN", "objects_min", "bytes",
                          4096, 0, UINT64_MAX},
    /* allocations this big are always unwound (the fast path's cost) */
    [TW_O_FASTPATH_MAX] = {"TIERWISE_FASTPATH_MAX", "fastpath_max", "bytes",
                           64 << 10, 0, UINT64_MAX},
    [TW_O_FASTPATH_LEARN] = {"TIERWISE_FASTPATH_LEARN", "fastpath_learn",
                             "unwinds", 8, 0, 1u << 20},
    [TW_O_FASTPATH_CHECK] = {"TIERWISE_FASTPATH_CHECK", "fastpath_check",
                             "hits", 1024, 1, 1u << 30},
    /* the run report's unmatched stacks from this size */
    [TW_O_UNMATCHED_MIN] = {"TIERWISE_UNMATCHED_MIN", "unmatched_min",
                            "bytes", 1 << 20, 0, UINT64_MAX},
    /* a placement's default-tier sites tracked one by one up to this many
     * (the start-up's cost of unwinding every call path they start) */
    [TW_O_TRACK_DEFAULT_MAX] = {"TIERWISE_TRACK_DEFAULT_MAX",
                                "track_default_max", "sites", 1000, 0,
                                UINT32_MAX},
    /* placements of this many sites are kept compiled in the cache
     * directory for the next process (tw_placement_cache.c: reading 4.5 MB
     * of JSON was 25M of an Open MPI start-up's 69M instructions); 0: never */
    [TW_O_PLACEMENT_CACHE_MIN] = {"TIERWISE_PLACEMENT_CACHE_MIN",
                                  "placement_cache_min", "sites", 1000, 0,
                                  UINT32_MAX},
    /* slow-tier blocks kept per thread and tier (tw_tcache.c) */
    [TW_O_SLOW_CACHE] = {"TIERWISE_SLOW_CACHE", "slow_cache", "bytes",
                         4 << 20, 0, (uint64_t)1 << 40},
    /* ---- the sample profiler's page-touch sampling (tw_touch.c) ---- */
    /* how long an armed run of pages waits for its first touch: at least
     * the longest window a touch is counted in (10 ms, tw_touch.c), long
     * enough to see a page swept once per iteration of a graph kernel */
    [TW_O_TOUCH_TICK] = {"TIERWISE_TOUCH_TICK_US", "touch_tick_us", "us",
                         10000, 10000, 10000000},
    /* pages kept armed, in runs of 4, a run armed every tick / (pages /
     * 4) while the overhead bound below allows (with the budget earned
     * before a region of interest: all 256 of tw_touch.c's slots) */
    [TW_O_TOUCH_PAGES] = {"TIERWISE_TOUCH_PAGES", "touch_pages", "pages", 32,
                          8, 256},
    /* the bound on the profiler's overhead: its mprotect calls' time (two
     * a run, each flushing the TLBs of the CPUs the program runs on, 60 us
     * here) at most this share of the time since it started (advisor/
     * README.md "The sample backend") */
    [TW_O_TOUCH_OVERHEAD] = {"TIERWISE_TOUCH_OVERHEAD", "touch_overhead", "%",
                             10, 1, 100},
    /* 1: arm pages only between the program's TIERWISE_ROI_BEGIN() and
     * TIERWISE_ROI_END() (tierwise.h; `profile --roi markers`) */
    [TW_O_TOUCH_ROI] = {"TIERWISE_TOUCH_ROI", "touch_roi", "0/1", 0, 0, 1},
    /* ---- the room (tw_room.c) ---- */
    [TW_O_ROOM] = {"TIERWISE_ROOM", "on", "0/1", 1, 0, 1},
    /* the watcher's tick: DAMON's default aggregation interval
     * (Documentation/admin-guide/mm/damon/usage.rst, aggr_us 100 ms) */
    [TW_O_ROOM_INTERVAL] = {"TIERWISE_ROOM_INTERVAL", "interval_ms", "ms",
                            100, 0, 60000},
    /* DRAM parts tracked and given room; the room's growth that makes a
     * pass (the cost of a pass: move_pages over each tracked object) */
    [TW_O_ROOM_MIN] = {"TIERWISE_ROOM_MIN", "min_bytes", "bytes", 1 << 20,
                       4096, UINT64_MAX},
    /* ranked DRAM blocks tracked without room made before them: their
     * first touches take what room there is, and pages that spilled are
     * exchanged for worse-ranked ones (small vectors and bins that grow in
     * a kernel, issue 39); below it, the inline fast path (FASTPATH_MAX),
     * which sees no size class's site rank. Above ROOM_MIN: ROOM_MIN */
    [TW_O_ROOM_RANK_MIN] = {"TIERWISE_ROOM_RANK_MIN", "rank_min_bytes",
                            "bytes", 64 << 10, 4096, UINT64_MAX},
    /* kept free above the node's low watermark, below which an allocation
     * wakes kswapd (mm/page_alloc.c; Documentation/admin-guide/sysctl/
     * vm.rst, watermark_scale_factor) */
    [TW_O_ROOM_MARGIN] = {"TIERWISE_ROOM_MARGIN", "margin_bytes", "bytes",
                          1 << 20, 0, UINT64_MAX},
    /* a CPU's per-CPU page lists worth a pass pinned to it: free pages
     * that MemFree does not count (mm/page_alloc.c pcp lists;
     * Documentation/admin-guide/sysctl/vm.rst, percpu_pagelist_high_fraction) */
    [TW_O_ROOM_PCP_MIN] = {"TIERWISE_ROOM_PCP_MIN", "pcp_min_bytes", "bytes",
                           256 << 10, 4096, UINT64_MAX},
    /* ticks between passes while they move nothing (back-off) */
    [TW_O_ROOM_WAIT_MAX] = {"TIERWISE_ROOM_WAIT_MAX", "wait_max_ticks",
                            "ticks", 8, 1, 1u << 20},
    /* idle passes take at most 1/N of a CPU: a time quota, as DAMON's
     * (Documentation/mm/damon/design.rst, "Quotas") */
    [TW_O_ROOM_IDLE_SHARE] = {"TIERWISE_ROOM_IDLE_SHARE", "idle_share",
                              "1/CPU", 50, 1, 1u << 20},
    /* most a ranked object's allocation, or a large free, waits for the
     * watcher's page work (its room, its sample, the free's pass) - and
     * for the pass the watcher is in when it asks: a guard against a stuck
     * watcher, not a latency goal (under QEMU TCG a pass moving tens of MiB
     * takes seconds; at 1 s 3 of 12 asks timed out there and the hot
     * object's first touches spilled) */
    [TW_O_ROOM_ASK_WAIT] = {"TIERWISE_ROOM_ASK_WAIT", "ask_wait_ms", "ms",
                            10000, 0, 600000},
};
uint64_t tw_opt[TW_O_COUNT];

/* \p name's value in the environment, by the size grammar: 1 (in *v), 0
 * unset, -1 not a size (said in one line: the name, \p why, the value). */
static int tw_env_read(const char *name, uint64_t *v, const char *why) {
  const char *s = secure_getenv(name);
  if (!s || !*s)
    return 0;
  if (!tw_parse_size(s, v))
    return 1;
  tw_warn(name, why, s);
  return -1;
}

/* Option \p i from the environment, its default when unset or bad. */
static uint64_t tw_env_opt(int i) {
  const tw_option *o = &tw_options[i];
  uint64_t v;
  if (tw_env_read(o->env, &v, ": not a number or size, the default is used: ") != 1)
    return o->dflt;
  if (v < o->min || v > o->max) {
    char lo[24], hi[24], got[24], why[96] = " out of [";
    tw_fmt_u64(lo, o->min);
    tw_fmt_u64(hi, o->max);
    tw_fmt_u64(got, v);
    strcat(strcat(strcat(strcat(why, lo), ", "), hi), "], the default is used: ");
    tw_warn(o->env, why, got);
    return o->dflt;
  }
  return v;
}

static size_t tw_env_size(const char *name, size_t dflt) {
  uint64_t v;
  return tw_env_read(name, &v, ": not a size: ") == 1 ? v : dflt;
}

/* ---- another allocator in the process (runtime/README.md "Programs
 * that bring their own allocator") ----
 * A program linked with libjemalloc, libtcmalloc or libmimalloc exports
 * malloc and free itself. The preloaded runtime comes first in symbol
 * lookup, so the program's malloc comes here - but its operator new/delete
 * (the allocator exports _Znwm, _ZdlPv, ...) go to that allocator directly,
 * and jemalloc's delete calls free through its PLT, i.e. here; our
 * malloc_usable_size asked the next one (dlsym(RTLD_NEXT): jemalloc's) about
 * glibc's blocks. With jemalloc, whose blocks the runtime's glibc calls never
 * saw, blocks crossed allocators: "free(): invalid pointer" at start (the
 * placement reader's buffers), in std::string's growth, a segfault in
 * malloc_usable_size. Two cases, decided when the configuration is read
 * (the first allocation, before any block is handed out):
 * - the allocator also exports __libc_malloc & co and the runtime's calls
 *   of them bind to it (tcmalloc, mimalloc): the runtime's DRAM tier is
 *   that allocator, every block goes back to the allocator it came from;
 *   the malloc family is placed as usual, operator new/delete are the
 *   allocator's own (not placed). tw_foreign 0, tw_foreign_dram 1.
 * - otherwise (jemalloc; an executable with its own malloc): the runtime
 *   stands down, tw_foreign 1: every call of the malloc family is
 *   forwarded to that allocator, nothing is placed or counted.
 * One warning says which (census and placement modes) and the run report
 * names the allocator ("allocator", "stood_down"). */
int tw_foreign, tw_foreign_dram;
static char tw_foreign_lib[192];
static struct {
  void *(*malloc)(size_t);
  void (*free)(void *);
  void *(*calloc)(size_t, size_t);
  void *(*realloc)(void *, size_t);
  int (*posix_memalign)(void **, size_t, size_t);
  size_t (*usable)(void *);
} tw_fa;
/* Blocks glibc served while the allocator was looked up (dlsym and
 * _dl_find_object allocate nothing on success; in case they do): freed to
 * glibc. */
#define TW_FA_EARLY 16
static void *tw_fa_early[TW_FA_EARLY];
static int tw_fa_nearly, tw_fa_looking;

const char *tw_foreign_name(void) {
  return tw_foreign == 1 || tw_foreign_dram ? tw_foreign_lib : NULL;
}

/* The object holding address \p a (its start and file name), found with
 * glibc's _dl_find_object: lock-free and a few hundred instructions, where
 * dladdr scans the object's symbol table for the nearest symbol (~270,000
 * instructions at start for the five look-ups, measured). 0: none. */
typedef struct {
  void *base;
  const char *name;
} tw_fa_obj;
static int tw_fa_where(const void *a, tw_fa_obj *o) {
  struct dl_find_object f;
  if (!a || _dl_find_object((void *)a, &f))
    return 0;
  o->base = f.dlfo_map_start;
  o->name = f.dlfo_link_map && f.dlfo_link_map->l_name
                ? f.dlfo_link_map->l_name
                : "";
  return 1;
}

/* \p name's definition in \p where (RTLD_DEFAULT or RTLD_NEXT) if it lies
 * in the object at \p base, else NULL. */
static void *tw_fa_sym(void *where, const char *name, void *base) {
  tw_fa_obj d;
  void *f = dlsym(where, name);
  return tw_fa_where(f, &d) && d.base == base ? f : NULL;
}

static void tw_fa_name(const char *name) {
  if (!*name) /* (the executable's link map has no name) */
    name = "the executable";
  const char *b = tw_basename(name);
  size_t n = strlen(b);
  if (n >= sizeof(tw_foreign_lib))
    n = sizeof(tw_foreign_lib) - 1;
  memcpy(tw_foreign_lib, b, n);
  tw_foreign_lib[n] = 0;
}

/* Another copy of tierwise (libtierwise.so linked, the runtime preloaded:
 * tw_shadowed in tw_lifecycle.c decides which serves): not a foreign
 * allocator. */
static int tw_fa_ours(const char *path) {
  return !strncmp(tw_basename(path), "libtierwise", 11);
}

static void tw_foreign_detect(void) {
  tw_fa_obj libc, me, o, lm;
  void *where = RTLD_NEXT, *base = NULL, *f;
  const char *name = NULL;
  tw_fa_looking = 1;
  tw_foreign = 2; /* (an allocation meanwhile: tw_fa_alloc, glibc's) */
  if (!tw_fa_where((void *)&getpid, &libc) ||
      !tw_fa_where((void *)&tw_foreign_detect, &me) ||
      !tw_fa_where((void *)&__libc_malloc, &lm))
    goto out;
  if ((f = dlsym(RTLD_DEFAULT, "malloc")) && tw_fa_where(f, &o) &&
      o.base != me.base && o.base != libc.base &&
      !tw_fa_ours(o.name)) {
    /* the executable's own malloc (a static jemalloc): it serves
     * everything, nothing but the runtime's own calls come here */
    where = RTLD_DEFAULT;
    base = o.base;
    name = o.name;
  } else if ((f = dlsym(RTLD_NEXT, "malloc")) && tw_fa_where(f, &o) &&
             o.base != libc.base && !tw_fa_ours(o.name)) {
    base = o.base; /* the next malloc after the runtime's */
    name = o.name;
  } else if (lm.base != libc.base && lm.base != me.base) {
    base = lm.base; /* only its __libc_malloc: it serves DRAM */
    name = lm.name;
  }
  if (!base)
    goto out;
  tw_fa_name(name);
  if (base == lm.base) { /* the runtime's glibc calls bind to it */
    tw_foreign_dram = 1;
    goto out;
  }
  *(void **)&tw_fa.malloc = tw_fa_sym(where, "malloc", base);
  *(void **)&tw_fa.free = tw_fa_sym(where, "free", base);
  *(void **)&tw_fa.calloc = tw_fa_sym(where, "calloc", base);
  *(void **)&tw_fa.realloc = tw_fa_sym(where, "realloc", base);
  *(void **)&tw_fa.posix_memalign = tw_fa_sym(where, "posix_memalign", base);
  *(void **)&tw_fa.usable = tw_fa_sym(where, "malloc_usable_size", base);
  if (!tw_fa.malloc || !tw_fa.free || !tw_fa.calloc || !tw_fa.realloc)
    goto out; /* not an allocator calls can be forwarded to: as before */
  tw_fa_looking = 0;
  tw_foreign = 1;
  return;
out:
  tw_fa_looking = 0;
  tw_foreign = 0;
}

void *tw_fa_alloc(size_t size, size_t align, int zero) {
  if (TW_UNLIKELY(tw_fa_looking)) { /* (the look-up's own: glibc's) */
    void *p = zero ? __libc_calloc(1, size)
              : align ? __libc_memalign(align, size) : __libc_malloc(size);
    if (p && tw_fa_nearly < TW_FA_EARLY)
      tw_fa_early[tw_fa_nearly++] = p;
    return p;
  }
  if (!align)
    return zero ? tw_fa.calloc(1, size) : tw_fa.malloc(size);
  void *p = NULL;
  if (align < sizeof(void *))
    align = sizeof(void *);
  /* (an allocator without posix_memalign: none of the four tested) */
  if (!tw_fa.posix_memalign || tw_fa.posix_memalign(&p, align, size ? size : 1))
    return NULL;
  if (zero && p)
    memset(p, 0, size);
  return p;
}

static int tw_fa_was_early(void *p) {
  for (int i = 0; i < tw_fa_nearly; i++)
    if (tw_fa_early[i] == p) {
      tw_fa_early[i] = tw_fa_early[--tw_fa_nearly];
      return 1;
    }
  return 0;
}

void tw_fa_free(void *p) {
  if (TW_UNLIKELY(tw_fa_nearly) && tw_fa_was_early(p))
    __libc_free(p);
  else if (tw_fa.free)
    tw_fa.free(p);
  else
    __libc_free(p);
}

void *tw_fa_realloc(void *p, size_t size) {
  for (int i = 0; p && i < tw_fa_nearly; i++)
    if (tw_fa_early[i] == p) { /* glibc's, and stays glibc's */
      void *q = __libc_realloc(p, size);
      if (q)
        tw_fa_early[i] = q;
      return q;
    }
  return tw_fa.realloc(p, size);
}

size_t tw_fa_usable(void *p) { return tw_fa.usable ? tw_fa.usable(p) : 0; }

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
  tw_cfg.census_dir = tw_env_path("TIERWISE_CENSUS");
  tw_cfg.placement_path = tw_env_path("TIERWISE_PLACEMENT");
  tw_cfg.pmem_dir = tw_env_path("TIERWISE_PMEM_DIR");
  tw_cfg.report_path = tw_env_path("TIERWISE_REPORT");
  tw_cfg.maps_copy = tw_env_path("TIERWISE_MAPS_COPY");
  tw_cfg.cache_dir = tw_env_path("TIERWISE_CACHE_DIR");
  tw_cfg.sysfs_node = secure_getenv("TIERWISE_SYSFS_NODE");
  for (int i = 0; i < TW_O_COUNT; i++)
    tw_opt[i] = tw_env_opt(i);
  tw_cfg.depth = (int)tw_opt[TW_O_DEPTH];
  tw_cfg.objects_min = tw_opt[TW_O_OBJECTS_MIN];
  tw_cfg.fast_max = tw_opt[TW_O_FASTPATH_MAX];
  tw_cfg.fast_learn = (unsigned)tw_opt[TW_O_FASTPATH_LEARN];
  tw_cfg.fast_check = (unsigned)tw_opt[TW_O_FASTPATH_CHECK];
  const char *lim = secure_getenv("TIERWISE_DRAM_LIMIT");
  tw_cfg.dram_limit_auto = lim && !strcmp(lim, "auto");
  /* auto: set from the DRAM node's room when the placement loads
   * (tw_room.c) */
  tw_cfg.dram_limit =
      tw_cfg.dram_limit_auto ? 0 : tw_env_size("TIERWISE_DRAM_LIMIT", 0);
  if (tw_cfg.dram_limit_auto)
    tw_local_ranks();
  tw_cfg.room = tw_opt[TW_O_ROOM] != 0;
  tw_cfg.room_interval_ms = tw_opt[TW_O_ROOM_INTERVAL];
  tw_cfg.room_min = tw_opt[TW_O_ROOM_MIN];
  tw_cfg.room_rank_min = tw_opt[TW_O_ROOM_RANK_MIN] < tw_cfg.room_min
                             ? tw_opt[TW_O_ROOM_RANK_MIN]
                             : tw_cfg.room_min;
  tw_cfg.room_margin = tw_opt[TW_O_ROOM_MARGIN];
  tw_cfg.room_pcp_min = tw_opt[TW_O_ROOM_PCP_MIN];
  tw_cfg.room_wait_max = (unsigned)tw_opt[TW_O_ROOM_WAIT_MAX];
  tw_cfg.room_idle_share = (unsigned)tw_opt[TW_O_ROOM_IDLE_SHARE];
  tw_cfg.room_ask_wait_ms = tw_opt[TW_O_ROOM_ASK_WAIT];
  const char *nm = secure_getenv("TIERWISE_NUMA_MODE");
  tw_cfg.numa_migrate = nm && !strcmp(nm, "migrate");
  if (nm && *nm && !tw_cfg.numa_migrate && strcmp(nm, "policy"))
    tw_warn("TIERWISE_NUMA_MODE: not policy or migrate: ", nm, "");
  tw_cfg.unmatched_min = tw_opt[TW_O_UNMATCHED_MIN];
  tw_cfg.track_default_max = tw_opt[TW_O_TRACK_DEFAULT_MAX];
  tw_cfg.placement_cache_min = tw_opt[TW_O_PLACEMENT_CACHE_MIN];
  tw_cfg.slow_cache = tw_opt[TW_O_SLOW_CACHE];
#ifdef TW_WITH_PMU
  /* libtierwise-pmu.so: the pmu profiler is the census into
   * TIERWISE_PMU_OUT plus sampling (tw_sample.c); objects below
   * TIERWISE_PMU_MIN_BYTES have no site (their samples are [unknown]). */
  const char *pmu_out = tw_env_path("TIERWISE_PMU_OUT");
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
  tw_foreign_detect();
  if (tw_foreign_dram && tw_cfg.mode != TW_MODE_PASS)
    tw_warn("the program's own allocator (", tw_foreign_lib,
            ") serves the DRAM tier (it exports __libc_malloc): malloc & co "
            "are placed, objects made with operator new are its own, not "
            "placed (runtime/README.md)");
  if (tw_foreign) { /* stand down: every call to the program's allocator */
    if (tw_cfg.mode != TW_MODE_PASS)
      tw_warn("the program's own allocator (", tw_foreign_lib,
              ") serves malloc and free: nothing is placed or counted "
              "(operator new/delete and its own API would mix its blocks "
              "with the runtime's; runtime/README.md)");
    tw_hdr_mode = 0;
    tw_free_slow = 1;
    tw_mode_now = TW_MODE_PASS;
    atomic_store(&tw_init_state, 2);
    return;
  }
  /* (under another Valgrind tool glibc's blocks are not announced: their
   * free stays the fast one) */
  tw_free_slow = tw_hdr_mode || tw_vg == TW_VG_SIM || tw_cfg.dram_limit;
  /* Census is exact from the first allocation; placement needs the file
   * and the tiers, which the constructor loads. */
  tw_mode_now = tw_cfg.mode == TW_MODE_CENSUS ? TW_MODE_CENSUS : TW_MODE_PASS;
  atomic_store(&tw_init_state, 2);
}
