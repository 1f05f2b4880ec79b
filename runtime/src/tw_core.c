/* SPDX-License-Identifier: MIT */
/*
 * The core of the tierwise runtime: configuration from the environment, the
 * block header, and the allocation paths behind the interposed malloc family
 * in each mode (pass-through, census, placement). DRAM blocks come from glibc
 * (__libc_malloc, so no dlsym bootstrap is needed), the other tiers from
 * memkind (tw_tiers.c).
 */
#define _GNU_SOURCE
#include "tw_core.h"
#include "tw_clientreq.h"

#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

tw_config tw_cfg;
volatile int tw_mode_now;
__thread int tw_in_core __attribute__((tls_model("initial-exec")));
static atomic_int tw_init_state; /* 0 none, 1 running, 2 config read */
static _Atomic uint64_t tw_dram_live;
/* Client requests cost a few instructions each: issue them only under
 * Valgrind (RUNNING_ON_VALGRIND is checked once, when the config is read). */
static int tw_on_valgrind;
static uint64_t tw_t0;

uint64_t tw_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec - tw_t0;
}

void tw_warn(const char *a, const char *b, const char *c) {
  char line[512];
  size_t n = 0;
  const char *parts[4] = {"tierwise: ", a, b, c};
  for (int i = 0; i < 4; i++)
    for (const char *s = parts[i]; s && *s && n < sizeof(line) - 2; s++)
      line[n++] = *s;
  line[n] = 0;
  tw_report_warning(line + 10);
  line[n++] = '\n';
  if (write(2, line, n) < 0)
    return;
}

static size_t tw_env_size(const char *name, size_t dflt) {
  const char *s = secure_getenv(name);
  uint64_t v;
  if (!s || !*s)
    return dflt;
  if (tw_parse_size(s, &v)) {
    tw_warn(name, ": not a size: ", s);
    return dflt;
  }
  return v;
}

/* Read the environment: cheap, done on the first call (which may come before
 * our constructor). */
static void tw_config_read(void) {
  int expect = 0;
  if (!atomic_compare_exchange_strong(&tw_init_state, &expect, 1))
    return;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  tw_t0 = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
  tw_on_valgrind = RUNNING_ON_VALGRIND > 0;
  /* setuid/setgid (AT_SECURE): secure_getenv ignores the environment, which
   * another user controls (report and pmem paths, placement). */
  if (getauxval(AT_SECURE) &&
      (getenv("TIERWISE_PLACEMENT") || getenv("TIERWISE_REPORT") ||
       getenv("TIERWISE_CENSUS") || getenv("TIERWISE_PMEM_DIR")))
    tw_warn("setuid/setgid program: the TIERWISE_* variables are ignored",
            "", "");
  tw_cfg.census_dir = secure_getenv("TIERWISE_CENSUS");
  tw_cfg.placement_path = secure_getenv("TIERWISE_PLACEMENT");
  tw_cfg.pmem_dir = secure_getenv("TIERWISE_PMEM_DIR");
  tw_cfg.report_path = secure_getenv("TIERWISE_REPORT");
  tw_cfg.maps_copy = secure_getenv("TIERWISE_MAPS_COPY");
  tw_cfg.verbose = secure_getenv("TIERWISE_VERBOSE") != NULL;
  tw_cfg.depth = (int)tw_env_size("TIERWISE_DEPTH", TW_DEFAULT_DEPTH);
  if (tw_cfg.depth < 1 || tw_cfg.depth > TW_MAX_DEPTH)
    tw_cfg.depth = TW_DEFAULT_DEPTH;
  tw_cfg.objects_min = tw_env_size("TIERWISE_OBJECTS_MIN", 4096);
  tw_cfg.fast_max = tw_env_size("TIERWISE_FASTPATH_MAX", 64 << 10);
  tw_cfg.fast_learn = (unsigned)tw_env_size("TIERWISE_FASTPATH_LEARN", 8);
  tw_cfg.fast_check = (unsigned)tw_env_size("TIERWISE_FASTPATH_CHECK", 256);
  tw_cfg.dram_limit = tw_env_size("TIERWISE_DRAM_LIMIT", 0);
  tw_cfg.unmatched_min = tw_env_size("TIERWISE_UNMATCHED_MIN", 1 << 20);
  if (tw_cfg.census_dir && *tw_cfg.census_dir)
    tw_cfg.mode = TW_MODE_CENSUS;
  else if (tw_cfg.placement_path || tw_cfg.report_path)
    tw_cfg.mode = TW_MODE_PLACE;
  else
    tw_cfg.mode = TW_MODE_PASS;
  /* Census is exact from the first allocation; placement needs the file
   * and the tiers, which the constructor loads. */
  tw_mode_now = tw_cfg.mode == TW_MODE_CENSUS ? TW_MODE_CENSUS : TW_MODE_PASS;
  atomic_store(&tw_init_state, 2);
}

