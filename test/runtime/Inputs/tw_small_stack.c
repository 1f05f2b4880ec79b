/* SPDX-License-Identifier: MIT */
/*
 * A thread with little stack left allocates (small-stack.test): the thread
 * runs on a 256 KiB stack with an inaccessible guard below it, recurses
 * until about LEFT bytes of it are left, and there makes new call paths'
 * allocations (a small malloc, a calloc, a 200,000-byte malloc that a
 * placement may split, a realloc growing it, posix_memalign) and frees
 * them. A runtime whose malloc needs much more stack than glibc's
 * overflows into the guard (SIGSEGV) where the program alone does not.
 *
 *   tw_small_stack LEFT      prints "ok" and a checksum of the blocks
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define STACK (256 * 1024)
#define GUARD (64 * 1024)

static size_t left;
static char *lo;
static unsigned long sum;

static void use(unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i += 4096)
    p[i] = (unsigned char)(i >> 12);
  sum = sum * 31 + p[0] + p[n - 1];
}

__attribute__((noinline)) static void allocate(void) {
  unsigned char *a = malloc(100);
  unsigned char *b = calloc(3, 1000);
  unsigned char *c = malloc(200000);
  void *d = NULL;
  if (!a || !b || !c || posix_memalign(&d, 64, 5000))
    abort();
  use(a, 100);
  use(b, 3000);
  use(c, 200000);
  unsigned char *c2 = realloc(c, 600000);
  if (!c2)
    abort();
  use(c2, 600000);
  use(d, 5000);
  free(a);
  free(b);
  free(c2);
  free(d);
}

__attribute__((noinline)) static void deep(int d) {
  volatile char pad[256];
  pad[0] = (char)d;
  if ((size_t)((char *)__builtin_frame_address(0) - lo) > left + 512)
    deep(d + 1);
  else
    allocate();
  (void)pad[0];
}

static void *run(void *arg) {
  (void)arg;
  deep(0);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  left = strtoul(argv[1], NULL, 0);
  char *m = mmap(NULL, STACK + GUARD, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED || mprotect(m, GUARD, PROT_NONE))
    return 3;
  lo = m + GUARD;
  pthread_attr_t at;
  pthread_t t;
  pthread_attr_init(&at);
  pthread_attr_setstack(&at, lo, STACK);
  if (pthread_create(&t, &at, run, NULL) || pthread_join(t, NULL))
    return 4;
  printf("ok %lx\n", sum);
  return 0;
}
