// SPDX-License-Identifier: MIT
// A builder that needs a DRAM head for its own array and passes a tier on
// to the helpers it calls gets ONE parameter carrying both (issue 35 item
// 1): `build` allocates the headed `vals` itself and calls `make_array` for
// `offs` and `edges`; both functions have callers the placement never saw
// (a second, small graph and a scratch array), so both gain a parameter.
// `build` gains `tw_place place`, uses place.tier and place.dram_bytes for
// its own allocation and passes place.tier on to `make_array`, which takes a
// tw_tier. The patch builds with -Wall -Wextra -Werror; the rebuilt program
// has the placed graph's arrays in pmem (vals split: its head in DRAM) and
// the others in DRAM, with the same output.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/builder-place.json %s > %t.json
// RUN: %bin/tierwise-rewrite --placement %t.json %s -- -std=c++17 > %t.diff 2> %t.err
// RUN: FileCheck %s < %t.diff
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// RUN: rm -rf %t.d && mkdir %t.d %t.d/pmem && cp %s %t.d/
// RUN: %bin/tierwise-rewrite --placement %t.json -i %t.d/builder-place.cpp -- -std=c++17 2> /dev/null
// RUN: c++ -std=c++17 -Wall -Wextra -Werror -o %t.d/b %t.d/builder-place.cpp $(%tierwise config --cflags --libs)
// RUN: env TIERWISE_PMEM_DIR=%t.d/pmem %t.d/b | FileCheck --check-prefix=OUT %s
// RUN: c++ -std=c++17 -Wall -DORIGINAL -o %t.d/b0 %s && %t.d/b0 | FileCheck --check-prefix=OUT0 %s
#include <cstddef>
#include <cstdio>
#include <cstdlib>
// CHECK: +#include <tierwise.h>
#ifdef ORIGINAL
static int tw_tier_of(const void *) { return 0; }
#else
extern "C" int tw_tier_of(const void *ptr); // tierwise.h, once rewritten
#endif

template <class T> T *make_array(std::size_t n) {
  // CHECK: +template <class T> T *make_array(std::size_t n, tw_tier tier = TW_TIER_DRAM) {
  return new T[n]; // @helper
  // CHECK: +  return new (tw::tier_tag{tier}) T[n];
}

struct graph {
  std::size_t n = 0, m = 0;
  double *vals = nullptr;
  long *offs = nullptr, *edges = nullptr;
};

static graph build(std::size_t n, std::size_t m) {
  // CHECK: +static graph build(std::size_t n, std::size_t m, tw_place place = TW_PLACE(TW_TIER_DRAM, 0)) {
  graph g;
  g.n = n;
  g.m = m;
  g.vals = static_cast<double *>(std::malloc(n * sizeof(double))); // @vals
  // CHECK: +  g.vals = static_cast<double *>(tw_malloc_head(place.tier, place.dram_bytes, n * sizeof(double)));
  g.offs = make_array<long>(n + 1); // @offs
  // CHECK: +  g.offs = make_array<long>(n + 1, place.tier);
  g.edges = make_array<long>(m); // @edges
  // CHECK: +  g.edges = make_array<long>(m, place.tier);
  for (std::size_t i = 0; i <= n; ++i)
    g.offs[i] = (long)(i * (m / n));
  for (std::size_t e = 0; e < m; ++e)
    g.edges[e] = (long)((e * 7919) % n);
  for (std::size_t i = 0; i < n; ++i)
    g.vals[i] = 1.0 / (double)(i + 1);
  return g;
}

static double sum(const graph &g) {
  double s = 0;
  for (std::size_t v = 0; v < g.n; ++v)
    for (long e = g.offs[v]; e < g.offs[v + 1]; ++e)
      s += g.vals[g.edges[e]];
  return s;
}

int main() {
  graph big = build(1 << 16, 1 << 20); // @big
  // CHECK: +  graph big = build(1 << 16, 1 << 20, TW_PLACE(TW_TIER_PMEM, 65536));
  graph small = build(64, 1024); // never profiled: stays in DRAM
  // CHECK-NOT: {{^}}+{{.*}}build(64, 1024
  long *scratch = make_array<long>(1 << 12); // never profiled
  // CHECK-NOT: {{^}}+{{.*}}make_array<long>(1 << 12
  scratch[0] = 1;
  // vals: its first 64 KiB in DRAM, the rest in pmem.
  std::printf("big %d+%d/%d/%d small %d/%d/%d scratch %d sums %.6f %.6f\n",
              tw_tier_of(big.vals), tw_tier_of(big.vals + big.n - 1),
              tw_tier_of(big.offs),
              tw_tier_of(big.edges), tw_tier_of(small.vals),
              tw_tier_of(small.offs), tw_tier_of(small.edges),
              tw_tier_of(scratch), sum(big), sum(small) + (double)scratch[0]);
  // OUT: big 0+1/1/1 small 0/0/0 scratch 0 sums 186.681251 76.902254
  // OUT0: big 0+0/0/0 small 0/0/0 scratch 0 sums 186.681251 76.902254
  return 0;
}
// ERR-NOT: two different edits
// ERR: note: wrapper build (builder-place.cpp:{{[0-9]+}}) gains a parameter `tw_place place = TW_PLACE(TW_TIER_DRAM, 0)` that its allocation uses and it passes on; callers passing a tier: builder-place.cpp:{{[0-9]+}} (pmem with dram_bytes 65536)
// ERR: note: wrapper make_array (builder-place.cpp:{{[0-9]+}}) gains a parameter `tw_tier tier = TW_TIER_DRAM` that its allocation uses; callers passing a tier: builder-place.cpp:{{[0-9]+}} (its caller's tw_place parameter), builder-place.cpp:{{[0-9]+}} (its caller's tw_place parameter)
// ERR: 3 of 3 placed sites rewritten in 1 files
