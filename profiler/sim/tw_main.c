/* SPDX-License-Identifier: MIT */
/* The tierwise Valgrind tool (`valgrind --tool=tierwise`): registration,
 * options, client requests, and the raw profile it writes at exit
 * (PREFIX.sites.csv, .objects.csv, .modules.csv, .tiers.csv, .stats.json;
 * see profiler/README.md). */
#include "pub_tool_basics.h"
#include "pub_tool_clientstate.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_replacemalloc.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_vki.h"
#include "pub_tool_xarray.h" /* before pub_tool_clientstate.h */

#include "tw_clientreq.h"
#include "tw_sim.h"

Int tw_depth = 6;
Long tw_objects_min_bytes = 4096;
/* Internal tier index: 0 untagged, else tw_tier (tierwise.h) + 1. */
const HChar *tw_tier_names[TW_MAX_TIERS] = {
    "default", "dram",    "pmem",    "kmem",    "hbw",     "numa:0",
    "numa:1",  "numa:2",  "numa:3",  "numa:4",  "numa:5",  "numa:6",
    "numa:7",  "numa:8",  "numa:9",  "numa:10", "numa:11", "numa:12",
    "numa:13", "numa:14", "numa:15"};
TwOut tw_objects_out;

static const HChar *clo_out = "tierwise-sim.%p";
static Long clo_llc_size = 8 << 20, clo_l1_size = 32 << 10;
static Long clo_llc_ways = 16, clo_l1_ways = 8, clo_line = 64;
static HChar *out_prefix;
static Bool any_tier;

/* ---- buffered output ---- */

Bool tw_out_open(TwOut *o, const HChar *suffix) {
  HChar *path = VG_(malloc)("tw.path", VG_(strlen)(out_prefix) + 32);
  VG_(sprintf)(path, "%s%s", out_prefix, suffix);
  SysRes r = VG_(open)(path, VKI_O_CREAT | VKI_O_TRUNC | VKI_O_WRONLY, 0644);
  o->used = 0;
  o->fd = sr_isError(r) ? -1 : (Int)sr_Res(r);
  if (o->fd < 0)
    VG_(umsg)("tierwise: cannot write %s\n", path);
  VG_(free)(path);
  return o->fd >= 0;
}

static void out_flush(TwOut *o) {
  if (o->fd >= 0 && o->used)
    VG_(write)(o->fd, o->buf, o->used);
  o->used = 0;
}

void tw_out_printf(TwOut *o, const HChar *fmt, ...) {
  va_list vargs;
  if (o->used + 4096 > sizeof o->buf)
    out_flush(o);
  va_start(vargs, fmt);
  o->used += VG_(vsnprintf)(o->buf + o->used, 4096, fmt, vargs);
  va_end(vargs);
}

void tw_out_close(TwOut *o) {
  out_flush(o);
  if (o->fd >= 0)
    VG_(close)(o->fd);
  o->fd = -1;
}

/* A JSON string literal (quoted, escaped) of any length. */
static void out_json_string(TwOut *o, const HChar *str) {
  HChar chunk[512];
  UInt n = 0;
  chunk[n++] = '"';
  for (const HChar *c = str ? str : ""; *c; c++) {
    UChar u = (UChar)*c;
    if (n > sizeof chunk - 8) {
      chunk[n] = 0;
      tw_out_printf(o, "%s", chunk);
      n = 0;
    }
    if (u == '"' || u == '\\') {
      chunk[n++] = '\\';
      chunk[n++] = u;
    } else if (u < 0x20) {
      n += VG_(sprintf)(chunk + n, "\\u%04x", u);
    } else {
      chunk[n++] = u;
    }
  }
  chunk[n++] = '"';
  chunk[n] = 0;
  tw_out_printf(o, "%s", chunk);
}

/* The client's own command line: its executable, then its arguments. */
static void out_client_command(TwOut *o) {
  tw_out_printf(o, "[");
  out_json_string(o, VG_(args_the_exename));
  for (Word i = 0;
       VG_(args_for_client) && i < VG_(sizeXA)(VG_(args_for_client)); i++) {
    tw_out_printf(o, ", ");
    out_json_string(o, *(HChar **)VG_(indexXA)(VG_(args_for_client), i));
  }
  tw_out_printf(o, "]");
}

/* ---- options ---- */

