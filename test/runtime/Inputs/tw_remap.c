/* SPDX-License-Identifier: MIT */
/*
 * A program that grows and shrinks its anonymous mappings with mremap
 * (remap.test), as arenas and vectors built on mmap do: each round maps
 * 32 MiB at one site (`region`), fills it, grows it to 64 MiB
 * (MREMAP_MAYMOVE) and fills the new half, shrinks it to 48 MiB, then
 * mallocs and frees 4 MiB blocks (glibc maps them, possibly where the
 * mapping was) and unmaps it. Prints a checksum of what it read back.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MB ((size_t)1 << 20)

__attribute__((noinline)) static char *region(size_t n) {
  return mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
              0);
}

int main(void) {
  unsigned long sum = 0;
  for (int round = 0; round < 12; round++) {
    char *p = region(32 * MB);
    if (p == MAP_FAILED)
      return 1;
    memset(p, round + 1, 32 * MB);
    char *q = mremap(p, 32 * MB, 64 * MB, MREMAP_MAYMOVE);
    if (q == MAP_FAILED)
      return 2;
    for (size_t i = 0; i < 64 * MB; i += 4096) /* the new half reads 0 */
      sum += (unsigned char)q[i];
    memset(q + 32 * MB, round + 2, 32 * MB);
    char *r = mremap(q, 64 * MB, 48 * MB, 0);
    if (r == MAP_FAILED)
      return 3;
    sum += (unsigned char)r[5] + (unsigned char)r[40 * MB];
    for (int k = 0; k < 8; k++) {
      char *b = malloc(4 * MB);
      memset(b, 3, 4 * MB);
      sum += (unsigned char)b[100];
      free(b);
    }
    if (munmap(r, 48 * MB))
      return 4;
  }
  printf("checksum %lu\n", sum);
  return 0;
}
