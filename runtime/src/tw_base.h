/* SPDX-License-Identifier: MIT */
/*
 * Layer 0 of the runtime, the base (runtime/README.md "Layers"): the
 * configuration read from the environment, warnings, system calls, the
 * page-owner map, tier names, buffered output. Depends on nothing else of
 * the runtime; every other layer includes it (tw_mech.h, tw_policy.h,
 * tw_paths.h build on it in that order). Not installed.
 */
#pragma once

#include <sched.h> /* cpu_set_t (_GNU_SOURCE) */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "tierwise.h" /* enum tw_tier: the one tier numbering */
#include "tw_sitekey.h"

#define TW_HIDDEN __attribute__((visibility("hidden")))
#define TW_LIKELY(x) __builtin_expect(!!(x), 1)
#define TW_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* glibc's allocator itself (exported by libc.so.6): DRAM blocks come from
 * here, so the runtime needs no dlsym bootstrap. */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

#define TW_SITE_NONE 0xffffffffu

/* ---- tw_config.c: configuration, clock, warnings ---- */
enum tw_mode { TW_MODE_OFF = 0, TW_MODE_PASS, TW_MODE_CENSUS, TW_MODE_PLACE };

typedef struct tw_config {
  int mode;
  int depth;
  size_t objects_min;
  size_t site_min; /* census: smaller allocations get no site (pmu: 4096) */
  int sampling;    /* pmu profiler: the census samples memory events */
  size_t fast_max; /* allocations at least this big are always unwound */
  unsigned fast_learn, fast_check;
  const char *census_dir, *placement_path, *pmem_dir, *report_path;
  const char *maps_copy;
  const char *sysfs_node; /* tests: instead of /sys/devices/system/node */
  uint64_t dram_limit; /* 0: none */
  int dram_limit_auto;  /* TIERWISE_DRAM_LIMIT=auto: the DRAM node's room */
  unsigned local_ranks; /* processes sharing it (auto: tw_local_ranks) */
  const char *local_ranks_from; /* the variable that said so, or NULL */
  int room;             /* TIERWISE_ROOM (default 1): tw_room.c */
  uint64_t room_interval_ms; /* TIERWISE_ROOM_INTERVAL: its watcher */
  int numa_migrate;     /* TIERWISE_NUMA_MODE=migrate: tw_room.c */
  size_t unmatched_min;
  uint64_t track_default_max; /* TIERWISE_TRACK_DEFAULT_MAX (tw_placement.c) */
  uint64_t placement_cache_min; /* TIERWISE_PLACEMENT_CACHE_MIN: sites */
  const char *cache_dir;        /* TIERWISE_CACHE_DIR (tw_placement_cache.c) */
  size_t slow_cache; /* TIERWISE_SLOW_CACHE: per thread and slow tier */
  /* the room's scheme (tw_room.c; tw_options: units, defaults, what each
   * answers to) */
  uint64_t room_min, room_rank_min, room_margin, room_pcp_min;
  uint64_t room_ask_wait_ms;
  unsigned room_wait_max, room_idle_share;
} tw_config;

/* The runtime's numeric settings, one table (tw_config.c) with each one's
 * environment name, unit, default and bounds; read once into tw_cfg
 * (tw_config_read). A value that is not a number/size, or out of bounds,
 * is said in one line and the default is used. The run report prints the
 * room's (its "scheme"). */
enum tw_opt_id {
  TW_O_DEPTH, TW_O_OBJECTS_MIN, TW_O_FASTPATH_MAX, TW_O_FASTPATH_LEARN,
  TW_O_FASTPATH_CHECK, TW_O_UNMATCHED_MIN, TW_O_TRACK_DEFAULT_MAX,
  TW_O_PLACEMENT_CACHE_MIN,
  TW_O_SLOW_CACHE, TW_O_TOUCH_TICK, TW_O_TOUCH_PAGES, TW_O_TOUCH_OVERHEAD,
  TW_O_TOUCH_ROI,
  TW_O_ROOM,
  TW_O_ROOM_INTERVAL, TW_O_ROOM_MIN, TW_O_ROOM_RANK_MIN, TW_O_ROOM_MARGIN,
  TW_O_ROOM_PCP_MIN, TW_O_ROOM_WAIT_MAX, TW_O_ROOM_IDLE_SHARE,
  TW_O_ROOM_ASK_WAIT, TW_O_COUNT
};
#define TW_O_ROOM_FIRST TW_O_ROOM /* the room's: TW_O_ROOM.. the last */
typedef struct tw_option {
  const char *env;    /* TIERWISE_... */
  const char *key;    /* its name in the run report */
  const char *unit;   /* bytes (the size grammar), ms, or a count */
  uint64_t dflt, min, max;
} tw_option;
TW_HIDDEN extern const tw_option tw_options[TW_O_COUNT];
TW_HIDDEN extern uint64_t tw_opt[TW_O_COUNT]; /* the values in use */

