/* SPDX-License-Identifier: MIT */
/* Test program linked with libtierwise (no LD_PRELOAD), for the setuid
 * test: run setuid, it must ignore every TIERWISE_* variable (no run report
 * written, no pmem directory used). Allocates from the pmem tier and with
 * malloc; prints a checksum and the tier the pmem block landed in. */
#include "tierwise.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  unsigned char *a = tw_malloc(TW_TIER_PMEM, 1 << 20);
  unsigned char *b = malloc(1 << 20);
  memset(a, 3, 1 << 20);
  memset(b, 4, 1 << 20);
  printf("tier: %s\nchecksum: %x\n", tw_tier_name(tw_tier_of(a)),
         a[100] * 256 + b[200]);
  free(a);
  free(b);
  return 0;
}
