/* SPDX-License-Identifier: MIT */
/* What frameworks do for big arrays: try MAP_HUGETLB first and fall back to
 * an ordinary anonymous mapping when the kernel refuses (no huge pages
 * reserved: ENOMEM). Prints which mapping each array got and a checksum.
 * A refused mmap is no allocation: no site with zero bytes in a census or a
 * profile, and the runtime does not turn the refusal into a mapping. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define BYTES (4u << 20)

static void *map_array(int *huge) {
  void *p = mmap(NULL, BYTES, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
  *huge = p != MAP_FAILED;
  if (p == MAP_FAILED)
    p = mmap(NULL, BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
             -1, 0);
  return p;
}

int main(void) {
  uint64_t sum = 0;
  for (int i = 0; i < 3; i++) {
    int huge;
    uint64_t *a = map_array(&huge);
    if (a == MAP_FAILED)
      return 1;
    for (size_t k = 0; k < BYTES / 8; k++)
      a[k] = k * (i + 1);
    for (size_t k = 0; k < BYTES / 8; k += 512)
      sum += a[k];
    printf("array %d: %s pages\n", i, huge ? "huge" : "ordinary");
    munmap(a, BYTES);
  }
  printf("checksum: %016llx\n", (unsigned long long)sum);
  return 0;
}
