/* SPDX-License-Identifier: MIT */
/* Command line and output helpers of the example graph kernels: one parser
 * for all six, so every example takes the same options and fails the same
 * way (one line naming the option and value, non-zero exit). */
#define _GNU_SOURCE
#include "graph.h"
#include "tierwise.h"

#include <errno.h>
#include <inttypes.h>
#include <omp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *prog = "example";
/* -M's file, opened by tw_ex_parse so a bad path fails before any work. */
static FILE *maps_out;

void tw_ex_die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: error: ", prog);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

static void usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
static void usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: error: ", prog);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, " (see %s -h)\n", prog);
  va_end(ap);
  exit(2);
}

static void usage(unsigned flags, const char *what, int default_iters) {
  printf("usage: %s (-g SCALE [-G KIND] [-d DEGREE] [-s SEED] | -f FILE)",
         prog);
  if (flags & TW_EX_OPT_ITERS)
    printf(" [-n ITER]");
  if (flags & TW_EX_OPT_ROOT)
    printf(" [-r ROOT]");
  printf(" [-v] [-p] [-M FILE]\n%s\n\n", what);
  printf(
      "  -g SCALE   generate a graph with 2^SCALE vertices (0..30)\n"
      "  -G KIND    generator: kronecker (Graph500 RMAT A=0.57 B=0.19 "
      "C=0.19,\n"
      "             default), consecutive or scattered (seed 000: vertex i's\n"
      "             neighbours are i+1..i+D, or i+a..i+D*a with a ~ "
      "2^SCALE/D)\n"
      "  -d DEGREE  edges per vertex of the generators (default 16)\n"
      "  -s SEED    generator seed (default 1)\n"
      "  -f FILE    read the graph from FILE: lines 'src dst [weight]',\n"
      "             '#' starts a comment; vertex ids 0..max id\n");
  if (flags & TW_EX_OPT_ITERS)
    printf("  -n ITER    iterations (default %d)\n", default_iters);
  if (flags & TW_EX_OPT_ROOT)
    printf("  -r ROOT    source vertex (default: first vertex with an "
           "out-edge)\n");
  printf("  -v         verbose: 'object NAME 0xADDR BYTES' per big structure "
         "on stderr\n"
         "  -p         print the per-vertex result on stdout\n"
         "  -M FILE    after the kernel, copy /proc/self/maps to FILE\n"
         "  -h         this help\n"
         "Prints 'checksum: <16 hex digits>' on stdout (depends only on the\n"
         "result) and 'time: <seconds> s' (kernel time) on stderr.\n");
}

static long long parse_int(char opt, const char *arg, long long lo,
                           long long hi) {
  char *end;
  errno = 0;
  long long v = strtoll(arg, &end, 10);
  if (errno || end == arg || *end || v < lo || v > hi)
    usage_error("option -%c: '%s' is not an integer in %lld..%lld", opt, arg,
                lo, hi);
  return v;
}

