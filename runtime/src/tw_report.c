/* SPDX-License-Identifier: MIT */
/*
 * Layer 3 (allocation paths: written at exit). The run report (TIERWISE_REPORT, `%p` -> pid; format tierwise-run-report
 * v1, advisor/FORMATS.md): totals per tier, per placement site the
 * allocations and bytes per tier and fallbacks, unmatched stacks, warnings,
 * and the fast-path cache counters. Contains no data values.
 */
#define _GNU_SOURCE
#include "tw_paths.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static tw_out tw_rep;

static void tw_tier_bytes(tw_out *o, const uint64_t *b) {
  tw_out_str(o, "{");
  for (int t = 0, first = 1; t < TW_TIER_COUNT; t++) {
    if (!b[t] && t > TW_TIER_PMEM)
      continue;
    tw_out_str(o, first ? "" : ", ");
    tw_out_json(o, tw_tier_str(t));
    tw_out_str(o, ": ");
    tw_out_u64(o, b[t]);
    first = 0;
  }
  tw_out_str(o, "}");
}

/* "nodes": sampled resident pages per NUMA node (tw_maps.c). */
static void tw_nodes(tw_out *o, const uint64_t *pages, uint64_t sampled) {
  tw_out_str(o, ", \"nodes\": {");
  for (int i = 0, first = 1; i < TW_REPORT_NODES; i++) {
    if (!pages[i])
      continue;
    char key[8] = "\"";
    size_t n = 1 + tw_fmt_u64(key + 1, (uint64_t)i);
    key[n] = '"';
    key[n + 1] = 0;
    tw_out_str(o, first ? "" : ", ");
    tw_out_str(o, key);
    tw_out_str(o, ": ");
    tw_out_u64(o, pages[i]);
    first = 0;
  }
  tw_out_str(o, "}, \"pages_sampled\": ");
  tw_out_u64(o, sampled);
}

static void tw_sample_split(const tw_split_info *b) {
  tw_site_sample_pages(b->site, (const void *)b->base, b->size);
}

static void tw_command(tw_out *o) {
  char buf[4096];
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
  if (fd >= 0)
    close(fd);
  if (n < 0)
    n = 0;
  for (ssize_t i = 0; i < n; i++)
    if (!buf[i])
      buf[i] = ' ';
  while (n > 0 && buf[n - 1] == ' ')
    n--;
  buf[n] = 0;
  tw_out_json(o, buf);
}

/* A ranked site's plan (placement rank, planned_bytes) and, under a DRAM
 * limit, the bytes reserved for it (tw_dram_limit.c). */
static void tw_report_plan(tw_out *o, int p) {
  uint64_t planned, reserved;
  int rank = tw_dram_plan(p, &planned, &reserved);
  if (!rank)
    return;
  tw_out_str(o, ", \"rank\": ");
  tw_out_u64(o, (uint64_t)rank);
  tw_out_str(o, ", \"planned_bytes\": ");
  tw_out_u64(o, planned);
  tw_out_str(o, ", \"reserved_bytes\": ");
  tw_out_u64(o, reserved);
}

/* Fast-path mismatches are the allocations the cache may have served from
 * another call path's tier (runtime/README.md "what it can get wrong"): a
 * warning, so that the summary and the report's warnings say so. */
static void tw_warn_mismatches(uint64_t n) {
  char num[24], left[24];
  tw_fmt_u64(num, n);
  tw_fmt_u64(left, tw_cfg.fast_check ? tw_cfg.fast_check - 1 : 0);
  char msg[200] = "fast path: ";
  strcat(msg, num);
  strcat(msg, " cache key(s) shared by call paths of different tiers "
              "(mismatches): up to ");
  strcat(msg, left);
  tw_warn(msg,
          " small allocations per key went to the other path's tier before "
          "validation caught it; ",
          "TIERWISE_FASTPATH_LEARN=0 unwinds every allocation");
}

