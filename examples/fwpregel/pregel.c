// SPDX-License-Identifier: MIT
// fwpregel's runtime: graph construction, the superstep loop and message
// combining. As in iPregel, the combiner and the counters are C11 atomics
// applied to plain (not _Atomic) double and int objects: GCC's
// <stdatomic.h> maps them to its generic __atomic builtins, Clang refuses
// them ("address argument to atomic operation must be a pointer to _Atomic
// type"). The vertex values and message buffers come from one allocation
// helper (ip_alloc), shared by five arrays.
#include "pregel.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static void *ip_alloc(size_t bytes) {
  void *p = malloc(bytes);
  if (!p)
    tw_ex_die("out of memory (%zu bytes)", bytes);
  return p;
}

void ip_init(ip_graph *g, const tw_ex_edgelist *el) {
  memset(g, 0, sizeof(*g));
  g->n = el->n;
  g->m = el->m;
  g->offsets = malloc((size_t)(g->n + 1) * sizeof(int64_t));
  if (!g->offsets)
    tw_ex_die("out of memory");
  tw_ex_csr_offsets(el, 0, g->offsets);
  g->targets = ip_alloc((size_t)g->m * sizeof(int32_t));
  g->weights = ip_alloc((size_t)g->m * sizeof(int32_t));
  tw_ex_csr_fill(el, 0, g->offsets, g->targets, g->weights);
  g->value = ip_alloc((size_t)g->n * sizeof(double));
  g->inbox = ip_alloc((size_t)g->n * sizeof(double));
  g->outbox = ip_alloc((size_t)g->n * sizeof(double));
  g->has_msg = calloc((size_t)g->n, sizeof(int));
  g->next_has_msg = calloc((size_t)g->n, sizeof(int));
  if (!g->has_msg || !g->next_has_msg)
    tw_ex_die("out of memory");
  for (int64_t v = 0; v < g->n; v++)
    g->value[v] = g->inbox[v] = g->outbox[v] = INFINITY;
}

void ip_send_min(ip_graph *g, int32_t dst, double msg) {
  double old = atomic_load(&g->outbox[dst]);
  while (msg < old &&
         !atomic_compare_exchange_weak(&g->outbox[dst], &old, msg))
    ;
  atomic_store(&g->next_has_msg[dst], 1);
  atomic_fetch_add(&g->messages, 1);
}

int ip_run(ip_graph *g, ip_compute_fn compute, void *arg) {
  for (g->superstep = 0;; g->superstep++) {
    g->messages = 0;
#pragma omp parallel for schedule(dynamic, 256)
    for (int64_t v = 0; v < g->n; v++)
      if (g->superstep == 0 || g->has_msg[v])
        compute(g, v, &g->inbox[v], arg);
    if (atomic_load(&g->messages) == 0)
      return g->superstep + 1;
    double *box = g->inbox;
    int *has = g->has_msg;
    g->inbox = g->outbox, g->has_msg = g->next_has_msg;
    g->outbox = box, g->next_has_msg = has;
#pragma omp parallel for schedule(static)
    for (int64_t v = 0; v < g->n; v++)
      g->outbox[v] = INFINITY, g->next_has_msg[v] = 0;
  }
}

void ip_free(ip_graph *g) {
  free(g->offsets), free(g->targets), free(g->weights), free(g->value);
  free(g->inbox), free(g->outbox), free(g->has_msg), free(g->next_has_msg);
}
