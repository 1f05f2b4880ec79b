/* SPDX-License-Identifier: MIT */
/* Test program: edge cases of the malloc family under the runtime: sizes
 * that must fail with ENOMEM, zero sizes, aligned variants, usable size,
 * realloc growth and shrink, calloc overflow. Prints one line per check. */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  errno = 0;
  void *p = malloc((size_t)1 << 62);
  printf("huge malloc: %s %s\n", p ? "ok" : "null",
         errno == ENOMEM ? "ENOMEM" : "no-errno");
  errno = 0;
  volatile size_t half = SIZE_MAX / 2;
  p = calloc(half, 4);
  printf("calloc overflow: %s %s\n", p ? "ok" : "null",
         errno == ENOMEM ? "ENOMEM" : "no-errno");
  void *q = NULL;
  printf("posix_memalign bad: %d\n", posix_memalign(&q, 3, 10) == EINVAL);
  for (size_t al = 16; al <= (1 << 16); al <<= 2) {
    char *a = aligned_alloc(al, 3 * al);
    memset(a, 1, 3 * al);
    printf("aligned %zu: %d usable>=%d\n", al, ((uintptr_t)a % al) == 0,
           malloc_usable_size(a) >= 3 * al);
    free(a);
  }
  char *m = memalign(64, 100), *v = valloc(10), *pv = pvalloc(10);
  /* alignments that are not powers of two: glibc's memalign serves them
   * (0..16 as malloc, else the next power of two); its aligned_alloc as it
   * does (2.36: the same) - the runtime must answer as glibc does */
  size_t odd[] = {0, 3, 24, 100, 4097};
  for (unsigned k = 0; k < sizeof(odd) / sizeof(odd[0]); k++) {
    size_t up = 16;
    while (up < odd[k])
      up <<= 1;
    errno = 0;
    char *m = memalign(odd[k], 200);
    int e1 = errno;
    errno = 0;
    char *g = aligned_alloc(odd[k], 400);
    int e2 = errno;
    if (m)
      memset(m, 1, 200);
    if (g)
      memset(g, 2, 400);
    printf("odd alignment %zu: memalign %s%s, aligned_alloc %s%s\n", odd[k],
           m ? "ok" : e1 == EINVAL ? "EINVAL" : "null",
           m && (uintptr_t)m % up ? " misaligned" : "",
           g ? "ok" : e2 == EINVAL ? "EINVAL" : "null",
           g && (uintptr_t)g % up ? " misaligned" : "");
    free(m);
    free(g);
  }
  printf("memalign/valloc/pvalloc: %d %d %d\n", (uintptr_t)m % 64 == 0,
         (uintptr_t)v % 4096 == 0, (uintptr_t)pv % 4096 == 0);
  free(m);
  free(v);
  free(pv);
  char *r = realloc(NULL, 10);
  strcpy(r, "abcdefghi");
  for (size_t n = 16; n < (1 << 22); n *= 3)
    r = realloc(r, n);
  r = realloc(r, 5);
  printf("realloc keeps: %.4s\n", r);
  free(r);
  free(malloc(0));
  char *z = calloc(1000, 1000);
  size_t nz = 0;
  for (size_t i = 0; i < 1000000; i++)
    nz += z[i] != 0;
  printf("calloc zero: %zu\n", nz);
  free(z);
  return 0;
}
