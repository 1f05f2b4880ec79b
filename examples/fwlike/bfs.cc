// SPDX-License-Identifier: MIT
// fwlike-bfs: level-synchronous top-down BFS as a fwlike kernel (a function
// template over the vertex type, its arrays in the Array wrapper). A vertex
// is claimed by compare-and-swap on its depth, so the frontier order varies
// with the threads but the depths do not: the checksum is build/examples/
// bfs's on the same graph and root.
#include <cstdint>
#include <cstdio>
#include <utility>

#include "common/graph.h"
#include "driver.h"
#include "fwlike/array.h"
#include "fwlike/graph.h"

using namespace fwlike;

struct Options {
  const tw_ex_options *ex;
};

template <class V> FWLIKE_KERNEL void Compute(Graph<V> &G, Options opt) {
  const int64_t n = G.n;
  Array<int32_t> depth(n);
  Array<int32_t> frontier(n);
  Array<int32_t> next(n);
  tw_ex_object(opt.ex, "depth", depth.data(), n * sizeof(int32_t));
  tw_ex_object(opt.ex, "frontier", frontier.data(), n * sizeof(int32_t));
  tw_ex_object(opt.ex, "next", next.data(), n * sizeof(int32_t));
  int64_t root = tw_ex_root(opt.ex, G.out_offsets, n);

#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < n; v++)
    depth[v] = -1;

  double t0 = tw_ex_kernel_start();
  int32_t *cur = frontier.data(), *nxt = next.data();
  depth[root] = 0;
  cur[0] = (int32_t)root;
  int64_t size = 1;
  for (int32_t d = 1; size > 0; d++) {
    int64_t next_size = 0;
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t i = 0; i < size; i++) {
      const V &x = G.vertices[cur[i]];
      for (int32_t j = 0; j < x.out_degree(); j++) {
        int32_t w = x.out_neighbor(j);
        int32_t unseen = -1;
        if (__atomic_load_n(&depth[w], __ATOMIC_RELAXED) == -1 &&
            __atomic_compare_exchange_n(&depth[w], &unseen, d, false,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED))
          nxt[__atomic_fetch_add(&next_size, 1, __ATOMIC_RELAXED)] = w;
      }
    }
    std::swap(cur, nxt);
    size = next_size;
  }
  tw_ex_kernel_done(opt.ex, tw_ex_now() - t0);

  if (opt.ex->print)
    for (int64_t v = 0; v < n; v++)
      printf("%lld %d\n", (long long)v, depth[v]);
  tw_ex_print_checksum(tw_ex_checksum_i32(depth.data(), n));
}

int main(int argc, char **argv) {
  tw_ex_options o;
  tw_ex_parse(argc, argv, TW_EX_OPT_ROOT,
              "Top-down BFS (fwlike, AsymmetricVertex): depth per vertex, "
              "-1 unreachable.",
              0, &o);
  Graph<AsymmetricVertex> G;
  load_graph(&o, G);
  Compute(G, Options{&o});
  return 0;
}
