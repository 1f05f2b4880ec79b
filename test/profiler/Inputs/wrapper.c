// SPDX-License-Identifier: MIT
// Test input: two arrays allocated through the same wrapper function from two
// call sites. Their stacks share the wrapper frame and differ one frame
// deeper, so they are two sites: "big" (1 MiB, written) and "small" (64 KiB,
// read only).
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void *my_alloc(size_t n) {
  void *p = calloc(1, n);
  __asm__ volatile("" ::: "memory"); // keep the wrapper frame (no tail call)
  return p;
}

__attribute__((noinline)) char *make_big(void) { return my_alloc(1 << 20); }
__attribute__((noinline)) char *make_small(void) { return my_alloc(64 << 10); }

int main(void) {
  char *big = make_big(), *small = make_small();
  long sum = 0;
  for (size_t i = 0; i < (1u << 20); i += 64)
    big[i] = (char)i;
  for (size_t i = 0; i < (64u << 10); i += 64)
    sum += small[i];
  printf("sum %ld %d\n", sum, big[64]);
  free(big);
  free(small);
  return 0;
}
