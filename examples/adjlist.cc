// SPDX-License-Identifier: MIT
// adjlist: the allocation-heavy pattern of many graph codes (NetworKit,
// igraph-style user code): an adjacency list std::vector<std::vector<int>>
// built with push_back, one small, growing heap block per vertex - about 5-6
// million mallocs at scale 20. It then runs a level-synchronous BFS over it
// and computes out-degree statistics; the checksum covers depths and the
// degree histogram.
// Allocations: the outer vector, every inner vector (push_back), depths and
// the BFS queue as std::vector.
#include "common/graph.h"

#include <cstdio>
#include <vector>

namespace {

using AdjList = std::vector<std::vector<int>>;

// Level-synchronous top-down BFS; depth -1 marks unreachable vertices.
int bfs(const AdjList &adj, int64_t root, std::vector<int32_t> &depth,
        std::vector<int32_t> &queue) {
  depth[root] = 0;
  queue[0] = static_cast<int32_t>(root);
  int64_t head = 0, tail = 1;
  int32_t level = 0;
  while (head < tail) {
    int64_t end = tail;
#pragma omp parallel
    {
      std::vector<int32_t> found;
#pragma omp for schedule(dynamic, 64) nowait
      for (int64_t i = head; i < end; i++)
        for (int v : adj[queue[i]]) {
          int32_t unseen = -1;
          if (depth[v] == -1 &&
              __atomic_compare_exchange_n(&depth[v], &unseen, level + 1, false,
                                          __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            found.push_back(v);
        }
      int64_t at = __atomic_fetch_add(&tail, static_cast<int64_t>(found.size()),
                                      __ATOMIC_RELAXED);
      for (size_t k = 0; k < found.size(); k++)
        queue[at + k] = found[k];
    }
    head = end;
    level++;
  }
  return level;
}

} // namespace

int main(int argc, char **argv) {
  tw_ex_options o;
  tw_ex_parse(argc, argv, TW_EX_OPT_ROOT,
              "Adjacency list as vector<vector<int>> built by push_back, then "
              "BFS depths and degree statistics.",
              0, &o);
  tw_ex_edgelist el;
  tw_ex_load(&o, &el);
  int64_t n = el.n;

  double t0 = tw_ex_now();
  AdjList adj(n);
  tw_ex_object(&o, "adjacency", adj.data(), n * sizeof(std::vector<int>));
  for (int64_t e = 0; e < el.m; e++)
    adj[el.edges[e].src].push_back(el.edges[e].dst);
  tw_ex_free_edges(&el);
  size_t inner_bytes = 0;
  for (const auto &l : adj)
    inner_bytes += l.capacity() * sizeof(int);
  tw_ex_note(&o, "adjacency lists: %zu bytes in per-vertex blocks (%.3f s)",
             inner_bytes, tw_ex_now() - t0);

  std::vector<int32_t> depth(n, -1);
  tw_ex_object(&o, "depth", depth.data(), n * sizeof(int32_t));
  std::vector<int32_t> queue(n);
  tw_ex_object(&o, "queue", queue.data(), n * sizeof(int32_t));
  int64_t root = -1;
  for (int64_t v = 0; v < n && root < 0; v++)
    if (!adj[v].empty())
      root = v;
  if (o.root >= n)
    tw_ex_die("root %lld is not a vertex: the graph has vertices 0..%lld",
              static_cast<long long>(o.root), static_cast<long long>(n - 1));
  root = o.root >= 0 ? o.root : (root < 0 ? 0 : root);
  int levels = bfs(adj, root, depth, queue);

  // Out-degree histogram by powers of two: bucket b holds degrees in
  // [2^(b-1), 2^b), bucket 0 degree 0.
  std::vector<int64_t> hist(34, 0);
  size_t max_degree = 0;
  for (const auto &l : adj) {
    size_t d = l.size(), b = 0;
    while (d >> b)
      b++;
    hist[b]++;
    max_degree = d > max_degree ? d : max_degree;
  }
  tw_ex_print_time(tw_ex_now() - t0);

  uint64_t h = tw_ex_checksum_i32(depth.data(), n);
  for (int64_t c : hist)
    h = tw_ex_hash_add(h, static_cast<uint64_t>(c));
  h = tw_ex_hash_add(h, max_degree);
  tw_ex_note(&o, "root %lld: %d levels, max out-degree %zu",
             static_cast<long long>(root), levels, max_degree);
  if (o.print) {
    for (int64_t v = 0; v < n; v++)
      std::printf("%lld %d %zu\n", static_cast<long long>(v), depth[v],
                  adj[v].size());
  }
  tw_ex_print_checksum(h);
  return 0;
}
