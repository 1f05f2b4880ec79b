/* SPDX-License-Identifier: MIT */
/*
 * Layer 1 (mechanisms). fork() and the file-backed slow tier. memkind's pmem kind maps its file
 * MAP_SHARED and has no fork support (memkind issue #224): after fork the
 * parent and the child would share every pmem-placed object (a write in one
 * shows in the other) and both would grow the same file under one arena
 * state - the child crashed in libmemkind in ~3% of runs of
 * test/runtime/threads.test. So the runtime remembers the file mappings
 * memkind makes for a tier (tw_mmap.c calls tw_fork_note_map/unmap) and, in
 * the child, replaces each with a private anonymous copy (mmap + memcpy +
 * mremap: only system calls, safe in an atfork child handler). The child
 * then owns a private snapshot, as fork promises, and its new slow-tier
 * allocations come from a fresh pmem kind (the pmem backend's fork hook,
 * tw_be_memkind.c). Cost: the child
 * copies the pmem footprint at fork; posix_spawn/system() do not run atfork
 * handlers and pay nothing.
 */
#define _GNU_SOURCE
#include "tw_mech.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#define TW_FILEMAPS 1024

typedef struct tw_filemap {
  uintptr_t addr; /* 0: free slot */
  size_t len;
  int prot;
} tw_filemap;

static tw_filemap tw_filemaps[TW_FILEMAPS];
static pthread_mutex_t tw_filemaps_lock = PTHREAD_MUTEX_INITIALIZER;
static int tw_filemaps_lost; /* table full: fork isolation incomplete */

static void tw_filemap_add(uintptr_t a, size_t len, int prot) {
  for (int i = 0; i < TW_FILEMAPS; i++)
    if (!tw_filemaps[i].addr) {
      tw_filemaps[i] = (tw_filemap){a, len, prot};
      return;
    }
  tw_filemaps_lost = 1;
}

void tw_fork_note_map(void *p, size_t len, int prot, int flags, int fd) {
  if (fd < 0 || !(flags & MAP_SHARED))
    return;
  pthread_mutex_lock(&tw_filemaps_lock);
  tw_filemap_add((uintptr_t)p, len, prot);
  pthread_mutex_unlock(&tw_filemaps_lock);
}

/* memkind unmapped [a, a+len): trim or split the records it overlaps. */
void tw_fork_note_unmap(void *p, size_t len) {
  uintptr_t a = (uintptr_t)p, e = a + len;
  pthread_mutex_lock(&tw_filemaps_lock);
  for (int i = 0; i < TW_FILEMAPS; i++) {
    tw_filemap m = tw_filemaps[i];
    uintptr_t ma = m.addr, me = m.addr + m.len;
    if (!ma || e <= ma || a >= me)
      continue;
    tw_filemaps[i].addr = 0;
    if (ma < a)
      tw_filemap_add(ma, a - ma, m.prot);
    if (e < me)
      tw_filemap_add(e, me - e, m.prot);
  }
  pthread_mutex_unlock(&tw_filemaps_lock);
}

static void tw_fork_child(void) {
  for (int i = 0; i < TW_FILEMAPS; i++) {
    tw_filemap m = tw_filemaps[i];
    if (!m.addr)
      continue;
    void *copy = tw_sys_mmap(NULL, m.len, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (copy == MAP_FAILED) {
      tw_filemaps_lost = 1;
      continue;
    }
    if (m.prot & PROT_READ)
      memcpy(copy, (void *)m.addr, m.len);
    if (m.prot != (PROT_READ | PROT_WRITE))
      mprotect(copy, m.len, m.prot);
    if (tw_sys_mremap(copy, m.len, m.len, MREMAP_MAYMOVE | MREMAP_FIXED,
                      (void *)m.addr) == MAP_FAILED) {
      tw_sys_munmap(copy, m.len);
      tw_filemaps_lost = 1;
    }
  }
  pthread_mutex_unlock(&tw_filemaps_lock);
  if (tw_filemaps_lost)
    tw_warn("fork: some slow-tier mappings could not be made private; ",
            "the child may share pmem-placed data with its parent", "");
}

void tw_fork_atfork(int phase) {
  if (phase == 0)
    pthread_mutex_lock(&tw_filemaps_lock);
  else if (phase == 1)
    pthread_mutex_unlock(&tw_filemaps_lock);
  else
    tw_fork_child();
}
