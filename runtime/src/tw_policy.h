/* SPDX-License-Identifier: MIT */
/*
 * Layer 2 of the runtime, the policy (runtime/README.md "Layers"): which
 * tier a site's objects go to (placement.json matching, tw_placement.c),
 * the DRAM limit and where objects over it go (tw_policy.c), and the
 * per-thread cache of those decisions (tw_fastpath.c, tw_fast.h). Calls
 * only into itself, the mechanisms and the base. Not installed.
 */
#pragma once

#include "tw_mech.h"

#include <valgrind/helgrind.h>

/* ---- tw_placement.c: placement.json ---- */
TW_HIDDEN int tw_placement_load(const char *path);
TW_HIDDEN int tw_placement_parse(const char *text, const char *name);
TW_HIDDEN int tw_placement_match(const char *stack, int *tier);
/* 1 if some placement site's stack may start in the module of \p stack's
 * first frame (its hash is one of theirs), 0 if none does. */
TW_HIDDEN int tw_placement_leads(const char *stack);
/* The same for \p stack's first frame itself. */
TW_HIDDEN int tw_placement_leads_frame(const char *stack);
/* 1 if objects of \p tier may come from module \p module (basename): some
 * site of that tier starts in it, or it is the default tier. */
TW_HIDDEN int tw_placement_tier_starts_in(int tier, const char *module);
TW_HIDDEN int tw_placement_default_tier(void);
TW_HIDDEN int tw_placement_depth(void);
TW_HIDDEN int tw_placement_nsites(void);
TW_HIDDEN const char *tw_placement_field(int i, int which); /* 0 stack,
                                                             1 location */
TW_HIDDEN int tw_placement_tier(int i);
/* Site i is not tracked (a default-tier site of a large placement:
 * TIERWISE_TRACK_DEFAULT_MAX); how many are not. */
TW_HIDDEN int tw_placement_quiet(int i);
TW_HIDDEN int tw_placement_nquiet(void);
/* The placement cache (tw_placement_cache.c): "read", "written", "not
 * written", "off", "small" or "" (no placement file); *path: its file. */
TW_HIDDEN const char *tw_pcache_state(const char **path);
TW_HIDDEN uint64_t tw_placement_dram_bytes(int i); /* 0 for -1 */
TW_HIDDEN double tw_placement_dram_fraction(int i); /* 0: none, or -1 */
/* The advisor's DRAM rank of site \p i (0: none) and *planned bytes. */
TW_HIDDEN int tw_placement_rank(int i, uint64_t *planned);
/* Site \p i's planned DRAM bytes at each instant of the advisor's plan
 * (placement planned_live; *live NULL and 0: none, its planned bytes at
 * every instant). Returns the number of instants. */
TW_HIDDEN int tw_placement_live(int i, const uint64_t **live);
TW_HIDDEN void tw_placement_check_modules(void);

/* ---- tw_policy.c: decisions beyond the placement ---- */
/* A site's tier and head, decided once (tw_policy.c). */
TW_HIDDEN void tw_decide(tw_site *s);
/* The site of the current call stack (tw_site_here), its tier and DRAM
 * head decided (placement matching, once per site). Inline: no frame of
 * its own for the unwinder to walk. */
static inline __attribute__((always_inline)) uint32_t
tw_policy_site_here(void) {
  uint32_t i = tw_site_here();
  if (i == TW_SITE_NONE)
    return i;
  if (TW_UNLIKELY(!__atomic_load_n(&tw_site_get(i)->decided, __ATOMIC_ACQUIRE)))
    tw_decide(tw_site_get(i));
  else if (TW_UNLIKELY(tw_vg == TW_VG_OTHER)) /* helgrind: see tw_decide */
    ANNOTATE_HAPPENS_AFTER(&tw_site_get(i)->decided);
  return i;
}
/* The site of an allocation called from \p ra: when no placement site
 * starts with its first frame (tw_site_first) it cannot be placed, and
 * that one-frame site stands for it (default tier) without a full unwind -
 * an Open MPI start-up makes ~12,000 distinct call paths, whose unwinds
 * were 3/4 of its instructions with a one-site placement, and 4.4x the
 * program's with one site rooted in libopen-pal while this was asked of
 * the first frame's module. A \p big allocation (the fast path's size,
 * always unwound) in a module some placement site starts in keeps its
 * full stack (the run report's "unmatched" shows where it came from).
 * Else the full stack's site (tw_policy_site_here). *sure: 1 when every
 * call from \p ra has this site (its first frame is ra's own and leads no
 * placement site), so that the fast path need not learn the key. \p memo:
 * the thread's (tw_site_first), or NULL. */
static inline __attribute__((always_inline)) uint32_t
tw_policy_site_at(void *ra, void *sp, int *sure, tw_frame_memo *memo,
                  int big) {
  int by_ra = 0;
  *sure = 0;
  if (tw_placement_nsites() > 0) {
    uint32_t f = tw_site_first(ra, sp, &by_ra, memo);
    if (f != TW_SITE_NONE) {
      tw_site *s = tw_site_get(f);
      if (TW_UNLIKELY(!__atomic_load_n(&s->decided, __ATOMIC_ACQUIRE)))
        tw_decide(s);
      else if (TW_UNLIKELY(tw_vg == TW_VG_OTHER))
        ANNOTATE_HAPPENS_AFTER(&s->decided);
      if (!s->leads && !(big && s->mod_leads)) {
        *sure = by_ra;
        return f;
      }
    }
  }
  return tw_policy_site_here();
}
TW_HIDDEN void tw_policy_atfork(int phase); /* 0 prepare, 1 parent, 2 child */
/* Load the placement (placement mode), classify sites by it from now on,
 * open the tiers it uses. 1: a placement is loaded. */
