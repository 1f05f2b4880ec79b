// SPDX-License-Identifier: MIT
// Test input: an OpenMP program (Valgrind serialises its threads). Each
// thread sums its share of a 4 MiB array allocated before the parallel
// region; every load of it is counted exactly once whatever the thread.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  size_t n = (4u << 20) / sizeof(long);
  long *a = calloc(n, sizeof(long));
  long sum = 0;
#pragma omp parallel for reduction(+ : sum) num_threads(4)
  for (size_t i = 0; i < n; i += 8)
    sum += a[i];
  printf("sum %ld threads %d\n", sum, omp_get_max_threads());
  free(a);
  return 0;
}
