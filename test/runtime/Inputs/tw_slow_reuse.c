/* SPDX-License-Identifier: MIT */
/*
 * The slow tiers' thread cache (test/runtime/slow-cache.test). get() is the
 * one allocation site the test places in pmem.
 *   tw_slow_reuse reuse N ROUNDS   malloc N bytes, touch every page, free,
 *                                  ROUNDS times: prints `same R` (rounds
 *                                  that got the first round's block back)
 *   tw_slow_reuse fork N           frees a block, forks; the child's block
 *                                  of the same size, printed as `object
 *                                  child ADDR N` (stderr), must be a new
 *                                  pmem block, not the parent's cached one
 *                                  (a private copy in the child): `child
 *                                  block new` (stderr; glibc alone reuses)
 *   tw_slow_reuse threads T N      T threads one after another each
 *                                  allocate and free 32 blocks of N bytes
 * Each prints a sum of the contents it wrote and read.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static unsigned char *get(size_t n) {
  unsigned char *p = malloc(n); /* the placed site */
  __asm__ volatile("" ::: "memory");
  return p;
}

static size_t n;

static void *worker(void *arg) {
  unsigned char *b[32];
  unsigned long sum = 0;
  for (int i = 0; i < 32; i++) {
    b[i] = get(n);
    memset(b[i], i + (int)(long)arg, n);
  }
  for (int i = 0; i < 32; i++) {
    sum += b[i][n - 1];
    free(b[i]);
  }
  return (void *)sum;
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  n = (size_t)atol(argv[2]);
  unsigned long sum = 0;
  if (!strcmp(argv[1], "reuse") && argc > 3) {
    int rounds = atoi(argv[3]), same = 0;
    unsigned char *first = NULL;
    for (int r = 0; r < rounds; r++) {
      unsigned char *p = get(n);
      if (!first)
        first = p;
      else
        same += p == first;
      for (size_t i = 0; i < n; i += 4096)
        p[i] = (unsigned char)(r + i);
      sum += p[n / 2];
      free(p);
    }
    printf("same %d\n", same);
  } else if (!strcmp(argv[1], "fork")) {
    unsigned char *p = get(n);
    memset(p, 1, n);
    free(p); /* cached in this thread */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      unsigned char *q = get(n);
      memset(q, 2, n);
      fprintf(stderr, "object child %p %zu\nchild block %s\n", (void *)q, n,
              q == p ? "reused" : "new"); /* reused: the parent's */
      fflush(stderr);
      free(q);
      _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    printf("child exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128);
    unsigned char *r = get(n);
    memset(r, 3, n);
    sum += r[0];
    free(r);
  } else if (!strcmp(argv[1], "threads") && argc > 3) {
    int t = atoi(argv[3]);
    for (int i = 0; i < t; i++) {
      pthread_t th;
      void *s;
      pthread_create(&th, NULL, worker, (void *)(long)i);
      pthread_join(th, &s);
      sum += (unsigned long)s;
    }
  } else
    return 2;
  printf("sum %lu\n", sum);
  return 0;
}
