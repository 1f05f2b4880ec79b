// SPDX-License-Identifier: MIT
// A C framework's atomics that only GCC accepts (issue 23 item 5): C11
// atomic_fetch_add on a plain int (Clang's <stdatomic.h> wants _Atomic) and
// on a `volatile _Atomic(int) *` (GCC's <stdatomic.h>, which GNU mode puts
// first, maps it to __atomic_fetch_add, which Clang refuses for _Atomic
// objects), so the file fails in both modes, each time on atomic operations
// only. It is indexed with those errors tolerated (a note says so), its
// allocations rewritten; the patched file builds with GCC and gives the
// original's output, with the vertex values in pmem.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/parse-atomics.json %s > %t.json
// RUN: %bin/tierwise-rewrite --placement %t.json --root %S %s -- -std=c11 > %t.diff 2> %t.err
// RUN: FileCheck %s < %t.diff
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// RUN: rm -rf %t.d && mkdir -p %t.d/pmem && cp %s %t.d/
// RUN: cd %t.d && patch -s -p1 < %t.diff
// RUN: cc -std=c11 -O1 -o %t.d/orig %s && %t.d/orig > %t.d/orig.out
// RUN: cc -std=c11 -O1 -DREWRITTEN -o %t.d/new %t.d/parse-atomics.c $(%tierwise config --cflags --libs)
// RUN: env TIERWISE_PMEM_DIR=%t.d/pmem %t.d/new > %t.d/new.out
// RUN: FileCheck --check-prefix=OUT %s < %t.d/new.out
// RUN: grep -v tier %t.d/new.out | diff %t.d/orig.out -
// ERR: note: {{.*}}parse-atomics.c parsed with 1 error on atomic operations (parse-atomics.c:{{[0-9]+}}:{{[0-9]+}}: address argument to atomic operation must be a pointer to _Atomic type ('int *' invalid)) tolerated: GCC accepts them
// ERR: 2 of 2 placed sites rewritten in 1 files
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
// CHECK: +#include <tierwise.h>

typedef struct {
  int n;
  double *value;
  int *active;
} pregel_graph;

static int supersteps;            // plain, updated with C11 atomics
static _Atomic(int) messages_out; // _Atomic, through a volatile pointer

static void pregel_init(pregel_graph *g, int n) {
  g->n = n;
  g->value = malloc((size_t)n * sizeof(double)); // @value
  // CHECK: +  g->value = tw_malloc(TW_TIER_PMEM, (size_t)n * sizeof(double));
  g->active = calloc((size_t)n, sizeof(int)); // @active
  // CHECK: +  g->active = tw_calloc(TW_TIER_PMEM, (size_t)n, sizeof(int));
  for (int v = 0; v < n; v++)
    g->value[v] = 1.0 / (v + 1), g->active[v] = v % 2;
}

int main(void) {
  pregel_graph g;
  pregel_init(&g, 1 << 16);
  double sum = 0;
  for (int step = 0; step < 3; step++) {
    atomic_fetch_add(&supersteps, 1);
    for (int v = 0; v < g.n; v++)
      if (g.active[v]) {
        g.value[v] *= 0.5;
        atomic_fetch_add((volatile _Atomic(int) *)&messages_out, 1);
      }
  }
  for (int v = 0; v < g.n; v++)
    sum += g.value[v];
  printf("supersteps %d messages %d sum %.6f\n", supersteps,
         atomic_load(&messages_out), sum);
#ifdef REWRITTEN
  // OUT: tier value 1 active 1
  printf("tier value %d active %d\n", tw_tier_of(g.value),
         tw_tier_of(g.active));
#endif
  free(g.value);
  free(g.active);
  return 0;
}