static Bool tw_process_cmd_line_option(const HChar *arg) {
  const HChar *roi;
  if VG_STR_CLO (arg, "--out", clo_out) {
  } else if VG_STR_CLO (arg, "--roi", roi) {
    if (!tw_roi_set(roi))
      VG_(fmsg_bad_option)(arg, "expected all, markers or a function name\n");
  } else if (VG_STR_CLO(arg, "--alloc-fn", roi) ||
             VG_STR_CLO(arg, "--free-fn", roi)) {
    if (!tw_poolfn_option(roi, arg[2] == 'f'))
      VG_(fmsg_bad_option)(arg, "expected NAME or NAME:ARG (ARG 1-6), at "
                                "most 8 functions\n");
  } else if VG_BINT_CLO (arg, "--depth", tw_depth, 1, 64) {
  } else if VG_BINT_CLO (arg, "--llc-size", clo_llc_size, 1024, 1LL << 36) {
  } else if VG_BINT_CLO (arg, "--llc-ways", clo_llc_ways, 1, 64) {
  } else if VG_BINT_CLO (arg, "--l1-size", clo_l1_size, 256, 1LL << 30) {
  } else if VG_BINT_CLO (arg, "--l1-ways", clo_l1_ways, 1, 64) {
  } else if VG_BINT_CLO (arg, "--line-size", clo_line, 8, 4096) {
  } else if VG_BINT_CLO (arg, "--rob", tw_rob, 1, 1 << 16) {
  } else if VG_BINT_CLO (arg, "--mshr", tw_mshr, 1, 1 << 16) {
  } else if VG_BINT_CLO (arg, "--objects-min-bytes", tw_objects_min_bytes, 0,
                         1LL << 62) {
  } else
    return VG_(replacement_malloc_process_cmd_line_option)(arg);
  return True;
}

static void tw_print_usage(void) {
  VG_(printf)(
      "    --out=PREFIX            raw profile files PREFIX.sites.csv etc;\n"
      "                            %%p is the pid [tierwise-sim.%%p]\n"
      "    --depth=N               user frames per site [6]\n"
      "    --llc-size=BYTES --llc-ways=N   simulated LLC [8388608, 16]\n"
      "    --l1-size=BYTES --l1-ways=N     simulated D1 [32768, 8]\n"
      "    --line-size=BYTES       cache line size [64]\n"
      "    --rob=N                 instructions in the interval model's window:\n"
      "                            the reorder buffer (Skylake/Cascade Lake) [224]\n"
      "    --mshr=N                LLC misses in flight at once (L1D fill\n"
      "                            buffers, Skylake) [10]\n"
      "    --objects-min-bytes=N   objects.csv lists blocks >= N [4096]\n"
      "    --roi=all|markers|FUNC  count accesses over the whole run, between\n"
      "                            TIERWISE_ROI_BEGIN/END, or inside FUNC [all]\n"
      "    --alloc-fn=NAME[:ARG]   a pool allocator's hand-out function: each\n"
      "                            call is an allocation at its caller's site\n"
      "                            (size: argument ARG, else to the end of the\n"
      "                            heap block returned into)\n"
      "    --free-fn=NAME[:ARG]    its release function (pointer: ARG [1])\n");
}

static void tw_print_debug_usage(void) { VG_(printf)("    (none)\n"); }

/* ---- client requests ---- */

static Bool tw_handle_client_request(ThreadId tid, UWord *arg, UWord *ret) {
  switch (arg[0]) {
  case VG_USERREQ__MALLOCLIKE_BLOCK:
    tw_new_block(tid, arg[1], arg[2], True);
    break;
  case VG_USERREQ__FREELIKE_BLOCK:
    tw_release_block(arg[1], False);
    break;
  case VG_USERREQ__RESIZEINPLACE_BLOCK: {
    /* New extent: treat as free + allocation at the same address. */
    tw_release_block(arg[1], False);
    tw_new_block(tid, arg[1], arg[3], True);
    break;
  }
  case TW_CLREQ_CODE_ROI_BEGIN:
  case TW_CLREQ_CODE_ROI_END:
    tw_roi_marker(arg[0] == TW_CLREQ_CODE_ROI_BEGIN);
    break;
  case TW_CLREQ_CODE_HELLO: /* the runtime: announce every block with its tier */
    *ret = TW_CLREQ_HELLO_REPLY;
    return True;
  case TW_CLREQ_CODE_TIER:
    /* tw_tier of tierwise.h; internal tier 0 means "not tagged" */
    tw_set_block_tier(arg[1], (UInt)arg[2] + 1);
    any_tier = True;
    break;
  default:
    return False;
  }
  *ret = 0;
  return True;
}

