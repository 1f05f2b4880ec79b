// SPDX-License-Identifier: MIT
// Test program linked with libtierwise (no LD_PRELOAD): allocates from the
// pmem tier with the C API and with `new (tw::pmem)`, releases with plain
// free()/delete[], and prints what tier each block reports.
#include "tierwise.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main() {
  const size_t n = 1 << 20;
  char *a = static_cast<char *>(tw_malloc(TW_TIER_PMEM, n));
  std::memset(a, 7, n);
  int *b = new (tw::pmem) int[n / 4]();
  char *c = static_cast<char *>(std::malloc(n)); // plain malloc: dram
  std::memset(c, 1, n);
  a = static_cast<char *>(std::realloc(a, 2 * n)); // stays usable
  std::printf("tiers: %s %s %s\n", tw_tier_name(tw_tier_of(a)),
              tw_tier_name(tw_tier_of(b)), tw_tier_name(tw_tier_of(c)));
  std::printf("name: %d %d\n", tw_tier_from_name("pmem"),
              tw_tier_from_name("nope"));
  std::fprintf(stderr, "object a %p %zu\nobject b %p %zu\n", (void *)a, 2 * n,
               (void *)b, n);
  unsigned sum = (unsigned char)a[n - 1] + (unsigned)b[3] + c[5];
  std::printf("checksum: %x\n", sum);
  std::free(a);
  delete[] b;
  std::free(c);
  return 0;
}
