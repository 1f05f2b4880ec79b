// SPDX-License-Identifier: MIT
// Test input for the sim profiler's interval model (memory-level
// parallelism): three 64 MiB arrays, each read by one access pattern inside
// TIERWISE_ROI_BEGIN/END:
//   sweep   sum of every long of `sweep` in order (1 Mi lines, all LLC
//           misses, each continuing a sweep);
//   gather  sum of x[idx[i]] for N random indices into `gather` (the index
//           array `idx` is read in order; the gathered lines are random and
//           independent of each other);
//   chase   N steps p = chase[p].next around a random cyclic permutation of
//           the 1 Mi 64-byte nodes of `chase` (each address is the value of
//           the previous, missing, load);
// and N / 4 atomic adds to random longs of a 16 MiB array `counters` (locked
// read-modify-writes: fences, whose misses overlap with nothing).
// argv[1] (default 1048576) is N. Prints the results.
#include "tierwise.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB64 ((size_t)64 << 20)

typedef struct {
  uint64_t next;
  uint64_t pad[7];
} Node; // one 64-byte line

static uint64_t rng = 88172645463325252ull;
static uint64_t xorshift(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

__attribute__((noinline)) static uint64_t do_sweep(const uint64_t *a,
                                                   size_t n) {
  uint64_t s = 0;
  for (size_t i = 0; i < n; i++)
    s += a[i];
  return s;
}

__attribute__((noinline)) static uint64_t
do_gather(const uint64_t *x, const uint32_t *idx, size_t n) {
  uint64_t s = 0;
  for (size_t i = 0; i < n; i++)
    s += x[idx[i]];
  return s;
}

__attribute__((noinline)) static void do_atomics(uint64_t *c, size_t nc,
                                                 const uint32_t *idx, size_t n) {
  for (size_t i = 0; i < n; i++)
    __atomic_fetch_add(&c[idx[i] % nc], 1, __ATOMIC_RELAXED);
}

__attribute__((noinline)) static uint64_t do_chase(const Node *c, size_t n) {
  uint64_t p = 0;
  for (size_t i = 0; i < n; i++)
    p = c[p].next;
  return p;
}

int main(int argc, char **argv) {
  size_t steps = argc > 1 ? strtoul(argv[1], NULL, 10) : (1u << 20);
  size_t nw = MIB64 / sizeof(uint64_t), nodes = MIB64 / sizeof(Node);
  uint64_t *sweep = malloc(MIB64);
  uint64_t *gather = malloc(MIB64);
  Node *chase = malloc(MIB64);
  uint32_t *idx = malloc(steps * sizeof *idx);
  uint32_t *perm = malloc(nodes * sizeof *perm);
  size_t nc = ((size_t)16 << 20) / sizeof(uint64_t);
  uint64_t *counters = calloc(nc, sizeof(uint64_t));
  if (!sweep || !gather || !chase || !idx || !perm || !counters)
    return 1;
  memset(sweep, 1, MIB64);
  memset(gather, 2, MIB64);
  for (size_t i = 0; i < steps; i++)
    idx[i] = (uint32_t)(xorshift() % nw);
  // Sattolo's algorithm: a random permutation with a single cycle
  for (size_t i = 0; i < nodes; i++)
    perm[i] = (uint32_t)i;
  for (size_t i = nodes - 1; i > 0; i--) {
    size_t j = xorshift() % i;
    uint32_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  for (size_t i = 0; i < nodes; i++)
    chase[i].next = perm[i];
  free(perm);
  TIERWISE_ROI_BEGIN();
  uint64_t a = do_sweep(sweep, nw);
  uint64_t b = do_gather(gather, idx, steps);
  uint64_t c = do_chase(chase, steps);
  do_atomics(counters, nc, idx, steps / 4);
  TIERWISE_ROI_END();
  printf("sweep %llx gather %llx chase %llx counter %llx\n",
         (unsigned long long)a, (unsigned long long)b, (unsigned long long)c,
         (unsigned long long)counters[idx[0] % nc]);
  return 0;
}
