// SPDX-License-Identifier: MIT
// C++: std::malloc and calloc of a site with dram_bytes become
// tw_malloc_head / tw_calloc_head, new[] becomes new (tw::head_tag{TIER, N})
// (issue 23 item 3; a whole-pmem new[] new (tw::pmem)).
// The rewritten file compiles against tierwise.h.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/dram-head-cxx.json %s > %t.json
// RUN: %bin/tierwise-rewrite --placement %t.json %s -- -std=c++17 > %t.diff 2> %t.err
// RUN: FileCheck %s < %t.diff
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// RUN: rm -rf %t.d && mkdir %t.d && cp %s %t.d/dram-head.cpp
// RUN: %bin/tierwise-rewrite --placement %t.json -i %t.d/dram-head.cpp -- -std=c++17 2> /dev/null
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Werror -I%src/runtime/include %t.d/dram-head.cpp
#include <cstdlib>

int main() {
  auto *m = static_cast<double *>(std::malloc(1 << 23)); // @m
  // CHECK: +  auto *m = static_cast<double *>(tw_malloc_head(TW_TIER_PMEM, 1048576, 1 << 23));
  auto *c = static_cast<int *>(calloc(1 << 20, sizeof(int))); // @c
  // CHECK: +  auto *c = static_cast<int *>(tw_calloc_head(TW_TIER_PMEM, 4096, 1 << 20, sizeof(int)));
  auto *n = new long[1 << 20]; // @n
  // CHECK: +  auto *n = new (tw::head_tag{TW_TIER_PMEM, 1048576}) long[1 << 20];
  auto *w = new long[1 << 20]; // @w
  // CHECK: +  auto *w = new (tw::pmem) long[1 << 20];
  // ERR: 4 of 4 placed sites rewritten in 1 files
  long r = long(m[0]) + c[0] + n[0] + w[0];
  std::free(m), std::free(c);
  delete[] n, delete[] w;
  return int(r);
}
