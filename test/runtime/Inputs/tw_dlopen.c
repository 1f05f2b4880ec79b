/* SPDX-License-Identifier: MIT */
/* Test program: dlopen()s tw_plugin.so (argv[1]) after the runtime started
 * and allocates through it; prints the object and a checksum. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  void *h = dlopen(argc > 1 ? argv[1] : "tw_plugin.so", RTLD_NOW);
  if (!h) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  void *(*alloc)(size_t) = (void *(*)(size_t))dlsym(h, "tw_plugin_alloc");
  unsigned char *p = alloc(3u << 20);
  fprintf(stderr, "object plugin %p %u\n", (void *)p, 3u << 20);
  printf("checksum: %x\n", p[12345] + p[(3u << 20) - 1]);
  free(p);
  dlclose(h);
  return 0;
}
