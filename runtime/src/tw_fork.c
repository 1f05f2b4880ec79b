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
 * tw_be_memkind.c). The pages stay shared until the child has copied
 * them, so the forking thread waits in its parent handler until the child
 * says so (a pipe: EOF if the child dies first). Before it waited, the
 * parent ran on and changed its pmem-placed objects under the child's copy:
 * in `y=$(echo hi | tr a-z A-Z)` bash's echo child read a pointer its
 * parent had freed and reused, and crashed (runtime/fork-private.test). Other
 * threads of the parent are not stopped (the runtime's locks are held, so
 * they cannot allocate, but their plain stores land): what they change
 * while the child copies may reach the child. Cost: the child copies the
 * pmem footprint at fork, and the forking thread waits for it;
 * posix_spawn/system() do not run atfork handlers and pay nothing. A copy
 * leaves the table: the child's private memory is forked as any other.
 */
#define _GNU_SOURCE
#include "tw_mech.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TW_FILEMAPS 1024

typedef struct tw_filemap {
  uintptr_t addr; /* 0: free slot */
  size_t len;
  int prot;
} tw_filemap;

static tw_filemap tw_filemaps[TW_FILEMAPS];
static pthread_mutex_t tw_filemaps_lock = PTHREAD_MUTEX_INITIALIZER;
static int tw_filemaps_lost; /* table full: fork isolation incomplete */
static int tw_filemaps_n;     /* entries in use (tw_filemaps_lock) */
/* during a fork (tw_filemaps_lock held): the child writes a byte to [1]
 * when its copies are made; the parent reads [0]; -1: no wait */
static int tw_fork_done[2] = {-1, -1};

static void tw_filemap_add(uintptr_t a, size_t len, int prot) {
  for (int i = 0; i < TW_FILEMAPS; i++)
    if (!tw_filemaps[i].addr) {
      tw_filemaps[i] = (tw_filemap){a, len, prot};
      tw_filemaps_n++;
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
    tw_filemaps_n--;
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
      continue;
    }
    tw_filemaps[i].addr = 0; /* private now */
    tw_filemaps_n--;
  }
}

/* The parent's side of a fork with shared mappings: a pipe whose write end
 * the child closes (after a byte) once its copies are made. */
static void tw_fork_wait_open(void) {
  int fds[2];
  if (!tw_filemaps_n || syscall(SYS_pipe2, fds, O_CLOEXEC))
    return; /* (no pipe: the child copies while the parent runs on) */
  tw_fork_done[0] = tw_fd_keep(fds[0]);
  tw_fork_done[1] = tw_fd_keep(fds[1]);
}

static void tw_fork_wait_close(int end) {
  if (tw_fork_done[end] >= 0) {
    tw_fd_forget(tw_fork_done[end]);
    tw_fd_close(tw_fork_done[end]);
    tw_fork_done[end] = -1;
  }
}

static void tw_fork_wait(void) {
  tw_fork_wait_close(1);
  if (tw_fork_done[0] < 0)
    return;
  char c;
  while (syscall(SYS_read, tw_fork_done[0], &c, 1) < 0 && errno == EINTR)
    ;
  tw_fork_wait_close(0);
}

static void tw_fork_copied(void) {
  tw_fork_wait_close(0);
  if (tw_fork_done[1] >= 0) {
    char c = 1;
    while (syscall(SYS_write, tw_fork_done[1], &c, 1) < 0 && errno == EINTR)
      ;
  }
  tw_fork_wait_close(1);
}

void tw_fork_atfork(int phase) {
  if (phase == 0) {
    pthread_mutex_lock(&tw_filemaps_lock);
    tw_fork_wait_open();
  } else if (phase == 1) {
    int saved = errno;
    tw_fork_wait();
    errno = saved;
    pthread_mutex_unlock(&tw_filemaps_lock);
  } else {
    int saved = errno;
    tw_fork_child();
    tw_fork_copied();
    errno = saved;
    pthread_mutex_unlock(&tw_filemaps_lock);
    if (tw_filemaps_lost)
      tw_warn("fork: some slow-tier mappings could not be made private; ",
              "the child may share pmem-placed data with its parent", "");
  }
}
