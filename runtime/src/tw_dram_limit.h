/* SPDX-License-Identifier: MIT */
/*
 * Layer 2 (policy): the DRAM limit (TIERWISE_DRAM_LIMIT, `tierwise run
 * --dram-limit`). The allocation paths ask it for room before serving DRAM
 * bytes and tell it what they got and what they gave back; it decides who
 * may take DRAM. With a placement that ranks its DRAM sites (placement.json
 * `rank`, `planned_bytes`: the advisor's benefit-per-byte order, and
 * `planned_live`: their bytes over the target run's time) part of the limit
 * is reserved at start-up for the ranked sites that fit it best first,
 * sharing bytes over time as the advisor planned, and only the rest is
 * first-come. So a site allocated early cannot take the DRAM a
 * better-ranked site allocated later will need (runtime/README.md "DRAM
 * limit"). Without ranks it is first-come, as before.
 */
#pragma once

#include <stdint.h>

#include "tw_policy.h"

/* What a caller was granted by tw_dram_take: hand it back to tw_dram_keep
 * (with the block) or tw_dram_undo (no block). */
typedef struct tw_dram_ticket {
  int slot;         /* placement site charged, -1: none */
  uint64_t charged; /* bytes charged to the limit */
  uint64_t own;     /* of them, from the site's reservation */
} tw_dram_ticket;

/* After the placement is loaded: the reservation, admitting sites in rank
 * order. */
TW_HIDDEN void tw_dram_limit_init(void);
TW_HIDDEN void tw_dram_limit_atfork(int phase); /* 0 prepare, 1 parent, 2 child */
/* Room under the limit for \p n DRAM bytes of site \p s (NULL: none)? 1:
 * charged (fill *t), 0: no room, nothing charged (*t empty). Without a
 * limit: 1, nothing charged. */
TW_HIDDEN int tw_dram_take(const tw_site *s, uint64_t n, tw_dram_ticket *t);
/* As tw_dram_take for at most \p n bytes: all of them, or else the most
 * the limit has room for, in whole \p unit, if that is \p least or more (a
 * split object's DRAM head that does not fit whole gets the part that
 * does). The bytes charged, 0: none (*t empty). */
TW_HIDDEN uint64_t tw_dram_take_upto(const tw_site *s, uint64_t n,
                                     uint64_t least, uint64_t unit,
                                     tw_dram_ticket *t);
/* A split object's DRAM head of \p n bytes (site \p s): all of it, or a
 * head of 1 MiB or more that does not fit whole gets the part that does,
 * in whole pages, if that is half of it or more (a split costs its own
 * mappings, and under a full 4 MiB limit a stress of 256 KiB heads ran 3x
 * longer making partial ones: test/bench/crash_matrix.py's limit+heads).
 * The bytes charged, 0: none. The one rule for heap and mmap heads. */
TW_HIDDEN uint64_t tw_dram_take_head(const tw_site *s, uint64_t n,
                                     tw_dram_ticket *t);
/* The DRAM block \p p of \p bytes was served under ticket \p t (an empty
 * ticket: served in DRAM without room, e.g. as a fallback): the account
 * now holds \p bytes for it. */
TW_HIDDEN void tw_dram_keep(const tw_dram_ticket *t, const void *p,
                            uint64_t bytes);
/* No block was served under \p t: its charge is returned. */
TW_HIDDEN void tw_dram_undo(const tw_dram_ticket *t);
/* The DRAM block \p p holding \p bytes of the account was released:
 * credited only if tw_dram_keep kept \p p (a block never charged - no
 * site, the runtime's own, served before the placement - gives nothing
 * back); \p p NULL: a charge kept without a block, always credited. */
TW_HIDDEN void tw_dram_give(const void *p, uint64_t bytes);
/* For the run report: placement site \p slot's rank (0: none), planned and
 * reserved bytes (its planned bytes if admitted, else 0), and the most of
 * the reservation it held at once. */
TW_HIDDEN int tw_dram_plan(int slot, uint64_t *planned, uint64_t *reserved,
                           uint64_t *held);
/* Bytes reserved in all (the admitted sites' most at one instant), and in
 * *instants the number of instants of the plan (1: none given). */
TW_HIDDEN uint64_t tw_dram_reserved_total(int *instants);
/* The unreserved rest of the limit not on the account now (what a site
 * without a reservation could take; UINT64_MAX without a limit). */
TW_HIDDEN uint64_t tw_dram_rest(void);
