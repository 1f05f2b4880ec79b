/* SPDX-License-Identifier: MIT */
/* pagerank-pull: PageRank where every vertex reads its in-neighbours'
 * contributions and writes only its own rank, as iPregel's pull version
 * (seed 000): writes stay local, reads are scattered. Same fixed-point
 * arithmetic as pagerank-push, so both print the same checksum.
 * Allocations: in-CSR with posix_memalign, per-vertex arrays with
 * aligned_alloc. */
#include "common/graph.h"

#include <stdlib.h>

#define ALIGN 64

/* aligned_alloc wants a size that is a multiple of the alignment. */
static size_t round_up(size_t bytes) {
  return (bytes + ALIGN - 1) / ALIGN * ALIGN + (bytes ? 0 : ALIGN);
}

int main(int argc, char **argv) {
  tw_ex_options o;
  tw_ex_parse(argc, argv, TW_EX_OPT_ITERS,
              "PageRank, pull style: each vertex sums its in-neighbours' "
              "contributions (fixed-point ranks).",
              10, &o);
  tw_ex_edgelist g;
  tw_ex_load(&o, &g);
  int64_t n = g.n;

  size_t off_bytes = (size_t)(n + 1) * sizeof(int64_t);
  void *p = NULL;
  if (posix_memalign(&p, ALIGN, off_bytes))
    p = NULL;
  int64_t *in_offsets = p;
  tw_ex_object(&o, "in_offsets", in_offsets, off_bytes);
  tw_ex_csr_offsets(&g, 1, in_offsets);
  size_t adj_bytes = (size_t)(g.m ? g.m : 1) * sizeof(int32_t);
  if (posix_memalign(&p, ALIGN, adj_bytes))
    p = NULL;
  int32_t *in_adj = p;
  tw_ex_object(&o, "in_adj", in_adj, adj_bytes);
  tw_ex_csr_fill(&g, 1, in_offsets, in_adj, NULL);

  size_t deg_bytes = round_up((size_t)n * sizeof(int32_t));
  int32_t *out_degree = aligned_alloc(ALIGN, deg_bytes);
  tw_ex_object(&o, "out_degree", out_degree, deg_bytes);
  for (int64_t v = 0; v < n; v++)
    out_degree[v] = 0;
  for (int64_t e = 0; e < g.m; e++)
    out_degree[g.edges[e].src]++;
  tw_ex_free_edges(&g);

  size_t vec_bytes = round_up((size_t)n * sizeof(uint64_t));
  uint64_t *rank = aligned_alloc(ALIGN, vec_bytes);
  tw_ex_object(&o, "rank", rank, vec_bytes);
  uint64_t *contrib = aligned_alloc(ALIGN, vec_bytes);
  tw_ex_object(&o, "contrib", contrib, vec_bytes);

  double t0 = tw_ex_kernel_start();
  const uint64_t init = tw_ex_pr_init(n), base = tw_ex_pr_base(n);
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < n; v++)
    rank[v] = init;
  for (int it = 0; it < o.iters; it++) {
#pragma omp parallel for schedule(static)
    for (int64_t u = 0; u < n; u++)
      contrib[u] = out_degree[u] ? rank[u] / (uint64_t)out_degree[u] : 0;
#pragma omp parallel for schedule(dynamic, 256)
    for (int64_t v = 0; v < n; v++) {
      uint64_t sum = 0;
      for (int64_t e = in_offsets[v]; e < in_offsets[v + 1]; e++)
        sum += contrib[in_adj[e]];
      rank[v] = tw_ex_pr_apply(base, sum);
    }
  }
  tw_ex_kernel_done(&o, tw_ex_now() - t0);

  if (o.print)
    for (int64_t v = 0; v < n; v++)
      tw_ex_pr_print(v, rank[v]);
  tw_ex_print_checksum(tw_ex_checksum_u64(rank, n));
  free(contrib);
  free(rank);
  free(out_degree);
  free(in_adj);
  free(in_offsets);
  return 0;
}
