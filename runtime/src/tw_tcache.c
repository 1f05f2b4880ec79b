/* SPDX-License-Identifier: MIT */
/*
 * Layer 1 (mechanisms): the slow tiers' thread cache. memkind serves its
 * dynamic kinds (the pmem file kind, the fixed kind over a NUMA node's
 * memory) without jemalloc's thread cache (memkind_arena.c:
 * get_tcache_flag gives MALLOCX_TCACHE_NONE for every kind it did not
 * build in), so each malloc and free of a slow-tier block took the
 * arena's locks and its extent bookkeeping: ~1,500 instructions per
 * malloc/free pair, 5x the program's own in an allocation-heavy stress
 * with every site in pmem (issue 40 item 4). Here a block a thread frees
 * is kept in that thread's cache, in the bin of its size class, and the
 * thread's next allocation of that class in that tier takes it back: no
 * lock, no memkind call, and its pages stay faulted in.
 *
 * Bounded: blocks up to the backend's cache_max (tw_tier_ops), at most
 * TW_TC_BIN_MAX per bin and TIERWISE_SLOW_CACHE bytes (default 4 MiB) per
 * thread and tier, a quarter of that per bin, for the first TW_TC_TIERS
 * tiers a thread frees into.
 * A thread's cache goes back to the backend when the thread exits (a
 * pthread key's destructor). A fork child drops what its one thread had
 * cached (the generation, bumped in the child): the pmem tier's blocks
 * there are private copies of the parent's file pages, no longer pmem,
 * and the child's kind is new (tw_be_memkind.c); those blocks are never
 * reused or freed in the child. Off under Valgrind, whose tools track
 * each block's malloc and free.
 *
 * Size classes: 16-byte steps up to 128 bytes, then four per power of two
 * (jemalloc's spacing) up to 2 MiB. A freed block goes into the largest
 * class not above its usable size, an allocation looks in the smallest
 * class not below its size, so a cached block always holds the request
 * whatever sizes the backend really rounds to.
 */
#define _GNU_SOURCE
#include "tw_mech.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#define TW_TC_CLASSES 64 /* 8 quantum classes + 14 doublings x 4 */
#define TW_TC_BIN_MAX 64 /* blocks per bin */
#define TW_TC_TIERS 2

typedef struct tw_tc_bin {
  void *head; /* the blocks, linked through their first word */
  uint32_t n;
} tw_tc_bin;

typedef struct tw_tc {
  unsigned gen; /* tw_tc_gen when made: another one is a fork child's */
  struct {
    int tier; /* 0 (dram, never cached): the slot is free */
    const tw_tier_ops *ops;
    size_t bytes;
    tw_tc_bin bin[TW_TC_CLASSES];
  } t[TW_TC_TIERS];
} tw_tc;

/* This thread's cache; TW_TC_OFF while its key's destructor runs (thread
 * exit: frees go straight to the backend). */
#define TW_TC_OFF ((tw_tc *)1)
static __thread tw_tc *tw_tc_mine __attribute__((tls_model("initial-exec")));
static unsigned tw_tc_gen;
static pthread_key_t tw_tc_key;
static pthread_once_t tw_tc_once = PTHREAD_ONCE_INIT;
static int tw_tc_keyed;

static inline unsigned tw_tc_lg(size_t n) { /* floor(log2(n)), n > 0 */
  return 63u - (unsigned)__builtin_clzll((unsigned long long)n);
}

/* The smallest class of size >= n (n <= TW_TC_MAX). */
static inline unsigned tw_tc_class_up(size_t n) {
  if (n <= 128)
    return n ? (unsigned)((n + 15) >> 4) - 1 : 0;
  unsigned lg = tw_tc_lg(n - 1); /* 2^lg < n <= 2^(lg+1) */
  size_t step = (size_t)1 << (lg - 2);
  size_t k = (n - ((size_t)1 << lg) + step - 1) >> (lg - 2); /* 1..4 */
  return 8 + 4 * (lg - 7) + (unsigned)k - 1;
}

/* The largest class of size <= u (u >= 16); capped at the last class. */
static inline unsigned tw_tc_class_down(size_t u) {
  if (u <= 128)
    return (unsigned)(u >> 4) - 1;
  unsigned lg = tw_tc_lg(u); /* 2^lg <= u < 2^(lg+1) */
  size_t k = (u - ((size_t)1 << lg)) >> (lg - 2); /* 0..3 */
  unsigned c = 8 + 4 * (lg - 7) + (unsigned)k - 1;
  return c < TW_TC_CLASSES ? c : TW_TC_CLASSES - 1;
}

/* The size of class \p c (what the cache counts a block of that bin as). */
static inline size_t tw_tc_size(unsigned c) {
  if (c < 8)
    return 16 * (size_t)(c + 1);
  unsigned g = (c - 8) / 4, k = (c - 8) % 4 + 1;
  return ((size_t)1 << (7 + g)) + ((size_t)k << (5 + g));
}

