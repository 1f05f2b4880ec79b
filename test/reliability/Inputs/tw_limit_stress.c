/* SPDX-License-Identifier: MIT */
/*
 * Stress program of the reliability tests: threads allocating under a DRAM
 * limit (issue 40 item 3). THREADS threads each keep up to SLOTS blocks of
 * 16 B to 2 MiB live and do a seeded random mix of malloc, free and realloc
 * growth from four sites (one noinline function each): ls_small (16 B ..
 * 4 KiB), ls_mid (4 KiB .. 256 KiB), ls_big (256 KiB .. 2 MiB, the site a
 * placement gives a DRAM head) and ls_grow (realloc to 1.5-2x, up to
 * 2 MiB). Under TIERWISE_DRAM_LIMIT most blocks fall back to the slow tier
 * from every thread at once. Every block's sampled bytes are written at
 * allocation and checked before it is freed or grown (and its kept prefix
 * after the move).
 *
 *   tw_limit_stress THREADS OPS [SEED]     (OPS: total over all threads)
 *
 * Prints `count SITE allocs N bytes B` per site, `failures: N` and
 * `checksum: HEX`, which depend only on THREADS, OPS and SEED.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SLOTS 32
#define MAX_BYTES ((size_t)2 << 20)
enum { SMALL, MID, BIG, GROW, NSITES };
static const char *const names[NSITES] = {"ls_small", "ls_mid", "ls_big",
                                          "ls_grow"};

__attribute__((noinline)) static void *ls_small(size_t n) { return malloc(n); }
__attribute__((noinline)) static void *ls_mid(size_t n) { return malloc(n); }
__attribute__((noinline)) static void *ls_big(size_t n) { return malloc(n); }
__attribute__((noinline)) static void *ls_grow(void *p, size_t n) {
  return realloc(p, n);
}

typedef struct thread {
  long ops;
  uint64_t rng, sum, failures, allocs[NSITES], bytes[NSITES];
  unsigned char *p[SLOTS];
  size_t n[SLOTS];
  unsigned char v[SLOTS];
} thread;

static uint64_t next(uint64_t *x) { /* xorshift64* */
  *x ^= *x >> 12;
  *x ^= *x << 25;
  *x ^= *x >> 27;
  return *x * 0x2545f4914f6cdd1dull;
}

/* The sampled bytes of an n-byte block: the first and last 32, and one in
 * every 1024 between. */
static size_t step(size_t i, size_t n) {
  return i < 32 || i + 32 >= n ? i + 1 : i + 1024 < n - 32 ? i + 1024 : n - 32;
}

static void fill(thread *t, int k, size_t from) {
  for (size_t i = from; i < t->n[k]; i = step(i, t->n[k]))
    t->p[k][i] = (unsigned char)(t->v[k] + i);
}

/* Check the sampled bytes below \p upto of slot k's block (sampled as an
 * n[k]-byte block); add them to the checksum. */
static void check(thread *t, int k, size_t upto) {
  uint64_t h = 0;
  for (size_t i = 0; i < upto; i = step(i, t->n[k])) {
    if (t->p[k][i] != (unsigned char)(t->v[k] + i)) {
      t->failures++;
      fprintf(stderr, "FAIL: byte %zu of a %zu-byte block\n", i, t->n[k]);
      return;
    }
    h = h * 1099511628211ull + t->p[k][i];
  }
  t->sum += h ^ upto;
}

static void allocate(thread *t, int k) {
  uint64_t r = next(&t->rng);
  int site = r % 10 < 6 ? SMALL : r % 10 < 9 ? MID : BIG;
  size_t lo = site == SMALL ? 16 : site == MID ? 4096 : 256u << 10;
  size_t hi = site == SMALL ? 4096 : site == MID ? 256u << 10 : MAX_BYTES;
  size_t n = lo + (r >> 8) % (hi - lo + 1);
  void *p = site == SMALL ? ls_small(n) : site == MID ? ls_mid(n) : ls_big(n);
  if (!p) {
    t->failures++;
    fprintf(stderr, "FAIL: %s(%zu) gave NULL\n", names[site], n);
    return;
  }
  t->p[k] = p;
  t->n[k] = n;
  t->v[k] = (unsigned char)(r >> 56);
  t->allocs[site]++;
  t->bytes[site] += n;
  fill(t, k, 0);
}

static void grow(thread *t, int k) {
  size_t old = t->n[k];
  size_t n = old + old / 2 + (next(&t->rng) % (old / 2 + 1));
  if (n > MAX_BYTES)
    n = MAX_BYTES;
  check(t, k, old);
  unsigned char *q = ls_grow(t->p[k], n);
  if (!q) {
    t->failures++;
    fprintf(stderr, "FAIL: realloc(%zu) gave NULL\n", n);
    return;
  }
  t->p[k] = q;
  check(t, k, old); /* moved intact (across tiers, too) */
  t->n[k] = n;
  fill(t, k, 0);
  t->allocs[GROW]++;
  t->bytes[GROW] += n;
}

static void *run(void *arg) {
  thread *t = arg;
  for (long i = 0; i < t->ops; i++) {
    int k = (int)(next(&t->rng) % SLOTS);
    unsigned op = (unsigned)(next(&t->rng) % 10);
    if (!t->p[k])
      allocate(t, k);
    else if (op < 3 && t->n[k] < MAX_BYTES)
      grow(t, k);
    else {
      check(t, k, t->n[k]);
      free(t->p[k]);
      t->p[k] = NULL;
    }
  }
  for (int k = 0; k < SLOTS; k++)
    if (t->p[k]) {
      check(t, k, t->n[k]);
      free(t->p[k]);
    }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: tw_limit_stress THREADS OPS [SEED]\n");
    return 2;
  }
  int nt = atoi(argv[1]);
  long ops = atol(argv[2]);
  uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
  if (nt < 1 || nt > 64 || ops < 1) {
    fprintf(stderr, "tw_limit_stress: THREADS 1..64 and OPS >= 1\n");
    return 2;
  }
  thread *ts = calloc((size_t)nt, sizeof(thread));
  pthread_t *th = calloc((size_t)nt, sizeof(pthread_t));
  for (int i = 0; i < nt; i++) {
    ts[i].ops = ops / nt + (i < ops % nt);
    ts[i].rng = seed * 0x9e3779b97f4a7c15ull + (uint64_t)i + 1;
    pthread_create(&th[i], NULL, run, &ts[i]);
  }
  uint64_t allocs[NSITES] = {0}, bytes[NSITES] = {0}, sum = 0, fails = 0;
  for (int i = 0; i < nt; i++) {
    pthread_join(th[i], NULL);
    for (int s = 0; s < NSITES; s++) {
      allocs[s] += ts[i].allocs[s];
      bytes[s] += ts[i].bytes[s];
    }
    sum = sum * 31 + ts[i].sum;
    fails += ts[i].failures;
  }
  for (int s = 0; s < NSITES; s++)
    printf("count %s allocs %llu bytes %llu\n", names[s],
           (unsigned long long)allocs[s], (unsigned long long)bytes[s]);
  printf("failures: %llu\nchecksum: %llx\n", (unsigned long long)fails,
         (unsigned long long)sum);
  free(ts);
  free(th);
  return fails != 0;
}
