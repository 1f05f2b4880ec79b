/* SPDX-License-Identifier: MIT */
/* Shared code of the example graph kernels: command line, graph generators
 * (Graph500 Kronecker, seed-000 consecutive/scattered), edge-list reader, CSR
 * builder, result checksum and the `-v` object lines tests rely on.
 *
 * The big structures of each kernel are allocated in the kernel's own source
 * (each with its own allocator, see examples/README.md), so every allocation
 * site has a file:line of its own; this code only fills them. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One directed edge; w is the weight (1 when a file gives none). */
typedef struct tw_ex_edge {
  int32_t src, dst, w;
} tw_ex_edge;

typedef struct tw_ex_edgelist {
  int64_t n;         /* vertices: ids are 0..n-1 */
  int64_t m;         /* edges */
  tw_ex_edge *edges; /* m edges, malloc'ed by tw_ex_load */
} tw_ex_edgelist;

enum tw_ex_gen { TW_EX_KRONECKER, TW_EX_CONSECUTIVE, TW_EX_SCATTERED };

/* Options that apply to the example (flags for tw_ex_parse). */
enum { TW_EX_OPT_ITERS = 1, TW_EX_OPT_ROOT = 2 };

typedef struct tw_ex_options {
  int scale;        /* -g: 2^scale vertices (-1: not given) */
  const char *file; /* -f: edge-list file */
  int gen;          /* -G: enum tw_ex_gen */
  int degree;       /* -d: edges per vertex of the generators (16) */
  uint64_t seed;    /* -s: generator seed */
  int iters;        /* -n */
  int64_t root;     /* -r (-1: first vertex with an out-edge) */
  int verbose;      /* -v */
  int print;        /* -p: print the per-vertex result */
  const char *maps; /* -M: copy /proc/self/maps here after the kernel */
} tw_ex_options;

/* Parses argv; prints usage for -h (exit 0) and one error line for anything
 * wrong (exit 2). `what` is a one-line description of the kernel. */
void tw_ex_parse(int argc, char **argv, unsigned flags, const char *what,
                 int default_iters, tw_ex_options *o);

/* Prints "<prog>: error: <message>" on stderr and exits 1. */
void tw_ex_die(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

/* Generates or reads the graph chosen by the options (exits on error). */
void tw_ex_load(const tw_ex_options *o, tw_ex_edgelist *g);
void tw_ex_free_edges(tw_ex_edgelist *g);

/* CSR of g (by source, or by destination when `transpose`): fills
 * offsets[0..n] (exclusive prefix sum of degrees). */
void tw_ex_csr_offsets(const tw_ex_edgelist *g, int transpose,
                       int64_t *offsets);
/* Fills adj (and wt if not NULL) in edge-list order within each row; offsets
 * must come from tw_ex_csr_offsets (used as cursors, restored on return). */
void tw_ex_csr_fill(const tw_ex_edgelist *g, int transpose, int64_t *offsets,
                    int32_t *adj, int32_t *wt);

/* The root for bfs/sssp: -r, or the first vertex with an out-edge. */
int64_t tw_ex_root(const tw_ex_options *o, const int64_t *out_offsets,
                   int64_t n);

/* FNV-1a over the values as 64-bit little-endian words, in vertex order. */
#define TW_EX_HASH_INIT 0xcbf29ce484222325ULL
static inline uint64_t tw_ex_hash_add(uint64_t h, uint64_t value) {
  for (int i = 0; i < 8; i++) {
    h ^= (value >> (8 * i)) & 0xff;
    h *= 0x100000001b3ULL;
  }
  return h;
}
uint64_t tw_ex_checksum_i32(const int32_t *v, int64_t n);
uint64_t tw_ex_checksum_u64(const uint64_t *v, int64_t n);
/* Prints "checksum: <16 hex digits>" on stdout. */
void tw_ex_print_checksum(uint64_t sum);

/* With -v: "object <name> 0x<address> <bytes>" on stderr. Exits with an
 * error if p is NULL (allocation failed). */
void tw_ex_object(const tw_ex_options *o, const char *name, const void *p,
                  size_t bytes);
/* With -v: "freed <name>" on stderr, for a named object freed before the
 * kernel (test/bench/numa_tiering.py prices only the others). */
void tw_ex_freed(const tw_ex_options *o, const char *name);
/* With -v: a free-form progress line on stderr. */
void tw_ex_note(const tw_ex_options *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

double tw_ex_now(void);
/* With TW_EX_STOP_AT_KERNEL in the environment, both stop the process
 * (SIGSTOP) once, at the kernel's start and when it is done, for a tracing
 * parent (test/bench/numa_sample) to sample where its pages are.
 * Called when the kernel starts: opens the region of interest
 * (TIERWISE_ROI_BEGIN of tierwise.h, for `tierwise profile --roi markers`,
 * a no-op outside the profiler) and returns tw_ex_now(). */
double tw_ex_kernel_start(void);
/* Called when the kernel is done, all big structures still live: closes the
 * region of interest, prints
 * "time: <seconds> s" on stderr (not in the checksum) and, with -M FILE,
 * copies /proc/self/maps to FILE so tests can see where objects landed. */
void tw_ex_kernel_done(const tw_ex_options *o, double seconds);

/* Fixed-point PageRank shared by the three PageRank kernels, so they agree
 * bit for bit: ranks are uint64 with TW_EX_PR_FRAC fractional bits; integer
 * sums are associative, so atomics and thread counts cannot change them. */
#define TW_EX_PR_FRAC 48
#define TW_EX_PR_ONE (1ULL << TW_EX_PR_FRAC)
#define TW_EX_PR_DAMP_PCT 85 /* damping 0.85 */
static inline uint64_t tw_ex_pr_init(int64_t n) {
  return TW_EX_PR_ONE / (uint64_t)n;
}
static inline uint64_t tw_ex_pr_base(int64_t n) {
  return ((100 - TW_EX_PR_DAMP_PCT) * TW_EX_PR_ONE) / (100 * (uint64_t)n);
}
/* New rank from the sum of incoming contributions. */
static inline uint64_t tw_ex_pr_apply(uint64_t base, uint64_t sum) {
  return base + sum * TW_EX_PR_DAMP_PCT / 100;
}
/* -p output of the PageRank kernels: "<vertex> <rank as decimal>". */
void tw_ex_pr_print(int64_t v, uint64_t rank);

#ifdef __cplusplus
}
#endif
