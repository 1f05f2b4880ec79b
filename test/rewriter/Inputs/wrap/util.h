/* SPDX-License-Identifier: MIT */
/* wrapper-refactor.c: a C wrapper declared here and defined in util.c, and
 * an inline one. */
#pragma once
#include <stdlib.h>

void *xalloc(size_t n);

static inline void *safe_malloc(size_t n) {
  void *p = malloc(n); /* line 10 */
  if (!p)
    abort();
  return p;
}
