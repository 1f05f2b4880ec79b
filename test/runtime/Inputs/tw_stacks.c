/* SPDX-License-Identifier: MIT */
/* Test program: more distinct call paths than the runtime's raw-stack table
 * holds (2^17 slots). walk() recurses LEVELS deep, at each level through one
 * of eight call sites chosen by three bits of the path number, and allocates
 * at the bottom: 8^LEVELS distinct return-address sequences. Usage:
 * tw_stacks LEVELS (default 6: 262,144). Prints how many blocks were
 * allocated and a checksum. */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;
static unsigned long *volatile keep;

__attribute__((noinline)) static unsigned long leaf(unsigned long path) {
  unsigned long *p = malloc(16);
  p[0] = path;
  keep = p; /* escapes: the allocation stays */
  unsigned long v = keep[0] & 1;
  free(p);
  return v;
}

/* Eight call sites per level: the return address in walk's caller frame
 * says which one, so LEVELS levels make 8^LEVELS distinct raw stacks. */
__attribute__((noinline)) static unsigned long walk(unsigned long path,
                                                    int level) {
  if (level == 0)
    return leaf(path);
  unsigned long r = 0;
  switch ((path >> (3 * (level - 1))) & 7) {
  case 0: r = walk(path, level - 1) + 0; break;
  case 1: r = walk(path, level - 1) + 1; break;
  case 2: r = walk(path, level - 1) + 2; break;
  case 3: r = walk(path, level - 1) + 3; break;
  case 4: r = walk(path, level - 1) + 4; break;
  case 5: r = walk(path, level - 1) + 5; break;
  case 6: r = walk(path, level - 1) + 6; break;
  default: r = walk(path, level - 1) + 7; break;
  }
  sink = r;
  return r;
}

int main(int argc, char **argv) {
  int levels = argc > 1 ? atoi(argv[1]) : 6;
  unsigned long n = 1ul << (3 * levels), sum = 0;
  for (unsigned long path = 0; path < n; path++)
    sum += walk(path, levels);
  printf("blocks: %lu\nchecksum: %lx\n", n, sum);
  return 0;
}
