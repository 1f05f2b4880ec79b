/* SPDX-License-Identifier: MIT */
/* Sampler of the NUMA tiering yardstick (test/bench/numa_tiering.py; not a
 * test): runs an example program (examples/, built with
 * examples/common) with TW_EX_STOP_AT_KERNEL=1, so that it stops itself
 * when its kernel starts and when the kernel is done, and samples where the
 * pages of each of its objects are - at the kernel's start, every
 * INTERVAL ms while the kernel runs, and at its end - with move_pages(2) on
 * the program's pages (root, or CAP_SYS_NICE). The objects are the
 * program's `object NAME 0xADDR BYTES` lines (its -v output on stderr, which
 * the sampler sends to ERRFILE and reads at the kernel's start); an object
 * whose range a later object overlaps (freed, its memory reused) is left
 * out. Output (OUT, one record a line):
 *   object NAME 0xADDR BYTES        each object sampled
 *   vmstat start|end KEY=VALUE...   /proc/vmstat's promotion, demotion,
 *                                   migration, NUMA hint-fault, compaction
 *                                   and reclaim counters
 *   sample I T start|mid|end        sample I, T seconds after the start
 *   page I NAME N0 N1 NONE          pages of object NAME on node 0, node 1,
 *                                   and not present (never touched): from
 *                                   /proc/PID/pagemap's frame numbers
 *                                   (root; PROT_NONE hint-fault pages
 *                                   included), else move_pages(2) (which
 *                                   counts those as not present)
 *   held I N0=PAGES N1=PAGES anon N0=PAGES N1=PAGES
 *                                   every page of the process on each node
 *                                   (/proc/PID/numa_maps), then those of its
 *                                   anonymous mappings
 *   pcp I N0=KIB                    node 0's free pages in the kernel's
 *                                   per-CPU lists at sample I (zoneinfo's
 *                                   pagesets `count`): free, but neither in
 *                                   MemFree nor seen by the watermark check
 *   free I N0=KIB                   node 0's MemFree at sample I (what the
 *                                   program left unused there)
 *   vma I ADDR POLICY N0= N1= NAME  (sample 1 only) each mapping holding
 *                                   64 or more pages of node 0: where the
 *                                   process's node-0 memory is besides its
 *                                   objects (NAME: file, [heap], [stack],
 *                                   anon)
 *   cpustat start|end USER NICE SYSTEM IDLE IOWAIT IRQ SOFTIRQ STEAL
 *                                   /proc/stat's cpu line (ticks, all CPUs)
 *   cputask start|end p|k TID COMM UTIME STIME
 *                                   CPU ticks of each thread of the program
 *                                   (p; the runtime's watcher is `tw-room`)
 *                                   and of the kernel's memory threads (k:
 *                                   kswapd, kcompactd, kworkers, ...): who
 *                                   had the CPUs while the kernel ran
 *   exit STATUS                     the program's exit status (128+signal)
 * Usage: numa_sample [-i MS] -o OUT -e ERRFILE -- PROGRAM ARGS...
 *        numa_sample --hold MIB | --hold KIBK
 *   --hold: maps, mlocks and touches MIB MiB (KIB KiB with a K suffix: the
 *   yardstick's fillers step down to their target), prints `held`, then waits for
 *   end of input: run under `numactl --membind=0`, it takes node 0's memory
 *   for good (mlocked pages are neither reclaimed nor demoted). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <numaif.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL
#define MAXOBJ 64
#define CHUNK 16384

struct object {
  char name[64];
  uintptr_t addr;
  size_t bytes;
};

static struct object objs[MAXOBJ];
static int nobjs;
static FILE *out;
static double t0;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what) {
  fprintf(stderr, "numa_sample: %s: %s\n", what, strerror(errno));
  exit(3);
}

static void read_objects(const char *errfile) {
  FILE *f = fopen(errfile, "r");
  char line[512];
  if (!f)
    die(errfile);
  nobjs = 0;
  while (fgets(line, sizeof line, f) && nobjs < MAXOBJ) {
    struct object *o = &objs[nobjs];
    if (sscanf(line, "object %63s 0x%" SCNxPTR " %zu", o->name, &o->addr, &o->bytes) == 3)
      nobjs++;
  }
  fclose(f);
  /* an object whose range a later one overlaps was freed before it (its
   * memory reused): not sampled */
  int kept = 0;
  for (int i = 0; i < nobjs; i++) {
    int dead = 0;
    for (int j = i + 1; j < nobjs && !dead; j++)
      dead = objs[j].addr < objs[i].addr + objs[i].bytes &&
             objs[i].addr < objs[j].addr + objs[j].bytes;
    if (!dead)
      objs[kept++] = objs[i];
  }
  nobjs = kept;
  for (int i = 0; i < nobjs; i++)
    fprintf(out, "object %s 0x%" PRIxPTR " %zu\n", objs[i].name, objs[i].addr, objs[i].bytes);
}