void tw_ex_parse(int argc, char **argv, unsigned flags, const char *what,
                 int default_iters, tw_ex_options *o) {
  const char *slash = strrchr(argv[0], '/');
  prog = slash ? slash + 1 : argv[0];
  *o = (tw_ex_options){.scale = -1,
                       .gen = TW_EX_KRONECKER,
                       .degree = 16,
                       .seed = 1,
                       .iters = default_iters,
                       .root = -1};
  int gen_given = 0, c;
  opterr = 0;
  while ((c = getopt(argc, argv, ":g:f:G:d:s:n:r:vpM:h")) != -1) {
    switch (c) {
    case 'g':
      o->scale = (int)parse_int('g', optarg, 0, 30);
      break;
    case 'f':
      o->file = optarg;
      break;
    case 'G':
      gen_given = 1;
      if (!strcmp(optarg, "kronecker"))
        o->gen = TW_EX_KRONECKER;
      else if (!strcmp(optarg, "consecutive"))
        o->gen = TW_EX_CONSECUTIVE;
      else if (!strcmp(optarg, "scattered"))
        o->gen = TW_EX_SCATTERED;
      else
        usage_error("option -G: unknown generator '%s' (use kronecker, "
                    "consecutive or scattered)",
                    optarg);
      break;
    case 'd':
      o->degree = (int)parse_int('d', optarg, 1, 1 << 20);
      break;
    case 's':
      o->seed = (uint64_t)parse_int('s', optarg, 0, INT64_MAX);
      break;
    case 'n':
      if (!(flags & TW_EX_OPT_ITERS))
        usage_error("option -n does not apply to %s", prog);
      o->iters = (int)parse_int('n', optarg, 0, 1000000);
      break;
    case 'r':
      if (!(flags & TW_EX_OPT_ROOT))
        usage_error("option -r does not apply to %s", prog);
      o->root = parse_int('r', optarg, 0, INT32_MAX);
      break;
    case 'v':
      o->verbose = 1;
      break;
    case 'p':
      o->print = 1;
      break;
    case 'M':
      o->maps = optarg;
      break;
    case 'h':
      usage(flags, what, default_iters);
      exit(0);
    case ':':
      usage_error("option -%c needs a value", optopt);
    default:
      usage_error("unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc)
    usage_error("unexpected argument '%s'", argv[optind]);
  if (o->file && (o->scale >= 0 || gen_given))
    usage_error("give either -f FILE or -g SCALE [-G KIND], not both");
  if (!o->file && o->scale < 0)
    usage_error("no graph: give -g SCALE or -f FILE");
  if (o->maps && !(maps_out = fopen(o->maps, "w")))
    tw_ex_die("cannot write maps file '%s': %s", o->maps, strerror(errno));
  if (o->scale >= 0 && (int64_t)o->degree << o->scale > INT32_MAX * 8LL)
    usage_error("-g %d with -d %d makes more than 2^34 edges", o->scale,
                o->degree);
}

void tw_ex_object(const tw_ex_options *o, const char *name, const void *p,
                  size_t bytes) {
  if (!p)
    tw_ex_die("out of memory allocating %s (%zu bytes)", name, bytes);
  if (o->verbose)
    fprintf(stderr, "object %s 0x%" PRIxPTR " %zu\n", name, (uintptr_t)p,
            bytes);
}

void tw_ex_freed(const tw_ex_options *o, const char *name) {
  if (o->verbose)
    fprintf(stderr, "freed %s\n", name);
}

void tw_ex_note(const tw_ex_options *o, const char *fmt, ...) {
  if (!o->verbose)
    return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: ", prog);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

double tw_ex_now(void) { return omp_get_wtime(); }

/* TW_EX_STOP_AT_KERNEL set: the process stops itself (SIGSTOP) when the
 * kernel starts and when it is done, so that a parent that traces it
 * (test/bench/numa_sample) sees where its pages are at those instants. */
static void stop_at_kernel(void) {
  if (getenv("TW_EX_STOP_AT_KERNEL"))
    raise(SIGSTOP);
}

double tw_ex_kernel_start(void) {
  stop_at_kernel();
  TIERWISE_ROI_BEGIN();
  return tw_ex_now();
}

void tw_ex_kernel_done(const tw_ex_options *o, double seconds) {
  TIERWISE_ROI_END();
  stop_at_kernel();
  fprintf(stderr, "time: %.6f s\n", seconds);
  if (!maps_out)
    return;
  FILE *in = fopen("/proc/self/maps", "r");
  if (!in)
    tw_ex_die("cannot read /proc/self/maps: %s", strerror(errno));
  char buf[4096];
  size_t got;
  int ok = 1;
  while ((got = fread(buf, 1, sizeof buf, in)) > 0)
    ok = ok && fwrite(buf, 1, got, maps_out) == got;
  fclose(in);
  if (fclose(maps_out) || !ok)
    tw_ex_die("cannot write maps file '%s': %s", o->maps, strerror(errno));
  maps_out = NULL;
}

void tw_ex_print_checksum(uint64_t sum) {
  printf("checksum: %016" PRIx64 "\n", sum);
}

void tw_ex_pr_print(int64_t v, uint64_t rank) {
  printf("%" PRId64 " %.9f\n", v, (double)rank / (double)TW_EX_PR_ONE);
}
