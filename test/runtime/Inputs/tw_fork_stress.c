/* SPDX-License-Identifier: MIT */
/* Test program: fork under load. Two threads allocate, touch and free
 * through two sites - `headed` (2 MiB objects; the placement gives them a
 * DRAM head and a slow-tier tail) and `ranked` (small and medium blocks of a
 * ranked DRAM site, charged to the DRAM limit) - while the main thread forks
 * ROUNDS times. Each child allocates through both sites once and exits; a
 * child that has not exited within 5 s is stuck (a lock of the runtime held
 * by another thread at fork, never released in the child), killed and
 * counted. Usage: tw_fork_stress [ROUNDS [exec]]; with exec a child leaves
 * by exec'ing /bin/true instead of _exit (under helgrind, whose check of the
 * locks an exiting process holds cannot follow glibc's and jemalloc's
 * re-initialisation of their locks in a fork child). Prints the counts and a
 * checksum that does not depend on placement. */
#define _GNU_SOURCE
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

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 300;
  int exec_true = argc > 2 && !strcmp(argv[2], "exec");
  pthread_t t[2];
  for (unsigned long k = 0; k < 2; k++)
    pthread_create(&t[k], NULL, worker, (void *)(k * 1000));
  int stuck = 0, failed = 0;
  unsigned long check = 0;
  for (int i = 0; i < rounds; i++) {
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      return 2;
    }
    if (pid == 0) { /* allocate through both sites, no atexit work */
      int ok = work((unsigned long)i) == (unsigned long)(i & 0x7f) + 1;
      if (ok && exec_true) /* leave by exec: no exit-time lock check */
        execl("/bin/true", "true", (char *)NULL);
      _exit(ok ? 0 : 1);
    }
    int st = 0;
    double t0 = now();
    pid_t w;
    while ((w = waitpid(pid, &st, WNOHANG)) == 0 && now() - t0 < 5.0)
      usleep(1000);
    if (w == 0) {
      stuck++;
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
  return 0;
}
