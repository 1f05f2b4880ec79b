/* SPDX-License-Identifier: MIT */
/*
 * Layer 4 (entry points): the interposed close, close_range, closefrom,
 * dup2, dup3 and mkstemp, which keep the runtime's own descriptors
 * (tw_fd_keep: its output files, the pmem tier's memkind file) from a
 * program that closes every descriptor it did not open (a daemon's start,
 * closefrom(3), close_range(3, ~0U, 0)) and opens its own files: the
 * kernel gives the lowest free number, so a descriptor the runtime still
 * used would be the program's file (memkind fallocate'd and mapped its
 * pmem file through it). A close of a kept descriptor succeeds and leaves
 * it open; a range is closed around them; a dup onto one fails with EBUSY
 * (said once: kept ones are numbered near 1,000, where programs do not
 * choose numbers); mkstemp, while this thread makes the pmem kind
 * (tw_fd_capture), returns a kept descriptor.
 */
#define _GNU_SOURCE
#include "tw_base.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TW_EXPORT __attribute__((visibility("default")))

extern int __close(int);        /* glibc's, exported */
extern int __dup2(int, int);    /* glibc's, exported */

TW_EXPORT int close(int fd) {
  if (TW_UNLIKELY(tw_fd_kept(fd)))
    return 0;
  return __close(fd);
}

static long tw_close_range_sys(unsigned lo, unsigned hi, int flags) {
  return syscall(SYS_close_range, lo, hi, flags);
}

TW_EXPORT int close_range(unsigned first, unsigned last, int flags) {
  if ((flags & CLOSE_RANGE_CLOEXEC) || first > last ||
      tw_fd_next(first, last) < 0)
    return (int)tw_close_range_sys(first, last, flags);
  if ((flags & CLOSE_RANGE_UNSHARE) && unshare(CLONE_FILES))
    return -1;
  flags &= ~CLOSE_RANGE_UNSHARE;
  for (unsigned lo = first;;) {
    int k = tw_fd_next(lo, last);
    if (k < 0)
      return (int)tw_close_range_sys(lo, last, flags);
    if ((unsigned)k > lo && tw_close_range_sys(lo, (unsigned)k - 1, flags))
      return -1;
    if ((unsigned)k == last)
      return 0;
    lo = (unsigned)k + 1;
  }
}

TW_EXPORT void closefrom(int lowfd) {
  unsigned lo = lowfd < 0 ? 0 : (unsigned)lowfd;
  if (tw_fd_next(lo, ~0U) < 0) {
    static void (*real)(int);
    if (!real)
      *(void **)&real = dlsym(RTLD_NEXT, "closefrom");
    if (real) {
      real(lowfd);
      return;
    }
  }
  if (close_range(lo, ~0U, 0) && errno == ENOSYS) /* (before Linux 5.9) */
    for (long fd = lo, top = sysconf(_SC_OPEN_MAX); fd < top; fd++)
      close((int)fd);
}

static int tw_dup_onto_kept(int oldfd, int newfd) {
  if (oldfd == newfd || !tw_fd_kept(newfd))
    return 0;
  static int said;
  if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
    tw_warn("the program duplicated a descriptor onto one of the runtime's "
            "own (its output or pmem file); refused with EBUSY", "", "");
  errno = EBUSY;
  return 1;
}

TW_EXPORT int dup2(int oldfd, int newfd) {
  if (TW_UNLIKELY(tw_dup_onto_kept(oldfd, newfd)))
    return -1;
  return __dup2(oldfd, newfd);
}

TW_EXPORT int dup3(int oldfd, int newfd, int flags) {
  if (TW_UNLIKELY(tw_dup_onto_kept(oldfd, newfd)))
    return -1;
  return (int)syscall(SYS_dup3, oldfd, newfd, flags);
}

TW_EXPORT int mkstemp(char *tmpl) {
  static int (*real)(char *);
  if (!real)
    *(void **)&real = dlsym(RTLD_NEXT, "mkstemp");
  if (!real) {
    errno = ENOSYS;
    return -1;
  }
  int fd = real(tmpl);
  return tw_fd_capture && fd >= 0 ? tw_fd_keep(fd) : fd;
}
