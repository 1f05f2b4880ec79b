/* SPDX-License-Identifier: MIT */
/* Test program for room-full.test: N blocks of SIZE bytes from one site
 * (make), all live at once, each page's first byte written; then freed.
 * Usage: tw_many N SIZE; prints a checksum that depends only on N and SIZE. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static char *make(size_t n) { return malloc(n); }

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], 0, 10) : 300;
  size_t size = argc > 2 ? strtoull(argv[2], 0, 10) : (1u << 20);
  char **p = calloc(n, sizeof *p);
  unsigned long sum = 0;
  if (!p)
    return 1;
  for (size_t i = 0; i < n; i++) {
    if (!(p[i] = make(size)))
      return 1;
    for (size_t k = 0; k < size; k += 4096)
      p[i][k] = (char)(i + k / 4096);
  }
  for (size_t i = 0; i < n; i++) {
    for (size_t k = 0; k < size; k += 4096)
      sum += (unsigned char)p[i][k];
    free(p[i]);
  }
  free(p);
  printf("checksum: %lx\n", sum);
  return 0;
}
