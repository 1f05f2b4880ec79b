// SPDX-License-Identifier: MIT
// Placements straight from a profile carry only module+offset stacks:
// `tierwise rewrite` symbolizes them against the binary (inline frames and
// columns from its DWARF) so an inlined wrapper is seen through and two
// calls on one line are told apart.
// RUN: rm -rf %t && mkdir %t && cp %s %t/symbolize.c
// RUN: cc -g -O0 -o %t/symbolize %t/symbolize.c
// Calls in address order: edges (pmem), deg (dram), wrapper via ranks (pmem),
// wrapper via frontier (dram).
// RUN: %python %S/Inputs/callsites.py %t/symbolize malloc pmem dram pmem dram > %t/placement.json
// RUN: not %tierwise rewrite --placement %t/placement.json --binary %t/symbolize %t/symbolize.c -- > %t/diff 2> %t/err
// RUN: FileCheck %s < %t/diff
// RUN: FileCheck --check-prefix=ERR %s < %t/err
// A module whose build-id differs from the placement's is not used:
// RUN: sed 's/"sites"/"modules": [{"module": "symbolize", "build_id": "00ff"}], "sites"/' %t/placement.json > %t/other-build.json
// RUN: not %tierwise rewrite --placement %t/other-build.json --binary %t/symbolize %t/symbolize.c -- 2>&1 | FileCheck --check-prefix=BUILDID %s
// BUILDID: symbolize: build-id differs from the placement's module symbolize; not used
// BUILDID: symbolized 0 of 4 sites without frames
// BUILDID: no 'location' or 'frames'
#include <stdlib.h>

static inline __attribute__((always_inline)) void *xmalloc(size_t n) {
  return malloc(n);
}

int main(void) {
  size_t n = 1 << 16;
  int *edges = malloc(n * sizeof(int)), *deg = malloc(n * sizeof(int));
  // CHECK: -  int *edges = malloc(n * sizeof(int)), *deg = malloc(n * sizeof(int));
  // CHECK-NEXT: +  int *edges = tw_malloc(TW_TIER_PMEM, n * sizeof(int)), *deg = malloc(n * sizeof(int));
  int *ranks = xmalloc(n * sizeof(int));
  // ERR: symbolized 4 of 4 sites
  // ERR: site 2 {{.*}}: site needs a wrapper change: xmalloc called from symbolize.c:[[@LINE-2]]
  int *frontier = xmalloc(n * sizeof(int));
  // ERR: 1 of 2 placed sites rewritten in 1 files
  free(edges), free(deg), free(ranks), free(frontier);
  return 0;
}
