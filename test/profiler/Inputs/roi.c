// SPDX-License-Identifier: MIT
// Test input for the sim profiler's region of interest (--roi). Outside the
// region: a 4 MiB array A is written once, and read (every 8th long) after
// each kernel call. Inside: roi_kernel reads a 16 MiB array B (every 8th
// long), called twice. With `markers` as argv[1] each call is also wrapped
// in two nested TIERWISE_ROI_BEGIN/END pairs.
// With a 1 MiB LLC, inside the region: B has 2 * 262144 loads, all LLC
// misses; A has no loads or stores, but the first call evicts the 1 MiB of
// A's lines left dirty by the write phase: ~16384 writebacks charged to A.
#include "tierwise.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) long roi_kernel(const volatile long *b, size_t n) {
  long sum = 0;
  for (size_t i = 0; i < n; i += 8)
    sum += b[i];
  return sum;
}

int main(int argc, char **argv) {
  int markers = argc > 1 && strcmp(argv[1], "markers") == 0;
  size_t na = (4u << 20) / sizeof(long), nb = (16u << 20) / sizeof(long);
  volatile long *a = malloc(na * sizeof(long));
  long *b = calloc(nb, sizeof(long));
  long sum = 0;
  for (size_t i = 0; i < na; i++)
    a[i] = (long)i;
  for (int rep = 0; rep < 2; rep++) {
    if (markers) {
      TIERWISE_ROI_BEGIN();
      TIERWISE_ROI_BEGIN();
    }
    sum += roi_kernel(b, nb);
    if (markers) {
      TIERWISE_ROI_END();
      TIERWISE_ROI_END();
    }
    for (size_t i = 0; i < na; i += 8)
      sum += a[i];
  }
  printf("sum %ld\n", sum);
  free((void *)a);
  free(b);
  return 0;
}
