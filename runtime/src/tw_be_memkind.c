/* SPDX-License-Identifier: MIT */
/*
 * Layer 1 (mechanisms): the memkind backends, one ops table each (tw_mech.h,
 * memkind's own struct memkind_ops is the model): pmem = a file-backed kind
 * on TIERWISE_PMEM_DIR (memkind_create_pmem: an unlinked temporary file, so
 * its data is private to the process; split tails are files in the same
 * directory), hbw = MEMKIND_HBW. kmem is the NUMA node backend's
 * (tw_be_numa.c), never memkind's DAX_KMEM kind, which binds with
 * MPOL_BIND and cannot be split. The operations on a kind are shared with
 * the NUMA node backend, whose small blocks come from memkind_create_fixed
 * over memory bound to the node. libmemkind (and hwloc, daxctl, ... behind
 * it) is dlopen'ed only when a tier other than DRAM is used: census runs
 * and DRAM-only placements do not pay for loading it.
 */
#define _GNU_SOURCE
#include "tw_mech.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <memkind.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <valgrind/helgrind.h>

/* jemalloc's extent_hooks_t (its public ABI since 4.0), which memkind's
 * headers do not install: the table of functions an arena gets and gives
 * back its memory with. */
struct tw_extent_hooks {
  void *(*alloc)(struct tw_extent_hooks *, void *, size_t, size_t, bool *,
                 bool *, unsigned);
  bool (*dalloc)(struct tw_extent_hooks *, void *, size_t, bool, unsigned);
  void *destroy, *commit, *decommit, *purge_lazy, *purge_forced, *split,
      *merge;
};

static memkind_t tw_kinds[TW_TIER_COUNT];
static void *tw_mk; /* dlopen handle of libmemkind */
static struct {
  int (*create_pmem)(const char *, size_t, memkind_t *);
  int (*create_fixed)(void *, size_t, memkind_t *);
  void *(*malloc)(memkind_t, size_t);
  void *(*calloc)(memkind_t, size_t, size_t);
  int (*posix_memalign)(memkind_t, void **, size_t, size_t);
  void (*free)(memkind_t, void *);
  void *(*realloc)(memkind_t, void *, size_t);
  size_t (*usable)(memkind_t, void *);
  int (*check_available)(memkind_t);
  void (*error_message)(int, char *, size_t);
  int (*arena_destroy)(struct memkind *);
  int (*arena_create_map)(struct memkind *, struct tw_extent_hooks *, bool);
  memkind_t *hbw;
} tw_mkf;
static int tw_kinds_dead; /* memkind destroyed our pmem kinds at exit */

/* Around every call into memkind: the pages it maps are this tier's
 * (tw_mmap.c), and what it allocates with malloc for itself is the
 * runtime's (tw_in_core: glibc's, never placed). Before, its own mallocs
 * were the program's - placed, with pmem the default tier, back into
 * memkind while it held its locks - and one of them ended with tw_in_tier
 * 0, so memkind's next mmap was the program's mapping too: a Python
 * multiprocessing pool with every site in pmem hung at its first fork
 * (jemalloc's fork handler waited on the arena lock of a thread that
 * waited on the mapping table's lock, taken by the runtime's). */
static inline int tw_mk_enter(int tier) {
  int was = tw_in_tier;
  tw_in_tier = tier;
  tw_in_core++;
  return was;
}
static inline void tw_mk_leave(int was) {
  tw_in_core--;
  tw_in_tier = was;
}

void (*tw_memkind_late)(void);
/* Serialises loading libmemkind and making the pmem kind (the first pmem
 * allocation may come from any thread); made anew in a fork child. */
static pthread_mutex_t tw_mk_lock = PTHREAD_MUTEX_INITIALIZER;

