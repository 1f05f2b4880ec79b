/* SPDX-License-Identifier: MIT */
/* Test program of `make check-numa` (test/numa): three big objects from
 * three allocation sites (make_a: malloc, make_b: calloc, make_c: malloc in
 * another function) plus many small blocks, touched and summed; prints
 * `checksum: <hex>` (depends only on the sizes and the pass counts, never on
 * where the data lies) and, for each big object, where its pages are:
 *   object NAME ADDR BYTES pages=P mp=N0:x,N1:y,none:z runs=0x12,1x300
 *     nm=N0:x,N1:y vma_bytes=B policy=bind:1,default
 * `mp` and `runs` come from move_pages(2) (the node of each page, runs in
 * address order), `nm` from /proc/self/numa_maps (the N<node>= page counts
 * of the VMAs overlapping the object, whose sizes add up to vma_bytes), and a
 * final `numa_maps total N0=x N1=y anon N0=x N1=y` line sums every VMA of
 * the process, then only its anonymous ones (no file pages: those may have
 * been in the page cache before the process started).
 *
 * Usage: numa_probe [-a MIB] [-b MIB] [-c MIB] [-n SMALL] [-p PASSES]
 *                   [-w] [-f] [-F] [-o FILE]
 *        numa_probe --hold MIB
 *   -a/-b/-c  size of each object in MiB (default 16 each; fractions allowed)
 *   -p        passes over object b (the hot one; a gets 1, c gets 2)
 *   -w        after allocating and before the first touch, print
 *             `allocated` on stdout and wait for a line on stdin
 *   -f        fork after the work: the child writes every object (copy on
 *             write), allocates one more object at site a and reports its
 *             objects (named child-*) in FILE.child
 *   -o FILE   write the object lines to FILE (default stderr)
 *   -F        free test, after the work (a, b, c still live): 192 MiB more
 *             from site a (64 blocks of 1 MiB, one of 64 MiB, one of 16 MiB
 *             grown to 64 MiB by realloc), touched, then freed; prints
 *             `free node N0=x N1=y anon N0=x N1=y objs N0=x N1=y` (pages)
 *             before the allocation (`free before`), with the objects live
 *             (`free live`; objs: the pages of a, b, c and the 66 blocks per
 *             node, move_pages) and after the frees (`free after`); with -o,
 *             /proc/self/numa_maps and smaps at `free live` go to FILE.numa_maps
 *             and FILE.numa_maps.smaps
 *   --hold    allocate and touch MIB MiB, print `held`, wait for stdin EOF
 *             (fills a node under `numactl --membind`)
 *        numa_probe --file-nodes FILE...
 *   --file-nodes  where each file's pages in the page cache are: prints
 *             `file PATH cached=P N0=x N1=y` (mincore finds the cached
 *             pages; only those are read, so none is read in anew)
 *        numa_probe --phases COLD,TMP,HOT,SPLIT[,SECONDS[,SETTLE[,GROW[,HOT%]]]] [-o FILE]
 *   --phases  the program's phases for the runtime's room on the DRAM node
 *             (runtime/README.md "Room on the DRAM node"): four objects of
 *             the given MiB from four sites, allocated and touched in this
 *             order - make_cold (read once), make_tmp (a temporary buffer),
 *             make_hot (the hot one, allocated last), make_split (a head
 *             site) - then, SETTLE seconds later (default 0: at once),
 *             their pages (objects p1-NAME), then make_tmp's
 *             buffer is freed (the phase change) and the three others are
 *             worked on (hot and split read for SECONDS, default once;
 *             with HOT%, the p1 look waits after SETTLE until that share
 *             of hot's pages is on node 0, at most 60 s more (`hot_wait S`);
 *             with GROW, also until the split object has GROW MiB more
 *             on node 0 than at p1, at most 60 s: the runtime's watcher
 *             promotes its tail after the free, while the program runs)
 *             and reported again (p2-NAME)
 *        numa_probe --bins BIG,BINS[,BIN%[,SETTLE]] [-o FILE]
 *   --bins    a yardstick-shaped kernel that grows small vectors (issue 39:
 *             a delta-stepping SSSP's bins): make_big (BIG MiB, written,
 *             then read once), then 2 threads each grow 32 vectors
 *             round-robin, element by element, from make_bin (each growth a
 *             new block of twice the size, the old one copied and freed, as
 *             std::vector does), to BINS MiB in all (each at most
 *             BINS/64 MiB); with them live it prints
 *             `bins pages=P N0=x N1=y`
 *             (move_pages over every vector) and big's pages (object big);
 *             with BIN%, it waits first, at most 60 s, until that share of
 *             the vectors' pages is on node 0 (`bins_wait S`), then SETTLE
 *             seconds more (default 0) */
