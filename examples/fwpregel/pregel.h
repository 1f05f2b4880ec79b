/* SPDX-License-Identifier: MIT */
/* fwpregel: a small vertex-centric (Pregel) framework in C, shaped like
 * iPregel: per-vertex arrays, two message buffers (this superstep's and the
 * next one's) combined on arrival, and OpenMP supersteps. Messages are
 * combined with GCC-style C11 atomics on plain double and int lvalues
 * (pregel.c), which GCC accepts and Clang rejects. See README.md. */
#pragma once

#include <stdint.h>

#include "common/graph.h"

typedef struct ip_graph {
  int64_t n, m;
  int64_t *offsets;  /* out-CSR */
  int32_t *targets;  /* out-neighbours */
  int32_t *weights;  /* edge weights */
  double *value;     /* the vertex values */
  double *inbox;     /* combined message for this superstep */
  double *outbox;    /* combined message for the next superstep */
  int *has_msg;      /* a message arrived in inbox */
  int *next_has_msg; /* a message arrived in outbox */
  int superstep;
  int messages; /* sent in the current superstep (an atomic counter) */
} ip_graph;

/* The user's vertex program: called once per vertex at superstep 0 and then
 * for each vertex with a message (msg: the combined message). */
typedef void (*ip_compute_fn)(ip_graph *g, int64_t v, const double *msg,
                              void *arg);

/* Builds g (out-CSR with weights, vertex values and message buffers) from
 * the edge list. */
void ip_init(ip_graph *g, const tw_ex_edgelist *el);
/* Runs supersteps until no message is sent; returns their number. */
int ip_run(ip_graph *g, ip_compute_fn compute, void *arg);
/* Sends msg to vertex dst; messages to one vertex are combined by min. */
void ip_send_min(ip_graph *g, int32_t dst, double msg);
void ip_free(ip_graph *g);
