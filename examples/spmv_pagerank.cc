// SPDX-License-Identifier: MIT
// spmv-pagerank: PageRank as GraphMat runs it (seed 002, sec. 6): vertex
// programs mapped to a sparse matrix - sparse vector product. Each iteration
// every vertex sends its contribution as a message (sparse vector x), the
// transposed adjacency matrix, stored in DCSC and split into row partitions
// (each owned by one thread, so no atomics), computes y = A^T x, and each
// vertex applies y to its vertex data. The three structures the paper
// places separately are separate allocations here:
//   matrix (MTX): DCSC arrays, posix_memalign
//   vertex data (VxD): new[]
//   sparse vectors (SV): bitvector with calloc + values with aligned_alloc
// Same fixed-point arithmetic as pagerank-push/pull: same checksum.
#include "common/graph.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

namespace {

struct VertexData {
  uint64_t rank;
  int64_t out_degree;
};

// A sparse vector as GraphMat keeps it: presence bitvector + value array.
struct SparseVec {
  uint64_t *bits;
  uint64_t *values;
  size_t words;
  bool has(int64_t i) const { return (bits[i >> 6] >> (i & 63)) & 1; }
  void set(int64_t i, uint64_t v) {
    bits[i >> 6] |= 1ULL << (i & 63);
    values[i] = v;
  }
};

SparseVec make_vec(const tw_ex_options &o, int64_t n, const char *bits_name,
                   const char *values_name) {
  SparseVec s;
  s.words = static_cast<size_t>(n + 63) / 64;
  s.bits = static_cast<uint64_t *>(std::calloc(s.words, sizeof(uint64_t)));
  tw_ex_object(&o, bits_name, s.bits, s.words * sizeof(uint64_t));
  size_t bytes = s.words * 64 * sizeof(uint64_t); // a multiple of 64
  s.values = static_cast<uint64_t *>(std::aligned_alloc(64, bytes));
  tw_ex_object(&o, values_name, s.values, bytes);
  return s;
}

void *matrix_alloc(size_t bytes) {
  void *p = nullptr;
  return posix_memalign(&p, 64, bytes ? bytes : 1) ? nullptr : p;
}

// DCSC of A^T in row partitions: partition p holds rows [p*R, (p+1)*R) and
// its non-empty columns part_col[p]..part_col[p+1]-1; column k is source
// vertex col_ids[k] with row (destination) ids row_ids[col_ptr[k]..+1).
struct Dcsc {
  int64_t parts, rows_per_part;
  std::vector<int64_t> part_col;
  int32_t *col_ids, *row_ids;
  int64_t *col_ptr;
};

Dcsc build_dcsc(const tw_ex_options &o, const tw_ex_edgelist &el) {
  Dcsc a;
  int64_t n = el.n;
  // Rows per partition: a multiple of 64, so each bitvector word of y is
  // written by one partition (one thread) only.
  a.rows_per_part = ((n + 63) / 64 + 63) / 64 * 64;
  a.parts = (n + a.rows_per_part - 1) / a.rows_per_part;
  // Temporary out-CSR to visit edges by ascending source (column).
  std::vector<int64_t> off(n + 1);
  tw_ex_object(&o, "tmp_out_offsets", off.data(), (n + 1) * sizeof(int64_t));
  std::vector<int32_t> adj(el.m);
  tw_ex_object(&o, "tmp_out_adj", adj.data(), el.m * sizeof(int32_t));
  tw_ex_csr_offsets(&el, 0, off.data());
  tw_ex_csr_fill(&el, 0, off.data(), adj.data(), nullptr);
  std::vector<int64_t> nnz(a.parts, 0), nzc(a.parts, 0), last(a.parts, -1);
  for (int64_t u = 0; u < n; u++)
    for (int64_t e = off[u]; e < off[u + 1]; e++) {
      int64_t p = adj[e] / a.rows_per_part;
      nnz[p]++;
      nzc[p] += last[p] != u;
      last[p] = u;
    }
  std::vector<int64_t> pos_e(a.parts), pos_c(a.parts);
  a.part_col.assign(a.parts + 1, 0);
  for (int64_t p = 0, e = 0; p < a.parts; p++) {
    pos_e[p] = e;
    e += nnz[p];
    pos_c[p] = a.part_col[p];
    a.part_col[p + 1] = a.part_col[p] + nzc[p];
  }
  int64_t cols = a.part_col[a.parts];
  a.col_ids = static_cast<int32_t *>(matrix_alloc(cols * sizeof(int32_t)));
  tw_ex_object(&o, "matrix_col_ids", a.col_ids, cols * sizeof(int32_t));
  a.col_ptr =
      static_cast<int64_t *>(matrix_alloc((cols + 1) * sizeof(int64_t)));
  tw_ex_object(&o, "matrix_col_ptr", a.col_ptr, (cols + 1) * sizeof(int64_t));
  a.row_ids = static_cast<int32_t *>(matrix_alloc(el.m * sizeof(int32_t)));
  tw_ex_object(&o, "matrix_row_ids", a.row_ids, el.m * sizeof(int32_t));
  std::fill(last.begin(), last.end(), -1);
  for (int64_t u = 0; u < n; u++)
    for (int64_t e = off[u]; e < off[u + 1]; e++) {
      int64_t p = adj[e] / a.rows_per_part;
      if (last[p] != u) {
        a.col_ids[pos_c[p]] = static_cast<int32_t>(u);
        a.col_ptr[pos_c[p]++] = pos_e[p];
        last[p] = u;
      }
      a.row_ids[pos_e[p]++] = adj[e];
    }
  a.col_ptr[cols] = el.m;
  return a;
}

// y = A^T x over the row partitions.
void spmv(const Dcsc &a, const SparseVec &x, SparseVec &y) {
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t p = 0; p < a.parts; p++)
    for (int64_t k = a.part_col[p]; k < a.part_col[p + 1]; k++) {
      int32_t u = a.col_ids[k];
      if (!x.has(u))
        continue;
      uint64_t msg = x.values[u];
      for (int64_t e = a.col_ptr[k]; e < a.col_ptr[k + 1]; e++) {
        int32_t r = a.row_ids[e];
        y.set(r, (y.has(r) ? y.values[r] : 0) + msg);
      }
    }
}

} // namespace

