/* SPDX-License-Identifier: MIT */
/*
 * Control of check_sanitizers.sh's memcheck steps: a program with one
 * planted heap bug, run with its block placed in pmem. memcheck must report
 * it, which it can only do when the preloaded runtime announces its memkind
 * blocks to it (tw_announce): without that a pmem block is plain mapped
 * memory to memcheck, defined and addressable before and after free.
 *
 *   tw_vgbug uaf      reads a 64 KiB block after freeing it
 *   tw_vgbug uninit   branches on a byte of a fresh malloc'ed block
 *
 * Prints `result: N`; exits 0 (memcheck's --error-exitcode says the rest).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIZE (64 << 10)

/* The site: one frame of its own, so that it is not inlined away. */
__attribute__((noinline)) static unsigned char *bug_block(void) {
  return malloc(SIZE);
}

int main(int argc, char **argv) {
  if (argc != 2 || (strcmp(argv[1], "uaf") && strcmp(argv[1], "uninit"))) {
    fprintf(stderr, "usage: tw_vgbug uaf|uninit\n");
    return 2;
  }
  unsigned char *volatile p = bug_block();
  int result = 0;
  if (!p)
    return 1;
  if (!strcmp(argv[1], "uaf")) {
    memset(p, 7, SIZE);
    free(p);
    result = p[SIZE / 2]; /* the bug: use after free */
  } else {
    if (p[100]) /* the bug: uninitialised */
      result = 1;
    free(p);
  }
  printf("result: %d\n", result);
  return 0;
}
