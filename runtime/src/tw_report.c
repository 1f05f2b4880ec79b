/* SPDX-License-Identifier: MIT */
/*
 * The run report (TIERWISE_REPORT, `%p` -> pid; format tierwise-run-report
 * v1, advisor/FORMATS.md): totals per tier, per placement site the
 * allocations and bytes per tier and fallbacks, unmatched stacks, warnings,
 * and the fast-path cache counters. Contains no data values. Also the debug
 * copies of /proc/self/maps (TIERWISE_MAPS_COPY) used by the tests.
 */
#define _GNU_SOURCE
#include "tw_core.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define TW_MAX_WARNINGS 32
static const char *tw_warnings[TW_MAX_WARNINGS];
static int tw_nwarnings;
static tw_out tw_rep;

void tw_report_warning(const char *line) {
  int i = __atomic_fetch_add(&tw_nwarnings, 1, __ATOMIC_RELAXED);
  if (i >= TW_MAX_WARNINGS)
    return;
  size_t n = strlen(line) + 1;
  char *d = tw_internal_alloc(n);
  if (d)
    memcpy(d, line, n);
  tw_warnings[i] = d;
}

/* \p pattern with `%p` replaced by the pid. */
static void tw_expand(char *out, size_t cap, const char *pattern) {
  size_t n = 0;
  for (const char *s = pattern; *s && n + 24 < cap; s++) {
    if (s[0] == '%' && s[1] == 'p') {
      n += tw_fmt_u64(out + n, (uint64_t)getpid());
      s++;
    } else
      out[n++] = *s;
  }
  out[n] = 0;
}

/* Debug (TIERWISE_MAPS_COPY): append /proc/self/maps to the file; called at
 * exit and before each non-DRAM block of 64 KiB or more is released, so that
 * tests can check where objects lived even when their mapping is gone by exit.
 */
void tw_maps_snapshot(void) {
  char path[4096], buf[4096];
  tw_expand(path, sizeof(path), tw_cfg.maps_copy);
  int in = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  int out =
      open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  ssize_t n;
  while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
    if (write(out, buf, (size_t)n) != n)
      break;
  if (in >= 0)
    close(in);
  if (out >= 0)
    close(out);
}

static void tw_tier_bytes(tw_out *o, const uint64_t *b) {
  tw_out_str(o, "{");
  for (int t = 0, first = 1; t < TW_NTIERS; t++) {
    if (!b[t] && t > TW_T_PMEM)
      continue;
    tw_out_str(o, first ? "" : ", ");
    tw_out_json(o, tw_tier_str(t));
    tw_out_str(o, ": ");
    tw_out_u64(o, b[t]);
    first = 0;
  }
  tw_out_str(o, "}");
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
  tw_expand(path, sizeof(path), tw_cfg.report_path);
  tw_out *o = &tw_rep;
  if (tw_out_open(o, path, tmp, sizeof(tmp))) {
    tw_warn("cannot write the run report ", path, "");
    return;
  }
  uint64_t fs[4];
  tw_fast_stats(fs); /* first: flushes the cache hits' counts into the sites */
  if (fs[2])
    tw_warn_mismatches(fs[2]);
  uint32_t n = tw_site_count();
  int np = tw_placement_nsites();
  uint64_t totals[TW_NTIERS] = {0};
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
    for (int t = 0; t < TW_NTIERS; t++)
      totals[t] += tw_site_get(i)->tier_bytes[t];
  tw_out_str(o, ",\n \"totals\": ");
  tw_tier_bytes(o, totals);
  tw_out_str(o, ",\n \"sites\": [");
  for (int p = 0; p < np; p++) {
    uint64_t b[TW_NTIERS] = {0}, allocs = 0, fb = 0, fa = 0;
    for (uint32_t i = 0; i < n; i++) {
      tw_site *s = tw_site_get(i);
      if (s->placed != p)
        continue;
      allocs += s->allocs;
      fb += s->fallback_bytes;
      fa += s->fallback_allocs;
      for (int t = 0; t < TW_NTIERS; t++)
        b[t] += s->tier_bytes[t];
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
  int nw = tw_nwarnings < TW_MAX_WARNINGS ? tw_nwarnings : TW_MAX_WARNINGS;
  for (int i = 0; i < nw; i++) {
    tw_out_str(o, i ? ", " : "");
    tw_out_json(o, tw_warnings[i] ? tw_warnings[i] : "");
  }
  tw_out_str(o, "]}\n");
  if (tw_out_close(o, tmp, path))
    tw_warn("cannot write the run report ", path, "");
}