static void vmstat(const char *when) {
  FILE *f = fopen("/proc/vmstat", "r");
  char key[128];
  unsigned long long v;
  if (!f)
    die("/proc/vmstat");
  fprintf(out, "vmstat %s", when);
  while (fscanf(f, "%127s %llu", key, &v) == 2)
    if (!strncmp(key, "pgpromote", 9) || !strncmp(key, "pgdemote", 8) ||
        !strncmp(key, "pgmigrate", 9) || !strncmp(key, "numa_", 5) ||
        !strncmp(key, "thp_migration", 13) || !strncmp(key, "compact_", 8) ||
        !strncmp(key, "allocstall", 10) || !strncmp(key, "pgscan", 6) ||
        !strncmp(key, "pgsteal", 7))
      fprintf(out, " %s=%llu", key, v);
  fputc('\n', out);
  fclose(f);
}

/* A thread's name and CPU ticks from its stat file; 0 when unreadable. */
static int task_ticks(const char *path, char comm[64], unsigned long *ut,
                      unsigned long *st) {
  char line[1024];
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  int ok = fgets(line, sizeof line, f) != NULL;
  fclose(f);
  if (!ok)
    return 0;
  char *o = strchr(line, '('), *c = strrchr(line, ')');
  if (!o || !c || c - o - 1 >= 64)
    return 0;
  memcpy(comm, o + 1, (size_t)(c - o - 1));
  comm[c - o - 1] = 0;
  /* after the name: state, then fields 4-13, utime (14), stime (15) */
  return sscanf(c + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
                ut, st) == 2;
}

/* Who had the CPUs (the "cpustat" and "cputask" lines): the program's
 * threads, the kernel's memory-management threads that ran (by name), and
 * /proc/stat's totals. */
static void cputimes(pid_t pid, const char *when) {
  static const char *const kthreads[] = {"kswapd", "kcompactd", "kworker",
                                         "ksoftirqd", "migration", "kdamond",
                                         "khugepaged"};
  char path[300], line[512], comm[64];
  unsigned long ut, st;
  FILE *f = fopen("/proc/stat", "r");
  if (f && fgets(line, sizeof line, f) && !strncmp(line, "cpu ", 4))
    fprintf(out, "cpustat %s%s", when, line + 3);
  if (f)
    fclose(f);
  for (int k = 0; k < 2; k++) { /* the program's threads, the kernel's */
    if (k)
      snprintf(path, sizeof path, "/proc");
    else
      snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d))) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9')
        continue;
      if (k)
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
      else
        snprintf(path, sizeof path, "/proc/%d/task/%s/stat", (int)pid, e->d_name);
      if (!task_ticks(path, comm, &ut, &st))
        continue;
      int show = !k;
      for (unsigned i = 0; k && i < sizeof(kthreads) / sizeof(*kthreads); i++)
        show |= !strncmp(comm, kthreads[i], strlen(kthreads[i]));
      if (show)
        fprintf(out, "cputask %s %s %s %s %lu %lu\n", when, k ? "k" : "p",
                e->d_name, comm, ut, st);
    }
    if (d)
      closedir(d);
  }
}

/* Pages of the whole process per node from numa_maps (all mappings, then
 * the anonymous ones: those with anon= and no file=). */
