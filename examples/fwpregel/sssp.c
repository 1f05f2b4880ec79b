// SPDX-License-Identifier: MIT
// fwpregel-sssp: single-source shortest paths as a Pregel vertex program
// (iPregel's SSSP): a vertex whose combined message improves its distance
// takes it and sends distance + weight along its out-edges. Distances are
// whole numbers held in doubles (exact), so the result does not depend on
// the threads; the checksum is build/examples/sssp's on the same graph and
// root (-1 for unreachable vertices).
#include <math.h>
#include <stdio.h>

#include "pregel.h"

static void sssp_compute(ip_graph *g, int64_t v, const double *msg,
                         void *arg) {
  int64_t root = *(const int64_t *)arg;
  double d = g->superstep == 0 ? (v == root ? 0 : INFINITY) : *msg;
  if (!(d < g->value[v]))
    return;
  g->value[v] = d;
  for (int64_t k = g->offsets[v]; k < g->offsets[v + 1]; k++)
    ip_send_min(g, g->targets[k], d + g->weights[k]);
}

int main(int argc, char **argv) {
  tw_ex_options o;
  tw_ex_parse(argc, argv, TW_EX_OPT_ROOT,
              "Shortest paths as a Pregel vertex program (fwpregel).", 0, &o);
  tw_ex_edgelist el;
  tw_ex_load(&o, &el);
  ip_graph g;
  ip_init(&g, &el);
  tw_ex_free_edges(&el);
  tw_ex_object(&o, "offsets", g.offsets, (g.n + 1) * sizeof(int64_t));
  tw_ex_object(&o, "targets", g.targets, g.m * sizeof(int32_t));
  tw_ex_object(&o, "weights", g.weights, g.m * sizeof(int32_t));
  tw_ex_object(&o, "value", g.value, g.n * sizeof(double));
  tw_ex_object(&o, "inbox", g.inbox, g.n * sizeof(double));
  tw_ex_object(&o, "outbox", g.outbox, g.n * sizeof(double));
  int64_t root = tw_ex_root(&o, g.offsets, g.n);

  double t0 = tw_ex_kernel_start();
  int steps = ip_run(&g, sssp_compute, &root);
  tw_ex_kernel_done(&o, tw_ex_now() - t0);
  tw_ex_note(&o, "%d supersteps", steps);

  uint64_t h = TW_EX_HASH_INIT;
  for (int64_t v = 0; v < g.n; v++) {
    int64_t d = isinf(g.value[v]) ? -1 : (int64_t)g.value[v];
    h = tw_ex_hash_add(h, (uint64_t)d);
    if (o.print)
      printf("%lld %lld\n", (long long)v, (long long)d);
  }
  tw_ex_print_checksum(h);
  ip_free(&g);
  return 0;
}
