/* SPDX-License-Identifier: MIT */
/* Region functions that are inlined where they are called, as in real
 * frameworks at -O2 (issue 22 item 3):
 * - fw::bfs_step has an out-of-line copy (external linkage), but its one
 *   call is inlined into its driver fw::bfs (flatten), so the copy is never
 *   entered;
 * - fw::relax<double> exists only inlined into the OpenMP outlined body of
 *   fw::sweep (sweep._omp_fn.0);
 * - fw::level_sum is called out of line: a region that is entered.
 * `fw_inline crash` dies of SIGSEGV before any of them runs. Prints a
 * checksum. */
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace fw {

struct Graph {
  int n;
  int *off, *adj;
};

int bfs_step(const Graph &g, int *depth, int level) {
  int changed = 0;
  for (int v = 0; v < g.n; v++)
    if (depth[v] == level)
      for (int e = g.off[v]; e < g.off[v + 1]; e++)
        if (depth[g.adj[e]] < 0) {
          depth[g.adj[e]] = level + 1;
          changed = 1;
        }
  return changed;
}

__attribute__((flatten)) int bfs(const Graph &g, int *depth) {
  int level = 0;
  while (bfs_step(g, depth, level))
    level++;
  return level;
}

template <class T> static inline void relax(T *x, int i) {
  x[i] = x[i] * 0.5 + 1;
}

void sweep(double *x, int n) {
#pragma omp parallel for
  for (int i = 0; i < n; i++)
    relax(x, i);
}

__attribute__((noinline)) long level_sum(const int *depth, int n) {
  long s = 0;
  for (int v = 0; v < n; v++)
    s += depth[v];
  return s;
}

} // namespace fw

int main(int argc, char **argv) {
  if (argc > 1 && !std::strcmp(argv[1], "crash")) {
    volatile int *nowhere = nullptr;
    *nowhere = 1; /* before every region */
  }
  const int n = 1 << 12;
  fw::Graph g{n, static_cast<int *>(std::malloc((n + 1) * sizeof(int))),
              static_cast<int *>(std::malloc(2 * n * sizeof(int)))};
  for (int v = 0; v <= n; v++)
    g.off[v] = 2 * v;
  for (int v = 0; v < n; v++) {
    g.adj[2 * v] = (v + 1) % n;
    g.adj[2 * v + 1] = (v * 7 + 3) % n;
  }
  int *depth = static_cast<int *>(std::malloc(n * sizeof(int)));
  for (int v = 0; v < n; v++)
    depth[v] = v ? -1 : 0;
  int levels = fw::bfs(g, depth);
  double *x = static_cast<double *>(std::malloc(n * sizeof(double)));
  for (int i = 0; i < n; i++)
    x[i] = i;
  fw::sweep(x, n);
  std::printf("checksum: %d %ld %.0f\n", levels, fw::level_sum(depth, n),
              x[n - 1]);
  return 0;
}
