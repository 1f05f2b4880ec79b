/* SPDX-License-Identifier: MIT */
/* wrapper-refactor.c: xalloc's definition, apart from its prototype. */
#include "util.h"

#include <stdio.h>
#include <stdlib.h>

void *xalloc(size_t n) {
  void *p = malloc(n); /* line 9 */
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  return p;
}