TW_HIDDEN extern tw_config tw_cfg;
TW_HIDDEN extern volatile int tw_mode_now; /* enum tw_mode, OFF until init */
TW_HIDDEN extern __thread int tw_in_core
    __attribute__((tls_model("initial-exec")));
/* Set while this thread dlopens libmemkind (tw_be_memkind.c): the
 * interposed secure_getenv (tw_config.c) then gives jemalloc
 * JEMK_MALLOC_CONF=thp:never unless the user set it. */
TW_HIDDEN extern __thread int tw_mk_loading
    __attribute__((tls_model("initial-exec")));
/* Tier whose backend call is running on this thread (0: none): mmap marks
 * the pages it maps as that tier's (tw_mmap.c). */
TW_HIDDEN extern __thread int tw_in_tier
    __attribute__((tls_model("initial-exec")));
/* Valgrind client requests (tw_clientreq.h), decided once when the config
 * is read: none natively (or TIERWISE_VALGRIND_REQUESTS=0); under tierwise's
 * own tool (`tierwise simulate`, it answers TW_CLREQ_HELLO) every block the
 * runtime serves is announced with its tier; under another tool (memcheck,
 * helgrind) only memkind's blocks and split mappings, which that tool cannot
 * see otherwise: glibc's blocks it tracks through its malloc replacement
 * (which serves __libc_malloc), and announcing them again is a second block
 * at the same address (memcheck: "Mismatched free()"). */
enum { TW_VG_NONE, TW_VG_OTHER, TW_VG_SIM };
TW_HIDDEN extern int tw_vg;
/* Whether a block of \p tier is announced to the Valgrind tool. */
static inline int tw_vg_tracks(int tier) {
  return TW_UNLIKELY(tw_vg) && (tw_vg == TW_VG_SIM || tier != TW_TIER_DRAM);
}
/* Census mode: every block has a tw_hdr (sites, sizes, times at free);
 * other modes: no header, ownership from the page-owner map. */
TW_HIDDEN extern int tw_hdr_mode;
/* free() must take the slow path: census headers, the tierwise Valgrind
 * tool's requests (tw_vg_tracks(TW_TIER_DRAM)) or the DRAM limit's
 * accounting (set once, when the configuration is read). */
TW_HIDDEN extern int tw_free_slow;
/* Where only the room made it slow (tw_room.c): the size of its smallest
 * tracked object; the slow path's first step frees a smaller glibc block
 * at once (tw_core_free). 0: otherwise. */
TW_HIDDEN extern size_t tw_free_big;

/* Another malloc implementation serves the process (tw_config.c: a
 * program linked with jemalloc, tcmalloc, mimalloc): set when the
 * configuration is read; the runtime then forwards every call of the
 * malloc family to it (tw_fa_*) and places nothing. */
TW_HIDDEN extern int tw_foreign;
/* Such an allocator that also exports __libc_malloc & co, which the
 * runtime's DRAM tier then calls (tcmalloc, mimalloc): placement goes on,
 * operator new/delete are the allocator's own (not placed). */
TW_HIDDEN extern int tw_foreign_dram;
TW_HIDDEN const char *tw_foreign_name(void); /* its file's name, or NULL */
TW_HIDDEN void *tw_fa_alloc(size_t size, size_t align, int zero);
TW_HIDDEN void tw_fa_free(void *p);
TW_HIDDEN void *tw_fa_realloc(void *p, size_t size);
TW_HIDDEN size_t tw_fa_usable(void *p);
/* Read the environment once (cheap; the first allocation may come before
 * the constructor). */
TW_HIDDEN void tw_config_read(void);
TW_HIDDEN int tw_config_ready(void);
TW_HIDDEN uint64_t tw_now_ns(void);
/* The calling thread's CPU time in ns (CLOCK_THREAD_CPUTIME_ID); 0 if the
 * clock cannot be read. */
