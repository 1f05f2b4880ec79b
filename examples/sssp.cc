// SPDX-License-Identifier: MIT
// sssp: single-source shortest paths by delta-stepping (Meyer & Sanders; the
// parallel formulation of GAP's sssp.cc): a shared frontier of the current
// bucket, thread-local buckets, distances lowered with compare-and-swap.
// Final distances are exact whatever the thread count, so they are the
// checksum (-1 for unreachable vertices).
// Allocations: CSR (offsets, targets, weights) with new[], distances and the
// frontier as std::vector.
#include "common/graph.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

constexpr int64_t kDelta = 32; // bucket width; weights are 1..255 (GAP's)
constexpr int64_t kInf = INT64_MAX / 2;
constexpr int64_t kNoBin = INT64_MAX;

struct Graph {
  int64_t n;
  int64_t *off;
  int32_t *adj, *wt;
};

void delta_step(const Graph &g, int64_t root, std::vector<int64_t> &dist,
                std::vector<int32_t> &frontier) {
  dist[root] = 0;
  frontier[0] = static_cast<int32_t>(root);
  int64_t bin_index[2] = {0, kNoBin};
  int64_t frontier_tail[2] = {1, 0};
#pragma omp parallel
  {
    std::vector<std::vector<int32_t>> bins;
    for (size_t iter = 0; bin_index[iter & 1] != kNoBin; iter++) {
      int64_t &cur_bin = bin_index[iter & 1];
      int64_t &next_bin = bin_index[(iter + 1) & 1];
      int64_t &cur_tail = frontier_tail[iter & 1];
      int64_t &next_tail = frontier_tail[(iter + 1) & 1];
#pragma omp for nowait schedule(dynamic, 64)
      for (int64_t i = 0; i < cur_tail; i++) {
        int32_t u = frontier[i];
        int64_t du = __atomic_load_n(&dist[u], __ATOMIC_RELAXED);
        if (du < kDelta * cur_bin)
          continue; // settled in an earlier bucket: a stale entry
        for (int64_t e = g.off[u]; e < g.off[u + 1]; e++) {
          int32_t v = g.adj[e];
          int64_t nd = du + g.wt[e];
          int64_t old = __atomic_load_n(&dist[v], __ATOMIC_RELAXED);
          while (nd < old) {
            if (__atomic_compare_exchange_n(&dist[v], &old, nd, false,
                                            __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED)) {
              size_t b = static_cast<size_t>(nd / kDelta);
              if (b >= bins.size())
                bins.resize(b + 1);
              bins[b].push_back(v);
              break;
            }
          }
        }
      }
      for (size_t b = static_cast<size_t>(cur_bin); b < bins.size(); b++)
        if (!bins[b].empty()) {
#pragma omp critical
          next_bin = std::min(next_bin, static_cast<int64_t>(b));
          break;
        }
#pragma omp barrier
#pragma omp single nowait
      {
        cur_bin = kNoBin;
        cur_tail = 0;
      }
      std::vector<int32_t> *mine = nullptr;
      int64_t at = 0;
      if (next_bin < static_cast<int64_t>(bins.size())) {
        mine = &bins[static_cast<size_t>(next_bin)];
        at = __atomic_fetch_add(&next_tail, static_cast<int64_t>(mine->size()),
                                __ATOMIC_RELAXED);
      }
#pragma omp barrier
      // Re-relaxations can in principle push more than m entries: grow.
#pragma omp single
      if (next_tail > static_cast<int64_t>(frontier.size()))
        frontier.resize(static_cast<size_t>(next_tail) * 2);
      if (mine) {
        std::copy(mine->begin(), mine->end(), frontier.begin() + at);
        mine->clear();
      }
#pragma omp barrier
    }
  }
}

} // namespace

int main(int argc, char **argv) {
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
  // GAP's bound for one bucket's frontier: one entry per edge (+ the root).
  std::vector<int32_t> frontier(m + 1);
  tw_ex_object(&o, "frontier", frontier.data(), (m + 1) * sizeof(int32_t));

  int64_t root = tw_ex_root(&o, g.off, n);
  double t0 = tw_ex_now();
  delta_step(g, root, dist, frontier);
  tw_ex_print_time(tw_ex_now() - t0);

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
  tw_ex_note(&o, "root %lld: %lld vertices reached", static_cast<long long>(root),
             static_cast<long long>(reached));
  tw_ex_print_checksum(h);
  delete[] g.wt;
  delete[] g.adj;
  delete[] g.off;
  return 0;
}
