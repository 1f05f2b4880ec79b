/* SPDX-License-Identifier: MIT */
/*
 * Threads cancelled while they allocate (cancel.test): ROUNDS times, a
 * worker mallocs and frees 64-316 KiB blocks in a loop with a cancellation
 * point every 16 blocks, and the main thread cancels it after 2-4 ms, joins
 * it, and allocates itself. A runtime that reaches a cancellation point
 * (open, write) holding a lock inside malloc or free is cancelled there:
 * the lock stays held and the main thread waits for it forever.
 *
 *   tw_cancel ROUNDS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) static char *block(size_t n) { return malloc(n); }

static void *worker(void *arg) {
  (void)arg;
  for (unsigned long i = 0;; i++) {
    char *p = block(65536 + (i % 64) * 4096);
    p[0] = 1;
    free(p);
    if (i % 16 == 0)
      pthread_testcancel();
  }
  return NULL;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 100;
  unsigned long sum = 0;
  for (int r = 0; r < rounds; r++) {
    pthread_t t;
    int e = pthread_create(&t, NULL, worker, NULL);
    if (e) {
      fprintf(stderr, "tw_cancel: pthread_create: %s\n", strerror(e));
      return 1;
    }
    usleep(2000 + (r % 7) * 300);
    pthread_cancel(t);
    pthread_join(t, NULL);
    char *p = block(100000);
    p[5] = 2;
    sum += (unsigned char)p[5];
    free(p);
  }
  printf("rounds %d sum %lu\n", rounds, sum);
  return 0;
}
