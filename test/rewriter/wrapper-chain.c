// SPDX-License-Identifier: MIT
// C: an allocating helper whose only caller is a filling helper that both a
// placed path (main's ranks) and an unplaced one (a verifier) call (issue 23
// item 2). Rewriting the malloc in place would move the verifier's array
// too; instead both helpers get `_tier` variants, the filling one passing
// its tier on, and only main's call passes TW_TIER_PMEM. The rebuilt
// program has ranks in pmem and the verifier's array in DRAM.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/wrapper-chain.json %s > %t.json
// RUN: rm -rf %t.d && mkdir -p %t.d/pmem && cp %s %t.d/
// RUN: %bin/tierwise-rewrite --placement %t.json --root %t.d %t.d/wrapper-chain.c -- -std=c11 > %t.diff 2> %t.err
// RUN: FileCheck %s < %t.diff
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// RUN: cd %t.d && patch -s -p1 < %t.diff
// RUN: cc -std=c11 -Wall -Werror -DREWRITTEN -o %t.d/w %t.d/wrapper-chain.c $(%tierwise config --cflags --libs)
// RUN: env TIERWISE_PMEM_DIR=%t.d/pmem %t.d/w | FileCheck --check-prefix=OUT %s
#include <stdio.h>
#include <stdlib.h>
#ifndef REWRITTEN
static int tw_tier_of(const void *p) { return p ? 0 : -1; }
#endif

static double *alloc_vec(long n) {
  return malloc(n * sizeof(double)); // @alloc
  // CHECK: +static double *alloc_vec_tier(tw_tier tier, long n) {
  // CHECK-NEXT: +  return tw_malloc(tier, n * sizeof(double)); // @alloc
}

static double *make_filled(long n, double v) {
  double *p = alloc_vec(n); // @fill
  // CHECK: +static double *make_filled_tier(tw_tier tier, long n, double v) {
  // CHECK-NEXT: +  double *p = alloc_vec_tier(tier, n); // @fill
  for (long i = 0; i < n; i++)
    p[i] = v;
  return p;
}

static double verify(long n, int *tier) {
  double *c = make_filled(n, 0.5); // @verify
  double s = 0;
  for (long i = 0; i < n; i++)
    s += c[i];
  *tier = tw_tier_of(c);
  free(c);
  return s;
}

int main(void) {
  double *r = make_filled(1 << 16, 1.0); // @ranks
  // CHECK: +  double *r = make_filled_tier(TW_TIER_PMEM, 1 << 16, 1.0); // @ranks
  int vt = -1;
  double s = verify(1 << 16, &vt) + r[0];
  // OUT: ranks 1 verifier 0 sum 32769.0
  printf("ranks %d verifier %d sum %.1f\n", tw_tier_of(r), vt, s);
  free(r);
  return 0;
}
// ERR: 1 of 1 placed sites rewritten in 1 files