static int tw_memkind_load_locked(void) {
  static int tried;
  if (tried)
    return tw_mk != NULL;
  tried = 1;
  /* memkind's jemalloc makes its arenas' 2 MiB-aligned base blocks when it
   * loads (for every kind it knows), and under THP "always" (Debian's
   * default) each became a huge page of DRAM it hardly uses: 30 MiB of
   * node-0 memory in the check-numa guest that an unplaced run does not
   * have. thp:never makes jemalloc MADV_NOHUGEPAGE its own mappings; it
   * reads JEMK_MALLOC_CONF once, in the dlopen, through secure_getenv,
   * which the runtime answers for this thread (tw_config.c): the environment
   * is not changed, so neither the program nor its other threads see it
   * (a user's own setting wins). */
  tw_mk_loading = 1;
  tw_mk = dlopen("libmemkind.so.0", RTLD_NOW | RTLD_LOCAL);
  tw_mk_loading = 0;
  if (!tw_mk) {
    tw_warn("cannot load libmemkind.so.0: ", dlerror(),
            "; tiers other than dram fall back to dram");
    return 0;
  }
  if (tw_memkind_late)
    tw_memkind_late(); /* before any call into it (fork handler order) */
#define TW_SYM(field, name) *(void **)&tw_mkf.field = dlsym(tw_mk, name)
  TW_SYM(create_pmem, "memkind_create_pmem");
  TW_SYM(create_fixed, "memkind_create_fixed");
  TW_SYM(malloc, "memkind_malloc");
  TW_SYM(calloc, "memkind_calloc");
  TW_SYM(posix_memalign, "memkind_posix_memalign");
  TW_SYM(free, "memkind_free");
  TW_SYM(realloc, "memkind_realloc");
  TW_SYM(usable, "memkind_malloc_usable_size");
  TW_SYM(check_available, "memkind_check_available");
  TW_SYM(error_message, "memkind_error_message");
  TW_SYM(arena_destroy, "memkind_arena_destroy");
  TW_SYM(arena_create_map, "memkind_arena_create_map");
  TW_SYM(hbw, "MEMKIND_HBW");
#undef TW_SYM
  if (!tw_mkf.create_pmem || !tw_mkf.create_fixed || !tw_mkf.malloc ||
      !tw_mkf.calloc || !tw_mkf.posix_memalign || !tw_mkf.free ||
      !tw_mkf.realloc || !tw_mkf.usable || !tw_mkf.check_available ||
      !tw_mkf.arena_create_map || !tw_mkf.hbw) {
    tw_warn("libmemkind.so.0 lacks the functions tierwise needs; ",
            "tiers other than dram fall back to dram", "");
    tw_mk = NULL;
  }
  return tw_mk != NULL;
}

int tw_memkind_load(void) {
  pthread_mutex_lock(&tw_mk_lock);
  int ok = tw_memkind_load_locked();
  pthread_mutex_unlock(&tw_mk_lock);
  return ok;
}

static void tw_mk_error(const char *what, int err, const char *where) {
  char msg[128] = "";
  if (tw_mkf.error_message)
    tw_mkf.error_message(err, msg, sizeof(msg));
  tw_warn(what, where, msg);
}

/* This thread is loading libmemkind or making a kind: allocations made
 * meanwhile (the constructors of libmemkind and what it loads, run by its
 * dlopen) are served by DRAM - waiting for tw_mk_lock would wait for
 * itself. */
static __thread int tw_mk_making;

/* Runs make(tier, arg) once, under tw_mk_lock, from whichever thread comes
 * first; *made publishes it (1 once made, or once it could not be: the
 * tier's kind NULL). Allocations this thread makes meanwhile are DRAM's
 * (tw_mk_making). */
