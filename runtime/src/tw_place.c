/* SPDX-License-Identifier: MIT */
/*
 * Layer 3 (allocation paths). Placement and pass-through allocation paths,
 * without a block header: DRAM blocks are glibc's own (same layout and
 * footprint as without tierwise), other tiers' blocks their backend's
 * (tw_tiers.c). Ownership comes from the page-owner map (tw_base.h): pages
 * a backend mapped for a tier are marked with it, a split object's with
 * TW_OWNER_SPLIT, so free/realloc/malloc_usable_size find the owner with one
 * or two loads and never call memkind_detect_kind (which crashes on glibc
 * pointers).
 */
#define _GNU_SOURCE
#include "tw_paths.h"

#include <errno.h>
#include <string.h>

static void *tw_dram(size_t size, size_t align, int zero) {
  if (align > 16) {
    void *p = __libc_memalign(align, size);
    if (p && zero)
      memset(p, 0, size);
    return p;
  }
  return zero ? __libc_calloc(1, size) : __libc_malloc(size);
}

/* A block from \p tier; zeroed when \p zero, except that a slow-tier block
 * a Valgrind tool tracks is zeroed by tw_announce_zero once the tool knows
 * it (the sim tool: the stores are the site's traffic to that tier, not
 * anonymous memory's; memcheck: its contents are defined). */
static void *tw_tier_block(int tier, size_t size, size_t align, int zero) {
  if (tier == TW_TIER_DRAM)
    return tw_dram(size, align, zero);
  return tw_tier_alloc(tier, size, align, zero && !tw_vg_tracks(tier));
}

/* tw_announce, then the zeroing tw_tier_block left to do. */
static void tw_announce_zero(void *p, size_t size, int tier, int zero) {
  tw_announce(p, size, tier);
  if (zero && tier != TW_TIER_DRAM && tw_vg_tracks(tier))
    memset(p, 0, size);
}

/* A DRAM head of \p dram_bytes (placement dram_bytes of site \p s, or the
 * argument of tierwise.h's tw_malloc_head) and a slow tier: objects up to
 * the head are DRAM's; a larger one becomes a split block (tw_split.c)
 * unless the split cannot be made (whole, in \p tier). Under a DRAM limit
 * without room for the whole head, a head of 1 MiB or more is the part
 * there is room for if that is at least half of it, in whole pages, the
 * rest counted as fallback; otherwise the object goes whole to the slow
 * tier (as every one did before: two processes sharing a node each lost a
 * 7.8 MB head with 6.8 MB of room left). NULL: no split block, *tier
 * says where the whole object goes. \p s (NULL: none) counts the head as
 * DRAM bytes and the tail as \p tier's. */
static void *tw_pl_split(tw_site *s, uint64_t dram_bytes, size_t size,
                         size_t align, int zero, int *tier, int *fell) {
  if (size <= dram_bytes) {
    *tier = TW_TIER_DRAM;
    return NULL;
  }
  /* (all of it, or the part that fits: tw_dram_take_head's rule) */
  tw_dram_ticket t;
  uint64_t head = tw_dram_take_head(s, dram_bytes, &t);
  if (!head) {
    *fell = 1; /* its DRAM part did not fit */
    return NULL;
  }
  if (head < dram_bytes && s) /* (the part of its head that did not) */
    tw_site_fell_back(s, (size_t)(dram_bytes - head));
  if (TW_UNLIKELY(tw_room_on))
    tw_room_before(s, head); /* the head's room on the DRAM node */
  void *p = tw_split_alloc(s ? (uint32_t)(s - tw_site_get(0)) : TW_SITE_NONE,
                           size, align, &head, *tier, zero);
  if (!p) {
    tw_dram_undo(&t);
    return NULL;
  }
  tw_dram_keep(&t, p, head);
  if (TW_UNLIKELY(tw_cfg.numa_migrate))
    tw_room_split_made(p, head, size, *tier);
  if (TW_UNLIKELY(tw_room_on))
    tw_room_track(s, p, size, head, *tier);
  if (s)
    tw_site_served(s, size, *tier, head);
  return p;
}

