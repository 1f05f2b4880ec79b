/* SPDX-License-Identifier: MIT */
/*
 * Layer 2 (policy): the placement's tables, as tw_placement.c builds them
 * from placement.json and tw_placement_cache.c keeps them between runs
 * (the compiled form, advisor/FORMATS.md "placement cache"). Private to
 * those two files; the rest of the runtime asks tw_policy.h.
 */
#pragma once

#include "tw_base.h"

#include <sys/stat.h>

/* The plan fields few sites have (FORMATS.md): kept beside the site. */
typedef struct tw_pplan {
  uint64_t dram_bytes;  /* DRAM head of each object (tw_split.c); 0: none */
  double dram_fraction; /* the head as a share of each object; 0: none */
  int rank;             /* the advisor's DRAM order (1 best); 0: none */
  uint64_t planned;     /* planned DRAM bytes (tw_dram_limit.c) */
  const uint64_t *live; /* planned_live: DRAM bytes at each plan instant */
} tw_pplan;

typedef struct tw_psite {
  const char *stack, *location; /* NUL-terminated, in the file's buffer */
  uint64_t hash;                /* tw_hash_span(stack, len) */
  uint32_t len;
  int tier;
  int quiet;            /* not tracked: tw_quiet_mark */
  const tw_pplan *plan; /* NULL: none of the plan fields */
} tw_psite;

typedef struct tw_pmodule {
  const char *module, *build_id;
} tw_pmodule;

/* Per tier, the hashes of the first TW_PTIER_MODS modules its sites start
 * in (tw_placement_tier_starts_in). */
#define TW_PTIER_MODS 16

typedef struct tw_ptable {
  tw_psite *sites;
  int nsites, default_tier, depth;
  int nlive;  /* length of every site's planned_live (0: none) */
  int nquiet; /* sites not tracked (tw_quiet_mark) */
  int32_t *phash; /* open addressing: index into sites, -1 empty */
  uint32_t mask;  /* slots of phash, lead and lead_frame, less one */
  /* Hashes of the modules of the sites' first frames (open addressing, 0
   * empty): a call whose first frame is in none of them cannot match any
   * site (the matching is by stack prefix). NULL: every call may match. */
  uint64_t *lead;
  /* The same of the sites' first frames themselves: a call whose first
   * frame is none of them needs no full unwind (tw_policy_site_at). */
  uint64_t *lead_frame;
  uint64_t tier_mod[TW_TIER_COUNT][TW_PTIER_MODS];
  int tier_nmod[TW_TIER_COUNT]; /* -1: more than TW_PTIER_MODS */
  tw_pmodule *mods;             /* modules with a build-id */
  int nmods;
} tw_ptable;

/* The compiled form of the placement file \p path (\p st: its fstat)
 * from the cache, into \p t (pointing into a buffer kept for the run): 1 read, 0 none there (or stale, or damaged:
 * then the JSON is read). */
TW_HIDDEN int tw_pcache_read(const char *path, const struct stat *st,
                             tw_ptable *t);
/* Write \p t as the compiled form of the file \p path of \p st (a placement of at
 * least TIERWISE_PLACEMENT_CACHE_MIN sites; not when \p path is no longer
 * that file as \p st saw it; failures only noted). */
TW_HIDDEN void tw_pcache_write(const char *path, const struct stat *st,
                               const tw_ptable *t);
