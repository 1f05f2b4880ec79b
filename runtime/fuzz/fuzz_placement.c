/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the runtime's placement.json parser
 * (tw_placement_parse). Properties: never crashes or reads out of bounds
 * (ASan, UBSan); a rejected file leaves no sites and the default tier dram;
 * an accepted one has sites with a non-empty stack that matches itself (or,
 * a default-tier site left untracked, nothing: TIERWISE_TRACK_DEFAULT_MAX,
 * 0 or unbounded by the input's length) and a known tier, and a depth of 0
 * (unset) or 1..64.
 */
#define _GNU_SOURCE
#include "tw_policy.h"
#include "tw_fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = tw_fuzz_text(data, size);
  tw_cfg.track_default_max = size & 1 ? 0 : UINT32_MAX;
  int ok = tw_placement_parse(text, "fuzz.json");
  int n = tw_placement_nsites();
  if (!ok) {
    TW_FUZZ_CHECK(n == 0, "rejected file keeps sites");
    TW_FUZZ_CHECK(tw_placement_default_tier() == TW_TIER_DRAM,
                  "rejected file keeps a default tier");
  } else {
    int d = tw_placement_depth();
    TW_FUZZ_CHECK(d >= 0 && d <= TW_MAX_DEPTH, "depth out of range");
    int dt = tw_placement_default_tier();
    TW_FUZZ_CHECK(dt >= 0 && dt < TW_TIER_COUNT, "default tier out of range");
    for (int i = 0; i < n; i++) {
      const char *stack = tw_placement_field(i, 0);
      int tier = -1;
      TW_FUZZ_CHECK(stack && *stack, "empty stack accepted");
      TW_FUZZ_CHECK(tw_placement_field(i, 1) != NULL, "no location");
      TW_FUZZ_CHECK(tw_placement_tier(i) >= 0 &&
                        tw_placement_tier(i) < TW_TIER_COUNT,
                    "tier out of range");
      int quiet = tw_placement_quiet(i), m = tw_placement_match(stack, &tier);
      TW_FUZZ_CHECK(!quiet || tw_placement_tier(i) == dt,
                    "an untracked site outside the default tier");
      TW_FUZZ_CHECK(quiet ? m < 0 : m >= 0,
                    quiet ? "an untracked site's stack matches a site"
                          : "a site's stack does not match itself");
      TW_FUZZ_CHECK(quiet || (tier >= 0 && tier < TW_TIER_COUNT),
                    "matched tier");
    }
    tw_placement_check_modules();
  }
  tw_fuzz_reset();
  free(text);
  return 0;
}
