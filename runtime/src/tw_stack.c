/* SPDX-License-Identifier: MIT */
/*
 * Layer 1 (mechanisms). Call-site capture: unwinding (frame rules read
 * from .eh_frame, tw_backtrace; libunwind's unw_backtrace where they do
 * not suffice), the module map
 * (dl_iterate_phdr, with build-ids; refreshed when an address falls outside
 * the known modules, e.g. after dlopen), and the two tables behind site
 * indices: raw stacks (return addresses) -> site, and sites (FORMATS.md
 * stack strings) with their counters. Lookups are lock-free; inserting a new
 * stack takes a mutex and formats its string (never symbolizes).
 */
#define _GNU_SOURCE
#include "tw_mech.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#define UNW_LOCAL_ONLY /* _UL symbols: libunwind.so, not libunwind-x86_64 */
#include <libunwind.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <valgrind/helgrind.h>

#define TW_RAW_MAX (TW_MAX_DEPTH + 12)
#define TW_RAW_SLOTS (1u << 17)
/* Slots a raw stack is looked for in (linear probing): past them the table
 * counts as full for that stack, which is then formatted and interned without
 * a raw slot - a bounded cost per allocation instead of a scan of the whole
 * table (tw_raw_overflow, in the run report). */
#define TW_RAW_PROBES 64
#define TW_SITES_MAX (1u << 16)

typedef struct tw_raw {
  uint64_t hash; /* 0: empty; published last */
  uint32_t site;
  uint32_t gen; /* tw_raw_gen when stored: an older one counts as empty */
  int n;
  uintptr_t ips[TW_RAW_MAX];
} tw_raw;

typedef struct tw_module {
  uintptr_t start, end, bias;
  char *path;
  const char *base;
  char build_id[41];
  char closed; /* unloaded (dlclose): kept for the module list, never found
                  by address again */
  char alloc;  /* tw_module_is_allocator(base) */
  char libc;   /* base starts with "libc.so" (tw_stack_format's trailing
                  thread-start frames) */
  uint32_t base_len; /* strlen(base) */
  char seen;   /* tw_modules_closed: still loaded */
  char used;   /* a frame of some raw stack lies in it (tw_lock) */
} tw_module;

static pthread_mutex_t tw_lock = PTHREAD_MUTEX_INITIALIZER;
/* TW_LOCKED_BUF: the buffers of the work done under tw_lock (a new site's
 * frames and string, a module's real path: ~23 KiB) are static, not on the
 * stack of the allocating thread: a malloc must not need much more stack
 * than glibc's, or a thread with a small stack that runs fine without the
 * runtime overflows it (issue 40; runtime/small-stack.test). */
static tw_raw *tw_raws;
tw_site *tw_sites;
static uint32_t tw_nsites; /* atomic */
/* Sites by stack hash (open addressing, site + 1, 0 empty; under tw_lock):
 * a new raw stack finds its site without a scan of every site. */
#define TW_SITE_INDEX (2 * TW_SITES_MAX)
static uint32_t *tw_site_index;
static tw_module tw_mods[TW_MODULES_MAX];
static int tw_nmods;
static uint64_t tw_raw_overflow; /* lookups with no raw slot (atomic) */
/* The raw table's generation (atomic, written under tw_lock): a dlclose
 * empties the table by moving to the next one, in O(1) - clearing its
 * 2^17 slots cost ~400,000 instructions per dlclose, 32M in an Open MPI
 * start-up that unloads ~80 components. */
static uint32_t tw_raw_gen = 1;

static char *tw_strdup_internal(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = tw_internal_alloc(n);
  if (d)
    memcpy(d, s, n);
  return d;
}

/* ---- module map ---- */

static void tw_build_id(struct dl_phdr_info *info, char out[41]) {
  out[0] = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE)
      continue;
    const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
    const char *e = p + ph->p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= e) {
      const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
      const char *desc = p + sizeof(*n) + ((n->n_namesz + 3) & ~3u);
      if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
          !memcmp(p + sizeof(*n), "GNU", 4)) {
        unsigned len = n->n_descsz > 20 ? 20 : n->n_descsz;
        for (unsigned k = 0; k < len; k++) {
          out[2 * k] = "0123456789abcdef"[(unsigned char)desc[k] >> 4];
          out[2 * k + 1] = "0123456789abcdef"[desc[k] & 15];
        }
        out[2 * len] = 0;
        return;
      }
      p = desc + ((n->n_descsz + 3) & ~3u);
    }
  }
}

/* The build-id of the runtime's own module (the object this function is
 * in), into \p out ("" without one). */
static int tw_own_one(struct dl_phdr_info *info, size_t size, void *ctx) {
  (void)size;
  uintptr_t at = (uintptr_t)&tw_own_build_id;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && at >= lo && at < lo + ph->p_memsz) {
      tw_build_id(info, ctx);
      return 1;
    }
  }
  return 0;
}

void tw_own_build_id(char out[41]) {
  out[0] = 0;
  dl_iterate_phdr(tw_own_one, out);
}

/* Directories' real paths (tw_lock held): the modules of a job come from a
 * few directories (Open MPI's ~100 components from one). */
#define TW_DIRS 16
static struct {
  const char *dir, *real; /* tw_internal_alloc'ed; dir NULL: empty */
} tw_dirs[TW_DIRS];
static int tw_ndirs;

/* realpath(name) into out (PATH_MAX): its directory's real path (cached)
 * and its file's name, soname links followed - one readlink per module (two
 * for a link) instead of one per component of its path (realpath's ~5
 * each: ~1,000 system calls in an Open MPI start-up). 0: failed. */
static int tw_real_path_in(const char *name, char *out);
static int tw_real_path(const char *name, char *out) {
  int saved = errno; /* (called from within malloc) */
  int ok = tw_real_path_in(name, out);
  errno = saved;
  return ok;
}

/* The real path of \p name's directory (its first \p dlen bytes), cached:
 * NULL when it has none. Out of line (its buffer), once per directory. */
static __attribute__((noinline)) const char *tw_dir_real(const char *name,
                                                         size_t dlen) {
  static char dir[PATH_MAX], real[PATH_MAX]; /* (TW_LOCKED_BUF) */
  memcpy(dir, name, dlen);
  dir[dlen] = 0;
  if (!realpath(dir, real))
    return NULL;
  size_t rlen = strlen(real);
  char *d = tw_internal_alloc(dlen + 1), *r = tw_internal_alloc(rlen + 1);
  if (!d || !r)
    return NULL;
  memcpy(d, dir, dlen + 1);
  memcpy(r, real, rlen + 1);
  int k = tw_ndirs < TW_DIRS ? tw_ndirs++ : (int)(dlen % TW_DIRS);
  tw_dirs[k].dir = d;
  tw_dirs[k].real = r;
  return r;
}

