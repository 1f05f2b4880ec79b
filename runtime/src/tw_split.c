/* SPDX-License-Identifier: MIT */
/*
 * Layer 1 (mechanisms). Split blocks: an object of a site whose placement
 * gives it a DRAM head (placement.json `dram_bytes`, the advisor's partial
 * placement of one large allocation). The object is one anonymous mapping:
 * its first `head` bytes are DRAM's (the DRAM backend's split_head: plain
 * anonymous memory, bound to the local node when the tail is a NUMA node's)
 * and the rest the slow tier's (its backend's split_tail: pmem maps its
 * file there, a NUMA node binds the range). A tier whose backend has no
 * split_tail cannot be split; tw_split_alloc returns NULL and the caller
 * places the whole object.
 *
 * Every page of the mapping is owned by TW_OWNER_SPLIT in the page-owner
 * map, so free/realloc/malloc_usable_size (tw_place.c) come here; the
 * blocks themselves (few and large) are kept in a small table searched
 * under a lock. Under the tierwise Valgrind tool the head and the tail are
 * announced as two blocks of the site, one per tier (tierwise simulate
 * counts them separately); under another tool (memcheck) as one block, the
 * program's object, whose fresh mappings read as zero.
 */
#define _GNU_SOURCE
#include "tw_clientreq.h"
#include "tw_mech.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define TW_SPLITS 256
#define TW_SPLIT_HUGE ((size_t)2 << 20) /* PMD page size of x86-64 DAX */

static tw_split_info tw_splits[TW_SPLITS]; /* base 0: free slot */
static pthread_mutex_t tw_splits_lock = PTHREAD_MUTEX_INITIALIZER;
static int tw_split_warned;
static int tw_splits_used; /* a split object was ever made */

/* Freed split mappings with a pmem tail, kept for the next object of the
 * same length and head (under tw_splits_lock): making one costs a file in
 * the pmem directory (open, fallocate, mmap) and faults on every page, and
 * a site with a DRAM head that allocates in a loop paid it per object (4
 * threads under a 4 MiB limit with a 256 KiB head on objects of 256 KiB -
 * 2 MiB: 25 s against 4.3 s without the head). A kept mapping's head has
 * its DRAM pages given back (MADV_DONTNEED: it reads as zero again); its
 * tail keeps its file pages. Its pages stay TW_OWNER_SPLIT (no pointer to
 * it is live: a free of one aborts, as glibc's would). Such mappings are
 * made at a size class (four per power of two), so that one fits the next
 * object of about its size. A fork child drops the list (its tails are
 * private copies there, no longer pmem). */
#define TW_SPLIT_KEEP 32
#define TW_SPLIT_KEEP_BYTES ((size_t)64 << 20) /* (32 x 2 MiB objects) */
static struct {
  uintptr_t base; /* 0: empty */
  size_t len;
  uint64_t head;
} tw_split_kept[TW_SPLIT_KEEP];
static size_t tw_split_kept_bytes;

void tw_split_atfork(int phase) {
  if (phase == 2) {
    memset(tw_split_kept, 0, sizeof(tw_split_kept));
    tw_split_kept_bytes = 0;
  }
  tw_mutex_atfork(&tw_splits_lock, phase);
}

/* A kept pmem mapping of \p len with \p head taken (tw_splits_lock held),
 * or NULL. */
static uint8_t *tw_split_reuse(size_t len, uint64_t head) {
  for (int i = 0; i < TW_SPLIT_KEEP; i++)
    if (tw_split_kept[i].base && tw_split_kept[i].len == len &&
        tw_split_kept[i].head == head) {
      uint8_t *b = (uint8_t *)tw_split_kept[i].base;
      tw_split_kept[i].base = 0;
      tw_split_kept_bytes -= len;
      return b;
    }
  return NULL;
}

/* Keep \p b (a freed split mapping with a pmem tail, not under Valgrind:
 * the callers check) if there is room (tw_splits_lock held): 1, or 0 (the
 * caller unmaps it). */
