// SPDX-License-Identifier: MIT
// An allocation spelled in a macro that another macro's body uses
// (NEW_ARRAY calls RAW_ALLOC, as frameworks layer theirs): a use of
// NEW_ARRAY cannot be expanded on its own, so the placed sites can share
// RAW_ALLOC's rewritten #define only when no use of it is left that no site
// reaches. Here one is (verify's array, never allocated in the profiled
// run, so DRAM under `tierwise run`): the placed sites are reported and
// nothing is edited. Before, RAW_ALLOC's #define was rewritten and verify's
// array went to pmem with them (the note said "shared by 2 sites, all pmem").
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/macro-nested.json %s > %t.json
// RUN: not %bin/tierwise-rewrite --placement %t.json %s -- > %t.diff 2> %t.err
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// RUN: not grep -q . %t.diff
#include <stdlib.h>

#define RAW_ALLOC(n) malloc(n)
#define NEW_ARRAY(T, n) ((T *)RAW_ALLOC((n) * sizeof(T)))

int main(int argc, char **argv) {
  double *ranks = NEW_ARRAY(double, 1000); // @r
  // ERR: site 0 {{.*}}: site needs a macro change: RAW_ALLOC used at macro-nested.c:[[@LINE-1]] (the macro's other uses stay in dram, and this use cannot be expanded: its use is inside another macro's body)
  long *edges = NEW_ARRAY(long, 8000); // @e
  // ERR: site 1 {{.*}}: site needs a macro change: RAW_ALLOC used at macro-nested.c:[[@LINE-1]] (the macro's other uses stay in dram
  int *verify = argc > 5 ? NEW_ARRAY(int, 1000) : NULL;
  // ERR: 0 of 2 placed sites rewritten in 0 files
  (void)argv;
  free(ranks), free(edges), free(verify);
  return 0;
}