/* Serve \p size for \p s (NULL: no site) from \p tier, the first
 * \p dram_bytes of it from DRAM (0: none): the DRAM limit and fallbacks. */
static void *tw_pl_place_head(tw_site *s, uint64_t dram_bytes, size_t size,
                              size_t align, int zero, int tier) {
  int fell = 0;
  if (dram_bytes && tier != TW_TIER_DRAM) {
    void *p = tw_pl_split(s, dram_bytes, size, align, zero, &tier, &fell);
    if (p)
      return p;
  }
  tw_dram_ticket t = {-1, 0, 0};
  if (tier == TW_TIER_DRAM && !tw_dram_take(s, size, &t) &&
      tw_dram_overflow_tier() >= 0) {
    tier = tw_dram_overflow_tier(); /* over the DRAM limit (tw_dram_limit.c) */
    fell = 1;
  }
  if (TW_UNLIKELY(tw_room_on) && tier == TW_TIER_DRAM)
    tw_room_before(s, size); /* its room on the DRAM node */
  void *p = tw_tier_block(tier, size, align, zero);
  if (!p && tier != TW_TIER_DRAM) {
    tier = TW_TIER_DRAM;
    fell = 1;
    p = tw_dram(size, align, zero);
  }
  if (!p) {
    tw_dram_undo(&t);
    return NULL;
  }
  if (tier == TW_TIER_DRAM && tw_cfg.dram_limit)
    tw_dram_keep(&t, p, tw_glibc_usable(p));
  if (TW_UNLIKELY(tw_room_on) && tier == TW_TIER_DRAM)
    tw_room_track(s, p, size, size, -1);
  if (s && size >= TW_SAMPLE_MIN && tw_cfg.report_path) {
    /* the report samples where its pages are, at free or exit */
    uint32_t site = (uint32_t)(s - tw_site_get(0));
    if (tier != TW_TIER_DRAM)
      tw_obj_put((uintptr_t)p, size, site, tier);
    else
      tw_dram_sampled_put(p, size, site);
  }
  if (s) {
    tw_site_served(s, size, tier, 0);
    if (fell)
      tw_site_fell_back(s, size);
  }
  tw_announce_zero(p, size, tier, zero);
  return p;
}

/* Serve \p size for \p s from \p tier, with the site's DRAM head. */
static void *tw_pl_place(tw_site *s, size_t size, size_t align, int zero, int tier) {
  return tw_pl_place_head(s, tw_site_head(s, size), size, align, zero, tier);
}

/* A block of \p size for site \p s, found on a fast-path miss (tw_in_core
 * held). A small DRAM block with no DRAM limit, no room to keep and nothing
 * to sample or announce gets what tw_pl_place_head would do for it without
 * it: most of an Open MPI start-up's ~12,000 fast-path misses. */
static inline __attribute__((always_inline)) void *
tw_pl_serve(tw_site *s, size_t size, size_t align, int zero) {
  if (s->tier == TW_TIER_DRAM && !tw_cfg.dram_limit && !tw_room_on &&
      size < TW_SAMPLE_MIN && !tw_site_has_head(s) &&
      !tw_vg_tracks(TW_TIER_DRAM)) {
    void *p = tw_dram(size, align, zero);
    if (p)
      tw_site_served(s, size, TW_TIER_DRAM, 0);
    return p;
  }
  return tw_pl_place(s, size, align, zero, s->tier);
}

/* (inline in tw_alloc, as it was with one caller: tw_pl_alloc_miss's
 * call made it a call of its own, +0.2M instructions in an Open MPI
 * start-up without a placement, where every allocation comes here) */