#define _GNU_SOURCE
#include <numaif.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL
#define MAXNODE 8

static size_t mib(const char *s) { return (size_t)(strtod(s, NULL) * 1048576.0); }

__attribute__((noinline)) static unsigned char *make_a(size_t n) { return malloc(n); }

__attribute__((noinline)) static unsigned char *make_b(size_t n) { return calloc(n / 8, 8); }

__attribute__((noinline)) static unsigned char *make_c(size_t n) { return malloc(n); }

/* Fill then sum `passes` times with a stride that visits every byte. */
static uint64_t work(unsigned char *p, size_t n, unsigned seed, int passes) {
  uint64_t sum = 0;
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char)(i * 31 + seed);
  for (int k = 0; k < passes; k++)
    for (size_t i = 0; i < n; i += 64)
      sum += p[i] * (uint64_t)(k + 1) + p[n - 1 - i];
  return sum;
}

/* Node counts of the VMAs overlapping [lo, hi) from numa_maps, with their
 * extents from /proc/self/maps (numa_maps gives only start addresses). */
static void numa_maps_of(uintptr_t lo, uintptr_t hi, long nm[MAXNODE], size_t *vma_bytes,
                         char *policy, size_t polsz, long total[MAXNODE], long anon[MAXNODE]) {
  FILE *nf = fopen("/proc/self/numa_maps", "r"), *mf = fopen("/proc/self/maps", "r");
  char nl[4096], ml[4096];
  *vma_bytes = 0;
  policy[0] = 0;
  if (!nf || !mf) {
    perror("numa_probe: /proc/self/numa_maps");
    exit(3);
  }
  while (fgets(nl, sizeof nl, nf) && fgets(ml, sizeof ml, mf)) {
    uintptr_t s, e, ns;
    if (sscanf(ml, "%lx-%lx", &s, &e) != 2 || sscanf(nl, "%lx", &ns) != 1 || ns != s) {
      fprintf(stderr, "numa_probe: maps and numa_maps disagree at %s", ml);
      exit(3);
    }
    int overlap = s < hi && e > lo;
    if (overlap) {
      *vma_bytes += e - s;
      /* (MPOL_PREFERRED_MANY's name has a space: "prefer (many)=FLAGS:N";
       * written without it) */
      char pol[64], more[64];
      int got = sscanf(nl, "%*s %63s %63s", pol, more);
      if (got == 2 && !strncmp(more, "(many)", 6) && strlen(pol) + strlen(more) < sizeof pol)
        strcat(pol, more);
      if (got >= 1 && !strstr(policy, pol) &&
          strlen(policy) + strlen(pol) + 2 < polsz) {
        if (policy[0])
          strcat(policy, ",");
        strcat(policy, pol);
      }
    }
    int is_anon = strstr(nl, " anon=") && !strstr(nl, " file=");
    for (char *t = strtok(nl, " \n"); t; t = strtok(NULL, " \n")) {
      int node;
      long pages;
      if (sscanf(t, "N%d=%ld", &node, &pages) == 2 && node >= 0 && node < MAXNODE) {
        total[node] += pages;
        if (is_anon)
          anon[node] += pages;
        if (overlap)
          nm[node] += pages;
      }
    }
  }
  fclose(nf);
  fclose(mf);
}

