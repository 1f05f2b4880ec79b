/* SPDX-License-Identifier: MIT */
/*
 * Layer 0 (base): tier names, the one mapping between placement.json's tier
 * strings and tierwise.h's enum tw_tier: "dram", "pmem", "kmem", "hbw" and
 * "numa:N" (N a node number below 16, as TW_TIER_NUMA(N)).
 */
#include "tw_base.h"

#include <string.h>

static const char *const tw_names[TW_TIER_COUNT] = {
    "dram",    "pmem",    "kmem",    "hbw",     "numa:0",  "numa:1",
    "numa:2",  "numa:3",  "numa:4",  "numa:5",  "numa:6",  "numa:7",
    "numa:8",  "numa:9",  "numa:10", "numa:11", "numa:12", "numa:13",
    "numa:14", "numa:15"};
_Static_assert(TW_TIER_COUNT == TW_TIER_NUMA0 + 16, "one name per tier");

const char *tw_tier_str(int tier) {
  return tier >= 0 && tier < TW_TIER_COUNT ? tw_names[tier] : NULL;
}

int tw_tier_parse(const char *name) {
  for (int i = 0; name && i < TW_TIER_COUNT; i++)
    if (!strcmp(name, tw_names[i]))
      return i;
  return -1;
}
