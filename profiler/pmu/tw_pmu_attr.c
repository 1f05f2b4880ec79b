/* SPDX-License-Identifier: MIT */
/* Attribution of PMU samples: live objects as a sorted array of address
 * intervals (binary search), and per-site estimated counts, each sample
 * weighted by its sampling period. Addresses outside every object go to the
 * [unknown] pseudo-site (the glue may classify [stack]/[static] first). */
#include "tw_pmu.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  uint64_t start, end;
  int site;
} tw_obj;

struct tw_pmu_attr {
  tw_obj *objs;
  size_t n, cap;
  uint64_t *cum; /* whole pages of objs[0..i], for picking pages */
  size_t cum_cap;
  uint64_t cum_page; /* the page size cum was counted with; 0: stale */
  uint64_t (*counts)[TW_PMU_NCOLS]; /* index: site + 3 */
  int max_site, cap_sites;
};

tw_pmu_attr *tw_pmu_attr_new(void) { return calloc(1, sizeof(tw_pmu_attr)); }

void tw_pmu_attr_free(tw_pmu_attr *a) {
  if (!a)
    return;
  free(a->objs);
  free(a->cum);
  free(a->counts);
  free(a);
}

/* First object with start > addr. */
static size_t upper(const tw_pmu_attr *a, uint64_t addr) {
  size_t lo = 0, hi = a->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (a->objs[mid].start <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

int tw_pmu_attr_add_object(tw_pmu_attr *a, uint64_t start, uint64_t size,
                           int site) {
  if (a->n == a->cap) {
    size_t cap = a->cap ? 2 * a->cap : 1024;
    tw_obj *o = realloc(a->objs, cap * sizeof *o);
    if (!o)
      return -1;
    a->objs = o;
    a->cap = cap;
  }
  size_t i = upper(a, start);
  memmove(a->objs + i + 1, a->objs + i, (a->n - i) * sizeof *a->objs);
  a->objs[i] = (tw_obj){start, start + (size ? size : 1), site};
  a->n++;
  a->cum_page = 0;
  return 0;
}

int tw_pmu_attr_remove_object(tw_pmu_attr *a, uint64_t start) {
  size_t i = upper(a, start);
  if (i == 0 || a->objs[i - 1].start != start)
    return -1;
  memmove(a->objs + i - 1, a->objs + i, (a->n - i) * sizeof *a->objs);
  a->n--;
  a->cum_page = 0;
  return 0;
}

static uint64_t whole_pages(const tw_obj *o, uint64_t page) {
  uint64_t lo = (o->start + page - 1) & ~(page - 1), hi = o->end & ~(page - 1);
  return hi > lo ? (hi - lo) / page : 0;
}

uint64_t tw_pmu_attr_pages(tw_pmu_attr *a, uint64_t page) {
  if (a->cum_page != page) {
    if (a->cum_cap < a->n) {
      uint64_t *c = realloc(a->cum, a->n * sizeof *c);
      if (!c)
        return 0;
      a->cum = c;
      a->cum_cap = a->n;
    }
    uint64_t t = 0;
    for (size_t i = 0; i < a->n; i++)
      a->cum[i] = t += whole_pages(&a->objs[i], page);
    a->cum_page = page;
  }
  return a->n ? a->cum[a->n - 1] : 0;
}

int tw_pmu_attr_pick_page(tw_pmu_attr *a, uint64_t page, uint64_t k,
                          uint64_t *addr, uint64_t *start, int *site) {
  if (k >= tw_pmu_attr_pages(a, page))
    return -1;
  size_t lo = 0, hi = a->n - 1; /* first object with cum > k */
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (a->cum[mid] > k)
      hi = mid;
    else
      lo = mid + 1;
  }
  const tw_obj *o = &a->objs[lo];
  uint64_t before = lo ? a->cum[lo - 1] : 0;
  *addr = ((o->start + page - 1) & ~(page - 1)) + (k - before) * page;
  *start = o->start;
  *site = o->site;
  return 0;
}

size_t tw_pmu_attr_objects(const tw_pmu_attr *a) { return a->n; }

int tw_pmu_attr_object_at(const tw_pmu_attr *a, size_t i, uint64_t *start,
                          uint64_t *end, int *site) {
  if (i >= a->n)
    return -1;
  *start = a->objs[i].start;
  *end = a->objs[i].end;
  *site = a->objs[i].site;
  return 0;
}

int tw_pmu_attr_object_of(const tw_pmu_attr *a, uint64_t addr,
                          uint64_t *start, uint64_t *end) {
  size_t i = upper(a, addr);
  if (i == 0 || addr >= a->objs[i - 1].end)
    return -1;
  *start = a->objs[i - 1].start;
  *end = a->objs[i - 1].end;
  return 0;
}

int tw_pmu_attr_site_of(const tw_pmu_attr *a, uint64_t addr) {
  size_t i = upper(a, addr);
  if (i > 0 && addr < a->objs[i - 1].end)
    return a->objs[i - 1].site;
  return TW_PMU_SITE_UNKNOWN;
}

static uint64_t *row(tw_pmu_attr *a, int site) {
  int idx = site + 3;
  if (idx >= a->cap_sites) {
    int cap = a->cap_sites ? a->cap_sites : 64;
    while (cap <= idx)
      cap *= 2;
    void *c = realloc(a->counts, cap * sizeof *a->counts);
    if (!c)
      return NULL;
    a->counts = c;
    memset(a->counts + a->cap_sites, 0,
           (cap - a->cap_sites) * sizeof *a->counts);
    a->cap_sites = cap;
  }
  if (site > a->max_site)
    a->max_site = site;
  return a->counts[idx];
}

static int beyond_llc(uint64_t data_src) {
  union perf_mem_data_src d = {.val = data_src};
  if (d.mem_lvl &
      (PERF_MEM_LVL_LOC_RAM | PERF_MEM_LVL_REM_RAM1 | PERF_MEM_LVL_REM_RAM2))
    return 1;
  return d.mem_lvl_num == PERF_MEM_LVLNUM_RAM ||
         d.mem_lvl_num == PERF_MEM_LVLNUM_PMEM ||
         d.mem_lvl_num == PERF_MEM_LVLNUM_CXL;
}

int tw_pmu_attr_sample(tw_pmu_attr *a, enum tw_pmu_kind kind,
                       const tw_pmu_sample *s, uint64_t period) {
  int site = tw_pmu_attr_site_of(a, s->addr);
  uint64_t *c = row(a, site);
  if (!c)
    return site;
  union perf_mem_data_src d = {.val = s->data_src};
  switch (kind) {
  case TW_PMU_LLC_LOAD_MISS:
    c[TW_PMU_COL_LLC_LOAD_MISSES] += period;
    break;
  case TW_PMU_STORE:
    c[TW_PMU_COL_STORES] += period;
    break;
  case TW_PMU_IBS_OP:
    if (d.mem_op & PERF_MEM_OP_LOAD) {
      c[TW_PMU_COL_LOADS] += period;
      if (beyond_llc(s->data_src))
        c[TW_PMU_COL_LLC_LOAD_MISSES] += period;
    } else if (d.mem_op & PERF_MEM_OP_STORE) {
      c[TW_PMU_COL_STORES] += period;
      if (beyond_llc(s->data_src))
        c[TW_PMU_COL_LLC_STORE_MISSES] += period;
    }
    break;
  }
  return site;
}

uint64_t tw_pmu_attr_count(const tw_pmu_attr *a, int site, int col) {
  int idx = site + 3;
  if (idx < 0 || idx >= a->cap_sites || col < 0 || col >= TW_PMU_NCOLS)
    return 0;
  return a->counts[idx][col];
}

int tw_pmu_attr_max_site(const tw_pmu_attr *a) { return a->max_site; }
