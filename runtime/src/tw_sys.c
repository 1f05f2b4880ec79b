/* SPDX-License-Identifier: MIT */
/*
 * Layer 0 (base): raw system calls (mmap/munmap/mbind, so that the
 * runtime's own mappings never pass through its interposed mmap; futex and
 * CPU affinity for the room's watcher), the
 * internal bump allocator for tables that live until exit, the page-owner
 * map, and the debug copies of /proc/self/maps (TIERWISE_MAPS_COPY) the
 * tests read.
 */
#define _GNU_SOURCE
#include "tw_base.h"
#include "tw_clientreq.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <valgrind/helgrind.h>

void *tw_sys_mmap(void *addr, size_t len, int prot, int flags, int fd,
                  off_t off) {
  return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

int tw_sys_munmap(void *addr, size_t len) {
  return (int)syscall(SYS_munmap, addr, len);
}

int tw_sys_mprotect(void *addr, size_t len, int prot) {
  return (int)syscall(SYS_mprotect, addr, len, prot);
}

int tw_sys_nocancel(void) {
  int old = PTHREAD_CANCEL_ENABLE;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
  return old;
}

void tw_sys_cancel_restore(int old) {
  int was;
  pthread_setcancelstate(old, &was);
}

void *tw_sys_mremap(void *addr, size_t len, size_t nlen, int flags, void *to) {
  return (void *)syscall(SYS_mremap, addr, len, nlen, flags, to);
}

long tw_sys_mbind(void *addr, size_t len, int mode, const unsigned long *mask,
                  unsigned long maxnode, unsigned flags) {
  return syscall(SYS_mbind, addr, len, mode, mask, maxnode, flags);
}

/* The room's watcher's waits and wakes (tw_room.c): a private futex. */
void tw_sys_futex_wait(unsigned *word, unsigned seen,
                       const struct timespec *timeout) {
  syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, seen, timeout, NULL, 0);
}

void tw_sys_futex_wake(unsigned *word, int n) {
  syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* The calling thread's CPU affinity: read into \p get, then set to \p set
 * (either NULL). 0: done. */
int tw_sys_affinity(cpu_set_t *get, const cpu_set_t *set) {
  if (get && sched_getaffinity(0, sizeof(*get), get))
    return -1;
  return set ? sched_setaffinity(0, sizeof(*set), set) : 0;
}

/* The calling thread onto CPU \p cpu alone. 0: done. */
int tw_sys_pin(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return tw_sys_affinity(NULL, &one);
}

static pthread_mutex_t tw_internal_lock = PTHREAD_MUTEX_INITIALIZER;

size_t tw_sys_cmdline(char *buf, size_t cap) {
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, buf, cap - 1) : -1;
  if (fd >= 0)
    tw_fd_close(fd);
  if (n < 0)
    n = 0;
  buf[n] = 0;
  return (size_t)n;
}

int tw_sys_open_kernel(const char *dir, const char *name) {
  char path[4096];
  dir = tw_cfg.sysfs_node ? tw_cfg.sysfs_node : dir;
  size_t n = strlen(dir), m = strlen(name);
  if (n + m + 2 > sizeof(path))
    return -1;
  memcpy(path, dir, n);
  path[n] = '/';
  memcpy(path + n + 1, name, m + 1);
  return open(path, O_RDONLY | O_CLOEXEC);
}

ssize_t tw_sys_read_kernel(const char *dir, const char *name, char *buf,
                           size_t cap) {
  int fd = tw_sys_open_kernel(dir, name);
  if (fd < 0)
    return -1;
  ssize_t got = read(fd, buf, cap - 1);
  tw_fd_close(fd);
  buf[got > 0 ? got : 0] = 0;
  return got;
}

/* fork: held across it, so the child's bump pointer is consistent. */
static pthread_mutex_t tw_pmap_lock = PTHREAD_MUTEX_INITIALIZER;

void tw_sys_atfork(int phase) {
  tw_mutex_atfork(&tw_internal_lock, phase);
  tw_mutex_atfork(&tw_pmap_lock, phase);
}

void *tw_internal_alloc(size_t size) {
  static char *cur, *end;
  pthread_mutex_t *lock = &tw_internal_lock;
  size = (size + 15) & ~(size_t)15;
  pthread_mutex_lock(lock);
  if (!cur || (size_t)(end - cur) < size) {
    size_t chunk = size > (1 << 20) ? size : (1 << 20);
    void *m = tw_sys_mmap(NULL, chunk, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
      pthread_mutex_unlock(lock);
      return NULL;
    }
    cur = m;
    end = cur + chunk;
  }
  void *p = cur;
  cur += size;
  pthread_mutex_unlock(lock);
  return p;
}

void *tw_sys_sparse(size_t len) {
  void *m = tw_sys_mmap(NULL, len, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED)
    return NULL;
  syscall(SYS_madvise, m, len, MADV_NOHUGEPAGE);
  return m;
}

int tw_sys_thread(void *(*fn)(void *)) {
  /* libc's pthread_create (the pmu profiler interposes it: tw_thread.c) */
  int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                void *) = dlsym(RTLD_NEXT, "pthread_create");
  pthread_attr_t a;
  sigset_t all, old;
  pthread_t t;
  if (!create || pthread_attr_init(&a))
    return -1;
  pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&a, 64 << 10);
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* (inherited by the thread) */
  int rc = create(&t, &a, fn, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&a);
  return rc ? -1 : 0;
}

