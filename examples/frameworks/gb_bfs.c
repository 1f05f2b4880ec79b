/* SPDX-License-Identifier: MIT */
/* gb-bfs: breadth-first search with SuiteSparse:GraphBLAS operations, the
 * textbook masked formulation (Kepner & Gilbert, "Graph Algorithms in the
 * Language of Linear Algebra", ch. 3):
 *   level<q> = d;   q<!level, replace> = q' A   (ANY_PAIR semiring)
 * The result is each vertex's depth along out-edges (-1: unreachable), which
 * is exact, so the checksum equals the bfs example's on the same graph. */
#include "gb_graph.h"

#include <stdlib.h>

int main(int argc, char **argv) {
  tw_ex_options o;
  tw_ex_parse(argc, argv, TW_EX_OPT_ROOT,
              "BFS with SuiteSparse:GraphBLAS (masked vxm); the result is "
              "each vertex's depth.",
              0, &o);
  TW_GB_TRY(GrB_init(GrB_NONBLOCKING));
  tw_ex_edgelist g;
  tw_ex_load(&o, &g);
  int64_t n = g.n, root = tw_fw_root(&o, &g);
  GrB_Matrix a = tw_gb_adjacency(&g);
  tw_gb_objects(&o, a);
  GrB_Vector level, q;
  TW_GB_TRY(GrB_Vector_new(&level, GrB_INT32, (GrB_Index)n));
  TW_GB_TRY(GrB_Vector_new(&q, GrB_BOOL, (GrB_Index)n));

  double t0 = tw_ex_kernel_start();
  TW_GB_TRY(GrB_Vector_setElement_BOOL(q, true, (GrB_Index)root));
  GrB_Index frontier = 1;
  int32_t depth = 0;
  for (; frontier > 0; depth++) {
    TW_GB_TRY(GrB_Vector_assign_INT32(level, q, NULL, depth, GrB_ALL,
                                      (GrB_Index)n, GrB_DESC_S));
    TW_GB_TRY(GrB_vxm(q, level, NULL, GxB_ANY_PAIR_BOOL, q, a, GrB_DESC_RSC));
    TW_GB_TRY(GrB_Vector_nvals(&frontier, q));
    tw_ex_note(&o, "level %d: %llu in the next frontier", depth + 1,
               (unsigned long long)frontier);
  }
  tw_ex_kernel_done(&o, tw_ex_now() - t0);

  uint64_t *found = malloc((size_t)(n ? n : 1) * sizeof(uint64_t));
  int32_t *depths = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
  if (!found || !depths)
    tw_ex_die("out of memory for %lld depths", (long long)n);
  tw_gb_to_u64(level, n, UINT64_MAX, found);
  for (int64_t v = 0; v < n; v++)
    depths[v] = found[v] == UINT64_MAX ? -1 : (int32_t)found[v];
  tw_ex_note(&o, "root %lld: %d levels", (long long)root, depth);
  tw_fw_bfs_result(&o, depths, n);
  free(depths);
  free(found);
  GrB_free(&q);
  GrB_free(&level);
  GrB_free(&a);
  GrB_finalize();
  return 0;
}
