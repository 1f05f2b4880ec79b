/* SPDX-License-Identifier: MIT */
/*
 * Layer 4 (entry points): pass-through interposers of the calls that hand a
 * buffer of the program's to the kernel, only in the sample profiler
 * (libtierwise-pmu.so; each checks one flag and passes the call on, so the
 * runtime's own I/O may pass through them: twlayers.py):
 * a page the touch sampler armed (tw_touch.c) faults for the program's own
 * accesses, but the kernel would fail the call with EFAULT instead. Each
 * call registers its buffer, which gives back the armed pages in it and
 * keeps the sampler from arming any until the call returns
 * (tw_touch_io_begin/end). Scatter-gather calls register the span of their
 * vectors. Also here: waits on futex words (below), the program's
 * mprotect and signal masks.
 * glibc's stdio reads into its own buffers (at most BUFSIZ, below
 * the sample backend's smallest sampled object) and into the caller's
 * buffer for large freads (registered here); readdir's getdents64 goes to
 * the DIR's buffer (registered whole). What goes to the kernel through
 * syscall(2) (but futex), io_uring or another process (process_vm_readv)
 * is not seen: docs/known-gaps.md.
 */
#define _GNU_SOURCE
#include "tw_paths.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define TW_EXPORT __attribute__((visibility("default")))
#undef fread_unlocked /* bits/stdio.h's inline forms under -O2 */
#undef fwrite_unlocked

/* The next definition of \p name (libc's), looked up once. */
#define TW_REAL(type, name)                                                    \
  static type real_;                                                           \
  if (!real_)                                                                  \
    real_ = (type)dlsym(RTLD_NEXT, name);

/* One registered call: \p call runs between begin and end, errno kept.
 * The runtime's own calls (tw_in_core: its threads, its writing of files)
 * pass straight on: they hand the kernel none of the program's objects. */
#define TW_AROUND(buf, len, rtype, call)                                       \
  ({                                                                           \
    int k_ = tw_in_core ? -1 : tw_touch_io_begin((buf), (len));                \
    rtype r_ = (call);                                                         \
    int e_ = errno;                                                            \
    tw_touch_io_end(k_);                                                       \
    errno = e_;                                                                \
    r_;                                                                        \
  })

/* The program's own mprotect: sampled pages in the range are given back
 * first, so that the sampler does not undo the program's protection. */
TW_EXPORT int mprotect(void *addr, size_t len, int prot) {
  tw_touch_release(addr, len);
  return tw_sys_mprotect(addr, len, prot);
}

/* A thread that blocks SIGSEGV and touches a sampled page would be killed:
 * the kernel resets a blocked synchronous signal to its default. While the
 * sampler owns SIGSEGV, the program's masks leave it out (blocking it
 * never kept a fault from reaching the program anyway). */
static const sigset_t *tw_no_segv(const sigset_t *set, sigset_t *copy) {
  if (!set || !tw_touch_owns_segv() || sigismember(set, SIGSEGV) != 1)
    return set;
  *copy = *set;
  sigdelset(copy, SIGSEGV);
  return copy;
}

TW_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old) {
  typedef int (*fn_t)(int, const sigset_t *, sigset_t *);
  TW_REAL(fn_t, "pthread_sigmask")
  sigset_t copy;
  if (!real_)
    return ENOSYS;
  return real_(how, how == SIG_UNBLOCK ? set : tw_no_segv(set, &copy), old);
}

TW_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old) {
  typedef int (*fn_t)(int, const sigset_t *, sigset_t *);
  TW_REAL(fn_t, "sigprocmask")
  if (!real_) {
    errno = ENOSYS;
    return -1;
  }
  sigset_t copy;
  return real_(how, how == SIG_UNBLOCK ? set : tw_no_segv(set, &copy), old);
}

/* The span of an I/O vector's buffers: [*lo, *lo + return). */
static size_t tw_iov_span(const struct iovec *v, int n, const void **lo) {
  uintptr_t a = UINTPTR_MAX, b = 0;
  for (int i = 0; v && i < n; i++) {
    if (!v[i].iov_len)
      continue;
    uintptr_t s = (uintptr_t)v[i].iov_base;
    a = s < a ? s : a;
    b = s + v[i].iov_len > b ? s + v[i].iov_len : b;
  }
  *lo = (const void *)a;
  return b > a ? b - a : 0;
}

