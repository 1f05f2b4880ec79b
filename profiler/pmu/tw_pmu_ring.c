/* SPDX-License-Identifier: MIT */
/* Parser for perf_event mmap ring buffers: decodes PERF_RECORD_SAMPLE
 * bodies for a given sample_type, counts PERF_RECORD_LOST, and copies
 * records that wrap around the end of the data area before decoding. */
#include "tw_pmu.h"

#include <string.h>

/* Sample fields this parser decodes, in record order. */
#define HANDLED                                                                \
  (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |                 \
   PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |                      \
   PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |              \
   PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC)

int tw_pmu_parse_sample(const void *body, size_t len, uint64_t type,
                        tw_pmu_sample *s) {
  const unsigned char *p = body, *end = p + len;
  uint64_t v;
  memset(s, 0, sizeof *s);
  if (type & ~(uint64_t)HANDLED)
    return -1;
#define TAKE(dst)                                                              \
  do {                                                                         \
    if (p + 8 > end)                                                           \
      return -1;                                                               \
    memcpy(&v, p, 8);                                                          \
    p += 8;                                                                    \
    dst;                                                                       \
  } while (0)
  if (type & PERF_SAMPLE_IDENTIFIER)
    TAKE(s->id = v);
  if (type & PERF_SAMPLE_IP)
    TAKE(s->ip = v);
  if (type & PERF_SAMPLE_TID)
    TAKE((s->pid = (uint32_t)v, s->tid = (uint32_t)(v >> 32)));
  if (type & PERF_SAMPLE_TIME)
    TAKE(s->time = v);
  if (type & PERF_SAMPLE_ADDR)
    TAKE(s->addr = v);
  if (type & PERF_SAMPLE_ID)
    TAKE(s->id = v);
  if (type & PERF_SAMPLE_STREAM_ID)
    TAKE((void)v);
  if (type & PERF_SAMPLE_CPU)
    TAKE(s->cpu = (uint32_t)v);
  if (type & PERF_SAMPLE_PERIOD)
    TAKE(s->period = v);
  if (type & PERF_SAMPLE_WEIGHT)
    TAKE(s->weight = v);
  if (type & PERF_SAMPLE_DATA_SRC)
    TAKE(s->data_src = v);
#undef TAKE
  return 0;
}

uint64_t tw_pmu_ring_drain(struct perf_event_mmap_page *meta, void *data,
                           uint64_t size, uint64_t sample_type,
                           tw_pmu_sample_fn fn, void *ctx,
                           tw_pmu_ring_stats *st) {
  const unsigned char *base = data;
  uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta->data_tail, n = 0;
  unsigned char copy[4096];
  while (tail + sizeof(struct perf_event_header) <= head) {
    struct perf_event_header h;
    uint64_t off = tail & (size - 1);
    /* The header itself may wrap. */
    for (size_t i = 0; i < sizeof h; i++)
      ((unsigned char *)&h)[i] = base[(off + i) & (size - 1)];
    if (h.size < sizeof h || tail + h.size > head) {
      st->bad_records++;
      tail = head; /* cannot resynchronise: drop the rest */
      break;
    }
    const unsigned char *rec = base + off;
    if (off + h.size > size) { /* wraps: copy into one piece */
      if (h.size > sizeof copy) {
        st->bad_records++;
        tail += h.size;
        continue;
      }
      uint64_t first = size - off;
      memcpy(copy, base + off, first);
      memcpy(copy + first, base, h.size - first);
      rec = copy;
    }
    const unsigned char *body = rec + sizeof h;
    size_t len = h.size - sizeof h;
    if (h.type == PERF_RECORD_SAMPLE) {
      tw_pmu_sample s;
      if (tw_pmu_parse_sample(body, len, sample_type, &s) == 0) {
        st->samples++;
        n++;
        fn(ctx, &s);
      } else {
        st->bad_records++;
      }
    } else if (h.type == PERF_RECORD_LOST && len >= 16) {
      uint64_t lost;
      memcpy(&lost, body + 8, 8); /* { u64 id; u64 lost; } */
      st->lost_records++;
      st->lost_samples += lost;
    } else {
      st->other_records++;
    }
    tail += h.size;
  }
  __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
  return n;
}