static int tw_split_keep(const tw_split_info *b) {
  if (tw_split_kept_bytes + b->len > TW_SPLIT_KEEP_BYTES)
    return 0;
  for (int i = 0; i < TW_SPLIT_KEEP; i++)
    if (!tw_split_kept[i].base) {
      tw_split_kept[i].base = b->base;
      tw_split_kept[i].len = b->len;
      tw_split_kept[i].head = b->head;
      tw_split_kept_bytes += b->len;
      return 1;
    }
  return 0;
}

/* Record \p b in a free slot of the table (tw_splits_lock held): its
 * index, or -1 when all TW_SPLITS are live. */
static int tw_split_record(const tw_split_info *b) {
  for (int i = 0; i < TW_SPLITS; i++)
    if (!tw_splits[i].base) {
      tw_splits[i] = *b;
      __atomic_store_n(&tw_splits_used, 1, __ATOMIC_RELAXED);
      return i;
    }
  return -1;
}

static void tw_split_warn(const char *why) {
  if (!__atomic_exchange_n(&tw_split_warned, 1, __ATOMIC_RELAXED))
    tw_warn("dram_bytes: ", why,
            "; such objects are placed whole in their site's tier");
}

void *tw_split_alloc(uint32_t site, size_t size, size_t align,
                     uint64_t *head_io, int tier, int zero) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  uint64_t head = *head_io & ~(uint64_t)(page - 1);
  if (!head || head >= size || align > page || !tw_tier_available(tier))
    return NULL; /* an unavailable tier has said so (tw_tiers.c) */
  const tw_tier_ops *tail_ops = tw_tier_backend(tier);
  if (!tail_ops->split_tail) {
    char why[96] = "tier ";
    strcat(why, tw_tier_str(tier)); /* hbw: the one tier that cannot */
    strcat(why, " cannot hold part of an object (pmem, kmem and numa:N can)");
    tw_split_warn(why);
    return NULL;
  }
  size_t len = (size + page - 1) & ~(page - 1);
  if (tier == TW_TIER_PMEM && !tw_vg) {
    /* (a pmem-tailed mapping is made at its size class - four per power of
     * two, at most a quarter over - so that a freed one fits the next
     * object of about its size: the kept list's key) */
    size_t q = (size_t)1 << (63 - __builtin_clzll((unsigned long long)len));
    q = q >= 4 * page ? q / 4 : page;
    len = (len + q - 1) & ~(q - 1);
    pthread_mutex_lock(&tw_splits_lock);
    uint8_t *k = tw_split_reuse(len, head);
    tw_split_info b = {(uintptr_t)k, size, len, head, site, tier};
    int slot = k ? tw_split_record(&b) : -1;
    if (k && slot < 0) /* (table full: back to the kept list) */
      tw_split_keep(&b);
    pthread_mutex_unlock(&tw_splits_lock);
    if (slot >= 0) {
      if (zero) /* (the head reads as zero again: MADV_DONTNEED) */
        memset(k + head, 0, size - head);
      *head_io = head;
      return k;
    }
    if (k) {
      tw_split_warn("more than 256 split objects live at once");
      return NULL;
    }
  }
  /* A tail of 2 MiB or more starts on a 2 MiB boundary, like its file
   * offset 0: an fsdax mount can then map it with 2 MiB pages (fewer TLB
   * misses on PMem). The reservation is that much larger, then trimmed. */
  size_t extra = len - head >= TW_SPLIT_HUGE ? TW_SPLIT_HUGE : 0;
  uint8_t *r = tw_sys_mmap(NULL, len + extra, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (r == MAP_FAILED)
    return NULL;
  uint8_t *base = r;
  if (extra) {
    uintptr_t t = ((uintptr_t)r + head + TW_SPLIT_HUGE - 1) &
                  ~(uintptr_t)(TW_SPLIT_HUGE - 1);
    base = (uint8_t *)(t - head);
    if (base > r)
      tw_sys_munmap(r, (size_t)(base - r));
    if (r + len + extra > base + len)
      tw_sys_munmap(base + len, (size_t)(r + len + extra - (base + len)));
  }
  const tw_tier_ops *head_ops = tw_tier_backend(TW_TIER_DRAM);
  int ok = !head_ops->split_head(TW_TIER_DRAM, base, head, tier);
  if (ok && tail_ops->split_tail(tier, base + head, len - head)) {
    ok = 0;
    tw_split_warn(tier == TW_TIER_PMEM
                      ? "no file for the slow-tier part in TIERWISE_PMEM_DIR"
                      : "the slow tier has no room for the tail");
  }
  int slot = -1;
  if (ok) {
    pthread_mutex_lock(&tw_splits_lock);
    slot = tw_split_record(
        &(tw_split_info){(uintptr_t)base, size, len, head, site, tier});
    pthread_mutex_unlock(&tw_splits_lock);
    if (slot < 0)
      tw_split_warn("more than 256 split objects live at once");
  }
  if (slot < 0) {
    tw_fork_note_unmap(base + head, len - head);
    tw_sys_munmap(base, len);
    return NULL;
  }
  tw_pmap_mark((uintptr_t)base, len, TW_OWNER_SPLIT);
  if (TW_UNLIKELY(tw_vg == TW_VG_SIM)) {
    tw_announce(base, head, TW_TIER_DRAM);
    tw_announce(base + head, size - head, tier);
  } else if (TW_UNLIKELY(tw_vg == TW_VG_OTHER))
    VALGRIND_MALLOCLIKE_BLOCK(base, size, 0, 1);
  *head_io = head;
  return base;
}

