// SPDX-License-Identifier: MIT
// Test input: allocation churn for the sim tool's address map. 32768 blocks
// of eight sizes (8 B to 1032 B: one to eighteen 64-byte chunks, so both
// kinds of map entry) are allocated and each written once (round 1); the odd
// ones are freed and allocated again, mostly in the freed holes, and written
// once (round 2); every block is read once and all are freed. Sizes per
// round: round 1 sums 4096 * 2096 = 8585216 bytes, round 2 (odd sizes only)
// 4096 * 1392 = 5701632 bytes.
#include <stdio.h>
#include <stdlib.h>

#define N 32768
static const size_t sizes[8] = {8, 24, 40, 72, 136, 264, 520, 1032};

static void fill(long **q, int first, int step) {
  for (int i = first; i < N; i += step) {
    q[i] = malloc(sizes[i % 8]);
    *q[i] = i;
  }
}

int main(void) {
  long **q = malloc(N * sizeof *q);
  fill(q, 0, 1);
  for (int i = 1; i < N; i += 2)
    free(q[i]);
  fill(q, 1, 2);
  long sum = 0;
  for (int i = 0; i < N; i++)
    sum += *q[i];
  for (int i = 0; i < N; i++)
    free(q[i]);
  free(q);
  printf("sum %ld\n", sum);
  return sum != (long)N * (N - 1) / 2;
}
