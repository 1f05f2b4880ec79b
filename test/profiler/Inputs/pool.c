/* SPDX-License-Identifier: MIT */
/* A program with its own pool allocator, as frameworks have: a lock-free
 * free list of 1 MiB (+ 4 KiB) blocks, each taken from aligned_alloc once,
 * handed to one array after another. Three arrays live one after the other
 * in the same block: A (1 MiB: written once, read once), B (768 KiB: written
 * once, read twice), C (512 KiB: written once, read three times), so
 * malloc sees one allocation and, without --alloc-fn, every access is the
 * pool's. With --alloc-fn=pool_alloc:2 --free-fn=pool_free each array is a
 * site of its own: loads A 131072, B 196608, C 196608; stores 131072,
 * 98304, 65536 (8-byte elements, scalar code at -O1). */
#include <stdio.h>
#include <stdlib.h>

#define BLOCK ((1u << 20) + 4096)

typedef struct pool {
  void *free; /* free list, linked through each block's first word */
} pool;

__attribute__((noinline)) void *pool_alloc(pool *p, size_t bytes) {
  if (bytes > BLOCK)
    return NULL;
  void *b = __atomic_load_n(&p->free, __ATOMIC_ACQUIRE);
  while (b && !__atomic_compare_exchange_n(&p->free, &b, *(void **)b, 1,
                                           __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    ;
  return b ? b : aligned_alloc(4096, BLOCK);
}

__attribute__((noinline)) void pool_free(pool *p, void *b) {
  void *head = __atomic_load_n(&p->free, __ATOMIC_RELAXED);
  do
    *(void **)b = head;
  while (!__atomic_compare_exchange_n(&p->free, &head, b, 1, __ATOMIC_ACQ_REL,
                                      __ATOMIC_RELAXED));
}

/* Writes n elements once, then reads them `passes` times. */
__attribute__((noinline)) double use(double *a, size_t n, int passes) {
  for (size_t i = 0; i < n; i++)
    a[i] = (double)i;
  double s = 0;
  for (int k = 0; k < passes; k++)
    for (size_t i = 0; i < n; i++)
      s += a[i];
  return s;
}

int main(void) {
  static pool p;
  double sum = 0;
  double *a = pool_alloc(&p, 131072 * sizeof(double)); /* A */
  sum += use(a, 131072, 1);
  pool_free(&p, a);
  double *b = pool_alloc(&p, 98304 * sizeof(double)); /* B */
  sum += use(b, 98304, 2);
  pool_free(&p, b);
  double *c = pool_alloc(&p, 65536 * sizeof(double)); /* C */
  sum += use(c, 65536, 3);
  pool_free(&p, c);
  printf("same block: %s, sum %.0f\n", a == b && b == c ? "yes" : "no", sum);
  return 0;
}
