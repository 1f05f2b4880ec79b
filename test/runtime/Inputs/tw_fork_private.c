/* SPDX-License-Identifier: MIT */
/* fork isolation of slow-tier data: a 4 MiB array (placed in pmem by the
 * test's placement) is filled with 1s; the forked child overwrites it with
 * 2s and allocates more, 20 times over; the parent must still see only 1s
 * and the child its own 2s. memkind maps pmem MAP_SHARED, so without the
 * runtime's fork handling parent and child would share the array. */
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
  free(a);
  return bad != 0;
}
