/* SPDX-License-Identifier: MIT */
/* Helpers the framework drivers (GraphBLAS, igraph, MPI) share on top of the
 * examples' common/graph.h, so each driver picks the same BFS root and
 * quantizes floating-point results the same way. */
#pragma once

#include "common/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The BFS source: -r (checked against n), else the first vertex with an
 * out-edge (the smallest source id in the edge list, as tw_ex_root picks
 * from a CSR), else 0. */
int64_t tw_fw_root(const tw_ex_options *o, const tw_ex_edgelist *g);

/* Output of the BFS drivers: with -p one "vertex depth" line per vertex,
 * then the checksum of the depths (as the bfs example). */
void tw_fw_bfs_result(const tw_ex_options *o, const int32_t *depths, int64_t n);

/* Checksum of floating-point PageRank scores: each score is rounded to
 * 2^-20 of the average score (round(x * n * 2^20)) and hashed as uint64.
 * The libraries compute the same doubles run to run (the placement of the
 * data cannot change arithmetic); the rounding absorbs last-bit differences
 * between library builds. */
uint64_t tw_fw_checksum_scores(const double *x, int64_t n);

#ifdef __cplusplus
}
#endif
