// SPDX-License-Identifier: MIT
// A site placed partly in DRAM (dram_bytes: its objects' first bytes in
// DRAM, the rest in pmem): malloc, calloc, realloc and aligned_alloc become
// tw_malloc_head, tw_calloc_head, tw_realloc_head and tw_aligned_alloc_head
// with the site's dram_bytes (issue 23 item 3). A wrapper shared by sites with one tier and one head is
// rewritten once; one shared by a site with a head and one without takes a
// tw_place (tier and head) that each call passes: ymalloc_tier(TW_PLACE(
// TW_TIER_PMEM, 65536), ...), the original forwarding TW_PLACE(TW_TIER_DRAM,
// 0). The whole-pmem site beside them is rewritten as before; the result
// compiles against tierwise.h.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/dram-head.json %s > %t.json
// RUN: %bin/tierwise-rewrite --placement %t.json %s -- -std=c11 > %t.diff 2> %t.err
// RUN: FileCheck %s < %t.diff
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// RUN: rm -rf %t.d && mkdir %t.d && cp %s %t.d/dram-head.c
// RUN: %bin/tierwise-rewrite --placement %t.json -i %t.d/dram-head.c -- -std=c11 2> /dev/null
// RUN: cc -std=c11 -fsyntax-only -Wall -Werror -I%src/runtime/include %t.d/dram-head.c
#include <stdlib.h>

static void *xmalloc(size_t n) {
  return malloc(n); // @xw
  // CHECK: +  return tw_malloc_head(TW_TIER_PMEM, 65536, n);
  // ERR: note: rewriting malloc at dram-head.c:[[@LINE-2]]: shared by 2 sites, all pmem with dram_bytes 65536
}

static void *ymalloc(size_t n) {
  return malloc(n); // @yw
  // CHECK: +static void *ymalloc_tier(tw_place place, size_t n) {
  // CHECK-NEXT: +  return tw_malloc_head(place.tier, place.dram_bytes, n); // @yw
  // CHECK: +__attribute__((unused)) static void *ymalloc(size_t n) {
  // CHECK-NEXT: +  return ymalloc_tier(TW_PLACE(TW_TIER_DRAM, 0), n);
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
  // CHECK: +  int *y1 = ymalloc_tier(TW_PLACE(TW_TIER_PMEM, 65536), 1 << 21); // @y1
  int *y2 = ymalloc(1 << 21); // @y2
  // CHECK: +  int *y2 = ymalloc_tier(TW_PLACE(TW_TIER_PMEM, 0), 1 << 21); // @y2
  // ERR: note: wrapper ymalloc (dram-head.c:{{[0-9]+}}) forwards to a new ymalloc_tier(tw_place place, ...) with TW_PLACE(TW_TIER_DRAM, 0) that its allocation uses; callers passing a tier: dram-head.c:{{[0-9]+}} (pmem with dram_bytes 65536), dram-head.c:{{[0-9]+}} (pmem)
  // ERR: 9 of 9 placed sites rewritten in 1 files
  free(a), free(b), free(c), free(d), free(x1), free(x2), free(y1), free(y2);
  return 0;
}