static void held(pid_t pid, int i) {
  char path[64], line[8192];
  long all[2] = {0, 0}, anon[2] = {0, 0};
  snprintf(path, sizeof path, "/proc/%d/numa_maps", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f)
    return;
  while (fgets(line, sizeof line, f)) {
    int is_anon = strstr(line, " anon=") && !strstr(line, " file=");
    long here[2] = {0, 0};
    for (char *p = strstr(line, " N"); p; p = strstr(p + 1, " N")) {
      int node;
      long n;
      if (sscanf(p, " N%d=%ld", &node, &n) == 2 && node >= 0 && node < 2) {
        all[node] += n;
        here[node] += n;
        if (is_anon)
          anon[node] += n;
      }
    }
    if (i == 1 && here[0] >= 64) {
      const char *file = strstr(line, " file="), *name = "anon";
      char buf[256];
      if (file)
        name = file + 6;
      else if (strstr(line, " heap"))
        name = "[heap]";
      else if (strstr(line, " stack"))
        name = "[stack]";
      snprintf(buf, sizeof buf, "%s", name);
      buf[strcspn(buf, " \n")] = 0;
      char addr[32] = "", policy[64] = "";
      sscanf(line, "%31s %63s", addr, policy);
      fprintf(out, "vma %d %s %s N0=%ld N1=%ld %s\n", i, addr, policy, here[0], here[1], buf);
    }
  }
  fclose(f);
  f = fopen("/proc/zoneinfo", "r");
  long pcp = 0;
  int node0 = 0;
  while (f && fgets(line, sizeof line, f)) {
    long n;
    if (!strncmp(line, "Node ", 5))
      node0 = !strncmp(line, "Node 0,", 7);
    else if (node0 && sscanf(line, " count: %ld", &n) == 1)
      pcp += n;
  }
  if (f)
    fclose(f);
  fprintf(out, "pcp %d N0=%ld\n", i, pcp * 4);
  f = fopen("/sys/devices/system/node/node0/meminfo", "r");
  while (f && fgets(line, sizeof line, f)) {
    long kib;
    if (sscanf(line, "Node 0 MemFree: %ld kB", &kib) == 1)
      fprintf(out, "free %d N0=%ld\n", i, kib);
  }
  if (f)
    fclose(f);
  fprintf(out, "held %d N0=%ld N1=%ld anon N0=%ld N1=%ld\n", i, all[0], all[1], anon[0],
          anon[1]);
}

/* The node of each memory block (/sys/devices/system/node/nodeN/memoryM:
 * block M holds physical addresses [M, M+1) x the block size): pages are
 * placed by their frame number from /proc/PID/pagemap, which also sees the
 * pages NUMA balancing has made PROT_NONE to take hint faults - move_pages(2)
 * reports those as not present on 6.1, which hid most of a Linux-tiering
 * run's slow-node pages from the first version of this sampler. */
#define MAXBLK 65536
static signed char blk_node[MAXBLK];
static unsigned long blk_shift;

static int blocks_init(void) {
  char path[128];
  unsigned long bytes = 0;
  FILE *f = fopen("/sys/devices/system/memory/block_size_bytes", "r");
  if (!f || fscanf(f, "%lx", &bytes) != 1 || !bytes) {
    if (f)
      fclose(f);
    return -1;
  }
  fclose(f);
  while ((1UL << blk_shift) < bytes)
    blk_shift++;
  memset(blk_node, -1, sizeof blk_node);
  for (int node = 0; node < 2; node++) {
    snprintf(path, sizeof path, "/sys/devices/system/node/node%d", node);
    DIR *d = opendir(path);
    struct dirent *e;
    long m;
    while (d && (e = readdir(d)))
      if (sscanf(e->d_name, "memory%ld", &m) == 1 && m >= 0 && m < MAXBLK)
        blk_node[m] = (signed char)node;
    if (d)
      closedir(d);
  }
  return 0;
}

/* Pages of [lo, hi) on node 0, node 1, not present, from pagemap; -1:
 * pagemap unreadable or gives no frame numbers (not root). */
static int by_pagemap(pid_t pid, uintptr_t lo, uintptr_t hi, long n[3]) {
  static uint64_t ent[CHUNK];
  static int fd = -2;
  static pid_t of;
  if (fd == -2 || of != pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/pagemap", (int)pid);
    fd = blk_shift ? open(path, O_RDONLY) : -1;
    of = pid;
  }
  if (fd < 0)
    return -1;
  for (uintptr_t a = lo; a < hi;) {
    size_t cnt = (hi - a) / PAGE < CHUNK ? (hi - a + PAGE - 1) / PAGE : CHUNK;
    ssize_t got = pread(fd, ent, cnt * 8, (off_t)(a / PAGE * 8));
    if (got <= 0)
      return -1;
    for (size_t j = 0; j < (size_t)got / 8; j++) {
      uint64_t e = ent[j], pfn = e & ((1ULL << 55) - 1);
      if (!(e >> 63)) {
        n[2]++;
        continue;
      }
      if (!pfn)
        return -1; /* frame numbers hidden: not root */
      uint64_t b = (pfn * PAGE) >> blk_shift;
      int node = b < MAXBLK ? blk_node[b] : -1;
      n[node == 0 ? 0 : node == 1 ? 1 : 2]++;
    }
    a += (uintptr_t)got / 8 * PAGE;
  }
  return 0;
}

