/* SPDX-License-Identifier: MIT */
/* Test plugin, dlopen'ed by tw_dlopen: allocates a big array in its own
 * module, so its site's frames name this module (module map refresh). */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void *tw_plugin_alloc(size_t n) {
  void *p = malloc(n);
  memset(p, 5, n);
  return p;
}

/* A second call site (tw_dlloop): a small block. */
__attribute__((noinline)) void *tw_plugin_small(void) {
  void *p = malloc(64);
  memset(p, 7, 64);
  return p;
}
