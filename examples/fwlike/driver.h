// SPDX-License-Identifier: MIT
// Glue between the fwlike kernels and the examples' command line: loads the
// graph chosen by -g/-f into a Graph<V> and, with -v, prints the object
// line of each of its arrays (examples/common/graph.h).
#pragma once

#include "common/graph.h"
#include "fwlike/graph.h"

template <class V>
void load_graph(const tw_ex_options *o, fwlike::Graph<V> &G) {
  tw_ex_edgelist el;
  tw_ex_load(o, &el);
  G.build(el.edges, el.m, el.n);
  tw_ex_free_edges(&el);
  tw_ex_object(o, "vertices", G.vertices, G.n * sizeof(V));
  tw_ex_object(o, "out_offsets", G.out_offsets, (G.n + 1) * sizeof(int64_t));
  tw_ex_object(o, "out_edges", G.out_edges, G.m * sizeof(int32_t));
  if (!V::symmetric) {
    tw_ex_object(o, "in_offsets", G.in_offsets, (G.n + 1) * sizeof(int64_t));
    tw_ex_object(o, "in_edges", G.in_edges, G.m * sizeof(int32_t));
  }
}
