/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: stack-string matching and formatting of the site-key
 * code (runtime/common/tw_sitekey.c, shared with the Valgrind tool). The
 * input is two strings split at the first NUL (placement stack, allocation
 * stack) followed by frames. Properties: a stack matches itself; a match
 * means equal or a prefix ending at a ';' frame boundary; frame formatting
 * never overruns its buffer and always NUL-terminates.
 */
#define _GNU_SOURCE
#include "tw_fuzz.h"
#include "tw_sitekey.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *a = tw_fuzz_text(data, size);
  size_t na = strlen(a);
  const char *b = na < size ? a + na + 1 : "";
  size_t nb = strlen(b);
  if (na)
    TW_FUZZ_CHECK(tw_stack_matches(a, a) == 1, "a stack must match itself");
  if (tw_stack_matches(a, b))
    TW_FUZZ_CHECK(na <= nb && !memcmp(a, b, na) && (na == nb || b[na] == ';'),
                  "match that is not a frame-boundary prefix");
  /* Frames: module names cut from the input, offsets from its bytes. */
  tw_frame fr[8];
  int n = 0;
  for (const char *m = b; n < 8 && *m; m += strlen(m) > 7 ? 7 : strlen(m)) {
    fr[n].module = (data[0] & (1 << n)) ? strndup(m, 7) : NULL;
    fr[n].offset = (uintptr_t)size * 0x9e3779b97f4a7c15ull + n;
    n++;
  }
  size_t cap = size % 200;
  char *out = malloc(cap + 1);
  size_t len = tw_stack_format(out, cap, fr, n, 1 + (int)(size % 70));
  if (cap)
    TW_FUZZ_CHECK(len < cap && out[len] == 0 && strlen(out) == len,
                  "formatted stack not NUL-terminated within its buffer");
  for (int i = 0; i < n; i++)
    free((void *)fr[i].module);
  free(out);
  free(a);
  return 0;
}