static void tw_mk_once(int *made, int tier, void (*make)(int, void *),
                       void *arg) {
  if (__atomic_load_n(made, __ATOMIC_ACQUIRE)) {
    if (TW_UNLIKELY(tw_vg == TW_VG_OTHER)) /* helgrind: no C11 atomics */
      ANNOTATE_HAPPENS_AFTER(made);
    return;
  }
  int cs = tw_sys_nocancel(); /* (memkind opens its file: mkstemp) */
  pthread_mutex_lock(&tw_mk_lock);
  if (!*made) {
    tw_mk_making = 1;
    make(tier, arg);
    tw_mk_making = 0;
    if (TW_UNLIKELY(tw_vg == TW_VG_OTHER)) {
      VALGRIND_HG_DISABLE_CHECKING(made, sizeof(*made));
      ANNOTATE_HAPPENS_BEFORE(made);
    }
    __atomic_store_n(made, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&tw_mk_lock);
  tw_sys_cancel_restore(cs);
}

/* 1 once a NUMA tier's fixed kind was made (or could not be: its
 * tw_kinds entry NULL). */
static int tw_fixed_made[TW_TIER_COUNT];

typedef struct tw_fixed_args {
  void *addr;
  size_t size;
  void (*around)(int, int);
} tw_fixed_args;

/* tw_mk_lock held; \p around(tier, 1) before, (tier, 0) after. */
static void tw_fixed_make(int tier, void *arg) {
  const tw_fixed_args *a = arg;
  /* memkind's own mappings now are the tier's: those its jemalloc makes
   * when it loads too (2 MiB-aligned base blocks for every kind it knows,
   * 1.3 MiB touched), which a NUMA node's backend binds to that node
   * (tw_tier_mapped) instead of leaving them in the DRAM that is the
   * placement's budget */
  int was = tw_mk_enter(tier);
  a->around(tier, 1);
  int err = tw_memkind_load_locked()
                ? tw_mkf.create_fixed(a->addr, a->size, &tw_kinds[tier])
                : 0; /* (not loaded: said so; the kind stays NULL) */
  a->around(tier, 0);
  tw_mk_leave(was);
  if (err) {
    tw_mk_error("memkind_create_fixed failed for ", err, tw_tier_str(tier));
    tw_kinds[tier] = NULL;
  }
}

int tw_memkind_fixed_ready(int tier, void *addr, size_t size,
                           void (*around)(int, int)) {
  if (TW_UNLIKELY(tw_mk_making)) {
    errno = EAGAIN; /* (quiet: a fallback, counted) */
    return 0;
  }
  tw_fixed_args a = {addr, size, around};
  tw_mk_once(&tw_fixed_made[tier], tier, tw_fixed_make, &a);
  if (TW_LIKELY(tw_kinds[tier] != NULL))
    return 1;
  errno = EAGAIN; /* said when it failed: no "full?" warning */
  return 0;
}

void tw_memkind_atfork_child(void) {
  /* (another thread may have held it, loading libmemkind or making a
   * kind: the child's first use does it again) */
  pthread_mutex_init(&tw_mk_lock, NULL);
}

/* ---- the operations on a tier's kind ---- */

/* memkind served a block that is not memory of this tier's kind: in a
 * thread's TLS destructors, after memkind's per-thread arena state is gone,
 * jemalloc serves from its default arena (anonymous DRAM), which the page
 * map does not know (its free would go to glibc and abort): give it back;
 * the caller falls back to dram. */
static void *tw_mk_check(int tier, void *p) {
  if (TW_LIKELY(!p) || TW_LIKELY(tw_page_owner(p) == tier))
    return p;
  int was = tw_mk_enter(tier);
  tw_mkf.free(tw_kinds[tier], p);
  tw_mk_leave(was);
  errno = EAGAIN; /* not a full tier: no warning (tw_tier_alloc) */
  return NULL;
}

void *tw_mk_malloc(int tier, size_t size) {
  if (size < 16) /* jemalloc's 8-byte class is only 8-aligned */
    size = 16;
  int was = tw_mk_enter(tier); /* pages memkind maps now belong to this tier */
  void *p = tw_mkf.malloc(tw_kinds[tier], size);
  tw_mk_leave(was);
  return tw_mk_check(tier, p);
}

void *tw_mk_calloc(int tier, size_t size) {
  int was = tw_mk_enter(tier);
  void *p = tw_mkf.calloc(tw_kinds[tier], 1, size < 16 ? 16 : size);
  tw_mk_leave(was);
  return tw_mk_check(tier, p);
}

void *tw_mk_aligned(int tier, size_t align, size_t size) {
  void *p = NULL;
  int was = tw_mk_enter(tier);
  int err = tw_mkf.posix_memalign(tw_kinds[tier], &p, align, size);
  tw_mk_leave(was);
  if (err || !p)
    return NULL;
  if ((uintptr_t)p & (align - 1)) { /* memkind, full pmem dir */
    tw_mk_free(tier, p);
    return NULL;
  }
  return tw_mk_check(tier, p);
}

void tw_mk_free(int tier, void *p) {
  if (tw_kinds_dead && tier == TW_TIER_PMEM) /* after memkind's destructor */
    return;                                   /* leak, never crash */
  int was = tw_mk_enter(tier);
  tw_mkf.free(tw_kinds[tier], p);
  tw_mk_leave(was);
}

void *tw_mk_realloc(int tier, void *p, size_t size) {
  if (tw_kinds_dead && tier == TW_TIER_PMEM) { /* memkind is gone (exit) */
    errno = ENOMEM;
    return NULL;
  }
  int was = tw_mk_enter(tier);
  void *q = tw_mkf.realloc(tw_kinds[tier], p, size);
  tw_mk_leave(was);
  return q;
}

/* A thread's first look-up: jemalloc maps its per-thread state then (the
 * tier's pages, the runtime's call). */
static __thread int tw_mk_usable_seen __attribute__((tls_model("initial-exec")));
static __attribute__((noinline)) size_t tw_mk_usable_first(int tier, void *p) {
  int was = tw_mk_enter(tier);
  size_t u = tw_mkf.usable(tw_kinds[tier], p);
  tw_mk_leave(was);
  tw_mk_usable_seen = 1;
  return u;
}

size_t tw_mk_usable(int tier, void *p) {
  if (tw_kinds_dead && tier == TW_TIER_PMEM)
    return 0;
  /* (later ones map nothing - a block's usable size is a look-up - and
   * stay a tail call: every free of a slow-tier block asks) */
  if (TW_UNLIKELY(!tw_mk_usable_seen))
    return tw_mk_usable_first(tier, p);
  return tw_mkf.usable(tw_kinds[tier], p);
}

/* ---- pmem: memkind's file kind on TIERWISE_PMEM_DIR ---- */

/* The pmem tier opens at start with the checks of its directory (their
 * warnings come at start); its memkind kind is made at its first
 * allocation (tw_pmem_ready): loading libmemkind, and libdaxctl, libkmod,
 * libcrypto, hwloc behind it, costs ~8M instructions (most of them
 * relocating libcrypto), which a process that never allocates in pmem -
 * Open MPI's orted under a job's placement, a run whose pmem sites come
 * later or never - no longer pays at start. */
static int tw_pmem_open(int tier) {
  (void)tier;
  const char *dir = tw_cfg.pmem_dir;
  struct stat st;
  if (!dir || !*dir) {
    tw_warn("TIERWISE_PMEM_DIR is not set: ",
            "the pmem tier falls back to dram", "");
    return -1;
  }
  if (stat(dir, &st) && errno == ENOENT && tw_mkdirs(dir)) {
    tw_warn("TIERWISE_PMEM_DIR ", dir,
            ": does not exist and cannot be created; the pmem tier falls "
            "back to dram");
    return -1;
  }
  if (stat(dir, &st) || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK)) {
    tw_warn("TIERWISE_PMEM_DIR ", dir,
            ": not a writable directory; the pmem tier falls back to dram");
    return -1;
  }
  return 0;
}

