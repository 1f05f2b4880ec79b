// SPDX-License-Identifier: MIT
// fwtmpl's graph: a symmetric CSR templated on its edge type (one
// instantiation per app build, as Ligra's graph<vertex>), built from the
// examples' edge list with the newA macro inside the template.
#pragma once

#include <cstdint>

#include "common/graph.h"
#include "talloc.h"

namespace fwtmpl {

template <class intE> struct graph {
  int64_t n = 0, m = 0; // m: directed edges, both ways
  int64_t *offsets = nullptr;
  intE *edges = nullptr;
  ~graph() { free(offsets), free(edges); }
};

// Each edge both ways; self loops dropped.
template <class intE>
void buildSymmetric(graph<intE> &G, const tw_ex_edgelist &el) {
  G.n = el.n;
  G.offsets = newA(int64_t, G.n + 1);
  for (int64_t v = 0; v <= G.n; v++)
    G.offsets[v] = 0;
  for (int64_t e = 0; e < el.m; e++)
    if (el.edges[e].src != el.edges[e].dst) {
      G.offsets[el.edges[e].src + 1]++;
      G.offsets[el.edges[e].dst + 1]++;
    }
  for (int64_t v = 0; v < G.n; v++)
    G.offsets[v + 1] += G.offsets[v];
  G.m = G.offsets[G.n];
  G.edges = newA(intE, G.m);
  uint32_t *filled = newA(uint32_t, G.n); // per vertex, edges placed so far
  for (int64_t v = 0; v < G.n; v++)
    filled[v] = 0;
  for (int64_t e = 0; e < el.m; e++) {
    int32_t s = el.edges[e].src, d = el.edges[e].dst;
    if (s != d) {
      G.edges[G.offsets[s] + filled[s]++] = (intE)d;
      G.edges[G.offsets[d] + filled[d]++] = (intE)s;
    }
  }
  free(filled);
}

// Atomically lowers *a to b; true when it did (Ligra's writeMin).
template <class T> inline bool writeMin(T *a, T b) {
  T c = __atomic_load_n(a, __ATOMIC_RELAXED);
  while (b < c)
    if (__atomic_compare_exchange_n(a, &c, b, true, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED))
      return true;
  return false;
}

} // namespace fwtmpl
