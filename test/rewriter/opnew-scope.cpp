// SPDX-License-Identifier: MIT
// A framework that replaces the global operator new[] with its own block
// allocator (issue 35 item 2: "the block allocator behind operator new in a
// framework's own code is the framework's allocation"): the hot and the
// cold array are both `new double[n]`, so the block allocator's one malloc
// serves sites of different tiers through operator new[], which cannot take
// a tier parameter. The block allocator gains `tw_tier tier`, operator
// new[] passes tw::scope_tier(TW_TIER_DRAM), and the cold array's
// new-expression is wrapped in a tw::tier_scope. The rebuilt program has the
// cold array in pmem and the hot one in DRAM, and the framework's allocator
// still served both (its count); -Wall -Wextra -Werror; the same output.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/opnew-scope.json %s > %t.json
// RUN: %bin/tierwise-rewrite --placement %t.json %s -- -std=c++17 > %t.diff 2> %t.err
// RUN: FileCheck %s < %t.diff
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// RUN: rm -rf %t.d && mkdir -p %t.d/pmem && cp %s %t.d/
// RUN: %bin/tierwise-rewrite --placement %t.json -i %t.d/opnew-scope.cpp -- -std=c++17 2> /dev/null
// RUN: c++ -std=c++17 -Wall -Wextra -Werror -o %t.d/p %t.d/opnew-scope.cpp $(%tierwise config --cflags --libs)
// RUN: env TIERWISE_PMEM_DIR=%t.d/pmem %t.d/p | FileCheck --check-prefix=OUT %s
// RUN: c++ -std=c++17 -Wall -DORIGINAL -o %t.d/p0 %s && %t.d/p0 | FileCheck --check-prefix=OUT0 %s
// CHECK: +static void *block_alloc(std::size_t bytes, tw_tier tier = TW_TIER_DRAM) {
// CHECK: +  void *p = tw_malloc(tier, bytes); // @block
// CHECK: +  return block_alloc(n, tw::scope_tier(TW_TIER_DRAM)); // @opnew
// CHECK: +  double *cold = (tw::tier_scope(TW_TIER_PMEM), new double[n]); // @cold
// CHECK-NOT: tier_scope(
// ERR: 1 of 1 placed sites rewritten
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <new>
#ifdef ORIGINAL
static int tw_tier_of(const void *) { return 0; }
#else
extern "C" int tw_tier_of(const void *ptr); // tierwise.h, once rewritten
#endif

static unsigned long served;

// The framework's block allocator, behind every array new.
static void *block_alloc(std::size_t bytes) {
  void *p = std::malloc(bytes); // @block
  if (!p)
    throw std::bad_alloc();
  ++served;
  return p;
}

void *operator new[](std::size_t n) {
  return block_alloc(n); // @opnew
}
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }

int main() {
  const std::size_t n = 1 << 16;
  double *hot = new double[n];  // @hot
  double *cold = new double[n]; // @cold
  double s = 0;
  for (std::size_t i = 0; i < n; i++) {
    hot[i] = 1.0;
    cold[i] = 2.0;
    s += hot[i] * cold[i];
  }
  std::printf("hot %d cold %d served %lu sum %.1f\n", tw_tier_of(hot),
              tw_tier_of(cold), served, s);
  // OUT: hot 0 cold 1 served 2 sum 131072.0
  // OUT0: hot 0 cold 0 served 2 sum 131072.0
  delete[] hot;
  delete[] cold;
  return 0;
}
