// SPDX-License-Identifier: MIT
// Two allocations on one line: told apart by the frames' column; without
// columns, rewritten when the line's sites are two distinct calls of one
// tier, else reported as ambiguous.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/two-on-line-col.json %s > %t.col.json
// RUN: %bin/tierwise-rewrite --placement %t.col.json %s -- | FileCheck --check-prefix=COL %s
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/two-on-line-both.json %s > %t.both.json
// RUN: %bin/tierwise-rewrite --placement %t.both.json %s -- | FileCheck --check-prefix=BOTH %s
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/two-on-line-one.json %s > %t.one.json
// RUN: not %bin/tierwise-rewrite --placement %t.one.json %s -- 2>&1 | FileCheck --check-prefix=AMB %s
#include <stdlib.h>

int main(void) {
  char *a, *b;
  a = malloc(10), b = malloc(20); // @l
  // COL: -  a = malloc(10), b = malloc(20);
  // COL-NEXT: +  a = malloc(10), b = tw_malloc(TW_TIER_PMEM, 20);
  // BOTH: +  a = tw_malloc(TW_TIER_KMEM, 10), b = tw_malloc(TW_TIER_KMEM, 20);
  // AMB: not rewritten: site 0 (main two-on-line.c:[[@LINE-4]]): ambiguous: 2 allocations on two-on-line.c:[[@LINE-4]] (malloc at column 7, malloc at column 23) and the placement gives no column
  // AMB: 0 of 1 placed sites rewritten in 0 files
  free(a), free(b);
  return 0;
}