/* Give every cached block back to its backend. */
static void tw_tc_drain(tw_tc *c) {
  for (int i = 0; i < TW_TC_TIERS; i++) {
    if (!c->t[i].tier)
      continue;
    for (int b = 0; b < TW_TC_CLASSES; b++) {
      void *p = c->t[i].bin[b].head;
      while (p) {
        void *next = *(void **)p;
        c->t[i].ops->free(c->t[i].tier, p);
        p = next;
      }
    }
  }
}

static void tw_tc_exit(void *arg) {
  tw_tc *c = arg;
  tw_tc_mine = TW_TC_OFF;
  if (c && c != TW_TC_OFF) {
    if (c->gen == __atomic_load_n(&tw_tc_gen, __ATOMIC_RELAXED))
      tw_tc_drain(c);
    tw_sys_munmap(c, sizeof(*c));
  }
}

static void tw_tc_make_key(void) {
  tw_tc_keyed = !pthread_key_create(&tw_tc_key, tw_tc_exit);
}

/* This thread's cache, made on its first slow-tier free; NULL: none
 * (thread exiting, no key, no memory). */
static tw_tc *tw_tc_here(void) {
  tw_tc *c = tw_tc_mine;
  if (TW_LIKELY(c != NULL && c != TW_TC_OFF)) {
    if (TW_LIKELY(c->gen == __atomic_load_n(&tw_tc_gen, __ATOMIC_RELAXED)))
      return c;
    /* a fork child's: its blocks are dropped, never reused */
    memset(c, 0, sizeof(*c));
    c->gen = __atomic_load_n(&tw_tc_gen, __ATOMIC_RELAXED);
    return c;
  }
  if (c == TW_TC_OFF)
    return NULL;
  pthread_once(&tw_tc_once, tw_tc_make_key);
  if (!tw_tc_keyed)
    return NULL;
  c = tw_sys_mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (c == MAP_FAILED) {
    tw_tc_mine = TW_TC_OFF;
    return NULL;
  }
  c->gen = __atomic_load_n(&tw_tc_gen, __ATOMIC_RELAXED);
  if (pthread_setspecific(tw_tc_key, c)) {
    tw_sys_munmap(c, sizeof(*c));
    tw_tc_mine = TW_TC_OFF;
    return NULL;
  }
  tw_tc_mine = c;
  return c;
}

int tw_tc_on(void) { return tw_cfg.slow_cache != 0 && tw_vg == TW_VG_NONE; }

void *tw_tc_get(int tier, size_t size, size_t align) {
  tw_tc *c = tw_tc_mine;
  /* an alignment above the size: the backend rounds such a block up to
   * the alignment (jemalloc's size classes), so that is the class it was
   * cached in when freed */
  if (align > size)
    size = align;
  if (!c || c == TW_TC_OFF || size > TW_TC_MAX ||
      c->gen != __atomic_load_n(&tw_tc_gen, __ATOMIC_RELAXED))
    return NULL;
  for (int i = 0; i < TW_TC_TIERS; i++)
    if (c->t[i].tier == tier) {
      unsigned k = tw_tc_class_up(size);
      tw_tc_bin *b = &c->t[i].bin[k];
      /* (an aligned request takes an aligned block among the first few) */
      void **at = &b->head, *p = *at;
      for (int n = 0; p && ((uintptr_t)p & (align - 1)) && n < 4; n++)
        p = *(at = (void **)p);
      if (!p || ((uintptr_t)p & (align - 1)))
        return NULL;
      *at = *(void **)p;
      b->n--;
      c->t[i].bytes -= tw_tc_size(k);
      return p;
    }
  return NULL;
}

int tw_tc_put(int tier, const tw_tier_ops *ops, void *p, size_t usable) {
  if (!ops->cache_max || !tw_tc_on())
    return 0;
  size_t u = usable ? usable : ops->usable(tier, p);
  if (u < 16 || u > ops->cache_max || u > TW_TC_MAX)
    return 0;
  tw_tc *c = tw_tc_here();
  if (!c)
    return 0;
  int i = 0;
  while (i < TW_TC_TIERS && c->t[i].tier != tier && c->t[i].tier)
    i++;
  if (i == TW_TC_TIERS)
    return 0; /* a third slow tier: not cached */
  if (!c->t[i].tier) {
    c->t[i].tier = tier;
    c->t[i].ops = ops;
  }
  unsigned k = tw_tc_class_down(u);
  tw_tc_bin *b = &c->t[i].bin[k];
  size_t sz = tw_tc_size(k);
  /* (a bin holds at most a quarter of the cache: big blocks do not crowd
   * the small ones out) */
  if (b->n >= TW_TC_BIN_MAX || (b->n + 1) * sz > tw_cfg.slow_cache / 4 ||
      c->t[i].bytes + sz > tw_cfg.slow_cache)
    return 0;
  *(void **)p = b->head;
  b->head = p;
  b->n++;
  c->t[i].bytes += sz;
  return 1;
}

void tw_tc_atfork(int phase) {
  if (phase == 2)
    __atomic_add_fetch(&tw_tc_gen, 1, __ATOMIC_RELAXED);
}
