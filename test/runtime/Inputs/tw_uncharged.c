// SPDX-License-Identifier: MIT
// Test program for uncharged.test: first frees NFREE blocks of 64 KiB that
// no site allocated (malloc itself is the start routine of a thread, so the
// allocation's stack has libc frames only, as a library's own allocations
// do), then keeps NKEEP blocks of 64 KiB of one site live at once, filled,
// and prints a checksum that depends only on NKEEP.
// Usage: tw_uncharged NFREE NKEEP
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK (64u << 10)

int main(int argc, char **argv) {
  int nfree = argc > 1 ? atoi(argv[1]) : 64;
  int nkeep = argc > 2 ? atoi(argv[2]) : 48;
  for (int i = 0; i < nfree; i++) {
    pthread_t t;
    void *p = NULL;
    /* malloc(BLOCK) called by start_thread: no user frame on its stack */
    if (pthread_create(&t, NULL, (void *(*)(void *))(void (*)(void))malloc,
                       (void *)(uintptr_t)BLOCK) ||
        pthread_join(t, &p) || !p)
      return 1;
    memset(p, i, BLOCK);
    free(p);
  }
  char **keep = malloc((size_t)nkeep * sizeof(*keep));
  if (!keep)
    return 1;
  for (int i = 0; i < nkeep; i++) {
    keep[i] = malloc(BLOCK); /* the site */
    if (!keep[i])
      return 1;
    memset(keep[i], i + 1, BLOCK);
  }
  uint64_t sum = 0;
  for (int i = 0; i < nkeep; i++)
    for (unsigned j = 0; j < BLOCK; j += 4096)
      sum += (unsigned char)keep[i][j] * (j / 4096 + 1);
  for (int i = 0; i < nkeep; i++)
    free(keep[i]);
  free(keep);
  printf("checksum %llu\n", (unsigned long long)sum);
  return 0;
}
