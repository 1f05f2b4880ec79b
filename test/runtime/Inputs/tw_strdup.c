/* SPDX-License-Identifier: MIT */
/* Test program: strdup, strndup and asprintf called from two functions,
 * hot and cold, at the same stack depth, so that glibc's own allocations
 * inside them have the same cache key for both (a return address into libc
 * and its stack pointer); the runtime interposes the three and keys their
 * allocations by their callers. Prints a checksum of every string.
 * Usage: tw_strdup [N] (N calls of each function in each). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void hot(char **d, char **nd, char **pf,
                                          int n) {
  for (int i = 0; i < n; i++) {
    d[i] = strdup("hot-name-0123456");         /* 17 bytes */
    nd[i] = strndup("hot-longer-name-xyz", 7); /* 8 bytes */
    if (asprintf(&pf[i], "hot-%06d", i) < 0)
      abort();
  }
}

__attribute__((noinline)) static void cold(char **d, char **nd, char **pf,
                                           int n) {
  for (int i = 0; i < n; i++) {
    d[i] = strdup("cold-name-012345");
    nd[i] = strndup("cold-longer-name-xy", 7);
    if (asprintf(&pf[i], "cold-%06d", i) < 0)
      abort();
  }
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  char **s = calloc(6 * (size_t)n, sizeof(char *));
  if (!s)
    return 1;
  for (int round = 0; round < 2; round++) { /* hot and cold interleaved */
    hot(s + round * n / 2, s + 2 * n + round * n / 2, s + 4 * n + round * n / 2,
        n / 2);
    cold(s + n + round * n / 2, s + 3 * n + round * n / 2,
         s + 5 * n + round * n / 2, n / 2);
  }
  unsigned long sum = 1469598103934665603ul;
  for (int i = 0; i < 6 * n; i++) {
    if (!s[i])
      return 1;
    for (const char *c = s[i]; *c; c++)
      sum = (sum ^ (unsigned char)*c) * 1099511628211ul;
    free(s[i]);
  }
  free(s);
  printf("checksum %016lx\n", sum);
  return 0;
}
