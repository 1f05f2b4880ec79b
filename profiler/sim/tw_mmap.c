/* SPDX-License-Identifier: MIT */
/* Client anonymous mmaps as heap blocks of the tierwise Valgrind tool, as
 * the runtime's census and placement treat them (runtime/src/tw_mmap.c):
 * a successful mmap with MAP_ANONYMOUS, without MAP_SHARED or MAP_FIXED and
 * of non-zero length becomes a block of `len` bytes whose site is the stack
 * at the call (allocator frames removed: libc's mmap wrapper goes), and
 * munmap ends it. Only mappings the runtime's interposer would see count:
 * the caller of libc's wrapper (frame 1) must be outside the allocator
 * modules of FORMATS.md. That leaves out libc's own mappings (thread
 * stacks, its malloc), ld.so's, memkind's/jemalloc's, the tierwise
 * runtime's (which announces the blocks it serves with client requests)
 * and Valgrind's replacement malloc (no client mmap at all). munmap of any
 * part of a mapping ends the whole block (the runtime ends it on munmap of
 * its start); mremap ends it too (the moved mapping is not tracked). */
#include "pub_tool_basics.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_stacktrace.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

#include "tw_sim.h"
#include "tw_sitekey.h"

/* True when the mmap being returned from was called by user code. */
static Bool called_by_user(ThreadId tid) {
  Addr ips[2];
  if (VG_(get_StackTrace)(tid, ips, 2, NULL, NULL, 0) < 2)
    return False;
  const DebugInfo *di = VG_(find_DebugInfo)(VG_(current_DiEpoch)(), ips[1]);
  return !di ||
         !tw_module_is_allocator(tw_basename(VG_(DebugInfo_get_filename)(di)));
}

void tw_pre_syscall(ThreadId tid, UInt sysno, UWord *args, UInt n_args) {}

void tw_post_syscall(ThreadId tid, UInt sysno, UWord *args, UInt n_args,
                     SysRes res) {
  if (sr_isError(res))
    return;
  if (sysno == __NR_munmap) {
    tw_unmap_range(args[0], args[1]);
  } else if (sysno == __NR_mremap) {
    tw_unmap_range(args[0], args[1]);
  } else if (sysno == __NR_mmap) {
    Addr p = sr_Res(res);
    SizeT len = args[1];
    UWord flags = args[3];
    if (len == 0)
      return;
    /* a mapping over a tracked one replaces it */
    tw_unmap_range(p, len);
    if (!(flags & VKI_MAP_ANONYMOUS) ||
        (flags & (VKI_MAP_SHARED | VKI_MAP_FIXED)))
      return;
    if (!called_by_user(tid))
      return;
    TwBlock *b = tw_new_block(tid, p, len, False);
    b->mapped = True;
  }
}
