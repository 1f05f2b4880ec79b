/* SPDX-License-Identifier: MIT */
/* Site identity for the tierwise Valgrind tool (advisor/FORMATS.md "Site
 * identity"): resolves Valgrind stack traces into frames (module basename,
 * address - DebugInfo text bias) and formats them with the runtime's shared,
 * libc-free site-key code (runtime/common/tw_sitekey.c), so sim stacks equal
 * the runtime's. Valgrind gives the PC for frame 0 and (return address - 1)
 * for outer frames on amd64, the address the contract asks for. Its unwinder
 * may walk past _start into the stack; a frame whose address is not
 * executable ends the trace, as libunwind's does. Also records each module's
 * path for modules.csv. */
#include "pub_tool_aspacemgr.h"
#include "pub_tool_basics.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_mallocfree.h"

#include "tw_sim.h"
#include "tw_sitekey.h"

#define MAX_MODULES 512
#define MAX_FRAMES 96
static struct {
  HChar *name, *path;
} modules[MAX_MODULES];
static UInt n_modules;

static void note_module(const HChar *name, const HChar *path) {
  for (UInt i = 0; i < n_modules; i++)
    if (VG_(strcmp)(modules[i].name, name) == 0)
      return;
  if (n_modules == MAX_MODULES)
    return;
  modules[n_modules].name = VG_(strdup)("tw.mod", name);
  modules[n_modules].path = VG_(strdup)("tw.mod", path);
  n_modules++;
}

/* Resolves up to n_ips addresses into frames; returns how many. *ended:
 * a non-executable address ended the trace before n_ips. */
static UInt resolve(const Addr *ips, UInt n_ips, tw_frame *frames, Bool note,
                    Bool *ended) {
  *ended = False;
  DiEpoch ep = VG_(current_DiEpoch)();
  UInt n = 0;
  for (UInt i = 0; i < n_ips && n < MAX_FRAMES; i++) {
    const DebugInfo *di = VG_(find_DebugInfo)(ep, ips[i]);
    if (!di) {
      const NSegment *seg = VG_(am_find_nsegment)(ips[i]);
      if (!seg || !seg->hasX) {
        *ended = True;
        break;
      }
      frames[n].module = NULL;
      frames[n++].offset = ips[i];
      continue;
    }
    const HChar *path = VG_(DebugInfo_get_filename)(di);
    frames[n].module = tw_basename(path);
    frames[n++].offset = ips[i] - VG_(DebugInfo_get_text_bias)(di);
    if (note)
      note_module(tw_basename(path), path);
  }
  return n;
}

UInt tw_user_frames(const Addr *ips, UInt n_ips, Bool *ended) {
  DiEpoch ep = VG_(current_DiEpoch)();
  UInt i = 0;
  for (; i < n_ips; i++) {
    const DebugInfo *di = VG_(find_DebugInfo)(ep, ips[i]);
    if (!di || !tw_module_is_allocator(
                   tw_basename(VG_(DebugInfo_get_filename)(di))))
      break;
  }
  /* frames past a non-executable address are cut by resolve() */
  tw_frame frames[MAX_FRAMES];
  return resolve(ips + i, n_ips - i, frames, False, ended);
}

HChar *tw_format_stack(const Addr *ips, UInt n_ips, Int depth) {
  tw_frame frames[MAX_FRAMES];
  Bool ended;
  UInt n = resolve(ips, n_ips, frames, True, &ended);
  SizeT cap = (SizeT)(depth > (Int)n ? depth : (Int)n) * 300 + 16;
  HChar *out = VG_(malloc)("tw.stack", cap);
  tw_stack_format(out, cap, frames, (int)n, depth);
  return out;
}

void tw_write_modules(TwOut *o) {
  tw_out_printf(o, "module,path,build_id\n");
  for (UInt i = 0; i < n_modules; i++)
    tw_out_printf(o, "%s,%s,\n", modules[i].name, modules[i].path);
}
