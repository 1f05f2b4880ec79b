// SPDX-License-Identifier: MIT
// Test input: feeds synthetic perf ring-buffer records (PERF_RECORD_SAMPLE
// with addresses, PERF_RECORD_LOST, records wrapping around the end of the
// data area, a truncated record) through the pmu backend's ring parser and
// attribution, and checks the per-site estimates. Exit status 0 = all good.
#include "tw_pmu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DATA = 4096 };
static unsigned char ring[DATA];
static struct perf_event_mmap_page meta;
static int failures;

static void put(const void *rec, size_t len) {
  const unsigned char *p = rec;
  for (size_t i = 0; i < len; i++)
    ring[(meta.data_head + i) & (DATA - 1)] = p[i];
  meta.data_head += len;
}

static void put_sample(uint64_t ip, uint64_t addr, uint64_t data_src) {
  struct {
    struct perf_event_header h;
    uint64_t ip, pidtid, time, addr, data_src;
  } r = {{PERF_RECORD_SAMPLE, 0, sizeof r},
         ip,
         7ull << 32 | 7,
         99,
         addr,
         data_src};
  put(&r, sizeof r);
}

static void put_lost(uint64_t n) {
  struct {
    struct perf_event_header h;
    uint64_t id, lost;
  } r = {{PERF_RECORD_LOST, 0, sizeof r}, 1, n};
  put(&r, sizeof r);
}

typedef struct {
  tw_pmu_attr *attr;
  enum tw_pmu_kind kind;
} ctx_t;

static void on_sample(void *p, const tw_pmu_sample *s) {
  ctx_t *c = p;
  tw_pmu_attr_sample(c->attr, c->kind, s, 1000);
}

static void expect(const char *what, uint64_t got, uint64_t want) {
  printf("%s %s: %llu (want %llu)\n", got == want ? "ok" : "FAIL", what,
         (unsigned long long)got, (unsigned long long)want);
  failures += got != want;
}

int main(void) {
  tw_pmu_attr *a = tw_pmu_attr_new();
  tw_pmu_attr_add_object(a, 0x10000, 0x1000, 0); // site 0
  tw_pmu_attr_add_object(a, 0x30000, 0x100, 1);  // site 1
  tw_pmu_attr_add_object(a, 0x20000, 0x800, 1);  // site 1 again
  tw_pmu_attr_add_object(a, 0x50000, 0x10, 2);
  tw_pmu_attr_remove_object(a, 0x50000); // freed: no longer attributed
  tw_pmu_ring_stats st = {0};
  ctx_t c = {a, TW_PMU_LLC_LOAD_MISS};

  // Start near the end of the data area so records wrap around.
  meta.data_head = meta.data_tail = DATA - 20;
  put_sample(1, 0x10008, 0); // site 0, wraps (header split)
  put_sample(2, 0x10ff8, 0); // site 0
  put_lost(5);
  put_sample(3, 0x20010, 0); // site 1
  put_sample(4, 0x50004, 0); // freed object -> unknown
  uint64_t n = tw_pmu_ring_drain(&meta, ring, DATA, TW_PMU_SAMPLE_TYPE,
                                 on_sample, &c, &st);
  expect("samples drained", n, 4);
  expect("lost records", st.lost_records, 1);
  expect("lost samples", st.lost_samples, 5);
  expect("tail caught up", meta.data_tail, meta.data_head);
  expect("site 0 llc_load_misses",
         tw_pmu_attr_count(a, 0, TW_PMU_COL_LLC_LOAD_MISSES), 2000);
  expect("site 1 llc_load_misses",
         tw_pmu_attr_count(a, 1, TW_PMU_COL_LLC_LOAD_MISSES), 1000);
  expect("unknown llc_load_misses",
         tw_pmu_attr_count(a, TW_PMU_SITE_UNKNOWN, TW_PMU_COL_LLC_LOAD_MISSES),
         1000);

  // Stores on a second ring pass, many records so the area wraps again.
  c.kind = TW_PMU_STORE;
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 50; i++)
      put_sample(5, 0x30000 + i, 0);
    tw_pmu_ring_drain(&meta, ring, DATA, TW_PMU_SAMPLE_TYPE, on_sample, &c,
                      &st);
  }
  expect("site 1 stores", tw_pmu_attr_count(a, 1, TW_PMU_COL_STORES), 150000);

  // AMD IBS op: data_src says load from local DRAM (an LLC miss) or store.
  union perf_mem_data_src load_ram = {.mem_op = PERF_MEM_OP_LOAD,
                                      .mem_lvl = PERF_MEM_LVL_LOC_RAM |
                                                 PERF_MEM_LVL_HIT};
  union perf_mem_data_src store_l1 = {.mem_op = PERF_MEM_OP_STORE,
                                      .mem_lvl =
                                          PERF_MEM_LVL_L1 | PERF_MEM_LVL_HIT};
  c.kind = TW_PMU_IBS_OP;
  put_sample(6, 0x10010, load_ram.val);
  put_sample(7, 0x10020, store_l1.val);
  tw_pmu_ring_drain(&meta, ring, DATA, TW_PMU_SAMPLE_TYPE, on_sample, &c, &st);
  expect("ibs site 0 loads", tw_pmu_attr_count(a, 0, TW_PMU_COL_LOADS), 1000);
  expect("ibs site 0 llc_load_misses",
         tw_pmu_attr_count(a, 0, TW_PMU_COL_LLC_LOAD_MISSES), 3000);
  expect("ibs site 0 stores", tw_pmu_attr_count(a, 0, TW_PMU_COL_STORES), 1000);
  expect("ibs site 0 llc_store_misses",
         tw_pmu_attr_count(a, 0, TW_PMU_COL_LLC_STORE_MISSES), 0);

  // A record whose size runs past data_head is dropped, not misparsed.
  struct perf_event_header bad = {PERF_RECORD_SAMPLE, 0, 200};
  put(&bad, sizeof bad);
  uint64_t before = st.samples;
  tw_pmu_ring_drain(&meta, ring, DATA, TW_PMU_SAMPLE_TYPE, on_sample, &c, &st);
  expect("truncated record ignored", st.samples - before, 0);
  expect("bad records", st.bad_records, 1);
  tw_pmu_attr_free(a);
  return failures != 0;
}
