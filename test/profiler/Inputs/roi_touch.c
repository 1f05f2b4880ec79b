// SPDX-License-Identifier: MIT
// Test input for the sample backend's region of interest (--roi markers,
// sample-roi.test): two 8 MiB arrays, both live all run; A is read at
// random outside the region, then B inside it (two calls, each wrapped in
// two nested TIERWISE_ROI_BEGIN/END pairs when argv[1] is "markers"), then
// A again outside. Each phase: argv[2] million reads (default 20); B's argv[3] thousand.
#include "tierwise.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N ((8u << 20) / sizeof(uint64_t))

static uint64_t reads(const volatile uint64_t *x, uint64_t n, uint64_t seed) {
  uint64_t s = 0, r = seed;
  for (uint64_t i = 0; i < n; i++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17; /* xorshift64 */
    s += x[r % N];
  }
  return s;
}

int main(int argc, char **argv) {
  int markers = argc > 1 && strcmp(argv[1], "markers") == 0;
  uint64_t n = (argc > 2 ? strtoull(argv[2], NULL, 10) : 20) * 1000000u;
  uint64_t *a = malloc(N * sizeof(uint64_t)); /* line 28: A */
  uint64_t *b = malloc(N * sizeof(uint64_t)); /* line 29: B */
  uint64_t in = argc > 3 ? strtoull(argv[3], NULL, 10) * 1000u : n;
  for (size_t i = 0; i < N; i++)
    a[i] = i, b[i] = 2 * i;
  uint64_t sum = reads(a, n / 2, 88172645463325252ull);
  for (int rep = 0; rep < 2; rep++) {
    if (markers) {
      TIERWISE_ROI_BEGIN();
      TIERWISE_ROI_BEGIN();
    }
    sum += reads(b, in / 2, 1234567u + (uint64_t)rep);
    if (markers) {
      TIERWISE_ROI_END();
      TIERWISE_ROI_END();
    }
  }
  sum += reads(a, n / 2, 7654321u);
  printf("sum %llu\n", (unsigned long long)sum);
  free(a);
  free(b);
  return 0;
}