static int tw_real_path_in(const char *name, char *out) {
  const char *slash = strrchr(name, '/');
  static char link[256], next[PATH_MAX]; /* (TW_LOCKED_BUF) */
  if (!slash || slash == name)
    return realpath(name, out) != NULL;
  size_t dlen = (size_t)(slash - name);
  /* a link to a name in the same directory (libfoo.so.7 ->
   * libfoo.so.7.4.0, the usual soname link) is followed here; any other
   * link, and any failure but "not a link", the general way */
  for (int hops = 0;; hops++) {
    ssize_t n = readlink(name, link, sizeof(link));
    if (n < 0 && errno == EINVAL)
      break;
    if (n <= 0 || n == (ssize_t)sizeof(link) || hops == 8 ||
        memchr(link, '/', (size_t)n) || dlen + 1 + (size_t)n >= sizeof(next))
      return realpath(name, out) != NULL;
    memmove(next, name, dlen + 1);
    memcpy(next + dlen + 1, link, (size_t)n);
    next[dlen + 1 + n] = 0;
    name = next;
    slash = name + dlen;
  }
  size_t blen = strlen(slash);
  const char *real = NULL;
  for (int i = 0; i < tw_ndirs && !real; i++)
    if (!strncmp(tw_dirs[i].dir, name, dlen) && !tw_dirs[i].dir[dlen])
      real = tw_dirs[i].real;
  if (!real && !(real = tw_dir_real(name, dlen)))
    return realpath(name, out) != NULL;
  size_t rlen = strlen(real);
  if (real[rlen - 1] == '/') /* "/" */
    rlen--;
  if (rlen + blen + 1 > PATH_MAX)
    return realpath(name, out) != NULL;
  memcpy(out, real, rlen);
  memcpy(out + rlen, slash, blen + 1);
  return 1;
}

static const tw_module *tw_find_module(uintptr_t a, int refresh);

static int tw_add_module(struct dl_phdr_info *info, size_t sz, void *ctx) {
  (void)sz;
  (void)ctx;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD)
      continue;
    uintptr_t s = info->dlpi_addr + ph->p_vaddr;
    if (s < lo)
      lo = s;
    if (s + ph->p_memsz > hi)
      hi = s + ph->p_memsz;
  }
  if (lo >= hi)
    return 0;
  const tw_module *known = tw_find_module(lo, 0); /* (page-cached) */
  if (known && known->start == lo && known->bias == info->dlpi_addr)
    return 0;
  const char *name = info->dlpi_name;
  static char exe[PATH_MAX]; /* (TW_LOCKED_BUF) */
  if (!name || !*name) { /* the main program */
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = 0;
    name = exe;
  } else if (tw_real_path(name, exe)) {
    /* The loader's name may be a symlink (libfoo.so.7); site identity
     * (FORMATS.md) names the mapped file (libfoo.so.7.4.0), as Valgrind and
     * /proc/self/maps do. */
    name = exe;
  }
  char build_id[41];
  tw_build_id(info, build_id);
  /* A file unloaded before and mapped again (a plugin dlopen'ed and
   * dlclose'd in a loop): its closed entry is opened again at the new
   * addresses - the same index, name and build-id, so its frames keep
   * their module-relative sites and the table does not fill with copies
   * of it. Before, each load took a new entry and after TW_MODULES_MAX of
   * them the next loads' frames were absolute `[anon]+0x7f...` addresses
   * (issue 40 item 8: 987 of 2,000 allocations per site). */
  tw_module *m = NULL;
  for (int i = 0; i < tw_nmods && !m; i++)
    if (tw_mods[i].closed && !strcmp(tw_mods[i].build_id, build_id) &&
        !strcmp(tw_mods[i].path, name))
      m = &tw_mods[i];
  if (m) {
    m->start = lo;
    m->end = hi;
    m->bias = info->dlpi_addr;
    __atomic_store_n(&m->closed, 0, __ATOMIC_RELEASE); /* (last: lock-free
                                                          readers) */
    return 0;
  }
  /* Full: an entry closed before any raw stack went through it is in no
   * site and no cache (first_mod, the policy's per-module answer, the
   * frame memo are all of used modules), so it can name another file. */
  int slot = tw_nmods;
  if (slot == TW_MODULES_MAX)
    for (int i = 0; i < tw_nmods && slot == TW_MODULES_MAX; i++)
      if (tw_mods[i].closed && !tw_mods[i].used)
        slot = i;
  if (slot == TW_MODULES_MAX)
    return 1;
  m = &tw_mods[slot];
  m->path = tw_strdup_internal(name);
  if (!m->path)
    return 1;
  m->base = tw_basename(m->path);
  m->base_len = (uint32_t)strlen(m->base);
  m->start = lo;
  m->end = hi;
  m->bias = info->dlpi_addr;
  m->alloc = (char)tw_module_is_allocator(m->base);
  m->libc = !strncmp(m->base, "libc.so", 7);
  memcpy(m->build_id, build_id, sizeof(build_id));
  if (slot < tw_nmods)
    __atomic_store_n(&m->closed, 0, __ATOMIC_RELEASE);
  else
    __atomic_store_n(&tw_nmods, tw_nmods + 1, __ATOMIC_RELEASE);
  return 0;
}

/* The last module found per 4 KiB page (index + 1; 0: none), so that a
 * lookup is a load and a range check, not a scan of every module (an Open
 * MPI job maps ~200). Stale entries fail the range check or name a closed
 * module: a scan then. By a hash of the page: with the page number's low
 * bits and 1,024 entries, the code pages of an Open MPI start-up's modules
 * (loaded at 4 KiB-aligned addresses that share low bits) evicted each
 * other - a scan in every third look-up, a sixth of a fast-path miss. */
#define TW_MOD_CACHE_BITS 13
static uint16_t tw_mod_cache[1u << TW_MOD_CACHE_BITS];
_Static_assert(TW_MODULES_MAX < 65536, "module index + 1 in 16 bits");

static const tw_module *tw_find_module(uintptr_t a, int refresh) {
  uint32_t k = (uint32_t)(((a >> 12) * 0x9e3779b97f4a7c15ull) >>
                          (64 - TW_MOD_CACHE_BITS));
  int c = __atomic_load_n(&tw_mod_cache[k], __ATOMIC_RELAXED);
  if (c > 0) {
    const tw_module *m = &tw_mods[c - 1];
    if (!m->closed && a >= m->start && a < m->end)
      return m;
  }
  int nmods = __atomic_load_n(&tw_nmods, __ATOMIC_ACQUIRE);
  for (int i = 0; i < nmods; i++)
    if (!tw_mods[i].closed && a >= tw_mods[i].start && a < tw_mods[i].end) {
      __atomic_store_n(&tw_mod_cache[k], (uint16_t)(i + 1), __ATOMIC_RELAXED);
      return &tw_mods[i];
    }
  if (refresh) {
    dl_iterate_phdr(tw_add_module, NULL);
    return tw_find_module(a, 0);
  }
  return NULL;
}

