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

void tw_ig_objects(const tw_ex_options *o, const igraph_t *graph) {
  const igraph_vector_int_t *v[] = {&graph->from, &graph->to, &graph->oi,
                                    &graph->ii,   &graph->os, &graph->is};
  const char *names[] = {"ig_from", "ig_to", "ig_oi", "ig_ii", "ig_os", "ig_is"};
  for (int i = 0; i < 6; i++)
    tw_ex_object(o, names[i], v[i]->stor_begin,
                 (size_t)(v[i]->stor_end - v[i]->stor_begin) *
                     sizeof(igraph_integer_t));
}
