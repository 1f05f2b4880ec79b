/* SPDX-License-Identifier: MIT */
/*
 * The rest of the runtime, as the fuzzed parsers (tw_placement.c,
 * tw_tiername.c, tw_out.c) see it, without the interposed allocator: the
 * config, warnings (counted, not printed), the internal allocator (malloc'd
 * blocks freed after each input, so ASan sees overruns and leaks), the
 * kernel's mmap, and one fake loaded module for the build-id check.
 */
#define _GNU_SOURCE
#include "tw_policy.h"
#include "tw_fuzz.h"
#include "tw_ptable.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

tw_config tw_cfg;
volatile int tw_mode_now;
__thread int tw_in_core;
__thread int tw_in_tier;
unsigned long tw_fuzz_warnings;

static void **tw_fuzz_blocks;
static size_t tw_fuzz_n, tw_fuzz_cap;

void tw_warn(const char *a, const char *b, const char *c) {
  (void)a, (void)b, (void)c;
  tw_fuzz_warnings++;
}


void *tw_internal_alloc(size_t size) {
  if (tw_fuzz_n == tw_fuzz_cap) {
    tw_fuzz_cap = tw_fuzz_cap ? 2 * tw_fuzz_cap : 64;
    tw_fuzz_blocks = realloc(tw_fuzz_blocks, tw_fuzz_cap * sizeof(void *));
  }
  void *p = malloc(size);
  tw_fuzz_blocks[tw_fuzz_n++] = p;
  return p;
}

/* The kernel's mmap, as tw_sys.c gives it (tw_placement.c's parse arena). */
void *tw_sys_mmap(void *addr, size_t len, int prot, int flags, int fd,
                  off_t off) {
  return mmap(addr, len, prot, flags, fd, off);
}

int tw_sys_munmap(void *addr, size_t len) { return munmap(addr, len); }

/* The placement cache belongs to tw_placement_load (files), not to the
 * parser fuzzed here. */
int tw_pcache_read(const char *path, const struct stat *st, tw_ptable *t) {
  (void)path;
  (void)st;
  (void)t;
  return 0;
}
void tw_pcache_write(const char *path, const struct stat *st,
                     const tw_ptable *t) {
  (void)path;
  (void)st;
  (void)t;
}

void tw_fuzz_reset(void) {
  for (size_t i = 0; i < tw_fuzz_n; i++)
    free(tw_fuzz_blocks[i]);
  tw_fuzz_n = 0;
}

void tw_modules_each(tw_module_fn fn, void *ctx) {
  fn(ctx, "/fuzz/bin/prog", "prog", "00112233445566778899aabbccddeeff00112233");
}

/* A NUL-terminated copy of the fuzzer's input (freed by the caller). */
char *tw_fuzz_text(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  memcpy(s, data, size);
  s[size] = 0;
  return s;
}
