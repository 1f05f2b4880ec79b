/* SPDX-License-Identifier: MIT */
/* test/bench/room_pair.py's program: K malloc/free pairs of SIZE bytes from
 * one site (make), each block's page K written once and read back.
 * Usage: room_pair K SIZE */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static char *make(size_t n) { return malloc(n); }

int main(int argc, char **argv) {
  int k = argc > 1 ? atoi(argv[1]) : 100;
  size_t size = argc > 2 ? strtoull(argv[2], 0, 10) : (4u << 20);
  unsigned long sum = 0;
  for (int i = 0; i < k; i++) {
    char *p = make(size);
    if (!p)
      return 1;
    p[(size_t)i % size] = (char)i;
    sum += (unsigned char)p[(size_t)i % size];
    free(p);
  }
  printf("checksum: %lx\n", sum);
  return 0;
}
