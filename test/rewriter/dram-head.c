// SPDX-License-Identifier: MIT
// A site placed partly in DRAM (dram_bytes: its objects' first bytes in
// DRAM, the rest in pmem): malloc, calloc, realloc and aligned_alloc become
// tw_malloc_head, tw_calloc_head, tw_realloc_head and tw_aligned_alloc_head
// with the site's dram_bytes (issue 23 item 3). A wrapper shared by sites with one tier and one head is
// rewritten once; one shared by a site with a head and one without is a
// wrapper change. The whole-pmem site beside them is rewritten as before;
// the exit status says not every placed site was rewritten; the result
// compiles against tierwise.h.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/dram-head.json %s > %t.json
// RUN: not %bin/tierwise-rewrite --placement %t.json %s -- -std=c11 > %t.diff 2> %t.err
// RUN: FileCheck %s < %t.diff
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// RUN: rm -rf %t.d && mkdir %t.d && cp %s %t.d/dram-head.c
// RUN: not %bin/tierwise-rewrite --placement %t.json -i %t.d/dram-head.c -- -std=c11 2> /dev/null
// RUN: cc -std=c11 -fsyntax-only -Wall -Werror -I%src/runtime/include %t.d/dram-head.c
#include <stdlib.h>

static void *xmalloc(size_t n) {
  return malloc(n); // @xw
  // CHECK: +  return tw_malloc_head(TW_TIER_PMEM, 65536, n);
  // ERR: note: rewriting malloc at dram-head.c:[[@LINE-2]]: shared by 2 sites, all pmem with dram_bytes 65536
}

static void *ymalloc(size_t n) {
  return malloc(n); // @yw
  // CHECK-NOT: {{^}}+  return {{.*}}, n);
}

int main(void) {
  char *a = malloc(1 << 22); // @whole
  // CHECK: +  char *a = tw_malloc(TW_TIER_PMEM, 1 << 22);
  char *b = malloc(1 << 22); // @head
  // CHECK: +  char *b = tw_malloc_head(TW_TIER_PMEM, 1048576, 1 << 22);
  double *c = calloc(1 << 20, sizeof(double)); // @chead
  // CHECK: +  double *c = tw_calloc_head(TW_TIER_PMEM, 2097152, 1 << 20, sizeof(double));
  b = realloc(b, 1 << 23); // @rhead
  // CHECK: +  b = tw_realloc_head(TW_TIER_PMEM, 1048576, b, 1 << 23);
  void *d = aligned_alloc(4096, 1 << 22); // @ahead
  // CHECK: +  void *d = tw_aligned_alloc_head(TW_TIER_PMEM, 1048576, 4096, 1 << 22);
  int *x1 = xmalloc(1 << 21); // @x1
  int *x2 = xmalloc(1 << 21); // @x2
  int *y1 = ymalloc(1 << 21); // @y1
  // ERR-DAG: not rewritten: site 7 {{.*}}: site needs a wrapper change: ymalloc (dram-head.c:{{[0-9]+}}): its sites have DRAM heads (dram_bytes), which a tier parameter does not carry
  int *y2 = ymalloc(1 << 21); // @y2
  // ERR-DAG: not rewritten: site 8 {{.*}}: site needs a wrapper change: ymalloc
  // ERR: 7 of 9 placed sites rewritten in 1 files
  free(a), free(b), free(c), free(d), free(x1), free(x2), free(y1), free(y2);
  return 0;
}
