// SPDX-License-Identifier: MIT
// adjlist: the allocation-heavy pattern of many graph codes (NetworKit,
// igraph-style user code): an undirected weighted adjacency list, one
// std::vector<std::vector<int>> of neighbours and one of edge weights, built
// with push_back (each edge both ways): two small, growing heap blocks per
// vertex - about 5-6 million mallocs at scale 20. It then runs a
// level-synchronous BFS and computes each vertex's strength (sum of incident
// weights) and a degree histogram; the checksum covers all three.
// Allocations: the outer vectors, every inner vector (push_back), depths and
// the BFS queue as std::vector.
#include "common/graph.h"

#include <cstdio>
#include <new>
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
    // Small frontiers (long paths in the seed-000 graphs) run on one thread.
#pragma omp parallel if (end - head > 256)
    {
      std::vector<int32_t> found;
#pragma omp for schedule(dynamic, 64) nowait
      for (int64_t i = head; i < end; i++)
        for (int v : adj[queue[i]]) {
          int32_t unseen = -1;
          if (__atomic_load_n(&depth[v], __ATOMIC_RELAXED) == -1 &&
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
  std::set_new_handler([] { tw_ex_die("out of memory"); });
  tw_ex_options o;
  tw_ex_parse(argc, argv, TW_EX_OPT_ROOT,
              "Undirected adjacency list as vector<vector<int>> built by "
              "push_back, then BFS depths and degree statistics.",
              0, &o);
  tw_ex_edgelist el;
  tw_ex_load(&o, &el);
  int64_t n = el.n;

  double t0 = tw_ex_kernel_start();
  AdjList adj(n);
  tw_ex_object(&o, "adjacency", adj.data(), n * sizeof(std::vector<int>));
  AdjList wts(n);
  tw_ex_object(&o, "weights", wts.data(), n * sizeof(std::vector<int>));
  for (int64_t e = 0; e < el.m; e++) {
    const tw_ex_edge &x = el.edges[e];
    adj[x.src].push_back(x.dst);
    wts[x.src].push_back(x.w);
    adj[x.dst].push_back(x.src);
    wts[x.dst].push_back(x.w);
  }
  tw_ex_free_edges(&el);
  size_t inner_bytes = 0;
  for (int64_t v = 0; v < n; v++)
    inner_bytes += (adj[v].capacity() + wts[v].capacity()) * sizeof(int);
  tw_ex_note(&o, "adjacency lists: %zu bytes in per-vertex blocks (%.3f s)",
             inner_bytes, tw_ex_now() - t0);

  std::vector<int32_t> depth(n, -1);
  tw_ex_object(&o, "depth", depth.data(), n * sizeof(int32_t));
  std::vector<int32_t> queue(n);
  tw_ex_object(&o, "queue", queue.data(), n * sizeof(int32_t));
  std::vector<int64_t> strength(n);
  tw_ex_object(&o, "strength", strength.data(), n * sizeof(int64_t));
  int64_t root = -1;
  for (int64_t v = 0; v < n && root < 0; v++)
    if (!adj[v].empty())
      root = v;
  if (o.root >= n)
    tw_ex_die("root %lld is not a vertex: the graph has vertices 0..%lld",
              static_cast<long long>(o.root), static_cast<long long>(n - 1));
  root = o.root >= 0 ? o.root : (root < 0 ? 0 : root);
  int levels = bfs(adj, root, depth, queue);

#pragma omp parallel for schedule(dynamic, 1024)
  for (int64_t v = 0; v < n; v++) {
    int64_t sum = 0;
    for (int w : wts[v])
      sum += w;
    strength[v] = sum;
  }
  // Degree histogram by powers of two: bucket b holds degrees in
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
  tw_ex_kernel_done(&o, tw_ex_now() - t0);

  // Checksum: depths, strengths, histogram, max degree.
  uint64_t h = tw_ex_checksum_i32(depth.data(), n);
  for (int64_t v = 0; v < n; v++)
    h = tw_ex_hash_add(h, static_cast<uint64_t>(strength[v]));
  for (int64_t c : hist)
    h = tw_ex_hash_add(h, static_cast<uint64_t>(c));
  h = tw_ex_hash_add(h, max_degree);
  tw_ex_note(&o, "root %lld: %d levels, max degree %zu",
             static_cast<long long>(root), levels, max_degree);
  if (o.print)
    for (int64_t v = 0; v < n; v++)
      std::printf("%lld %d %zu %lld\n", static_cast<long long>(v), depth[v],
                  adj[v].size(), static_cast<long long>(strength[v]));
  tw_ex_print_checksum(h);
  return 0;
}
