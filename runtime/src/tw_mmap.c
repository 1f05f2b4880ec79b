/* SPDX-License-Identifier: MIT */
/*
 * Anonymous mmap/munmap as allocations (programs map their big arrays
 * directly): the census counts and times them like malloc'd objects;
 * placement serves a mapping whose site is placed in another tier from that
 * tier (memkind, zeroed as anonymous memory is; a site with a DRAM head:
 * a split mapping, tw_split.c) and releases it on munmap of its start. Mappings are remembered in a small table keyed by address.
 * Partial munmap, mremap and mprotect of a tier-served mapping are not
 * supported (README); MAP_FIXED and file mappings are passed through.
 * Mappings made while a memkind call runs for a tier (tw_in_tier) mark their
 * pages in the page-tier map, which tells the header-less paths
 * (tw_place.c) who owns a pointer.
 */
#define _GNU_SOURCE
#include "tw_clientreq.h"
#include "tw_core.h"
#include "tw_dram_limit.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <valgrind/helgrind.h>

#define TW_MAPS_SLOTS 4096

typedef struct tw_map {
  uintptr_t addr; /* 0 empty, 1 deleted */
  size_t len;
  uint32_t site;
  int tier;
  uint64_t t0;
} tw_map;

static tw_map tw_maps[TW_MAPS_SLOTS];
uint8_t *tw_pmap[TW_PMAP_TOP];
__thread int tw_in_tier __attribute__((tls_model("initial-exec")));
static pthread_mutex_t tw_pmap_lock = PTHREAD_MUTEX_INITIALIZER;

void tw_pmap_mark(uintptr_t a, size_t len, int tier) {
  uintptr_t end = a + len;
  for (a &= ~(uintptr_t)4095; a < end; a += 4096) {
    uint8_t **top = &tw_pmap[(a >> 30) & (TW_PMAP_TOP - 1)];
    if (!*top) {
      if (!tier) {
        a = ((a >> 30) + 1) << 30; /* nothing marked in this GiB */
        a -= 4096;
        continue;
      }
      pthread_mutex_lock(&tw_pmap_lock);
      if (!*top) {
        void *m =
            tw_sys_mmap(NULL, 1u << 18, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m != MAP_FAILED && TW_UNLIKELY(tw_vg == TW_VG_OTHER))
          /* Raced on by design: a page's mark is written before its
           * address is handed out and cleared before it is unmapped; the
           * order between threads is the kernel's reuse of addresses after
           * munmap, which helgrind does not see. */
          VALGRIND_HG_DISABLE_CHECKING(m, 1u << 18);
        if (m != MAP_FAILED)
          __atomic_store_n(top, (uint8_t *)m, __ATOMIC_RELEASE);
      }
      pthread_mutex_unlock(&tw_pmap_lock);
      if (!*top)
        return;
    }
    (*top)[(a >> 12) & ((1u << 18) - 1)] = (uint8_t)tier;
  }
}
static pthread_mutex_t tw_maps_lock = PTHREAD_MUTEX_INITIALIZER;

