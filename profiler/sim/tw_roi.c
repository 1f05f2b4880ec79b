/* SPDX-License-Identifier: MIT */
/* Region of interest of the tierwise Valgrind tool (--roi): which part of the
 * run the access counts describe. Graph programs spend much of a run
 * building the graph; the papers this tool follows time only the kernels.
 *
 *   --roi=all      the whole run (default)
 *   --roi=markers  between TIERWISE_ROI_BEGIN() and TIERWISE_ROI_END()
 *                  (tierwise.h client requests; they nest)
 *   --roi=FUNC     while the thread that entered function FUNC is inside it
 *                  (like callgrind's --toggle-collect; all threads count, as
 *                  OpenMP workers run the caller's parallel regions). FUNC is
 *                  a symbol name; a C++ name matches with or without its
 *                  parameter list.
 *   --roi=symbols:NAME,NAME,...
 *                  the same, entering any of these functions, each NAME a
 *                  symbol as in the symbol table (mangled, clone suffix
 *                  included; run with --demangle=no so Valgrind reports
 *                  them so). `tierwise profile --roi` finds them from any
 *                  spelling of the name (advisor/tierwise/roi.py).
 *
 * The cache is simulated over the whole run (so the region starts with the
 * cache, and the dirty lines, that the program left), and allocation
 * statistics (allocs, peak bytes, object lifetimes) stay whole-run: the
 * memory must be placed whenever it is allocated. Only the access counters
 * of the slots are windowed, without a test on the access path: the
 * counters are snapshotted when the region is entered and the difference is
 * accumulated when it is left.
 *
 * FUNC is left when a return of the entering thread leaves the stack pointer
 * above the one FUNC was entered with (so a longjmp out of it ends the
 * region at the next return in that thread). A FUNC entered again while the
 * region is open (recursion, another thread) does not restart it. */
#include "pub_tool_basics.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_options.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_threadstate.h"

#include "tw_sim.h"

typedef enum { ROI_ALL, ROI_MARKERS, ROI_FUNC } RoiMode;

static RoiMode mode = ROI_ALL;
static HChar *func_name;
/* symbols: mode: the names (pointers into names_buf), else NULL */
static HChar *names_buf;
static const HChar **names;
static UInt n_names;
static Bool inside;
static UInt marker_depth;
static ThreadId entry_tid;
static Addr entry_sp;
static ULong entries, icount_at_entry, roi_icount;
/* Access counters of each slot at entry (snapshot) and summed over the
 * finished visits (acc); grown with tw_slots. */
static TwCounts *snap, *acc;
static UInt cap;

Bool tw_roi_set(const HChar *spec) {
  if (VG_(strcmp)(spec, "all") == 0)
    mode = ROI_ALL;
  else if (VG_(strcmp)(spec, "markers") == 0)
    mode = ROI_MARKERS;
  else if (*spec) {
    for (const HChar *c = spec; *c; c++)
      if (*c == '"' || *c == '\\' || (UChar)*c < 0x20)
        return False; /* not a symbol name */
    mode = ROI_FUNC;
    func_name = VG_(strdup)("tw.roi", spec);
    if (VG_(strncmp)(spec, "symbols:", 8) == 0) {
      names_buf = VG_(strdup)("tw.roi", spec + 8);
      n_names = 1;
      for (const HChar *c = names_buf; *c; c++)
        n_names += *c == ',';
      names = VG_(malloc)("tw.roi", n_names * sizeof *names);
      HChar *save = NULL, *tok = VG_(strtok_r)(names_buf, ",", &save);
      n_names = 0;
      for (; tok; tok = VG_(strtok_r)(NULL, ",", &save))
        names[n_names++] = tok;
      if (n_names == 0)
        return False;
    }
  } else
    return False;
  return True;
}

Bool tw_roi_is_function(void) { return mode == ROI_FUNC; }

