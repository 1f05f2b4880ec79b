// SPDX-License-Identifier: MIT
// builder-place.cpp in C (issue 35 item 1): `build` allocates its headed
// `vals` and calls the helper `alloc_longs` for `offs` and `edges`; both
// have callers the placement never saw. build gets ONE variant,
// build_tier(tw_place place, ...), whose own allocation takes place.tier
// and place.dram_bytes and which calls alloc_longs_tier(place.tier, ...).
// The patch builds with -Wall -Wextra -Werror and gives the same output.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/builder-place-c.json %s > %t.json
// RUN: %bin/tierwise-rewrite --placement %t.json %s -- -std=c11 > %t.diff 2> %t.err
// RUN: FileCheck %s < %t.diff
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// RUN: rm -rf %t.d && mkdir %t.d %t.d/pmem && cp %s %t.d/
// RUN: %bin/tierwise-rewrite --placement %t.json -i %t.d/builder-place.c -- -std=c11 2> /dev/null
// RUN: cc -std=c11 -Wall -Wextra -Werror -o %t.d/b %t.d/builder-place.c $(%tierwise config --cflags --libs)
// RUN: env TIERWISE_PMEM_DIR=%t.d/pmem %t.d/b | FileCheck --check-prefix=OUT %s
// RUN: cc -std=c11 -Wall -DORIGINAL -o %t.d/b0 %s && %t.d/b0 | FileCheck --check-prefix=OUT0 %s
#include <stdio.h>
#include <stdlib.h>
// CHECK: +#include <tierwise.h>
#ifdef ORIGINAL
static int tw_tier_of(const void *p) { return p ? 0 : -1; }
#else
int tw_tier_of(const void *ptr); // tierwise.h, once rewritten
#endif

static long *alloc_longs(size_t n) {
  return malloc(n * sizeof(long)); // @helper
}
// CHECK: +static long *alloc_longs_tier(tw_tier tier, size_t n) {
// CHECK-NEXT: +  return tw_malloc(tier, n * sizeof(long)); // @helper

struct graph {
  size_t n, m;
  double *vals;
  long *offs, *edges;
};

static struct graph build(size_t n, size_t m) {
  struct graph g;
  g.n = n;
  g.m = m;
  g.vals = malloc(n * sizeof(double)); // @vals
  g.offs = alloc_longs(n + 1);         // @offs
  g.edges = alloc_longs(m);            // @edges
  for (size_t i = 0; i <= n; ++i)
    g.offs[i] = (long)(i * (m / n));
  for (size_t e = 0; e < m; ++e)
    g.edges[e] = (long)((e * 7919) % n);
  for (size_t i = 0; i < n; ++i)
    g.vals[i] = 1.0 / (double)(i + 1);
  return g;
}
// CHECK: +static struct graph build_tier(tw_place place, size_t n, size_t m) {
// CHECK: +  g.vals = tw_malloc_head(place.tier, place.dram_bytes, n * sizeof(double)); // @vals
// CHECK-NEXT: +  g.offs = alloc_longs_tier(place.tier, n + 1);         // @offs
// CHECK-NEXT: +  g.edges = alloc_longs_tier(place.tier, m);            // @edges
// CHECK: +  return build_tier(TW_PLACE(TW_TIER_DRAM, 0), n, m);

static double sum(const struct graph *g) {
  double s = 0;
  for (size_t v = 0; v < g->n; ++v)
    for (long e = g->offs[v]; e < g->offs[v + 1]; ++e)
      s += g->vals[g->edges[e]];
  return s;
}

int main(void) {
  struct graph big = build(1 << 16, 1 << 20); // @big
  // CHECK: +  struct graph big = build_tier(TW_PLACE(TW_TIER_PMEM, 65536), 1 << 16, 1 << 20); // @big
  struct graph small = build(64, 1024); // never profiled: stays in DRAM
  long *scratch = alloc_longs(1 << 12); // never profiled
  scratch[0] = 1;
  printf("big %d+%d/%d/%d small %d/%d/%d scratch %d sums %.6f %.6f\n",
         tw_tier_of(big.vals), tw_tier_of(big.vals + big.n - 1),
         tw_tier_of(big.offs), tw_tier_of(big.edges), tw_tier_of(small.vals),
         tw_tier_of(small.offs), tw_tier_of(small.edges), tw_tier_of(scratch),
         sum(&big), sum(&small) + (double)scratch[0]);
  // OUT: big 0+1/1/1 small 0/0/0 scratch 0 sums 186.681251 76.902254
  // OUT0: big 0+0/0/0 small 0/0/0 scratch 0 sums 186.681251 76.902254
  return 0;
}
// ERR-NOT: two different edits
// ERR: note: wrapper build (builder-place.c:{{[0-9]+}}) forwards to a new build_tier(tw_place place, ...) with TW_PLACE(TW_TIER_DRAM, 0) that its allocation uses and it passes on; callers passing a tier: builder-place.c:{{[0-9]+}} (pmem with dram_bytes 65536)
// ERR: note: wrapper alloc_longs (builder-place.c:{{[0-9]+}}) forwards to a new alloc_longs_tier(tw_tier tier, ...) with TW_TIER_DRAM that its allocation uses; callers passing a tier: builder-place.c:{{[0-9]+}} (its caller's tw_place parameter), builder-place.c:{{[0-9]+}} (its caller's tw_place parameter)
// ERR: 3 of 3 placed sites rewritten in 1 files