int tw_split_find(const void *p, tw_split_info *out) {
  uintptr_t a = (uintptr_t)p;
  int found = 0;
  pthread_mutex_lock(&tw_splits_lock);
  for (int i = 0; i < TW_SPLITS && !found; i++)
    if (tw_splits[i].base && a - tw_splits[i].base < tw_splits[i].len) {
      *out = tw_splits[i];
      found = 1;
    }
  pthread_mutex_unlock(&tw_splits_lock);
  return found;
}

void tw_split_each(void (*fn)(const tw_split_info *)) {
  if (!__atomic_load_n(&tw_splits_used, __ATOMIC_RELAXED))
    return;
  pthread_mutex_lock(&tw_splits_lock);
  for (int i = 0; i < TW_SPLITS; i++)
    if (tw_splits[i].base)
      fn(&tw_splits[i]);
  pthread_mutex_unlock(&tw_splits_lock);
}

uint64_t tw_split_free(void *p, int keep) {
  tw_split_info b = {0};
  pthread_mutex_lock(&tw_splits_lock);
  for (int i = 0; i < TW_SPLITS; i++)
    if (tw_splits[i].base == (uintptr_t)p) {
      b = tw_splits[i];
      tw_splits[i].base = 0;
      break;
    }
  pthread_mutex_unlock(&tw_splits_lock);
  if (b.base) /* where its pages were (run report) */
    tw_site_sample_pages(b.site, p, b.size);
  if (!b.base) { /* inside a split block, not its start: glibc aborts too */
    tw_warn("free(): invalid pointer (inside a split block)", "", "");
    abort();
  }
  if (TW_UNLIKELY(tw_vg))
    VALGRIND_FREELIKE_BLOCK(p, 0);
  if (TW_UNLIKELY(tw_vg == TW_VG_SIM))
    VALGRIND_FREELIKE_BLOCK((uint8_t *)p + b.head, 0);
  if (keep && b.tier == TW_TIER_PMEM && !tw_vg) {
    /* kept for the next object of its length and head: its DRAM head's
     * pages given back first (never on the DRAM node while it waits) */
    madvise(p, b.head, MADV_DONTNEED);
    pthread_mutex_lock(&tw_splits_lock);
    int kept = tw_split_keep(&b);
    pthread_mutex_unlock(&tw_splits_lock);
    if (kept)
      return b.head;
  }
  tw_pmap_mark(b.base, b.len, 0);
  tw_fork_note_unmap((uint8_t *)p + b.head, b.len - b.head);
  tw_sys_munmap(p, b.len);
  return b.head;
}