static void report(FILE *out, const char *name, void *ptr, size_t bytes) {
  uintptr_t lo = (uintptr_t)ptr & ~(PAGE - 1), hi = ((uintptr_t)ptr + bytes + PAGE - 1) & ~(PAGE - 1);
  size_t np = (hi - lo) / PAGE;
  void **pages = malloc(np * sizeof *pages);
  int *status = malloc(np * sizeof *status);
  long mp[MAXNODE] = {0}, none = 0, nm[MAXNODE] = {0}, total[MAXNODE] = {0}, anon[MAXNODE] = {0};
  for (size_t i = 0; i < np; i++)
    pages[i] = (void *)(lo + i * PAGE);
  /* A page that automatic NUMA balancing has made PROT_NONE to sample
   * accesses reads as -EFAULT here: guest.sh turns the balancing off. */
  if (move_pages(0, np, pages, NULL, status, 0) != 0) {
    perror("numa_probe: move_pages");
    exit(3);
  }
  fprintf(out, "object %s %p %zu pages=%zu mp=", name, ptr, bytes, np);
  for (size_t i = 0; i < np; i++) {
    if (status[i] >= 0 && status[i] < MAXNODE)
      mp[status[i]]++;
    else
      none++;
  }
  for (int n = 0; n < MAXNODE; n++)
    if (mp[n])
      fprintf(out, "N%d:%ld,", n, mp[n]);
  fprintf(out, "none:%ld runs=", none);
  for (size_t i = 0; i < np;) {
    size_t j = i;
    while (j < np && status[j] == status[i])
      j++;
    fprintf(out, "%s%dx%zu", i ? "," : "", status[i], j - i); /* negative: -errno */
    i = j;
  }
  size_t vma_bytes;
  char policy[256];
  numa_maps_of(lo, hi, nm, &vma_bytes, policy, sizeof policy, total, anon);
  fprintf(out, " nm=");
  for (int n = 0, first = 1; n < MAXNODE; n++)
    if (nm[n]) {
      fprintf(out, "%sN%d:%ld", first ? "" : ",", n, nm[n]);
      first = 0;
    }
  fprintf(out, " vma_bytes=%zu policy=%s\n", vma_bytes, policy[0] ? policy : "?");
  free(pages);
  free(status);
}

static void totals(FILE *out) {
  long nm[MAXNODE] = {0}, total[MAXNODE] = {0}, anon[MAXNODE] = {0};
  size_t vb;
  char pol[8];
  numa_maps_of(0, 0, nm, &vb, pol, sizeof pol, total, anon);
  fprintf(out, "numa_maps total");
  for (int n = 0; n < MAXNODE; n++)
    if (total[n])
      fprintf(out, " N%d=%ld", n, total[n]);
  fprintf(out, " anon");
  for (int n = 0; n < MAXNODE; n++)
    if (anon[n])
      fprintf(out, " N%d=%ld", n, anon[n]);
  fprintf(out, "\n");
}

__attribute__((noinline)) static unsigned char *make_cold(size_t n) { return malloc(n); }

__attribute__((noinline)) static unsigned char *make_tmp(size_t n) { return malloc(n); }

__attribute__((noinline)) static unsigned char *make_hot(size_t n) { return malloc(n); }

__attribute__((noinline)) static unsigned char *make_split(size_t n) { return malloc(n); }

static void pages_on(void *p, size_t n, long per_node[MAXNODE]);

/* Seconds since \p t0 (CLOCK_MONOTONIC). */
static double since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Polls \p look (pages per node into on[], returns the pages it counts)
 * every 0.2 s until \p pct % of them are on node 0, at most 60 s; prints
 * `WHAT_wait SECONDS` (the waits of --phases' HOT% and --bins' BIN%). */
