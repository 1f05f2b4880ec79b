/* SPDX-License-Identifier: MIT */
/* A statically linked test program: LD_PRELOAD cannot apply to it. It
 * allocates and prints a checksum so tests can see it ran unchanged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  unsigned long sum = 0;
  for (int i = 0; i < 1000; i++) {
    unsigned char *p = malloc(100 + i);
    memset(p, i & 0xff, 100 + i);
    sum = sum * 31 + p[i];
    free(p);
  }
  printf("checksum: %lx\n", sum);
  return 0;
}
