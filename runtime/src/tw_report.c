/* SPDX-License-Identifier: MIT */
/*
 * Layer 3 (allocation paths: written at exit). The run report (TIERWISE_REPORT, `%p` -> pid; format tierwise-run-report
 * v1, advisor/FORMATS.md): totals per tier, per placement site the
 * allocations and bytes per tier and fallbacks, unmatched stacks, warnings,
 * and the fast-path cache counters. Contains no data values.
 *
 * One report per process: a path without `%p` names the process the user
 * started (the first to load the runtime; it puts its pid in
 * TIERWISE_REPORT_OWNER for the processes it starts, and an image it execs
 * keeps the pid). Every other process of the job - a helper daemon such as
 * Open MPI's orted, a forked or exec'd child - writes PATH.COMMAND.PID
 * beside it, never over it.
 */
#define _GNU_SOURCE
#include "tw_paths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static tw_out tw_rep;
static uint64_t tw_owner_pid; /* 0: every process names its own report */
static char tw_owner_var[48] = "TIERWISE_REPORT_OWNER=";

void tw_report_claim(void) {
  const char *path = tw_cfg.report_path;
  if (!path || strstr(path, "%p"))
    return; /* every process has its own name already */
  const char *owner = secure_getenv("TIERWISE_REPORT_OWNER");
  uint64_t v;
  if (owner && *owner && !tw_parse_size(owner, &v) && v) {
    tw_owner_pid = v;
    return;
  }
  tw_owner_pid = (uint64_t)getpid();
  tw_fmt_u64(tw_owner_var + 22, tw_owner_pid);
  putenv(tw_owner_var); /* static storage: inherited by what we start */
}

/* The named process, or an image it exec'd (same pid); not a forked child,
 * whose pid differs from the one claimed. */
static int tw_report_named(void) {
  return !tw_owner_pid || tw_owner_pid == (uint64_t)getpid();
}

typedef struct tw_psum {
  uint64_t b[TW_TIER_COUNT], allocs, fb, fa;
  uint64_t nodes[TW_REPORT_NODES], sampled;
  uint64_t run_nodes[TW_REPORT_NODES], run_sampled;
} tw_psum;

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

/* "nodes": sampled resident pages per NUMA node (tw_maps.c); \p when:
 * "" (at frees and exit) or "_during_run" (the room's watcher, every
 * second). */
static void tw_nodes_when(tw_out *o, const uint64_t *pages, uint64_t sampled,
                          const char *when) {
  tw_out_str(o, ", \"nodes");
  tw_out_str(o, when);
  tw_out_str(o, "\": {");
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
  tw_out_str(o, "}, \"pages_sampled");
  tw_out_str(o, when);
  tw_out_str(o, "\": ");
  tw_out_u64(o, sampled);
}

static void tw_nodes(tw_out *o, const uint64_t *pages, uint64_t sampled) {
  tw_nodes_when(o, pages, sampled, "");
}

/* "backends": what served each tier used ("numa-node 1", "memkind-file",
 * "unavailable": its sites fell back to dram). */
static void tw_backends(tw_out *o) {
  char buf[256];
  tw_out_str(o, ",\n \"backends\": {");
  for (int t = 0, first = 1; t < TW_TIER_COUNT; t++) {
    if (!tw_tier_describe(t, buf, sizeof(buf)))
      continue;
    tw_out_str(o, first ? "" : ", ");
    tw_out_json(o, tw_tier_str(t));
    tw_out_str(o, ": ");
    tw_out_json(o, buf);
    first = 0;
  }
  tw_out_str(o, "}");
}

/* A site placed in dram: "dram_pages_off_cpu_nodes", its sampled resident
 * pages on nodes without CPUs (a slow node: node 0 was full when they were
 * touched), and a warning when they are most of its pages - the report
 * must not say dram for data that is not there. */
static void tw_dram_elsewhere(tw_out *o, int p, const uint64_t *nodes,
                              const tw_nodeset *cpus) {
  uint64_t off = 0, all = 0;
  for (int i = 0; i < TW_REPORT_NODES; i++) {
    all += nodes[i];
    if (!tw_set_has(cpus, (unsigned)i))
      off += nodes[i];
  }
  tw_out_str(o, ", \"dram_pages_off_cpu_nodes\": ");
  tw_out_u64(o, off);
  if (all && 2 * off > all) {
    char msg[192] = ": placed in dram, but ", num[24];
    tw_fmt_u64(num, off);
    strcat(msg, num);
    strcat(msg, " of its ");
    tw_fmt_u64(num, all);
    strcat(msg, num);
    strcat(msg, " sampled pages are on nodes without CPUs (DRAM was full "
                "when they were first touched)");
    const char *where = tw_placement_field(p, 1);
    tw_warn("site ", where && *where ? where : tw_placement_field(p, 0), msg);
  }
}

