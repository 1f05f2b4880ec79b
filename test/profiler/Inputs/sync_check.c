/* SPDX-License-Identifier: MIT */
/* Test program for the sample backend (sample-backend.test): two threads
 * hand a token back and forth through a condition variable and a
 * semaphore that live in a 64 KiB object, the only one the sampler can
 * draw, so that its pages are armed hundreds of times a second. A wait
 * that reaches the kernel while the page holding its futex word is armed
 * fails with EFAULT, which glibc treats as fatal, unless the runtime keeps
 * the page unarmed for the call (tw_touch_io.c). argv[1]: hand-overs. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  pthread_mutex_t m;
  pthread_cond_t c;
  sem_t s;
  int turn;
  char pad[64 << 10];
} shared_t;

static shared_t *sh;
static int rounds;

static void *other(void *arg) {
  (void)arg;
  for (int i = 0; i < rounds; i++) {
    pthread_mutex_lock(&sh->m);
    while (sh->turn != 1)
      pthread_cond_wait(&sh->c, &sh->m);
    sh->turn = 0;
    pthread_cond_signal(&sh->c);
    pthread_mutex_unlock(&sh->m);
    sem_post(&sh->s);
  }
  return NULL;
}

int main(int argc, char **argv) {
  rounds = argc > 1 ? atoi(argv[1]) : 20000;
  sh = calloc(1, sizeof(*sh));
  pthread_mutex_init(&sh->m, NULL);
  pthread_cond_init(&sh->c, NULL);
  sem_init(&sh->s, 0, 0);
  pthread_t t;
  pthread_create(&t, NULL, other, NULL);
  for (int i = 0; i < rounds; i++) {
    pthread_mutex_lock(&sh->m);
    sh->turn = 1;
    pthread_cond_signal(&sh->c);
    while (sh->turn != 0)
      pthread_cond_wait(&sh->c, &sh->m);
    pthread_mutex_unlock(&sh->m);
    sem_wait(&sh->s);
  }
  pthread_join(t, NULL);
  printf("hand-overs: %d\n", rounds);
  free(sh);
  return 0;
}