__attribute__((always_inline)) inline void *
tw_pl_alloc(size_t size, size_t align, int zero, void *ra, void *sp) {
  if (TW_UNLIKELY(tw_in_core) || tw_mode_now != TW_MODE_PLACE)
    return tw_dram(size, align, zero);
  tw_fast_entry *hit = NULL;
  void *p;
  tw_in_core++;
  uint32_t site = tw_fast_site(size, ra, sp, &hit);
  if (hit && !tw_cfg.dram_limit && !tw_site_has_head(tw_site_get(hit->site)) &&
      (p = tw_tier_block(hit->tier, size, align, zero))) {
    hit->pend_allocs++; /* cache hit: no atomic operation */
    hit->pend_bytes += size;
    tw_announce_zero(p, size, hit->tier, zero);
  } else if (site == TW_SITE_NONE)
    p = tw_dram(size, align, zero);
  else {
    if (hit)
      tw_fast_count_hit();
    p = tw_pl_serve(tw_site_get(site), size, align, zero);
  }
  tw_in_core--;
  return p;
}

void *tw_pl_alloc_miss(size_t size, int zero, void *ra, void *sp) {
  void *p;
  if (size >= TW_SAMPLE_MIN || TW_UNLIKELY(tw_in_core) ||
      TW_UNLIKELY(tw_room_on) || tw_vg_tracks(TW_TIER_DRAM))
    p = tw_pl_alloc(size, 0, zero, ra, sp);
  else {
    tw_in_core++;
    uint32_t site = tw_fast_memo(ra, sp);
    if (site == TW_SITE_NONE) {
      tw_in_core--;
      p = tw_pl_alloc(size, 0, zero, ra, sp);
    } else {
      /* what tw_pl_alloc does with a site tw_fast_site found on a miss */
      p = tw_pl_serve(tw_site_get(site), size, 0, zero);
      tw_in_core--;
    }
  }
  if (TW_UNLIKELY(!p))
    errno = ENOMEM;
  return p;
}

/* An inline cache hit (tw_preload.c) that is not a plain DRAM block: its
 * counts are already in the entry; undone if the tier cannot serve it. */
void *tw_fast_serve(tw_fast_entry *e, size_t size, int zero) {
  tw_in_core++;
  void *p = tw_site_has_head(tw_site_get(e->site))
                ? NULL /* a site with a DRAM head: tw_pl_place decides */
                : tw_tier_block(e->tier, size, 0, zero);
  if (p)
    tw_announce_zero(p, size, e->tier, zero);
  else {
    e->pend_allocs--;
    e->pend_bytes -= size;
    tw_fast_count_hit();
    p = tw_pl_place(tw_site_get(e->site), size, 0, zero, e->tier);
  }
  tw_in_core--;
  return p;
}

void *tw_pl_alloc_tier(int tier, uint64_t dram_bytes, size_t size, size_t align,
                       int zero) {
  uint32_t site = TW_SITE_NONE;
  tw_in_core++;
  if (tw_in_core == 1 && tw_cfg.mode == TW_MODE_PLACE)
    site = tw_policy_site_here();
  tw_site *s = site == TW_SITE_NONE ? NULL : tw_site_get(site);
  if (s && !s->api)
    __atomic_store_n(&s->api, 1, __ATOMIC_RELAXED);
  if (!dram_bytes && s)
    dram_bytes = tw_site_head(s, size); /* a placement's head for the site */
  void *p = tw_pl_place_head(s, dram_bytes, size, align, zero, tier);
  tw_in_core--;
  return p;
}

/* A slow-tier block \p p is released or moves: where its pages were, for
 * the run report (large blocks only: tw_obj_put above). */
static void tw_pl_forget(void *p, int owner) {
  tw_map o;
  if (TW_UNLIKELY(tw_cfg.report_path) &&
      tw_tier_usable(owner, p) >= TW_SAMPLE_MIN && tw_obj_take((uintptr_t)p, &o))
    tw_site_sample_pages(o.site, p, o.len);
}

/* A slow-tier block \p p resized in place or moved to \q: the report's
 * record of a large one follows it (its pages so far are sampled first). */
