// SPDX-License-Identifier: MIT
// fwlike's allocation helpers, the two ways C-heritage frameworks allocate:
// NEW_ARRAY, a macro expanded at each use (so each use is its own line), and
// safe_malloc, a static inline function in this header that checks for NULL
// (so every caller's allocation is on this header's malloc line once the
// compiler inlines it).
#pragma once

#include <cstdio>
#include <cstdlib>

#define NEW_ARRAY(T, n) (T *) malloc((n) * sizeof(T))

// Marks a kernel (template <class V> void Compute(Graph<V> &, Options)):
// never inlined into its caller, so it stays a function of its own (as a
// large kernel, or one called from several places, does) that profilers
// and --roi can see.
#define FWLIKE_KERNEL __attribute__((noinline))

namespace fwlike {

static inline void *safe_malloc(size_t bytes) {
  void *p = malloc(bytes);
  if (p == nullptr && bytes != 0) {
    fprintf(stderr, "fwlike: error: out of memory allocating %zu bytes\n",
            bytes);
    exit(1);
  }
  return p;
}

// A NEW_ARRAY result checked like safe_malloc's.
template <class T> static inline T *checked(T *p, size_t n) {
  if (p == nullptr && n != 0) {
    fprintf(stderr, "fwlike: error: out of memory allocating %zu bytes\n",
            n * sizeof(T));
    exit(1);
  }
  return p;
}

} // namespace fwlike
