/* SPDX-License-Identifier: MIT */
/* ig-pagerank: PageRank with igraph's own solver (igraph_pagerank, PRPACK,
 * damping 0.85, directed, duplicate edges counted). PRPACK solves to
 * convergence, so there is no -n. igraph is sequential, so the scores are
 * the same doubles on every run; the checksum rounds them to 2^-20 of the
 * average score (tw_fw_checksum_scores). igraph redistributes the rank of
 * vertices without out-edges, so the scores differ from the fixed-point
 * examples' (which drop it) and so does the checksum. */
#include "ig_graph.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  tw_ex_options o;
  tw_ex_parse(argc, argv, 0,
              "PageRank with igraph (igraph_pagerank, PRPACK); scores are "
              "rounded to 2^-20 of the average for the checksum.",
              0, &o);
  tw_ex_edgelist g;
  tw_ex_load(&o, &g);
  int64_t n = g.n;
  igraph_t graph;
  tw_ig_graph(&g, &graph);
  tw_ig_objects(&o, &graph);

  igraph_vector_t scores;
  igraph_real_t eigenvalue;
  TW_IG_TRY(igraph_vector_init(&scores, 0));
  double t0 = tw_ex_kernel_start();
  TW_IG_TRY(igraph_pagerank(&graph, IGRAPH_PAGERANK_ALGO_PRPACK, &scores,
                            &eigenvalue, igraph_vss_all(), IGRAPH_DIRECTED,
                            0.85, NULL, NULL));
  tw_ex_kernel_done(&o, tw_ex_now() - t0);

  if (o.print)
    for (int64_t v = 0; v < n; v++)
      printf("%lld %.9f\n", (long long)v, VECTOR(scores)[v]);
  tw_ex_print_checksum(tw_fw_checksum_scores(VECTOR(scores), n));
  igraph_vector_destroy(&scores);
  igraph_destroy(&graph);
  return 0;
}
