/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the size grammar of the TIERWISE_* variables
 * (tw_parse_size: TIERWISE_DRAM_LIMIT, TIERWISE_DEPTH, TIERWISE_OBJECTS_MIN,
 * TIERWISE_UNMATCHED_MIN, TIERWISE_FASTPATH_*). Property: it accepts exactly
 * the grammar of advisor/FORMATS.md "Sizes" (decimals, K/M/G/T, KiB..TiB,
 * KB..TB, all powers of 1024) and returns the exact value rounded down, and
 * it rejects what does not fit in 64 bits; checked against an independent
 * reference parser.
 */
#define _GNU_SOURCE
#include "tw_policy.h"
#include "tw_fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reference: 0 and *out on success, -1 if not the grammar or too big. A
 * different route from tw_size.c: the number is reduced to a string of
 * digits and a decimal exponent first, then scaled by repeated
 * multiplication with an overflow check at each step. */
static int ref_parse(const char *s, uint64_t *out) {
  char digits[64];
  int nd = 0, nfrac = 0, seen_point = 0;
  const char *p = s;
  if (*p < '0' || *p > '9')
    return -1;
  for (; (*p >= '0' && *p <= '9') || (*p == '.' && !seen_point); p++) {
    if (*p == '.') {
      seen_point = 1;
      if (p[1] < '0' || p[1] > '9')
        return -1;
      continue;
    }
    if (!seen_point && !nd && *p == '0')
      continue; /* leading zeros */
    if (nd == (int)sizeof(digits))
      return -1; /* more digits than any size < 2^64 with 18 decimals */
    digits[nd++] = *p;
    nfrac += seen_point;
  }
  if (nfrac > 18)
    return -1;
  static const char *const units[] = {
      "", "b", "k", "kb", "kib", "m", "mb", "mib",
      "g", "gb", "gib", "t", "tb", "tib"};
  static const int shifts[] = {0, 0, 10, 10, 10, 20, 20, 20,
                               30, 30, 30, 40, 40, 40};
  const char *u = p;
  while (*u == ' ')
    u++;
  if (u != p && !*u)
    return -1;
  char low[8] = {0};
  for (int i = 0; u[i]; i++) {
    if (i == 7)
      return -1;
    low[i] = (char)(u[i] | 0x20);
  }
  int shift = -1;
  for (unsigned i = 0; i < sizeof(shifts) / sizeof(shifts[0]); i++)
    if (!strcmp(low, units[i]))
      shift = shifts[i];
  if (shift < 0)
    return -1;
  /* value = digits * 2^shift / 10^nfrac, rounded down */
  unsigned __int128 v = 0, lim = (unsigned __int128)UINT64_MAX << 60;
  for (int i = 0; i < nd; i++) {
    v = v * 10 + (unsigned)(digits[i] - '0');
    if (v > lim)
      return -1;
  }
  for (int i = 0; i < shift; i++) {
    v *= 2;
    if (v > lim)
      return -1;
  }
  for (int i = 0; i < nfrac; i++)
    v /= 10;
  if (v > UINT64_MAX)
    return -1;
  *out = (uint64_t)v;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = tw_fuzz_text(data, size);
  uint64_t got = 0, want = 0;
  int r = tw_parse_size(s, &got), rr = ref_parse(s, &want);
  if (r != rr)
    fprintf(stderr, "tw_fuzz: \"%s\": tw_parse_size %d, reference %d\n", s, r,
            rr);
  TW_FUZZ_CHECK(r == rr, "accepts/rejects differently from the grammar");
  if (r == 0)
    TW_FUZZ_CHECK(got == want, "wrong value");
  free(s);
  return 0;
}