/* ---- start and end ---- */

/* A forked child writes its own profile (prefix re-expanded with its pid)
 * counting only what it does after the fork; blocks live at the fork stay
 * tracked. */
static void tw_fork_child(ThreadId tid) {
  out_prefix = VG_(expand_file_name)("--out", clo_out);
  tw_cache_reset();
  tw_objects_out.used = 0; /* unflushed rows belong to the parent */
  if (tw_objects_out.fd >= 0)
    VG_(close)(tw_objects_out.fd);
  tw_out_open(&tw_objects_out, ".objects.csv");
  tw_out_printf(&tw_objects_out, "site,size,alloc_time,free_time\n");
  for (UInt i = 0; i < tw_n_slots; i++) {
    UInt site = tw_slots[i].site, tier = tw_slots[i].tier;
    VG_(memset)(&tw_slots[i], 0, sizeof tw_slots[i]);
    tw_slots[i].site = site;
    tw_slots[i].tier = tier;
  }
  for (UInt s = 0; s < tw_n_sites; s++) {
    tw_sites[s].allocs = tw_sites[s].bytes_allocated = 0;
    tw_sites[s].peak_bytes = tw_sites[s].cur_bytes;
  }
  tw_roi_fork_child();
}

static void tw_post_clo_init(void) {
  out_prefix = VG_(expand_file_name)("--out", clo_out);
  VG_(atfork)(NULL, NULL, tw_fork_child);
  tw_cache_init(clo_llc_size, clo_llc_ways, clo_line, clo_l1_size, clo_l1_ways);
  tw_heap_init();
  tw_out_open(&tw_objects_out, ".objects.csv");
  tw_out_printf(&tw_objects_out, "site,size,alloc_time,free_time\n");
}

/* Output site id: real sites first (0..n-1), then the pseudo-sites. */
static UInt out_id(UInt site) {
  UInt n_real = tw_n_sites - TW_FIRST_SITE;
  return site >= TW_FIRST_SITE ? site - TW_FIRST_SITE : n_real + site;
}

static void write_site_row(TwOut *o, UInt site, const TwCounts *c) {
  const TwSite *s = &tw_sites[site];
  if (site < TW_FIRST_SITE)
    tw_out_printf(o, "%u,%s,%s,,,,", out_id(site), s->stack, s->stack);
  else
    tw_out_printf(o, "%u,%s,,%llu,%llu,%llu,", out_id(site), s->stack,
                  s->allocs, s->bytes_allocated, s->peak_bytes);
  tw_out_printf(o, "%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu",
                c->loads, c->stores, c->llc_load_misses, c->llc_store_misses,
                c->writebacks, c->llc_stream_misses, c->llc_overlapped_misses,
                c->llc_dependent_misses, c->llc_inflight_misses, c->atomics);
  for (Int i = 0; i < TW_SLICES; i++) /* empty for a pseudo-site: no extent */
    if (site < TW_FIRST_SITE)
      tw_out_printf(o, ",");
    else
      tw_out_printf(o, ",%llu", c->llc_miss_slice[i]);
  /* pool_stack: the block site that held most of this site's hand-outs */
  UInt best = 0;
  for (UInt k = 1; k < s->n_pool_hosts; k++)
    if (s->pool_host_bytes[k] > s->pool_host_bytes[best])
      best = k;
  tw_out_printf(o, ",%s\n",
                s->n_pool_hosts ? tw_sites[s->pool_host[best]].stack : "");
}

static Int exit_code;

