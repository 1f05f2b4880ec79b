/* SPDX-License-Identifier: MIT */
/* A job with a helper process, like an MPI program in singleton mode whose
 * library starts a daemon (Open MPI's orted): `tw_job_parent HELPER` forks
 * and execs HELPER (inheriting LD_PRELOAD and the TIERWISE_* variables)
 * before its own work, and exits while the helper still runs (the helper
 * waits for the pipe to close, then allocates and works on). `tw_job_parent
 * -` does the same work without a helper; `tw_job_parent HELPER wait` waits
 * for the helper to end before it exits (as MPI_Finalize waits for its
 * daemon). Prints a checksum that depends only on the result. Sites: main's
 * three arrays (values, edges, next). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NV (1u << 16)
#define NE (1u << 19)

static int helper_pipe = -1;
static pid_t helper_pid = -1;

static void start_helper(const char *helper) {
  int fd[2];
  if (pipe(fd))
    exit(2);
  pid_t pid = fork();
  if (pid < 0)
    exit(2);
  if (pid == 0) {
    close(fd[1]);
    dup2(fd[0], 0);
    execl(helper, helper, (char *)NULL);
    _exit(127);
  }
  close(fd[0]);
  /* fd[1] stays open until we exit (or close it): the helper's signal */
  helper_pipe = fd[1];
  helper_pid = pid;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "-"))
    start_helper(argv[1]);
  uint32_t *edges = malloc(NE * sizeof *edges);
  double *values = malloc(NV * sizeof *values);
  double *next = malloc(NV * sizeof *next);
  if (!edges || !values || !next)
    return 1;
  uint32_t x = 12345;
  for (uint32_t e = 0; e < NE; e++) {
    x = x * 1103515245u + 12345u;
    edges[e] = (x >> 8) % NV;
  }
  for (uint32_t v = 0; v < NV; v++)
    values[v] = 1.0;
  for (int it = 0; it < 4; it++) {
    memset(next, 0, NV * sizeof *next);
    for (uint32_t e = 0; e < NE; e++)
      next[edges[e]] += values[e % NV] * 0.5;
    double *t = values;
    values = next;
    next = t;
  }
  uint64_t sum = 0;
  for (uint32_t v = 0; v < NV; v++)
    sum = sum * 31 + (uint64_t)(values[v] * 1024.0);
  printf("checksum: %016llx\n", (unsigned long long)sum);
  free(edges);
  free(values);
  free(next);
  if (argc > 2 && !strcmp(argv[2], "wait") && helper_pid > 0) {
    close(helper_pipe);
    waitpid(helper_pid, NULL, 0);
  }
  return 0;
}