static void tw_atfork_prepare(void) {}
static void tw_atfork_parent(void) {}
static void tw_atfork_child(void) {
  /* Locks of the child are fresh copies; nothing held across fork by the
   * caller of fork itself. The child keeps tracking; its outputs go to
   * per-pid names (see tw_census_write / tw_report_write). */
  tw_in_core = 0;
  if (tw_cfg.mode == TW_MODE_CENSUS)
    tw_census_atfork_child();
}

__attribute__((constructor(101))) static void tw_ctor(void) { tw_init(); }

void tw_init(void) {
  static atomic_int done;
  tw_config_read();
  if (atomic_exchange(&done, 1))
    return;
  tw_in_core++;
  pthread_atfork(tw_atfork_prepare, tw_atfork_parent, tw_atfork_child);
  if (tw_cfg.mode == TW_MODE_PLACE) {
    int placed = tw_cfg.placement_path
                     ? tw_placement_load(tw_cfg.placement_path)
                     : 0;
    if (placed && tw_placement_depth() > 0)
      tw_cfg.depth = tw_placement_depth();
    tw_tiers_init();
    if (placed)
      tw_placement_check_modules();
    tw_mode_now = TW_MODE_PLACE;
  }
  tw_in_core--;
}

__attribute__((destructor(101))) static void tw_dtor(void) {
  int mode = tw_mode_now;
  tw_in_core++;
  tw_mode_now = TW_MODE_PASS; /* later allocations: served, not tracked */
  if (mode == TW_MODE_CENSUS)
    tw_census_write();
  else if (mode == TW_MODE_PLACE)
    tw_report_write();
  tw_in_core--;
}

/* ---- blocks ---- */

static inline tw_hdr *tw_hdr_of(const void *p) { return (tw_hdr *)p - 1; }

static inline void *tw_base_of(void *p, const tw_hdr *h) {
  return (char *)p - ((size_t)1 << TW_HDR_LOG2OFF(h->tag));
}

static inline int tw_is_ours(const void *p) {
  return p && ((uintptr_t)p & 15) == 0 &&
         (tw_hdr_of(p)->tag >> 16) == TW_MAGIC;
}

/* Allocate from \p tier with room for the header (and a time stamp when
 * \p timed). Returns the user pointer with the header filled in. */
static void *tw_block(int tier, size_t size, size_t align, int timed,
                      uint32_t site) {
  size_t off = timed ? 32 : 16;
  if (align > off)
    off = align;
  if (size > SIZE_MAX - off - 64) {
    errno = ENOMEM;
    return NULL;
  }
  /* base + off must be aligned to align: off is a multiple of it */
  size_t base_align = align > 16 ? align : 16;
  void *base = tier != TW_T_DRAM ? tw_tier_malloc(tier, size + off, base_align)
               : base_align > 16 ? __libc_memalign(base_align, size + off)
                                 : __libc_malloc(size + off);
  if (!base)
    return NULL;
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
  void *base = tw_base_of(p, h);
  h->tag = 0;
  if (tier == TW_T_DRAM)
    __libc_free(base);
  else
    tw_tier_free(tier, base);
}

/* Placement: serve \p size for \p site from its tier, enforcing the DRAM
 * limit and falling back when a tier fails. */
