/* SPDX-License-Identifier: MIT */
/*
 * Memory tiers through memkind: pmem = a file-backed kind on
 * TIERWISE_PMEM_DIR (memkind_create_pmem: an unlinked temporary file, so its
 * data is private to the process), kmem = MEMKIND_DAX_KMEM, hbw =
 * MEMKIND_HBW. DRAM never comes here (glibc serves it, tw_core.c). A tier
 * that is unavailable is reported once and its sites fall back to DRAM.
 * libmemkind (and hwloc, daxctl, ... behind it) is dlopen'ed only when a
 * placement or an API call needs a tier other than DRAM: census runs and
 * DRAM-only placements do not pay for loading it.
 */
#define _GNU_SOURCE
#include "tw_core.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <memkind.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static memkind_t tw_kinds[TW_NTIERS];
static void *tw_mk; /* dlopen handle of libmemkind */
static struct {
  int (*create_pmem)(const char *, size_t, memkind_t *);
  void *(*malloc)(memkind_t, size_t);
  int (*posix_memalign)(memkind_t, void **, size_t, size_t);
  void (*free)(memkind_t, void *);
  void *(*realloc)(memkind_t, void *, size_t);
  size_t (*usable)(memkind_t, void *);
  int (*check_available)(memkind_t);
  void (*error_message)(int, char *, size_t);
  int (*arena_destroy)(struct memkind *);
  memkind_t *dax_kmem, *hbw;
} tw_mkf;

static int tw_memkind_load(void) {
  static int tried;
  if (tried++)
    return tw_mk != NULL;
  tw_mk = dlopen("libmemkind.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!tw_mk) {
    tw_warn("cannot load libmemkind.so.0: ", dlerror(),
            "; tiers other than dram fall back to dram");
    return 0;
  }
#define TW_SYM(field, name) *(void **)&tw_mkf.field = dlsym(tw_mk, name)
  TW_SYM(create_pmem, "memkind_create_pmem");
  TW_SYM(malloc, "memkind_malloc");
  TW_SYM(posix_memalign, "memkind_posix_memalign");
  TW_SYM(free, "memkind_free");
  TW_SYM(realloc, "memkind_realloc");
  TW_SYM(usable, "memkind_malloc_usable_size");
  TW_SYM(check_available, "memkind_check_available");
  TW_SYM(error_message, "memkind_error_message");
  TW_SYM(arena_destroy, "memkind_arena_destroy");
  TW_SYM(dax_kmem, "MEMKIND_DAX_KMEM");
  TW_SYM(hbw, "MEMKIND_HBW");
#undef TW_SYM
  if (!tw_mkf.create_pmem || !tw_mkf.malloc || !tw_mkf.posix_memalign ||
      !tw_mkf.free || !tw_mkf.realloc || !tw_mkf.usable ||
      !tw_mkf.check_available || !tw_mkf.dax_kmem || !tw_mkf.hbw) {
    tw_warn("libmemkind.so.0 lacks the functions tierwise needs; ",
            "tiers other than dram fall back to dram", "");
    tw_mk = NULL;
  }
  return tw_mk != NULL;
}
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
  if (!tw_memkind_load())
    return;
  if (tier == TW_T_PMEM) {
    const char *dir = tw_cfg.pmem_dir;
    struct stat st;
    if (!dir || !*dir) {
      tw_warn("TIERWISE_PMEM_DIR is not set: ",
              "the pmem tier falls back to dram", "");
      return;
    }
    if (stat(dir, &st) && errno == ENOENT && tw_mkdirs(dir)) {
      tw_warn("TIERWISE_PMEM_DIR ", dir,
              ": does not exist and cannot be created; the pmem tier falls "
              "back to dram");
      return;
    }
    if (stat(dir, &st) || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK)) {
      tw_warn("TIERWISE_PMEM_DIR ", dir,
              ": not a writable directory; the pmem tier falls back to dram");
      return;
    }
    tw_in_tier = tier;
    int err = tw_mkf.create_pmem(dir, 0, &tw_kinds[tier]);
    tw_in_tier = 0;
    if (err) {
      msg[0] = 0;
      if (tw_mkf.error_message)
        tw_mkf.error_message(err, msg, sizeof(msg));
      tw_warn("memkind_create_pmem failed on ", dir, msg);
      tw_kinds[tier] = NULL;
    }
    return;
  }
  memkind_t k = tier == TW_T_KMEM ? *tw_mkf.dax_kmem : *tw_mkf.hbw;
  if (tw_mkf.check_available(k) == 0)
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