static void wait_on_node0(FILE *out, const char *what, double pct,
                          long (*look)(void *arg, long on[MAXNODE]), void *arg) {
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    long on[MAXNODE] = {0};
    long pages = look(arg, on);
    double took = since(&t0);
    if ((double)on[0] >= pct / 100.0 * (double)pages || took >= 60) {
      fprintf(out, "%s_wait %.1f\n", what, took);
      return;
    }
    usleep(200000);
  }
}

struct span {
  void *p;
  size_t n;
};

/* wait_on_node0's look at one object: its bytes in pages, rounded up */
static long span_on(void *arg, long on[MAXNODE]) {
  struct span *sp = arg;
  pages_on(sp->p, sp->n, on);
  return (long)((sp->n + PAGE - 1) / PAGE);
}

__attribute__((noinline)) static unsigned char *make_big(size_t n) { return malloc(n); }

__attribute__((noinline)) static uint32_t *make_bin(size_t n) { return malloc(n); }

#define BIN_THREADS 2
#define BINS_PER_THREAD 32
typedef struct bin_thread {
  size_t cap_bytes; /* each vector's final size */
  uint32_t *v[BINS_PER_THREAD];
  size_t len[BINS_PER_THREAD], cap[BINS_PER_THREAD];
  unsigned seed;
  int failed;
} bin_thread;

/* One thread's vectors, grown round-robin until each holds cap_bytes. */
static void *grow_bins(void *arg) {
  bin_thread *t = arg;
  size_t want = t->cap_bytes / sizeof(uint32_t);
  for (size_t k = 0; k < want; k++)
    for (int b = 0; b < BINS_PER_THREAD; b++) {
      if (t->len[b] == t->cap[b]) {
        size_t cap = t->cap[b] ? 2 * t->cap[b] : 16;
        uint32_t *n = make_bin(cap * sizeof(uint32_t));
        if (!n) {
          t->failed = 1;
          return NULL;
        }
        if (t->len[b])
          memcpy(n, t->v[b], t->len[b] * sizeof(uint32_t));
        free(t->v[b]);
        t->v[b] = n;
        t->cap[b] = cap;
      }
      t->v[b][t->len[b]++] = (uint32_t)(k * 2654435761u + (unsigned)b + t->seed);
    }
  return NULL;
}

/* The vectors' pages per node (move_pages) of the BIN_THREADS threads' at
 * \p arg, into per_node; their pages (also wait_on_node0's look). */
static long bins_on(void *arg, long per_node[MAXNODE]) {
  bin_thread *t = arg;
  long pages = 0;
  for (int i = 0; i < BIN_THREADS; i++)
    for (int b = 0; b < BINS_PER_THREAD; b++) {
      size_t n = t[i].cap[b] * sizeof(uint32_t);
      uintptr_t lo = (uintptr_t)t[i].v[b] & ~(PAGE - 1);
      pages += (long)(((uintptr_t)t[i].v[b] + n + PAGE - 1 - lo) / PAGE);
      pages_on(t[i].v[b], n, per_node);
    }
  return pages;
}

