/* SPDX-License-Identifier: MIT */
/* mpi-pagerank: distributed pull PageRank over MPI ranks, the pattern of
 * HavoqGT and D-Galois at scale: a 1D block partition of the vertices, each
 * rank owns the in-edges of its vertices, and every iteration exchanges the
 * contributions of the boundary ("ghost") vertices with one MPI_Alltoallv.
 * Same fixed-point arithmetic as the examples (common/graph.h), so rank 0
 * prints the checksum pagerank-pull prints on the same graph, for any number
 * of ranks and threads. Every rank generates (or reads) the whole edge list
 * and keeps its part; the graph is the same on every rank because the
 * generator is counter-based. */
#include "common/graph.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct part {
  int nranks, me;
  int64_t n, lo, hi;   /* this rank owns vertices lo..hi-1 */
  int64_t *in_off;     /* local in-CSR over lo..hi-1 */
  int32_t *in_src;     /* index into contrib: local, then ghosts */
  int32_t *out_degree; /* of the local vertices */
  int64_t nghost;      /* remote sources this rank reads */
  int *recv_cnt, *recv_at, *send_cnt, *send_at;
  int32_t *send_local; /* local index of each contribution sent */
} part;

static void *xmalloc(size_t bytes, const char *what) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p)
    tw_ex_die("out of memory for %s (%zu bytes)", what, bytes);
  return p;
}

static int64_t block_start(int64_t n, int nranks, int r) {
  return n * r / nranks;
}

static int owner(const part *p, int64_t v) {
  int r = (int)(v * p->nranks / p->n);
  while (block_start(p->n, p->nranks, r + 1) <= v) /* rounding */
    r++;
  while (block_start(p->n, p->nranks, r) > v)
    r--;
  return r;
}

/* Local in-CSR and degrees; ghosts numbered by global id, so they are
 * grouped by owner in rank order, as MPI_Alltoallv lays them out. */