static void *tw_place(tw_site *s, uint32_t site, size_t size, size_t align,
                      int tier) {
  int fell = 0;
  if (tier == TW_T_DRAM && tw_cfg.dram_limit) {
    uint64_t live = atomic_fetch_add(&tw_dram_live, size) + size;
    if (live > tw_cfg.dram_limit) {
      atomic_fetch_sub(&tw_dram_live, size);
      if (tw_tier_available(TW_T_PMEM)) {
        tier = TW_T_PMEM;
        fell = 1;
      } else
        atomic_fetch_add(&tw_dram_live, size); /* nowhere else to go */
    }
  }
  void *p = tw_block(tier, size, align, 0, site);
  if (!p && tier != TW_T_DRAM) {
    p = tw_block(TW_T_DRAM, size, align, 0, site);
    if (p && tw_cfg.dram_limit)
      atomic_fetch_add(&tw_dram_live, size);
    tier = TW_T_DRAM;
    fell = 1;
  }
  if (!p)
    return NULL;
  __atomic_fetch_add(&s->allocs, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&s->bytes, size, __ATOMIC_RELAXED);
  __atomic_fetch_add(&s->tier_bytes[tier], size, __ATOMIC_RELAXED);
  if (fell) {
    __atomic_fetch_add(&s->fallback_bytes, size, __ATOMIC_RELAXED);
    __atomic_fetch_add(&s->fallback_allocs, 1, __ATOMIC_RELAXED);
  }
  if (TW_UNLIKELY(tw_on_valgrind)) {
    VALGRIND_MALLOCLIKE_BLOCK(p, size, 0, 0);
    TW_CLREQ_TIER(p, tier);
  }
  return p;
}

/* The public API (tw_api.c): an explicit tier, at the caller's site. */
void *tw_alloc_tier(int tier, size_t size, size_t align, int zero) {
  void *p;
  if (TW_UNLIKELY(tw_init_state != 2))
    tw_config_read();
  if (size > PTRDIFF_MAX - 4096) {
    errno = ENOMEM;
    return NULL;
  }
  uint32_t site = TW_SITE_NONE;
  tw_in_core++;
  if (tw_in_core == 1)
    site = tw_site_here();
  if (site == TW_SITE_NONE) {
    p = tw_block(tier, size, align, 0, TW_SITE_NONE);
    if (!p && tier != TW_T_DRAM)
      p = tw_block(TW_T_DRAM, size, align, 0, TW_SITE_NONE);
  } else
    p = tw_place(tw_site_get(site), site, size, align, tier);
  tw_in_core--;
  if (p && zero)
    memset(p, 0, size);
  return p;
}