void *tw_sys_mmap(void *addr, size_t len, int prot, int flags, int fd,
                  off_t off) {
  return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

int tw_sys_munmap(void *addr, size_t len) {
  return (int)syscall(SYS_munmap, addr, len);
}

static unsigned tw_map_slot(uintptr_t a) {
  return (unsigned)((a >> 12) * 0x9e3779b1u) & (TW_MAPS_SLOTS - 1);
}

static void tw_map_put(uintptr_t a, size_t len, uint32_t site, int tier) {
  pthread_mutex_lock(&tw_maps_lock);
  unsigned i = tw_map_slot(a);
  for (unsigned n = 0; n < TW_MAPS_SLOTS; n++, i = (i + 1) % TW_MAPS_SLOTS)
    if (tw_maps[i].addr <= 1) {
      tw_maps[i] = (tw_map){a, len, site, tier, tw_now_ns()};
      break;
    }
  pthread_mutex_unlock(&tw_maps_lock);
}

static int tw_map_take(uintptr_t a, tw_map *out) {
  int found = 0;
  pthread_mutex_lock(&tw_maps_lock);
  unsigned i = tw_map_slot(a);
  for (unsigned n = 0; n < TW_MAPS_SLOTS && tw_maps[i].addr;
       n++, i = (i + 1) % TW_MAPS_SLOTS)
    if (tw_maps[i].addr == a) {
      *out = tw_maps[i];
      tw_maps[i].addr = 1;
      found = 1;
      break;
    }
  pthread_mutex_unlock(&tw_maps_lock);
  return found;
}

__attribute__((visibility("default"))) void *
mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  int mode = tw_mode_now;
  if (tw_in_tier) { /* memkind mapping memory for a tier */
    void *p = tw_sys_mmap(addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED) {
      tw_pmap_mark((uintptr_t)p, len, tw_in_tier);
      tw_fork_note_map(p, len, prot, flags, fd);
    }
    return p;
  }
  if (tw_in_core || (mode != TW_MODE_CENSUS && mode != TW_MODE_PLACE) ||
      !(flags & MAP_ANONYMOUS) || (flags & (MAP_FIXED | MAP_SHARED)) ||
      len == 0)
    return tw_sys_mmap(addr, len, prot, flags, fd, off);
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
  uint32_t site = tw_site_here();
  tw_site *s = site == TW_SITE_NONE ? NULL : tw_site_get(site);
  int tier = s && mode == TW_MODE_PLACE && !p ? s->tier : TW_T_DRAM, fell = 0;
  uint64_t head = 0; /* a split mapping's DRAM part (tw_split.c) */
  uint64_t want = tier != TW_T_DRAM ? tw_site_head(s, len) : 0;
  tw_dram_ticket t = {-1, 0, 0};
  if (want && len <= want)
    tier = TW_T_DRAM; /* wholly inside the site's DRAM head */
  else if (want && prot == (PROT_READ | PROT_WRITE)) {
    head = want;
    if (!(p = tw_split_alloc(site, len, 0, &head, tier)))
      head = 0;
  }
  if (p && s && mode == TW_MODE_PLACE)
    tw_dram_keep(&t, p, len); /* huge pages, held until munmap */
  else if (tier == TW_T_DRAM && mode == TW_MODE_PLACE && s &&
      prot == (PROT_READ | PROT_WRITE) && !tw_dram_take(s, len, &t) &&
      tw_tier_available(TW_T_PMEM)) {
    tier = TW_T_PMEM; /* over the DRAM limit: the slow tier, as malloc */
    fell = 1;
  }
  if (!p && tier != TW_T_DRAM && prot == (PROT_READ | PROT_WRITE)) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    p = tw_tier_malloc(tier, (len + page - 1) & ~(page - 1), page);
    if (p) {
      /* anonymous memory reads as zero: zero it, as this site's stores to
       * its tier (announced first, for the sim tool) */
      if (mode == TW_MODE_PLACE)
        tw_announce(p, len, tier);
      memset(p, 0, len);
    }
  }
  if (!p) {
    fell |= tier != TW_T_DRAM;
    tier = TW_T_DRAM;
    p = tw_sys_mmap(addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED && s && mode == TW_MODE_PLACE)
      tw_dram_keep(&t, p, len); /* credited at munmap */
    else
      tw_dram_undo(&t);
  }
  if (p != MAP_FAILED && s) {
    tw_site_served(s, len, tier, head);
    if (fell)
      __atomic_fetch_add(&s->fallback_bytes, len, __ATOMIC_RELAXED);
    tw_site_live_add(s, len);
    tw_map_put((uintptr_t)p, len, site, head ? TW_PAGE_SPLIT : tier);
    if (mode == TW_MODE_PLACE && tier == TW_T_DRAM)
      tw_announce(p, len, tier); /* slow-tier blocks: announced above */
  }
  tw_in_core--;
  return p;
}

__attribute__((visibility("default"))) void *
mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  return mmap(addr, len, prot, flags, fd, off);
}

__attribute__((visibility("default"))) int munmap(void *addr, size_t len) {
  tw_map m;
  if (!tw_in_tier && !tw_in_core && addr && tw_map_take((uintptr_t)addr, &m)) {
    tw_in_core++;
    tw_site *s = tw_site_get(m.site);
    if (tw_mode_now == TW_MODE_PLACE &&
        m.tier != TW_PAGE_SPLIT) /* tw_split_free ends its blocks */
      tw_unannounce(addr, m.tier);
    __atomic_fetch_sub(&s->live, (int64_t)m.len, __ATOMIC_RELAXED);
    if (tw_mode_now == TW_MODE_CENSUS && m.len >= tw_cfg.objects_min)
      tw_census_object(m.site, m.len, m.t0, tw_now_ns());
    tw_in_core--;
    if (m.tier == TW_T_DRAM) {
      if (tw_mode_now == TW_MODE_PLACE)
        tw_dram_give(addr, m.len);
      return tw_sys_munmap(addr, len);
    }
    if (m.tier == TW_PAGE_SPLIT)
      tw_split_free(addr);
    else
      tw_tier_free(m.tier, addr);
    return 0;
  }
  /* memkind gives tier pages back (in one of our calls or from a thread of
   * its own): unmarked before they are unmapped. Once unmapped, the kernel
   * may hand the range at once to another thread's new tier mapping or split
   * block, whose marks and fork note this would erase (the frees of its
   * blocks would then go to glibc). jemalloc never reuses a range whose
   * munmap failed. */
  if (len && !((uintptr_t)addr & 4095) && (tw_in_tier || tw_page_tier(addr))) {
    tw_pmap_mark((uintptr_t)addr, len, 0);
    tw_fork_note_unmap(addr, len);
  }
  return tw_sys_munmap(addr, len);
}

/* Census at exit: mappings never unmapped are live objects. */
void tw_mmap_live_rows(void (*row)(uint32_t, uint64_t, uint64_t)) {
  for (unsigned i = 0; i < TW_MAPS_SLOTS; i++)
    if (tw_maps[i].addr > 1 && tw_maps[i].len >= tw_cfg.objects_min)
      row(tw_maps[i].site, tw_maps[i].len, tw_maps[i].t0);
}
