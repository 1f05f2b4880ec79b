/* SPDX-License-Identifier: MIT */
/* Checks the runtime's size parser (runtime/common/tw_size.c) against the
 * shared vectors (size-vectors.txt: INPUT, the last tab, then bytes or
 * "error"). Prints one FAIL line per disagreement and "sizes: N vectors ok"
 * or "sizes: N failed". Usage: tw_size_check < size-vectors.txt */
#include "tw_size.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  char line[512];
  int n = 0, failed = 0;
  while (fgets(line, sizeof(line), stdin)) {
    line[strcspn(line, "\n")] = 0;
    char *tab = strrchr(line, '\t');
    if (line[0] == '#' || !tab)
      continue;
    *tab = 0;
    const char *want = tab + 1;
    uint64_t v = 0;
    char got[32] = "error";
    if (tw_parse_size(line, &v) == 0)
      snprintf(got, sizeof(got), "%" PRIu64, v);
    n++;
    if (strcmp(got, want)) {
      printf("FAIL: \"%s\": tw_parse_size gives %s, expected %s\n", line, got,
             want);
      failed++;
    }
  }
  if (failed)
    printf("sizes: %d failed\n", failed);
  else
    printf("sizes: %d vectors ok\n", n);
  return failed != 0;
}