static void tw_census_count(tw_site *s, size_t size) {
  __atomic_fetch_add(&s->allocs, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&s->bytes, size, __ATOMIC_RELAXED);
  int64_t live =
      __atomic_add_fetch(&s->live, (int64_t)size, __ATOMIC_RELAXED);
  uint64_t peak = __atomic_load_n(&s->peak, __ATOMIC_RELAXED);
  while ((uint64_t)live > peak &&
         !__atomic_compare_exchange_n(&s->peak, &peak, (uint64_t)live, 1,
                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    ;
}

static void *tw_census(uint32_t site, size_t size, size_t align) {
  int timed = size >= tw_cfg.objects_min;
  void *p = tw_block(TW_T_DRAM, size, align, timed, site);
  if (!p)
    return NULL;
  tw_census_count(tw_site_get(site), size);
  if (timed)
    tw_census_live(p);
  return p;
}

/* Site of this allocation in the current mode (tw_in_core held). */
static uint32_t tw_site_for(size_t size, void *ra, void *sp) {
  tw_fast_entry *hit = NULL;
  return tw_mode_now == TW_MODE_CENSUS ? tw_site_here()
                                       : tw_fast_site(size, ra, sp, &hit);
}

static void *tw_serve(uint32_t site, size_t size, size_t align) {
  if (TW_UNLIKELY(site == TW_SITE_NONE))
    return tw_block(TW_T_DRAM, size, align, 0, TW_SITE_NONE);
  return tw_mode_now == TW_MODE_CENSUS
             ? tw_census(site, size, align)
             : tw_place(tw_site_get(site), site, size, align,
                        tw_site_get(site)->tier);
}

void *tw_alloc(size_t size, size_t align, int zero, void *ra, void *sp) {
  void *p;
  if (TW_UNLIKELY(tw_init_state != 2))
    tw_config_read();
  if (TW_UNLIKELY(size > PTRDIFF_MAX - 4096)) { /* fails as in glibc */
    errno = ENOMEM;
    return NULL;
  }
  if (TW_UNLIKELY(tw_in_core) || tw_mode_now == TW_MODE_PASS) {
    p = tw_block(TW_T_DRAM, size, align, 0, TW_SITE_NONE);
  } else if (tw_mode_now == TW_MODE_PLACE) {
    tw_fast_entry *hit = NULL;
    tw_in_core++;
    uint32_t site = tw_fast_site(size, ra, sp, &hit);
    if (hit && !tw_cfg.dram_limit &&
        (p = tw_block(hit->tier, size, align, 0, site))) {
      /* cache hit: counted in the entry, no atomic operation */
      hit->pend_allocs++;
      hit->pend_bytes += size;
      if (TW_UNLIKELY(tw_on_valgrind)) {
        VALGRIND_MALLOCLIKE_BLOCK(p, size, 0, 0);
        TW_CLREQ_TIER(p, hit->tier);
      }
    } else
      p = tw_serve(site, size, align);
    tw_in_core--;
  } else {
    tw_in_core++;
    p = tw_serve(tw_site_here(), size, align);
    tw_in_core--;
  }
  if (p && zero)
    memset(p, 0, size);
  return p;
}

/* Account the end of a block's life. */
static void tw_forget(void *p, tw_hdr *h) {
  if (h->site == TW_SITE_NONE || tw_in_core)
    return;
  tw_in_core++;
  if (tw_mode_now == TW_MODE_CENSUS) {
    tw_site *s = tw_site_get(h->site);
    __atomic_fetch_sub(&s->live, (int64_t)h->size, __ATOMIC_RELAXED);
    if (h->tag & TW_HDR_TIME) {
      tw_census_dead(p);
      tw_census_object(h->site, h->size, ((uint64_t *)h)[-1], tw_now_ns());
    }
  } else if (tw_mode_now == TW_MODE_PLACE) {
    if (TW_UNLIKELY(tw_cfg.maps_copy) && TW_HDR_TIER(h->tag) != TW_T_DRAM &&
        h->size >= (64u << 10))
      tw_maps_snapshot();
    if (tw_cfg.dram_limit && TW_HDR_TIER(h->tag) == TW_T_DRAM)
      atomic_fetch_sub(&tw_dram_live, h->size);
    if (TW_UNLIKELY(tw_on_valgrind))
      VALGRIND_FREELIKE_BLOCK(p, 0);
  }
  tw_in_core--;
}

void tw_core_free(void *p) {
  if (!p)
    return;
  if (TW_UNLIKELY(!tw_is_ours(p))) {
    /* A block from before we were loaded (ld.so's early allocations). */
    __libc_free(p);
    return;
  }
  tw_hdr *h = tw_hdr_of(p);
  tw_forget(p, h);
  tw_release(p, h);
}

size_t tw_usable(void *p) {
  if (!p)
    return 0;
  if (!tw_is_ours(p))
    return 0;
  return tw_hdr_of(p)->size;
}

int tw_tier_of_ptr(const void *p) {
  return tw_is_ours(p) ? (int)TW_HDR_TIER(tw_hdr_of(p)->tag) : -1;
}

/* realloc of a block whose life is not tracked (runtime-internal or
 * pass-through): in place for plain DRAM blocks, else allocate and copy. */
static void *tw_realloc_move(void *p, tw_hdr *h, size_t size) {
  if (size > SIZE_MAX - 64) {
    errno = ENOMEM;
    return NULL;
  }
  if (h->tag == ((TW_MAGIC << 16) | (4u << 8))) {
    char *base = __libc_realloc((char *)p - 16, size + 16);
    if (!base)
      return NULL;
    tw_hdr_of(base + 16)->size = size;
    tw_hdr_of(base + 16)->site = TW_SITE_NONE;
    return base + 16;
  }
  int tier = TW_HDR_TIER(h->tag); /* keep the block's tier */
  void *q = tw_block(tier, size, 0, 0, TW_SITE_NONE);
  if (!q && tier != TW_T_DRAM)
    q = tw_block(TW_T_DRAM, size, 0, 0, TW_SITE_NONE);
  if (!q)
    return NULL;
  memcpy(q, p, h->size < size ? h->size : size);
  tw_core_free(p);
  return q;
}

void *tw_core_realloc(void *p, size_t size, void *ra, void *sp) {
  if (!p)
    return tw_alloc(size, 0, 0, ra, sp);
  if (!tw_is_ours(p))
    return __libc_realloc(p, size);
  if (size == 0) {
    tw_core_free(p);
    return NULL;
  }
  tw_hdr *h = tw_hdr_of(p);
  /* Tracked blocks: an allocation at this call's site. A site the placement
   * names moves the block to its tier; otherwise the block keeps its tier.
   * DRAM blocks that stay in DRAM grow in place. */
  if (tw_in_core || tw_mode_now == TW_MODE_PASS)
    return tw_realloc_move(p, h, size);
  tw_in_core++;
  uint32_t site = tw_site_for(size, ra, sp);
  int from = TW_HDR_TIER(h->tag), tier = from;
  if (tw_mode_now == TW_MODE_CENSUS)
    tier = TW_T_DRAM;
  else if (site != TW_SITE_NONE && tw_site_get(site)->placed >= 0)
    tier = tw_site_get(site)->tier; /* a placed site moves the block */
  int plain = h->tag == ((TW_MAGIC << 16) | (4u << 8));
  int stay = plain && site != TW_SITE_NONE && tier == TW_T_DRAM &&
             (tw_mode_now == TW_MODE_CENSUS ? size < tw_cfg.objects_min
                                            : !tw_cfg.dram_limit);
  tw_in_core--;
  if (!stay) {
    tw_in_core++;
    void *q = site == TW_SITE_NONE ? tw_block(tier, size, 0, 0, site)
              : tw_mode_now == TW_MODE_CENSUS
                  ? tw_census(site, size, 0)
                  : tw_place(tw_site_get(site), site, size, 0, tier);
    tw_in_core--;
    if (!q)
      return NULL;
    memcpy(q, p, h->size < size ? h->size : size);
    tw_core_free(p);
    return q;
  }
  if (size > SIZE_MAX - 64) {
    errno = ENOMEM;
    return NULL;
  }
  tw_forget(p, h);
  char *base = __libc_realloc((char *)p - 16, size + 16);
  if (!base) { /* the old block is intact: account it again */
    tw_in_core++;
    tw_site *s = tw_site_get(h->site);
    __atomic_fetch_add(&s->live, (int64_t)h->size, __ATOMIC_RELAXED);
    tw_in_core--;
    return NULL;
  }
  h = tw_hdr_of(base + 16);
  h->site = TW_SITE_NONE; /* re-accounted below */
  tw_in_core++;
  tw_site *s = tw_site_get(site);
  if (tw_mode_now == TW_MODE_CENSUS) {
    tw_census_count(s, size);
  } else {
    __atomic_fetch_add(&s->allocs, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&s->bytes, size, __ATOMIC_RELAXED);
    __atomic_fetch_add(&s->tier_bytes[TW_T_DRAM], size, __ATOMIC_RELAXED);
    if (TW_UNLIKELY(tw_on_valgrind)) {
      VALGRIND_MALLOCLIKE_BLOCK(base + 16, size, 0, 0);
      TW_CLREQ_TIER(base + 16, TW_T_DRAM);
    }
  }
  tw_in_core--;
  h->site = site;
  h->size = size;
  return base + 16;
}
