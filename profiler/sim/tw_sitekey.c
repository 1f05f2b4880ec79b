/* SPDX-License-Identifier: MIT */
/* Site identity for the tierwise Valgrind tool (advisor/FORMATS.md "Site
 * identity"): frames MODULE+0xOFFSET, innermost first, leading allocator
 * frames removed, at most `depth` user frames. Valgrind's stack traces give
 * the PC for frame 0 and (return address - 1) for outer frames on amd64, which
 * is the address the contract asks for; OFFSET subtracts the DebugInfo text
 * bias. Valgrind's unwinder may walk past _start into the stack; a frame
 * whose address is not executable ends the trace, as libunwind's does (the
 * runtime's traces must be equal). Also records each module's path for modules.csv. */
#include "pub_tool_basics.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_mallocfree.h"

#include "tw_sim.h"

#define MAX_MODULES 512
static struct {
  HChar *name, *path;
} modules[MAX_MODULES];
static UInt n_modules;

static const HChar *base_name(const HChar *path) {
  const HChar *slash = VG_(strrchr)(path, '/');
  return slash ? slash + 1 : path;
}

static Bool starts(const HChar *s, const HChar *prefix) {
  return VG_(strncmp)(s, prefix, VG_(strlen)(prefix)) == 0;
}

/* The allocator-module rule of FORMATS.md. */
static Bool is_allocator_module(const HChar *m) {
  return (starts(m, "libtierwise") && VG_(strstr)(m, ".so")) ||
         (starts(m, "vgpreload_") && VG_(strstr)(m, ".so")) ||
         starts(m, "libmemkind.so") || starts(m, "libc.so") ||
         starts(m, "libstdc++.so") || starts(m, "libgcc_s.so") ||
         (starts(m, "ld-linux") && VG_(strstr)(m, ".so")) ||
         starts(m, "libjemalloc");
}

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

/* Frames left after the leading allocator frames are removed. */
UInt tw_user_frames(const Addr *ips, UInt n_ips) {
  DiEpoch ep = VG_(current_DiEpoch)();
  for (UInt i = 0; i < n_ips; i++) {
    const DebugInfo *di = VG_(find_DebugInfo)(ep, ips[i]);
    if (!di || !is_allocator_module(base_name(VG_(DebugInfo_get_filename)(di))))
      return n_ips - i;
  }
  return 0;
}

HChar *tw_format_stack(const Addr *ips, UInt n_ips, Int depth) {
  DiEpoch ep = VG_(current_DiEpoch)();
  HChar *out = VG_(malloc)("tw.stack", depth * 300 + 16);
  UInt len = 0;
  Int kept = 0;
  Bool leading = True;
  out[0] = 0;
  for (UInt i = 0; i < n_ips && kept < depth; i++) {
    const DebugInfo *di = VG_(find_DebugInfo)(ep, ips[i]);
    const HChar *path = di ? VG_(DebugInfo_get_filename)(di) : NULL;
    const HChar *mod = path ? base_name(path) : NULL;
    if (!di) {
      const NSegment *seg = VG_(am_find_nsegment)(ips[i]);
      if (!seg || !seg->hasX)
        break;
    }
    if (leading && mod && is_allocator_module(mod))
      continue;
    leading = False;
    if (mod && VG_(strlen)(mod) < 256) {
      note_module(mod, path);
      len += VG_(sprintf)(out + len, "%s%s+0x%lx", kept ? ";" : "", mod,
                          (UWord)(ips[i] - VG_(DebugInfo_get_text_bias)(di)));
    } else {
      len += VG_(sprintf)(out + len, "%s[anon]+0x%lx", kept ? ";" : "",
                          (UWord)ips[i]);
    }
    kept++;
  }
  return out;
}

void tw_write_modules(TwOut *o) {
  tw_out_printf(o, "module,path,build_id\n");
  for (UInt i = 0; i < n_modules; i++)
    tw_out_printf(o, "%s,%s,\n", modules[i].name, modules[i].path);
}
