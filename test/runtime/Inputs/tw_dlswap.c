/* SPDX-License-Identifier: MIT */
/* Test program: dlopen A, allocate through it, dlclose A, dlopen B (loaded
 * where A was), allocate through B. A and B are the same plugin code built
 * as two libraries (argv[1], argv[2]), so B's call path has A's return
 * addresses and offsets: only the module tells them apart. Prints whether B
 * landed at A's address and a checksum. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned once(const char *lib, void **base) {
  void *h = dlopen(lib, RTLD_NOW);
  if (!h) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    exit(1);
  }
  void *(*alloc)(size_t) = (void *(*)(size_t))dlsym(h, "tw_plugin_alloc");
  *base = (void *)alloc;
  unsigned char *p = alloc(1u << 20);
  unsigned v = p[4321];
  free(p);
  dlclose(h);
  return v;
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  void *a, *b;
  unsigned s = once(argv[1], &a);
  s += once(argv[2], &b);
  printf("B where A was: %s\nchecksum: %x\n", a == b ? "yes" : "no", s);
  return 0;
}
