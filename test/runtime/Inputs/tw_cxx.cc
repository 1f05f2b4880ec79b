// SPDX-License-Identifier: MIT
// Test program: an adjacency list (vector<vector<int>>, many small
// allocations through operator new) plus one big array from a helper called
// at two places. Prints object addresses and a checksum.
#include <cstdio>
#include <cstdlib>
#include <vector>

__attribute__((noinline)) static double *make_array(size_t n) {
  return new double[n]();
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
  std::vector<std::vector<int>> adj(n);
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < 1 + (i * 7) % 13; k++)
      adj[i].push_back(int((i * 31 + k) % n));
  double *rank = make_array(n); // first helper call
  double *next = make_array(n); // second helper call
  unsigned long sum = 0;
  for (size_t i = 0; i < n; i++)
    for (int v : adj[i]) {
      rank[v] += 1;
      next[i] += 2;
    }
  for (size_t i = 0; i < n; i++)
    sum += (unsigned long)(rank[i] * 3 + next[i]);
  std::fprintf(stderr, "object rank %p %zu\nobject next %p %zu\n", (void *)rank,
               n * sizeof(double), (void *)next, n * sizeof(double));
  std::printf("checksum: %lx\n", sum);
  delete[] rank;
  delete[] next;
  return 0;
}
