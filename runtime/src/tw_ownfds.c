/* SPDX-License-Identifier: MIT */
/*
 * Layer 0 (base): the runtime's own long-lived descriptors (its output
 * files, the pmem tier's memkind file), kept from the program: moved to a
 * high number, close-on-exec, and listed, so that the interposed close
 * family (tw_close.c) leaves them open; and the close the runtime itself
 * uses, past the interposed one.
 */
#define _GNU_SOURCE
#include "tw_base.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

int tw_fd_close(int fd) { return (int)syscall(SYS_close, fd); }

/* The runtime's own descriptors. A program that closes every descriptor
 * above 2 (daemons, closefrom(3), close_range) and opens its own files got
 * the numbers the runtime still wrote to: memkind's pmem file was
 * fallocate'd and mapped through the program's data file (its contents
 * replaced), the census wrote its rows into it. Kept ones sit at the top
 * of the first 1,024 numbers (below the soft RLIMIT_NOFILE: a larger
 * limit would only grow the descriptor table), where programs that pick
 * numbers (dup2 onto 3..9, a shell's 10+) do not look, and the interposed
 * close family (tw_close.c) leaves them open. */
#define TW_FDS_MAX 16
static int tw_fds[TW_FDS_MAX]; /* fd + 1; 0: free (atomic) */
static int tw_nfds;            /* slots in use, an upper bound (atomic) */
/* (lock-free: the run report is also written from a signal handler) */

int tw_fd_keep(int fd) {
  if (fd < 0)
    return fd;
  struct rlimit rl;
  long top = getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur > 1024
                 ? 1024
                 : (long)rl.rlim_cur;
  int moved = top > 128 ? fcntl(fd, F_DUPFD_CLOEXEC, (int)(top - 64)) : -1;
  if (moved >= 0) {
    tw_fd_close(fd);
    fd = moved;
  } else
    fcntl(fd, F_SETFD, FD_CLOEXEC);
  for (int i = 0; i < TW_FDS_MAX; i++) {
    int free_ = 0;
    if (__atomic_compare_exchange_n(&tw_fds[i], &free_, fd + 1, 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
      int n = __atomic_load_n(&tw_nfds, __ATOMIC_RELAXED);
      while (n < i + 1 &&
             !__atomic_compare_exchange_n(&tw_nfds, &n, i + 1, 1,
                                          __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        ;
      break;
    }
  } /* (full: kept high, not guarded) */
  return fd;
}

void tw_fd_forget(int fd) {
  for (int i = 0; i < TW_FDS_MAX; i++) {
    int mine = fd + 1;
    __atomic_compare_exchange_n(&tw_fds[i], &mine, 0, 0, __ATOMIC_ACQ_REL,
                                __ATOMIC_RELAXED);
  }
}

int tw_fd_next(unsigned lo, unsigned hi) {
  int n = __atomic_load_n(&tw_nfds, __ATOMIC_ACQUIRE), best = -1;
  for (int i = 0; i < n; i++) {
    int f = __atomic_load_n(&tw_fds[i], __ATOMIC_ACQUIRE) - 1;
    if (f >= 0 && (unsigned)f >= lo && (unsigned)f <= hi &&
        (best < 0 || f < best))
      best = f;
  }
  return best;
}

int tw_fd_kept(int fd) {
  return fd >= 0 && tw_fd_next((unsigned)fd, (unsigned)fd) == fd;
}

__thread int tw_fd_capture;