static void grow(void) {
  if (tw_n_slots <= cap)
    return;
  UInt n = tw_n_slots * 2;
  snap = VG_(realloc)("tw.roi", snap, n * sizeof *snap);
  acc = VG_(realloc)("tw.roi", acc, n * sizeof *acc);
  VG_(memset)(snap + cap, 0, (n - cap) * sizeof *snap);
  VG_(memset)(acc + cap, 0, (n - cap) * sizeof *acc);
  cap = n;
}

static void enter(void) {
  grow();
  for (UInt i = 0; i < tw_n_slots; i++)
    snap[i] = tw_slots[i].n;
  /* Slots created inside the region start from zero: snap[i] for
   * i >= tw_n_slots is zero (cleared when grown, never written). */
  inside = True;
  entries++;
  icount_at_entry = tw_icount;
}

static void leave(void) {
  grow();
  for (UInt i = 0; i < tw_n_slots; i++)
    tw_counts_add(&acc[i], &tw_slots[i].n, &snap[i]);
  VG_(memset)(snap, 0, cap * sizeof *snap);
  inside = False;
  roi_icount += tw_icount - icount_at_entry;
}

void tw_roi_marker(Bool begin) {
  if (mode != ROI_MARKERS)
    return;
  if (begin && marker_depth++ == 0)
    enter();
  else if (!begin && marker_depth > 0 && --marker_depth == 0)
    leave();
}

Bool tw_roi_is_entry(Addr a) {
  const HChar *name;
  if (!VG_(get_fnname_if_entry)(VG_(current_DiEpoch)(), a, &name))
    return False;
  if (names) {
    /* the symbol's name, without a @VERSION */
    for (UInt i = 0; i < n_names; i++) {
      SizeT n = VG_(strlen)(names[i]);
      if (VG_(strncmp)(name, names[i], n) == 0 &&
          (name[n] == 0 || name[n] == '@'))
        return True;
    }
    return False;
  }
  SizeT n = VG_(strlen)(func_name);
  /* "f" matches "f" and, for demangled C++, "f(int, long)" */
  return VG_(strncmp)(name, func_name, n) == 0 &&
         (name[n] == 0 || name[n] == '(');
}

VG_REGPARM(1) void tw_roi_func_entered(Addr sp) {
  if (inside)
    return;
  entry_tid = VG_(get_running_tid)();
  entry_sp = sp;
  enter();
}

VG_REGPARM(1) void tw_roi_returned(Addr sp) {
  if (inside && sp > entry_sp && VG_(get_running_tid)() == entry_tid)
    leave();
}

void tw_roi_fork_child(void) {
  /* The child's counters restart from zero (tw_main.c); so does its
   * region, open if the parent's was. */
  VG_(memset)(snap, 0, cap * sizeof *snap);
  VG_(memset)(acc, 0, cap * sizeof *acc);
  entries = roi_icount = 0;
  icount_at_entry = tw_icount;
}

void tw_roi_fini(void) {
  if (mode == ROI_ALL)
    return;
  if (inside)
    leave(); /* the region was still open at exit */
  grow();
  for (UInt i = 0; i < tw_n_slots; i++)
    tw_slots[i].n = acc[i];
  /* Under -q (the sim backend) say nothing: one process of a job may never
   * enter the region (a helper daemon); the backend checks them all. */
  if (entries == 0 && VG_(clo_verbosity) > 0)
    VG_(umsg)("tierwise: --roi=%s: the region was never entered; all access "
              "counts are zero\n",
              mode == ROI_MARKERS ? "markers" : func_name);
}

void tw_roi_write_stats(TwOut *o) {
  tw_out_printf(o, "\"roi\": {\"mode\": \"%s\", \"function\": ",
                mode == ROI_ALL       ? "all"
                : mode == ROI_MARKERS ? "markers"
                                      : "function");
  if (mode == ROI_FUNC)
    tw_out_printf(o, "\"%s\"", func_name); /* a symbol name: no quotes */
  else
    tw_out_printf(o, "null");
  tw_out_printf(o, ", \"entries\": %llu, \"instructions\": %llu}",
                mode == ROI_ALL ? 1ULL : entries,
                mode == ROI_ALL ? tw_icount : roi_icount);
}