static void tw_pl_resized(void *p, void *q, size_t size, tw_site *s,
                          int tier) {
  tw_map o;
  uint32_t site = s ? (uint32_t)(s - tw_site_get(0)) : TW_SITE_NONE;
  if (tw_obj_take((uintptr_t)p, &o)) {
    tw_site_sample_pages(o.site, q, o.len < size ? o.len : size);
    if (site == TW_SITE_NONE)
      site = o.site;
  }
  if (size >= TW_SAMPLE_MIN && site != TW_SITE_NONE)
    tw_obj_put((uintptr_t)q, size, site, tier);
}

/* A glibc block large enough for tw_room.c to track (tw_room_track_min;
 * one load of its chunk header, so that small frees skip the table). */
static int tw_pl_room_big(void *p) {
  return p && tw_glibc_usable(p) >=
                  __atomic_load_n(&tw_room_track_min, __ATOMIC_ACQUIRE);
}

/* free() of a block of \p owner (not glibc's). */
static void tw_owner_free(int owner, void *p) {
  if (owner == TW_OWNER_SPLIT) {
    if (TW_UNLIKELY(tw_cfg.maps_copy))
      tw_maps_snapshot(); /* debug: where the block was, for the tests */
    int tracked = TW_UNLIKELY(tw_room_on) && tw_room_forget(p);
    tw_split_info b;
    /* credited while the mapping is still ours: once unmapped, another
     * thread's split object may be charged at the same address */
    if (TW_UNLIKELY(tw_cfg.dram_limit) && tw_split_find(p, &b) &&
        b.base == (uintptr_t)p)
      tw_dram_give(p, b.head);
    tw_split_free(p, 1);
    if (tracked)
      tw_room_freed(); /* the DRAM node has more room: promotions */
    return;
  }
  tw_unannounce(p, owner);
  tw_pl_forget(p, owner);
  if (TW_UNLIKELY(tw_cfg.maps_copy) && tw_tier_usable(owner, p) >= (64u << 10))
    tw_maps_snapshot(); /* debug: where the block was, for the tests */
  tw_tier_free(owner, p);
}

void tw_pl_free(void *p) {
  int owner = tw_page_owner(p);
  if (TW_UNLIKELY(owner == TW_OWNER_SAMPLED)) { /* a glibc block */
    tw_dram_sampled_forget(p);
    owner = TW_OWNER_GLIBC;
  }
  if (TW_LIKELY(owner == TW_OWNER_GLIBC)) {
    tw_unannounce(p, TW_TIER_DRAM);
    if (TW_UNLIKELY(tw_cfg.dram_limit))
      tw_dram_give(p, tw_glibc_usable(p));
    int tracked = TW_UNLIKELY(tw_room_on) && tw_pl_room_big(p) &&
                  tw_room_forget(p);
    __libc_free(p);
    if (tracked)
      tw_room_freed(); /* the DRAM node has more room: promotions */
    return;
  }
  tw_owner_free(owner, p);
}

size_t tw_pl_usable(void *p) {
  int owner = tw_page_owner(p);
  tw_split_info b;
  if (TW_UNLIKELY(owner == TW_OWNER_SPLIT))
    return tw_split_find(p, &b) ? b.len - ((uintptr_t)p - b.base) : 0;
  return owner == TW_OWNER_GLIBC || owner == TW_OWNER_SAMPLED
             ? tw_glibc_usable(p)
                                 : tw_tier_usable(owner, p);
}

int tw_pl_tier_of(const void *p) {
  int owner = tw_page_owner(p);
  tw_split_info b;
  if (owner == TW_OWNER_SPLIT) /* the tier of the page p is in */
    return !tw_split_find(p, &b)                  ? -1
           : (uintptr_t)p - b.base < b.head ? TW_TIER_DRAM
                                              : b.tier;
  return owner == TW_OWNER_SAMPLED ? TW_TIER_DRAM
                                   : owner; /* glibc's: TW_TIER_DRAM */
}

