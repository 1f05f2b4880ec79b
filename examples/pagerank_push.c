/* SPDX-License-Identifier: MIT */
/* pagerank-push: PageRank where every vertex pushes its contribution into its
 * out-neighbours' accumulators with atomic adds, as iPregel's push version
 * (seed 000): the writes land on the neighbours, scattered over the graph.
 * Allocations: out-CSR with malloc, ranks and accumulators with calloc. */
#include "common/graph.h"

#include <stdlib.h>

int main(int argc, char **argv) {
  tw_ex_options o;
  tw_ex_parse(argc, argv, TW_EX_OPT_ITERS,
              "PageRank, push style: atomic adds into neighbours' "
              "accumulators (fixed-point ranks).",
              10, &o);
  tw_ex_edgelist g;
  tw_ex_load(&o, &g);
  int64_t n = g.n;

  size_t off_bytes = (size_t)(n + 1) * sizeof(int64_t);
  int64_t *offsets = malloc(off_bytes);
  tw_ex_object(&o, "out_offsets", offsets, off_bytes);
  tw_ex_csr_offsets(&g, 0, offsets);
  size_t adj_bytes = (size_t)(g.m ? g.m : 1) * sizeof(int32_t);
  int32_t *adj = malloc(adj_bytes);
  tw_ex_object(&o, "out_adj", adj, adj_bytes);
  tw_ex_csr_fill(&g, 0, offsets, adj, NULL);
  tw_ex_free_edges(&g);

  size_t vec_bytes = (size_t)n * sizeof(uint64_t);
  uint64_t *rank = calloc((size_t)n, sizeof(uint64_t));
  tw_ex_object(&o, "rank", rank, vec_bytes);
  uint64_t *acc = calloc((size_t)n, sizeof(uint64_t));
  tw_ex_object(&o, "acc", acc, vec_bytes);

  double t0 = tw_ex_kernel_start();
  const uint64_t init = tw_ex_pr_init(n), base = tw_ex_pr_base(n);
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < n; v++)
    rank[v] = init;
  for (int it = 0; it < o.iters; it++) {
#pragma omp parallel for schedule(dynamic, 256)
    for (int64_t u = 0; u < n; u++) {
      int64_t deg = offsets[u + 1] - offsets[u];
      if (!deg)
        continue;
      uint64_t contrib = rank[u] / (uint64_t)deg;
      for (int64_t e = offsets[u]; e < offsets[u + 1]; e++)
        __atomic_fetch_add(&acc[adj[e]], contrib, __ATOMIC_RELAXED);
    }
#pragma omp parallel for schedule(static)
    for (int64_t v = 0; v < n; v++) {
      rank[v] = tw_ex_pr_apply(base, acc[v]);
      acc[v] = 0;
    }
  }
  tw_ex_kernel_done(&o, tw_ex_now() - t0);

  if (o.print)
    for (int64_t v = 0; v < n; v++)
      tw_ex_pr_print(v, rank[v]);
  tw_ex_print_checksum(tw_ex_checksum_u64(rank, n));
  free(acc);
  free(rank);
  free(adj);
  free(offsets);
  return 0;
}
