// SPDX-License-Identifier: MIT
// Every C allocation function is rewritten to its tierwise.h form, with the
// site's tier; tierwise.h is included once; the result compiles.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/c-forms.json %s > %t.json
// RUN: %bin/tierwise-rewrite --placement %t.json %s -- -std=c11 | FileCheck %s
// Edit a copy in place (the placement names the file by its basename, which
// matches any path ending in it); the result compiles against tierwise.h:
// RUN: rm -rf %t.d && mkdir %t.d && cp %s %t.d/c-forms.c
// RUN: %bin/tierwise-rewrite --placement %t.json -i %t.d/c-forms.c -- -std=c11
// RUN: FileCheck --check-prefix=FILE %s < %t.d/c-forms.c
// RUN: cc -std=c11 -fsyntax-only -Wall -Werror -I%src/runtime/include %t.d/c-forms.c
// -o writes the same diff to a file and nothing to stdout:
// RUN: %bin/tierwise-rewrite --placement %t.json -o %t.patch %s -- -std=c11 | count 0
// RUN: FileCheck %s < %t.patch
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
// CHECK: #include <stdlib.h>
// CHECK-NEXT: +#include <tierwise.h>
// FILE: {{^}}#include <tierwise.h>
// FILE-NOT: {{^}}#include <tierwise.h>

int main(void) {
  size_t n = 1000;
  char *a = malloc(n); // @a
  // CHECK: -  char *a = malloc(n);
  // CHECK: +  char *a = tw_malloc(TW_TIER_PMEM, n);
  // FILE: {{^}}  char *a = tw_malloc(TW_TIER_PMEM, n);
  int *b = calloc(n, sizeof(int)); // @b
  // CHECK: +  int *b = tw_calloc(TW_TIER_KMEM, n, sizeof(int));
  a = realloc(a, 2 * n); // @c
  // CHECK: +  a = tw_realloc(TW_TIER_PMEM, a, 2 * n);
  double *d = aligned_alloc(64, n * sizeof(double)); // @d
  // CHECK: +  double *d = tw_aligned_alloc(TW_TIER_HBW, 64, n * sizeof(double));
  void *e;
  if (posix_memalign(&e, 4096, n)) // @e
    return 1;
  // CHECK: +  if (tw_posix_memalign(TW_TIER_PMEM, &e, 4096, n))
  void *f = memalign(128, n); // @f
  // CHECK: +  void *f = tw_memalign(TW_TIER_PMEM, 128, n);
  char *g = malloc(n); // @g stays in DRAM: listed with the default tier
  // CHECK-NOT: {{^\+.*}} // @g
  // FILE: {{^}}  char *g = malloc(n);
  free(a), free(b), free(d), free(e), free(f), free(g);
  return 0;
}
