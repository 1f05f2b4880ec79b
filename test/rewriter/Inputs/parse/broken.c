/* SPDX-License-Identifier: MIT */
/* Does not parse with any flags: its site is listed with the error. */
#include <stdlib.h>

int *broken(size_t n) {
  int *p = malloc(n) /* missing ';' */
  return p;
}