static void tw_sample_split(const tw_split_info *b) {
  tw_site_sample_pages(b->site, (const void *)b->base, b->size);
}

static void tw_command(tw_out *o) {
  char buf[4096];
  size_t n = tw_sys_cmdline(buf, sizeof(buf));
  for (size_t i = 0; i < n; i++)
    if (!buf[i])
      buf[i] = ' ';
  while (n > 0 && buf[n - 1] == ' ')
    n--;
  buf[n] = 0;
  tw_out_json(o, buf);
}

/* PATH.COMMAND.PID for a process other than the named one (COMMAND: its
 * executable's name, characters outside [A-Za-z0-9._+-] as '_'). */
static void tw_other_path(char *path, size_t cap) {
  size_t n = strlen(path);
  const char *cmd = program_invocation_short_name;
  if (!cmd || !*cmd)
    cmd = "process";
  if (n + 2 < cap)
    path[n++] = '.';
  for (int k = 0; cmd[k] && k < 64 && n + 26 < cap; k++) {
    char c = cmd[k];
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
             (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '+' ||
             c == '-';
    path[n++] = ok ? c : '_';
  }
  path[n++] = '.';
  tw_fmt_u64(path + n, (uint64_t)getpid());
}

/* A ranked site's plan (placement rank, planned_bytes) and, under a DRAM
 * limit, the bytes reserved for it and the most of them it held at once
 * (tw_dram_limit.c). */
static void tw_report_plan(tw_out *o, int p) {
  uint64_t planned, reserved, held;
  int rank = tw_dram_plan(p, &planned, &reserved, &held);
  if (!rank)
    return;
  tw_out_str(o, ", \"rank\": ");
  tw_out_u64(o, (uint64_t)rank);
  tw_out_str(o, ", \"planned_bytes\": ");
  tw_out_u64(o, planned);
  tw_out_str(o, ", \"reserved_bytes\": ");
  tw_out_u64(o, reserved);
  tw_out_str(o, ", \"reserved_peak_bytes\": ");
  tw_out_u64(o, held);
}

/* The DRAM node's room and what moved for the ranked sites (tw_room.c;
 * advisor/FORMATS.md "room"). */
static void tw_report_room(tw_out *o, const tw_room_stats *r) {
  const char *k[] = {"room_bytes",      "free_bytes",
                     "watermark_bytes", "pcp_bytes",       "asked_bytes",
                     "demoted_bytes",   "restored_bytes",
                     "exchanged_bytes", "promoted_bytes",
                     "promoted_moved_bytes", "phases",
                     "watched",         "grown",
                     "pcp_passes",      "migrate_bytes",
                     "asks",            "ask_timeouts",
                     "untracked",       "watcher_cpu_ms"};
  const uint64_t v[] = {r->room_bytes,      r->free_bytes,
                        r->watermark_bytes, r->pcp_bytes,       r->asked_bytes,
                        r->demoted_bytes,   r->restored_bytes,
                        r->exchanged_bytes, r->promoted_bytes,
                        r->promoted_moved_bytes, r->phases,
                        r->watched,         r->grown,
                        r->pcp_passes,      r->migrate_bytes,
                        r->asks,            r->ask_timeouts,
                        r->untracked,       r->watcher_cpu_ms};
  if (r->node < 0)
    return;
  tw_out_str(o, ",\n \"room\": {\"active\": ");
  tw_out_str(o, r->on ? "true" : "false");
  tw_out_str(o, ", \"node\": ");
  tw_out_u64(o, (uint64_t)r->node);
  tw_out_str(o, ", \"slow_node\": ");
  if (r->slow_node < 0)
    tw_out_str(o, "null");
  else
    tw_out_u64(o, (uint64_t)r->slow_node);
  tw_out_str(o, ", \"kernel_demotes\": ");
  tw_out_str(o, r->kernel_demotes ? "true" : "false");
  for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
    tw_out_str(o, ", \"");
    tw_out_str(o, k[i]);
    tw_out_str(o, "\": ");
    tw_out_u64(o, v[i]);
  }
  /* its scheme (the knobs in use: tw_options) and each action's counts */
  tw_out_str(o, ",\n  \"scheme\": {");
  for (int i = TW_O_ROOM_FIRST; i < TW_O_COUNT; i++) {
    tw_out_str(o, i > TW_O_ROOM_FIRST ? ", \"" : "\"");
    tw_out_str(o, tw_options[i].key);
    tw_out_str(o, "\": ");
    tw_out_u64(o, tw_opt[i]);
  }
  static const char *const act[] = {"demote", "restore", "exchange",
                                    "promote"};
  tw_out_str(o, "},\n  \"actions\": {");
  for (int i = 0; i < 4; i++) {
    tw_out_str(o, i ? ", \"" : "\"");
    tw_out_str(o, act[i]);
    tw_out_str(o, "\": {\"tried\": ");
    tw_out_u64(o, r->tried[i]);
    tw_out_str(o, ", \"applied\": ");
    tw_out_u64(o, r->applied[i]);
    tw_out_str(o, "}");
  }
  /* what its page moves cost */
  tw_out_str(o, "},\n  \"moves\": {\"calls\": ");
  tw_out_u64(o, r->moves.calls);
  tw_out_str(o, ", \"pages\": ");
  tw_out_u64(o, r->moves.pages);
  tw_out_str(o, ", \"cpu_ms\": ");
  tw_out_u64(o, r->moves.cpu_ns / 1000000u);
  tw_out_str(o, ", \"worst_us_per_page\": ");
  tw_out_u64(o, r->moves.worst_ns_per_page / 1000u);
  tw_out_str(o, "}}");
}

