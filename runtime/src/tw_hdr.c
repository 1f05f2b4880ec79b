/* SPDX-License-Identifier: MIT */
/*
 * Layer 3 (allocation paths). Census-mode blocks: every block carries a 16-byte tw_hdr (below) just
 * below the user pointer - its owner (glibc or a memkind tier), log2 of the
 * offset to the real block, its site and size, and for objects of at least
 * TIERWISE_OBJECTS_MIN bytes the allocation time - so that a free accounts
 * the site's live bytes and the object timeline exactly, with no lookup.
 */
#define _GNU_SOURCE
#include "tw_paths.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>


#define TW_PLAIN_TAG ((TW_MAGIC << 16) | (4u << 8)) /* DRAM, offset 16 */

static inline tw_hdr *tw_hdr_of(const void *p) { return (tw_hdr *)p - 1; }

static inline int tw_is_ours(const void *p) {
  return p && ((uintptr_t)p & 15) == 0 && (tw_hdr_of(p)->tag >> 16) == TW_MAGIC;
}

/* Allocate from \p tier with room for the header (and a time stamp when
 * \p timed); returns the user pointer with the header filled in. */
static void *tw_block(int tier, size_t size, size_t align, int timed,
                      uint32_t site, int zero) {
  size_t off = timed ? 32 : 16;
  if (align > off)
    off = align; /* a power of two: base + off stays aligned */
  if (size > SIZE_MAX - off - 64) {
    errno = ENOMEM;
    return NULL;
  }
  size_t base_align = align > 16 ? align : 16;
  void *base = tier != TW_TIER_DRAM ? tw_tier_alloc(tier, size + off,
                                                     base_align, 0)
               : base_align > 16 ? __libc_memalign(base_align, size + off)
               : zero            ? __libc_calloc(1, size + off)
                                 : __libc_malloc(size + off);
  if (!base)
    return NULL;
  if (zero && (tier != TW_TIER_DRAM || base_align > 16))
    memset((char *)base + off, 0, size);
  char *p = (char *)base + off;
  tw_hdr *h = tw_hdr_of(p);
  h->tag = (TW_MAGIC << 16) | ((uint32_t)__builtin_ctzl(off) << 8) |
           (timed ? TW_HDR_TIME : 0) | (uint32_t)tier;
  h->site = site;
  h->size = size;
  if (timed)
    ((uint64_t *)h)[-1] = tw_now_ns();
  return p;
}

static void tw_release(void *p, tw_hdr *h) {
  int tier = TW_HDR_TIER(h->tag);
  void *base = (char *)p - ((size_t)1 << TW_HDR_LOG2OFF(h->tag));
  h->tag = 0;
  if (tier == TW_TIER_DRAM)
    __libc_free(base);
  else
    tw_tier_free(tier, base);
}

static void tw_count(tw_site *s, size_t size) {
  tw_site_served(s, size, TW_TIER_DRAM, 0);
  tw_site_live_add(s, size);
}

/* A census allocation at \p site (tw_in_core held). */
static void *tw_census(uint32_t site, size_t size, size_t align, int zero) {
  if (site == TW_SITE_NONE)
    return tw_block(TW_TIER_DRAM, size, align, 0, site, zero);
  int timed = size >= tw_cfg.objects_min;
  void *p = tw_block(TW_TIER_DRAM, size, align, timed, site, zero);
  if (!p)
    return NULL;
  tw_count(tw_site_get(site), size);
  if (timed) {
    tw_census_live(p);
    tw_sample_live(p, size, site);
  }
  return p;
}

void *tw_hb_alloc(size_t size, size_t align, int zero) {
  if (TW_UNLIKELY(tw_in_core) || tw_mode_now != TW_MODE_CENSUS)
    return tw_block(TW_TIER_DRAM, size, align, 0, TW_SITE_NONE, zero);
  tw_in_core++;
  void *p = tw_census(size >= tw_cfg.site_min ? tw_site_here() : TW_SITE_NONE,
                      size, align, zero);
  tw_in_core--;
  return p;
}

/* tierwise.h under the census: the tier is honoured, not counted. */
void *tw_hb_alloc_tier(int tier, size_t size, size_t align, int zero) {
  void *p = tw_block(tier, size, align, 0, TW_SITE_NONE, zero);
  if (!p && tier != TW_TIER_DRAM)
    p = tw_block(TW_TIER_DRAM, size, align, 0, TW_SITE_NONE, zero);
  return p;
}

/* Account the end of a block's life. */
static void tw_forget(void *p, tw_hdr *h) {
  if (h->site == TW_SITE_NONE || tw_in_core || tw_mode_now != TW_MODE_CENSUS)
    return;
  tw_in_core++;
  tw_site *s = tw_site_get(h->site);
  __atomic_fetch_sub(&s->live, (int64_t)h->size, __ATOMIC_RELAXED);
  if (h->tag & TW_HDR_TIME) {
    tw_census_dead(p);
    tw_sample_dead(p);
    tw_census_object(h->site, h->size, ((uint64_t *)h)[-1], tw_now_ns());
  }
  tw_in_core--;
}

void tw_hb_free(void *p) {
  if (TW_UNLIKELY(!tw_is_ours(p))) { /* from before we were loaded */
    __libc_free(p);
    return;
  }
  tw_hdr *h = tw_hdr_of(p);
  tw_forget(p, h);
  tw_release(p, h);
}

size_t tw_hb_usable(void *p) { return tw_is_ours(p) ? tw_hdr_of(p)->size : 0; }

int tw_hb_tier_of(const void *p) {
  return tw_is_ours(p) ? (int)TW_HDR_TIER(tw_hdr_of(p)->tag) : -1;
}

void *tw_hb_realloc(void *p, size_t size) {
  if (!tw_is_ours(p))
    return __libc_realloc(p, size);
  tw_hdr *h = tw_hdr_of(p);
  int track = !tw_in_core && tw_mode_now == TW_MODE_CENSUS;
  uint32_t site = TW_SITE_NONE;
  if (track) {
    tw_in_core++;
    if (size >= tw_cfg.site_min) /* realloc: an allocation at its own site */
      site = tw_site_here();
    tw_in_core--;
  }
  int stay = h->tag == TW_PLAIN_TAG && size < tw_cfg.objects_min;
  if (stay) { /* a plain DRAM block that stays untimed grows in place */
    tw_forget(p, h);
    char *base = __libc_realloc((char *)p - 16, size + 16);
    if (!base) {
      if (h->site != TW_SITE_NONE && track) /* intact: account it again */
        __atomic_fetch_add(&tw_site_get(h->site)->live, (int64_t)h->size,
                           __ATOMIC_RELAXED);
      return NULL;
    }
    h = tw_hdr_of(base + 16);
    h->site = track ? site : TW_SITE_NONE;
    h->size = size;
    if (track && site != TW_SITE_NONE) {
      tw_in_core++;
      tw_count(tw_site_get(site), size);
      tw_in_core--;
    }
    return base + 16;
  }
  tw_in_core++;
  int tier = TW_HDR_TIER(h->tag);
  void *q =
      track ? tw_census(site, size, 0, 0) : tw_hb_alloc_tier(tier, size, 0, 0);
  tw_in_core--;
  if (!q)
    return NULL;
  memcpy(q, p, h->size < size ? h->size : size);
  tw_hb_free(p);
  return q;
}