void tw_sys_thread_name(const char *name) {
  prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0); /* (best effort) */
}

uint8_t *tw_pmap[TW_PMAP_TOP];
/* One GiB's bytes, all one owner's: shared by every GiB wholly that owner's
 * (a NUMA tier's arena region: tw_be_numa.c), so that marking a reserved
 * region costs no memory per GiB - a byte per page of a region twice a
 * 128 GiB node's size would be 64 MiB of DRAM. Never written once filled;
 * a partial mark in such a GiB copies it first. */
static uint8_t *tw_pmap_whole[TW_OWNERS];
#define TW_PMAP_BYTES ((size_t)1 << 18)

static uint8_t *tw_pmap_new(void) {
  void *m = tw_sys_sparse(TW_PMAP_BYTES); /* a byte per page: sparse */
  if (!m)
    return NULL;
  if (TW_UNLIKELY(tw_vg == TW_VG_OTHER)) {
    /* Raced on by design: a page's mark is written before its address is
     * handed out and cleared before it is unmapped; the order between
     * threads is the kernel's reuse of addresses after munmap, which
     * helgrind does not see. The GiB pointers are read with acquire loads
     * outside the lock and stored (release) under it, which helgrind does
     * not see either (atomics are plain accesses to it). */
    VALGRIND_HG_DISABLE_CHECKING(m, TW_PMAP_BYTES);
    VALGRIND_HG_DISABLE_CHECKING(tw_pmap, sizeof(tw_pmap));
  }
  return m;
}

static int tw_pmap_is_whole(const uint8_t *m) {
  for (int o = 1; o < TW_OWNERS; o++)
    if (m && m == tw_pmap_whole[o])
      return 1;
  return 0;
}

/* The map of one GiB, [a, e) of it to be marked \p owner (tw_pmap_lock
 * held); NULL: nothing to do (unmarking an unmarked GiB) or no memory. */
static uint8_t *tw_pmap_gib(uint8_t **top, size_t from, size_t to, int owner) {
  uint8_t *m = *top;
  int whole = from == 0 && to == TW_PMAP_BYTES;
  if (whole && owner && (!m || tw_pmap_is_whole(m))) {
    if (!tw_pmap_whole[owner] && (tw_pmap_whole[owner] = tw_pmap_new()))
      memset(tw_pmap_whole[owner], owner, TW_PMAP_BYTES);
    if (tw_pmap_whole[owner])
      __atomic_store_n(top, tw_pmap_whole[owner], __ATOMIC_RELEASE);
    return NULL;
  }
  if (whole && !owner && tw_pmap_is_whole(m)) {
    __atomic_store_n(top, NULL, __ATOMIC_RELEASE);
    return NULL;
  }
  if (!m && !owner)
    return NULL; /* nothing marked in this GiB */
  if (!m || tw_pmap_is_whole(m)) {
    uint8_t *n = tw_pmap_new();
    if (!n)
      return NULL;
    if (m)
      memcpy(n, m, TW_PMAP_BYTES);
    __atomic_store_n(top, n, __ATOMIC_RELEASE);
    m = n;
  }
  return m;
}

void tw_pmap_mark(uintptr_t a, size_t len, int owner) {
  uintptr_t end = a + len;
  for (a &= ~(uintptr_t)4095; a < end;) {
    uintptr_t g = a & ~(((uintptr_t)1 << 30) - 1);
    uintptr_t ge = g + ((uintptr_t)1 << 30);
    uintptr_t e = end < ge ? end : ge;
    size_t from = (a - g) >> 12, to = (e - g + 4095) >> 12;
    uint8_t **top = &tw_pmap[(a >> 30) & (TW_PMAP_TOP - 1)];
    uint8_t *m = __atomic_load_n(top, __ATOMIC_ACQUIRE);
    if (!m && !owner) { /* nothing marked in this GiB */
      a = ge;
      continue;
    }
    if (!m || tw_pmap_is_whole(m) || (from == 0 && to == TW_PMAP_BYTES)) {
      pthread_mutex_lock(&tw_pmap_lock);
      m = tw_pmap_gib(top, from, to, owner);
      pthread_mutex_unlock(&tw_pmap_lock);
    }
    if (m)
      for (size_t i = from; i < to; i++)
        m[i] = (uint8_t)owner;
    a = ge;
  }
}

void tw_expand_pid(char *out, size_t cap, const char *pattern) {
  size_t n = 0;
  for (const char *s = pattern; *s && n + 24 < cap; s++) {
    if (s[0] == '%' && s[1] == 'p') {
      n += tw_fmt_u64(out + n, (uint64_t)getpid());
      s++;
    } else
      out[n++] = *s;
  }
  out[n] = 0;
}

/* Called at exit and before each non-DRAM block of 64 KiB or more is
 * released, so that tests can check where objects lived even when their
 * mapping is gone by exit. */
void tw_maps_snapshot(void) {
  char path[4096], buf[4096];
  tw_expand_pid(path, sizeof(path), tw_cfg.maps_copy);
  int in = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  int out =
      open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  ssize_t n;
  while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
    if (write(out, buf, (size_t)n) != n)
      break;
  if (in >= 0)
    tw_fd_close(in);
  if (out >= 0)
    tw_fd_close(out);
}
