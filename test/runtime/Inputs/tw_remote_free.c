/* SPDX-License-Identifier: MIT */
/*
 * Blocks freed by a thread that never allocated (memkind-own.test): the
 * main thread allocates 100 blocks at one site (`make`), a second thread
 * frees them - its first calls into the tier's allocator, which then maps
 * its per-thread state.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *blocks[100];

__attribute__((noinline)) static char *make(size_t n) { return malloc(n); }

static void *freer(void *arg) {
  (void)arg;
  for (int i = 0; i < 100; i++)
    free(blocks[i]);
  return NULL;
}

int main(void) {
  for (int i = 0; i < 100; i++) {
    blocks[i] = make(1000 + (size_t)i);
    memset(blocks[i], 1, 1000);
  }
  pthread_t t;
  if (pthread_create(&t, NULL, freer, NULL) || pthread_join(t, NULL))
    return 1;
  puts("ok");
  return 0;
}
