// SPDX-License-Identifier: MIT
// Test program for time-share.test: two valuable arrays whose lifetimes do
// not overlap, so the advisor's lifetime-aware plan gives them the same
// DRAM bytes one after the other, and a least valuable array allocated
// first and live throughout. cold (n/2 doubles, zeroed) is read once;
// first and then second (n/2 doubles each) are gathered at random 16 times
// per element, second only after first is freed.
// Usage: tw_time_share N; prints a checksum that depends only on N.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* Fill, gather at random, return a checksum part; then free. */
static uint64_t phase(double *a, size_t m, double seed, uint64_t *s) {
  uint64_t acc = 0;
  for (size_t i = 0; i < m; i++)
    a[i] = seed + (double)(i % 11);
  for (size_t k = 0; k < 16 * m; k++) {
    size_t j = next(s) % m;
    a[j] += 1.0;
    acc += (uint64_t)a[j];
  }
  free(a);
  return acc;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1 << 16;
  double *cold = calloc(n / 2, sizeof(double));
  if (!cold)
    return 1;
  double sum = 0;
  for (size_t i = 0; i < n / 2; i++)
    sum += cold[i] + (double)(i % 7);
  uint64_t s = 88172645463325252ull, acc = (uint64_t)sum;
  double *first = malloc(n / 2 * sizeof(double));
  if (!first)
    return 1;
  acc += phase(first, n / 2, 1.0, &s);
  double *second = malloc(n / 2 * sizeof(double));
  if (!second)
    return 1;
  acc += phase(second, n / 2, 2.0, &s);
  printf("checksum: %016llx\n", (unsigned long long)acc);
  free(cold);
  return 0;
}