TW_HIDDEN uint64_t tw_thread_cpu_ns(void);
/* One line "tierwise: a b c" on stderr, kept for the run report. */
TW_HIDDEN void tw_warn(const char *a, const char *b, const char *c);
/* The warnings so far (at most TW_MAX_WARNINGS kept), for the run report. */
#define TW_MAX_WARNINGS 32
TW_HIDDEN int tw_warnings_count(void);
TW_HIDDEN const char *tw_warning(int i);

/* ---- tw_sys.c: system calls, internal memory, the page-owner map ---- */
TW_HIDDEN void *tw_sys_mmap(void *addr, size_t len, int prot, int flags, int fd,
                            off_t off);
TW_HIDDEN int tw_sys_munmap(void *addr, size_t len);
/* the kernel's mprotect, not the sample profiler's interposed one;
 * async-signal-safe */
TW_HIDDEN int tw_sys_mprotect(void *addr, size_t len, int prot);
/* Around the runtime's work that reaches a cancellation point (open, write)
 * holding a lock, inside a call of the program's: not cancelled there
 * (pthread_cancel'ed inside it, a thread left the lock held and every
 * other thread waited on it forever). tw_sys_nocancel returns the state to
 * give tw_sys_cancel_restore. */
TW_HIDDEN int tw_sys_nocancel(void);
TW_HIDDEN void tw_sys_cancel_restore(int old);
/* the kernel's mremap (MREMAP_FIXED: \p to), not the interposed one */
TW_HIDDEN void *tw_sys_mremap(void *addr, size_t len, size_t nlen, int flags,
                              void *to);
/* ---- tw_ownfds.c: the runtime's own descriptors, kept from the program
 * (tw_close.c): tw_fd_keep moves \p fd to a high number (close-on-exec) and
 * lists it; returns the descriptor to use. tw_fd_forget before the runtime
 * closes one (tw_fd_close: past the interposed close). ---- */
TW_HIDDEN int tw_fd_keep(int fd);
TW_HIDDEN void tw_fd_forget(int fd);
TW_HIDDEN int tw_fd_kept(int fd);
/* the least kept descriptor in [lo, hi], or -1 */
TW_HIDDEN int tw_fd_next(unsigned lo, unsigned hi);
TW_HIDDEN int tw_fd_close(int fd);
/* set while this thread makes the pmem kind: the descriptor memkind's
 * mkstemp opens (kept for the kind's life) is kept (tw_close.c) */
TW_HIDDEN extern __thread int tw_fd_capture;
TW_HIDDEN void tw_sys_futex_wait(unsigned *word, unsigned seen,
                                 const struct timespec *timeout);
TW_HIDDEN void tw_sys_futex_wake(unsigned *word, int n);
TW_HIDDEN int tw_sys_affinity(cpu_set_t *get, const cpu_set_t *set);
TW_HIDDEN int tw_sys_pin(int cpu);
TW_HIDDEN long tw_sys_mbind(void *addr, size_t len, int mode,
                            const unsigned long *mask, unsigned long maxnode,
                            unsigned flags);
TW_HIDDEN void *tw_internal_alloc(size_t size); /* never freed */
/* A sparse table of the runtime's, \p len bytes mapped (anonymous,
 * MAP_NORESERVE: only touched pages take memory) and never in transparent
 * huge pages, where each touched page would take 2 MiB (MADV_NOHUGEPAGE);
 * NULL if it cannot be mapped. */
TW_HIDDEN void *tw_sys_sparse(size_t len);
/* A detached thread of the runtime's own running \p fn: a 64 KiB stack,
 * every signal blocked (the program's handlers run on its threads); 0 or
 * -1. */
TW_HIDDEN int tw_sys_thread(void *(*fn)(void *));
/* The calling thread's name (top -H, /proc/PID/task/TID/comm). */
TW_HIDDEN void tw_sys_thread_name(const char *name);
TW_HIDDEN void tw_sys_atfork(int phase); /* 0 prepare, 1 parent, 2 child */
/* A module's lock across fork (tw_lifecycle.c calls each module's atfork in
 * layer order): taken before fork (phase 0), released after it in the
 * parent (1) and in the child (2), so that no lock is left held in the child
 * by a thread that does not exist there. */
