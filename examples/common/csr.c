/* SPDX-License-Identifier: MIT */
/* CSR construction and result checksums of the example kernels. The fill is
 * sequential and keeps edge-list order inside each row, so the CSR (and every
 * result computed from it) is the same for any thread count. */
#include "graph.h"

void tw_ex_csr_offsets(const tw_ex_edgelist *g, int transpose,
                       int64_t *offsets) {
  for (int64_t i = 0; i <= g->n; i++)
    offsets[i] = 0;
  for (int64_t e = 0; e < g->m; e++)
    offsets[(transpose ? g->edges[e].dst : g->edges[e].src) + 1]++;
  for (int64_t i = 0; i < g->n; i++)
    offsets[i + 1] += offsets[i];
}

void tw_ex_csr_fill(const tw_ex_edgelist *g, int transpose, int64_t *offsets,
                    int32_t *adj, int32_t *wt) {
  for (int64_t e = 0; e < g->m; e++) {
    const tw_ex_edge *x = &g->edges[e];
    int64_t at = offsets[transpose ? x->dst : x->src]++;
    adj[at] = transpose ? x->src : x->dst;
    if (wt)
      wt[at] = x->w;
  }
  /* offsets[i] now holds the end of row i: shift back to the starts. */
  for (int64_t i = g->n; i > 0; i--)
    offsets[i] = offsets[i - 1];
  offsets[0] = 0;
}

int64_t tw_ex_root(const tw_ex_options *o, const int64_t *out_offsets,
                   int64_t n) {
  if (o->root >= n)
    tw_ex_die("root %lld is not a vertex: the graph has vertices 0..%lld",
              (long long)o->root, (long long)n - 1);
  if (o->root >= 0)
    return o->root;
  for (int64_t v = 0; v < n; v++)
    if (out_offsets[v + 1] > out_offsets[v])
      return v;
  return 0;
}

uint64_t tw_ex_checksum_i32(const int32_t *v, int64_t n) {
  uint64_t h = TW_EX_HASH_INIT;
  for (int64_t i = 0; i < n; i++)
    h = tw_ex_hash_add(h, (uint64_t)(int64_t)v[i]);
  return h;
}

uint64_t tw_ex_checksum_u64(const uint64_t *v, int64_t n) {
  uint64_t h = TW_EX_HASH_INIT;
  for (int64_t i = 0; i < n; i++)
    h = tw_ex_hash_add(h, v[i]);
  return h;
}
