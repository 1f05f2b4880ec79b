/* SPDX-License-Identifier: MIT */
/* Test program: three big arrays from three sites, many small allocations
 * from a loop; prints each array's address and size so tests can check its
 * tier. Usage: tw_sites [N_SMALL] [BIG_BYTES] [HOLD_MS: sleep, arrays live] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
__attribute__((noinline)) static char *make(size_t n, int fill) {
  char *p = malloc(n);
  memset(p, fill, n);
  return p;
}

int main(int argc, char **argv) {
  size_t nsmall = argc > 1 ? strtoull(argv[1], 0, 10) : 1000;
  size_t big = argc > 2 ? strtoull(argv[2], 0, 10) : (4u << 20);
  char *a = make(big, 1);       /* site A */
  char *b = calloc(big / 8, 8); /* site B */
  double *c = NULL;
  if (posix_memalign((void **)&c, 4096, big)) /* site C */
    return 1;
  memset(c, 0, big);
  unsigned long sum = 0;
  int **keep = calloc(64, sizeof(int *)); /* site E */
  for (size_t i = 0; i < nsmall; i++) {
    int *s = malloc(16 + (i % 7) * 8); /* site D: many small */
    s[0] = (int)i;
    if (keep[i % 64] && i >= 64) {
      sum += (unsigned)keep[i % 64][0];
      free(keep[i % 64]);
    }
    keep[i % 64] = s;
  }
  for (size_t i = 0; i < 64 && i < nsmall; i++)
    free(keep[i]);
  free(keep);
  b = realloc(b, big * 2); /* moves to the realloc's site */
  b[big * 2 - 1] = 3;
  sum += (unsigned char)a[big - 1] + (unsigned char)b[big * 2 - 1];
  fprintf(stderr, "object a %p %zu\nobject b %p %zu\nobject c %p %zu\n",
          (void *)a, big, (void *)b, big * 2, (void *)c, big);
  printf("checksum: %lx\n", sum);
  fflush(stdout);
  long hold = argc > 3 ? strtol(argv[3], 0, 10) : 0;
  struct timespec d = {hold / 1000, (hold % 1000) * 1000000L};
  while (hold > 0 && nanosleep(&d, &d))
    ;
  free(a);
  free(b);
  free(c);
  return 0;
}
