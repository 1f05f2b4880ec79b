/* SPDX-License-Identifier: MIT */
/* Test program: six OpenMP parallel regions in six functions that main calls
 * at the same stack depth, each entered N times, interleaved. libgomp
 * allocates a team for each region entered with another thread count than
 * the last one (here: every time), from one call site in libgomp at one
 * stack depth: one fast-path cache key for the six sites. Usage:
 * tw_gomp_sites [N] (default 20); prints a checksum. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define REGION(k)                                                              \
  __attribute__((noinline)) static long region##k(int threads) {               \
    long s = 0;                                                                \
    _Pragma("omp parallel num_threads(threads) reduction(+ : s)")              \
        s += omp_get_thread_num() + k;                                         \
    __asm__ volatile("" : : "r"(s) : "memory");                                \
    return s;                                                                  \
  }
REGION(1)
REGION(2)
REGION(3)
REGION(4)
REGION(5)
REGION(6)

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 20;
  long sum = 0;
  for (int i = 0; i < n; i++) {
    sum += region1(2);
    sum += region2(3);
    sum += region3(2);
    sum += region4(3);
    sum += region5(2);
    sum += region6(3);
  }
  printf("checksum: %lx\n", (unsigned long)sum);
  return 0;
}