#define TW_BUF_CALL(ret, name, params, buf, len, args)                         \
  TW_EXPORT ret name params {                                                  \
    typedef ret(*fn_t) params;                                                 \
    TW_REAL(fn_t, #name)                                                       \
    if (!real_) {                                                              \
      errno = ENOSYS;                                                          \
      return (ret)-1;                                                          \
    }                                                                          \
    return TW_AROUND(buf, len, ret, real_ args);                               \
  }

TW_BUF_CALL(ssize_t, read, (int fd, void *b, size_t n), b, n, (fd, b, n))
TW_BUF_CALL(ssize_t, pread, (int fd, void *b, size_t n, off_t o), b, n,
            (fd, b, n, o))
TW_BUF_CALL(ssize_t, pread64, (int fd, void *b, size_t n, off_t o), b, n,
            (fd, b, n, o))
TW_BUF_CALL(ssize_t, write, (int fd, const void *b, size_t n), b, n,
            (fd, b, n))
TW_BUF_CALL(ssize_t, pwrite, (int fd, const void *b, size_t n, off_t o), b, n,
            (fd, b, n, o))
TW_BUF_CALL(ssize_t, pwrite64, (int fd, const void *b, size_t n, off_t o), b,
            n, (fd, b, n, o))
TW_BUF_CALL(ssize_t, recv, (int fd, void *b, size_t n, int f), b, n,
            (fd, b, n, f))
TW_BUF_CALL(ssize_t, recvfrom,
            (int fd, void *b, size_t n, int f, struct sockaddr *a,
             socklen_t *al),
            b, n, (fd, b, n, f, a, al))
TW_BUF_CALL(ssize_t, send, (int fd, const void *b, size_t n, int f), b, n,
            (fd, b, n, f))
TW_BUF_CALL(ssize_t, sendto,
            (int fd, const void *b, size_t n, int f, const struct sockaddr *a,
             socklen_t al),
            b, n, (fd, b, n, f, a, al))
TW_BUF_CALL(size_t, fread, (void *b, size_t s, size_t n, FILE *fp), b, s * n,
            (b, s, n, fp))
TW_BUF_CALL(size_t, fread_unlocked, (void *b, size_t s, size_t n, FILE *fp), b,
            s * n, (b, s, n, fp))
TW_BUF_CALL(size_t, fwrite, (const void *b, size_t s, size_t n, FILE *fp), b,
            s * n, (b, s, n, fp))
TW_BUF_CALL(size_t, fwrite_unlocked,
            (const void *b, size_t s, size_t n, FILE *fp), b, s * n,
            (b, s, n, fp))
TW_BUF_CALL(int, poll, (struct pollfd * f, nfds_t n, int t), f,
            n * sizeof(struct pollfd), (f, n, t))
TW_BUF_CALL(int, epoll_wait, (int e, struct epoll_event *v, int n, int t), v,
            n > 0 ? (size_t)n * sizeof(*v) : 0, (e, v, n, t))
TW_BUF_CALL(int, epoll_pwait,
            (int e, struct epoll_event *v, int n, int t, const sigset_t *m), v,
            n > 0 ? (size_t)n * sizeof(*v) : 0, (e, v, n, t, m))

/* readdir fills the DIR's own buffer (one allocation with the DIR, at most
 * 1 MiB: glibc's __alloc_dir). */
TW_BUF_CALL(struct dirent *, readdir, (DIR * d), d, 1 << 20, (d))
TW_BUF_CALL(struct dirent64 *, readdir64, (DIR * d), d, 1 << 20, (d))

#define TW_IOV_CALL(name, params, iov, cnt, args)                              \
  TW_EXPORT ssize_t name params {                                              \
    typedef ssize_t(*fn_t) params;                                             \
    TW_REAL(fn_t, #name)                                                       \
    if (!real_) {                                                              \
      errno = ENOSYS;                                                          \
      return -1;                                                               \
    }                                                                          \
    const void *lo_;                                                           \
    size_t n_ = tw_iov_span(iov, cnt, &lo_);                                   \
    return TW_AROUND(lo_, n_, ssize_t, real_ args);                            \
  }

TW_IOV_CALL(readv, (int fd, const struct iovec *v, int n), v, n, (fd, v, n))
TW_IOV_CALL(writev, (int fd, const struct iovec *v, int n), v, n, (fd, v, n))
TW_IOV_CALL(preadv, (int fd, const struct iovec *v, int n, off_t o), v, n,
            (fd, v, n, o))
TW_IOV_CALL(pwritev, (int fd, const struct iovec *v, int n, off_t o), v, n,
            (fd, v, n, o))
TW_IOV_CALL(preadv64, (int fd, const struct iovec *v, int n, off_t o), v, n,
            (fd, v, n, o))
TW_IOV_CALL(pwritev64, (int fd, const struct iovec *v, int n, off_t o), v, n,
            (fd, v, n, o))
TW_IOV_CALL(preadv2, (int fd, const struct iovec *v, int n, off_t o, int f), v,
            n, (fd, v, n, o, f))
TW_IOV_CALL(pwritev2, (int fd, const struct iovec *v, int n, off_t o, int f),
            v, n, (fd, v, n, o, f))
TW_IOV_CALL(recvmsg, (int fd, struct msghdr *m, int f),
            m ? m->msg_iov : NULL, m ? (int)m->msg_iovlen : 0, (fd, m, f))
TW_IOV_CALL(sendmsg, (int fd, const struct msghdr *m, int f),
            m ? m->msg_iov : NULL, m ? (int)m->msg_iovlen : 0, (fd, m, f))

/* Waits in the kernel on a word of the program's: futex(FUTEX_WAIT) reads
 * it there, and an armed page fails the wait with EFAULT, which glibc's
 * condition variables, semaphores and rwlocks (and libstdc++'s atomic
 * waits, through syscall) treat as fatal. Each registers its objects for
 * the call, as the I/O calls do their buffers. (A plain mutex's wait
 * ignores the error and retries its atomic, whose fault is ours: not
 * registered, mutexes are locked too often.) */
#define TW_SYNC_CALL(ret, name, params, a, alen, b, blen, args)                \
  TW_EXPORT ret name params {                                                  \
    typedef ret(*fn_t) params;                                                 \
    TW_REAL(fn_t, #name)                                                       \
    if (!real_)                                                                \
      return (ret)ENOSYS;                                                      \
    int kb_ = tw_in_core ? -1 : tw_touch_io_begin((b), (blen));                \
    ret r_ = TW_AROUND(a, alen, ret, real_ args);                              \
    int e_ = errno;                                                            \
    tw_touch_io_end(kb_);                                                      \
    errno = e_;                                                                \
    return r_;                                                                 \
  }

TW_SYNC_CALL(int, pthread_cond_wait, (pthread_cond_t * c, pthread_mutex_t *m),
             c, sizeof(*c), m, sizeof(*m), (c, m))
TW_SYNC_CALL(int, pthread_cond_timedwait,
             (pthread_cond_t * c, pthread_mutex_t *m, const struct timespec *t),
             c, sizeof(*c), m, sizeof(*m), (c, m, t))
TW_SYNC_CALL(int, pthread_cond_clockwait,
             (pthread_cond_t * c, pthread_mutex_t *m, clockid_t k,
              const struct timespec *t),
             c, sizeof(*c), m, sizeof(*m), (c, m, k, t))
TW_SYNC_CALL(int, pthread_rwlock_rdlock, (pthread_rwlock_t * l), l, sizeof(*l),
             NULL, 0, (l))
TW_SYNC_CALL(int, pthread_rwlock_wrlock, (pthread_rwlock_t * l), l, sizeof(*l),
             NULL, 0, (l))
TW_SYNC_CALL(int, pthread_barrier_wait, (pthread_barrier_t * b), b,
             sizeof(*b), NULL, 0, (b))
TW_SYNC_CALL(int, sem_wait, (sem_t * s), s, sizeof(*s), NULL, 0, (s))
TW_SYNC_CALL(int, sem_timedwait, (sem_t * s, const struct timespec *t), s,
             sizeof(*s), NULL, 0, (s, t))

/* syscall(2) for futex: the word's page, for the call (libstdc++'s
 * std::atomic wait, std::counting_semaphore). Other system calls pass. */
TW_EXPORT long syscall(long n, ...) {
  typedef long (*fn_t)(long, ...);
  TW_REAL(fn_t, "syscall")
  va_list ap;
  va_start(ap, n);
  long a[6];
  for (int i = 0; i < 6; i++)
    a[i] = va_arg(ap, long);
  va_end(ap);
  if (!real_) {
    errno = ENOSYS;
    return -1;
  }
  if (n != SYS_futex || tw_in_core)
    return real_(n, a[0], a[1], a[2], a[3], a[4], a[5]);
  return TW_AROUND((const void *)a[0], sizeof(uint32_t), long,
                   real_(n, a[0], a[1], a[2], a[3], a[4], a[5]));
}
