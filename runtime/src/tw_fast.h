/* SPDX-License-Identifier: MIT */
/*
 * Layer 2 (policy). The placement fast path's per-thread decision cache (tw_fastpath.c) and
 * its inline probe, which the interposed malloc/calloc/free (tw_preload.c)
 * run before anything else: a cache hit for a DRAM site is a TLS load, a
 * multiplicative hash, two compares, two counter increments and a tail call
 * to glibc. Not installed.
 */
#pragma once

#include "tw_policy.h"

#define TW_FAST_SLOTS 2048 /* a power of two */
#define TW_FAST_BITS 11
enum { TW_LEARN = 0, TW_TRUSTED = 1, TW_AMBIGUOUS = 2 };

/* One cache line per entry. */
typedef struct tw_fast_entry {
  uintptr_t ra, sp;    /* the key */
  uint64_t pend_bytes; /* hits not yet added to the site */
  uint32_t pend_allocs;
  uint32_t left; /* trusted: hits until the next validation (>= 1); 0 when
                    learning or ambiguous */
  uint32_t site;
  uint32_t learned; /* learning: full unwinds that agreed so far */
  uint8_t state;
  uint8_t tier;
  uint8_t plain; /* DRAM, not announced to Valgrind: glibc, tail call */
  uint8_t resets; /* learning restarted: unwinds found another site */
  char pad[64 - 44];
} tw_fast_entry;
_Static_assert(sizeof(tw_fast_entry) == 64, "one cache line per entry");

typedef struct tw_fast_table {
  tw_fast_entry e[TW_FAST_SLOTS];
  uint64_t hits, checks, mismatches, unwinds; /* hits: flushed hits */
  int in_use;
  tw_frame_memo memo[1 << TW_FM_BITS]; /* its thread's (tw_site_first) */
} tw_fast_table;

TW_HIDDEN extern __thread tw_fast_table *tw_fast_mine
    __attribute__((tls_model("initial-exec")));
/* Sizes below this use the inline fast path; 0 while it is off (not in
 * placement mode, cache disabled, a DRAM limit to account, after exit). */
TW_HIDDEN extern size_t tw_fast_limit;

static inline tw_fast_entry *tw_fast_probe(tw_fast_table *t, void *ra,
                                           void *sp) {
  uint64_t k = ((uint64_t)(uintptr_t)sp * 0x9e3779b97f4a7c15ull) ^
               (uint64_t)(uintptr_t)ra;
  return &t->e[(k * 0xff51afd7ed558ccdull) >> (64 - TW_FAST_BITS)];
}

/* A trusted entry for this call, its hit already taken (counts are the
 * caller's), or NULL: go the slow way. */
static inline tw_fast_entry *tw_fast_hit(size_t size, void *ra, void *sp) {
  tw_fast_table *t = tw_fast_mine;
  if (TW_UNLIKELY(!t) || TW_UNLIKELY(size >= tw_fast_limit) ||
      TW_UNLIKELY(tw_in_core))
    return NULL;
  tw_fast_entry *e = tw_fast_probe(t, ra, sp);
  if (TW_UNLIKELY(e->ra != (uintptr_t)ra) ||
      TW_UNLIKELY(e->sp != (uintptr_t)sp) || TW_UNLIKELY(e->left <= 1))
    return NULL;
  e->left--;
  return e;
}

/* The site for an allocation inside the core (tw_in_core held); *hit is set
 * when served from the cache: the caller then either adds the allocation to
 * (*hit)->pend_* (tier (*hit)->tier) or calls tw_fast_count_hit(). */
TW_HIDDEN uint32_t tw_fast_site(size_t size, void *ra, void *sp,
                                tw_fast_entry **hit);
TW_HIDDEN void tw_fast_count_hit(void);
/* A miss of a small allocation (below tw_fast_limit) that the thread's memo
 * of frames answers (tw_site_memo), with a site that leads no placement
 * site (its tier the default one): that site, the key learned as
 * tw_fast_site's miss would learn it (the same site, counts and state);
 * TW_SITE_NONE: not answered so, nothing done (tw_fast_site then). Inside
 * the core (tw_in_core held). */
TW_HIDDEN uint32_t tw_fast_memo(void *ra, void *sp);
/* Learning restarts of a key whose unwinds find other sites of its tier,
 * before it is trusted all the same (counted to its last site). */
#define TW_FAST_RESETS 255
/* A key's validation found another tier than the one its hits were served
 * from: those hits (up to TIERWISE_FASTPATH_CHECK - 1) may have been the
 * found site's, served from the other site's tier. */
typedef struct tw_fast_mismatch {
  uint32_t served_site, found_site, hits;
} tw_fast_mismatch;
#define TW_FAST_MISMATCHES 16
TW_HIDDEN void tw_fast_note(uint32_t served_site, uint32_t found_site,
                            uint32_t hits);
/* The first TW_FAST_MISMATCHES (site pairs, summed); returns how many. */
TW_HIDDEN int tw_fast_mismatches(tw_fast_mismatch *out, int max);
TW_HIDDEN void tw_fast_atfork(int phase); /* 0 prepare, 1 parent, 2 child */
/* After dlclose: every trusted key is validated (unwound) at its next use. */
TW_HIDDEN void tw_fast_revalidate(void);
TW_HIDDEN void tw_fast_stats(uint64_t out[4]); /* hits, validations,
                                                  mismatches, unwinds; flushes
                                                  pending counts */
