/* SPDX-License-Identifier: MIT */
/* Test program: hello world, linked with another allocator (inputs.cmake:
 * jemalloc ...): issue 40's first case, which aborted at start under any
 * placement, an all-DRAM one too (foreign-alloc.test). */
#include <stdio.h>

int main(void) {
  puts("hello");
  return 0;
}
