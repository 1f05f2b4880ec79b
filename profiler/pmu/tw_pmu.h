/* SPDX-License-Identifier: MIT */
/* The pmu backend's library: default sampling events per CPU model encoded
 * with libpfm4 (tw_pmu_events.c), a parser for perf_event mmap ring buffers
 * (tw_pmu_ring.c) and attribution of sample addresses to live objects and
 * their sites, scaled by the sampling period (tw_pmu_attr.c). */
#ifndef TW_PMU_H
#define TW_PMU_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a sampled event measures, i.e. which sites.csv column it estimates. */
enum tw_pmu_kind {
  TW_PMU_LLC_LOAD_MISS, /* Intel MEM_LOAD_RETIRED:L3_MISS */
  TW_PMU_STORE,         /* Intel MEM_INST_RETIRED:ALL_STORES */
  TW_PMU_IBS_OP,        /* AMD IBS op: loads, stores, misses via data_src */
};

typedef struct {
  char name[96]; /* e.g. "icl::MEM_LOAD_RETIRED:L3_MISS" */
  enum tw_pmu_kind kind;
  struct perf_event_attr attr;
} tw_pmu_event;

#define TW_PMU_SAMPLE_TYPE                                                     \
  (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |    \
   PERF_SAMPLE_DATA_SRC)
#define TW_PMU_MAX_EVENTS 4

/* Fills events[] with the default events of this CPU (or of the PMU forced
 * with LIBPFM_FORCE_PMU); sysfs_root (NULL: "/sys") is where the ibs_op PMU
 * type is read on AMD. period: sampling period. Returns the number of
 * events, or -1 with a reason in why. */
int tw_pmu_default_events(tw_pmu_event *events, int max, uint64_t period,
                          const char *sysfs_root, char *why, size_t why_len);

/* One decoded PERF_RECORD_SAMPLE. */
typedef struct {
  uint64_t ip, time, addr, period, data_src, weight, id;
  uint32_t pid, tid, cpu;
} tw_pmu_sample;

typedef struct {
  uint64_t samples, lost_records, lost_samples, other_records, bad_records;
} tw_pmu_ring_stats;

typedef void (*tw_pmu_sample_fn)(void *ctx, const tw_pmu_sample *s);

/* Decodes a PERF_RECORD_SAMPLE body (after the header) for sample_type.
 * Returns 0, or -1 when the record is too short or sample_type has bits
 * this parser does not handle. */
int tw_pmu_parse_sample(const void *body, size_t len, uint64_t sample_type,
                        tw_pmu_sample *out);

/* Consumes every record between data_tail and data_head of a perf mmap ring
 * (meta page followed by data_size bytes at data, a power of two), records
 * that wrap around included, calls fn per sample, advances data_tail.
 * Returns the number of samples. Never blocks. */
uint64_t tw_pmu_ring_drain(struct perf_event_mmap_page *meta, void *data,
                           uint64_t data_size, uint64_t sample_type,
                           tw_pmu_sample_fn fn, void *ctx,
                           tw_pmu_ring_stats *stats);

/* Live objects by address interval, and estimated counts per site. */
typedef struct tw_pmu_attr tw_pmu_attr;
enum {
  TW_PMU_COL_LOADS,
  TW_PMU_COL_STORES,
  TW_PMU_COL_LLC_LOAD_MISSES,
  TW_PMU_COL_LLC_STORE_MISSES,
  TW_PMU_NCOLS
};
/* Pseudo-sites, as in sites.csv: accesses outside every tracked object. */
enum {
  TW_PMU_SITE_STATIC = -1,
  TW_PMU_SITE_STACK = -2,
  TW_PMU_SITE_UNKNOWN = -3
};

tw_pmu_attr *tw_pmu_attr_new(void);
void tw_pmu_attr_free(tw_pmu_attr *a);
int tw_pmu_attr_add_object(tw_pmu_attr *a, uint64_t start, uint64_t size,
                           int site);
int tw_pmu_attr_remove_object(tw_pmu_attr *a, uint64_t start);
/* The live objects: how many, and the i-th in address order. */
size_t tw_pmu_attr_objects(const tw_pmu_attr *a);
int tw_pmu_attr_object_at(const tw_pmu_attr *a, size_t i, uint64_t *start,
                          uint64_t *end, int *site);
/* The live object holding addr: [*start, *end); -1 if none. */
int tw_pmu_attr_object_of(const tw_pmu_attr *a, uint64_t addr,
                          uint64_t *start, uint64_t *end);
/* Site of the live object holding addr, or TW_PMU_SITE_UNKNOWN. */
int tw_pmu_attr_site_of(const tw_pmu_attr *a, uint64_t addr);
/* Charges one sample of event kind with weight period; returns the site. */
int tw_pmu_attr_sample(tw_pmu_attr *a, enum tw_pmu_kind kind,
                       const tw_pmu_sample *s, uint64_t period);
/* Whole pages (of \p page bytes) inside the live objects, and the k-th of
 * them (0 <= k < pages, in address order): its address, its object's start
 * and site; -1 when k is out of range (the sample profiler's page picks). */
uint64_t tw_pmu_attr_pages(tw_pmu_attr *a, uint64_t page);
int tw_pmu_attr_pick_page(tw_pmu_attr *a, uint64_t page, uint64_t k,
                          uint64_t *addr, uint64_t *start, int *site);
/* Estimated count of column col for site (pseudo-sites negative). */
uint64_t tw_pmu_attr_count(const tw_pmu_attr *a, int site, int col);
int tw_pmu_attr_max_site(const tw_pmu_attr *a);

#ifdef __cplusplus
}
#endif
#endif
