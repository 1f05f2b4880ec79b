/* SPDX-License-Identifier: MIT */
/* Test program: dlopen()s and dlclose()s one plugin (argv[1]) argv[2] times
 * (default 1000), allocating through it each time (tw_plugin_alloc, one
 * 4 KiB block, and a second call site, tw_plugin_small: 64 bytes), so that
 * every allocation must be counted under the plugin's module-relative
 * sites however often it was unloaded and mapped again. With argv[3],
 * another library is held open while the plugin loads on every other
 * iteration, so that the plugin is mapped at another address then. Prints
 * the count of loads and a checksum; on stderr how many landed where the
 * first one was and how many elsewhere. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int n = argc > 2 ? atoi(argv[2]) : 1000;
  void *first = NULL;
  int same = 0;
  unsigned sum = 0;
  for (int i = 0; i < n; i++) {
    void *other = argc > 3 && i % 2 ? dlopen(argv[3], RTLD_NOW) : NULL;
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) {
      fprintf(stderr, "dlopen: %s\n", dlerror());
      return 1;
    }
    void *(*alloc)(size_t) = (void *(*)(size_t))dlsym(h, "tw_plugin_alloc");
    void *(*small)(void) = (void *(*)(void))dlsym(h, "tw_plugin_small");
    if (!first)
      first = (void *)alloc;
    same += (void *)alloc == first;
    unsigned char *p = alloc(4096), *q = small();
    sum += p[100] + q[10];
    free(p);
    free(q);
    dlclose(h);
    if (other)
      dlclose(other);
  }
  printf("loads: %d\n", n);
  fprintf(stderr, "loads at the first address: %d, elsewhere: %d\n", same,
          n - same);
  printf("checksum: %x\n", sum);
  return 0;
}
