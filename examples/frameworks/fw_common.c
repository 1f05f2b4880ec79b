/* SPDX-License-Identifier: MIT */
/* BFS root choice, BFS output and score quantization shared by the framework
 * drivers (see fw_common.h). */
#include "fw_common.h"

#include <math.h>
#include <stdio.h>

int64_t tw_fw_root(const tw_ex_options *o, const tw_ex_edgelist *g) {
  if (o->root >= g->n)
    tw_ex_die("root %lld is not a vertex: the graph has vertices 0..%lld",
              (long long)o->root, (long long)g->n - 1);
  if (o->root >= 0)
    return o->root;
  int64_t root = g->n;
  for (int64_t e = 0; e < g->m; e++)
    if (g->edges[e].src < root)
      root = g->edges[e].src;
  return root < g->n ? root : 0;
}

void tw_fw_bfs_result(const tw_ex_options *o, const int32_t *depths,
                      int64_t n) {
  if (o->print)
    for (int64_t v = 0; v < n; v++)
      printf("%lld %d\n", (long long)v, depths[v]);
  tw_ex_print_checksum(tw_ex_checksum_i32(depths, n));
}

uint64_t tw_fw_checksum_scores(const double *x, int64_t n) {
  uint64_t h = TW_EX_HASH_INIT;
  const double scale = (double)n * 1048576.0;
  for (int64_t i = 0; i < n; i++)
    h = tw_ex_hash_add(h, (uint64_t)llround(x[i] * scale));
  return h;
}
