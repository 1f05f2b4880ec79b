/* SPDX-License-Identifier: MIT */
/*
 * Stress program of the reliability tests: THREADS threads each do a seeded
 * random mix of malloc, calloc, realloc (growing and shrinking), free,
 * posix_memalign, aligned_alloc and memalign (alignments 8..64 KiB), from
 * distinct call sites (one noinline function each), so a placement can send
 * some sites to pmem and a DRAM limit can force fallbacks. Every block is
 * filled with a pattern that is checked before it is freed or reallocated;
 * malloc_usable_size must be at least the requested size.
 *
 *   tw_stress THREADS OPS [SEED] [--secret]     (OPS: total over all threads)
 *
 * Prints `count FUNCTION allocs N bytes B` per site (the program's own
 * counts, to compare with a census), `failures: N`, `checksum: HEX` (depends
 * only on THREADS, OPS and SEED) and, on stderr, `ops/s: X`. --secret fills
 * blocks with a recognisable string instead (the security tests grep
 * reports and profiles for it).
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLOTS 512
#define NSITES 8

static const char *const site_names[NSITES] = {
    "st_malloc",         "st_calloc",        "st_realloc", "st_memalign",
    "st_posix_memalign", "st_aligned_alloc", "st_big",     "st_tiny"};
static const char secret[] = "TIERWISE-SECRET-c0ffee-";
static int use_secret;

typedef struct slot {
  unsigned char *p;
  size_t size;
  uint64_t seed;
} slot;

typedef struct worker {
  int id;
  long ops;
  uint64_t rng, sum, failures;
  uint64_t allocs[NSITES], bytes[NSITES];
  slot s[SLOTS];
} worker;

static uint64_t next(uint64_t *x) { /* xorshift64* */
  *x ^= *x >> 12;
  *x ^= *x << 25;
  *x ^= *x >> 27;
  return *x * 0x2545f4914f6cdd1dull;
}

static unsigned char byte_at(uint64_t seed, size_t i) {
  if (use_secret)
    return (unsigned char)secret[i % (sizeof(secret) - 1)];
  return (unsigned char)(seed + i * 31 + (i >> 8));
}

/* The bytes of an n-byte block that are written and checked: all of a
 * block up to 1 KiB; of bigger ones the first and last 512 bytes and one
 * byte in every 512 (whole-block checks would make the stress test a memcpy
 * benchmark). */
static size_t step(size_t i, size_t n) {
  return n <= 1024 || i < 511 || i + 512 >= n ? i + 1
         : i + 512 < n - 512                  ? (i | 511) + 1
                                              : n - 512;
}

static void fill(slot *s, size_t from) {
  for (size_t i = from; i < s->size; i = step(i, s->size))
    s->p[i] = byte_at(s->seed, i);
}

/* Check the first n bytes; add them to the checksum. */
static void check(worker *w, const slot *s, size_t n) {
  uint64_t h = 0;
  for (size_t i = 0; i < n; i = step(i, s->size)) {
    if (s->p[i] != byte_at(s->seed, i)) {
      w->failures++;
      fprintf(stderr, "FAIL thread %d: byte %zu of a %zu-byte block\n", w->id,
              i, s->size);
      break;
    }
    h = h * 1099511628211ull + s->p[i];
  }
  w->sum += h ^ n;
}

/* One function per allocation site. */
__attribute__((noinline)) static void *st_malloc(size_t n) { return malloc(n); }
__attribute__((noinline)) static void *st_calloc(size_t n) {
  return calloc(1, n);
}
__attribute__((noinline)) static void *st_realloc(void *p, size_t n) {
  return realloc(p, n);
}
__attribute__((noinline)) static void *st_memalign(size_t a, size_t n) {
  return memalign(a, n);
}
__attribute__((noinline)) static void *st_posix_memalign(size_t a, size_t n) {
  void *p = NULL;
  return posix_memalign(&p, a, n) ? NULL : p;
}
__attribute__((noinline)) static void *st_aligned_alloc(size_t a, size_t n) {
  return aligned_alloc(a, (n + a - 1) / a * a);
}
__attribute__((noinline)) static void *st_big(size_t n) { return malloc(n); }
__attribute__((noinline)) static void *st_tiny(size_t n) { return malloc(n); }

static size_t pick_size(worker *w) {
  uint64_t r = next(&w->rng);
  switch (r % 8) {
  case 0:
  case 1:
  case 2:
    return 1 + (r >> 8) % 64;
  case 3:
  case 4:
    return 64 + (r >> 8) % 4096;
  case 5:
    return 4096 + (r >> 8) % 16384;
  default:
    return 1 + (r >> 8) % 512;
  }
}

static void release(worker *w, slot *s) {
  check(w, s, s->size);
  free(s->p);
  s->p = NULL;
}

