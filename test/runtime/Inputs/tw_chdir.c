/* SPDX-License-Identifier: MIT */
/*
 * A program that changes its directory while it runs (chdir.test): it
 * allocates, moves to DIR, allocates and frees there, and ends.
 *
 *   tw_chdir DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  char *a = malloc(1 << 20);
  memset(a, 1, 1 << 20);
  if (chdir(argv[1]))
    return 3;
  char *b = malloc(1 << 16);
  memset(b, 2, 1 << 16);
  printf("sum %d\n", a[100] + b[100]);
  free(a);
  free(b);
  return 0;
}
