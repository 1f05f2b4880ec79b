/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the size grammar of the TIERWISE_* variables
 * (tw_parse_size: TIERWISE_DRAM_LIMIT, TIERWISE_DEPTH, TIERWISE_OBJECTS_MIN,
 * TIERWISE_UNMATCHED_MIN, TIERWISE_FASTPATH_*). Property: it accepts exactly
 * the grammar of advisor/FORMATS.md (digits, then an optional K/M/G/T
 * suffix, powers of 1024, then an optional B) and returns the exact value,
 * and it rejects what does not fit in 64 bits; checked against an
 * independent reference parser.
 */
#define _GNU_SOURCE
#include "tw_policy.h"
#include "tw_fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reference: 0 and *out on success, -1 if not the grammar or too big. */
static int ref_parse(const char *s, uint64_t *out) {
  unsigned __int128 v = 0;
  const char *p = s;
  if (*p < '0' || *p > '9')
    return -1;
  for (; *p >= '0' && *p <= '9'; p++) {
    v = v * 10 + (unsigned)(*p - '0');
    if (v > UINT64_MAX)
      return -1;
  }
  const char *units = "kmgt";
  const char *u = *p ? strchr(units, *p | 0x20) : NULL;
  if (u && (*p | 0x20) != 0) {
    v <<= 10 * (unsigned)(u - units + 1);
    p++;
  }
  if (*p == 'b' || *p == 'B')
    p++;
  if (*p || v > UINT64_MAX)
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
