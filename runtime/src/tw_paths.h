/* SPDX-License-Identifier: MIT */
/*
 * Layer 3 of the runtime, the allocation paths (runtime/README.md
 * "Layers"): what the entry points (tw_preload.c, tw_mmap.c, tw_api.c) call.
 * tw_alloc.c dispatches to the census path (tw_hdr.c, blocks with a
 * header) or the placement/pass-through path (tw_place.c, no header); the
 * run report (tw_report.c) is written from here at exit. Calls only
 * downward (policy, mechanisms, base). Not installed.
 */
#pragma once

#include "tw_dram_limit.h"
#include "tw_fast.h"

/* ---- tw_alloc.c: the allocation paths (ra, sp: the caller's key) ---- */
TW_HIDDEN void *tw_alloc(size_t size, size_t align, int zero, void *ra,
                         void *sp);
TW_HIDDEN void tw_core_free(void *p);
TW_HIDDEN void *tw_core_realloc(void *p, size_t size, void *ra, void *sp);
TW_HIDDEN size_t tw_usable(void *p);
/* tierwise.h: from \p tier, the first \p dram_bytes from DRAM (0: none,
 * or a placement's head for the calling site; see tw_malloc_head). */
TW_HIDDEN void *tw_alloc_tier(int tier, uint64_t dram_bytes, size_t size,
                              size_t align, int zero);
TW_HIDDEN int tw_tier_of_ptr(const void *p);

/* ---- tw_hdr.c: census blocks (with a header) ---- */
TW_HIDDEN void *tw_hb_alloc(size_t size, size_t align, int zero);
TW_HIDDEN void *tw_hb_alloc_tier(int tier, size_t size, size_t align, int zero);
TW_HIDDEN void tw_hb_free(void *p);
TW_HIDDEN size_t tw_hb_usable(void *p);
TW_HIDDEN int tw_hb_tier_of(const void *p);
TW_HIDDEN void *tw_hb_realloc(void *p, size_t size);

/* ---- tw_place.c: header-less placement and pass-through paths ---- */
TW_HIDDEN void *tw_pl_alloc(size_t size, size_t align, int zero, void *ra,
                            void *sp);
TW_HIDDEN void *tw_pl_alloc_tier(int tier, uint64_t dram_bytes, size_t size,
                                 size_t align, int zero);
TW_HIDDEN void tw_pl_free(void *p);
TW_HIDDEN size_t tw_pl_usable(void *p);
TW_HIDDEN int tw_pl_tier_of(const void *p);
TW_HIDDEN void *tw_pl_realloc(void *p, size_t size, void *ra, void *sp);
/* A malloc (calloc: \p zero) below tw_fast_limit (placement mode, the fast
 * path on, no DRAM limit) that missed the inline fast path: served as
 * tw_alloc serves it, without tw_alloc, tw_fast_site and tw_site_first when
 * the thread's memo of frames answers its site (tw_fast_memo). NULL: out
 * of memory, errno ENOMEM. */
TW_HIDDEN void *tw_pl_alloc_miss(size_t size, int zero, void *ra, void *sp);
/* An inline cache hit (tw_preload.c) that is not a plain DRAM block
 * (another tier, or under Valgrind): serve it from the entry's tier. */
TW_HIDDEN void *tw_fast_serve(tw_fast_entry *e, size_t size, int zero);
/* An anonymous mmap (tw_mmap.c) of \p len at the current site, in
 * placement or census mode: served from the site's tier; MAP_FAILED. */
TW_HIDDEN void *tw_pl_map(void *addr, size_t len, int prot, int flags, int fd,
                          off_t off);
/* munmap of a mapping tw_pl_map served: 1 and *rc, or 0 (not ours). */
TW_HIDDEN int tw_pl_unmap(void *addr, size_t len, int *rc);
/* mremap of a mapping tw_pl_map served: 1 and *out, or 0 (not ours).
 * \p to: MREMAP_FIXED's address. */
TW_HIDDEN int tw_pl_remap(void *old, size_t old_len, size_t new_len, int flags,
                          void *to, void **out);

/* ---- tw_report.c: the run report at exit ---- */
TW_HIDDEN void tw_report_write(void);
TW_HIDDEN void tw_report_claim(void); /* at start: named process or not */

/* ---- tw_signal.c (layer 4): the report at SIGTERM, SIGINT and SIGHUP where
 * their disposition is the default (\p finish writes it) ---- */
TW_HIDDEN void tw_signal_catch(void (*finish)(void));
