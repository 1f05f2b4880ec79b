/* SPDX-License-Identifier: MIT */
/*
 * Layer 3 (allocation paths): anonymous mmap/munmap as allocations
 * (programs map their big arrays directly). The census counts and times
 * them like malloc'd objects; placement serves a mapping whose site is
 * placed in another tier from that tier (zeroed as anonymous memory is; a
 * site with a DRAM head: a split mapping, tw_split.c) and releases it on
 * munmap of its start; a DRAM mapping counts against TIERWISE_DRAM_LIMIT
 * (over it: the overflow tier, as fallback) and, on a NUMA slow tier, in
 * the DRAM node's room as malloc'ed blocks do (tw_room.c: ranked, tracked,
 * promotions after its munmap). Mappings are remembered in
 * tw_maps.c. mremap (tw_pl_remap): a kernel mapping is remapped by the
 * kernel and its record follows; a tier's (a block inside the tier's
 * arena or file, which the kernel must not move: the arena broke, and a
 * grown pmem mapping read past its file's end, SIGBUS) is kept whole when
 * it shrinks and copied into a new allocation when it grows. Partial
 * munmap and mprotect of a tier-served mapping are not supported (README).
 */
#define _GNU_SOURCE
#include "tw_paths.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void *tw_pl_map(void *addr, size_t len, int prot, int flags, int fd,
                off_t off) {
  int mode = tw_mode_now;
  void *p = NULL;
  if (flags & MAP_HUGETLB) {
    /* Huge pages come from the kernel or not at all (no tier has them); a
     * request it refuses is no allocation (frameworks try MAP_HUGETLB first
     * and fall back): no site, no census row. */
    p = tw_sys_mmap(addr, len, prot, flags, fd, off);
    if (p == MAP_FAILED)
      return p;
  }
  tw_in_core++;
  uint32_t site = mode == TW_MODE_PLACE ? tw_policy_site_here()
                  : len >= tw_cfg.site_min ? tw_site_here()
                                           : TW_SITE_NONE;
  tw_site *s = site == TW_SITE_NONE ? NULL : tw_site_get(site);
  int tier = s && mode == TW_MODE_PLACE && !p ? s->tier : TW_TIER_DRAM;
  int fell = 0;
  uint64_t head = 0; /* a split mapping's DRAM part (tw_split.c) */
  uint64_t want = tier != TW_TIER_DRAM ? tw_site_head(s, len) : 0;
  tw_dram_ticket t = {-1, 0, 0};
  if (want && len <= want)
    tier = TW_TIER_DRAM; /* wholly inside the site's DRAM head */
  else if (want && prot == (PROT_READ | PROT_WRITE)) {
    /* the head is DRAM: on the limit's account like a malloc'ed split
     * object's (tw_place.c), credited at munmap; no room: whole in tier */
    head = mode == TW_MODE_PLACE ? tw_dram_take_head(s, want, &t) : want;
    if (!head)
      fell = 1;
    else {
      if (head < want && s) /* (the part of its head that did not fit) */
        tw_site_fell_back(s, (size_t)(want - head));
      if (TW_UNLIKELY(tw_room_on) && mode == TW_MODE_PLACE)
        tw_room_before(s, head); /* the head's room on the DRAM node */
      if (!(p = tw_split_alloc(site, len, 0, &head, tier, 1))) {
        tw_dram_undo(&t);
        t = (tw_dram_ticket){-1, 0, 0};
        head = 0;
      } else if (mode == TW_MODE_PLACE) {
        tw_dram_keep(&t, p, head);
        if (TW_UNLIKELY(tw_room_on))
          tw_room_track(s, p, len, head, tier);
      }
    }
  }
  if (p && !head && s && mode == TW_MODE_PLACE)
    tw_dram_keep(&t, p, len); /* huge pages, held until munmap */
  else if (tier == TW_TIER_DRAM && mode == TW_MODE_PLACE && s &&
      prot == (PROT_READ | PROT_WRITE) && !tw_dram_take(s, len, &t) &&
      tw_dram_overflow_tier() >= 0) {
    tier = tw_dram_overflow_tier(); /* over the DRAM limit, as malloc */
    fell = 1;
  }
  if (!p && tier != TW_TIER_DRAM && prot == (PROT_READ | PROT_WRITE)) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    p = tw_tier_alloc(tier, (len + page - 1) & ~(page - 1), page, 0);
    if (p) {
      /* anonymous memory reads as zero: zero it, as this site's stores to
       * its tier (announced first, for the sim tool) */
      if (mode == TW_MODE_PLACE)
        tw_announce(p, len, tier);
      memset(p, 0, len);
    }
  }
  if (!p) {
    fell |= tier != TW_TIER_DRAM;
    tier = TW_TIER_DRAM;
    /* a placed site's DRAM mapping: its room on the DRAM node, as a
     * malloc'ed block's (tw_place.c) */
    int room = TW_UNLIKELY(tw_room_on) && s && mode == TW_MODE_PLACE &&
               prot == (PROT_READ | PROT_WRITE) && !addr;
    if (room)
      tw_room_before(s, len);
    p = tw_sys_mmap(addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED && s && mode == TW_MODE_PLACE)
      tw_dram_keep(&t, p, len); /* credited at munmap */
    else
      tw_dram_undo(&t);
    if (room && p != MAP_FAILED)
      tw_room_track(s, p, len, len, -1);
  }
  if (p != MAP_FAILED && s) {
    tw_site_served(s, len, tier, head);
    if (fell)
      __atomic_fetch_add(&s->fallback_bytes, len, __ATOMIC_RELAXED);
    tw_site_live_add(s, len);
    tw_map_put((uintptr_t)p, len, site, head ? TW_OWNER_SPLIT : tier);
    if (mode == TW_MODE_PLACE && tier == TW_TIER_DRAM)
      tw_announce(p, len, tier); /* slow-tier blocks: announced above */
    if (mode == TW_MODE_CENSUS && len >= tw_cfg.objects_min)
      tw_sample_live(p, len, site);
  }
  tw_in_core--;
  return p;
}

