/* SPDX-License-Identifier: MIT */
/* Graph sources of the example kernels: the Graph500 Kronecker (RMAT)
 * generator, the consecutive/scattered generator of seed 000 (iPregel on
 * Optane, "Experimental environment"), and the edge-list file reader.
 * Generation is counter-based (edge e's random numbers depend only on the
 * seed and e), so the graph is the same for any thread count. */
#define _GNU_SOURCE
#include "graph.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Stream of edge e: independent of every other edge. */
static uint64_t edge_state(uint64_t seed, int64_t e) {
  uint64_t s = seed * 0x2545f4914f6cdd1dULL + (uint64_t)e;
  return splitmix64(&s);
}

/* Edge weights as GAP's generator: uniform in 1..255. */
static int32_t edge_weight(uint64_t seed, int64_t e) {
  uint64_t s = edge_state(seed ^ 0x5eedULL, e);
  return (int32_t)(splitmix64(&s) % 255) + 1;
}

static tw_ex_edge *alloc_edges(const tw_ex_options *o, int64_t m) {
  tw_ex_edge *e = malloc((size_t)m * sizeof(tw_ex_edge));
  tw_ex_object(o, "edges", e, (size_t)m * sizeof(tw_ex_edge));
  return e;
}

/* Graph500 Kronecker: each edge picks one quadrant per level with
 * probabilities A=0.57, B=0.19, C=0.19, D=0.05 (Graph500 spec, sec. 3), then
 * vertex ids are permuted so that degree does not follow the id. */
static void kronecker(const tw_ex_options *o, tw_ex_edgelist *g) {
  const uint64_t a = (uint64_t)(0.57 * 4294967296.0);
  const uint64_t ab = (uint64_t)(0.76 * 4294967296.0);
  const uint64_t abc = (uint64_t)(0.95 * 4294967296.0);
  int64_t n = g->n = (int64_t)1 << o->scale;
  int64_t m = g->m = n * o->degree;
  g->edges = alloc_edges(o, m);
  int32_t *perm = malloc((size_t)n * sizeof(int32_t));
  tw_ex_object(o, "permutation", perm, (size_t)n * sizeof(int32_t));
  uint64_t s = o->seed ^ 0x9e3779b97f4a7c15ULL;
  for (int64_t i = 0; i < n; i++)
    perm[i] = (int32_t)i;
  for (int64_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
    int64_t j = (int64_t)(splitmix64(&s) % (uint64_t)(i + 1));
    int32_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
#pragma omp parallel for schedule(static)
  for (int64_t e = 0; e < m; e++) {
    uint64_t st = edge_state(o->seed, e), r = 0;
    int64_t u = 0, v = 0;
    for (int level = 0; level < o->scale; level++) {
      if (!(level & 1))
        r = splitmix64(&st);
      uint64_t x = (level & 1) ? r >> 32 : r & 0xffffffffULL;
      int bu = x >= ab, bv = (x >= a && x < ab) || x >= abc;
      u = 2 * u + bu;
      v = 2 * v + bv;
    }
    g->edges[e] = (tw_ex_edge){perm[u], perm[v], edge_weight(o->seed, e)};
  }
  tw_ex_freed(o, "permutation");
  free(perm);
}

/* Seed 000's generator: vertex i's neighbours are i+1..i+D (consecutive) or
 * i+a, i+2a, .., i+D*a (scattered), modulo n. The paper uses a = 100000 for
 * billions of vertices; we take a ~ n/D (odd, so the D targets differ), which
 * spreads each neighbour list over the whole vertex range likewise. */
static void strided(const tw_ex_options *o, tw_ex_edgelist *g) {
  int64_t n = g->n = (int64_t)1 << o->scale;
  int64_t d = o->degree, m = g->m = n * d;
  int64_t gap = o->gen == TW_EX_SCATTERED ? ((n / d) | 1) : 1;
  g->edges = alloc_edges(o, m);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++)
    for (int64_t k = 1; k <= d; k++) {
      int64_t e = i * d + k - 1;
      g->edges[e] = (tw_ex_edge){(int32_t)i, (int32_t)((i + k * gap) % n),
                                 edge_weight(o->seed, e)};
    }
}

