// SPDX-License-Identifier: MIT
// Test program for rank-order.test: allocates its least valuable array
// first, as graph codes allocate their edge list before the vertex arrays
// that matter most. cold (n doubles, zeroed) is read once, warm (n/2) is swept
// eight times, hot (n/4) is gathered at random 32 times per element.
// Usage: tw_rank_order N; prints a checksum that depends only on N.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1 << 16;
  double *cold = calloc(n, sizeof(double));
  double *warm = malloc(n / 2 * sizeof(double));
  double *hot = malloc(n / 4 * sizeof(double));
  if (!cold || !warm || !hot)
    return 1;
  for (size_t i = 0; i < n / 4; i++)
    hot[i] = (double)(i % 5);
  double sum = 0;
  for (size_t i = 0; i < n; i++)
    sum += cold[i] + (double)(i % 7);
  for (size_t i = 0; i < n / 2; i++)
    warm[i] = sum / (double)(i + 1);
  for (int r = 0; r < 8; r++)
    for (size_t i = 0; i < n / 2; i++)
      warm[i] = warm[i] * 0.5 + (double)r;
  uint64_t s = 88172645463325252ull, acc = 0;
  for (size_t k = 0; k < 32 * (n / 4); k++) {
    size_t j = next(&s) % (n / 4);
    hot[j] += 1.0;
    acc += (uint64_t)hot[j];
  }
  for (size_t i = 0; i < n / 2; i++)
    acc += (uint64_t)warm[i];
  printf("checksum: %016llx\n", (unsigned long long)acc);
  free(hot);
  free(warm);
  free(cold);
  return 0;
}
