/* SPDX-License-Identifier: MIT */
/* fork isolation of slow-tier data: a 4 MiB array (placed in pmem by the
 * test's placement) is filled with 1s; the forked child overwrites it with
 * 2s and allocates more, 20 times over; the parent must still see only 1s
 * and the child its own 2s. memkind maps pmem MAP_SHARED, so without the
 * runtime's fork handling parent and child would share the array.
 * Then the same array after fork is overwritten by the parent at once (the
 * child must still see it as it was at fork: the pages stay shared until
 * the child has copied them), and a child that allocated forks again (bash
 * runs a pipeline in a command substitution so: `y=$(echo hi | tr a-z A-Z)`
 * crashed its echo). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N (4u << 20)

static int all(const unsigned char *a, unsigned char v) {
  for (size_t i = 0; i < N; i++)
    if (a[i] != v)
      return 0;
  return 1;
}

int main(void) {
  unsigned char *a = malloc(N);
  memset(a, 1, N);
  int bad = 0;
  for (int round = 0; round < 20; round++) {
    pid_t pid = fork();
    if (pid == 0) {
      int ok = all(a, 1);
      memset(a, 2, N);
      char *more = malloc(N);
      memset(more, 3, N);
      ok = ok && all(a, 2);
      free(more);
      _exit(ok ? 0 : 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      bad++;
    if (!all(a, 1))
      bad += 100;
  }
  printf("fork rounds failed: %d\n", bad);
  /* (64 MiB: the child's copy takes longer than a time slice, so the
   * parent runs while it copies even where both share one CPU) */
  size_t big_n = (size_t)64 << 20;
  unsigned char *big = malloc(big_n);
  memset(big, 1, big_n);
  int torn = 0, nested = 0;
  for (int round = 0; round < 20; round++) {
    pid_t pid = fork();
    if (pid == 0)
      _exit(memchr(big, 9, big_n) ? 1 : 0);
    for (size_t i = big_n; i >= 4096; i -= 4096)
      big[i - 1] = 9; /* from the end: the child copies from the start */
    int st = 0;
    waitpid(pid, &st, 0);
    torn += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    memset(big, 1, big_n);
  }
  free(big);
  printf("children that saw the parent's later writes: %d\n", torn);
  for (int round = 0; round < 10; round++) {
    pid_t pid = fork();
    if (pid == 0) {
      memset(a, 4, N);
      unsigned char *b = malloc(N);
      memset(b, 5, N);
      pid_t grand = fork();
      if (grand == 0)
        _exit(all(a, 4) && all(b, 5) ? 0 : 1);
      memset(a, 6, N);
      memset(b, 7, N);
      int st = 0;
      waitpid(grand, &st, 0);
      _exit(WIFEXITED(st) && WEXITSTATUS(st) == 0 && all(a, 6) ? 0 : 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    nested += !WIFEXITED(st) || WEXITSTATUS(st) != 0 || !all(a, 1);
  }
  printf("nested forks failed: %d\n", nested);
  free(a);
  return bad || torn || nested;
}