static int tw_mark_loaded(struct dl_phdr_info *info, size_t sz, void *ctx) {
  (void)sz;
  (void)ctx;
  /* A module is still loaded if an object with its load bias maps its
   * start: the module found at the object's lowest address (page-cached,
   * not a scan of every module per object: an Open MPI start-up's ~60
   * dlcloses each saw ~200 objects and modules, 1.6M instructions). */
  uintptr_t lo = UINTPTR_MAX;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_LOAD && info->dlpi_addr + ph->p_vaddr < lo)
      lo = info->dlpi_addr + ph->p_vaddr;
  }
  tw_module *m = (tw_module *)tw_find_module(lo, 0);
  if (m && m->bias == info->dlpi_addr && m->start == lo)
    m->seen = 1;
  return 0;
}

static int tw_subs_of(struct dl_phdr_info *info, size_t sz, void *ctx) {
  if (sz >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
    *(unsigned long long *)ctx = info->dlpi_subs;
  return 1; /* (the count is every object's: the first one's will do) */
}

/* The loader's count of objects unloaded when the modules were last
 * checked: a dlclose that unloaded nothing (another reference remains)
 * leaves it as it was, and needs no look at every object (~200 in an Open
 * MPI job). */
static unsigned long long tw_subs_seen;

/* After a dlclose: the modules no longer loaded are closed, so that a
 * library loaded later at their addresses is named after itself, and, when
 * a frame of some raw stack lay in one of them, the raw-stack table is
 * emptied (its return addresses may point into the closed module; each
 * stack is formatted again once, to the same site where its frames did not
 * change). A module no raw stack went through (most of the ~60 components
 * an Open MPI start-up opens, queries and closes) is in no stack and no
 * site: nothing to forget. */
int tw_modules_closed(void) {
  unsigned long long subs = ~0ull;
  dl_iterate_phdr(tw_subs_of, &subs);
  pthread_mutex_lock(&tw_lock);
  if (subs != ~0ull && subs == tw_subs_seen) {
    pthread_mutex_unlock(&tw_lock);
    return 0;
  }
  tw_subs_seen = subs; /* (read before the look below: at worst the next
                          dlclose looks again) */
  for (int i = 0; i < tw_nmods; i++)
    tw_mods[i].seen = 0;
  dl_iterate_phdr(tw_mark_loaded, NULL);
  int used = 0;
  for (int i = 0; i < tw_nmods; i++)
    if (!tw_mods[i].closed && !tw_mods[i].seen) {
      tw_mods[i].closed = 1;
      used |= tw_mods[i].used;
    }
  if (used)
    __atomic_store_n(&tw_raw_gen, tw_raw_gen + 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&tw_lock);
  return used;
}

void tw_modules_each(tw_module_fn fn, void *ctx) {
  pthread_mutex_lock(&tw_lock);
  dl_iterate_phdr(tw_add_module, NULL);
  pthread_mutex_unlock(&tw_lock);
  for (int i = 0; i < tw_nmods; i++)
    fn(ctx, tw_mods[i].path, tw_mods[i].base, tw_mods[i].build_id);
}

/* Unwinding and fork. libunwind takes mutexes of its own (its memory pools
 * hold the unwind information of a step being parsed) and registers no
 * fork handlers: a fork while another thread unwound left the child blocked
 * forever in its first unwinding (tw_fork_stress: 1 stuck child in 30,000
 * forks, in libunwind's pthread_mutex_lock under _ULx86_64_step). So each
 * libunwind call counts itself in tw_walkers, and fork's prepare raises
 * tw_forking and waits until none is in flight; a walk that finds it
 * raised waits for the fork to end. No lock is held across a walk. */
static _Atomic int tw_walkers, tw_forking;

static void tw_walk_enter(void) {
  for (;;) {
    atomic_fetch_add(&tw_walkers, 1);
    if (TW_LIKELY(!atomic_load(&tw_forking)))
      return;
    atomic_fetch_sub(&tw_walkers, 1);
    while (atomic_load(&tw_forking))
      sched_yield();
  }
}

static void tw_walk_exit(void) { atomic_fetch_sub(&tw_walkers, 1); }

/* fork: no walk in flight (above), and the table lock held so the child's
 * copy is consistent (phase 0 prepare, 1 parent, 2 child). */
void tw_stack_atfork(int phase) {
  if (phase == 0) {
    atomic_store(&tw_forking, 1);
    while (atomic_load(&tw_walkers))
      sched_yield();
  }
  tw_mutex_atfork(&tw_lock, phase);
  if (phase == 2)
    atomic_store(&tw_walkers, 0); /* (walks the fork caught entering) */
  if (phase != 0)
    atomic_store(&tw_forking, 0);
}

/* ---- sites ---- */

uint32_t tw_site_count(void) {
  return __atomic_load_n(&tw_nsites, __ATOMIC_ACQUIRE);
}

/* The site with stack string \p stack, created if new (tw_lock held). */
static uint32_t tw_site_intern(const char *stack) {
  uint64_t h = tw_hash_span(stack, strlen(stack)); /* tw_hash_str's */
  uint32_t k = (uint32_t)h & (TW_SITE_INDEX - 1);
  for (uint32_t i; (i = tw_site_index[k]) != 0; k = (k + 1) & (TW_SITE_INDEX - 1))
    if (tw_sites[i - 1].hash == h && !strcmp(tw_sites[i - 1].stack, stack))
      return i - 1;
  if (tw_nsites == TW_SITES_MAX - 1) /* last slot: "[overflow]" */
    stack = "[overflow]";
  if (tw_nsites == TW_SITES_MAX)
    return TW_SITES_MAX - 1;
  tw_site *s = &tw_sites[tw_nsites];
  tw_site_index[k] = tw_nsites + 1;
  s->stack = tw_strdup_internal(stack);
  s->hash = h;
  s->placed = -1;
  s->tier = TW_TIER_DRAM;
  s->dram_head = 0;
  __atomic_store_n(&tw_nsites, tw_nsites + 1, __ATOMIC_RELEASE);
  return (uint32_t)(s - tw_sites);
}

/* tw_stack_format's string of \p n frames all in known modules \p mods,
 * by its rules (allocator frames first and libc's thread-start frames last
 * left out, \p depth frames kept) with each module's flags and name length
 * known: ~1/3 of its instructions (it asks each frame's module name whether
 * it is an allocator's and copies names byte by byte, ~280 instructions a
 * frame: most new sites of an Open MPI start-up are one frame
 * (tw_site_first), and with every site of its census placed it formats
 * ~14,000 stacks). 0: only allocator frames. */
static size_t tw_stack_quick(char *buf, size_t cap, tw_module *const *mods,
                             const tw_frame *frames, int n, int depth) {
  int first = 0;
  while (first < n && mods[first]->alloc)
    first++;
  if (first == n)
    return 0;
  while (n - 1 > first && mods[n - 1]->libc)
    n--;
  size_t at = 0;
  for (int i = first, kept = 0; i < n && kept < depth; i++, kept++) {
    char hex[2 * sizeof(uintptr_t)];
    uintptr_t v = frames[i].offset;
    size_t k = sizeof(hex), len = mods[i]->base_len;
    do {
      hex[--k] = "0123456789abcdef"[v & 15];
      v >>= 4;
    } while (v);
    if (at + 1 + len + 3 + (sizeof(hex) - k) + 1 > cap) /* (never: 64/frame) */
      return tw_stack_format(buf, cap, frames, n, depth);
    if (kept)
      buf[at++] = ';';
    memcpy(buf + at, mods[i]->base, len);
    memcpy(buf + at + len, "+0x", 3);
    memcpy(buf + at + len + 3, hex + k, sizeof(hex) - k);
    at += len + 3 + (sizeof(hex) - k);
  }
  buf[at] = 0;
  return at;
}

static uint32_t tw_site_new(const uintptr_t *ips, int n) {
  static tw_frame frames[TW_RAW_MAX]; /* (TW_LOCKED_BUF) */
  static tw_module *mods[TW_RAW_MAX];
  static char buf[TW_MAX_DEPTH * 64];
  int first = -1; /* the first user frame's module (+ 1), as tw_stack_format
                     finds it: the first not of an allocator module */
  int known = 1;  /* every frame's module known */
  for (int i = 0; i < n; i++) {
    uintptr_t a = ips[i] - 1; /* the call instruction, not the return */
    tw_module *m = (tw_module *)tw_find_module(a, 1);
    if (m)
      m->used = 1; /* (tw_lock held) */
    else
      known = 0;
    if (first < 0 && !(m && m->alloc))
      first = m ? (int)(m - tw_mods) + 1 : 0;
    mods[i] = m;
    frames[i].module = m ? m->base : NULL;
    frames[i].offset = m ? a - m->bias : a;
  }
  if (!(known ? tw_stack_quick(buf, sizeof(buf), mods, frames, n, tw_cfg.depth)
              : tw_stack_format(buf, sizeof(buf), frames, n, tw_cfg.depth)))
    return TW_SITE_NONE; /* no user frame: the tool's or libraries' own */
  uint32_t site = tw_site_intern(buf);
  if (!tw_sites[site].first_mod && first > 0) /* (the first creation's) */
    tw_sites[site].first_mod = first;
  return site;
}

const char *tw_module_base(int idx) { return tw_mods[idx].base; }

/* Helgrind does not model C11 atomics. A raw slot is published by storing
 * its hash (release) after the rest of it and its site, and read after
 * loading the hash (acquire): tell helgrind that ordering, and exempt the
 * hash word, raced on by design. Only under a Valgrind tool other than
 * tierwise's (helgrind; memcheck ignores the requests). */
static inline void tw_hg_publish(uint64_t *hash) {
  if (TW_UNLIKELY(tw_vg == TW_VG_OTHER)) {
    VALGRIND_HG_DISABLE_CHECKING(hash, sizeof(*hash));
    ANNOTATE_HAPPENS_BEFORE(hash);
  }
}
static inline void tw_hg_acquired(uint64_t *hash) {
  if (TW_UNLIKELY(tw_vg == TW_VG_OTHER))
    ANNOTATE_HAPPENS_AFTER(hash);
}

/* libunwind's default (global) caches take a lock with every signal
 * blocked, two rt_sigprocmask calls per unwinding step not served by its
 * per-thread trace cache: ~26,000 per Open MPI start-up. Per-thread caches
 * need no lock. */
static void tw_cfi_init(void);
static void tw_unwind_init(void) {
  static int done;
  if (!__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL)) {
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    tw_cfi_init();
  }
}

