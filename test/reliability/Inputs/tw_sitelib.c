/* SPDX-License-Identifier: MIT */
/* Library of the reliability tests that owns allocation sites: tw_faults
 * dlopens it, allocates through it, dlcloses it and frees the blocks after
 * the library is gone. */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void *tw_sitelib_alloc(size_t n, int fill) {
  void *p = malloc(n);
  if (p)
    memset(p, fill, n);
  return p;
}