/* --bins: see the comment at the top. */
static int bins(const char *sizes, const char *outpath) {
  double big_mib = 96, bins_mib = 16, bin_pct = 0, settle = 0;
  if (sscanf(sizes, "%lf,%lf,%lf,%lf", &big_mib, &bins_mib, &bin_pct, &settle) < 2) {
    fprintf(stderr, "numa_probe: --bins BIG,BINS[,BIN%%[,SETTLE]] (MiB, s)\n");
    return 2;
  }
  size_t nbig = (size_t)(big_mib * 1048576.0);
  unsigned char *big = make_big(nbig);
  FILE *out = outpath ? fopen(outpath, "w") : stderr;
  if (!big || !out) {
    fprintf(stderr, "numa_probe: allocation failed\n");
    return 1;
  }
  uint64_t sum = work(big, nbig, 21, 1);
  static bin_thread t[BIN_THREADS];
  pthread_t th[BIN_THREADS];
  for (int i = 0; i < BIN_THREADS; i++) {
    t[i].cap_bytes = (size_t)(bins_mib * 1048576.0) / (BIN_THREADS * BINS_PER_THREAD);
    t[i].seed = (unsigned)i;
    if (pthread_create(&th[i], NULL, grow_bins, &t[i]))
      return 1;
  }
  for (int i = 0; i < BIN_THREADS; i++)
    pthread_join(th[i], NULL);
  for (int i = 0; i < BIN_THREADS; i++)
    if (t[i].failed) {
      fprintf(stderr, "numa_probe: allocation failed\n");
      return 1;
    }
  for (size_t i = 0; i < nbig; i += 64) /* the kernel reads big too */
    sum += big[i];
  if (bin_pct > 0)
    wait_on_node0(out, "bins", bin_pct, bins_on, t);
  if (settle > 0)
    usleep((useconds_t)(settle * 1e6));
  long on[MAXNODE] = {0}, pages = bins_on(t, on);
  fprintf(out, "bins pages=%ld", pages);
  for (int n = 0; n < MAXNODE; n++)
    if (on[n])
      fprintf(out, " N%d=%ld", n, on[n]);
  fprintf(out, "\n");
  report(out, "big", big, nbig);
  totals(out);
  if (outpath)
    fclose(out);
  for (int i = 0; i < BIN_THREADS; i++)
    for (int b = 0; b < BINS_PER_THREAD; b++) {
      for (size_t k = 0; k < t[i].len[b]; k += 97)
        sum += t[i].v[b][k];
      free(t[i].v[b]);
    }
  printf("checksum: %lx\n", (unsigned long)sum);
  free(big);
  return 0;
}

/* --phases: see the comment at the top. */
static int phases(const char *sizes, const char *outpath) {
  double m[4] = {48, 32, 16, 48}, spin = 0, settle = 0, grow = 0, hot_pct = 0;
  if (sscanf(sizes, "%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &m[0], &m[1], &m[2], &m[3], &spin,
             &settle, &grow, &hot_pct) < 4) {
    fprintf(stderr, "numa_probe: --phases COLD,TMP,HOT,SPLIT[,SECONDS[,SETTLE[,GROW[,HOT%%]]]] "
                    "(MiB)\n");
    return 2;
  }
  size_t n[4];
  for (int i = 0; i < 4; i++)
    n[i] = (size_t)(m[i] * 1048576.0);
  unsigned char *cold = make_cold(n[0]);
  uint64_t sum = cold ? work(cold, n[0], 11, 1) : 0;
  unsigned char *tmp = make_tmp(n[1]);
  sum += tmp ? work(tmp, n[1], 12, 1) : 0;
  unsigned char *hot = make_hot(n[2]);
  sum += hot ? work(hot, n[2], 13, 2) : 0;
  unsigned char *split = make_split(n[3]);
  sum += split ? work(split, n[3], 14, 1) : 0;
  FILE *out = outpath ? fopen(outpath, "w") : stderr;
  if (!cold || !tmp || !hot || !split || !out) {
    fprintf(stderr, "numa_probe: allocation failed\n");
    return 1;
  }
  if (settle > 0)
    usleep((useconds_t)(settle * 1e6));
  /* HOT%: then until that share of hot's pages is on node 0, at most 60 s
   * more (printed: `hot_wait SECONDS`) */
  if (hot_pct > 0)
    wait_on_node0(out, "hot", hot_pct, span_on, &(struct span){hot, n[2]});
  report(out, "p1-cold", cold, n[0]);
  report(out, "p1-tmp", tmp, n[1]);
  report(out, "p1-hot", hot, n[2]);
  report(out, "p1-split", split, n[3]);
  long n0_before[MAXNODE] = {0}, n0_now[MAXNODE];
  if (grow > 0)
    pages_on(split, n[3], n0_before);
  free(tmp); /* the phase change: the temporary buffer dies */
  /* the kernel phase: hot and split, read for SECONDS (wall clock: time for
   * the NUMA-balancing scanner), at least once; the checksum counts one */
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int pass = 0;; pass++) {
    uint64_t s = 0;
    for (size_t i = 0; i < n[2]; i += 64)
      s += hot[i];
    for (size_t i = 0; i < n[3]; i += 64)
      s += split[i];
    if (!pass)
      sum += s;
    double took = since(&t0);
    if (took < spin)
      continue;
    if (grow <= 0 || took >= spin + 60)
      break;
    memset(n0_now, 0, sizeof n0_now);
    pages_on(split, n[3], n0_now);
    if ((double)(n0_now[0] - n0_before[0]) * PAGE >= grow * 1048576.0)
      break;
  }
  report(out, "p2-cold", cold, n[0]);
  report(out, "p2-hot", hot, n[2]);
  report(out, "p2-split", split, n[3]);
  totals(out);
  if (outpath)
    fclose(out);
  printf("checksum: %lx\n", (unsigned long)sum);
  free(cold);
  free(hot);
  free(split);
  return 0;
}

