// SPDX-License-Identifier: MIT
// new T, new T[n], ::new and std::malloc become their tierwise.h forms;
// new expressions tierwise.h cannot express are listed with the reason and
// the exit status is 1. The rewritten file compiles.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/cxx-new.json %s > %t.json
// RUN: not %bin/tierwise-rewrite --placement %t.json %s -- -std=c++17 > %t.diff 2> %t.err
// RUN: FileCheck %s < %t.diff
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// RUN: rm -rf %t.d && mkdir %t.d && cp %s %t.d/cxx-new.cpp
// RUN: not %bin/tierwise-rewrite --placement %t.json -i %t.d/cxx-new.cpp -- -std=c++17 2> /dev/null
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Werror -I%src/runtime/include %t.d/cxx-new.cpp
#include <cstdlib>
#include <new>
#include <vector>
// CHECK: #include <new>
// CHECK-NEXT: +#include <tierwise.h>
// CHECK-NEXT: #include <vector>

struct Node {
  int v;
  static void *operator new(std::size_t s) { return ::operator new(s); }
};
struct alignas(64) Wide {
  int v;
};

int main() {
  int *a = new int(7); // @a
  // CHECK: +  int *a = new (tw::pmem) int(7);
  int *b = new int[100]; // @b
  // CHECK: +  int *b = new (tw::kmem) int[100];
  int *c = ::new int[10]; // @c
  // CHECK: +  int *c = ::new (tw::pmem) int[10];
  double *d = static_cast<double *>(std::malloc(8 * sizeof(double))); // @d
  // CHECK: +  double *d = static_cast<double *>(tw_malloc(TW_TIER_PMEM, 8 * sizeof(double)));
  Node *e = new Node; // @e
  // ERR-DAG: site 4 {{.*}}cannot rewrite new at cxx-new.cpp:[[@LINE-1]]:13: it calls a class-specific Node::operator new
  Wide *f = new Wide; // @f
  // CHECK: +  Wide *f = new (tw::pmem) Wide;
  int *g = new (std::nothrow) int[5]; // @g
  // ERR-DAG: site 6 {{.*}}new (std::nothrow): tierwise.h has no nothrow tier form
  alignas(int) static char buf[sizeof(int)];
  int *h = new (buf) int(1); // @h
  // ERR-DAG: site 7 {{.*}}it already passes placement arguments to operator new
  // Allocations inside library code (std::vector) are not rewritable:
  std::vector<int> v(100); // @v
  // ERR-DAG: site 8 {{.*}}: the allocation is in std::__new_allocator<int>::allocate(unsigned long, void const*) {{.*}}new_allocator.h:151, outside the given files (reached from cxx-new.cpp:[[@LINE-1]])
  v.push_back(1); // @w
  // ERR-DAG: site 9 {{.*}}: no allocation call at cxx-new.cpp:[[@LINE-1]]; it allocates inside a call made here (std::vector<int>::push_back): the placement lacks the frames inside that call
  // ERR: 5 of 10 placed sites rewritten in 1 files
  int r = v[0] + *a + b[0] + c[0] + int(d[0]) + e->v + f->v + g[0] + *h;
  delete a, delete[] b, delete[] c, std::free(d), delete e, delete f;
  delete[] g;
  return r;
}
