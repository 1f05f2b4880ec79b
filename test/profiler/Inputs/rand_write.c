// SPDX-License-Identifier: MIT
// Test input: writes one word in each 64-byte line of a zeroed 4 MiB array,
// visiting the 65536 lines in a pseudo-random order (a full-period LCG is a
// permutation). Every line is dirtied exactly once: with a 1 MiB LLC that is
// one store miss and one writeback per line (65536 each).
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  enum { LINES = 65536, WORDS_PER_LINE = 8 };
  long *a = calloc((size_t)LINES * WORDS_PER_LINE, sizeof(long));
  unsigned x = 12345;
  for (unsigned i = 0; i < LINES; i++) {
    x = (x * 1103515245u + 12345u) & (LINES - 1);
    a[(size_t)x * WORDS_PER_LINE] = i;
  }
  printf("last %ld\n", a[(size_t)x * WORDS_PER_LINE]);
  free(a);
  return 0;
}
