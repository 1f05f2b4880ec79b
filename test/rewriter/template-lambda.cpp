// SPDX-License-Identifier: MIT
// An allocation in a lambda inside a function template (issue 35 item 5, as
// template-macro-shared.cpp): the lambda is one spelling for every
// instantiation. make_a's is placed for make_a<double> only: a constant
// there would move make_a<int>'s array too, and a lambda takes no tier
// parameter, so the site is reported and nothing is edited (before, the
// malloc was rewritten to pmem for both). make_b's is placed for both
// instantiations, in one tier: rewritten once, in place.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/template-lambda.json %s > %t.json
// RUN: not %bin/tierwise-rewrite --placement %t.json %s -- -std=c++17 > %t.diff 2> %t.err
// RUN: FileCheck %s < %t.diff
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// RUN: rm -rf %t.d && mkdir %t.d && cp %s %t.d/template-lambda.cpp
// RUN: not %bin/tierwise-rewrite --placement %t.json -i %t.d/template-lambda.cpp -- -std=c++17 2> /dev/null
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Werror -I%src/runtime/include %t.d/template-lambda.cpp
#include <cstdlib>

template <class T> T *make_a(long n) {
  T *out = nullptr;
  auto fill = [&] { out = static_cast<T *>(std::malloc(n * sizeof(T))); }; // @a
  // CHECK-NOT: {{^[-+]}}  auto fill = {{.*}} // @a
  // ERR-DAG: site 0 {{.*}}: site needs a wrapper change: make_a (template-lambda.cpp:[[#@LINE-4]]): the allocation at template-lambda.cpp:[[#@LINE-2]]:{{[0-9]+}} is in a lambda there, shared by calls of it the placement does not name (other instantiations), and a lambda takes no tier parameter
  fill(); // @fa
  return out;
}

template <class T> T *make_b(long n) {
  T *out = nullptr;
  auto fill = [&] { out = static_cast<T *>(std::malloc(n * sizeof(T))); }; // @b
  // CHECK: +  auto fill = [&] { out = static_cast<T *>(tw_malloc(TW_TIER_PMEM, n * sizeof(T))); }; // @b
  // ERR-DAG: note: rewriting malloc at template-lambda.cpp:[[#@LINE-2]]: shared by 2 sites, all pmem
  fill(); // @fb
  return out;
}

int main() {
  double *a = make_a<double>(1000); // @ad
  int *b = make_a<int>(1000);
  double *c = make_b<double>(1000); // @bd
  int *d = make_b<int>(1000); // @bi
  std::free(a), std::free(b), std::free(c), std::free(d);
  return 0;
}
// ERR: 2 of 3 placed sites rewritten in 1 files
