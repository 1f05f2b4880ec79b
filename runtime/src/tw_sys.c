/* SPDX-License-Identifier: MIT */
/*
 * Layer 0 (base): raw system calls (mmap/munmap/mbind, so that the
 * runtime's own mappings never pass through its interposed mmap), the
 * internal bump allocator for tables that live until exit, the page-owner
 * map, and the debug copies of /proc/self/maps (TIERWISE_MAPS_COPY) the
 * tests read.
 */
#define _GNU_SOURCE
#include "tw_base.h"
#include "tw_clientreq.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
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

long tw_sys_mbind(void *addr, size_t len, int mode, const unsigned long *mask,
                  unsigned long maxnode, unsigned flags) {
  return syscall(SYS_mbind, addr, len, mode, mask, maxnode, flags);
}

static pthread_mutex_t tw_internal_lock = PTHREAD_MUTEX_INITIALIZER;

size_t tw_sys_cmdline(char *buf, size_t cap) {
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, buf, cap - 1) : -1;
  if (fd >= 0)
    close(fd);
  if (n < 0)
    n = 0;
  buf[n] = 0;
  return (size_t)n;
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

uint8_t *tw_pmap[TW_PMAP_TOP];

void tw_pmap_mark(uintptr_t a, size_t len, int owner) {
  uintptr_t end = a + len;
  for (a &= ~(uintptr_t)4095; a < end; a += 4096) {
    uint8_t **top = &tw_pmap[(a >> 30) & (TW_PMAP_TOP - 1)];
    if (!*top) {
      if (!owner) {
        a = ((a >> 30) + 1) << 30; /* nothing marked in this GiB */
        a -= 4096;
        continue;
      }
      pthread_mutex_lock(&tw_pmap_lock);
      if (!*top) {
        void *m =
            tw_sys_mmap(NULL, 1u << 18, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m != MAP_FAILED && TW_UNLIKELY(tw_vg == TW_VG_OTHER))
          /* Raced on by design: a page's mark is written before its
           * address is handed out and cleared before it is unmapped; the
           * order between threads is the kernel's reuse of addresses after
           * munmap, which helgrind does not see. */
          VALGRIND_HG_DISABLE_CHECKING(m, 1u << 18);
        if (m != MAP_FAILED)
          __atomic_store_n(top, (uint8_t *)m, __ATOMIC_RELEASE);
      }
      pthread_mutex_unlock(&tw_pmap_lock);
      if (!*top)
        return;
    }
    (*top)[(a >> 12) & ((1u << 18) - 1)] = (uint8_t)owner;
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
    close(in);
  if (out >= 0)
    close(out);
}