static int tw_steps_map(void);

static int tw_tables_ready(void) {
  if (TW_LIKELY(__atomic_load_n(&tw_raws, __ATOMIC_ACQUIRE) != NULL))
    return 1;
  pthread_mutex_lock(&tw_lock);
  if (!tw_raws) {
    /* 4 KiB pages (tw_sys_sparse): the tables are sparse (the raw stacks
     * hashed), and in 2 MiB pages (THP "always") their ~600 touched pages
     * of a program with a few hundred stacks took 32 MiB of DRAM
     * (check-numa guest). */
    tw_sites = tw_sys_sparse(TW_SITES_MAX * sizeof(tw_site));
    void *r = tw_sys_sparse(TW_RAW_SLOTS * sizeof(tw_raw));
    tw_site_index = tw_sys_sparse(TW_SITE_INDEX * sizeof(uint32_t));
    if (tw_sites && r && tw_site_index && !tw_steps_map()) {
      if (TW_UNLIKELY(tw_vg == TW_VG_OTHER)) /* helgrind: a hint, raced on
                                                by design (a stale entry
                                                fails its range check) */
        VALGRIND_HG_DISABLE_CHECKING(tw_mod_cache, sizeof(tw_mod_cache));
      __atomic_store_n(&tw_raws, (tw_raw *)r, __ATOMIC_RELEASE);
    }
  }
  pthread_mutex_unlock(&tw_lock);
  tw_unwind_init();
  return tw_raws != NULL;
}

/* The site of the raw stack \p ips (return addresses, innermost first): its
 * raw slot's, or a new one's (formatted and interned once per distinct raw
 * stack and table generation). */
static uint32_t tw_site_of(const uintptr_t *ips, int n) {
  uint64_t h = tw_hash_ips(ips, n);
  uint32_t gen = __atomic_load_n(&tw_raw_gen, __ATOMIC_ACQUIRE);
  uint32_t slot = (uint32_t)h & (TW_RAW_SLOTS - 1);
  for (uint32_t probe = 0; probe < TW_RAW_PROBES; probe++) {
    tw_raw *r = &tw_raws[(slot + probe) & (TW_RAW_SLOTS - 1)];
    uint64_t rh = __atomic_load_n(&r->hash, __ATOMIC_ACQUIRE);
    if (rh != 0)
      tw_hg_acquired(&r->hash); /* its gen, n, ips and site: published */
    int live = rh != 0 && r->gen == gen;
    if (live && rh == h) {
      if (r->n == n && !memcmp(r->ips, ips, n * sizeof(*ips)))
        return r->site;
    }
    if (live)
      continue;
    /* Empty (or of an older generation): insert under the lock (re-check
     * it still is). */
    pthread_mutex_lock(&tw_lock);
    gen = tw_raw_gen;
    if (__atomic_load_n(&r->hash, __ATOMIC_ACQUIRE) != 0 && r->gen == gen) {
      pthread_mutex_unlock(&tw_lock);
      probe--; /* look at this slot again */
      continue;
    }
    if (__atomic_load_n(&r->hash, __ATOMIC_RELAXED)) /* an older gen's */
      __atomic_store_n(&r->hash, 0, __ATOMIC_RELEASE);
    uint32_t site = tw_site_new(ips, n);
    r->site = site;
    r->n = n;
    r->gen = gen;
    memcpy(r->ips, ips, n * sizeof(*ips));
    tw_hg_publish(&r->hash);
    __atomic_store_n(&r->hash, h, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&tw_lock);
    return site;
  }
  /* No raw slot near its hash: the same site, found through the formatted
   * stack (tw_site_intern's index), at a formatting's cost. */
  __atomic_fetch_add(&tw_raw_overflow, 1, __ATOMIC_RELAXED);
  pthread_mutex_lock(&tw_lock);
  uint32_t site = tw_site_new(ips, n);
  pthread_mutex_unlock(&tw_lock);
  return site;
}

