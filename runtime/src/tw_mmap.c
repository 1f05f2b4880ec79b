/* SPDX-License-Identifier: MIT */
/*
 * Layer 4 (entry points): the interposed mmap, mremap and munmap. Anonymous private
 * mappings (not MAP_FIXED) of the program are allocations (tw_mapped.c).
 * Mappings made while a backend call runs for a tier (tw_in_tier: memkind
 * growing an arena) mark their pages as that tier's in the page-owner map,
 * which tells the header-less paths (tw_place.c) who owns a pointer,
 * shared file mappings among them are noted for fork (tw_fork.c), and the
 * tier's backend may bind them (tw_tier_mapped: jemalloc's metadata of a
 * NUMA node's arena goes to that node, not to DRAM).
 */
#define _GNU_SOURCE
#include "tw_paths.h"

#include <stdarg.h>
#include <sys/mman.h>

__attribute__((visibility("default"))) void *
mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  int mode = tw_mode_now;
  if (tw_in_tier) { /* memkind mapping memory for a tier */
    void *p = tw_sys_mmap(addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED) {
      tw_pmap_mark((uintptr_t)p, len, tw_in_tier);
      tw_fork_note_map(p, len, prot, flags, fd);
      tw_tier_mapped(tw_in_tier, p, len, flags);
    }
    return p;
  }
  if (tw_in_core || (mode != TW_MODE_CENSUS && mode != TW_MODE_PLACE) ||
      !(flags & MAP_ANONYMOUS) || (flags & (MAP_FIXED | MAP_SHARED)) ||
      len == 0)
    return tw_sys_mmap(addr, len, prot, flags, fd, off);
  return tw_pl_map(addr, len, prot, flags, fd, off);
}

__attribute__((visibility("default"))) void *
mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  return mmap(addr, len, prot, flags, fd, off);
}

__attribute__((visibility("default"))) void *
mremap(void *old, size_t old_len, size_t new_len, int flags, ...) {
  void *to = NULL, *out;
  tw_touch_release(old, old_len); /* sampled pages keep no protection */
  if (flags & MREMAP_FIXED) {
    va_list ap;
    va_start(ap, flags);
    to = va_arg(ap, void *);
    va_end(ap);
  }
  if (!tw_in_tier && !tw_in_core && old &&
      tw_pl_remap(old, old_len, new_len, flags, to, &out))
    return out;
  return tw_sys_mremap(old, old_len, new_len, flags, to);
}

__attribute__((visibility("default"))) int munmap(void *addr, size_t len) {
  int rc;
  tw_touch_release(addr, len); /* sampled pages keep no protection */
  if (!tw_in_tier && !tw_in_core && addr && tw_pl_unmap(addr, len, &rc))
    return rc;
  /* memkind gives tier pages back (in one of our calls or from a thread of
   * its own): unmarked before they are unmapped. Once unmapped, the kernel
   * may hand the range at once to another thread's new tier mapping or split
   * block, whose marks and fork note this would erase (the frees of its
   * blocks would then go to glibc). jemalloc never reuses a range whose
   * munmap failed. */
  if (len && !((uintptr_t)addr & 4095) &&
      (tw_in_tier || tw_page_owner(addr))) {
    tw_pmap_mark((uintptr_t)addr, len, 0);
    tw_fork_note_unmap(addr, len);
  }
  return tw_sys_munmap(addr, len);
}
