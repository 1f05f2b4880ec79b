// SPDX-License-Identifier: MIT
// fwlike-builder: weighted two-hop sums on a CSR from fwlike/builder.h
// (issue 35 item 1: a builder that allocates a headed array itself and
// has a helper allocate the others). Per vertex u: the sum over its edges
// (u, w) of weight * out-degree(w), in integers; a verifier repeats it on
// the subgraph of the first 64 vertices, built by the same builder on a
// path nobody places. Prints `checksum:` of the sums.
#include <cstdint>
#include <cstdio>

#include "fwlike/builder.h"

using namespace fwlike;

// The sums of g into out; exact (weights are small integers).
static void two_hop(const WGraph &g, uint64_t *out) {
  for (int64_t u = 0; u < g.n; u++) {
    uint64_t s = 0;
    for (int64_t k = g.offsets[u]; k < g.offsets[u + 1]; k++) {
      int32_t w = g.targets[k];
      s += (uint64_t)g.weights[k] * (uint64_t)(g.offsets[w + 1] - g.offsets[w]);
    }
    out[u] = s;
  }
}

// The subgraph's sums from scratch, against the big graph's: a sum of the
// subgraph is at most the big graph's.
static bool verify(const tw_ex_edgelist &el, const uint64_t *sums) {
  WGraph small = build_weighted(el, el.n < 64 ? el.n : 64);
  uint64_t part[64];
  two_hop(small, part);
  bool ok = true;
  for (int64_t v = 0; v < small.n; v++)
    ok = ok && part[v] <= sums[v];
  free_graph(small);
  return ok;
}

int main(int argc, char **argv) {
  tw_ex_options o;
  tw_ex_parse(argc, argv, 0,
              "Weighted two-hop sums per vertex (fwlike builder).", 0, &o);
  tw_ex_edgelist el;
  tw_ex_load(&o, &el);
  WGraph g = build_weighted(el, el.n);
  uint64_t *sums = alloc_array<uint64_t>((std::size_t)g.n);
  double t0 = tw_ex_kernel_start();
  two_hop(g, sums);
  tw_ex_kernel_done(&o, tw_ex_now() - t0);
  if (!verify(el, sums))
    tw_ex_die("subgraph sums exceed the graph's");
  tw_ex_free_edges(&el);
  tw_ex_object(&o, "weights", g.weights, g.m * sizeof(double));
  tw_ex_print_checksum(tw_ex_checksum_u64(sums, g.n));
  std::free(sums);
  free_graph(g);
  return 0;
}
