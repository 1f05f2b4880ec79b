/* SPDX-License-Identifier: MIT */
/* Unit test of runtime/common/tw_sitekey.c: frame formatting, the allocator
 * module rule, depth truncation, prefix matching. Prints FAIL lines and
 * exits non-zero on any failure. */
#include "tw_sitekey.h"

#include <stdio.h>
#include <string.h>

static int fails;
#define CHECK(c)                                                               \
  do {                                                                         \
    if (!(c)) {                                                                \
      printf("FAIL %s:%d %s\n", __FILE__, __LINE__, #c);                       \
      fails++;                                                                 \
    }                                                                          \
  } while (0)

int main(void) {
  char buf[256];
  tw_frame f = {"bfs", 0x1a2b};
  CHECK(tw_frame_format(buf, sizeof(buf), &f) == 10);
  CHECK(!strcmp(buf, "bfs+0x1a2b"));
  tw_frame z = {"x", 0}, anon = {NULL, 0x7f00};
  tw_frame_format(buf, sizeof(buf), &z);
  CHECK(!strcmp(buf, "x+0x0"));
  tw_frame_format(buf, sizeof(buf), &anon);
  CHECK(!strcmp(buf, "[anon]+0x7f00"));
  tw_frame_format(buf, 5, &f);
  CHECK(!strcmp(buf, "bfs+"));
  const char *alloc[] = {"libtierwise-runtime.so",
                         "libtierwise.so",
                         "vgpreload_tierwise-amd64-linux.so",
                         "libmemkind.so.0",
                         "libc.so.6",
                         "libstdc++.so.6",
                         "libgcc_s.so.1",
                         "ld-linux-x86-64.so.2",
                         "libjemalloc.so.2"};
  const char *user[] = {"bfs",
                        "libgraphblas.so.7",
                        "libcjson.so.1",
                        "libcustom.so",
                        "libtierwise",
                        "tierwise",
                        NULL};
  for (unsigned i = 0; i < sizeof(alloc) / sizeof(*alloc); i++)
    CHECK(tw_module_is_allocator(alloc[i]));
  for (unsigned i = 0; i < sizeof(user) / sizeof(*user); i++)
    CHECK(!tw_module_is_allocator(user[i]));
  CHECK(!strcmp(tw_basename("/a/b/libc.so.6"), "libc.so.6"));
  tw_frame st[] = {{"libtierwise-runtime.so", 0x10},
                   {"libstdc++.so.6", 0x20},
                   {"bfs", 0x30},
                   {"libc.so.6", 0x40},
                   {"bfs", 0x50},
                   {NULL, 0x60}};
  tw_stack_format(buf, sizeof(buf), st, 6, 6);
  CHECK(!strcmp(buf, "bfs+0x30;libc.so.6+0x40;bfs+0x50;[anon]+0x60"));
  tw_stack_format(buf, sizeof(buf), st, 6, 2);
  CHECK(!strcmp(buf, "bfs+0x30;libc.so.6+0x40"));
  CHECK(tw_stack_matches("bfs+0x30", "bfs+0x30;libc.so.6+0x40"));
  CHECK(tw_stack_matches("bfs+0x30;libc.so.6+0x40", "bfs+0x30;libc.so.6+0x40"));
  CHECK(!tw_stack_matches("bfs+0x3", "bfs+0x30;libc.so.6+0x40"));
  /* a thread's stack: trailing libc frames (start_thread, clone3 or clone)
   * go, so native and Valgrind runs agree; an all-libc rest keeps one */
  tw_frame th[] = {{"libc.so.6", 0x10},
                   {"bfs", 0x30},
                   {"libgomp.so.1", 0x40},
                   {"libc.so.6", 0x50},
                   {"libc.so.6", 0x60}};
  tw_stack_format(buf, sizeof(buf), th, 5, 6);
  CHECK(!strcmp(buf, "bfs+0x30;libgomp.so.1+0x40"));
  th[4].offset = 0x70; /* clone instead of clone3: the same site */
  tw_stack_format(buf, sizeof(buf), th, 5, 6);
  CHECK(!strcmp(buf, "bfs+0x30;libgomp.so.1+0x40"));
  /* only allocator frames (libstdc++'s emergency pool from ld.so's init,
   * allocated through the runtime): no user code, not a site */
  tw_frame lib[] = {{"libc.so.6", 0x10}, {"libc.so.6", 0x20}};
  CHECK(tw_stack_format(buf, sizeof(buf), lib, 2, 6) == 0 && !buf[0]);
  tw_frame pool[] = {{"libtierwise-runtime.so", 0x5f6e},
                     {"libstdc++.so.6.0.30", 0xa57b9},
                     {"ld-linux-x86-64.so.2", 0x4a1d}};
  CHECK(tw_stack_format(buf, sizeof(buf), pool, 3, 6) == 0 && !buf[0]);
  CHECK(!tw_stack_matches("bfs+0x30;x+0x1", "bfs+0x30"));
  uintptr_t ips[3] = {1, 2, 3}, ips2[3] = {1, 2, 4};
  CHECK(tw_hash_ips(ips, 3) != tw_hash_ips(ips2, 3));
  CHECK(tw_hash_ips(ips, 3) == tw_hash_ips(ips, 3));
  CHECK(tw_hash_str("a") != tw_hash_str("b"));
  CHECK(tw_hash_str("a") != tw_hash_str("a;")); /* the length counts */
  /* a prefix's hash finished from the words before it (placement matching) */
  const char *sk = "tw_sites+0x11a2;tw_sites+0x1234;libc.so.6+0x271ca";
  for (size_t n = 0; n <= strlen(sk); n++) {
    char pre[64];
    memcpy(pre, sk, n);
    pre[n] = 0;
    uint64_t w = tw_hash_words(TW_HASH_SEED, sk, n / 8);
    CHECK(tw_hash_end(w, sk + n / 8 * 8, n) == tw_hash_str(pre));
    CHECK(tw_hash_span(sk, n) == tw_hash_str(pre));
  }
  printf("sitekey: %s\n", fails ? "FAILED" : "ok");
  return fails != 0;
}
