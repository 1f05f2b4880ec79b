/* SPDX-License-Identifier: MIT */
/* bfs: direction-optimizing breadth-first search (Beamer et al., as GAP's
 * bfs.cc): top-down steps from a vertex queue while the frontier is small,
 * bottom-up steps over in-edges with frontier bitmaps while it is large.
 * The result is the depth of every vertex (-1: unreachable); depths do not
 * depend on the thread count, parents would, so the checksum uses depths.
 * Allocations: both CSRs in anonymous mmap, depths and the queue with malloc,
 * the frontier bitmaps with calloc. */
#include "common/graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { ALPHA = 15, BETA = 18, LOCAL_BUF = 1024 };

typedef struct graph {
  int64_t n, *out_off, *in_off;
  int32_t *out_adj, *in_adj;
} graph;

static void *map_anon(size_t bytes) {
  void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

static void flush(int32_t *queue, int64_t *tail, int32_t *buf, int *len) {
  int64_t at = __atomic_fetch_add(tail, *len, __ATOMIC_RELAXED);
  memcpy(queue + at, buf, (size_t)*len * sizeof(int32_t));
  *len = 0;
}

/* Expands queue[head..tail) into new entries appended at *tail; returns the
 * out-degree sum of the new frontier (the "scout count"). */
static int64_t top_down(const graph *g, int32_t *depth, int32_t *queue,
                        int64_t head, int64_t *tail, int32_t level) {
  int64_t end = *tail, scout = 0;
  /* Small frontiers (long paths in the seed-000 graphs) run on one thread:
   * thousands of levels would otherwise cost a fork/join each. */
#pragma omp parallel reduction(+ : scout) if (end - head > 256)
  {
    int32_t buf[LOCAL_BUF];
    int len = 0;
#pragma omp for schedule(dynamic, 64) nowait
    for (int64_t i = head; i < end; i++) {
      int32_t u = queue[i];
      for (int64_t e = g->out_off[u]; e < g->out_off[u + 1]; e++) {
        int32_t v = g->out_adj[e], unseen = -1;
        if (__atomic_load_n(&depth[v], __ATOMIC_RELAXED) == -1 &&
            __atomic_compare_exchange_n(&depth[v], &unseen, level + 1, 0,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
          buf[len++] = v;
          scout += g->out_off[v + 1] - g->out_off[v];
          if (len == LOCAL_BUF)
            flush(queue, tail, buf, &len);
        }
      }
    }
    flush(queue, tail, buf, &len);
  }
  return scout;
}

static int bit(const uint64_t *bm, int64_t i) {
  return (bm[i >> 6] >> (i & 63)) & 1;
}

/* One bottom-up step: every unvisited vertex looks for a parent in `front`.
 * Returns how many vertices it woke. */
static int64_t bottom_up(const graph *g, int32_t *depth, const uint64_t *front,
                         uint64_t *next, int32_t level) {
  int64_t awake = 0;
#pragma omp parallel for schedule(dynamic, 1024) reduction(+ : awake)
  for (int64_t v = 0; v < g->n; v++) {
    if (depth[v] != -1)
      continue;
    for (int64_t e = g->in_off[v]; e < g->in_off[v + 1]; e++)
      if (bit(front, g->in_adj[e])) {
        depth[v] = level + 1;
        __atomic_fetch_or(&next[v >> 6], 1ULL << (v & 63), __ATOMIC_RELAXED);
        awake++;
        break;
      }
  }
  return awake;
}

static void queue_to_bitmap(const int32_t *queue, int64_t head, int64_t tail,
                            uint64_t *bm, size_t words) {
  memset(bm, 0, words * sizeof(uint64_t));
#pragma omp parallel for schedule(static)
  for (int64_t i = head; i < tail; i++)
    __atomic_fetch_or(&bm[queue[i] >> 6], 1ULL << (queue[i] & 63),
                      __ATOMIC_RELAXED);
}

static int64_t bitmap_to_queue(const uint64_t *bm, int64_t n, int32_t *queue) {
  int64_t tail = 0;
#pragma omp parallel
  {
    int32_t buf[LOCAL_BUF];
    int len = 0;
#pragma omp for schedule(static) nowait
    for (int64_t v = 0; v < n; v++)
      if (bit(bm, v)) {
        buf[len++] = (int32_t)v;
        if (len == LOCAL_BUF)
          flush(queue, &tail, buf, &len);
      }
    flush(queue, &tail, buf, &len);
  }
  return tail;
}

int main(int argc, char **argv) {
  tw_ex_options o;
  tw_ex_parse(argc, argv, TW_EX_OPT_ROOT,
              "Direction-optimizing BFS (top-down + bottom-up); the result "
              "is each vertex's depth.",
              0, &o);
  tw_ex_edgelist el;
  tw_ex_load(&o, &el);
  graph g = {.n = el.n};
  size_t off_bytes = (size_t)(g.n + 1) * sizeof(int64_t);
  size_t adj_bytes = (size_t)el.m * sizeof(int32_t);
  g.out_off = map_anon(off_bytes);
  tw_ex_object(&o, "out_offsets", g.out_off, off_bytes);
  tw_ex_csr_offsets(&el, 0, g.out_off);
  g.out_adj = map_anon(adj_bytes);
  tw_ex_object(&o, "out_adj", g.out_adj, adj_bytes);
  tw_ex_csr_fill(&el, 0, g.out_off, g.out_adj, NULL);
  g.in_off = map_anon(off_bytes);
  tw_ex_object(&o, "in_offsets", g.in_off, off_bytes);
  tw_ex_csr_offsets(&el, 1, g.in_off);
  g.in_adj = map_anon(adj_bytes);
  tw_ex_object(&o, "in_adj", g.in_adj, adj_bytes);
  tw_ex_csr_fill(&el, 1, g.in_off, g.in_adj, NULL);
  int64_t m = el.m, n = g.n;
  tw_ex_free_edges(&el);

  size_t vec_bytes = (size_t)n * sizeof(int32_t);
  int32_t *depth = malloc(vec_bytes);
  tw_ex_object(&o, "depth", depth, vec_bytes);
  int32_t *queue = malloc(vec_bytes);
  tw_ex_object(&o, "queue", queue, vec_bytes);
  size_t words = (size_t)(n + 63) / 64;
  uint64_t *front = calloc(words, sizeof(uint64_t));
  tw_ex_object(&o, "front_bitmap", front, words * sizeof(uint64_t));
  uint64_t *next = calloc(words, sizeof(uint64_t));
  tw_ex_object(&o, "next_bitmap", next, words * sizeof(uint64_t));

  int64_t root = tw_ex_root(&o, g.out_off, n);
  double t0 = tw_ex_kernel_start();
  for (int64_t v = 0; v < n; v++)
    depth[v] = -1;
  depth[root] = 0;
  queue[0] = (int32_t)root;
  int64_t head = 0, tail = 1, edges_to_check = m;
  int64_t scout = g.out_off[root + 1] - g.out_off[root];
  int32_t level = 0;
  while (head < tail) {
    if (scout > edges_to_check / ALPHA) {
      int64_t awake = tail - head, old_awake;
      queue_to_bitmap(queue, head, tail, front, words);
      do {
        old_awake = awake;
        awake = bottom_up(&g, depth, front, next, level++);
        uint64_t *t = front;
        front = next;
        next = t;
        memset(next, 0, words * sizeof(uint64_t));
        tw_ex_note(&o, "level %d bottom-up: %lld awake", level,
                   (long long)awake);
      } while (awake >= old_awake || awake > n / BETA);
      head = 0;
      tail = bitmap_to_queue(front, n, queue);
      scout = 1;
    } else {
      edges_to_check -= scout;
      int64_t end = tail;
      scout = top_down(&g, depth, queue, head, &tail, level++);
      head = end;
      tw_ex_note(&o, "level %d top-down: %lld awake", level,
                 (long long)(tail - head));
    }
  }
  tw_ex_kernel_done(&o, tw_ex_now() - t0);

  int64_t reached = 0;
  for (int64_t v = 0; v < n; v++)
    reached += depth[v] >= 0;
  tw_ex_note(&o, "root %lld: %lld vertices reached, %d levels", (long long)root,
             (long long)reached, level);
  if (o.print)
    for (int64_t v = 0; v < n; v++)
      printf("%lld %d\n", (long long)v, depth[v]);
  tw_ex_print_checksum(tw_ex_checksum_i32(depth, n));
  free(next);
  free(front);
  free(queue);
  free(depth);
  munmap(g.in_adj, adj_bytes ? adj_bytes : 1);
  munmap(g.in_off, off_bytes);
  munmap(g.out_adj, adj_bytes ? adj_bytes : 1);
  munmap(g.out_off, off_bytes);
  return 0;
}