static int tw_backtrace(uintptr_t *ips, int max);

uint32_t tw_site_here(void) {
  uintptr_t ips[TW_RAW_MAX];
  int max = tw_cfg.depth + 12;
  if (!tw_tables_ready())
    return TW_SITE_NONE;
  if (max > TW_RAW_MAX)
    max = TW_RAW_MAX;
  tw_walk_enter(); /* (fork waits for walks: tw_stack_atfork) */
  int n = tw_backtrace(ips, max);
  if (n < 0)
    n = unw_backtrace((void **)ips, max);
  tw_walk_exit();
  if (n <= 0)
    return TW_SITE_NONE;
  return tw_site_of(ips, n);
}

/* The module holding code address \p a (a return address - 1), its map
 * refreshed under the lock when \p a is outside every known module. */
static const tw_module *tw_module_at(uintptr_t a) {
  const tw_module *m = tw_find_module(a, 0);
  if (m)
    return m;
  pthread_mutex_lock(&tw_lock);
  m = tw_find_module(a, 1);
  pthread_mutex_unlock(&tw_lock);
  return m;
}

/* Frames stepped out of allocator modules (libc's strdup and asprintf,
 * ld.so's dlopen, libstdc++'s operator new) to the first user frame. */
#define TW_FIRST_STEPS 16

/* Allocator call sites whose frame's CFA is rsp + delta (the usual rule of
 * code built without frame pointers), learned from libunwind's steps: a
 * later step out of the same call site is a load, no libunwind. libunwind
 * steps cost ~800 instructions each, and on every lookup its register-state
 * cache missed (emptied after each dlopen) 2-4 rt_sigprocmask calls: an Open
 * MPI start-up's ~3,500 allocations from strdup, asprintf and dlopen made
 * ~20,000. Insert-only, open addressing; ip 0: empty, published last. */
#define TW_STEP_BITS 15
#define TW_STEP_SLOTS (1u << TW_STEP_BITS)
typedef struct tw_step {
  uintptr_t ip;    /* the return address into the allocator's frame */
  uint32_t delta;  /* its CFA - rsp; with TW_STEP_FP: CFA - rbp (a
                      frame-pointer frame) */
  uint32_t rbp_at; /* the caller's rbp saved at CFA - rbp_at; 0: not saved */
} tw_step;
#define TW_STEP_FP 0x80000000u
#define TW_STEP_END 0x40000000u /* the outermost frame (return address
                                   undefined: _start, a thread's start) */
/* Mapped with the other tables (tw_tables_ready), not in .bss: 512 KiB
 * there took .bss past 2 MiB, where THP "always" may back a piece of it
 * with a huge page (runtime/bss.test). */
static tw_step *tw_steps;

static int tw_steps_map(void) {
  void *m = tw_sys_sparse(TW_STEP_SLOTS * sizeof(tw_step));
  if (!m)
    return -1;
  __atomic_store_n(&tw_steps, (tw_step *)m, __ATOMIC_RELEASE);
  return 0;
}

static const tw_step *tw_step_find(uintptr_t ip) {
  uint32_t k = (uint32_t)((ip * 0x9e3779b97f4a7c15ull) >> (64 - TW_STEP_BITS));
  if (!__atomic_load_n(&tw_steps, __ATOMIC_ACQUIRE))
    return NULL;
  for (int probe = 0; probe < 8; probe++, k = (k + 1) & (TW_STEP_SLOTS - 1)) {
    uintptr_t have = __atomic_load_n(&tw_steps[k].ip, __ATOMIC_ACQUIRE);
    if (have == ip) {
      tw_hg_acquired((uint64_t *)&tw_steps[k].ip); /* its rule: published */
      return &tw_steps[k];
    }
    if (!have)
      return NULL;
  }
  return NULL;
}

/* The CFA of the frame whose state is (\p rsp, \p rbp) by rule \p st (not
 * TW_STEP_END); 0: a frame-pointer frame whose rbp is not within 1 MiB
 * above rsp. */
static inline uintptr_t tw_step_cfa(const tw_step *st, uintptr_t rsp,
                                    uintptr_t rbp) {
  if (!(st->delta & TW_STEP_FP))
    return rsp + st->delta;
  if (rbp < rsp || rbp - rsp > (1u << 20))
    return 0;
  return rbp + (st->delta & ~TW_STEP_FP);
}

static void tw_step_learn(uintptr_t ip, uintptr_t delta, uintptr_t rbp_at) {
  uint32_t k = (uint32_t)((ip * 0x9e3779b97f4a7c15ull) >> (64 - TW_STEP_BITS));
  if (delta != TW_STEP_END && ((delta & ~(uintptr_t)TW_STEP_FP) > (1u << 20) ||
                                rbp_at > (delta & ~(uintptr_t)TW_STEP_FP)))
    return;
  if (!__atomic_load_n(&tw_steps, __ATOMIC_ACQUIRE))
    return;
  pthread_mutex_lock(&tw_lock);
  for (int probe = 0; probe < 8; probe++, k = (k + 1) & (TW_STEP_SLOTS - 1))
    if (!tw_steps[k].ip) {
      tw_steps[k].delta = (uint32_t)delta;
      tw_steps[k].rbp_at = (uint32_t)rbp_at;
      tw_hg_publish((uint64_t *)&tw_steps[k].ip);
      __atomic_store_n(&tw_steps[k].ip, ip, __ATOMIC_RELEASE);
      break;
    } else if (tw_steps[k].ip == ip)
      break;
  pthread_mutex_unlock(&tw_lock);
}

/* ---- the CFA rule at a return address, from its FDE (.eh_frame) ----
 * A first visit of an allocator's call site (tw_first_user_ra) used to be
 * one libunwind step: its caches take a lock with every signal blocked, and
 * its look-up wraps dl_iterate_phdr the same way - ~10 rt_sigprocmask per
 * step, ~1,300 per process in an Open MPI start-up. libgcc's
 * _Unwind_Find_FDE finds the FDE through glibc's _dl_find_object (no lock,
 * no system call), and the few CFA instructions of an x86-64 frame (CFA =
 * rsp or rbp + offset, rbp saved at an offset from it, the return address
 * at CFA - 8) are read here. Anything else (expressions, a signal frame,
 * registers moved to registers) is left to libunwind. */
struct tw_eh_bases {
  void *tbase, *dbase, *func;
};
typedef const void *(*tw_find_fde_fn)(void *, struct tw_eh_bases *);
static tw_find_fde_fn tw_find_fde; /* libgcc_s's; NULL: none */

static void tw_cfi_init(void) {
  /* (by its handle: libunwind exports _Unwind_* names of its own) */
  void *h = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);
  void *f = h ? dlsym(h, "_Unwind_Find_FDE") : NULL;
  __atomic_store_n((void **)&tw_find_fde, f, __ATOMIC_RELEASE);
}

static uint64_t tw_uleb(const unsigned char **p, const unsigned char *e) {
  uint64_t v = 0;
  for (unsigned sh = 0; *p < e; sh += 7) {
    unsigned char b = *(*p)++;
    if (sh < 64)
      v |= (uint64_t)(b & 0x7f) << sh;
    if (!(b & 0x80))
      break;
  }
  return v;
}

