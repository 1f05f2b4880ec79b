// SPDX-License-Identifier: MIT
// Test input: a program linked against libtwsoname.so.1 (a symlink to
// libtwsoname.so.1.2.3, soname_lib.c) whose arrays are allocated inside the
// library (calloc: 1 MiB, anonymous mmap: 2 MiB) and by its own anonymous
// mmap (512 KiB). Every array is written once per 64-byte line and summed,
// then released. Prints the sum (the same with and without a placement).
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

double *twso_vector(size_t n);
double *twso_mapped(size_t n);

__attribute__((noinline)) static double *map_here(size_t n) {
  void *p = mmap(NULL, n * sizeof(double), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  __asm__ volatile("" ::: "memory");
  return p == MAP_FAILED ? NULL : p;
}

static double fill(double *a, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i += 8)
    a[i] = (double)i;
  for (size_t i = 0; i < n; i += 8)
    s += a[i];
  return s;
}

int main(void) {
  size_t nv = (1u << 20) / 8, nm = (2u << 20) / 8, nh = (512u << 10) / 8;
  double *v = twso_vector(nv), *m = twso_mapped(nm), *h = map_here(nh);
  if (!v || !m || !h)
    return 1;
  printf("sum %.0f\n", fill(v, nv) + fill(m, nm) + fill(h, nh));
  free(v);
  munmap(m, nm * sizeof(double));
  munmap(h, nh * sizeof(double));
  return 0;
}