/* 1 once the pmem kind was made (or could not be: tw_kinds[pmem] NULL). */
static int tw_pmem_made;

/*
 * The pmem kind's arenas keep every range of their file mappings mapped.
 * memkind gives them extent hooks whose dalloc punches the range out of
 * the file and munmaps it - any piece of a mapping, as its split hook lets
 * jemalloc carve one mapping into many extents. jemalloc (5.3, retain on)
 * relies on a mapping's ranges staying mapped: an extent may merge with its
 * neighbour unless the upper of the two starts a mapping ("head"), so
 * extents merge only within one mapping of one arena. A munmapped piece
 * leaves a hole that the kernel hands to the next mapping - another
 * arena's file mapping (a kind has 4 per CPU, one per thread by hash), or
 * anonymous memory - whose last extent then lies below a non-head extent
 * of the old mapping and merges with it: jemalloc takes an extent of
 * another arena out of its own arena's heaps (it only asserts that the
 * arenas match), and the two arenas' extent heaps are corrupt. Threads
 * freeing pmem blocks crashed in jemalloc (SIGSEGV in memkind_arena_malloc
 * and under memkind_free, a NULL heap link; issue 40 items 2 and 3),
 * without tierwise too (memkind alone, two threads, blocks of 16 B-300 KB
 * on tmpfs: 5 of 10 runs; an instrumented jemalloc saw an extent of arena
 * 264 take arena 258's as its neighbour). memkind's other kinds already
 * keep their mappings (their dalloc hooks opt out); the pmem kind's does
 * too now: memkind_arena_create_map is interposed while this thread makes
 * the pmem kind and given memkind's pmem hooks with dalloc opted out, so
 * jemalloc keeps a freed extent mapped and reuses it (the file keeps its
 * blocks, as with memkind's MEMKIND_HOG_MEMORY: no page is punched out and
 * faulted back in later, which on a full file system would be a SIGBUS).
 */
