// SPDX-License-Identifier: MIT
// A call path the placement does not name keeps its default tier (issue 23
// item 2): the placed `ranks` array is allocated through a filling
// constructor that delegates to the allocating one, `vec(n, init) : vec(n)`,
// and the same filling constructor also builds a verifier's array the
// profile never saw. The allocating constructor gains `tw_tier tier =
// TW_TIER_DRAM`, the filling one gains it too and passes it on (never a
// constant: that would move every vec(n, init) to pmem), and only the placed
// call passes TW_TIER_PMEM. The rebuilt program has ranks in pmem and the
// verifier's and the plain arrays in DRAM, with the same output.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/wrapper-delegate.json %s > %t.json
// RUN: %bin/tierwise-rewrite --placement %t.json %s -- -std=c++17 > %t.diff 2> %t.err
// RUN: FileCheck %s < %t.diff
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// RUN: rm -rf %t.d && mkdir %t.d %t.d/pmem && cp %s %t.d/
// RUN: %bin/tierwise-rewrite --placement %t.json -i %t.d/wrapper-delegate.cpp -- -std=c++17 2> /dev/null
// RUN: c++ -std=c++17 -Wall -Wextra -Werror -o %t.d/w %t.d/wrapper-delegate.cpp $(%tierwise config --cflags --libs)
// RUN: env TIERWISE_PMEM_DIR=%t.d/pmem %t.d/w | FileCheck --check-prefix=OUT %s
// RUN: c++ -std=c++17 -DORIGINAL -o %t.d/w0 %s && %t.d/w0 | FileCheck --check-prefix=OUT0 %s
#include <cstddef>
#include <cstdio>
// CHECK: +#include <tierwise.h>
#ifdef ORIGINAL
static int tw_tier_of(const void *) { return 0; }
#else
extern "C" int tw_tier_of(const void *ptr); // tierwise.h, once rewritten
#endif

template <class T> class vec {
public:
  explicit vec(std::size_t n) : data_(new T[n]), n_(n) {} // @alloc
  // CHECK: +  explicit vec(std::size_t n, tw_tier tier = TW_TIER_DRAM) : data_(new (tw::tier_tag{tier}) T[n]), n_(n) {}
  vec(std::size_t n, T init) : vec(n) { // @deleg
    // CHECK: +  vec(std::size_t n, T init, tw_tier tier = TW_TIER_DRAM) : vec(n, tier) {
    for (std::size_t i = 0; i < n; ++i)
      data_[i] = init;
  }
  ~vec() { delete[] data_; }
  T *data() const { return data_; }
  std::size_t size() const { return n_; }

private:
  T *data_;
  std::size_t n_;
};

// Never profiled: its array must stay where `tierwise run` leaves it.
static double verify(const vec<double> &r, int *tier) {
  vec<double> check(r.size(), 0.5); // @verify
  // CHECK-NOT: {{^}}+{{.*}}check(r.size(), 0.5
  double d = 0;
  for (std::size_t i = 0; i < r.size(); ++i)
    d += r.data()[i] * check.data()[i];
  *tier = tw_tier_of(check.data());
  return d;
}

int main() {
  const std::size_t n = 1 << 15;
  vec<double> ranks(n, 1.0); // @ranks
  // CHECK: +  vec<double> ranks(n, 1.0, TW_TIER_PMEM);
  vec<double> plain(n); // @plain
  // CHECK-NOT: {{^}}+{{.*}}plain(n
  for (std::size_t i = 0; i < n; ++i)
    plain.data()[i] = ranks.data()[i] * (double)(i % 3);
  int vt = -1;
  double d = verify(ranks, &vt);
  // OUT: ranks 1 plain 0 verifier 0 sum 16384.000000 32767.000000
  // OUT0: ranks 0 plain 0 verifier 0 sum 16384.000000 32767.000000
  double p = 0;
  for (std::size_t i = 0; i < n; ++i)
    p += plain.data()[i];
  std::printf("ranks %d plain %d verifier %d sum %.6f %.6f\n",
              tw_tier_of(ranks.data()), tw_tier_of(plain.data()), vt, d, p);
  return 0;
}
// ERR: note: wrapper vec::vec (wrapper-delegate.cpp:{{[0-9]+}}) gains a parameter `tw_tier tier = TW_TIER_DRAM` that it passes on; callers passing a tier: wrapper-delegate.cpp:{{[0-9]+}} (pmem)
// ERR: note: wrapper vec::vec (wrapper-delegate.cpp:{{[0-9]+}}) gains a parameter `tw_tier tier = TW_TIER_DRAM` that its allocation uses; callers passing a tier: wrapper-delegate.cpp:{{[0-9]+}} (its caller's tier parameter)
// ERR: 1 of 1 placed sites rewritten in 1 files