void *tw_pl_realloc(void *p, size_t size, void *ra, void *sp) {
  /* the owner is the block's tier, except for a split block's */
  int from = tw_page_owner(p), tier;
  uint32_t site = TW_SITE_NONE, sampled = TW_SITE_NONE;
  if (TW_UNLIKELY(from == TW_OWNER_SAMPLED)) { /* a glibc block: its pages */
    sampled = tw_dram_sampled_forget(p);     /* so far, sampled again */
    from = TW_OWNER_GLIBC;                   /* below if it stays DRAM */
  }
  tier = from;
  tw_fast_entry *hit = NULL;
  if (!tw_in_core && tw_mode_now == TW_MODE_PLACE) {
    tw_in_core++;
    site = tw_fast_site(size, ra, sp, &hit);
    if (site != TW_SITE_NONE && tw_site_get(site)->placed >= 0)
      tier = tw_site_get(site)->tier; /* a placed site moves the block */
    tw_in_core--;
  }
  tw_site *s = site == TW_SITE_NONE ? NULL : tw_site_get(site);
  uint64_t head = tw_site_head(s, size);
  tw_split_info b;
  if (TW_UNLIKELY(from == TW_OWNER_SPLIT) &&
      (!s || s->placed < 0 || tier == from) && tw_split_find(p, &b)) {
    /* An unplaced caller: the block's own site, tier and head - its
     * placement's dram_bytes, or for a tw_malloc_head block (perhaps of no
     * site) the head it got, page-rounded. */
    s = b.site == TW_SITE_NONE ? NULL : tw_site_get(b.site);
    tier = b.tier;
    head = s && tw_site_has_head(s) ? tw_site_head(s, size) : b.head;
  }
  /* A slow tier with a DRAM head: a block the head covers is DRAM's, a
   * larger one is split (tw_pl_split) - never resized within the slow tier,
   * which would lose the head of a block grown from below it (igraph's
   * vectors: calloc'd small in the default tier, then realloc'd). */
  int split = 0;
  if (tier != TW_TIER_DRAM && head) {
    if (head >= size)
      tier = TW_TIER_DRAM;
    else
      split = 1;
  }
  void *q = NULL;
  /* Under another Valgrind tool a memkind block always moves: memkind's
   * realloc would copy into memory the tool saw freed (FREELIKE: no access),
   * and re-announcing a block kept in place marks its contents undefined. */
  if (!split && tier == from &&
      (tier != TW_TIER_DRAM ||
       (!tw_cfg.dram_limit &&
        !(tw_room_on && tw_pl_room_big(p) && tw_room_tracked(p)))) &&
      (tier == TW_TIER_DRAM || tw_vg != TW_VG_OTHER) &&
      ((q = tier == TW_TIER_DRAM ? __libc_realloc(p, size)
                                 : tw_tier_realloc(tier, p, size)) ||
       tier == TW_TIER_DRAM)) { /* a full tier: moved below (DRAM fallback) */
    if (!q) {
      if (hit)
        tw_fast_count_hit();
      return NULL;
    }
    tw_unannounce(p, tier);
    if (tier != TW_TIER_DRAM && TW_UNLIKELY(tw_cfg.report_path))
      tw_pl_resized(p, q, size, s, tier);
    if (tier == TW_TIER_DRAM && TW_UNLIKELY(tw_cfg.report_path) &&
        size >= TW_SAMPLE_MIN && (s || sampled != TW_SITE_NONE))
      tw_dram_sampled_put(q, size, s ? (uint32_t)(s - tw_site_get(0))
                                     : sampled);
    if (hit && hit->tier == tier) { /* cache hit: no atomic operation */
      hit->pend_allocs++;
      hit->pend_bytes += size;
    } else if (s) {
      if (hit)
        tw_fast_count_hit();
      tw_site_served(s, size, tier, 0);
    }
    tw_announce(q, size, tier);
    return q;
  }
  if (hit)
    tw_fast_count_hit();
  /* Moves to another tier (or DRAM under a limit): allocate, copy, free. */
  size_t old = tw_pl_usable(p);
  tw_in_core++;
  q = tw_pl_place_head(s, head, size, 0, 0, tier);
  tw_in_core--;
  if (!q)
    return NULL;
  memcpy(q, p, old < size ? old : size);
  tw_pl_free(p);
  return q;
}