static __thread int tw_pmem_making; /* this thread makes the pmem kind */
static int tw_pmem_kept;            /* its arenas got tw_pmem_hooks */
static struct tw_extent_hooks tw_pmem_hooks;

static bool tw_pmem_keep(struct tw_extent_hooks *h, void *addr, size_t size,
                         bool committed, unsigned arena) {
  (void)h, (void)addr, (void)size, (void)committed, (void)arena;
  return true; /* opt out: the extent stays mapped, jemalloc retains it */
}

__attribute__((visibility("default"))) int
memkind_arena_create_map(struct memkind *kind, struct tw_extent_hooks *hooks,
                         bool metadata_use_hooks) {
  int (*real)(struct memkind *, struct tw_extent_hooks *, bool) =
      tw_mkf.arena_create_map;
  if (!real) /* the program's own libmemkind, or ours while it loads */
    *(void **)&real = dlsym(RTLD_NEXT, "memkind_arena_create_map");
  if (!real) { /* (its reference is kept: libmemkind is never unloaded) */
    void *h = dlopen("libmemkind.so.0", RTLD_NOW | RTLD_NOLOAD);
    if (h)
      *(void **)&real = dlsym(h, "memkind_arena_create_map");
  }
  if (!real)
    return MEMKIND_ERROR_RUNTIME;
  if (tw_pmem_making && hooks) {
    if (!tw_pmem_hooks.alloc) { /* (the same hooks in a fork child's kind) */
      tw_pmem_hooks = *hooks;
      tw_pmem_hooks.dalloc = tw_pmem_keep;
    }
    hooks = &tw_pmem_hooks;
    tw_pmem_kept = 1;
  }
  return real(kind, hooks, metadata_use_hooks);
}

/* The pmem kind on TIERWISE_PMEM_DIR (tw_mk_lock held). */
static void tw_pmem_make(int tier, void *arg) {
  (void)arg;
  const char *dir = tw_cfg.pmem_dir;
  if (!tw_memkind_load_locked())
    return;
  int was = tw_mk_enter(tier);
  tw_pmem_making = 1;
  tw_pmem_kept = 0;
  tw_fd_capture = 1; /* (its file: tw_close.c) */
  int err = tw_mkf.create_pmem(dir, 0, &tw_kinds[tier]);
  tw_fd_capture = 0;
  tw_pmem_making = 0;
  tw_mk_leave(was);
  if (err) {
    tw_mk_error("memkind_create_pmem failed on ", err, dir);
    tw_kinds[tier] = NULL;
  } else if (!tw_pmem_kept) {
    /* a libmemkind that does not make its arenas through its exported
     * memkind_arena_create_map (or binds the call to itself): its dalloc
     * would unmap pieces of the pmem mappings (above) */
    tw_warn("libmemkind.so.0 made the pmem kind's arenas without ",
            "memkind_arena_create_map; the pmem tier falls back to dram",
            "");
    tw_kinds[tier] = NULL;
  }
}

