/* SPDX-License-Identifier: MIT */
/* Test program: fork while other threads free slow-tier blocks (issue 40
 * item 2). Two threads allocate, fill, check and free blocks of 16 B to
 * 300 KB through one site, `slow_block` (the placement puts it in pmem),
 * keeping up to SLOTS of them live each, while the main thread forks
 * ROUNDS times. Each child allocates, checks and frees a few blocks of the
 * site and leaves by _exit; a child that has not exited after 60 s is
 * killed (SIGALRM) and counted as failed. The workers go on until the
 * forks are done and they have made at least MIN_OPS operations each.
 * Usage: tw_fork_frees [ROUNDS [MIN_OPS]]. Prints the counts, the workers'
 * failures (a block whose bytes changed) and a checksum that depends only
 * on ROUNDS, not on placement or timing. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define SLOTS 64
#define MAX_BYTES (300u * 1000u)

static atomic_int stop;
static long min_ops;

__attribute__((noinline)) static unsigned char *slow_block(size_t n) {
  return malloc(n);
}

static uint64_t next(uint64_t *x) { /* xorshift64* */
  *x ^= *x >> 12;
  *x ^= *x << 25;
  *x ^= *x >> 27;
  return *x * 0x2545f4914f6cdd1dull;
}

/* 16 B .. 300 KB: mostly small (jemalloc's slabs), a third of them large
 * blocks of their own extents (whose frees give file pages back). */
static size_t pick(uint64_t *rng) {
  uint64_t r = next(rng);
  switch (r % 3) {
  case 0:
    return 16 + (r >> 8) % 1024;
  case 1:
    return 1024 + (r >> 8) % (32u << 10);
  default:
    return (32u << 10) + (r >> 8) % (MAX_BYTES - (32u << 10) + 1);
  }
}

/* The bytes written and checked: the first and last 64 and one in 4096. */
static void touch(unsigned char *p, size_t n, unsigned char v, int check,
                  long *bad) {
  for (size_t i = 0; i < n; i = i < 64 || i + 64 >= n ? i + 1
                                  : i + 4096 < n - 64 ? i + 4096
                                                      : n - 64) {
    if (!check)
      p[i] = (unsigned char)(v + i);
    else if (p[i] != (unsigned char)(v + i)) {
      ++*bad;
      return;
    }
  }
}

typedef struct worker {
  uint64_t rng;
  long ops, bad;
  unsigned char *p[SLOTS];
  size_t n[SLOTS];
} worker;

static void *work(void *arg) {
  worker *w = arg;
  while (!atomic_load(&stop) || w->ops < min_ops) {
    int k = (int)(next(&w->rng) % SLOTS);
    if (w->p[k]) {
      touch(w->p[k], w->n[k], (unsigned char)k, 1, &w->bad);
      free(w->p[k]);
      w->p[k] = NULL;
    } else {
      w->n[k] = pick(&w->rng);
      w->p[k] = slow_block(w->n[k]);
      if (!w->p[k]) {
        w->bad++;
        continue;
      }
      touch(w->p[k], w->n[k], (unsigned char)k, 0, NULL);
    }
    w->ops++;
  }
  for (int k = 0; k < SLOTS; k++)
    if (w->p[k]) {
      touch(w->p[k], w->n[k], (unsigned char)k, 1, &w->bad);
      free(w->p[k]);
    }
  return NULL;
}

/* A child: a few blocks of the site, each checked; 0 when all were. */
static int child(int round) {
  uint64_t rng = (uint64_t)round * 0x9e3779b97f4a7c15ull + 1;
  long bad = 0;
  alarm(60);
  for (int k = 0; k < 4; k++) {
    size_t n = pick(&rng);
    unsigned char *p = slow_block(n);
    if (!p)
      return 1;
    touch(p, n, (unsigned char)k, 0, NULL);
    touch(p, n, (unsigned char)k, 1, &bad);
    free(p);
  }
  return bad != 0;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 300;
  min_ops = argc > 2 ? atol(argv[2]) : 20000;
  static worker w[2];
  pthread_t t[2];
  for (int k = 0; k < 2; k++) {
    w[k].rng = 0x2545f4914f6cdd1dull * (uint64_t)(k + 1);
    pthread_create(&t[k], NULL, work, &w[k]);
  }
  int failed = 0;
  unsigned long check = 0;
  for (int i = 0; i < rounds; i++) {
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      return 2;
    }
    if (pid == 0)
      _exit(child(i));
    int st = 0;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
      failed++;
    check = check * 31 + (unsigned long)i;
  }
  atomic_store(&stop, 1);
  long bad = 0, ops = 0;
  for (int k = 0; k < 2; k++) {
    pthread_join(t[k], NULL);
    bad += w[k].bad;
    ops += w[k].ops;
  }
  printf("fork rounds: %d\nchildren failed: %d\nworker failures: %ld\n",
         rounds, failed, bad);
  printf("worker ops at least %ld: %s\nchecksum: %lx\n", 2 * min_ops,
         ops >= 2 * min_ops ? "yes" : "no", check);
  return 0;
}
