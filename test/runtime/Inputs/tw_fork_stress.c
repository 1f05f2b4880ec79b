/* SPDX-License-Identifier: MIT */
/* Test program: fork under load. Two threads allocate, touch and free
 * through two sites - `headed` (2 MiB objects; the placement gives them a
 * DRAM head and a slow-tier tail) and `ranked` (small and medium blocks of a
 * ranked DRAM site, charged to the DRAM limit) - while the main thread forks
 * ROUNDS times. Each child allocates through both sites once and exits. A
 * child that has not exited within 5 s is stuck (a lock of the runtime held
 * by another thread at fork, never released in the child: it sleeps in a
 * futex wait and uses no CPU) once it has used no CPU time and not been
 * runnable for 5 s more, or after 120 s in all: then it is killed and
 * counted. A slow one (a loaded machine, Valgrind: it runs) is waited for.
 * TW_FORK_STRESS_HANG=1 is the control: each child deadlocks on a mutex.
 * Usage: tw_fork_stress [ROUNDS [exec]]; with exec a child leaves
 * by exec'ing /bin/true instead of _exit (under helgrind, whose check of the
 * locks an exiting process holds cannot follow glibc's and jemalloc's
 * re-initialisation of their locks in a fork child). Prints the counts and a
 * checksum that does not depend on placement; on stderr the slowest child's
 * seconds and, for a child past 5 s (slow) and a stuck one, each of its
 * threads' state, kernel wait channel and CPU seconds and, with
 * TW_FORK_STRESS_GDB=1, a stuck one's backtraces (gdb -p). */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HEADED_BYTES (2u << 20)

static atomic_int stop;

__attribute__((noinline)) static char *headed(void) {
  return malloc(HEADED_BYTES);
}
__attribute__((noinline)) static char *ranked(size_t n) { return malloc(n); }

/* One round of both sites; returns a placement-independent sum. */
static unsigned long work(unsigned long i) {
  char *h = headed();
  if (!h)
    return 0;
  h[0] = h[HEADED_BYTES - 1] = (char)(i & 0x7f); /* the head and the tail */
  unsigned long s = (unsigned char)h[HEADED_BYTES - 1];
  for (int k = 0; k < 16; k++) { /* mostly bookkeeping: locks held often */
    char *r = ranked(64 + (size_t)((i + k) % 7) * 4096);
    if (!r)
      return 0;
    r[63] = 1;
    s += k == 0 ? (unsigned char)r[63] : 0;
    free(r);
  }
  free(h);
  return s;
}

static void *worker(void *arg) {
  unsigned long sum = 0, i = (unsigned long)arg;
  while (!atomic_load(&stop))
    sum += work(i++) != 0;
  return (void *)sum;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* A slow or stuck child's threads, on stderr (see the head of the file). */
static void dump_child(pid_t pid, const char *what) {
  char path[320], buf[1024];
  snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
  DIR *d = opendir(path);
  struct dirent *e;
  long tick = sysconf(_SC_CLK_TCK);
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    char wchan[128] = "?", state = '?';
    unsigned long ut = 0, st = 0;
    snprintf(path, sizeof(path), "/proc/%d/task/%s/wchan", (int)pid,
             e->d_name);
    FILE *f = fopen(path, "r");
    if (f) {
      if (!fgets(wchan, sizeof(wchan), f))
        strcpy(wchan, "?");
      fclose(f);
    }
    snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid,
             e->d_name);
    f = fopen(path, "r");
    if (f && fgets(buf, sizeof(buf), f)) {
      char *c = strrchr(buf, ')'); /* after the command name */
      if (c)
        sscanf(c + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
               &state, &ut, &st);
    }
    if (f)
      fclose(f);
    fprintf(stderr, "%s child %d thread %s: state %c, wchan %s, cpu %.2f s\n",
            what, (int)pid, e->d_name, state, wchan, (double)(ut + st) / tick);
  }
  if (d)
    closedir(d);
  if (!strcmp(what, "stuck") && getenv("TW_FORK_STRESS_GDB")) {
    snprintf(buf, sizeof(buf),
             "gdb -q -batch -p %d -ex 'thread apply all bt' 1>&2 2>/dev/null",
             (int)pid);
    if (system(buf) != 0)
      fprintf(stderr, "stuck child %d: gdb failed\n", (int)pid);
  }
}

/* The child's CPU ticks so far, and whether it runs or waits for I/O
 * (state R or D); -1: unknown. */
static long child_cpu(pid_t pid, int *running) {
  char path[64], buf[1024], state = '?';
  unsigned long ut = 0, st = 0;
  snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  char *c = f && fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
  int n = c ? sscanf(c + 2,
                     "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
                     &state, &ut, &st)
            : 0;
  if (f)
    fclose(f);
  *running = state == 'R' || state == 'D';
  return n == 3 ? (long)(ut + st) : -1;
}

/* Wait for the child \p pid (see the head of the file); 1: stuck. */
static int wait_child(pid_t pid, int *st, double *secs, int *slow) {
  double t0 = now(), last = 0;
  long cpu = -2;
  pid_t w;
  while ((w = waitpid(pid, st, WNOHANG)) == 0) {
    double t = now();
    if (t - t0 < 5.0) {
      usleep(1000);
      continue;
    }
    int running;
    long c = child_cpu(pid, &running);
    if (cpu == -2) {
      dump_child(pid, "slow");
      ++*slow;
    }
    if (c != cpu || running) {
      cpu = c;
      last = t;
    }
    if (t - last >= 5.0 || t - t0 >= 120.0)
      break;
    usleep(100000);
  }
  *secs = now() - t0;
  return w == 0;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 300;
  int exec_true = argc > 2 && !strcmp(argv[2], "exec");
  pthread_t t[2];
  for (unsigned long k = 0; k < 2; k++)
    pthread_create(&t[k], NULL, worker, (void *)(k * 1000));
  int stuck = 0, failed = 0, slow = 0;
  unsigned long check = 0;
  double slowest = 0;
  for (int i = 0; i < rounds; i++) {
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      return 2;
    }
    if (pid == 0 && getenv("TW_FORK_STRESS_HANG")) { /* the control */
      static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
      pthread_mutex_lock(&m);
      pthread_mutex_lock(&m); /* never returns */
      _exit(3);
    }
    if (pid == 0) { /* allocate through both sites, no atexit work */
      int ok = work((unsigned long)i) == (unsigned long)(i & 0x7f) + 1;
      if (ok && exec_true) /* leave by exec: no exit-time lock check */
        execl("/bin/true", "true", (char *)NULL);
      _exit(ok ? 0 : 1);
    }
    int st = 0;
    double secs;
    int hung = wait_child(pid, &st, &secs, &slow);
    if (secs > slowest)
      slowest = secs;
    if (hung) {
      stuck++;
      dump_child(pid, "stuck");
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
    } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      failed++;
    check += (unsigned long)(i & 0x7f) + 1;
  }
  atomic_store(&stop, 1);
  unsigned long done = 0;
  for (int k = 0; k < 2; k++) {
    void *r;
    pthread_join(t[k], &r);
    done += (unsigned long)r;
  }
  printf("fork rounds: %d\nchildren stuck: %d\nchildren failed: %d\n", rounds,
         stuck, failed);
  printf("worker rounds done: %s\nchecksum: %lx\n", done > 0 ? "yes" : "no",
         check);
  fprintf(stderr, "slowest child: %.3f s, %d past 5 s\n", slowest, slow);
  return 0;
}
