// SPDX-License-Identifier: MIT
// fwtmpl-cc: connected components by min-label propagation, a Ligra-style
// app. Its headers are reached through apps/hdr, a symlink to ../include
// (as Ligra's and GBBS's app directories reach theirs). The kernel is a
// template over the label type, run twice (Components<uint32_t> and
// Components<uint64_t>: a compact and a wide instantiation, each with its
// labels from the one newA use in the template body); a placement may place
// one and not the other. Every component ends labelled with its smallest
// vertex id whatever the order of updates, so the checksum (labels in vertex
// order) does not depend on the threads.
#include <cstdint>
#include <cstdio>

#include "common/graph.h"
#include "hdr/talloc.h"
#include "hdr/tgraph.h"

using namespace fwtmpl;

template <class L, class intE>
__attribute__((noinline)) L *Components(graph<intE> &G, int *rounds) {
  L *ids = newA(L, G.n);
  if (!ids)
    tw_ex_die("out of memory");
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < G.n; v++)
    ids[v] = (L)v;
  bool changed = true;
  for (*rounds = 0; changed; ++*rounds) {
    changed = false;
#pragma omp parallel for schedule(dynamic, 256) reduction(|| : changed)
    for (int64_t v = 0; v < G.n; v++) {
      L mine = __atomic_load_n(&ids[v], __ATOMIC_RELAXED);
      for (int64_t k = G.offsets[v]; k < G.offsets[v + 1]; k++)
        changed = writeMin(&ids[G.edges[k]], mine) || changed;
    }
  }
  return ids;
}

int main(int argc, char **argv) {
  tw_ex_options o;
  tw_ex_parse(argc, argv, 0,
              "Connected components, a Ligra-style template app (fwtmpl).",
              0, &o);
  tw_ex_edgelist el;
  tw_ex_load(&o, &el);
  graph<int32_t> G;
  buildSymmetric(G, el);
  tw_ex_free_edges(&el);
  tw_ex_object(&o, "offsets", G.offsets, (G.n + 1) * sizeof(int64_t));
  tw_ex_object(&o, "edges", G.edges, G.m * sizeof(int32_t));

  double t0 = tw_ex_kernel_start();
  int r32 = 0, r64 = 0;
  uint32_t *compact = Components<uint32_t>(G, &r32);
  uint64_t *wide = Components<uint64_t>(G, &r64);
  tw_ex_kernel_done(&o, tw_ex_now() - t0);
  tw_ex_object(&o, "compact", compact, G.n * sizeof(uint32_t));
  tw_ex_object(&o, "wide", wide, G.n * sizeof(uint64_t));
  tw_ex_note(&o, "rounds %d and %d", r32, r64);

  uint64_t h = TW_EX_HASH_INIT;
  int64_t comps = 0;
  for (int64_t v = 0; v < G.n; v++) {
    if (compact[v] != wide[v])
      tw_ex_die("vertex %lld: labels %u and %llu disagree", (long long)v,
                compact[v], (unsigned long long)wide[v]);
    comps += wide[v] == (uint64_t)v;
    h = tw_ex_hash_add(h, wide[v]);
    if (o.print)
      std::printf("%lld %llu\n", (long long)v, (unsigned long long)wide[v]);
  }
  tw_ex_note(&o, "%lld components", (long long)comps);
  tw_ex_print_checksum(h);
  free(compact);
  free(wide);
  return 0;
}
