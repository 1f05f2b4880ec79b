/* SPDX-License-Identifier: MIT */
/* Shared part of the SuiteSparse:GraphBLAS drivers (gb-pagerank, gb-bfs):
 * error checking and the adjacency matrix built from an example edge list.
 * The matrix and every vector live inside libgraphblas (GB_malloc_memory),
 * so the big allocation sites of these programs are in the library. */
#pragma once

#include "fw_common.h"

#include <GraphBLAS.h>

/* Calls a GraphBLAS method and exits with one error line if it fails. */
#define TW_GB_TRY(call)                                                        \
  do {                                                                         \
    GrB_Info tw_gb_info_ = (call);                                             \
    if (tw_gb_info_ != GrB_SUCCESS)                                            \
      tw_ex_die("GraphBLAS: %s failed with GrB_Info %d", #call,                \
                (int)tw_gb_info_);                                             \
  } while (0)

/* A(u,v) = number of edges u->v (UINT64: duplicate edges add up, so A is
 * the multigraph the other examples traverse). Frees the edge list. */
GrB_Matrix tw_gb_adjacency(tw_ex_edgelist *g);

/* With -v: "object" lines (tw_ex_object) for the arrays the library keeps
 * the matrix in (CSR: row pointers, column indices, values), so that
 * test/bench/numa_sample sees where they are. */
void tw_gb_objects(const tw_ex_options *o, GrB_Matrix a);

/* deg(u) = out-degree of u with multiplicity; only vertices with out-edges
 * have an entry. */
GrB_Vector tw_gb_out_degree(GrB_Matrix a, int64_t n);

/* Copies a vector into a dense array (values typecast to uint64), `absent`
 * where it has no entry. */
void tw_gb_to_u64(GrB_Vector v, int64_t n, uint64_t absent, uint64_t *out);
