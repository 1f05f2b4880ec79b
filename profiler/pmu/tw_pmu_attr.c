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
  uint64_t (*counts)[TW_PMU_NCOLS]; /* index: site + 3 */
  int max_site, cap_sites;
};

tw_pmu_attr *tw_pmu_attr_new(void) { return calloc(1, sizeof(tw_pmu_attr)); }

void tw_pmu_attr_free(tw_pmu_attr *a) {
  if (!a)
    return;
  free(a->objs);
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
  return 0;
}

int tw_pmu_attr_remove_object(tw_pmu_attr *a, uint64_t start) {
  size_t i = upper(a, start);
  if (i == 0 || a->objs[i - 1].start != start)
    return -1;
  memmove(a->objs + i - 1, a->objs + i, (a->n - i) * sizeof *a->objs);
  a->n--;
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
