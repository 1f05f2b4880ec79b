// SPDX-License-Identifier: MIT
// Test input: dlopens libtw_dltest.so (path in argv[1]) after start-up and
// calls it, then unloads it: sites in dlopened modules keep their module.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  void *h = dlopen(argv[1], RTLD_NOW);
  if (!h) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  char *(*make)(size_t) = (char *(*)(size_t))dlsym(h, "tw_dl_make");
  char *p = make(1 << 20);
  printf("%d\n", p[64]);
  free(p);
  dlclose(h);
  return 0;
}