/* An unlinked file of \p len bytes in the pmem directory, its blocks
 * allocated (a sparse file on a full file system would fault later, as
 * SIGBUS, instead of failing now), or -1. */
static int tw_pmem_named_file(const char *dir);
static int tw_pmem_file(size_t len) {
  const char *dir = tw_cfg.pmem_dir;
  if (!dir || !*dir)
    return -1;
  int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0 && (fd = tw_pmem_named_file(dir)) < 0)
    return -1;
  if (posix_fallocate(fd, 0, (off_t)len)) {
    tw_fd_close(fd);
    return -1;
  }
  return fd;
}

/* On a file system without O_TMPFILE: a named file, unlinked. Out of line:
 * its path buffer is not on the stack of every split allocation
 * (runtime/small-stack.test). */
static __attribute__((noinline)) int tw_pmem_named_file(const char *dir) {
  char path[4096];
  size_t n = strlen(dir);
  if (n + 20 > sizeof(path))
    return -1;
  memcpy(path, dir, n);
  memcpy(path + n, "/tierwise.XXXXXX", 17);
  int fd = mkostemp(path, O_CLOEXEC);
  if (fd >= 0)
    unlink(path);
  return fd;
}

/* A split object's tail: the pmem directory's file mapped MAP_SHARED |
 * MAP_FIXED over the anonymous reservation (memkind serves whole
 * allocations only, so the runtime maps this backing itself); registered
 * with tw_fork.c, so a fork child gets a private copy. */
static int tw_pmem_split_tail(int tier, void *p, size_t len) {
  (void)tier;
  int cs = tw_sys_nocancel(); /* (open, fallocate) */
  int fd = tw_pmem_file(len);
  tw_sys_cancel_restore(cs);
  if (fd < 0)
    return -1;
  void *t = tw_sys_mmap(p, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                        fd, 0);
  tw_fd_close(fd);
  if (t == MAP_FAILED)
    return -1;
  /* a shared file mapping (the descriptor is closed; 0 only says "file") */
  tw_fork_note_map(p, len, PROT_READ | PROT_WRITE, MAP_SHARED, 0);
  return 0;
}

/* fork child: the pmem kind's arena and file are the parent's (its
 * mappings are private copies now, tw_fork.c); new pmem blocks come from a
 * fresh kind, made on first use (memkind_create_pmem is not safe in an
 * atfork handler). Blocks of the old kind are still freed through memkind,
 * which finds their arena from the pointer. */
static memkind_t tw_pmem_inherited;
static int tw_pmem_renew;

static void tw_pmem_atfork(int tier, int phase) {
  if (phase != 2)
    return;
  tw_memkind_atfork_child();
  if (tw_kinds[tier])
    tw_pmem_renew = 1;
}