static inline void tw_mutex_atfork(pthread_mutex_t *m, int phase) {
  if (phase == 0)
    pthread_mutex_lock(m);
  else
    pthread_mutex_unlock(m);
}
/* This process's command line (/proc/self/cmdline): its arguments, each
 * NUL-terminated, at most cap - 1 bytes, and a final NUL; returns the bytes
 * read (0 when it cannot be read). */
TW_HIDDEN size_t tw_sys_cmdline(char *buf, size_t cap);
/* Opens the kernel's file \p dir/\p name read-only - in the directory
 * TIERWISE_SYSFS_NODE names instead, where set (tests: a fake /sys and
 * /proc); a descriptor, or -1. */
TW_HIDDEN int tw_sys_open_kernel(const char *dir, const char *name);
/* A small such file into \p buf (at most cap - 1 bytes, NUL-terminated);
 * its length, or -1 when it cannot be opened. */
TW_HIDDEN ssize_t tw_sys_read_kernel(const char *dir, const char *name,
                                     char *buf, size_t cap);
/* Debug (TIERWISE_MAPS_COPY): append /proc/self/maps to that file. */
TW_HIDDEN void tw_maps_snapshot(void);
/* \p pattern with `%p` replaced by the pid. */
TW_HIDDEN void tw_expand_pid(char *out, size_t cap, const char *pattern);

/* Page-owner map: per 1 GiB of address space, a byte per 4 KiB page naming
 * who owns the memory there: 0 glibc (nothing marked), a tier (the pages a
 * tier's backend mapped or reserved for its arena), TW_OWNER_SAMPLED (the
 * first page of a large glibc block whose pages the run report samples at
 * its free, tw_maps.c), or TW_OWNER_SPLIT (a
 * split object's mapping, tw_split.c). free/realloc/malloc_usable_size ask
 * the owner (tw_owner_ops, tw_mech.h). */
#define TW_PMAP_TOP (1u << 17)
#define TW_OWNER_GLIBC 0
#define TW_OWNER_SPLIT TW_TIER_COUNT
#define TW_OWNER_SAMPLED (TW_OWNER_SPLIT + 1)
#define TW_OWNERS (TW_OWNER_SAMPLED + 1)
TW_HIDDEN extern uint8_t *tw_pmap[TW_PMAP_TOP];
static inline int tw_page_owner(const void *p) {
  uintptr_t a = (uintptr_t)p;
  uint8_t *m = tw_pmap[(a >> 30) & (TW_PMAP_TOP - 1)];
  return TW_LIKELY(!m) ? 0 : m[(a >> 12) & ((1u << 18) - 1)];
}
/* Mark pages [a, a+len) as \p owner's (0: unmark). */
TW_HIDDEN void tw_pmap_mark(uintptr_t a, size_t len, int owner);

/* ---- tw_tiername.c: tier names (placement.json, reports, tierwise.h) ---- */
TW_HIDDEN const char *tw_tier_str(int tier); /* NULL: out of range */
TW_HIDDEN int tw_tier_parse(const char *name); /* -1: unknown */
static inline int tw_tier_is_numa(int tier) {
  return tier >= TW_TIER_NUMA0 && tier < TW_TIER_COUNT;
}

/* ---- tw_out.c: buffered write(2) output, no stdio ---- */
typedef struct tw_out {
  int fd;
  size_t len;
  int failed;
  char buf[1 << 15];
} tw_out;
TW_HIDDEN int tw_out_open(tw_out *o, const char *path, char *tmp, size_t cap);
TW_HIDDEN int tw_out_close(tw_out *o, const char *tmp, const char *path);
TW_HIDDEN void tw_out_str(tw_out *o, const char *s);
TW_HIDDEN void tw_out_json(tw_out *o, const char *s); /* quoted, escaped */
TW_HIDDEN void tw_out_u64(tw_out *o, uint64_t v);
TW_HIDDEN void tw_out_flush(tw_out *o);
TW_HIDDEN size_t tw_fmt_u64(char *buf, uint64_t v);
/* mkdir -p: parents as mkdir(2) with the umask, \p path itself mode 0700.
 * 0, or -1 and errno. */
TW_HIDDEN int tw_mkdirs(const char *path);
/* tw_parse_size: the size grammar (common/tw_size.h) */
#include "tw_size.h"
