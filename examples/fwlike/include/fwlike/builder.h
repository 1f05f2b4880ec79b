// SPDX-License-Identifier: MIT
// fwlike/builder.h: a weighted CSR built the way framework builders are
// (issue 35 item 1): the builder allocates one array itself (the edge
// weights, the biggest, which a placement may give a DRAM head) and has a
// helper template allocate the others (offsets, targets); the builder also
// makes a small graph on a path nobody places, and the helper serves the
// kernel's own arrays. A rewrite gives the builder one tw_place parameter
// that its own allocation uses and whose tier it passes on to the helper.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "common/graph.h"

namespace fwlike {

// The helper every array of the framework comes from.
template <class T> T *alloc_array(std::size_t n) {
  T *p = static_cast<T *>(std::malloc(n * sizeof(T)));
  if (!p && n)
    std::abort();
  return p;
}

struct WGraph {
  int64_t n = 0, m = 0;
  int64_t *offsets = nullptr;
  int32_t *targets = nullptr;
  double *weights = nullptr;
};

// CSR by source of the edges with src and dst below n, weights w.
inline WGraph build_weighted(const tw_ex_edgelist &el, int64_t n) {
  WGraph g;
  g.n = n;
  for (int64_t e = 0; e < el.m; e++)
    g.m += el.edges[e].src < n && el.edges[e].dst < n;
  g.weights = static_cast<double *>(std::malloc((std::size_t)g.m * sizeof(double)));
  g.offsets = alloc_array<int64_t>((std::size_t)n + 1);
  g.targets = alloc_array<int32_t>((std::size_t)g.m);
  if (!g.weights && g.m)
    std::abort();
  for (int64_t v = 0; v <= n; v++)
    g.offsets[v] = 0;
  for (int64_t e = 0; e < el.m; e++)
    if (el.edges[e].src < n && el.edges[e].dst < n)
      g.offsets[el.edges[e].src + 1]++;
  for (int64_t v = 0; v < n; v++)
    g.offsets[v + 1] += g.offsets[v];
  // Fill in edge-list order per row, with offsets as cursors.
  for (int64_t e = 0; e < el.m; e++) {
    const tw_ex_edge &x = el.edges[e];
    if (x.src < n && x.dst < n) {
      int64_t k = g.offsets[x.src]++;
      g.targets[k] = x.dst;
      g.weights[k] = (double)x.w;
    }
  }
  for (int64_t v = n; v > 0; v--)
    g.offsets[v] = g.offsets[v - 1];
  g.offsets[0] = 0;
  return g;
}

inline void free_graph(WGraph &g) {
  std::free(g.offsets);
  std::free(g.targets);
  std::free(g.weights);
}

} // namespace fwlike
