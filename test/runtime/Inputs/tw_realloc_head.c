/* SPDX-License-Identifier: MIT */
/*
 * A DRAM head kept through realloc (test/runtime/realloc-head.test): two
 * 8 MiB arrays from make(), and two vectors that start as 64-byte calloc
 * blocks (vinit, a site the placement leaves to its default tier) and grow
 * through vreserve's realloc - v in one step to 8 MiB, w by doubling. Prints
 * `object NAME ADDR BYTES` on stderr for each (for twcheck where) and a sum
 * that depends only on the contents.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((size_t)1 << 20)

typedef struct vec {
  unsigned char *p;
  size_t n, cap;
} vec;

__attribute__((noinline)) static unsigned char *make(size_t n) {
  unsigned char *p = malloc(n); /* line 22: site make */
  __asm__ volatile("" ::: "memory");
  return p;
}

__attribute__((noinline)) static void vinit(vec *v) {
  v->p = calloc(1, 64);
  v->n = 0;
  v->cap = 64;
}

__attribute__((noinline)) static void vreserve(vec *v, size_t cap) {
  unsigned char *q = realloc(v->p, cap); /* line 34: site vreserve */
  if (!q)
    abort();
  v->p = q;
  v->cap = cap;
}

__attribute__((noinline)) static void vpush(vec *v, unsigned char c) {
  if (v->n == v->cap)
    vreserve(v, v->cap * 2);
  v->p[v->n++] = c;
}

int main(void) {
  unsigned char *a = make(8 * MIB), *b = make(8 * MIB);
  vec v, w;
  vinit(&v);
  vinit(&w);
  vreserve(&v, 8 * MIB);
  for (size_t i = 0; i < 8 * MIB; i++) {
    vpush(&w, (unsigned char)(i * 7));
    v.p[i] = (unsigned char)(i * 3);
  }
  memset(a, 1, 8 * MIB);
  memset(b, 2, 8 * MIB);
  unsigned long sum = 0;
  for (size_t i = 0; i < 8 * MIB; i += 511)
    sum += a[i] + 3ul * b[i] + 5ul * v.p[i] + 7ul * w.p[i];
  printf("sum: %lu\n", sum);
  fprintf(stderr, "object a %p %zu\nobject b %p %zu\nobject v %p %zu\n"
                  "object w %p %zu\n",
          (void *)a, 8 * MIB, (void *)b, 8 * MIB, (void *)v.p, 8 * MIB,
          (void *)w.p, 8 * MIB);
  fflush(stderr);
  free(a);
  free(b);
  free(v.p);
  free(w.p);
  return 0;
}