static void build_local(part *p, const tw_ex_edgelist *g) {
  int64_t nloc = p->hi - p->lo;
  p->in_off = xmalloc((size_t)(nloc + 1) * sizeof(int64_t), "in_off");
  p->out_degree = xmalloc((size_t)nloc * sizeof(int32_t), "out_degree");
  int32_t *ghost_of = xmalloc((size_t)p->n * sizeof(int32_t), "ghost map");
  for (int64_t v = 0; v <= nloc; v++)
    p->in_off[v] = 0;
  for (int64_t v = 0; v < nloc; v++)
    p->out_degree[v] = 0;
  for (int64_t u = 0; u < p->n; u++)
    ghost_of[u] = -1;
  for (int64_t e = 0; e < g->m; e++) {
    int64_t s = g->edges[e].src, d = g->edges[e].dst;
    if (s >= p->lo && s < p->hi)
      p->out_degree[s - p->lo]++;
    if (d >= p->lo && d < p->hi) {
      p->in_off[d - p->lo + 1]++;
      if (s < p->lo || s >= p->hi)
        ghost_of[s] = 0; /* needed; numbered below */
    }
  }
  for (int64_t v = 0; v < nloc; v++)
    p->in_off[v + 1] += p->in_off[v];
  p->recv_cnt = calloc((size_t)p->nranks, sizeof(int));
  p->recv_at = calloc((size_t)p->nranks, sizeof(int));
  if (!p->recv_cnt || !p->recv_at)
    tw_ex_die("out of memory for %d rank counts", p->nranks);
  p->nghost = 0;
  for (int64_t u = 0; u < p->n; u++)
    if (ghost_of[u] == 0) {
      ghost_of[u] = (int32_t)(nloc + p->nghost++);
      p->recv_cnt[owner(p, u)]++;
    }
  p->in_src = xmalloc((size_t)p->in_off[nloc] * sizeof(int32_t), "in_src");
  int64_t *fill = xmalloc((size_t)nloc * sizeof(int64_t), "fill cursor");
  for (int64_t v = 0; v < nloc; v++)
    fill[v] = p->in_off[v];
  for (int64_t e = 0; e < g->m; e++) {
    int64_t s = g->edges[e].src, d = g->edges[e].dst;
    if (d >= p->lo && d < p->hi)
      p->in_src[fill[d - p->lo]++] =
          s >= p->lo && s < p->hi ? (int32_t)(s - p->lo) : ghost_of[s];
  }
  free(fill);

  /* Tell every owner which of its vertices this rank reads. */
  int32_t *want = xmalloc((size_t)p->nghost * sizeof(int32_t), "requests");
  for (int64_t u = 0, k = 0; u < p->n; u++)
    if (ghost_of[u] >= nloc)
      want[k++] = (int32_t)u;
  free(ghost_of);
  p->send_cnt = xmalloc((size_t)p->nranks * sizeof(int), "send counts");
  p->send_at = xmalloc((size_t)p->nranks * sizeof(int), "send offsets");
  MPI_Alltoall(p->recv_cnt, 1, MPI_INT, p->send_cnt, 1, MPI_INT,
               MPI_COMM_WORLD);
  int nsend = 0, nrecv = 0;
  for (int r = 0; r < p->nranks; r++) {
    p->send_at[r] = nsend;
    p->recv_at[r] = nrecv;
    nsend += p->send_cnt[r];
    nrecv += p->recv_cnt[r];
  }
  p->send_local = xmalloc((size_t)nsend * sizeof(int32_t), "send list");
  MPI_Alltoallv(want, p->recv_cnt, p->recv_at, MPI_INT32_T, p->send_local,
                p->send_cnt, p->send_at, MPI_INT32_T, MPI_COMM_WORLD);
  for (int k = 0; k < nsend; k++)
    p->send_local[k] -= (int32_t)p->lo;
  free(want);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  part p;
  MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
  MPI_Comm_rank(MPI_COMM_WORLD, &p.me);
  tw_ex_options o;
  tw_ex_parse(argc, argv, TW_EX_OPT_ITERS,
              "Distributed pull PageRank: 1D vertex partition over the MPI "
              "ranks, ghost contributions exchanged with MPI_Alltoallv.",
              10, &o);
  tw_ex_edgelist g;
  tw_ex_load(&o, &g);
  p.n = g.n;
  if (p.n < p.nranks)
    tw_ex_die("%lld vertices cannot be split over %d ranks", (long long)p.n,
              p.nranks);
  p.lo = block_start(p.n, p.nranks, p.me);
  p.hi = block_start(p.n, p.nranks, p.me + 1);
  build_local(&p, &g);
  tw_ex_free_edges(&g);
  int64_t nloc = p.hi - p.lo;
  int nsend = p.send_at[p.nranks - 1] + p.send_cnt[p.nranks - 1];
  if (o.verbose) /* one write, so the ranks' lines do not interleave */
    fprintf(stderr,
            "mpi-pagerank: rank %d: vertices %lld..%lld, %lld in-edges, "
            "%lld ghosts\n",
            p.me, (long long)p.lo, (long long)p.hi - 1,
            (long long)p.in_off[nloc], (long long)p.nghost);

  uint64_t *rank = xmalloc((size_t)nloc * sizeof(uint64_t), "rank");
  uint64_t *contrib =
      xmalloc((size_t)(nloc + p.nghost) * sizeof(uint64_t), "contrib");
  uint64_t *sendbuf = xmalloc((size_t)nsend * sizeof(uint64_t), "sendbuf");
  MPI_Barrier(MPI_COMM_WORLD);
  tw_ex_kernel_start(); /* the region of interest (--roi markers) */
  double t0 = MPI_Wtime();
  const uint64_t init = tw_ex_pr_init(p.n), base = tw_ex_pr_base(p.n);
  for (int64_t v = 0; v < nloc; v++)
    rank[v] = init;
  for (int it = 0; it < o.iters; it++) {
#pragma omp parallel for schedule(static)
    for (int64_t u = 0; u < nloc; u++)
      contrib[u] = p.out_degree[u] ? rank[u] / (uint64_t)p.out_degree[u] : 0;
    for (int k = 0; k < nsend; k++)
      sendbuf[k] = contrib[p.send_local[k]];
    MPI_Alltoallv(sendbuf, p.send_cnt, p.send_at, MPI_UINT64_T, contrib + nloc,
                  p.recv_cnt, p.recv_at, MPI_UINT64_T, MPI_COMM_WORLD);
#pragma omp parallel for schedule(dynamic, 256)
    for (int64_t v = 0; v < nloc; v++) {
      uint64_t sum = 0;
      for (int64_t e = p.in_off[v]; e < p.in_off[v + 1]; e++)
        sum += contrib[p.in_src[e]];
      rank[v] = tw_ex_pr_apply(base, sum);
    }
  }
  if (p.me == 0)
    tw_ex_kernel_done(&o, MPI_Wtime() - t0);

  /* Rank 0 gathers the ranks in vertex order for the checksum. */
  int *cnt = NULL, *at = NULL;
  uint64_t *all = NULL;
  if (p.me == 0) {
    cnt = xmalloc((size_t)p.nranks * sizeof(int), "gather counts");
    at = xmalloc((size_t)p.nranks * sizeof(int), "gather offsets");
    for (int r = 0; r < p.nranks; r++) {
      at[r] = (int)block_start(p.n, p.nranks, r);
      cnt[r] = (int)block_start(p.n, p.nranks, r + 1) - at[r];
    }
    all = xmalloc((size_t)p.n * sizeof(uint64_t), "gathered ranks");
  }
  MPI_Gatherv(rank, (int)nloc, MPI_UINT64_T, all, cnt, at, MPI_UINT64_T, 0,
              MPI_COMM_WORLD);
  if (p.me == 0) {
    if (o.print)
      for (int64_t v = 0; v < p.n; v++)
        tw_ex_pr_print(v, all[v]);
    tw_ex_print_checksum(tw_ex_checksum_u64(all, p.n));
    free(all);
    free(at);
    free(cnt);
  }
  free(sendbuf);
  free(contrib);
  free(rank);
  free(p.send_local);
  free(p.send_at);
  free(p.send_cnt);
  free(p.recv_at);
  free(p.recv_cnt);
  free(p.in_src);
  free(p.out_degree);
  free(p.in_off);
  MPI_Finalize();
  return 0;
}