/* Pages of [p, p+n) per node (move_pages), added to per_node. */
static void pages_on(void *p, size_t n, long per_node[MAXNODE]) {
  uintptr_t lo = (uintptr_t)p & ~(PAGE - 1), hi = ((uintptr_t)p + n + PAGE - 1) & ~(PAGE - 1);
  size_t np = (hi - lo) / PAGE;
  void **pages = malloc(np * sizeof *pages);
  int *status = malloc(np * sizeof *status);
  for (size_t i = 0; i < np; i++)
    pages[i] = (void *)(lo + i * PAGE);
  if (move_pages(0, np, pages, NULL, status, 0) != 0) {
    perror("numa_probe: move_pages");
    exit(3);
  }
  for (size_t i = 0; i < np; i++)
    if (status[i] >= 0 && status[i] < MAXNODE)
      per_node[status[i]]++;
  free(pages);
  free(status);
}

/* --file-nodes: the nodes of each file's page-cache pages. */
static int file_nodes(int n, char **paths) {
  for (int i = 0; i < n; i++) {
    int fd = open(paths[i], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
      printf("file %s missing\n", paths[i]);
      if (fd >= 0)
        close(fd);
      continue;
    }
    size_t np = ((size_t)st.st_size + PAGE - 1) / PAGE;
    volatile unsigned char *m = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    unsigned char *in = malloc(np);
    /* (MADV_RANDOM: a read faults in no readahead of the rest) */
    if (m == MAP_FAILED || madvise((void *)m, st.st_size, MADV_RANDOM) != 0 ||
        mincore((void *)m, st.st_size, in) != 0) {
      perror("numa_probe: mmap/madvise/mincore");
      return 3;
    }
    long per_node[MAXNODE] = {0}, cached = 0;
    for (size_t k = 0; k < np; k++)
      if (in[k] & 1) { /* cached: the read maps the page-cache page */
        (void)m[k * PAGE];
        cached++;
      }
    /* (the pages not read are not mapped: move_pages counts them nowhere) */
    pages_on((void *)m, st.st_size, per_node);
    printf("file %s cached=%ld N0=%ld N1=%ld\n", paths[i], cached, per_node[0], per_node[1]);
    munmap((void *)m, st.st_size);
    free(in);
    close(fd);
  }
  return 0;
}

/* `free WHEN N0=.. anon N0=.. objs N0=..`: the process's pages per node
 * (numa_maps, every VMA and the anonymous ones) and those of \p n objects. */
