/* SPDX-License-Identifier: MIT */
/* gb-pagerank: PageRank with SuiteSparse:GraphBLAS operations, in the
 * examples' fixed-point arithmetic (common/graph.h: uint64 ranks with 48
 * fractional bits), so its checksum equals pagerank-pull's on the same graph
 * and does not depend on GraphBLAS's thread count (integer sums are exact):
 *   c = r ./ deg              contribution of each vertex with out-edges
 *   t = c' A                  (PLUS_TIMES_UINT64: A counts duplicate edges)
 *   r = base + (t * 85) / 100 for every vertex */
#include "gb_graph.h"

#include <stdlib.h>

int main(int argc, char **argv) {
  tw_ex_options o;
  tw_ex_parse(argc, argv, TW_EX_OPT_ITERS,
              "PageRank with SuiteSparse:GraphBLAS (vxm on the PLUS_TIMES "
              "uint64 semiring, fixed-point ranks).",
              10, &o);
  TW_GB_TRY(GrB_init(GrB_NONBLOCKING));
  tw_ex_edgelist g;
  tw_ex_load(&o, &g);
  int64_t n = g.n;
  GrB_Matrix a = tw_gb_adjacency(&g);
  tw_gb_objects(&o, a);
  GrB_Vector deg = tw_gb_out_degree(a, n), r, c, t;
  TW_GB_TRY(GrB_Vector_new(&r, GrB_UINT64, (GrB_Index)n));
  TW_GB_TRY(GrB_Vector_new(&c, GrB_UINT64, (GrB_Index)n));
  TW_GB_TRY(GrB_Vector_new(&t, GrB_UINT64, (GrB_Index)n));

  double t0 = tw_ex_kernel_start();
  const uint64_t base = tw_ex_pr_base(n);
  TW_GB_TRY(GrB_Vector_assign_UINT64(r, NULL, NULL, tw_ex_pr_init(n), GrB_ALL,
                                     (GrB_Index)n, NULL));
  for (int it = 0; it < o.iters; it++) {
    TW_GB_TRY(GrB_Vector_eWiseMult_BinaryOp(c, NULL, NULL, GrB_DIV_UINT64, r,
                                            deg, NULL));
    TW_GB_TRY(
        GrB_vxm(t, NULL, NULL, GrB_PLUS_TIMES_SEMIRING_UINT64, c, a, NULL));
    TW_GB_TRY(GrB_Vector_apply_BinaryOp2nd_UINT64(
        t, NULL, NULL, GrB_TIMES_UINT64, t, TW_EX_PR_DAMP_PCT, NULL));
    TW_GB_TRY(GrB_Vector_assign_UINT64(r, NULL, NULL, base, GrB_ALL,
                                       (GrB_Index)n, NULL));
    /* r(v) += t(v) / 100 where t has an entry (v has in-edges). */
    TW_GB_TRY(GrB_Vector_apply_BinaryOp2nd_UINT64(
        r, NULL, GrB_PLUS_UINT64, GrB_DIV_UINT64, t, 100, NULL));
    tw_ex_note(&o, "iteration %d done", it + 1);
  }
  TW_GB_TRY(GrB_Vector_wait(r, GrB_MATERIALIZE));
  tw_ex_kernel_done(&o, tw_ex_now() - t0);

  uint64_t *rank = malloc((size_t)(n ? n : 1) * sizeof(uint64_t));
  if (!rank)
    tw_ex_die("out of memory for %lld ranks", (long long)n);
  tw_gb_to_u64(r, n, base, rank);
  if (o.print)
    for (int64_t v = 0; v < n; v++)
      tw_ex_pr_print(v, rank[v]);
  tw_ex_print_checksum(tw_ex_checksum_u64(rank, n));
  free(rank);
  GrB_free(&t);
  GrB_free(&c);
  GrB_free(&r);
  GrB_free(&deg);
  GrB_free(&a);
  GrB_finalize();
  return 0;
}