static void write_sites(void) {
  TwOut *o = VG_(malloc)("tw.out", sizeof *o);
  TwCounts *sum = VG_(calloc)("tw.sum", tw_n_sites, sizeof *sum);
  for (UInt i = 0; i < tw_n_slots; i++)
    tw_counts_add(&sum[tw_slots[i].site], &tw_slots[i].n, NULL);
  if (tw_out_open(o, ".sites.csv")) {
    tw_out_printf(o, "site,stack,location,allocs,bytes_allocated,peak_bytes,"
                     "loads,stores,llc_load_misses,llc_store_misses,"
                     "writebacks,llc_stream_misses,llc_overlapped_misses,"
                     "llc_dependent_misses,llc_inflight_misses,atomics");
    for (Int i = 0; i < TW_SLICES; i++)
      tw_out_printf(o, ",llc_miss_slice%d", i);
    tw_out_printf(o, ",pool_stack\n");
    for (UInt s = TW_FIRST_SITE; s < tw_n_sites; s++)
      write_site_row(o, s, &sum[s]);
    for (UInt s = 0; s < TW_FIRST_SITE; s++)
      write_site_row(o, s, &sum[s]);
    tw_out_close(o);
  }
  if (any_tier && tw_out_open(o, ".tiers.csv")) {
    tw_out_printf(o, "site,tier,allocs,bytes_allocated,loads,stores,"
                     "llc_load_misses,llc_store_misses,writebacks,"
                     "llc_stream_misses,llc_overlapped_misses,"
                     "llc_dependent_misses,llc_inflight_misses,atomics\n");
    for (UInt i = 0; i < tw_n_slots; i++) {
      TwSlot *c = &tw_slots[i];
      if (!c->allocs && !c->n.loads && !c->n.stores && !c->n.writebacks)
        continue; /* a tier this site never used */
      const HChar *name = tw_tier_names[c->tier];
      HChar dflt[16];
      if (!name) {
        VG_(sprintf)(dflt, "tier%u", c->tier - 1);
        name = dflt;
      }
      tw_out_printf(o,
                    "%u,%s,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,"
                    "%llu,%llu\n",
                    out_id(c->site), name, c->allocs, c->bytes_allocated,
                    c->n.loads, c->n.stores, c->n.llc_load_misses,
                    c->n.llc_store_misses, c->n.writebacks,
                    c->n.llc_stream_misses, c->n.llc_overlapped_misses,
                    c->n.llc_dependent_misses, c->n.llc_inflight_misses,
                    c->n.atomics);
    }
    tw_out_close(o);
  }
  if (tw_out_open(o, ".modules.csv")) {
    tw_write_modules(o);
    tw_out_close(o);
  }
  if (tw_out_open(o, ".stats.json")) {
    tw_out_printf(o,
                  "{\"instructions\": %llu, \"llc_size\": %lld, "
                  "\"llc_ways\": %lld, \"l1_size\": %lld, \"l1_ways\": %lld, "
                  "\"line_size\": %lld, \"rob\": %lld, \"mshr\": %lld, "
                  "\"sites\": %u, \"exit_code\": %d, ",
                  tw_icount, clo_llc_size, clo_llc_ways, clo_l1_size,
                  clo_l1_ways, clo_line, tw_rob, tw_mshr,
                  tw_n_sites - TW_FIRST_SITE, exit_code);
    tw_roi_write_stats(o);
    tw_out_printf(o, ", \"command\": ");
    out_client_command(o);
    tw_out_printf(o, "}\n");
    tw_out_close(o);
  }
  VG_(free)(sum);
  VG_(free)(o);
}

static void tw_fini(Int exitcode) {
  exit_code = exitcode;
  tw_cache_flush();
  tw_roi_fini();
  tw_heap_fini();
  tw_out_close(&tw_objects_out);
  write_sites();
  if (VG_(clo_verbosity) > 0)
    VG_(umsg)("tierwise: %llu guest instructions, %u sites -> %s.*\n",
              tw_icount, tw_n_sites - TW_FIRST_SITE, out_prefix);
}

static void tw_pre_clo_init(void) {
  VG_(details_name)("tierwise");
  VG_(details_version)("0.1.0");
  VG_(details_description)("per allocation site cache simulation");
  VG_(details_copyright_author)("tierwise authors, MIT licence");
  VG_(details_bug_reports_to)("the tierwise project");
  VG_(details_avg_translation_sizeB)(600);
  VG_(basic_tool_funcs)(tw_post_clo_init, tw_instrument, tw_fini);
  VG_(needs_command_line_options)(tw_process_cmd_line_option, tw_print_usage,
                                  tw_print_debug_usage);
  VG_(needs_client_requests)(tw_handle_client_request);
  VG_(needs_syscall_wrapper)(tw_pre_syscall, tw_post_syscall);
  VG_(needs_libc_freeres)();
  VG_(needs_cxx_freeres)();
  tw_register_malloc_replacement();
}

VG_DETERMINE_INTERFACE_VERSION(tw_pre_clo_init)
