// SPDX-License-Identifier: MIT
// A stale placement: the profiled source had the allocation on other lines.
// A line now in another function, a line with no allocation, and a column
// that is on none of a line's allocations are each reported, and nothing is rewritten.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/stale.json %s > %t.json
// RUN: not %bin/tierwise-rewrite --placement %t.json %s -- > %t.diff 2> %t.err
// RUN: count 0 < %t.diff
// RUN: FileCheck %s < %t.err
#include <stdlib.h>

static int *make_ranks(size_t n) {
  return calloc(n, sizeof(int)); // @moved
}

int main(void) {
  size_t n = 1000; // @blank
  int *edges = malloc(n * sizeof(int)), *deg = malloc(n); // @col
  int *ranks = make_ranks(n);
  free(edges), free(deg), free(ranks);
  return 0;
}
// CHECK: site 0 (main stale.c:12): stale placement: stale.c:12 is in make_ranks, the placement says main (source changed since profiling?)
// CHECK: site 1 (main stale.c:16): stale placement: nothing allocates at stale.c:16 (source changed since profiling?)
// CHECK: site 2 (main stale.c:17:3): stale placement: column 3 of stale.c:17 is on none of its 2 allocations
// CHECK: 0 of 3 placed sites rewritten in 0 files
