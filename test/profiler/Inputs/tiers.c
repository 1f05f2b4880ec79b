// SPDX-License-Identifier: MIT
// Test input for the `tierwise simulate` handshake: memory that malloc never
// saw (mmap) is announced with VALGRIND_MALLOCLIKE_BLOCK and tagged with a
// tier by TW_CLREQ_TIER (runtime/common/tw_clientreq.h), as the runtime does
// for memkind blocks. Two blocks from one site: 1 MiB in "dram" (read), 2 MiB
// in "pmem" (written once per line), then both freed with
// VALGRIND_FREELIKE_BLOCK.
#include <stdio.h>
#include <sys/mman.h>

#include "tw_clientreq.h"

__attribute__((noinline)) static char *tier_alloc(size_t n, unsigned tier) {
  char *p =
      mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  VALGRIND_MALLOCLIKE_BLOCK(p, n, 0, 1);
  TW_CLREQ_TIER(p, tier);
  return p;
}

int main(void) {
  long sum = 0;
  char *blocks[2];
  for (int i = 0; i < 2; i++) {
    size_t n = (size_t)(i + 1) << 20;
    char *p = blocks[i] = tier_alloc(n, i); /* 0: dram, 1: pmem */
    for (size_t j = 0; j < n; j += 64) {
      if (i == 0)
        sum += ((volatile char *)p)[j];
      else
        p[j] = 1;
    }
  }
  for (int i = 0; i < 2; i++) {
    VALGRIND_FREELIKE_BLOCK(blocks[i], 0);
    munmap(blocks[i], (size_t)(i + 1) << 20);
  }
  printf("sum %ld\n", sum);
  return 0;
}