static void free_line(FILE *out, const char *when, void **objs, size_t *sizes, int n) {
  long nm[MAXNODE] = {0}, total[MAXNODE] = {0}, anon[MAXNODE] = {0}, in[MAXNODE] = {0};
  size_t vb;
  char pol[8];
  numa_maps_of(0, 0, nm, &vb, pol, sizeof pol, total, anon);
  for (int i = 0; i < n; i++)
    pages_on(objs[i], sizes[i], in);
  fprintf(out, "free %s node", when);
  for (int k = 0; k < 2; k++)
    fprintf(out, " N%d=%ld", k, total[k]);
  fprintf(out, " anon");
  for (int k = 0; k < 2; k++)
    fprintf(out, " N%d=%ld", k, anon[k]);
  fprintf(out, " objs");
  for (int k = 0; k < 2; k++)
    fprintf(out, " N%d=%ld", k, in[k]);
  fprintf(out, "\n");
}

__attribute__((noinline)) static unsigned char *grow_a(unsigned char *p, size_t n) {
  return realloc(p, n);
}

/* -F: 192 MiB from site a (make_a), one block grown by realloc, touched,
 * then freed; the big objects a, b, c stay live throughout. */
static int free_test(FILE *out, const char *numa_maps_copy, unsigned char *a, size_t na,
                     unsigned char *b, size_t nb, unsigned char *c, size_t nc) {
  enum { SMALL = 64, N = SMALL + 2 + 3 };
  void *objs[N] = {a, b, c};
  size_t sizes[N] = {na, nb, nc};
  free_line(out, "before", objs, sizes, 3);
  for (int i = 0; i < SMALL; i++)
    sizes[3 + i] = 1 << 20;
  sizes[3 + SMALL] = sizes[3 + SMALL + 1] = 64 << 20;
  for (int i = 3; i < N; i++) {
    objs[i] = make_a(i == N - 1 ? 16 << 20 : sizes[i]);
    if (!objs[i])
      return 1;
    memset(objs[i], i, i == N - 1 ? 16 << 20 : sizes[i]);
  }
  objs[N - 1] = grow_a(objs[N - 1], sizes[N - 1]); /* 16 -> 64 MiB */
  if (!objs[N - 1])
    return 1;
  memset((char *)objs[N - 1] + (16 << 20), 1, sizes[N - 1] - (16 << 20));
  free_line(out, "live", objs, sizes, N);
  for (int k = 0; numa_maps_copy && k < 2; k++) { /* each VMA, all live */
    char path[4200];
    snprintf(path, sizeof path, "%s%s", numa_maps_copy, k ? ".smaps" : "");
    FILE *in = fopen(k ? "/proc/self/smaps" : "/proc/self/numa_maps", "r"), *cp = fopen(path, "w");
    char buf[4096];
    size_t n;
    while (in && cp && (n = fread(buf, 1, sizeof buf, in)) > 0)
      fwrite(buf, 1, n, cp);
    if (in)
      fclose(in);
    if (cp)
      fclose(cp);
  }
  for (int i = 3; i < N; i++)
    free(objs[i]);
  free_line(out, "after", objs, sizes, 3);
  return 0;
}

static int hold(size_t n) {
  char *p = malloc(n);
  if (!p)
    return 1;
  memset(p, 1, n);
  printf("held %zu\n", n);
  fflush(stdout);
  while (getchar() != EOF)
    ;
  return p[n / 2] == 1 ? 0 : 1;
}