static void tw_pmem_renew_kind(int tier) {
  pthread_mutex_lock(&tw_mk_lock);
  if (tw_pmem_renew) {
    tw_pmem_inherited = tw_kinds[tier];
    /* On failure the kind stays NULL: new pmem blocks fall back to dram,
     * and frees of old ones go to memkind_free(NULL, p), which finds the
     * kind of a memkind pointer itself. */
    tw_kinds[tier] = NULL;
    tw_mk_making = 1;
    tw_pmem_make(tier, NULL);
    tw_mk_making = 0;
    __atomic_store_n(&tw_pmem_renew, 0, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&tw_mk_lock);
}

/* The kind, made at the first allocation (published by tw_pmem_made), or
 * at start (tw_tier_prepare). */
static void tw_pmem_first(int tier) {
  tw_mk_once(&tw_pmem_made, tier, tw_pmem_make, NULL);
}

static inline int tw_pmem_ready(int tier) {
  if (TW_UNLIKELY(tw_mk_making)) {
    errno = EAGAIN; /* (quiet: a fallback, counted) */
    return 0;
  }
  tw_pmem_first(tier);
  if (TW_UNLIKELY(__atomic_load_n(&tw_pmem_renew, __ATOMIC_ACQUIRE)))
    tw_pmem_renew_kind(tier);
  if (TW_UNLIKELY(tw_kinds_dead))
    return 0;
  if (TW_LIKELY(tw_kinds[tier] != NULL))
    return 1;
  errno = EAGAIN; /* said when it failed: no "full?" warning */
  return 0;
}

/* The run report's tier line: "unavailable" when the kind could not be
 * made at the first allocation (the warning said why). */
static size_t tw_pmem_describe(int tier, char *buf, size_t cap) {
  const char *id =
      __atomic_load_n(&tw_pmem_made, __ATOMIC_ACQUIRE) && !tw_kinds[tier]
          ? "unavailable"
          : "memkind-file";
  size_t n = 0;
  for (; id[n] && n + 1 < cap; n++)
    buf[n] = id[n];
  buf[n] = 0;
  return n;
}

static void *tw_pmem_malloc(int tier, size_t size) {
  return tw_pmem_ready(tier) ? tw_mk_malloc(tier, size) : NULL;
}
static void *tw_pmem_calloc(int tier, size_t size) {
  return tw_pmem_ready(tier) ? tw_mk_calloc(tier, size) : NULL;
}
static void *tw_pmem_aligned(int tier, size_t align, size_t size) {
  return tw_pmem_ready(tier) ? tw_mk_aligned(tier, align, size) : NULL;
}

const tw_tier_ops tw_mk_pmem_ops = {
    .name = "memkind pmem (file)",
    .open = tw_pmem_open,
    .malloc = tw_pmem_malloc,
    .calloc = tw_pmem_calloc,
    .aligned = tw_pmem_aligned,
    .realloc = tw_mk_realloc,
    .free = tw_mk_free,
    .usable = tw_mk_usable,
    .split_tail = tw_pmem_split_tail,
    .describe = tw_pmem_describe,
    .prepare = tw_pmem_first,
    .atfork = tw_pmem_atfork,
    .id = "memkind-file",
    .cache_max = TW_TC_MAX,
};

/* ---- hbw: memkind's static kind ---- */

static int tw_hbw_open(int tier) {
  if (!tw_memkind_load())
    return -1;
  if (tw_mkf.check_available(*tw_mkf.hbw)) {
    tw_warn("tier ", tw_tier_str(tier),
            " is not available on this machine; its sites fall back to dram");
    return -1;
  }
  tw_kinds[tier] = *tw_mkf.hbw;
  return 0;
}

const tw_tier_ops tw_mk_hbw_ops = {
    .name = "memkind HBW",
    .open = tw_hbw_open,
    .malloc = tw_mk_malloc,
    .calloc = tw_mk_calloc,
    .aligned = tw_mk_aligned,
    .realloc = tw_mk_realloc,
    .free = tw_mk_free,
    .usable = tw_mk_usable,
    .id = "memkind-hbw",
    .cache_max = TW_TC_MAX,
};

/*
 * memkind's destructor destroys every pmem kind, unmapping its memory, before
 * exit() flushes stdio - whose buffers may live in pmem. Interposed (memkind
 * calls it through its PLT, resolved in the global scope first): our kinds
 * are left mapped until the process ends, and from then on the runtime
 * serves DRAM and leaks pmem frees.
 */
struct memkind;
__attribute__((visibility("default"))) int
memkind_arena_destroy(struct memkind *kind) {
  if (kind && ((memkind_t)kind == tw_kinds[TW_TIER_PMEM] ||
               (memkind_t)kind == tw_pmem_inherited)) {
    tw_kinds_dead = 1;
    return 0;
  }
  for (int t = 0; t < TW_TIER_COUNT; t++)
    if (kind && (memkind_t)kind == tw_kinds[t])
      return 0; /* a static kind (hbw) or a fixed kind over a node's
                   memory: kept alive, as stdio's buffers may be in it (with
                   MEMKIND_DAX_KMEM the program's stdout was lost at exit) */
  return tw_mkf.arena_destroy ? tw_mkf.arena_destroy(kind) : 0;
}