static void sample(pid_t pid, int i, const char *kind) {
  static void *pages[CHUNK];
  static int status[CHUNK];
  fprintf(out, "sample %d %.3f %s\n", i, now() - t0, kind);
  for (int k = 0; k < nobjs; k++) {
    uintptr_t lo = objs[k].addr & ~(PAGE - 1), hi = objs[k].addr + objs[k].bytes;
    long n0 = 0, n1 = 0, none = 0, pm[3] = {0, 0, 0};
    if (!by_pagemap(pid, lo, hi, pm)) {
      fprintf(out, "page %d %s %ld %ld %ld\n", i, objs[k].name, pm[0], pm[1], pm[2]);
      continue;
    }
    for (uintptr_t a = lo; a < hi;) {
      unsigned long n = 0;
      for (; n < CHUNK && a < hi; n++, a += PAGE)
        pages[n] = (void *)a;
      if (move_pages(pid, n, pages, NULL, status, 0) < 0) {
        none += n;
        continue;
      }
      for (unsigned long j = 0; j < n; j++) {
        if (status[j] == 0)
          n0++;
        else if (status[j] == 1)
          n1++;
        else
          none++;
      }
    }
    fprintf(out, "page %d %s %ld %ld %ld\n", i, objs[k].name, n0, n1, none);
  }
  held(pid, i);
  fflush(out);
}

static int hold(const char *arg) {
  char *end;
  size_t n = strtoul(arg, &end, 10);
  size_t bytes = *end == 'K' ? n << 10 : n << 20;
  char *p = mmap(NULL, bytes ? bytes : PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0);
  if (p == MAP_FAILED)
    die("mmap");
  if (bytes && mlock(p, bytes))
    die("mlock");
  for (size_t i = 0; i < bytes; i += PAGE)
    p[i] = 1;
  printf("held %zu KiB\n", bytes >> 10);
  fflush(stdout);
  while (getchar() != EOF)
    ;
  return 0;
}

int main(int argc, char **argv) {
  long interval_ms = 1000;
  if (argc == 3 && !strcmp(argv[1], "--hold"))
    return hold(argv[2]);
  const char *outfile = NULL, *errfile = NULL;
  int c;
  while ((c = getopt(argc, argv, "+i:o:e:")) != -1) {
    switch (c) {
    case 'i':
      interval_ms = atol(optarg);
      break;
    case 'o':
      outfile = optarg;
      break;
    case 'e':
      errfile = optarg;
      break;
    default:
      return 2;
    }
  }
  if (!outfile || !errfile || optind >= argc) {
    fprintf(stderr, "usage: numa_sample [-i MS] -o OUT -e ERRFILE -- PROGRAM ARGS...\n");
    return 2;
  }
  out = fopen(outfile, "w");
  if (!out)
    die(outfile);
  if (blocks_init())
    blk_shift = 0; /* move_pages(2) only */
  pid_t pid = fork();
  if (pid < 0)
    die("fork");
  if (pid == 0) {
    if (!freopen(errfile, "w", stderr))
      die(errfile);
    setenv("TW_EX_STOP_AT_KERNEL", "1", 1);
    execvp(argv[optind], argv + optind);
    die(argv[optind]);
  }
  int st, stops = 0, i = 0;
  double run_at = 0; /* when the kernel was let go */
  for (;;) {
    pid_t w = waitpid(pid, &st, stops == 1 ? WUNTRACED | WNOHANG : WUNTRACED);
    if (w < 0)
      die("waitpid");
    if (w == 0) { /* the kernel runs: look for its end every 5 ms, so
                     that its time is known to that (the "kernel" line) */
      double until = now() + interval_ms / 1000.0;
      while (w == 0 && now() < until) {
        struct timespec d = {0, 5000000L};
        nanosleep(&d, NULL);
        w = waitpid(pid, &st, WUNTRACED | WNOHANG);
      }
      if (w < 0)
        die("waitpid");
      if (w == 0) {
        sample(pid, i++, "mid");
        continue;
      }
    }
    if (WIFSTOPPED(st)) {
      stops++;
      /* the counters bracket the kernel's run, not the samples taken
       * while it is stopped (the kernel's tiering works on meanwhile) */
      if (stops == 1) {
        t0 = now();
        read_objects(errfile);
        sample(pid, i++, "start");
        vmstat("start");
        cputimes(pid, "start");
      } else if (stops == 2) {
        /* the kernel phase's guest time: from its start (SIGCONT after the
         * first sample) to its end, within 5 ms */
        fprintf(out, "kernel %.3f\n", now() - run_at);
        vmstat("end");
        cputimes(pid, "end");
        sample(pid, i++, "end");
      }
      run_at = now();
      kill(pid, SIGCONT);
      continue;
    }
    if (WIFEXITED(st) || WIFSIGNALED(st))
      break;
  }
  int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  fprintf(out, "exit %d\n", code);
  fclose(out);
  return code;
}
