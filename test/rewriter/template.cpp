// SPDX-License-Identifier: MIT
// Allocations inside templates: the expression is written once for all
// instantiations, so it is rewritten when every placed instantiation shares
// the tier; when they differ, the class template's constructor gains a
// defaulted trailing tw_tier parameter and the placed construction passes it.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/template.json %s > %t.json
// RUN: %bin/tierwise-rewrite --placement %t.json %s -- -std=c++17 > %t.diff 2> %t.err
// RUN: FileCheck %s < %t.diff
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// RUN: rm -rf %t.d && mkdir %t.d && cp %s %t.d/template.cpp
// RUN: %bin/tierwise-rewrite --placement %t.json -i %t.d/template.cpp -- -std=c++17 2> /dev/null
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Werror -I%src/runtime/include %t.d/template.cpp
#include <cstddef>
#include <cstdlib>

template <class T> T *alloc_array(std::size_t n) {
  return static_cast<T *>(malloc(n * sizeof(T))); // @tm
}
// CHECK: +  return static_cast<T *>(tw_malloc(TW_TIER_PMEM, n * sizeof(T)));
// ERR-DAG: note: rewriting malloc at template.cpp:[[@LINE-3]]: shared by 2 sites, all pmem

template <class T> struct buffer {
  explicit buffer(std::size_t n) : data(new T[n]) {} // @bn
  // CHECK: +  explicit buffer(std::size_t n) : data(new (tw::hbw) T[n]) {}
  ~buffer() { delete[] data; }
  T *data;
};

template <class T> struct pvector {
  explicit pvector(std::size_t n) : data(new T[n]) {} // @pv
  // CHECK: +  explicit pvector(std::size_t n, tw_tier tier = TW_TIER_DRAM) : data(new (tw::tier_tag{tier}) T[n]) {}
  ~pvector() { delete[] data; }
  T *data;
};

int main() {
  int *a = alloc_array<int>(10);       // @ca
  double *b = alloc_array<double>(10); // @cb
  buffer<float> c(10);                 // @cc
  pvector<int> v(10);                  // @cv
  // CHECK: +  pvector<int> v(10, TW_TIER_PMEM);
  // ERR-DAG: note: wrapper pvector::pvector (template.cpp:{{[0-9]+}}) gains a parameter `tw_tier tier = TW_TIER_DRAM` that its allocation uses; callers passing a tier: template.cpp:[[@LINE-2]] (pmem)
  pvector<long> w(10); // @cw
  // CHECK-NOT: {{^[-+]}} pvector<long> w
  // ERR: 4 of 4 placed sites rewritten
  int r = a[0] + int(b[0]) + int(c.data[0]) + v.data[0] + int(w.data[0]);
  free(a), free(b);
  return r;
}
