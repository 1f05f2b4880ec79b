// SPDX-License-Identifier: MIT
// Test input: the parent allocates 1 MiB, forks a child that allocates 2 MiB
// and execs nothing; with children followed each process has its own raw
// profile.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  char *a = malloc(1 << 20);
  memset(a, 1, 1 << 20);
  pid_t pid = fork();
  if (pid == 0) {
    char *b = malloc(2 << 20);
    memset(b, 2, 2 << 20);
    printf("child %d\n", b[5]);
    free(b);
    return 0;
  }
  int status;
  waitpid(pid, &status, 0);
  printf("parent %d child status %d\n", a[5], WEXITSTATUS(status));
  free(a);
  return 0;
}
