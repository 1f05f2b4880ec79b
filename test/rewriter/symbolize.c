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
// RUN: %tierwise rewrite --placement %t/placement.json --binary %t/symbolize %t/symbolize.c -- > %t/diff 2> %t/err
// RUN: FileCheck %s < %t/diff
// RUN: FileCheck --check-prefix=ERR %s < %t/err
// From the placement alone: modules[].path names the binary (what `tierwise
// advise` writes), run from another directory, no --binary.
// RUN: bid=$(readelf -n %t/symbolize | sed -n 's/.*Build ID: *//p'); \
// RUN:   sed "s|\"sites\"|\"modules\": [{\"module\": \"symbolize\", \"path\": \"%t/symbolize\", \"build_id\": \"$bid\"}], \"sites\"|" %t/placement.json > %t/with-path.json
// RUN: cd / && %tierwise rewrite --placement %t/with-path.json %t/symbolize.c -- 2>&1 >/dev/null | FileCheck --check-prefix=PATH %s
// PATH: symbolized 4 of 4 sites without frames ({{.*}}/symbolize)
// PATH: 2 of 2 placed sites rewritten
// A module whose build-id differs from the placement's is not used, and the
// rewrite stops with one line naming the module, the file and --binary:
// RUN: sed 's/"sites"/"modules": [{"module": "symbolize", "build_id": "00ff"}], "sites"/' %t/placement.json > %t/other-build.json
// RUN: not %tierwise rewrite --placement %t/other-build.json --binary %t/symbolize %t/symbolize.c -- > %t/bid.out 2>&1
// RUN: FileCheck --check-prefix=BUILDID %s < %t/bid.out
// RUN: count 1 < %t/bid.out
// BUILDID: error: {{.*}}other-build.json: cannot symbolize its stacks: module symbolize: {{.*}}/symbolize has another build-id (rebuilt since profiling?); give --binary PATH (the profiled program or a directory with it)
// A recorded path with no file there, run elsewhere: the same one line.
// RUN: sed 's|"sites"|"modules": [{"module": "symbolize", "path": "/nonexistent/symbolize", "build_id": ""}], "sites"|' %t/placement.json > %t/gone.json
// RUN: cd / && not %tierwise rewrite --placement %t/gone.json %t/symbolize.c -- 2>&1 | FileCheck --check-prefix=GONE %s
// GONE: cannot symbolize its stacks: module symbolize: no file at /nonexistent/symbolize; give --binary PATH
// GONE-NOT: not rewritten
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
  // CHECK: +  int *ranks = xmalloc_tier(TW_TIER_PMEM, n * sizeof(int));
  // ERR: symbolized 4 of 4 sites
  // ERR: note: wrapper xmalloc (symbolize.c:{{[0-9]+}}) forwards to a new xmalloc_tier(tw_tier tier, ...) with TW_TIER_DRAM that its allocation uses; callers passing a tier: symbolize.c:[[@LINE-3]] (pmem)
  int *frontier = xmalloc(n * sizeof(int));
  // CHECK-NOT: frontier = xmalloc_tier
  // ERR: 2 of 2 placed sites rewritten in 1 files
  free(edges), free(deg), free(ranks), free(frontier);
  return 0;
}
