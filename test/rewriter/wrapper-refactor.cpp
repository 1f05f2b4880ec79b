// SPDX-License-Identifier: MIT
// C++ wrappers that serve sites of different tiers gain a trailing tw_tier
// parameter defaulted to the placement's default tier, and each placed
// caller passes its tier: a class template constructor used by several
// arrays (also in a constructor's member initializers, and with braces) and
// an inline safe_malloc. A caller that leaves a defaulted argument out is
// reported. The rebuilt program has each array in its tier.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/wrapper-refactor-cxx.json %s > %t.json
// RUN: not %bin/tierwise-rewrite --placement %t.json %s -- -std=c++14 > %t.diff 2> %t.err
// RUN: FileCheck %s < %t.diff
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// RUN: rm -rf %t.d && mkdir %t.d %t.d/pmem && cp %s %t.d/
// RUN: not %bin/tierwise-rewrite --placement %t.json -i %t.d/wrapper-refactor.cpp -- -std=c++14 2> /dev/null
// RUN: c++ -std=c++14 -Wall -Wextra -Werror -pedantic -o %t.d/w %t.d/wrapper-refactor.cpp $(%tierwise config --cflags --libs)
// RUN: env TIERWISE_PMEM_DIR=%t.d/pmem %t.d/w | FileCheck --check-prefix=OUT %s
#include <cstddef>
#include <cstdio>
#include <cstdlib>
// CHECK: +#include <tierwise.h>
extern "C" int tw_tier_of(const void *ptr); // tierwise.h, once rewritten

template <class T> class Array {
public:
  explicit Array(std::size_t n) : data_(new T[n]) {} // @ctor
  // CHECK: +  explicit Array(std::size_t n, tw_tier tier = TW_TIER_DRAM) : data_(new (tw::tier_tag{tier}) T[n]) {}
  ~Array() { delete[] data_; }
  T *data() const { return data_; }

private:
  T *data_;
};

inline void *safe_malloc(std::size_t n) {
  // CHECK: +inline void *safe_malloc(std::size_t n, tw_tier tier = TW_TIER_DRAM) {
  void *p = std::malloc(n); // @sm
  // CHECK: +  void *p = tw_malloc(tier, n);
  if (!p)
    std::abort();
  return p;
}

inline void *padded_buf(std::size_t n, std::size_t pad = 64) {
  // CHECK-NOT: {{^}}+{{.*}}padded_buf(
  return std::malloc(n + pad); // @ab
}

struct Graph {
  explicit Graph(std::size_t n)
      : ranks(n), // @gr
        // CHECK: +      : ranks(n, TW_TIER_PMEM),
        deg(n) {} // @gd
  Array<double> ranks;
  Array<int> deg;
};

int main() {
  Array<double> a(1 << 16); // @a
  // CHECK: +  Array<double> a(1 << 16, TW_TIER_PMEM);
  Array<double> b{1 << 16}; // @b
  // CHECK: +  Array<double> b{1 << 16, TW_TIER_PMEM};
  Array<long> c(1 << 16); // @c
  Graph g(1 << 10);
  int *s1 = static_cast<int *>(safe_malloc(4096)); // @s1
  // CHECK: +  int *s1 = static_cast<int *>(safe_malloc(4096, TW_TIER_PMEM));
  int *s2 = static_cast<int *>(safe_malloc(4096)); // @s2
  void *x1 = padded_buf(1 << 16); // @x1
  void *x2 = padded_buf(1 << 16, 64); // @x2
  // ERR-DAG: note: wrapper Array::Array (wrapper-refactor.cpp:{{[0-9]+}}) gains a parameter `tw_tier tier = TW_TIER_DRAM` that its allocation uses; callers passing a tier: wrapper-refactor.cpp:{{[0-9]+}} (pmem), wrapper-refactor.cpp:{{[0-9]+}} (pmem), wrapper-refactor.cpp:{{[0-9]+}} (pmem)
  // ERR-DAG: note: wrapper safe_malloc (wrapper-refactor.cpp:{{[0-9]+}}) gains a parameter `tw_tier tier = TW_TIER_DRAM` that its allocation uses; callers passing a tier: wrapper-refactor.cpp:[[@LINE-6]] (pmem)
  // ERR-DAG: not rewritten: site 7 (padded_buf{{.*}}): site needs a wrapper change: padded_buf (wrapper-refactor.cpp:{{[0-9]+}}): its call at wrapper-refactor.cpp:[[@LINE-4]] leaves default arguments out
  // ERR: 4 of 5 placed sites rewritten in 1 files
  // OUT: a 1 b 1 c 0 ranks 1 deg 0 s1 1 s2 0 x1 0 x2 0
  std::printf("a %d b %d c %d ranks %d deg %d s1 %d s2 %d x1 %d x2 %d\n",
              tw_tier_of(a.data()), tw_tier_of(b.data()), tw_tier_of(c.data()),
              tw_tier_of(g.ranks.data()), tw_tier_of(g.deg.data()),
              tw_tier_of(s1), tw_tier_of(s2), tw_tier_of(x1), tw_tier_of(x2));
  std::free(s1), std::free(s2), std::free(x1), std::free(x2);
  return 0;
}
