// SPDX-License-Identifier: MIT
// A pool shared by sites of different tiers, reached through the standard
// library (issue 35 item 2): fwlike::sequence<T> is a std::vector whose
// allocator asks one pool (examples/fwlike/include/fwlike/alloc.h); a hot
// array stays in DRAM and a cold one goes to pmem. No parameter crosses
// std::vector, so the pool's allocate gains `tw_tier tier = TW_TIER_DRAM`,
// the allocator passes it tw::scope_tier(TW_TIER_DRAM), and the cold
// array's construction sets a tw::tier_scope for its length. A helper that
// builds both a DRAM and a pmem array (make_seq) gets no scope: it would
// place both; the scope goes one call further out, at the pmem array's call
// of the helper. The rebuilt program has the cold and chill blocks in pmem
// and the hot, warm and later ones in DRAM; -Wall -Wextra -Werror; the same
// output.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/pool-scope.json %s %S/../../examples/fwlike/include/fwlike/alloc.h > %t.json
// RUN: rm -rf %t.d && mkdir -p %t.d/pmem && cp -r %S/../../examples/fwlike/include %t.d/ && cp %s %t.d/
// RUN: %bin/tierwise-rewrite --placement %t.json --root %t.d -o %t.d/fix.patch %t.d/pool-scope.cpp -- -std=c++17 -I%t.d/include 2> %t.err
// RUN: FileCheck %s < %t.d/fix.patch
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// RUN: cd %t.d && patch -s -p1 < fix.patch
// RUN: c++ -std=c++17 -Wall -Wextra -Werror -I%t.d/include -o %t.d/p %t.d/pool-scope.cpp $(%tierwise config --cflags --libs)
// RUN: env TIERWISE_PMEM_DIR=%t.d/pmem %t.d/p | FileCheck --check-prefix=OUT %s
// RUN: c++ -std=c++17 -Wall -DORIGINAL -I%S/../../examples/fwlike/include -o %t.d/p0 %s && %t.d/p0 | FileCheck --check-prefix=OUT0 %s
// CHECK: +#include <tierwise.h>
// CHECK: +  void *allocate(std::size_t bytes, tw_tier tier = TW_TIER_DRAM) {
// CHECK: +      return ::operator new(bytes, std::align_val_t(64), tw::tier_tag{tier}); // own block @poolbig
// CHECK: +    return static_cast<T *>(default_pool().allocate(n * sizeof(T), tw::scope_tier(TW_TIER_DRAM))); // @poolcall
// CHECK: +  fwlike::sequence<double> cold((tw::tier_scope(TW_TIER_PMEM), n), 2.0); // @cold
// CHECK: +  fwlike::sequence<double> chill = make_seq((tw::tier_scope(TW_TIER_PMEM), n), 5.0); // @chill
// CHECK-NOT: tier_scope
// ERR: note: wrapper fwlike::pool_allocator::allocate (alloc.h:{{[0-9]+}}) gains a parameter `tw_tier tier = TW_TIER_DRAM` that its allocation uses; callers passing a tier: alloc.h:{{[0-9]+}} (the tier scope of its callers), pool-scope.cpp:{{[0-9]+}} (pmem, a tw::tier_scope for the call), pool-scope.cpp:{{[0-9]+}} (pmem, a tw::tier_scope for the call)
// ERR: 2 of 2 placed sites rewritten
#include <cstdio>

#include "fwlike/alloc.h"
#ifdef ORIGINAL
static int tw_tier_of(const void *) { return 0; }
#else
extern "C" int tw_tier_of(const void *ptr); // tierwise.h, once rewritten
#endif

static fwlike::sequence<double> make_seq(std::size_t n, double v) {
  return fwlike::sequence<double>(n, v); // @mk
}

int main() {
  const std::size_t n = 1 << 16;
  fwlike::sequence<double> hot(n, 1.0);  // @hot
  fwlike::sequence<double> cold(n, 2.0); // @cold
  fwlike::sequence<double> later(n, 3.0);
  fwlike::sequence<double> warm = make_seq(n, 4.0);  // @warm
  fwlike::sequence<double> chill = make_seq(n, 5.0); // @chill
  double s = 0;
  for (std::size_t i = 0; i < n; i++)
    s += hot[i] * cold[i] + later[i] + warm[i] * chill[i];
  std::printf("hot %d cold %d later %d warm %d chill %d sum %.1f\n",
              tw_tier_of(hot.data()), tw_tier_of(cold.data()),
              tw_tier_of(later.data()), tw_tier_of(warm.data()),
              tw_tier_of(chill.data()), s);
  // OUT: hot 0 cold 1 later 0 warm 0 chill 1 sum 1638400.0
  // OUT0: hot 0 cold 0 later 0 warm 0 chill 0 sum 1638400.0
  return 0;
}
