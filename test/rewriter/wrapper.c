// SPDX-License-Identifier: MIT
// A site reached through a wrapper (xmalloc) that several sites share: with
// mixed tiers the C wrapper becomes xmalloc_tier(tw_tier, ...), which the
// original calls with the default tier, and the placed caller calls it with
// its tier (wrapper-refactor.c has more); when all its sites share a tier
// the allocation inside the wrapper is rewritten.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/wrapper-mixed.json %s > %t.mixed.json
// RUN: %bin/tierwise-rewrite --placement %t.mixed.json %s -- > %t.mixed.diff 2> %t.mixed.err
// RUN: FileCheck --check-prefix=MIXED %s < %t.mixed.err
// RUN: FileCheck --check-prefix=MIXED-DIFF %s < %t.mixed.diff
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/wrapper-same.json %s > %t.same.json
// RUN: %bin/tierwise-rewrite --placement %t.same.json %s -- 2> %t.same.err | FileCheck --check-prefix=SAME %s
// RUN: FileCheck --check-prefix=SAME-ERR %s < %t.same.err
#include <stdio.h>
#include <stdlib.h>

static void *xmalloc(size_t n) {
  void *p = malloc(n); // @w
  // SAME: +  void *p = tw_malloc(TW_TIER_PMEM, n);
  // SAME-ERR: note: rewriting malloc at wrapper.c:[[@LINE-2]]: shared by 2 sites, all pmem
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  return p;
}

int main(void) {
  int *edges = xmalloc(1 << 20); // @c1
  // MIXED: note: wrapper xmalloc (wrapper.c:{{[0-9]+}}) forwards to a new xmalloc_tier(tw_tier tier, ...) with TW_TIER_DRAM that its allocation uses; callers passing a tier: wrapper.c:[[@LINE-1]] (pmem)
  // MIXED-DIFF: +static void *xmalloc_tier(tw_tier tier, size_t n) {
  // MIXED-DIFF-NEXT: +  void *p = tw_malloc(tier, n); // @w
  // MIXED-DIFF: +__attribute__((unused)) static void *xmalloc(size_t n) {
  // MIXED-DIFF-NEXT: +  return xmalloc_tier(TW_TIER_DRAM, n);
  // MIXED-DIFF-NEXT: +}
  // MIXED-DIFF: +  int *edges = xmalloc_tier(TW_TIER_PMEM, 1 << 20); // @c1
  int *ranks = xmalloc(1 << 10); // @c2
  // MIXED-DIFF-NOT: ranks
  // MIXED: 1 of 1 placed sites rewritten in 1 files
  // SAME-ERR: 2 of 2 placed sites rewritten in 1 files
  free(edges), free(ranks);
  return 0;
}
