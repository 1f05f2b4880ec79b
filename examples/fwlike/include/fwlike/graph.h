// SPDX-License-Identifier: MIT
// fwlike's graph: a compressed adjacency (CSR) seen through per-vertex views,
// after Ligra's symmetricVertex/asymmetricVertex and graph<vertex>. The
// vertex type is the template argument of Graph and of every kernel
// (template <class V> void Compute(Graph<V> &, Options)).
//
// Allocation: the vertex views and offsets through NEW_ARRAY (one line per
// array), the edge arrays through safe_malloc (all on util.h's line once
// inlined). Graph::build is sequential and fills each vertex's neighbours in
// edge-list order, so the graph does not depend on the thread count.
#pragma once

#include <cstdint>
#include <cstdlib>

#include "fwlike/util.h"

namespace fwlike {

// An undirected graph: every edge is stored in both directions, and a
// vertex's in-neighbours are its out-neighbours.
struct SymmetricVertex {
  static constexpr bool symmetric = true;
  int32_t *neighbors;
  int32_t degree;
  int32_t in_degree() const { return degree; }
  int32_t out_degree() const { return degree; }
  int32_t in_neighbor(int32_t j) const { return neighbors[j]; }
  int32_t out_neighbor(int32_t j) const { return neighbors[j]; }
};

// A directed graph: separate in- and out-adjacency.
struct AsymmetricVertex {
  static constexpr bool symmetric = false;
  int32_t *in_neighbors, *out_neighbors;
  int32_t in_deg, out_deg;
  int32_t in_degree() const { return in_deg; }
  int32_t out_degree() const { return out_deg; }
  int32_t in_neighbor(int32_t j) const { return in_neighbors[j]; }
  int32_t out_neighbor(int32_t j) const { return out_neighbors[j]; }
};

template <class V> class Graph {
public:
  int64_t n = 0;                  // vertices 0..n-1
  int64_t m = 0;                  // stored directed edges (2x input if symmetric)
  V *vertices = nullptr;          // n views into the edge arrays
  int64_t *out_offsets = nullptr; // n+1: out_edges[out_offsets[v]..]
  int64_t *in_offsets = nullptr;  // n+1 (== out_offsets if symmetric)
  int32_t *out_edges = nullptr;   // m
  int32_t *in_edges = nullptr;    // m (== out_edges if symmetric)

  Graph() = default;
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;
  ~Graph() {
    free(vertices);
    if (in_offsets != out_offsets)
      free(in_offsets);
    free(out_offsets);
    if (in_edges != out_edges)
      free(in_edges);
    free(out_edges);
  }

  // Builds the graph of `num_edges` edges (E has int src, dst) over
  // `num_vertices` vertices.
  template <class E>
  void build(const E *edges, int64_t num_edges, int64_t num_vertices) {
    n = num_vertices;
    m = V::symmetric ? 2 * num_edges : num_edges;
    vertices = checked(NEW_ARRAY(V, n), n);
    out_offsets = checked(NEW_ARRAY(int64_t, n + 1), n + 1);
    int64_t *cursor = checked(NEW_ARRAY(int64_t, n), n);
    out_edges = (int32_t *)safe_malloc(m * sizeof(int32_t));
    if (V::symmetric) {
      in_offsets = out_offsets;
      in_edges = out_edges;
      fill(edges, num_edges, true, out_offsets, out_edges, cursor);
    } else {
      in_offsets = checked(NEW_ARRAY(int64_t, n + 1), n + 1);
      in_edges = (int32_t *)safe_malloc(m * sizeof(int32_t));
      fill(edges, num_edges, false, out_offsets, out_edges, cursor);
      fill_in(edges, num_edges, cursor);
    }
    free(cursor);
    for (int64_t v = 0; v < n; v++)
      set_vertex(vertices[v], v);
  }

private:
  // Out-adjacency (both directions when `both`).
  template <class E>
  void fill(const E *edges, int64_t k, bool both, int64_t *offsets,
            int32_t *adj, int64_t *cursor) {
    for (int64_t v = 0; v <= n; v++)
      offsets[v] = 0;
    for (int64_t i = 0; i < k; i++) {
      offsets[edges[i].src + 1]++;
      if (both)
        offsets[edges[i].dst + 1]++;
    }
    for (int64_t v = 0; v < n; v++)
      offsets[v + 1] += offsets[v];
    for (int64_t v = 0; v < n; v++)
      cursor[v] = offsets[v];
    for (int64_t i = 0; i < k; i++) {
      adj[cursor[edges[i].src]++] = edges[i].dst;
      if (both)
        adj[cursor[edges[i].dst]++] = edges[i].src;
    }
  }
  template <class E> void fill_in(const E *edges, int64_t k, int64_t *cursor) {
    for (int64_t v = 0; v <= n; v++)
      in_offsets[v] = 0;
    for (int64_t i = 0; i < k; i++)
      in_offsets[edges[i].dst + 1]++;
    for (int64_t v = 0; v < n; v++)
      in_offsets[v + 1] += in_offsets[v];
    for (int64_t v = 0; v < n; v++)
      cursor[v] = in_offsets[v];
    for (int64_t i = 0; i < k; i++)
      in_edges[cursor[edges[i].dst]++] = edges[i].src;
  }
  void set_vertex(SymmetricVertex &x, int64_t v) {
    x.neighbors = out_edges + out_offsets[v];
    x.degree = (int32_t)(out_offsets[v + 1] - out_offsets[v]);
  }
  void set_vertex(AsymmetricVertex &x, int64_t v) {
    x.out_neighbors = out_edges + out_offsets[v];
    x.out_deg = (int32_t)(out_offsets[v + 1] - out_offsets[v]);
    x.in_neighbors = in_edges + in_offsets[v];
    x.in_deg = (int32_t)(in_offsets[v + 1] - in_offsets[v]);
  }
};

} // namespace fwlike