static int64_t tw_sleb(const unsigned char **p, const unsigned char *e) {
  int64_t v = 0;
  unsigned sh = 0;
  unsigned char b = 0;
  while (*p < e) {
    b = *(*p)++;
    if (sh < 64)
      v |= (int64_t)(b & 0x7f) << sh;
    sh += 7;
    if (!(b & 0x80))
      break;
  }
  if (sh < 64 && (b & 0x40))
    v |= -((int64_t)1 << sh);
  return v;
}

/* The size of a pointer in encoding \p enc (DW_EH_PE_*), 0: unknown. */
static unsigned tw_enc_size(unsigned enc) {
  switch (enc & 0x0f) {
  case 0x00: /* absptr */
  case 0x04: /* udata8 */
  case 0x0c: /* sdata8 */
    return 8;
  case 0x02: /* udata2 */
  case 0x0a:
    return 2;
  case 0x03: /* udata4 */
  case 0x0b:
    return 4;
  default:
    return 0;
  }
}

/* A register's rule: 0 unchanged, 1 saved at CFA + off, -1 unknown. */
typedef struct tw_cfi_row {
  int cfa_reg; /* 6 rbp, 7 rsp */
  int64_t cfa_off;
  int rbp_rule;
  int64_t rbp_off;
  int ra_undefined; /* the outermost frame */
} tw_cfi_row;

/* Run CFA instructions [p, e) while their location is at most \p target
 * (from \p *loc); 0: a rule this reader does not follow. */
static int tw_cfi_run(const unsigned char *p, const unsigned char *e,
                      uintptr_t *loc, uintptr_t target, uint64_t caf,
                      int64_t daf, tw_cfi_row *row, const tw_cfi_row *init) {
  tw_cfi_row stack[8];
  int depth = 0;
  while (p < e) {
    unsigned char op = *p++;
    uint64_t reg, adv = 0;
    int64_t off;
    switch (op >> 6) {
    case 1: /* advance_loc */
      adv = (op & 0x3f) * caf;
      break;
    case 2: /* offset */
      reg = op & 0x3f;
      off = (int64_t)tw_uleb(&p, e) * daf;
      if (reg == 6)
        row->rbp_rule = 1, row->rbp_off = off;
      continue;
    case 3: /* restore */
      if ((op & 0x3f) == 6 && init)
        row->rbp_rule = init->rbp_rule, row->rbp_off = init->rbp_off;
      continue;
    default:
      switch (op) {
      case 0x00: /* nop */
        continue;
      case 0x02: /* advance_loc1, 2, 4 */
      case 0x03:
      case 0x04: {
        unsigned n = op == 0x02 ? 1 : op == 0x03 ? 2 : 4;
        uint32_t v = 0; /* (little-endian) */
        if (p + n > e)
          return 0;
        memcpy(&v, p, n);
        adv = v * caf;
        p += n;
        break;
      }
      case 0x05: /* offset_extended */
        reg = tw_uleb(&p, e);
        off = (int64_t)tw_uleb(&p, e) * daf;
        if (reg == 6)
          row->rbp_rule = 1, row->rbp_off = off;
        continue;
      case 0x11: /* offset_extended_sf */
        reg = tw_uleb(&p, e);
        off = tw_sleb(&p, e) * daf;
        if (reg == 6)
          row->rbp_rule = 1, row->rbp_off = off;
        continue;
      case 0x06: /* restore_extended */
        if (tw_uleb(&p, e) == 6 && init)
          row->rbp_rule = init->rbp_rule, row->rbp_off = init->rbp_off;
        continue;
      case 0x07: /* undefined */
      case 0x08: /* same_value */
        reg = tw_uleb(&p, e);
        if (reg == 6)
          row->rbp_rule = 0;
        if (reg == 16)
          row->ra_undefined = op == 0x07;
        continue;
      case 0x09: /* register */
        reg = tw_uleb(&p, e);
        tw_uleb(&p, e);
        if (reg == 6 || reg == 16)
          return 0;
        continue;
      case 0x0a: /* remember_state */
        if (depth == 8)
          return 0;
        stack[depth++] = *row;
        continue;
      case 0x0b: /* restore_state */
        if (!depth)
          return 0;
        *row = stack[--depth];
        continue;
      case 0x0c: /* def_cfa */
        row->cfa_reg = (int)tw_uleb(&p, e);
        row->cfa_off = (int64_t)tw_uleb(&p, e);
        continue;
      case 0x12: /* def_cfa_sf */
        row->cfa_reg = (int)tw_uleb(&p, e);
        row->cfa_off = tw_sleb(&p, e) * daf;
        continue;
      case 0x0d: /* def_cfa_register */
        row->cfa_reg = (int)tw_uleb(&p, e);
        continue;
      case 0x0e: /* def_cfa_offset */
        row->cfa_off = (int64_t)tw_uleb(&p, e);
        continue;
      case 0x13: /* def_cfa_offset_sf */
        row->cfa_off = tw_sleb(&p, e) * daf;
        continue;
      case 0x2e: /* GNU_args_size */
        tw_uleb(&p, e);
        continue;
      case 0x10: /* expression */
      case 0x16: /* val_expression */
        reg = tw_uleb(&p, e);
        off = (int64_t)tw_uleb(&p, e);
        if (reg == 6 || reg == 16 || off < 0 || off > e - p)
          return 0;
        p += off;
        continue;
      case 0x14: /* val_offset */
      case 0x15: /* val_offset_sf */
        reg = tw_uleb(&p, e);
        if (op == 0x14)
          tw_uleb(&p, e);
        else
          tw_sleb(&p, e);
        if (reg == 6 || reg == 16)
          return 0;
        continue;
      default: /* set_loc, def_cfa_expression, ... */
        return 0;
      }
    }
    if (*loc + adv > target)
      return 1; /* the row in effect at target */
    *loc += adv;
  }
  return 1;
}

/* The step out of the frame whose return address into it is \p ra, as
 * tw_steps holds it (*delta, *rbp_at); 0: not read here. */
