// SPDX-License-Identifier: MIT
// Test input: a shared library loaded with dlopen by dl_main; its function
// allocates and writes a 1 MiB array (the site is inside this library).
#include <stdlib.h>
#include <string.h>

char *tw_dl_make(size_t n) {
  char *p = malloc(n);
  for (size_t i = 0; i < n; i += 64)
    p[i] = (char)i;
  return p;
}
