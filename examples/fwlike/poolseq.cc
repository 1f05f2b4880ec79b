// SPDX-License-Identifier: MIT
// fwlike-poolseq: PageRank-style sweeps over a CSR whose arrays all come
// from one pool (fwlike/alloc.h; issue 35 item 2): the cold, read-only edge
// targets and the hot, rewritten ranks share the pool's allocate, reached
// through std::vector. Fixed-point integer ranks as examples/common's
// tw_ex_pr_*; prints `checksum:` of the ranks after a fixed number of sweeps.
#include <cstdint>
#include <cstdio>

#include "common/graph.h"
#include "fwlike/alloc.h"

using namespace fwlike;

int main(int argc, char **argv) {
  tw_ex_options o;
  tw_ex_parse(argc, argv, 0, "PageRank sweeps on pooled sequences (fwlike).",
              0, &o);
  tw_ex_edgelist el;
  tw_ex_load(&o, &el);
  const int64_t n = el.n, m = el.m;
  sequence<int64_t> offsets(n + 1, 0);                    // by destination
  sequence<int32_t> sources(m);                           // cold: read only
  for (int64_t e = 0; e < m; e++)
    offsets[el.edges[e].dst + 1]++;
  for (int64_t v = 0; v < n; v++)
    offsets[v + 1] += offsets[v];
  sequence<int64_t> cursor(offsets.begin(), offsets.end() - 1);
  for (int64_t e = 0; e < m; e++)
    sources[cursor[el.edges[e].dst]++] = el.edges[e].src;
  sequence<int32_t> degree(n, 0);
  for (int64_t e = 0; e < m; e++)
    degree[el.edges[e].src]++;
  tw_ex_free_edges(&el);
  sequence<uint64_t> rank(n, tw_ex_pr_init(n));           // hot: every sweep
  sequence<uint64_t> next(n, 0);
  const uint64_t base = tw_ex_pr_base(n);
  double t0 = tw_ex_kernel_start();
  for (int sweep = 0; sweep < 10; sweep++) {
    for (int64_t v = 0; v < n; v++) {
      uint64_t sum = 0;
      for (int64_t k = offsets[v]; k < offsets[v + 1]; k++) {
        int32_t u = sources[k];
        sum += rank[u] / (uint64_t)degree[u];
      }
      next[v] = tw_ex_pr_apply(base, sum);
    }
    rank.swap(next);
  }
  tw_ex_kernel_done(&o, tw_ex_now() - t0);
  tw_ex_object(&o, "sources", sources.data(), m * sizeof(int32_t));
  tw_ex_object(&o, "rank", rank.data(), n * sizeof(uint64_t));
  tw_ex_print_checksum(tw_ex_checksum_u64(rank.data(), n));
  return 0;
}
