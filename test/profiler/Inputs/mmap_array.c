// SPDX-License-Identifier: MIT
// Test input: an 8 MiB array in an anonymous mmap (through a helper, as
// examples/bfs.c maps its CSR arrays), written once per 64-byte line and read
// twice per line, then unmapped; a 1 MiB file-backed private mapping (not a
// heap object) is read too. With a 1 MiB simulated LLC the array takes
// 131072 stores (all LLC store misses), 262144 loads (all misses) and
// 131072 writebacks.
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((noinline)) static long *map_array(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

int main(int argc, char **argv) {
  size_t bytes = 8u << 20, n = bytes / sizeof(long);
  long *a = map_array(bytes), sum = 0;
  if (!a)
    return 1;
  for (size_t i = 0; i < n; i += 8)
    a[i] = (long)i;
  for (int r = 0; r < 2; r++)
    for (size_t i = 0; i < n; i += 8)
      sum += a[i];
  munmap(a, bytes);
  int fd = open(argv[0], O_RDONLY);
  const volatile char *f = mmap(NULL, 1u << 20, PROT_READ, MAP_PRIVATE, fd, 0);
  if (f != MAP_FAILED)
    for (size_t i = 0; i < 4096; i += 64)
      sum += f[i];
  printf("sum %ld\n", sum);
  return 0;
}
