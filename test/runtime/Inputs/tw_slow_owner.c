// SPDX-License-Identifier: MIT
// Test program for slow-owner.test (linked with libtierwise): the page-owner
// map must know every page memkind maps for the pmem tier, since free,
// realloc and malloc_usable_size find a block's owner there (tw_mmap.c:
// memkind's mmap calls pass through the interposed mmap while a backend call
// runs). Allocates N blocks of sizes from 16 B to 8 MiB in pmem from 2
// threads, frees every third, then checks (1) every page of every live block
// and (2) every page of every mapping of a file in DIR (TIERWISE_PMEM_DIR:
// memkind's unlinked pmem file, from /proc/self/maps) has tw_tier_of ==
// pmem. A memkind (or jemalloc) that mapped its memory around the
// interposer (a raw system call, another symbol) leaves its pages unowned:
// counted here. `control` maps a file in DIR itself with the raw system
// call, as such a memkind would: those pages must be counted. The two
// threads make the process's first tierwise.h calls at once: a thread that
// finds the tier being opened by the other must wait for it, not fall back
// to DRAM (tw_tiers.c), or its blocks are counted as unowned.
// Usage: tw_slow_owner N [control]
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tierwise.h"

#define MAXB 4096
static void *blocks[2][MAXB];
static size_t sizes[2][MAXB];
static int nper;
static pthread_barrier_t start;

static void *fill(void *arg) {
  int t = (int)(intptr_t)arg;
  pthread_barrier_wait(&start); /* both threads' first tw_malloc at once */
  for (int i = 0; i < nper; i++) {
    size_t n = (size_t)16 << ((i * 7 + t) % 20); /* 16 B .. 8 MiB */
    char *p = tw_malloc(TW_TIER_PMEM, n);
    if (!p)
      exit(2);
    memset(p, i, n);
    blocks[t][i] = p;
    sizes[t][i] = n;
    if (i % 3 == 2) { /* give some back: arenas purge and reuse extents */
      tw_free(blocks[t][i - 1]);
      blocks[t][i - 1] = NULL;
    }
  }
  return NULL;
}

/* Pages of [a, a + n) whose owner is not pmem. */
static long unowned(uintptr_t a, size_t n) {
  long bad = 0;
  for (uintptr_t q = a & ~(uintptr_t)4095; q < a + n; q += 4096)
    bad += tw_tier_of((void *)q) != TW_TIER_PMEM;
  return bad;
}

int main(int argc, char **argv) {
  nper = argc > 1 ? atoi(argv[1]) : 200;
  if (nper > MAXB)
    nper = MAXB;
  const char *dir = getenv("TIERWISE_PMEM_DIR");
  char real[4096];
  if (!dir || !realpath(dir, real))
    return 3;
  /* no tierwise.h call before: the threads' first ones open the pmem tier
   * together (the second thread's blocks went to DRAM while the first
   * opened it: 1,928-4,044 unowned pages in 10 of 10 runs) */
  pthread_barrier_init(&start, NULL, 2);
  pthread_t th[2];
  for (int t = 0; t < 2; t++)
    pthread_create(&th[t], NULL, fill, (void *)(intptr_t)t);
  for (int t = 0; t < 2; t++)
    pthread_join(th[t], NULL);
  if (argc > 2 && !strcmp(argv[2], "control")) {
    char path[4200];
    snprintf(path, sizeof(path), "%s/control", real);
    int fd = open(path, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, 1 << 20))
      return 4;
    if ((long)syscall(SYS_mmap, NULL, 1 << 20, PROT_READ | PROT_WRITE,
                      MAP_SHARED, fd, 0) < 0)
      return 5;
  }
  long live = 0, bad_blocks = 0;
  for (int t = 0; t < 2; t++)
    for (int i = 0; i < nper; i++)
      if (blocks[t][i]) {
        live++;
        long b = unowned((uintptr_t)blocks[t][i], sizes[t][i]);
        if (b)
          fprintf(stderr, "block %p size %zu tier %d unowned %ld\n",
                  blocks[t][i], sizes[t][i], tw_tier_of(blocks[t][i]), b);
        bad_blocks += b;
      }
  FILE *f = fopen("/proc/self/maps", "r");
  char line[8192];
  long maps = 0, pages = 0, bad_maps = 0;
  size_t dl = strlen(real);
  while (f && fgets(line, sizeof(line), f)) {
    uintptr_t a, e;
    char *path = strchr(line, '/');
    if (!path || strncmp(path, real, dl) || path[dl] != '/' ||
        sscanf(line, "%lx-%lx", &a, &e) != 2)
      continue;
    maps++;
    pages += (long)((e - a) / 4096);
    bad_maps += unowned(a, e - a);
  }
  printf("live blocks %ld, unowned pages %ld\n", live, bad_blocks);
  printf("mappings of %s: %ld (%ld pages), unowned pages %ld\n", "DIR", maps,
         pages, bad_maps);
  return 0;
}