void tw_report_write(void) {
  char path[4096], tmp[4200];
  if (tw_cfg.maps_copy)
    tw_maps_snapshot();
  if (!tw_cfg.report_path)
    return;
  tw_expand_pid(path, sizeof(path), tw_cfg.report_path);
  tw_out *o = &tw_rep;
  if (tw_out_open(o, path, tmp, sizeof(tmp))) {
    tw_warn("cannot write the run report ", path, "");
    return;
  }
  uint64_t fs[4];
  tw_fast_stats(fs); /* first: flushes the cache hits' counts into the sites */
  if (fs[2])
    tw_warn_mismatches(fs[2]);
  tw_maps_sample_live(); /* where the live objects' pages are */
  tw_split_each(tw_sample_split);
  uint32_t n = tw_site_count();
  int np = tw_placement_nsites();
  uint64_t totals[TW_TIER_COUNT] = {0};
  tw_out_str(o, "{\"format\": \"tierwise-run-report\", \"version\": 1, "
                "\"pid\": ");
  tw_out_u64(o, (uint64_t)getpid());
  tw_out_str(o, ",\n \"command\": ");
  tw_command(o);
  tw_out_str(o, ",\n \"placement\": ");
  tw_out_json(o, tw_cfg.placement_path ? tw_cfg.placement_path : "");
  tw_out_str(o, ",\n \"depth\": ");
  tw_out_u64(o, (uint64_t)tw_cfg.depth);
  for (uint32_t i = 0; i < n; i++)
    for (int t = 0; t < TW_TIER_COUNT; t++)
      totals[t] += tw_site_get(i)->tier_bytes[t];
  tw_out_str(o, ",\n \"totals\": ");
  tw_tier_bytes(o, totals);
  if (tw_cfg.dram_limit) {
    tw_out_str(o, ",\n \"dram_limit\": {\"bytes\": ");
    tw_out_u64(o, tw_cfg.dram_limit);
    tw_out_str(o, ", \"reserved_bytes\": ");
    tw_out_u64(o, tw_dram_reserved_total());
    tw_out_str(o, tw_dram_reserved_total()
                      ? ", \"policy\": \"rank reservations\"}"
                      : ", \"policy\": \"first-come\"}");
  }
  tw_out_str(o, ",\n \"sites\": [");
  for (int p = 0; p < np; p++) {
    uint64_t b[TW_TIER_COUNT] = {0}, allocs = 0, fb = 0, fa = 0;
    uint64_t nodes[TW_REPORT_NODES] = {0}, sampled = 0;
    for (uint32_t i = 0; i < n; i++) {
      tw_site *s = tw_site_get(i);
      if (s->placed != p)
        continue;
      allocs += s->allocs;
      fb += s->fallback_bytes;
      fa += s->fallback_allocs;
      for (int t = 0; t < TW_TIER_COUNT; t++)
        b[t] += s->tier_bytes[t];
      for (int k = 0; k < TW_REPORT_NODES; k++)
        nodes[k] += s->node_pages[k];
      sampled += s->pages_sampled;
    }
    tw_out_str(o, p ? ",\n  {\"stack\": " : "\n  {\"stack\": ");
    tw_out_json(o, tw_placement_field(p, 0));
    tw_out_str(o, ", \"location\": ");
    tw_out_json(o, tw_placement_field(p, 1));
    tw_out_str(o, ", \"tier\": ");
    tw_out_json(o, tw_tier_str(tw_placement_tier(p)));
    tw_out_str(o, ", \"allocs\": ");
    tw_out_u64(o, allocs);
    tw_out_str(o, ", \"bytes\": ");
    tw_tier_bytes(o, b);
    tw_out_str(o, ", \"fallback_bytes\": ");
    tw_out_u64(o, fb);
    tw_out_str(o, ", \"fallback_allocs\": ");
    tw_out_u64(o, fa);
    tw_nodes(o, nodes, sampled);
    tw_report_plan(o, p);
    tw_out_str(o, ", \"matched\": ");
    tw_out_str(o, allocs ? "true}" : "false}");
  }
  tw_out_str(o, "],\n \"unmatched\": [");
  for (uint32_t i = 0, first = 1; i < n; i++) {
    tw_site *s = tw_site_get(i);
    if (s->placed >= 0 || s->bytes < tw_cfg.unmatched_min)
      continue;
    tw_out_str(o, first ? "\n  {\"stack\": " : ",\n  {\"stack\": ");
    tw_out_json(o, s->stack);
    tw_out_str(o, ", \"allocs\": ");
    tw_out_u64(o, s->allocs);
    tw_out_str(o, ", \"bytes\": ");
    tw_out_u64(o, s->bytes);
    tw_out_str(o, ", \"tier_bytes\": ");
    tw_tier_bytes(o, s->tier_bytes);
    tw_out_str(o, ", \"fallback_bytes\": ");
    tw_out_u64(o, s->fallback_bytes);
    tw_nodes(o, s->node_pages, s->pages_sampled);
    tw_out_str(o, "}");
    first = 0;
  }
  tw_out_str(o, "],\n \"unmatched_min_bytes\": ");
  tw_out_u64(o, tw_cfg.unmatched_min);
  tw_out_str(o, ",\n \"cache\": {\"hits\": ");
  tw_out_u64(o, fs[0]);
  tw_out_str(o, ", \"validations\": ");
  tw_out_u64(o, fs[1]);
  tw_out_str(o, ", \"mismatches\": ");
  tw_out_u64(o, fs[2]);
  tw_out_str(o, ", \"unwinds\": ");
  tw_out_u64(o, fs[3]);
  tw_out_str(o, ", \"max_bytes\": ");
  tw_out_u64(o, tw_cfg.fast_max);
  tw_out_str(o, "},\n \"warnings\": [");
  for (int i = 0, nw = tw_warnings_count(); i < nw; i++) {
    tw_out_str(o, i ? ", " : "");
    tw_out_json(o, tw_warning(i));
  }
  tw_out_str(o, "]}\n");
  if (tw_out_close(o, tmp, path))
    tw_warn("cannot write the run report ", path, "");
}
