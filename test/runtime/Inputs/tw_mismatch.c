/* SPDX-License-Identifier: MIT */
/* Test program: two call paths that share the placement fast path's cache
 * key (the same helper's malloc, called at the same stack depth through
 * path_a and path_b, whose frames are alike) but are different sites:
 * path_a allocates 24-byte blocks, path_b 40-byte ones, so a test can tell
 * the sites apart by bytes. Usage: tw_mismatch [N] (N calls of each path,
 * path_a's first). */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static void *helper(size_t n) { return malloc(n); }

/* Not tail calls (the asm uses p after the call): each path keeps its frame,
 * so the two sites differ in their second frame. */
__attribute__((noinline)) static void *path_a(size_t n) {
  void *p = helper(n);
  __asm__ volatile("" : : "r"(p) : "memory");
  return p;
}
__attribute__((noinline)) static void *path_b(size_t n) {
  void *p = helper(n);
  __asm__ volatile("" : : "r"(p) : "memory");
  return p;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3000;
  unsigned long sum = 0;
  for (int i = 0; i < n; i++) {
    char *p = path_a(24);
    p[0] = (char)i;
    sum += (unsigned char)p[0];
    free(p);
  }
  for (int i = 0; i < n; i++) {
    char *p = path_b(40);
    p[39] = (char)(i * 3);
    sum += (unsigned char)p[39];
    free(p);
  }
  printf("checksum: %lx\n", sum);
  return 0;
}