int tw_pl_unmap(void *addr, size_t len, int *rc) {
  tw_map m;
  if (!tw_map_take((uintptr_t)addr, &m))
    return 0;
  tw_in_core++;
  tw_site *s = tw_site_get(m.site);
  if (tw_mode_now == TW_MODE_PLACE &&
      m.owner != TW_OWNER_SPLIT) /* tw_split_free ends its blocks */
    tw_unannounce(addr, m.owner);
  __atomic_fetch_sub(&s->live, (int64_t)m.len, __ATOMIC_RELAXED);
  if (tw_mode_now == TW_MODE_CENSUS && m.len >= tw_cfg.objects_min) {
    tw_census_object(m.site, m.len, m.t0, tw_now_ns());
    tw_sample_dead(addr);
  }
  if (m.owner != TW_OWNER_SPLIT) /* where its pages were (run report) */
    tw_site_sample_pages(m.site, addr, m.len);
  tw_in_core--;
  *rc = 0;
  int tracked = TW_UNLIKELY(tw_room_on) && tw_room_forget(addr);
  if (m.owner == TW_OWNER_GLIBC) { /* the kernel's anonymous memory */
    if (tw_mode_now == TW_MODE_PLACE)
      tw_dram_give(addr, m.len);
    *rc = tw_sys_munmap(addr, len);
  } else if (m.owner == TW_OWNER_SPLIT) {
    tw_split_info b; /* credited before the address can be reused */
    if (tw_mode_now == TW_MODE_PLACE && tw_split_find(addr, &b) &&
        b.base == (uintptr_t)addr)
      tw_dram_give(addr, b.head);
    tw_split_free(addr, 0);
  }
  else
    tw_tier_free(m.owner, addr);
  if (tracked)
    tw_room_freed(); /* the DRAM node has more room: promotions */
  return 1;
}

int tw_pl_remap(void *old, size_t old_len, size_t new_len, int flags,
                void *to, void **out) {
  tw_map m;
  if (!tw_map_get((uintptr_t)old, &m))
    return 0; /* not one of them: the kernel's alone */
  if (m.owner == TW_OWNER_GLIBC) {
    if (TW_UNLIKELY(tw_room_on))
      tw_room_forget(old); /* (its pages move: the room lets it be) */
    void *q = tw_sys_mremap(old, old_len, new_len, flags, to);
    if (q != MAP_FAILED) {
      tw_map_move((uintptr_t)old, (uintptr_t)q, new_len);
      tw_site *s = tw_site_get(m.site); /* its live bytes: the new size */
      __atomic_fetch_sub(&s->live, (int64_t)m.len, __ATOMIC_RELAXED);
      tw_site_live_add(s, new_len);
      if (tw_mode_now == TW_MODE_PLACE) { /* the DRAM limit's account
                                              follows, as at mmap */
        tw_in_core++;
        tw_dram_give(old, m.len);
        tw_dram_ticket t;
        if (tw_dram_take(s, new_len, &t))
          tw_dram_keep(&t, q, new_len);
        tw_in_core--;
      }
    }
    *out = q;
    return 1;
  }
  *out = MAP_FAILED;
  if (new_len <= old_len && !(flags & MREMAP_FIXED)) {
    *out = old; /* kept whole: released whole at munmap of its start */
    return 1;
  }
  if (!(flags & MREMAP_MAYMOVE) || (flags & MREMAP_DONTUNMAP)) {
    errno = (flags & MREMAP_DONTUNMAP) ? EINVAL : ENOMEM; /* (as the
      kernel says of a mapping it cannot grow in place) */
    return 1;
  }
  size_t keep = old_len < new_len ? old_len : new_len;
  keep = keep < m.len ? keep : m.len;
  void *q = MAP_FAILED;
  if (flags & MREMAP_FIXED) /* (at the program's address: the kernel's) */
    q = tw_sys_mmap(to, new_len, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  else if (m.owner != TW_OWNER_SPLIT) { /* the same tier, the same site */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    tw_in_core++;
    void *t = tw_tier_alloc(m.owner, (new_len + page - 1) & ~(page - 1),
                            page, 0);
    if (t) {
      tw_site *s = tw_site_get(m.site);
      if (tw_mode_now == TW_MODE_PLACE)
        tw_announce(t, new_len, m.owner);
      memset((char *)t + keep, 0, new_len - keep);
      tw_site_served(s, new_len, m.owner, 0);
      tw_site_live_add(s, new_len);
      tw_map_put((uintptr_t)t, new_len, m.site, m.owner);
      q = t;
    }
    tw_in_core--;
  }
  if (q == MAP_FAILED) /* a split one (its head and tail made anew for the
                          mremap's site), or the tier was full */
    q = tw_pl_map(NULL, new_len, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (q == MAP_FAILED) {
    errno = ENOMEM;
    return 1;
  }
  memcpy(q, old, keep);
  int rc;
  tw_pl_unmap(old, m.len, &rc);
  *out = q;
  return 1;
}