static int tw_cfi_step(uintptr_t ra, uintptr_t *delta, uintptr_t *rbp_at) {
  struct tw_eh_bases b;
  uintptr_t target = ra - 1; /* the call instruction */
  tw_find_fde_fn find = __atomic_load_n(&tw_find_fde, __ATOMIC_ACQUIRE);
  if (!find)
    return 0;
  const unsigned char *fde = find((void *)target, &b);
  uint32_t len, cie_off;
  if (!fde)
    return 0;
  memcpy(&len, fde, 4);
  memcpy(&cie_off, fde + 4, 4);
  if (len == 0xffffffffu || len < 8 || !cie_off)
    return 0;
  const unsigned char *fe = fde + 4 + len;
  const unsigned char *cie = fde + 4 - cie_off, *cp;
  uint32_t clen;
  memcpy(&clen, cie, 4);
  if (clen == 0xffffffffu || clen < 8)
    return 0;
  const unsigned char *ce = cie + 4 + clen;
  cp = cie + 8; /* past length and id */
  unsigned version = *cp++;
  const char *aug = (const char *)cp;
  cp += strlen(aug) + 1;
  if (aug[0] && aug[0] != 'z')
    return 0;
  uint64_t caf = tw_uleb(&cp, ce);
  int64_t daf = tw_sleb(&cp, ce);
  uint64_t rareg = version == 1 ? *cp++ : tw_uleb(&cp, ce);
  unsigned fde_enc = 0;
  if (rareg != 16 || cp > ce)
    return 0;
  if (aug[0] == 'z') {
    uint64_t n = tw_uleb(&cp, ce);
    const unsigned char *ae = cp + n, *ap = cp;
    for (const char *a = aug + 1; *a; a++)
      if (*a == 'R')
        fde_enc = *ap++;
      else if (*a == 'P') {
        unsigned enc = *ap++, sz = tw_enc_size(enc);
        if (!sz)
          return 0;
        ap += sz;
      } else if (*a == 'L')
        ap++;
      else /* 'S' (a signal frame) and anything unknown */
        return 0;
    if (ae > ce)
      return 0;
    cp = ae;
  }
  unsigned psz = tw_enc_size(fde_enc);
  if (!psz)
    return 0;
  /* the FDE: pc_begin is b.func (libgcc decoded it); skip it, the range
   * and the augmentation data */
  const unsigned char *fp = fde + 8 + 2 * psz;
  if (aug[0] == 'z') {
    uint64_t n = tw_uleb(&fp, fe);
    fp += n;
  }
  if (fp > fe)
    return 0;
  tw_cfi_row row = {7, 8, 0, 0, 0}, init;
  uintptr_t loc = (uintptr_t)b.func;
  if (!tw_cfi_run(cp, ce, &loc, UINTPTR_MAX, caf, daf, &row, NULL))
    return 0;
  init = row;
  loc = (uintptr_t)b.func;
  if (!tw_cfi_run(fp, fe, &loc, target, caf, daf, &row, &init))
    return 0;
  if (row.ra_undefined) {
    *delta = TW_STEP_END;
    *rbp_at = 0;
    return 1;
  }
  if (row.rbp_rule == 1 && (row.rbp_off >= 0 || -row.rbp_off > row.cfa_off))
    return 0;
  uintptr_t at = row.rbp_rule == 1 ? (uintptr_t)-row.rbp_off : 0;
  if (row.cfa_reg == 7 && row.cfa_off >= 16) {
    *delta = (uintptr_t)row.cfa_off;
    *rbp_at = at;
    return 1;
  }
  if (row.cfa_reg == 6 && row.cfa_off >= 16 && at) {
    *delta = (uintptr_t)row.cfa_off | TW_STEP_FP;
    *rbp_at = at;
    return 1;
  }
  return 0;
}

/* 1 if the bytes before \p ra end in a call instruction (rel32, or an
 * indirect call through a register or memory): a return address. */
static int tw_after_call(uintptr_t ra) {
  const unsigned char *p = (const unsigned char *)ra;
  if (p[-5] == 0xe8)
    return 1;
  for (int len = 2; len <= 7; len++)
    if (p[-len] == 0xff && ((p[-len + 1] >> 3) & 7) == 2)
      return 1;
  return p[-3] == 0x41 && p[-2] == 0xff && ((p[-1] >> 3) & 7) == 2;
}

/* One libunwind step out of the frame at (\p ip, *rsp, *rbp): the
 * caller's return address *next, and its rsp and rbp; 0: failed. Learned
 * for the next time where the frame's CFA is rsp- or rbp-based. Out of
 * line: its context (~1 KiB) is not the common step's. */
static __attribute__((noinline)) int tw_unw_step(uintptr_t ip, uintptr_t *rspp,
                                                 uintptr_t *rbpp,
                                                 uintptr_t *next) {
  unw_context_t uc;
  unw_cursor_t c;
  unw_word_t nip, nsp, nbp;
  unw_save_loc_t loc;
  uintptr_t rsp = *rspp, rbp = *rbpp;
  if (unw_getcontext(&uc))
    return 0;
  uc.uc_mcontext.gregs[REG_RIP] = (greg_t)ip;
  uc.uc_mcontext.gregs[REG_RSP] = (greg_t)rsp;
  uc.uc_mcontext.gregs[REG_RBP] = (greg_t)rbp;
  tw_walk_enter();
  int bad = unw_init_local(&c, &uc) < 0 || unw_step(&c) <= 0 ||
            unw_get_reg(&c, UNW_REG_IP, &nip) < 0 ||
            unw_get_reg(&c, UNW_REG_SP, &nsp) < 0 ||
            unw_get_reg(&c, UNW_X86_64_RBP, &nbp) < 0 || !nip;
  /* rsp-based CFA (rbp not the frame's base): the delta, and where the
   * frame saved its caller's rbp */
  int learn = !bad && nsp > rsp && rbp != nsp - 16 &&
              unw_get_save_loc(&c, UNW_X86_64_RBP, &loc) == 0;
  tw_walk_exit();
  if (bad)
    return 0;
  if (learn)
    tw_step_learn(ip, nsp - rsp,
                  loc.type == UNW_SLT_MEMORY && loc.u.addr < nsp &&
                          loc.u.addr >= rsp
                      ? nsp - loc.u.addr
                      : 0);
  else if (nsp > rsp && rbp == nsp - 16 &&
           ((const uintptr_t *)rbp)[0] == nbp &&
           ((const uintptr_t *)rbp)[1] == nip &&
           unw_get_save_loc(&c, UNW_X86_64_RBP, &loc) == 0 &&
           loc.type == UNW_SLT_MEMORY && loc.u.addr == rbp)
    /* rbp is the frame's base (ld.so's dlopen path, libc's
     * vasprintf): the CFA is rbp + 16 at any depth of its stack */
    tw_step_learn(ip, 16 | TW_STEP_FP, 16);
  *next = nip;
  *rspp = nsp;
  *rbpp = nbp;
  return 1;
}

/* The return address into the first user frame of an allocation whose
 * interposed entry point (a frame-pointer frame: \p sp its frame address,
 * [sp] the caller's rbp, [sp + 8] the return address \p ra) was called from
 * an allocator module: stepped out of the allocator's frames from the
 * caller's state at the call (rip ra, rsp sp + 16, rbp [sp]) - tierwise's
 * own frames are never walked - by the learned deltas, else libunwind.
 * 0: not found this way (the full unwind decides). */
