// SPDX-License-Identifier: MIT
// Test input: a 16 KiB array that fits in cache, read 1000 times. After the
// 256 cold misses of the first pass it never misses again.
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  size_t n = (16u << 10) / sizeof(long);
  long *a = calloc(n, sizeof(long));
  long sum = 0;
  for (int r = 0; r < 1000; r++)
    for (size_t i = 0; i < n; i += 8)
      sum += a[i];
  printf("sum %ld\n", sum);
  free(a);
  return 0;
}