int main(int argc, char **argv) {
  std::set_new_handler([] { tw_ex_die("out of memory"); });
  tw_ex_options o;
  tw_ex_parse(argc, argv, TW_EX_OPT_ITERS,
              "PageRank as GraphMat's SpMV: DCSC matrix, vertex data and "
              "sparse message vectors (fixed-point ranks).",
              10, &o);
  tw_ex_edgelist el;
  tw_ex_load(&o, &el);
  int64_t n = el.n;
  Dcsc a = build_dcsc(o, el);
  VertexData *vd = new VertexData[n];
  tw_ex_object(&o, "vertex_data", vd, n * sizeof(VertexData));
  for (int64_t v = 0; v < n; v++)
    vd[v].out_degree = 0;
  for (int64_t e = 0; e < el.m; e++)
    vd[el.edges[e].src].out_degree++;
  tw_ex_free_edges(&el);
  SparseVec x = make_vec(o, n, "msg_bits", "msg_values");
  SparseVec y = make_vec(o, n, "result_bits", "result_values");
  tw_ex_note(&o, "DCSC: %lld row partitions, %lld non-empty columns",
             static_cast<long long>(a.parts),
             static_cast<long long>(a.part_col[a.parts]));

  double t0 = tw_ex_kernel_start();
  const uint64_t init = tw_ex_pr_init(n), base = tw_ex_pr_base(n);
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < n; v++)
    vd[v].rank = init;
  for (int it = 0; it < o.iters; it++) {
    std::memset(x.bits, 0, x.words * sizeof(uint64_t));
    std::memset(y.bits, 0, y.words * sizeof(uint64_t));
    // Send: bits are shared between neighbouring vertices, so one thread
    // owns each 64-vertex word.
#pragma omp parallel for schedule(static)
    for (int64_t w = 0; w < static_cast<int64_t>(x.words); w++)
      for (int64_t v = w * 64; v < n && v < (w + 1) * 64; v++)
        if (vd[v].out_degree)
          x.set(v, vd[v].rank / static_cast<uint64_t>(vd[v].out_degree));
    spmv(a, x, y);
    // Apply.
#pragma omp parallel for schedule(static)
    for (int64_t v = 0; v < n; v++)
      vd[v].rank = tw_ex_pr_apply(base, y.has(v) ? y.values[v] : 0);
  }
  tw_ex_kernel_done(&o, tw_ex_now() - t0);

  uint64_t h = TW_EX_HASH_INIT;
  for (int64_t v = 0; v < n; v++) {
    h = tw_ex_hash_add(h, vd[v].rank);
    if (o.print)
      tw_ex_pr_print(v, vd[v].rank);
  }
  tw_ex_print_checksum(h);
  std::free(y.values);
  std::free(y.bits);
  std::free(x.values);
  std::free(x.bits);
  delete[] vd;
  std::free(a.row_ids);
  std::free(a.col_ptr);
  std::free(a.col_ids);
  return 0;
}
