// SPDX-License-Identifier: MIT
// Test input: reads a zeroed 16 MiB array sequentially K times (argv[1]).
// With a 1 MiB simulated LLC every pass misses on every line:
// K * 16 MiB / 64 = K * 262144 LLC load misses, no stores to the array.
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int k = argc > 1 ? atoi(argv[1]) : 2;
  size_t n = (16u << 20) / sizeof(long);
  long *a = calloc(n, sizeof(long));
  long sum = 0;
  for (int r = 0; r < k; r++)
    for (size_t i = 0; i < n; i += 8)
      sum += a[i];
  printf("sum %ld\n", sum);
  free(a);
  return 0;
}