/* Parses one integer field; returns 0 if there is none. */
static int field(char **p, long long *out) {
  while (**p == ' ' || **p == '\t')
    (*p)++;
  if (!isdigit((unsigned char)**p) && **p != '-')
    return 0;
  char *end;
  errno = 0;
  *out = strtoll(*p, &end, 10);
  if (errno || end == *p ||
      !(isspace((unsigned char)*end) || !*end || *end == '#'))
    return 0;
  *p = end;
  return 1;
}

static void read_file(const tw_ex_options *o, tw_ex_edgelist *g) {
  const char *path = o->file;
  FILE *f = fopen(path, "r");
  if (!f)
    tw_ex_die("cannot open graph file '%s': %s", path, strerror(errno));
  char *line = NULL;
  size_t cap = 0, lineno = 0;
  int64_t m = 0, room = 1024, n = 0;
  tw_ex_edge *edges = malloc((size_t)room * sizeof(tw_ex_edge));
  if (!edges)
    tw_ex_die("out of memory reading '%s'", path);
  while (getline(&line, &cap, f) > 0) {
    lineno++;
    char *p = line;
    line[strcspn(line, "\r\n")] = 0;
    while (*p == ' ' || *p == '\t')
      p++;
    if (!*p || *p == '#')
      continue;
    long long src, dst, w = 1;
    int ok = field(&p, &src) && field(&p, &dst);
    if (ok && !field(&p, &w)) {
      while (*p == ' ' || *p == '\t')
        p++;
      ok = !*p || *p == '#';
    }
    while (*p == ' ' || *p == '\t')
      p++;
    ok = ok && (!*p || *p == '#');
    if (!ok || src < 0 || dst < 0 || src >= INT32_MAX || dst >= INT32_MAX ||
        w < 0 || w > INT32_MAX)
      tw_ex_die("%s:%zu: expected 'src dst [weight]' (ids 0..2147483646, "
                "weight 0..2147483647), got '%s'",
                path, lineno, line);
    if (m == room) {
      room *= 2;
      edges = realloc(edges, (size_t)room * sizeof(tw_ex_edge));
      if (!edges)
        tw_ex_die("out of memory reading '%s'", path);
    }
    edges[m++] = (tw_ex_edge){(int32_t)src, (int32_t)dst, (int32_t)w};
    if (src >= n)
      n = src + 1;
    if (dst >= n)
      n = dst + 1;
  }
  if (ferror(f))
    tw_ex_die("cannot read graph file '%s': %s", path, strerror(errno));
  free(line);
  fclose(f);
  if (m == 0)
    tw_ex_die("graph file '%s' has no edges", path);
  /* Kernels keep ~24-40 bytes per vertex id; refuse before the OOM killer
   * does when the ids are sparse beyond this machine's memory. */
  double need = 40.0 * (double)n,
         have = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
  if (need > have)
    tw_ex_die("graph file '%s' has vertex ids up to %lld: its per-vertex "
              "arrays need ~%.0f GiB, more than this machine's %.0f GiB; "
              "renumber the vertices densely",
              path, (long long)n - 1, need / (1 << 30), have / (1 << 30));
  g->n = n;
  g->m = m;
  g->edges = edges; /* where realloc left it */
  tw_ex_object(o, "edges", edges, (size_t)room * sizeof(tw_ex_edge));
}

void tw_ex_load(const tw_ex_options *o, tw_ex_edgelist *g) {
  double t = tw_ex_now();
  if (o->file)
    read_file(o, g);
  else if (o->gen == TW_EX_KRONECKER)
    kronecker(o, g);
  else
    strided(o, g);
  tw_ex_note(o, "graph: %lld vertices, %lld edges (%.3f s)", (long long)g->n,
             (long long)g->m, tw_ex_now() - t);
}

void tw_ex_free_edges(tw_ex_edgelist *g) {
  free(g->edges);
  g->edges = NULL;
}
