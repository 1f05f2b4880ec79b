// SPDX-License-Identifier: MIT
// Allocations written through macros: a call spelled in a macro argument is
// rewritten where it is written; a call in a macro body is rewritten in the
// #define when every placed use shares the tier, else each placed use is
// expanded (macro-per-use.c has more).
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/macro.json %s > %t.json
// RUN: %bin/tierwise-rewrite --placement %t.json %s -- > %t.diff 2> %t.err
// RUN: FileCheck %s < %t.diff
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// RUN: rm -rf %t.d && mkdir %t.d && cp %s %t.d/macro.c
// RUN: %bin/tierwise-rewrite --placement %t.json -i %t.d/macro.c -- 2> /dev/null
// RUN: cc -fsyntax-only -Wall -Werror -I%src/runtime/include %t.d/macro.c
#include <stdlib.h>

#define CHECKED(x) (x)
#define ALLOC_ONE(n) malloc(n)
// CHECK: -#define ALLOC_ONE(n) malloc(n)
// CHECK-NEXT: +#define ALLOC_ONE(n) tw_malloc(TW_TIER_PMEM, n)
#define ALLOC_TWO(n) calloc(1, n)
// CHECK-NOT: {{^\+}}#define ALLOC_TWO

int main(void) {
  char *a = CHECKED(malloc(10)); // @a
  // CHECK: +  char *a = CHECKED(tw_malloc(TW_TIER_PMEM, 10));
  char *b = ALLOC_ONE(20); // @b
  char *c = ALLOC_TWO(30); // @c
  // CHECK: +  char *c = /* ALLOC_TWO */ tw_calloc(TW_TIER_PMEM, 1, 30);
  // ERR: note: expanded ALLOC_TWO at macro.c:[[@LINE-2]] (its uses need different tiers): pmem
  char *d = ALLOC_TWO(40); // @d
  // CHECK-NOT: {{^\+}} char *d
  // ERR: 3 of 3 placed sites rewritten
  free(a), free(b), free(c), free(d);
  return 0;
}