TW_HIDDEN int tw_policy_init(void);
/* The tier DRAM objects over the limit go to: the first slow tier the
 * placement names that is available, else pmem; -1: none available. */
TW_HIDDEN int tw_dram_overflow_tier(void);

/* ---- tw_room.c: the DRAM node's real room (runtime/README.md "Room on
 * the DRAM node"); active when the placement's slow tier is a NUMA node
 * other than the one the program starts on ---- */
TW_HIDDEN extern int tw_room_on;
/* The smallest glibc block the room may track (frees and reallocs of
 * smaller ones need not look): TIERWISE_ROOM_MIN, then
 * TIERWISE_ROOM_RANK_MIN once a ranked block below it was tracked. */
TW_HIDDEN extern size_t tw_room_track_min;
typedef struct tw_room_stats {
  int on, node, slow_node;           /* DRAM node, slow node (-1: none) */
  uint64_t room_bytes, free_bytes;   /* at start: room = free - watermark */
  uint64_t watermark_bytes;
  uint64_t pcp_bytes;                /* at start: free pages in its CPUs' lists */
  uint64_t asked_bytes;              /* room short for ranked objects */
  uint64_t demoted_bytes;            /* moved to the slow node for them */
  uint64_t restored_bytes;           /* moved back / spilled pages fetched */
  uint64_t exchanged_bytes;          /* of them, for worse-ranked pages */
  uint64_t promoted_bytes;           /* split tails grown into DRAM */
  uint64_t promoted_moved_bytes;     /* of them, resident pages moved */
  uint64_t phases;                   /* large DRAM frees that promoted */
  uint64_t watched;                  /* passes the watcher ran */
  uint64_t grown;                    /* of them, after the room grew */
  uint64_t pcp_passes;               /* of them, into per-CPU lists */
  uint64_t kernel_demotes;           /* tw_kernel_demotes(): no pcp passes */
  uint64_t migrate_bytes;            /* TIERWISE_NUMA_MODE=migrate tails */
  /* per action (enum tw_room_action), as DAMON's schemes count theirs: the
   * objects an action was tried on, and those it moved pages of */
  uint64_t tried[4], applied[4];
  uint64_t asks;                     /* allocations that asked the watcher */
  uint64_t ask_timeouts;             /* of them, gone on before its answer */
  uint64_t untracked; /* DRAM objects of TW_ROOM_MIN+ left to first touch:
                         every slot was taken */
  uint64_t watcher_cpu_ms; /* the watcher thread's CPU time, to its last
                              wake-up */
  tw_move_cost moves; /* its page moves' cost (tw_pages_move_cost) */
} tw_room_stats;
enum tw_room_action { TW_RA_DEMOTE, TW_RA_RESTORE, TW_RA_EXCHANGE,
                      TW_RA_PROMOTE };
/* After the placement is loaded, before the DRAM limit's reservations:
 * the DRAM node's room (TIERWISE_DRAM_LIMIT=auto takes it as the limit). */
TW_HIDDEN void tw_room_init(void);
/* Before serving \p n DRAM bytes (a block, a split head) for \p s: room
 * made for a ranked site's large object (worse-ranked pages moved out). */
TW_HIDDEN void tw_room_before(const tw_site *s, uint64_t n);
/* Served: \p p of \p size, its first \p dram bytes DRAM, the rest of
 * \p tail_tier (-1: a plain DRAM block). Large ones are tracked, ranked
 * ones from TIERWISE_ROOM_RANK_MIN. */
TW_HIDDEN void tw_room_track(const tw_site *s, const void *p, size_t size,
                             uint64_t dram, int tail_tier);
TW_HIDDEN int tw_room_tracked(const void *p);
/* Before releasing \p p (forgotten if it was tracked): 1 if its free gives
 * the DRAM node room (call tw_room_freed after the release), 0 if it was
 * not tracked or is a ranked block below TIERWISE_ROOM_MIN (no pass). */
TW_HIDDEN int tw_room_forget(const void *p);
TW_HIDDEN void tw_room_freed(void);
TW_HIDDEN void tw_room_atfork(int phase); /* 0 prepare, 1 parent, 2 child */
/* Run report: placement site \p slot's demoted, restored, promoted bytes;
 * the totals (live DRAM objects sampled first). */
TW_HIDDEN void tw_room_site(int slot, uint64_t out[3]);
TW_HIDDEN const tw_room_stats *tw_room_report(void);
/* The report is being written: its sampling of live objects is done in
 * place from now on, not by the watcher. */
TW_HIDDEN void tw_room_end(void);
/* TIERWISE_NUMA_MODE=migrate: split object \p p of \p size was made with
 * its tail (after \p head) in NUMA tier \p tier: its pages are faulted
 * onto the slow node now and its policy set back to the default, so that
 * Linux's NUMA balancing can still promote them (runtime/README.md "Linux
 * tiering beside it"). */
TW_HIDDEN void tw_room_split_made(const void *p, uint64_t head, size_t size,
                                  int tier);
