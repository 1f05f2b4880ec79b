/* SPDX-License-Identifier: MIT */
/* Shared part of the igraph drivers (ig-pagerank, ig-bfs): error checking and
 * the igraph_t built from an example edge list. igraph allocates every
 * vector through igraph_vector_*_init (IGRAPH_CALLOC), so many of these
 * programs' sites share that innermost frame and differ deeper down. */
#pragma once

#include "fw_common.h"

#include <igraph.h>

/* Calls an igraph function and exits with one error line if it fails. */
#define TW_IG_TRY(call)                                                        \
  do {                                                                         \
    igraph_error_t tw_ig_err_ = (call);                                        \
    if (tw_ig_err_ != IGRAPH_SUCCESS)                                          \
      tw_ex_die("igraph: %s failed: %s", #call, igraph_strerror(tw_ig_err_));  \
  } while (0)

/* Directed multigraph with g's edges (duplicates and self-loops kept, as
 * the other examples traverse them). Frees the edge list. */
void tw_ig_graph(tw_ex_edgelist *g, igraph_t *graph);

/* With -v: "object" lines (tw_ex_object) for the graph's own arrays (igraph_t:
 * edge ends, their orderings, the index of each vertex's edges), so that
 * test/bench/numa_sample sees where igraph keeps them. */
void tw_ig_objects(const tw_ex_options *o, const igraph_t *graph);