/* A placement site's pages moved by tw_room.c, where any moved. */
static void tw_report_room_site(tw_out *o, int p) {
  const char *k[] = {", \"demoted_bytes\": ", ", \"restored_bytes\": ",
                     ", \"promoted_bytes\": "};
  uint64_t v[3];
  tw_room_site(p, v);
  for (int i = 0; i < 3; i++)
    if (v[i]) {
      tw_out_str(o, k[i]);
      tw_out_u64(o, v[i]);
    }
}

/* A site as a warning names it: the placement's location, else its stack
 * (cut to \p cap - 1 characters). */
static void tw_site_name(char *buf, size_t cap, uint32_t i) {
  const tw_site *s = tw_site_get(i);
  const char *loc = s->placed >= 0 ? tw_placement_field(s->placed, 1) : NULL;
  const char *name = loc && *loc ? loc : s->stack;
  size_t n = strlen(name) < cap - 1 ? strlen(name) : cap - 1;
  memcpy(buf, name, n);
  buf[n] = 0;
}

/* Fast-path mismatches: a trusted cache key served hits from one site's
 * tier and its validation then found a site of another tier
 * (runtime/README.md "what it can get wrong"): up to that many small
 * allocations went to another tier than their site's. A warning naming the
 * sites, so that the summary and the report's warnings say so; a key whose
 * paths disagreed while it was still learning served nothing from the
 * cache and is no mismatch. */
static void tw_warn_mismatches(uint64_t n) {
  tw_fast_mismatch mis[4];
  int k = tw_fast_mismatches(mis, 4);
  char num[24], msg[1400] = "fast path: ";
  tw_fmt_u64(num, n);
  strcat(msg, num);
  strcat(msg, " cache key(s) shared by call paths of different tiers "
              "(mismatches):");
  for (int i = 0; i < k; i++) {
    char a[120], b[120], hits[24];
    tw_site_name(a, sizeof(a), mis[i].served_site);
    tw_site_name(b, sizeof(b), mis[i].found_site);
    tw_fmt_u64(hits, mis[i].hits);
    const char *ta = tw_tier_str(tw_site_get(mis[i].served_site)->tier);
    const char *tb = tw_tier_str(tw_site_get(mis[i].found_site)->tier);
    strcat(msg, i ? "; " : " ");
    strcat(msg, "up to ");
    strcat(msg, hits);
    strcat(msg, " small allocations of ");
    strcat(msg, b);
    strcat(msg, " (");
    strcat(msg, tb ? tb : "?");
    strcat(msg, ") went to the tier of ");
    strcat(msg, a);
    strcat(msg, " (");
    strcat(msg, ta ? ta : "?");
    strcat(msg, ")");
  }
  tw_warn(msg, " before validation caught it; ",
          "TIERWISE_FASTPATH_LEARN=0 unwinds every allocation");
}

