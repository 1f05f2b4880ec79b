/* SPDX-License-Identifier: MIT */
/* Builds the igraph_t of an example edge list (see ig_graph.h). */
#include "ig_graph.h"

void tw_ig_graph(tw_ex_edgelist *g, igraph_t *graph) {
  /* igraph reports errors through return codes here, not by aborting. */
  igraph_set_error_handler(igraph_error_handler_printignore);
  igraph_vector_int_t edges;
  TW_IG_TRY(igraph_vector_int_init(&edges, 2 * (igraph_integer_t)g->m));
  for (int64_t e = 0; e < g->m; e++) {
    VECTOR(edges)[2 * e] = g->edges[e].src;
    VECTOR(edges)[2 * e + 1] = g->edges[e].dst;
  }
  int64_t n = g->n;
  tw_ex_free_edges(g);
  TW_IG_TRY(igraph_create(graph, &edges, (igraph_integer_t)n, IGRAPH_DIRECTED));
  igraph_vector_int_destroy(&edges);
}
