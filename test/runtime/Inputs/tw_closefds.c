/* SPDX-License-Identifier: MIT */
/*
 * A daemon-like program (closed-fds.test): it allocates (so that a pmem
 * tier's memkind file exists), then closes every descriptor above 2 the
 * way HOW says - "loop" (close each number below 1024), "closefrom" or
 * "close_range" - opens two data files read-write (the lowest numbers,
 * where the runtime's own descriptors were) and writes them while it
 * allocates and frees from several call paths; prints a checksum of its
 * blocks. With "dup2" it looks for a descriptor it did not open (one of
 * the runtime's: its link names a memkind file or a .tmp. output) and
 * duplicates onto it, saying on stderr what that did.
 *
 *   tw_closefds HOW FILE1 FILE2
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) static void *small(size_t n, int i) {
  return malloc(n + (size_t)(i % 13));
}
__attribute__((noinline)) static void *zeroed(size_t n) { return calloc(1, n); }
__attribute__((noinline)) static void *big(size_t n) { return malloc(n); }

static void dup_onto_runtime(void) {
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  int target = -1;
  while (d && (e = readdir(d))) {
    char p[64], l[512];
    snprintf(p, sizeof(p), "/proc/self/fd/%s", e->d_name);
    ssize_t n = readlink(p, l, sizeof(l) - 1);
    l[n > 0 ? n : 0] = 0;
    if (strstr(l, "memkind.") || strstr(l, ".tmp."))
      target = atoi(e->d_name);
  }
  if (d)
    closedir(d);
  if (target < 0) {
    fprintf(stderr, "dup2: no descriptor of the runtime\n");
    return;
  }
  int r = dup2(2, target);
  fprintf(stderr, "dup2 onto the runtime's descriptor: %s\n",
          r < 0 ? strerror(errno) : "done");
}

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  void *warm = small(100, 0);
  if (!strcmp(argv[1], "loop"))
    for (int fd = 3; fd < 1024; fd++)
      close(fd);
  else if (!strcmp(argv[1], "closefrom"))
    closefrom(3);
  else if (!strcmp(argv[1], "close_range"))
    close_range(3, ~0U, 0);
  else if (!strcmp(argv[1], "dup2"))
    dup_onto_runtime();
  int a = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0644);
  int b = open(argv[3], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (a < 0 || b < 0)
    return 3;
  unsigned long sum = 0;
  char line[64];
  void *keep[64] = {0};
  for (int i = 0; i < 5000; i++) {
    unsigned char *p = small(64 + (i % 50) * 100, i), *q = zeroed(1 << 16),
                  *r = big((size_t)1 << 20);
    memset(p, i & 0xff, 64);
    memset(r, i & 0x7f, 8192);
    sum = sum * 31 + p[3] + q[100] + r[4000];
    int n = snprintf(line, sizeof(line), "line %d %lu\n", i, sum);
    if (write(a, line, (size_t)n) != n || write(b, line, (size_t)n) != n)
      return 4;
    free(p);
    free(r);
    free(keep[i % 64]);
    keep[i % 64] = q;
  }
  for (int i = 0; i < 64; i++)
    free(keep[i]);
  free(warm);
  printf("checksum %lx\n", sum);
  return 0;
}
