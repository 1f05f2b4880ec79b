// SPDX-License-Identifier: MIT
// Test input: C++ allocations through operator new (std::vector) and
// new[]: libstdc++ frames are allocator frames, so the sites are the user
// lines that create the containers.
#include <cstdio>
#include <vector>

int main() {
  std::vector<long> v(1 << 17); // 1 MiB through operator new
  long *w = new long[1 << 16];  // 512 KiB through operator new[]
  long sum = 0;
  for (size_t i = 0; i < v.size(); i += 8)
    sum += v[i];
  for (size_t i = 0; i < (1u << 16); i += 8)
    w[i] = (long)i;
  std::printf("sum %ld %ld\n", sum, w[8]);
  delete[] w;
  return 0;
}
