// SPDX-License-Identifier: MIT
// An allocation macro whose uses need different tiers: each placed use is
// expanded into the tierwise.h call it stands for (arguments substituted,
// the macro's name in a comment), the other uses keep the macro. A use in
// another macro's argument is expanded too; a body with ## is reported. The
// rewritten program, linked with libtierwise, has each array in its tier.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/macro-per-use.json %s > %t.json
// RUN: not %bin/tierwise-rewrite --placement %t.json %s -- -std=c11 -I%src/runtime/include > %t.diff 2> %t.err
// RUN: FileCheck %s < %t.diff
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// RUN: rm -rf %t.d && mkdir %t.d %t.d/pmem && cp %s %t.d/macro-per-use.c
// RUN: not %bin/tierwise-rewrite --placement %t.json -i %t.d/macro-per-use.c -- -std=c11 -I%src/runtime/include 2> /dev/null
// RUN: cc -std=c11 -Wall -Wextra -Werror -Wno-maybe-uninitialized -o %t.d/m %t.d/macro-per-use.c $(%tierwise config --cflags --libs)
// RUN: env TIERWISE_PMEM_DIR=%t.d/pmem %t.d/m | FileCheck --check-prefix=OUT %s
#include <stdio.h>
#include <stdlib.h>
#include <tierwise.h>

#define COUNT 100
#define NEW_ARRAY(T, n) (T *)malloc((n) * sizeof(T))
// CHECK-NOT: {{^[-+]}}#define NEW_ARRAY
#define NEW_ZEROED(T, n)                                                      \
  ((T *)calloc((n),                                                           \
               sizeof(T)))
#define CHECKED(x) (x)
#define GLUE_ALLOC(name, n) name##_buf = malloc(n)

int main(void) {
  double *ranks = NEW_ARRAY(double, COUNT); // @r
  // CHECK: +  double *ranks = /* NEW_ARRAY */ (double *)tw_malloc(TW_TIER_PMEM, (COUNT) * sizeof(double));
  // ERR: note: expanded NEW_ARRAY at macro-per-use.c:[[@LINE-2]] (its uses need different tiers): pmem
  int *deg = NEW_ARRAY(int, COUNT * 2); // @d
  // CHECK-NOT: {{^[-+]}}  int *deg
  long *edges = CHECKED(NEW_ARRAY(long, COUNT)); // @e
  // CHECK: +  long *edges = CHECKED(/* NEW_ARRAY */ (long *)tw_malloc(TW_TIER_PMEM, (COUNT) * sizeof(long)));
  float *w = NEW_ZEROED(float, COUNT); // @w
  // CHECK: +  float *w = /* NEW_ZEROED */ ((float *)tw_calloc(TW_TIER_PMEM, (COUNT), sizeof(float)));
  float *w2 = NEW_ZEROED(float, 3); // @w2
  char *a_buf = NULL, *b_buf = NULL;
  GLUE_ALLOC(a, 10); // @ga
  // ERR: site 5 {{.*}}: site needs a macro change: GLUE_ALLOC used at macro-per-use.c:[[@LINE-1]] (its uses need different tiers, and this use cannot be expanded: GLUE_ALLOC uses # or ##)
  GLUE_ALLOC(b, 10); // @gb
  // ERR: 3 of 4 placed sites rewritten in 1 files
  // OUT: ranks 1 deg 0 edges 1 w 1 w2 0 a 0 b 0
  printf("ranks %d deg %d edges %d w %d w2 %d a %d b %d\n", tw_tier_of(ranks),
         tw_tier_of(deg), tw_tier_of(edges), tw_tier_of(w), tw_tier_of(w2),
         tw_tier_of(a_buf), tw_tier_of(b_buf));
  free(ranks), free(deg), free(edges), free(w), free(w2), free(a_buf),
      free(b_buf);
  return 0;
}