static void allocate(worker *w, slot *s, unsigned op) {
  size_t n = pick_size(w), align = (size_t)8 << (next(&w->rng) % 14);
  int site = op;
  void *p;
  switch (op) {
  case 0:
    p = st_malloc(n);
    break;
  case 1:
    p = st_calloc(n);
    break;
  case 3:
    p = st_memalign(align, n);
    break;
  case 4:
    p = st_posix_memalign(align, n);
    break;
  case 5:
    p = st_aligned_alloc(align, n);
    n = (n + align - 1) / align * align;
    break;
  case 6:
    n = (128u << 10) + (next(&w->rng) % (384u << 10));
    p = st_big(n);
    break;
  default:
    site = 7;
    n = 1 + n % 24;
    p = st_tiny(n);
    break;
  }
  if (!p || (op >= 3 && op <= 5 && (uintptr_t)p % align) ||
      malloc_usable_size(p) < n) {
    w->failures++;
    fprintf(stderr, "FAIL thread %d: %s(%zu, align %zu) gave %p usable %zu\n",
            w->id, site_names[site], n, align, p,
            p ? malloc_usable_size(p) : 0);
    if (!p)
      return;
  }
  if (op == 1)
    for (size_t i = 0; i < n; i = step(i, n))
      if (((unsigned char *)p)[i]) {
        w->failures++;
        fprintf(stderr, "FAIL thread %d: calloc not zero\n", w->id);
        break;
      }
  w->allocs[site]++;
  w->bytes[site] += n;
  s->p = p;
  s->size = n;
  s->seed = next(&w->rng);
  fill(s, 0);
}

static void grow_or_shrink(worker *w, slot *s) {
  int grow = (next(&w->rng) & 1) && s->size < (256u << 10);
  size_t n = grow ? s->size * 2 + 1 : s->size / 2 + 1;
  check(w, s, s->size < n ? s->size : n);
  unsigned char *q = st_realloc(s->p, n);
  if (!q) {
    w->failures++;
    fprintf(stderr, "FAIL thread %d: realloc(%zu) failed\n", w->id, n);
    return;
  }
  size_t keep = s->size < n ? s->size : n;
  s->p = q;
  check(w, s, keep); /* contents moved intact (across tiers, too) */
  s->size = n;
  fill(s, 0); /* the sampled bytes of the new size */
  if (malloc_usable_size(q) < n)
    w->failures++;
  w->allocs[2]++;
  w->bytes[2] += n;
}

static void *run(void *arg) {
  worker *w = arg;
  for (long i = 0; i < w->ops; i++) {
    slot *s = &w->s[next(&w->rng) % SLOTS];
    unsigned op = (unsigned)(next(&w->rng) % 100);
    if (s->p && op < 40)
      release(w, s);
    else if (s->p && op < 60)
      grow_or_shrink(w, s);
    else if (s->p)
      check(w, s, s->size < 64 ? s->size : 64);
    else /* the big site is rare: 1 in 100 of the allocations */
      allocate(w, s, op == 99 ? 6 : op % 8 == 6 ? 7 : op % 8);
  }
  for (int i = 0; i < SLOTS; i++)
    if (w->s[i].p)
      release(w, &w->s[i]);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: tw_stress THREADS OPS [SEED] [--secret]\n");
    return 2;
  }
  int nt = atoi(argv[1]);
  long ops = atol(argv[2]);
  uint64_t seed = argc > 3 && argv[3][0] != '-' ? strtoull(argv[3], 0, 0) : 1;
  use_secret = !strcmp(argv[argc - 1], "--secret");
  if (nt < 1 || nt > 256 || ops < 1) {
    fprintf(stderr, "tw_stress: THREADS 1..256 and OPS >= 1\n");
    return 2;
  }
  worker *ws = calloc((size_t)nt, sizeof(worker));
  pthread_t *th = calloc((size_t)nt, sizeof(pthread_t));
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < nt; i++) {
    ws[i].id = i;
    ws[i].ops = ops / nt + (i < ops % nt);
    ws[i].rng = seed * 0x9e3779b97f4a7c15ull + (uint64_t)i + 1;
    pthread_create(&th[i], NULL, run, &ws[i]);
  }
  uint64_t allocs[NSITES] = {0}, bytes[NSITES] = {0}, sum = 0, fails = 0;
  for (int i = 0; i < nt; i++) {
    pthread_join(th[i], NULL);
    for (int k = 0; k < NSITES; k++) {
      allocs[k] += ws[i].allocs[k];
      bytes[k] += ws[i].bytes[k];
    }
    sum = sum * 31 + ws[i].sum;
    fails += ws[i].failures;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double dt = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
  for (int k = 0; k < NSITES; k++)
    printf("count %s allocs %llu bytes %llu\n", site_names[k],
           (unsigned long long)allocs[k], (unsigned long long)bytes[k]);
  printf("failures: %llu\nchecksum: %llx\n", (unsigned long long)fails,
         (unsigned long long)sum);
  fprintf(stderr, "ops/s: %.0f (%d threads, %ld ops, %.3f s)\n", ops / dt, nt,
          ops, dt);
  free(ws);
  free(th);
  return fails != 0;
}
