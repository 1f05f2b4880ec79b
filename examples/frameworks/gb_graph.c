/* SPDX-License-Identifier: MIT */
/* Adjacency matrix, degrees, root and dense extraction shared by the
 * GraphBLAS drivers (see gb_graph.h). */
#include "gb_graph.h"

#include <stdlib.h>

GrB_Matrix tw_gb_adjacency(tw_ex_edgelist *g) {
  size_t m = (size_t)(g->m ? g->m : 1);
  GrB_Index *rows = malloc(m * sizeof(GrB_Index));
  GrB_Index *cols = malloc(m * sizeof(GrB_Index));
  uint64_t *ones = malloc(m * sizeof(uint64_t));
  if (!rows || !cols || !ones)
    tw_ex_die("out of memory for %lld edge tuples", (long long)g->m);
  for (int64_t e = 0; e < g->m; e++) {
    rows[e] = (GrB_Index)g->edges[e].src;
    cols[e] = (GrB_Index)g->edges[e].dst;
    ones[e] = 1;
  }
  GrB_Matrix a;
  TW_GB_TRY(GrB_Matrix_new(&a, GrB_UINT64, (GrB_Index)g->n, (GrB_Index)g->n));
  TW_GB_TRY(GrB_Matrix_build_UINT64(a, rows, cols, ones, (GrB_Index)g->m,
                                    GrB_PLUS_UINT64));
  free(ones);
  free(cols);
  free(rows);
  tw_ex_free_edges(g);
  return a;
}

void tw_gb_objects(const tw_ex_options *o, GrB_Matrix a) {
  if (!o->verbose)
    return;
  GrB_Index *ap, *aj, aps, ajs, axs;
  void *ax;
  bool iso, jumbled;
  /* (unpacked and packed back as they are: the same arrays, no copy) */
  TW_GB_TRY(GrB_Matrix_wait(a, GrB_MATERIALIZE));
  TW_GB_TRY(GxB_Matrix_unpack_CSR(a, &ap, &aj, &ax, &aps, &ajs, &axs, &iso,
                                  &jumbled, NULL));
  tw_ex_object(o, "gb_rowptr", ap, aps);
  tw_ex_object(o, "gb_colidx", aj, ajs);
  tw_ex_object(o, "gb_values", ax, axs);
  TW_GB_TRY(GxB_Matrix_pack_CSR(a, &ap, &aj, &ax, aps, ajs, axs, iso, jumbled,
                                NULL));
}

GrB_Vector tw_gb_out_degree(GrB_Matrix a, int64_t n) {
  GrB_Vector deg;
  TW_GB_TRY(GrB_Vector_new(&deg, GrB_UINT64, (GrB_Index)n));
  TW_GB_TRY(GrB_Matrix_reduce_Monoid(deg, NULL, NULL, GrB_PLUS_MONOID_UINT64, a,
                                     NULL));
  return deg;
}

void tw_gb_to_u64(GrB_Vector v, int64_t n, uint64_t absent, uint64_t *out) {
  GrB_Index nv;
  TW_GB_TRY(GrB_Vector_nvals(&nv, v));
  GrB_Index *idx = malloc((nv ? nv : 1) * sizeof(GrB_Index));
  uint64_t *val = malloc((nv ? nv : 1) * sizeof(uint64_t));
  if (!idx || !val)
    tw_ex_die("out of memory for %llu vector entries", (unsigned long long)nv);
  TW_GB_TRY(GrB_Vector_extractTuples_UINT64(idx, val, &nv, v));
  for (int64_t i = 0; i < n; i++)
    out[i] = absent;
  for (GrB_Index k = 0; k < nv; k++)
    out[idx[k]] = val[k];
  free(val);
  free(idx);
}
