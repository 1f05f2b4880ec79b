// SPDX-License-Identifier: MIT
// Test input: a shared library built as libtwsoname.so.1.2.3 with SONAME
// libtwsoname.so.1 (the loader opens it through the symlink libtwsoname.so.1,
// as it does libcjson.so.1 -> libcjson.so.1.7.15). Its two functions allocate
// the caller's arrays inside the library: one with calloc, one with an
// anonymous mmap (site_identity.test).
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>

__attribute__((noinline)) double *twso_vector(size_t n) {
  double *p = calloc(n, sizeof(double));
  __asm__ volatile("" ::: "memory"); // keep this frame (no tail call)
  return p;
}

__attribute__((noinline)) double *twso_mapped(size_t n) {
  void *p = mmap(NULL, n * sizeof(double), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  __asm__ volatile("" ::: "memory");
  return p == MAP_FAILED ? NULL : p;
}
