/* SPDX-License-Identifier: MIT */
/*
 * Layer 1 (mechanisms): the objects the runtime tracks by address, and
 * where their pages really are. Two tables keyed by start address: the
 * anonymous mappings served as allocations (tw_mapped.c: their site, size,
 * owner and start time, for munmap and for the census's objects still live
 * at exit), and in placement mode with a run report the large (>= 64 KiB)
 * blocks of every tier: DRAM blocks too (placed in dram, or fallen back),
 * whose first page is marked TW_OWNER_SAMPLED so that their free comes
 * here. When such an object is released, and for those still live at
 * exit, up to 1024 of its pages are looked up with move_pages(2) and
 * counted per NUMA node for its site: the run report's "nodes" (the pages
 * that really landed, not the tier asked for).
 */
#define _GNU_SOURCE
#include "tw_mech.h"

#include <pthread.h>

#define TW_MAPS_SLOTS 4096
#define TW_SAMPLE_PAGES 1024

typedef struct tw_atable {
  tw_map e[TW_MAPS_SLOTS];
  pthread_mutex_t lock;
  int used; /* ever put into (exit skips an empty table) */
} tw_atable;

static tw_atable tw_maps = {.lock = PTHREAD_MUTEX_INITIALIZER};
static tw_atable tw_objs = {.lock = PTHREAD_MUTEX_INITIALIZER};

void tw_maps_atfork(int phase) {
  tw_mutex_atfork(&tw_maps.lock, phase);
  tw_mutex_atfork(&tw_objs.lock, phase);
}

static unsigned tw_map_slot(uintptr_t a) {
  return (unsigned)((a >> 12) * 0x9e3779b1u) & (TW_MAPS_SLOTS - 1);
}

/* The entry of start address \p a, or NULL (t->lock held). */
static tw_map *tw_at_find(tw_atable *t, uintptr_t a) {
  unsigned i = tw_map_slot(a);
  for (unsigned n = 0; n < TW_MAPS_SLOTS && t->e[i].addr;
       n++, i = (i + 1) % TW_MAPS_SLOTS)
    if (t->e[i].addr == a)
      return &t->e[i];
  return NULL;
}

/* \p e into its first free or deleted slot (t->lock held). */
static void tw_at_insert(tw_atable *t, tw_map e) {
  unsigned i = tw_map_slot(e.addr);
  for (unsigned n = 0; n < TW_MAPS_SLOTS; n++, i = (i + 1) % TW_MAPS_SLOTS)
    if (t->e[i].addr <= 1) {
      t->e[i] = e;
      __atomic_store_n(&t->used, 1, __ATOMIC_RELAXED);
      return;
    }
}

static void tw_at_put(tw_atable *t, uintptr_t a, size_t len, uint32_t site,
                      int owner) {
  pthread_mutex_lock(&t->lock);
  tw_at_insert(t, (tw_map){a, len, site, owner, tw_now_ns()});
  pthread_mutex_unlock(&t->lock);
}

static int tw_at_take(tw_atable *t, uintptr_t a, tw_map *out) {
  pthread_mutex_lock(&t->lock);
  tw_map *e = tw_at_find(t, a);
  if (e) {
    *out = *e;
    e->addr = 1;
  }
  pthread_mutex_unlock(&t->lock);
  return e != NULL;
}

void tw_map_put(uintptr_t a, size_t len, uint32_t site, int owner) {
  tw_at_put(&tw_maps, a, len, site, owner);
}

int tw_map_get(uintptr_t a, tw_map *out) {
  pthread_mutex_lock(&tw_maps.lock);
  tw_map *e = tw_at_find(&tw_maps, a);
  if (e)
    *out = *e;
  pthread_mutex_unlock(&tw_maps.lock);
  return e != NULL;
}

void tw_map_move(uintptr_t from, uintptr_t to, size_t len) {
  pthread_mutex_lock(&tw_maps.lock);
  tw_map *e = tw_at_find(&tw_maps, from);
  if (e) { /* (same site, owner and start time) */
    tw_map m = *e;
    e->addr = 1;
    m.addr = to;
    m.len = len;
    tw_at_insert(&tw_maps, m);
  }
  pthread_mutex_unlock(&tw_maps.lock);
}
int tw_map_take(uintptr_t a, tw_map *out) {
  return tw_at_take(&tw_maps, a, out);
}
void tw_obj_put(uintptr_t a, size_t len, uint32_t site, int owner) {
  tw_at_put(&tw_objs, a, len, site, owner);
}
int tw_obj_take(uintptr_t a, tw_map *out) {
  return tw_at_take(&tw_objs, a, out);
}

void tw_maps_live(void (*row)(uint32_t, uint64_t, uint64_t)) {
  for (unsigned i = 0; i < TW_MAPS_SLOTS; i++)
    if (tw_maps.e[i].addr > 1 && tw_maps.e[i].len >= tw_cfg.objects_min)
      row(tw_maps.e[i].site, tw_maps.e[i].len, tw_maps.e[i].t0);
}

int (*tw_sample_by)(uint32_t site, const void *p, size_t len);

void tw_site_sample_pages(uint32_t site, const void *p, size_t len) {
  if (site == TW_SITE_NONE || !tw_cfg.report_path ||
      tw_cfg.mode != TW_MODE_PLACE)
    return;
  int (*by)(uint32_t, const void *, size_t) =
      __atomic_load_n(&tw_sample_by, __ATOMIC_ACQUIRE);
  if (by && by(site, p, len))
    return;
  uint64_t nodes[TW_REPORT_NODES] = {0};
  size_t n = tw_numa_pages(p, len, nodes, TW_REPORT_NODES, TW_SAMPLE_PAGES);
  tw_site *s = tw_site_get(site);
  __atomic_fetch_add(&s->pages_sampled, n, __ATOMIC_RELAXED);
  for (int i = 0; i < TW_REPORT_NODES; i++)
    if (nodes[i])
      __atomic_fetch_add(&s->node_pages[i], nodes[i], __ATOMIC_RELAXED);
}

void tw_dram_sampled_put(void *p, size_t len, uint32_t site) {
  tw_obj_put((uintptr_t)p, len, site, TW_TIER_DRAM);
  tw_pmap_mark((uintptr_t)p, 1, TW_OWNER_SAMPLED);
}

uint32_t tw_dram_sampled_forget(void *p) {
  tw_map o;
  if (!tw_obj_take((uintptr_t)p, &o))
    return TW_SITE_NONE;
  tw_site_sample_pages(o.site, p, o.len);
  /* No other large block starts in this page: unmarked for good. */
  tw_pmap_mark((uintptr_t)p, 1, TW_OWNER_GLIBC);
  return o.site;
}

void tw_maps_sample_live(void) {
  tw_atable *ts[2] = {&tw_maps, &tw_objs};
  if (!tw_cfg.report_path)
    return;
  for (int k = 0; k < 2; k++) {
    if (!__atomic_load_n(&ts[k]->used, __ATOMIC_RELAXED))
      continue;
    pthread_mutex_lock(&ts[k]->lock);
    for (unsigned i = 0; i < TW_MAPS_SLOTS; i++) {
      tw_map *m = &ts[k]->e[i];
      if (m->addr > 1 && m->owner != TW_OWNER_SPLIT) /* splits: below */
        tw_site_sample_pages(m->site, (const void *)m->addr, m->len);
    }
    pthread_mutex_unlock(&ts[k]->lock);
  }
}