/* fork child: the pmem kind's arena and file are the parent's (its
 * mappings are private copies now, tw_fork.c); new pmem blocks come from a
 * fresh kind, made on first use (memkind_create_pmem is not safe in an
 * atfork handler). Blocks of the old kind are still freed through memkind,
 * which finds their arena from the pointer. */
static memkind_t tw_pmem_inherited;
static int tw_pmem_renew;

void tw_tiers_forked(void) {
  if (tw_kinds[TW_T_PMEM])
    tw_pmem_renew = 1;
}

static void tw_pmem_renew_kind(void) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&lock);
  if (tw_pmem_renew) {
    tw_pmem_inherited = tw_kinds[TW_T_PMEM];
    /* On failure the kind stays NULL: new pmem blocks fall back to dram,
     * and frees of old ones go to memkind_free(NULL, p), which finds the
     * kind of a memkind pointer itself. */
    tw_kinds[TW_T_PMEM] = NULL;
    tw_tier_open(TW_T_PMEM);
    __atomic_store_n(&tw_pmem_renew, 0, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&lock);
}

void *tw_tier_malloc(int tier, size_t size, size_t align) {
  void *p = NULL;
  if (TW_UNLIKELY(tier == TW_T_PMEM &&
                  __atomic_load_n(&tw_pmem_renew, __ATOMIC_ACQUIRE)))
    tw_pmem_renew_kind();
  if (!tw_tier_available(tier))
    return NULL;
  if (size < 16) /* jemalloc's 8-byte class is only 8-aligned */
    size = 16;
  tw_in_tier = tier; /* pages memkind maps now belong to this tier */
  int err = align > 16 ? tw_mkf.posix_memalign(tw_kinds[tier], &p, align, size)
                       : ((p = tw_mkf.malloc(tw_kinds[tier], size)) ? 0 : 1);
  tw_in_tier = 0;
  if (err || !p) {
    if (size > ((size_t)1 << 60)) /* fails everywhere: not a tier problem */
      return NULL;
    if (!__atomic_exchange_n(&tw_warned[tier], 1, __ATOMIC_RELAXED))
      tw_warn("tier ", tw_names[tier],
              " could not serve an allocation (full?); falling back to dram");
    return NULL;
  }
  if (align > 16 && ((uintptr_t)p & (align - 1))) { /* memkind, full pmem dir */
    tw_mkf.free(tw_kinds[tier], p);
    if (!__atomic_exchange_n(&tw_warned[tier], 1, __ATOMIC_RELAXED))
      tw_warn("tier ", tw_names[tier],
              " returned a misaligned block (full?); falling back to dram");
    return NULL;
  }
  if (TW_UNLIKELY(tw_page_tier(p) != tier)) {
    /* Memory memkind did not map for this tier during our calls: in a
     * thread's TLS destructors, after memkind's per-thread arena state is
     * gone, jemalloc serves from its default arena (anonymous DRAM). It is
     * not this tier's and the ownership map does not know it (its free went
     * to glibc and aborted): give it back, the caller falls back to dram. */
    tw_in_tier = tier;
    tw_mkf.free(tw_kinds[tier], p);
    tw_in_tier = 0;
    return NULL;
  }
  return p;
}

void tw_tier_free(int tier, void *base) {
  if (tw_kinds_dead) /* after memkind's destructor: leak, never crash */
    return;
  tw_in_tier = tier;
  tw_mkf.free(tw_kinds[tier], base);
  tw_in_tier = 0;
}

void *tw_tier_realloc(int tier, void *p, size_t size) {
  if (tw_kinds_dead) { /* memkind is gone (exit): fail, as realloc may */
    errno = ENOMEM;
    return NULL;
  }
  tw_in_tier = tier;
  void *q = tw_mkf.realloc(tw_kinds[tier], p, size);
  tw_in_tier = 0;
  return q;
}

size_t tw_tier_usable(int tier, void *p) {
  return tw_kinds_dead ? 0 : tw_mkf.usable(tw_kinds[tier], p);
}

/*
 * memkind's destructor destroys every pmem kind, unmapping its memory, before
 * exit() flushes stdio - whose buffers may live in pmem. Interposed (memkind
 * calls it through its PLT, resolved in the global scope first): our kinds
 * are left mapped until the process
 * ends, and from then on the runtime serves DRAM and leaks pmem frees.
 */
struct memkind;
__attribute__((visibility("default"))) int
memkind_arena_destroy(struct memkind *kind) {
  if (kind && ((memkind_t)kind == tw_kinds[TW_T_PMEM] ||
               (memkind_t)kind == tw_pmem_inherited)) {
    tw_kinds_dead = 1;
    return 0;
  }
  return tw_mkf.arena_destroy ? tw_mkf.arena_destroy(kind) : 0;
}
