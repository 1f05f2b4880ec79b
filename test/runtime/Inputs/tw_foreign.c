/* SPDX-License-Identifier: MIT */
/* Test program for coexistence with another allocator (foreign-alloc.test):
 * built once per allocator it is linked with (jemalloc, tcmalloc, mimalloc;
 * inputs.cmake), it makes the C library's allocation calls - malloc,
 * calloc, realloc growth, strdup, posix_memalign, aligned_alloc,
 * malloc_usable_size, free - and one 1 MiB array from a helper (a site a
 * placement can name). stdout depends only on the values, so a placed run
 * must print the same as the unplaced one; stderr names the array
 * (`object big ADDR BYTES`, twcheck where). */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static unsigned char *make_big(size_t n) {
  unsigned char *p = malloc(n);
  if (p)
    for (size_t i = 0; i < n; i++)
      p[i] = (unsigned char)(i * 7);
  return p;
}

int main(void) {
  unsigned long sum = 0;
  size_t big = 1u << 20;
  unsigned char *b = make_big(big);
  if (!b)
    return 1;
  fprintf(stderr, "object big %p %zu\n", (void *)b, big);
  for (int round = 0; round < 200; round++) {
    char *s = malloc(16 + round);
    snprintf(s, 16 + round, "round %d", round);
    char *d = strdup(s);
    sum += strlen(d) + (malloc_usable_size(d) >= strlen(d) + 1);
    int *a = calloc(32 + round, sizeof(int));
    for (int i = 0; i < 32 + round; i++)
      sum += (unsigned)a[i] + 1;
    int *g = NULL;
    for (int n = 1; n <= 64; n *= 2) { /* realloc growth */
      g = realloc(g, n * 100 * sizeof(int));
      for (int i = 0; i < n * 100; i++)
        g[i] = i + n;
    }
    sum += (unsigned)g[6399];
    void *al = NULL;
    if (posix_memalign(&al, 64, 200 + round) || ((uintptr_t)al & 63))
      return 2;
    void *al2 = aligned_alloc(4096, 4096);
    if (!al2 || ((uintptr_t)al2 & 4095))
      return 3;
    memset(al, 1, 200 + round);
    memset(al2, 2, 4096);
    sum += ((unsigned char *)al)[5] + ((unsigned char *)al2)[0] + b[round];
    free(al2);
    free(al);
    free(g);
    free(a);
    free(d);
    free(s);
  }
  for (size_t i = 0; i < big; i += 4096)
    sum += b[i];
  free(b);
  printf("checksum: %lx\n", sum);
  return 0;
}