void tw_report_write(void) {
  char path[4096], tmp[4200];
  if (tw_cfg.maps_copy)
    tw_maps_snapshot();
  if (!tw_cfg.report_path)
    return;
  tw_expand_pid(path, sizeof(path), tw_cfg.report_path);
  int named = tw_report_named();
  if (!named)
    tw_other_path(path, sizeof(path) - 64);
  tw_out *o = &tw_rep;
  if (tw_out_open(o, path, tmp, sizeof(tmp))) {
    /* a helper outliving `tierwise run`, whose directory is gone: silent */
    if (named || errno != ENOENT)
      tw_warn("cannot write the run report ", path, "");
    return;
  }
  uint64_t fs[4];
  tw_fast_stats(fs); /* first: flushes the cache hits' counts into the sites */
  if (fs[2])
    tw_warn_mismatches(fs[2]);
  uint64_t overflows = tw_stack_overflows();
  if (overflows) {
    char num[24];
    tw_fmt_u64(num, overflows);
    tw_warn("the raw-stack table was full: ", num,
            " allocation(s) formatted their call path instead of finding it "
            "there (slower, same sites)");
  }
  tw_room_end();         /* (sampled here, not by the watcher) */
  tw_maps_sample_live(); /* where the live objects' pages are */
  tw_split_each(tw_sample_split);
  const tw_room_stats *room = tw_room_report(); /* its DRAM objects too */
  if (room->untracked) {
    char num[24];
    tw_fmt_u64(num, room->untracked);
    tw_warn("room: ", num,
            " DRAM object(s) of TIERWISE_ROOM_MIN (ranked: "
            "TIERWISE_ROOM_RANK_MIN) or more were left to first "
            "touch (its table of live objects was full): their pages may "
            "be on the slow node");
  }
  uint32_t n = tw_site_count();
  int np = tw_placement_nsites();
  uint64_t totals[TW_TIER_COUNT] = {0};
  tw_out_str(o, "{\"format\": \"tierwise-run-report\", \"version\": 1, "
                "\"pid\": ");
  tw_out_u64(o, (uint64_t)getpid());
  tw_out_str(o, ", \"named\": ");
  tw_out_str(o, named ? "true" : "false");
  tw_out_str(o, ",\n \"command\": ");
  tw_command(o);
  tw_out_str(o, ",\n \"placement\": ");
  tw_out_json(o, tw_cfg.placement_path ? tw_cfg.placement_path : "");
  tw_out_str(o, ",\n \"depth\": ");
  tw_out_u64(o, (uint64_t)tw_cfg.depth);
  /* the program's own allocator (tw_config.c): null, or its library and
   * what the runtime placed beside it; stood down: why nothing was */
  const char *fa = tw_foreign_name();
  tw_out_str(o, ",\n \"allocator\": ");
  if (fa) {
    tw_out_str(o, "{\"library\": ");
    tw_out_json(o, fa);
    tw_out_str(o, tw_foreign == 1
                      ? ", \"placed\": \"nothing\"}"
                      : ", \"placed\": \"malloc family; operator new/delete "
                        "are the allocator's, not placed\"}");
  } else
    tw_out_str(o, "null");
  tw_out_str(o, ",\n \"stood_down\": ");
  if (tw_foreign == 1) {
    char why[320] = "the program's own allocator (";
    strncat(why, fa, 192);
    strcat(why, ") serves malloc and free: blocks would cross allocators");
    tw_out_json(o, why);
  } else
    tw_out_str(o, "null");
  for (uint32_t i = 0; i < n; i++)
    for (int t = 0; t < TW_TIER_COUNT; t++)
      totals[t] += tw_site_get(i)->tier_bytes[t];
  tw_out_str(o, ",\n \"totals\": ");
  tw_tier_bytes(o, totals);
  tw_backends(o);
  if (tw_cfg.dram_limit) {
    int instants;
    uint64_t reserved = tw_dram_reserved_total(&instants);
    tw_out_str(o, ",\n \"dram_limit\": {\"bytes\": ");
    tw_out_u64(o, tw_cfg.dram_limit);
    tw_out_str(o, ", \"reserved_bytes\": ");
    tw_out_u64(o, reserved);
    tw_out_str(o, ", \"instants\": ");
    tw_out_u64(o, reserved ? (uint64_t)instants : 0);
    if (tw_cfg.dram_limit_auto) { /* its share of the node's room */
      tw_out_str(o, ", \"local_ranks\": ");
      tw_out_u64(o, tw_cfg.local_ranks);
      tw_out_str(o, ", \"local_ranks_from\": ");
      tw_out_json(o, tw_cfg.local_ranks_from ? tw_cfg.local_ranks_from : "");
    }
    tw_out_str(o, reserved ? ", \"policy\": \"rank reservations\"}"
                           : ", \"policy\": \"first-come\"}");
  }
  tw_report_room(o, room);
  tw_out_str(o, ",\n \"sites\": [");
  /* per placement site, summed in one pass over the sites (a placement of
   * 12,000 sites against as many sites: no product) */
  tw_psum *sum = np ? tw_internal_alloc((size_t)np * sizeof(*sum)) : NULL;
  if (sum)
    memset(sum, 0, (size_t)np * sizeof(*sum));
  for (uint32_t i = 0; sum && i < n; i++) {
    tw_site *s = tw_site_get(i);
    if (s->placed < 0 || s->placed >= np)
      continue;
    tw_psum *q = &sum[s->placed];
    q->allocs += s->allocs;
    q->fb += s->fallback_bytes;
    q->fa += s->fallback_allocs;
    for (int t = 0; t < TW_TIER_COUNT; t++)
      q->b[t] += s->tier_bytes[t];
    for (int k = 0; k < TW_REPORT_NODES; k++) {
      q->nodes[k] += s->node_pages[k];
      q->run_nodes[k] += s->run_node_pages[k];
    }
    q->sampled += s->pages_sampled;
    q->run_sampled += s->run_pages_sampled;
  }
  tw_nodeset cpus;
  int have_cpus = tw_numa_cpu_nodes(&cpus) > 0;
  for (int p = 0, first = 1; sum && p < np; p++) {
    if (tw_placement_quiet(p))
      continue; /* counted: "untracked_default_sites" */
    const uint64_t *b = sum[p].b;
    uint64_t allocs = sum[p].allocs, fb = sum[p].fb, fa = sum[p].fa;
    tw_out_str(o, !first ? ",\n  {\"stack\": " : "\n  {\"stack\": ");
    first = 0;
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
    tw_nodes(o, sum[p].nodes, sum[p].sampled);
    if (sum[p].run_sampled)
      tw_nodes_when(o, sum[p].run_nodes, sum[p].run_sampled, "_during_run");
    if (tw_placement_tier(p) == TW_TIER_DRAM && have_cpus)
      tw_dram_elsewhere(o, p, sum[p].nodes, &cpus);
    tw_report_plan(o, p);
    tw_report_room_site(o, p);
    tw_out_str(o, ", \"matched\": ");
    tw_out_str(o, allocs ? "true}" : "false}");
  }
  tw_out_str(o, "],\n \"untracked_default_sites\": ");
  tw_out_u64(o, (uint64_t)tw_placement_nquiet());
  const char *pc_path, *pc = tw_pcache_state(&pc_path);
  if (*pc) {
    tw_out_str(o, ",\n \"placement_cache\": {\"state\": ");
    tw_out_json(o, pc);
    tw_out_str(o, ", \"path\": ");
    tw_out_json(o, pc_path);
    tw_out_str(o, "}");
  }
  tw_out_str(o, ",\n \"unmatched\": [");
  for (uint32_t i = 0, first = 1; i < n; i++) {
    tw_site *s = tw_site_get(i);
    int api = __atomic_load_n(&s->api, __ATOMIC_RELAXED);
    if (s->placed >= 0 || (s->bytes < tw_cfg.unmatched_min && !api))
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
    tw_out_str(o, api ? ", \"api\": true}" : "}");
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
  tw_out_str(o, ", \"stack_overflows\": ");
  tw_out_u64(o, overflows);
  tw_out_str(o, "},\n \"warnings\": [");
  for (int i = 0, nw = tw_warnings_count(); i < nw; i++) {
    tw_out_str(o, i ? ", " : "");
    tw_out_json(o, tw_warning(i));
  }
  tw_out_str(o, "]}\n");
  if (tw_out_close(o, tmp, path))
    tw_warn("cannot write the run report ", path, "");
}
