/* SPDX-License-Identifier: MIT */
/* Test program: calls system() (sh, which runs grep) before its own big
 * allocation, as a framework that shells out at start-up does. Its site is
 * tw_system.c:16 (1 MiB, filled). Usage: tw_system */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  /* the child runs before this process has allocated anything big */
  int rc = system("echo tierwise | grep -c tierwise > /dev/null");
  if (rc != 0)
    return 1;
  size_t n = 1 << 20;
  unsigned long sum = 0;
  unsigned char *a = malloc(n); /* line 16: the program's own site */
  memset(a, 7, n);
  for (size_t i = 0; i < n; i += 4096)
    sum += a[i];
  printf("checksum: %lx\n", sum);
  free(a);
  return 0;
}
