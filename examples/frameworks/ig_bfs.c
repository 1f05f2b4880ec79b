/* SPDX-License-Identifier: MIT */
/* ig-bfs: breadth-first search with igraph (igraph_bfs along out-edges).
 * The result is each vertex's depth (-1: unreachable), exact, so the
 * checksum equals the bfs example's on the same graph. */
#include "ig_graph.h"

#include <stdlib.h>

int main(int argc, char **argv) {
  tw_ex_options o;
  tw_ex_parse(argc, argv, TW_EX_OPT_ROOT,
              "BFS with igraph (igraph_bfs); the result is each vertex's "
              "depth.",
              0, &o);
  tw_ex_edgelist g;
  tw_ex_load(&o, &g);
  int64_t n = g.n, root = tw_fw_root(&o, &g);
  igraph_t graph;
  tw_ig_graph(&g, &graph);
  tw_ig_objects(&o, &graph);

  igraph_vector_int_t dist;
  /* (at its size: igraph_bfs finds it so and does not move it) */
  TW_IG_TRY(igraph_vector_int_init(&dist, (igraph_integer_t)n));
  tw_ex_object(&o, "ig_dist", VECTOR(dist), (size_t)n * sizeof(igraph_integer_t));
  double t0 = tw_ex_kernel_start();
  TW_IG_TRY(igraph_bfs(&graph, (igraph_integer_t)root, NULL, IGRAPH_OUT,
                       /*unreachable=*/0, NULL, NULL, NULL, NULL, NULL, NULL,
                       &dist, NULL, NULL));
  tw_ex_kernel_done(&o, tw_ex_now() - t0);

  int32_t *depths = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
  if (!depths)
    tw_ex_die("out of memory for %lld depths", (long long)n);
  for (int64_t v = 0; v < n; v++)
    depths[v] = VECTOR(dist)[v] < 0 ? -1 : (int32_t)VECTOR(dist)[v];
  tw_fw_bfs_result(&o, depths, n);
  free(depths);
  igraph_vector_int_destroy(&dist);
  igraph_destroy(&graph);
  return 0;
}
