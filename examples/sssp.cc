// SPDX-License-Identifier: MIT
// sssp: single-source shortest paths by delta-stepping (Meyer & Sanders, as
// GAP's sssp.cc): the current bucket's frontier is relaxed in parallel,
// distances lowered with compare-and-swap, each thread collects the vertices
// it improved and merges them into the shared buckets.
// Final distances are exact whatever the thread count, so they are the
// checksum (-1 for unreachable vertices).
// Allocations: CSR (offsets, targets, weights) with new[], distances and the
// frontier as std::vector.
#include "common/graph.h"

#include <algorithm>
#include <cstdio>
#include <new>
#include <vector>

namespace {

constexpr int64_t kDelta = 32; // bucket width; weights are 1..255 (GAP's)
constexpr int64_t kInf = INT64_MAX / 2;
constexpr size_t kParallelMin = 256; // smaller frontiers: one thread

struct Graph {
  int64_t n;
  int64_t *off;
  int32_t *adj, *wt;
};

void delta_step(const Graph &g, int64_t root, std::vector<int64_t> &dist,
                std::vector<int32_t> &frontier) {
  std::vector<std::vector<int32_t>> bins(1);
  dist[root] = 0;
  frontier[0] = static_cast<int32_t>(root);
  size_t tail = 1, cur = 0;
  for (;;) {
    // Relax the current bucket's frontier; small frontiers (long paths in
    // the seed-000 graphs) run on one thread to skip the fork/join.
#pragma omp parallel if (tail > kParallelMin)
    {
      std::vector<uint64_t> found; // (bucket << 32) | vertex
#pragma omp for schedule(dynamic, 64) nowait
      for (size_t i = 0; i < tail; i++) {
        int32_t u = frontier[i];
        int64_t du = __atomic_load_n(&dist[u], __ATOMIC_RELAXED);
        if (du < kDelta * static_cast<int64_t>(cur))
          continue; // settled in an earlier bucket: a stale entry
        for (int64_t e = g.off[u]; e < g.off[u + 1]; e++) {
          int32_t v = g.adj[e];
          int64_t nd = du + g.wt[e];
          int64_t old = __atomic_load_n(&dist[v], __ATOMIC_RELAXED);
          while (nd < old)
            if (__atomic_compare_exchange_n(&dist[v], &old, nd, false,
                                            __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED)) {
              found.push_back(static_cast<uint64_t>(nd / kDelta) << 32 |
                              static_cast<uint32_t>(v));
              break;
            }
        }
      }
#pragma omp critical
      for (uint64_t x : found) {
        size_t b = static_cast<size_t>(x >> 32);
        if (b >= bins.size())
          bins.resize(b + 1);
        bins[b].push_back(static_cast<int32_t>(x & 0xffffffffu));
      }
    }
    while (cur < bins.size() && bins[cur].empty())
      cur++;
    if (cur == bins.size())
      return;
    tail = bins[cur].size();
    if (tail > frontier.size())
      frontier.resize(tail);
    std::copy(bins[cur].begin(), bins[cur].end(), frontier.begin());
    bins[cur].clear();
  }
}

} // namespace

int main(int argc, char **argv) {
  std::set_new_handler([] { tw_ex_die("out of memory"); });
  tw_ex_options o;
  tw_ex_parse(argc, argv, TW_EX_OPT_ROOT,
              "Single-source shortest paths by delta-stepping; the result is "
              "each vertex's distance.",
              0, &o);
  tw_ex_edgelist el;
  tw_ex_load(&o, &el);
  Graph g{el.n, nullptr, nullptr, nullptr};
  int64_t m = el.m, n = el.n;
  g.off = new int64_t[n + 1];
  tw_ex_object(&o, "offsets", g.off, (n + 1) * sizeof(int64_t));
  tw_ex_csr_offsets(&el, 0, g.off);
  g.adj = new int32_t[m];
  tw_ex_object(&o, "targets", g.adj, m * sizeof(int32_t));
  g.wt = new int32_t[m];
  tw_ex_object(&o, "weights", g.wt, m * sizeof(int32_t));
  tw_ex_csr_fill(&el, 0, g.off, g.adj, g.wt);
  tw_ex_free_edges(&el);

  std::vector<int64_t> dist(n, kInf);
  tw_ex_object(&o, "dist", dist.data(), n * sizeof(int64_t));
  // Sized as GAP's frontier (one entry per edge + the root); grows if a
  // bucket ever holds more.
  std::vector<int32_t> frontier(m + 1);
  tw_ex_object(&o, "frontier", frontier.data(), (m + 1) * sizeof(int32_t));

  int64_t root = tw_ex_root(&o, g.off, n);
  double t0 = tw_ex_kernel_start();
  delta_step(g, root, dist, frontier);
  tw_ex_kernel_done(&o, tw_ex_now() - t0);

  uint64_t h = TW_EX_HASH_INIT;
  int64_t reached = 0;
  for (int64_t v = 0; v < n; v++) {
    int64_t d = dist[v] == kInf ? -1 : dist[v];
    reached += d >= 0;
    h = tw_ex_hash_add(h, static_cast<uint64_t>(d));
    if (o.print)
      std::printf("%lld %lld\n", static_cast<long long>(v),
                  static_cast<long long>(d));
  }
  tw_ex_note(&o, "root %lld: %lld vertices reached",
             static_cast<long long>(root), static_cast<long long>(reached));
  tw_ex_print_checksum(h);
  delete[] g.wt;
  delete[] g.adj;
  delete[] g.off;
  return 0;
}
