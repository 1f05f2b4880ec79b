/* SPDX-License-Identifier: MIT */
/* Test program: 4 threads allocate, touch and free blocks of several sizes
 * (one big array per thread from one site), then the process forks and the
 * child allocates too. Prints a checksum independent of placement. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BIG (2u << 20)

static void *worker(void *arg) {
  unsigned long id = (unsigned long)arg, sum = 0;
  long *big = malloc(BIG); /* site: per-thread big array */
  for (size_t i = 0; i < BIG / sizeof(long); i++)
    big[i] = (long)(i + id);
  for (int i = 0; i < 20000; i++) {
    char *p = malloc(8 + (i % 100));
    memset(p, (int)id, 8);
    sum += (unsigned char)p[0];
    p = realloc(p, 200 + i % 50);
    free(p);
  }
  sum += (unsigned long)big[BIG / sizeof(long) - 1];
  fprintf(stderr, "object big%lu %p %u\n", id, (void *)big, BIG);
  free(big);
  return (void *)sum;
}

int main(void) {
  pthread_t t[4];
  unsigned long total = 0;
  for (unsigned long i = 0; i < 4; i++)
    pthread_create(&t[i], NULL, worker, (void *)i);
  for (int i = 0; i < 4; i++) {
    void *r;
    pthread_join(t[i], &r);
    total += (unsigned long)r;
  }
  pid_t pid = fork();
  if (pid == 0) {
    unsigned long s = (unsigned long)worker((void *)7);
    _exit(s == 0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  printf("child: %d\nchecksum: %lx\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1,
         total);
  return 0;
}