static uintptr_t tw_first_user_ra(uintptr_t ra, uintptr_t sp,
                                  tw_frame_memo *memo, uint32_t gen,
                                  uint32_t *site) {
  if (!sp || ((const uintptr_t *)sp)[1] != ra)
    return 0;
  uintptr_t ip = ra, rsp = sp + 16, rbp = ((const uintptr_t *)sp)[0];
  for (int k = 0; k < TW_FIRST_STEPS; k++) {
    tw_frame_memo *f = memo ? tw_fm_slot(memo, ip) : NULL;
    const tw_step *st = f && f->ra == ip && f->gen == gen
                            ? &tw_steps[f->site & ~TW_FM_STEP]
                            : tw_step_find(ip);
    uintptr_t next;
    const tw_module *m;
    uintptr_t d, a;
    if (!st && tw_cfi_step(ip, &d, &a)) { /* first visit: its FDE */
      tw_step_learn(ip, d, a);
      st = tw_step_find(ip);
    }
    if (st && st->delta == TW_STEP_END)
      return 0;
    if (st) {
      if (f && !(f->ra == ip && f->gen == gen)) /* (an allocator's frame) */
        *f = (tw_frame_memo){ip, gen, TW_FM_STEP | (uint32_t)(st - tw_steps)};
      uintptr_t cfa = tw_step_cfa(st, rsp, rbp), at = st->rbp_at;
      if (!cfa)
        return 0;
      next = ((const uintptr_t *)cfa)[-1];
      tw_frame_memo *g = memo ? tw_fm_slot(memo, next) : NULL;
      if (g && g->ra == next && g->gen == gen) {
        if (!(g->site & TW_FM_STEP)) {
          *site = g->site; /* a user frame seen before: its site */
          return next;
        }
        /* an allocator's frame seen before: stepped out of next */
        if (at)
          rbp = ((const uintptr_t *)(cfa - at))[0];
        rsp = cfa;
        ip = next;
        continue;
      }
      if (!(m = tw_module_at(next - 1)) || !tw_after_call(next))
        return 0; /* not what it learned: the full unwind decides */
      if (at) /* the frame saved (and may have reused) rbp */
        rbp = ((const uintptr_t *)(cfa - at))[0];
      rsp = cfa;
    } else { /* one libunwind step from (ip, rsp, rbp) */
      if (!tw_unw_step(ip, &rsp, &rbp, &next))
        return 0;
      if (!(m = tw_module_at(next - 1)))
        return 0;
    }
    if (!m->alloc)
      return next;
    ip = next;
  }
  return 0;
}

/* The return addresses of the calling stack, innermost first, as
 * unw_backtrace gives them, stepped by the frame rules of tw_steps (read
 * from each return address's FDE at its first visit, tw_cfi_step): a full
 * unwind by libunwind costs ~10 rt_sigprocmask per frame its caches miss,
 * and every dlopen empties them (a placement with thousands of sites made
 * ~67,000 in an Open MPI start-up). Stops at the outermost frame (its
 * return address undefined). -1: a frame whose rule is not read here, or a
 * step to a return address of no module or not after a call instruction:
 * the caller asks libunwind. */
static __attribute__((noinline, optimize("no-omit-frame-pointer"))) int
tw_backtrace(uintptr_t *ips, int max) {
  const uintptr_t *fp = __builtin_frame_address(0);
  uintptr_t ip = fp[1], rsp = (uintptr_t)(fp + 2), rbp = fp[0];
  int n = 0;
  while (n < max) {
    ips[n++] = ip;
    const tw_step *st = tw_step_find(ip);
    uintptr_t d, a;
    if (!st && tw_cfi_step(ip, &d, &a)) {
      tw_step_learn(ip, d, a);
      st = tw_step_find(ip);
    }
    if (!st)
      return -1;
    if (st->delta == TW_STEP_END)
      break;
    uintptr_t cfa = tw_step_cfa(st, rsp, rbp), at = st->rbp_at;
    if (!cfa)
      return -1;
    uintptr_t next = ((const uintptr_t *)cfa)[-1];
    if (!next || !tw_module_at(next - 1) || !tw_after_call(next))
      return -1;
    if (at)
      rbp = ((const uintptr_t *)(cfa - at))[0];
    rsp = cfa;
    ip = next;
  }
  return n;
}

uint32_t tw_site_memo(void *ra, void *sp, int *by_ra,
                      const tw_frame_memo *memo) {
  uintptr_t ip = (uintptr_t)ra;
  uint32_t gen = __atomic_load_n(&tw_raw_gen, __ATOMIC_ACQUIRE);
  const tw_frame_memo *f = tw_fm_slot(memo, ip);
  if (f->ra != ip || f->gen != gen)
    return TW_SITE_NONE;
  *by_ra = !(f->site & TW_FM_STEP);
  if (*by_ra)
    return f->site; /* a user frame: ra's own */
  /* an allocator's frame: stepped out of by memo'ed rules while the frames
   * stepped to are memo'ed (as tw_first_user_ra steps) */
  if (!sp || ((const uintptr_t *)sp)[1] != ip)
    return TW_SITE_NONE;
  uintptr_t rsp = (uintptr_t)sp + 16, rbp = ((const uintptr_t *)sp)[0];
  for (int k = 0; k < TW_FIRST_STEPS; k++) {
    const tw_step *st = &tw_steps[f->site & ~TW_FM_STEP];
    uintptr_t cfa = tw_step_cfa(st, rsp, rbp), next;
    if (!cfa)
      return TW_SITE_NONE;
    next = ((const uintptr_t *)cfa)[-1];
    f = tw_fm_slot(memo, next);
    if (f->ra != next || f->gen != gen)
      return TW_SITE_NONE;
    if (!(f->site & TW_FM_STEP))
      return f->site; /* the first user frame */
    if (st->rbp_at)
      rbp = ((const uintptr_t *)(cfa - st->rbp_at))[0];
    rsp = cfa;
  }
  return TW_SITE_NONE;
}

uint32_t tw_site_first(void *ra, void *sp, int *by_ra, tw_frame_memo *memo) {
  uintptr_t a = (uintptr_t)ra;
  uint32_t site = TW_SITE_NONE;
  *by_ra = 0;
  if (!tw_tables_ready())
    return TW_SITE_NONE;
  uint32_t gen = __atomic_load_n(&tw_raw_gen, __ATOMIC_ACQUIRE);
  tw_frame_memo *f = memo ? tw_fm_slot(memo, a) : NULL;
  if (f && f->ra == a && f->gen == gen && !(f->site & TW_FM_STEP)) {
    *by_ra = 1; /* a user frame: ra's own */
    return f->site;
  }
  if (!(f && f->ra == a && f->gen == gen)) { /* (an allocator's: memo'ed) */
    const tw_module *m = tw_module_at(a - 1);
    *by_ra = m && !m->alloc;
  }
  if (!*by_ra && !(a = tw_first_user_ra(a, (uintptr_t)sp, memo, gen, &site)))
    return TW_SITE_NONE;
  if (site != TW_SITE_NONE) /* its frame was memo'ed */
    return site;
  /* A one-frame raw stack: never the full unwind's, which starts in
   * tierwise's own frames. */
  site = tw_site_of(&a, 1);
  if (memo && site != TW_SITE_NONE && !(site & TW_FM_STEP))
    *tw_fm_slot(memo, a) = (tw_frame_memo){a, gen, site};
  return site;
}

uint64_t tw_stack_overflows(void) {
  return __atomic_load_n(&tw_raw_overflow, __ATOMIC_RELAXED);
}
