// SPDX-License-Identifier: MIT
// C wrappers that serve sites of different tiers: each becomes a NAME_tier
// variant taking the tier first, which the original calls with the
// placement's default tier; its prototype (util.h) gains the variant's, and
// each placed caller calls the variant with its tier. xalloc is declared in
// Inputs/wrap/util.h and defined in util.c; safe_malloc is static inline in
// util.h. The rebuilt program has each array in its tier.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/wrapper-refactor.json %s > %t.json
// RUN: rm -rf %t.d && mkdir %t.d %t.d/pmem && cp %s %S/Inputs/wrap/util.h %S/Inputs/wrap/util.c %t.d/
// RUN: %bin/tierwise-rewrite --placement %t.json --root %t.d %t.d/wrapper-refactor.c %t.d/util.c -- -std=c11 -I%src/runtime/include > %t.diff 2> %t.err
// RUN: FileCheck %s < %t.diff
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// RUN: cd %t.d && patch -s -p1 < %t.diff
// RUN: cc -std=c11 -Wall -Wextra -Werror -o %t.d/w %t.d/wrapper-refactor.c %t.d/util.c $(%tierwise config --cflags --libs)
// RUN: env TIERWISE_PMEM_DIR=%t.d/pmem %t.d/w | FileCheck --check-prefix=OUT %s
// CHECK-LABEL: +++ b/util.c
// CHECK: -void *xalloc(size_t n) {
// CHECK-NEXT: -  void *p = malloc(n); /* line 9 */
// CHECK-NEXT: +void *xalloc_tier(tw_tier tier, size_t n) {
// CHECK-NEXT: +  void *p = tw_malloc(tier, n); /* line 9 */
// CHECK: +void *xalloc(size_t n) {
// CHECK-NEXT: +  return xalloc_tier(TW_TIER_DRAM, n);
// CHECK-NEXT: +}
// CHECK-LABEL: +++ b/util.h
// CHECK: +#include <tierwise.h>
// CHECK: +void *xalloc_tier(tw_tier tier, size_t n);
// CHECK-NEXT:  void *xalloc(size_t n);
// CHECK: -static inline void *safe_malloc(size_t n) {
// CHECK-NEXT: -  void *p = malloc(n); /* line 10 */
// CHECK-NEXT: +static inline void *safe_malloc_tier(tw_tier tier, size_t n) {
// CHECK-NEXT: +  void *p = tw_malloc(tier, n); /* line 10 */
// CHECK: +__attribute__((unused)) static inline void *safe_malloc(size_t n) {
// CHECK-NEXT: +  return safe_malloc_tier(TW_TIER_DRAM, n);
// CHECK-NEXT: +}
// CHECK-LABEL: +++ b/wrapper-refactor.c
// ERR-DAG: note: wrapper xalloc (util.c:8) forwards to a new xalloc_tier(tw_tier tier, ...) with TW_TIER_DRAM that its allocation uses; callers passing a tier: wrapper-refactor.c:{{[0-9]+}} (pmem)
// ERR-DAG: note: wrapper safe_malloc (util.h:9) forwards to a new safe_malloc_tier(tw_tier tier, ...) with TW_TIER_DRAM that its allocation uses; callers passing a tier: wrapper-refactor.c:{{[0-9]+}} (pmem), wrapper-refactor.c:{{[0-9]+}} (pmem)
// ERR: 3 of 3 placed sites rewritten in 3 files
#include "util.h"

#include <stdio.h>
#include <tierwise.h>

int main(void) {
  double *edges = xalloc(1 << 20); // @x1
  // CHECK: +  double *edges = xalloc_tier(TW_TIER_PMEM, 1 << 20); // @x1
  double *ranks = xalloc(1 << 20); // @x2
  // CHECK-NOT: {{^}}+{{.*}}ranks = xalloc_tier
  int *deg = safe_malloc(4096); // @s1
  // CHECK: +  int *deg = safe_malloc_tier(TW_TIER_PMEM, 4096); // @s1
  int *next = safe_malloc(4096); // @s2
  int *adj = safe_malloc(1 << 16); // @s3
  // CHECK: +  int *adj = safe_malloc_tier(TW_TIER_PMEM, 1 << 16); // @s3
  // OUT: edges 1 ranks 0 deg 1 next 0 adj 1
  printf("edges %d ranks %d deg %d next %d adj %d\n", tw_tier_of(edges),
         tw_tier_of(ranks), tw_tier_of(deg), tw_tier_of(next), tw_tier_of(adj));
  free(edges), free(ranks), free(deg), free(next), free(adj);
  return 0;
}
