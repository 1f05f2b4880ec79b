// SPDX-License-Identifier: MIT
// fwlike-pagerank: asynchronous (Gauss-Seidel) PageRank written the way
// header-only frameworks write kernels: a function template over the vertex
// type, its arrays in the Array wrapper. Built twice from this file:
// fwlike-pagerank (directed, AsymmetricVertex) and, with -DFW_SYMMETRIC,
// fwlike-pagerank-sym (every edge both ways, SymmetricVertex).
//
// Each sweep updates the ranks in place: a vertex reads its in-neighbours'
// contributions as they are at that moment, some already updated in this
// sweep by this or another thread. How many sweeps it takes to converge
// depends on that interleaving (thread count, scheduling, Valgrind), so the
// work done varies from run to run; the result does not. Ranks are fixed
// point (a vertex's initial share 1/n is 2^20), contributions are truncated,
// and the update is monotone: starting below the fixed point, any order of
// updates only raises ranks, and a sweep that changes nothing ends at the
// least fixed point of the integer map, the same one for every
// interleaving. So the checksum is exact, like the other examples'.
#include <cstdint>
#include <cstdio>

#include "common/graph.h"
#include "driver.h"
#include "fwlike/array.h"
#include "fwlike/graph.h"

using namespace fwlike;

#ifdef FW_SYMMETRIC
typedef SymmetricVertex Vertex;
#else
typedef AsymmetricVertex Vertex;
#endif

struct Options {
  const tw_ex_options *ex; // -g/-f/-v/-p/-M
  int max_sweeps;
};

static const uint64_t kOne = 1ull << 20;              // a vertex's 1/n
static const uint64_t kBase = 15 * kOne / 100;        // (1 - 0.85) / n

template <class V> FWLIKE_KERNEL void Compute(Graph<V> &G, Options opt) {
  const int64_t n = G.n;
  Array<uint64_t> rank(n);
  Array<uint64_t> contrib(n);
  Array<uint32_t> out_degree(n);
  tw_ex_object(opt.ex, "rank", rank.data(), n * sizeof(uint64_t));
  tw_ex_object(opt.ex, "contrib", contrib.data(), n * sizeof(uint64_t));
  tw_ex_object(opt.ex, "out_degree", out_degree.data(), n * sizeof(uint32_t));

#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < n; v++) {
    out_degree[v] = (uint32_t)G.vertices[v].out_degree();
    rank[v] = kBase;
    contrib[v] = out_degree[v] ? kBase / out_degree[v] : 0;
  }

  double t0 = tw_ex_kernel_start();
  int sweeps = 0;
  bool changed = true;
  while (changed) {
    if (++sweeps > opt.max_sweeps)
      tw_ex_die("no fixed point after %d sweeps", opt.max_sweeps);
    changed = false;
#pragma omp parallel for schedule(static) reduction(|| : changed)
    for (int64_t v = 0; v < n; v++) {
      const V &x = G.vertices[v];
      uint64_t sum = 0;
      for (int32_t j = 0; j < x.in_degree(); j++)
        sum += __atomic_load_n(&contrib[x.in_neighbor(j)], __ATOMIC_RELAXED);
      uint64_t r = kBase + sum * 85 / 100;
      if (r != rank[v]) {
        rank[v] = r;
        __atomic_store_n(&contrib[v], out_degree[v] ? r / out_degree[v] : 0,
                         __ATOMIC_RELAXED);
        changed = true;
      }
    }
    tw_ex_note(opt.ex, "sweep %d", sweeps);
  }
  tw_ex_kernel_done(opt.ex, tw_ex_now() - t0);
  // The work done, which varies with the interleaving (not in the checksum).
  fprintf(stderr, "sweeps: %d\n", sweeps);

  if (opt.ex->print)
    for (int64_t v = 0; v < n; v++)
      printf("%lld %llu\n", (long long)v, (unsigned long long)rank[v]);
  tw_ex_print_checksum(tw_ex_checksum_u64(rank.data(), n));
}

int main(int argc, char **argv) {
  tw_ex_options o;
  tw_ex_parse(argc, argv, 0,
#ifdef FW_SYMMETRIC
              "Asynchronous PageRank on the undirected graph (fwlike, "
              "SymmetricVertex); prints the sweeps it took on stderr.",
#else
              "Asynchronous PageRank (fwlike, AsymmetricVertex); prints the "
              "sweeps it took on stderr.",
#endif
              0, &o);
  Graph<Vertex> G;
  load_graph(&o, G);
  Compute(G, Options{&o, 100000});
  return 0;
}
