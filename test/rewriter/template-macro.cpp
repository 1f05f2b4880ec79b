// SPDX-License-Identifier: MIT
// A macro used inside a template body (issue 23 item 6): NEW_ARRAY in
// Graph<V>::build is one use, written once for every instantiation, and the
// placement names Graph<Wide>'s only. The macro is not rewritten (neither
// the #define nor the use as it stands): build gains a defaulted tier
// parameter that the use, expanded, takes, and only the placed
// instantiation's call passes pmem. The rebuilt program has Graph<Wide>'s
// vertices in pmem and Graph<Narrow>'s (and the other NEW_ARRAY use) in
// DRAM.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/template-macro.json %s > %t.json
// RUN: %bin/tierwise-rewrite --placement %t.json %s -- -std=c++17 > %t.diff 2> %t.err
// RUN: FileCheck %s < %t.diff
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// RUN: rm -rf %t.d && mkdir -p %t.d/pmem && cp %s %t.d/
// RUN: %bin/tierwise-rewrite --placement %t.json -i %t.d/template-macro.cpp -- -std=c++17 2> /dev/null
// RUN: c++ -std=c++17 -Wall -Werror -o %t.d/t %t.d/template-macro.cpp $(%tierwise config --cflags --libs)
// RUN: env TIERWISE_PMEM_DIR=%t.d/pmem %t.d/t | FileCheck --check-prefix=OUT %s
#include <cstdio>
#include <cstdlib>
// CHECK: +#include <tierwise.h>
extern "C" int tw_tier_of(const void *ptr); // tierwise.h, once rewritten

#define NEW_ARRAY(T, n) static_cast<T *>(std::malloc((n) * sizeof(T)))
// CHECK-NOT: {{^[-+]}}#define NEW_ARRAY

struct Narrow {
  int id;
};
struct Wide {
  double w[4];
};

template <class V> struct Graph {
  V *vertices = nullptr;
  void build(long n) {
    vertices = NEW_ARRAY(V, n); // @use
    // CHECK: +  void build(long n, tw_tier tier = TW_TIER_DRAM) {
    // CHECK: +    vertices = /* NEW_ARRAY */ static_cast<V *>(tw_malloc(tier, (n) * sizeof(V)));
  }
  ~Graph() { std::free(vertices); }
};

int main() {
  Graph<Narrow> a;
  Graph<Wide> b;
  a.build(1 << 14); // @ca
  // CHECK-NOT: {{^[-+]}}  a.build
  b.build(1 << 14); // @cb
  // CHECK: +  b.build(1 << 14, TW_TIER_PMEM);
  int *other = NEW_ARRAY(int, 1 << 14); // @other
  // CHECK-NOT: {{^[-+]}}  int *other
  // OUT: narrow 0 wide 1 other 0
  std::printf("narrow %d wide %d other %d\n", tw_tier_of(a.vertices),
              tw_tier_of(b.vertices), tw_tier_of(other));
  std::free(other);
  return 0;
}
// ERR: note: wrapper Graph::build (template-macro.cpp:{{[0-9]+}}) gains a parameter `tw_tier tier = TW_TIER_DRAM` that its allocation uses; callers passing a tier: template-macro.cpp:{{[0-9]+}} (pmem)
// ERR: 1 of 1 placed sites rewritten in 1 files
