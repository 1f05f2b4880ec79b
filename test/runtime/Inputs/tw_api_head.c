/* SPDX-License-Identifier: MIT */
/* Test program linked with libtierwise (no LD_PRELOAD): objects with a DRAM
 * head by API (tw_malloc_head, tw_calloc_head; placement dram_bytes for one
 * call). Prints the tier of each object's last head byte and first tail
 * byte (tw_tier_of), its usable size, and a checksum of its contents; the
 * `object` lines on stderr let twcheck.py `where` find the file mappings.
 * Usage: tw_api_head (no arguments). */
#include "tierwise.h"

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((size_t)1 << 20)

/* Tiers of the bytes just below and at \p split. */
static void tiers(const char *name, const char *p, size_t split) {
  printf("%s: %s|%s\n", name, tw_tier_name(tw_tier_of(p + split - 1)),
         tw_tier_name(tw_tier_of(p + split)));
}

static unsigned long sum(const unsigned char *p, size_t n) {
  unsigned long s = 0;
  for (size_t i = 0; i < n; i++)
    s = s * 31 + p[i];
  return s;
}

int main(void) {
  /* a: 4 MiB, 1 MiB head; filled, then grown by plain realloc() */
  unsigned char *a = tw_malloc_head(TW_TIER_PMEM, MIB, 4 * MIB);
  for (size_t i = 0; i < 4 * MIB; i++)
    a[i] = (unsigned char)(i * 7 + i / 4096);
  unsigned long before = sum(a, 4 * MIB);
  tiers("a", (char *)a, MIB);
  /* b: calloc, 512 Ki elements of 8 bytes: zeroed head and tail */
  uint64_t *b = tw_calloc_head(TW_TIER_PMEM, MIB, 512 << 10, 8);
  size_t nonzero = 0;
  for (size_t i = 0; i < (512 << 10); i++)
    nonzero += b[i] != 0;
  printf("b: zero=%s\n", nonzero ? "no" : "yes");
  tiers("b", (char *)b, MIB);
  b[0] = 11, b[(512 << 10) - 1] = 13;
  /* c: within the head: wholly DRAM */
  char *c = tw_malloc_head(TW_TIER_PMEM, MIB, 64 << 10);
  memset(c, 5, 64 << 10);
  tiers("c", c, 32 << 10);
  /* d: a head that is not a page multiple: rounded down */
  char *d = tw_malloc_head(TW_TIER_PMEM, MIB + 100, 4 * MIB);
  d[4 * MIB - 1] = 17;
  tiers("d", d, MIB);
  /* e: a tier that cannot be split: whole, as tw_malloc(TW_TIER_KMEM) */
  char *e = tw_malloc_head(TW_TIER_KMEM, MIB, 2 * MIB);
  char *e2 = tw_malloc(TW_TIER_KMEM, 2 * MIB);
  e[0] = 19;
  printf("e: same-as-tw_malloc=%s\n",
         tw_tier_of(e) == tw_tier_of(e2) &&
                 tw_tier_of(e + MIB) == tw_tier_of(e2)
             ? "yes"
             : "no");
  free(e2);

  a = realloc(a, 8 * MIB); /* stays split: same head, same tier */
  printf("a: realloc kept=%s usable>=8M=%s\n",
         sum(a, 4 * MIB) == before ? "yes" : "no",
         malloc_usable_size(a) >= 8 * MIB ? "yes" : "no");
  tiers("a", (char *)a, MIB);
  a[8 * MIB - 1] = 23;
  fprintf(stderr,
          "object a %p %zu\nobject b %p %zu\nobject c %p %zu\n"
          "object d %p %zu\n",
          (void *)a, 8 * MIB, (void *)b, 4 * MIB, (void *)c, (size_t)64 << 10,
          (void *)d, 4 * MIB);
  b = realloc(b, 512 << 10); /* within the head now: a DRAM block */
  tiers("b", (char *)b, 256 << 10);

  errno = 0;
  void *o = tw_calloc_head(TW_TIER_PMEM, MIB, SIZE_MAX / 2, 3);
  printf("overflow: %s errno=%s\n", o ? "block" : "NULL",
         errno == ENOMEM ? "ENOMEM" : "other");
  errno = 0;
  o = tw_malloc_head((tw_tier)TW_TIER_COUNT, MIB, 64);
  printf("bad tier: %s errno=%s\n", o ? "block" : "NULL",
         errno == EINVAL ? "EINVAL" : "other");

  unsigned long s = sum(a, 8 * MIB) + b[0] + b[(512 << 10) / 8 - 1] +
                    (unsigned char)c[100] + (unsigned char)d[4 * MIB - 1] +
                    (unsigned char)e[0];
  printf("checksum: %lx\n", s);
  free(a);
  free(b);
  free(c);
  free(d);
  free(e);
  return 0;
}