int main(int argc, char **argv) {
  size_t na = 16 << 20, nb = 16 << 20, nc = 16 << 20, nsmall = 1000;
  int passes = 6, wait = 0, forkit = 0, freeit = 0;
  const char *outpath = NULL, *phase_sizes = NULL, *bin_sizes = NULL;
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : "";
    if (!strcmp(argv[i], "--hold"))
      return hold(mib(v));
    else if (!strcmp(argv[i], "--file-nodes"))
      return file_nodes(argc - i - 1, argv + i + 1);
    else if (!strcmp(argv[i], "--phases"))
      phase_sizes = v, i++;
    else if (!strcmp(argv[i], "--bins"))
      bin_sizes = v, i++;
    else if (!strcmp(argv[i], "-a"))
      na = mib(v), i++;
    else if (!strcmp(argv[i], "-b"))
      nb = mib(v), i++;
    else if (!strcmp(argv[i], "-c"))
      nc = mib(v), i++;
    else if (!strcmp(argv[i], "-n"))
      nsmall = strtoull(v, NULL, 10), i++;
    else if (!strcmp(argv[i], "-p"))
      passes = atoi(v), i++;
    else if (!strcmp(argv[i], "-o"))
      outpath = v, i++;
    else if (!strcmp(argv[i], "-w"))
      wait = 1;
    else if (!strcmp(argv[i], "-f"))
      forkit = 1;
    else if (!strcmp(argv[i], "-F"))
      freeit = 1;
    else {
      fprintf(stderr, "numa_probe: unknown argument '%s' (see the comment at the top of numa_probe.c)\n",
              argv[i]);
      return 2;
    }
  }
  if (phase_sizes)
    return phases(phase_sizes, outpath);
  if (bin_sizes)
    return bins(bin_sizes, outpath);
  nb &= ~7UL;
  unsigned char *a = make_a(na), *b = make_b(nb), *c = make_c(nc);
  if (!a || !b || !c) {
    fprintf(stderr, "numa_probe: allocation failed\n");
    return 1;
  }
  if (wait) {
    printf("allocated\n");
    fflush(stdout);
    char line[64];
    if (!fgets(line, sizeof line, stdin))
      return 1;
  }
  uint64_t sum = work(a, na, 1, 1) + work(b, nb, 2, passes) + work(c, nc, 3, 2);
  unsigned long small = 0;
  void *keep[64] = {0};
  for (size_t i = 0; i < nsmall; i++) {
    int *s = malloc(16 + (i % 7) * 8);
    s[0] = (int)i;
    if (keep[i % 64]) {
      small += (unsigned)*(int *)keep[i % 64];
      free(keep[i % 64]);
    }
    keep[i % 64] = s;
  }
  for (int i = 0; i < 64; i++)
    free(keep[i]);
  FILE *out = outpath ? fopen(outpath, "w") : stderr;
  if (!out) {
    perror(outpath);
    return 1;
  }
  report(out, "a", a, na);
  report(out, "b", b, nb);
  report(out, "c", c, nc);
  totals(out);
  char nmcopy[4096];
  snprintf(nmcopy, sizeof nmcopy, "%s.numa_maps", outpath ? outpath : "numa_probe.out");
  if (freeit && free_test(out, outpath ? nmcopy : NULL, a, na, b, nb, c, nc)) {
    fprintf(stderr, "numa_probe: free test: allocation failed\n");
    return 1;
  }
  fflush(out);
  if (forkit) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      char path[4096];
      snprintf(path, sizeof path, "%s.child", outpath ? outpath : "numa_probe.out");
      FILE *co = fopen(path, "w");
      if (!co)
        _exit(1);
      memset(a, 5, na); /* copy on write: the copies follow the mapping's policy */
      memset(b, 6, nb);
      memset(c, 7, nc);
      unsigned char *a2 = make_a(na);
      memset(a2, 8, na);
      report(co, "child-a", a, na);
      report(co, "child-b", b, nb);
      report(co, "child-c", c, nc);
      report(co, "child-a2", a2, na);
      totals(co);
      free(a2);
      _exit(fclose(co) ? 1 : 0);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
      fprintf(stderr, "numa_probe: fork child failed\n");
      return 1;
    }
  }
  if (outpath)
    fclose(out);
  printf("checksum: %lx\n", (unsigned long)(sum + small));
  free(a);
  free(b);
  free(c);
  return 0;
}
