/* SPDX-License-Identifier: MIT */
/*
 * Layer 4 (entry points). dlclose: after a library is unloaded, another one
 * may be loaded at its addresses, and the module map (tw_stack.c), the
 * raw-stack table and the fast path's trusted keys would name its call
 * paths after the library that was there before - matching the wrong
 * placement sites. So the interposed dlclose tells the sites layer which
 * modules are gone and has the fast path validate its keys again.
 */
#define _GNU_SOURCE
#include "tw_paths.h"

#include <dlfcn.h>

#define TW_EXPORT __attribute__((visibility("default")))

TW_EXPORT int dlclose(void *handle) {
  static int (*real)(void *);
  if (!real)
    real = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
  int r = real(handle);
  if (r == 0 && (tw_mode_now == TW_MODE_PLACE || tw_mode_now == TW_MODE_CENSUS)) {
    tw_in_core++;
    if (tw_modules_closed()) /* (a dlclose that unloaded nothing, or only
                                modules no stack went through, changes no
                                site's frames) */
      tw_fast_revalidate();
    tw_in_core--;
  }
  return r;
}

