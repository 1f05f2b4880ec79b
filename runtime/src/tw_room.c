/* SPDX-License-Identifier: MIT */
/*
 * Layer 2 (policy): the DRAM that is really there, when the slow tier is a
 * NUMA node (numa:N, kmem) - runtime/README.md "Room on the DRAM node".
 * A placement that says `dram` gets first-touch pages from the node the
 * program runs on only while that node has free memory above the kernel's
 * watermark; after that its pages come from the slow node, whatever the
 * report says. So, for the large DRAM objects (TW_ROOM_MIN or more: heap
 * blocks of DRAM sites and split objects' heads), the policy:
 *
 * - keeps the best-ranked DRAM data there (placement `rank`, 1 best): before
 *   a ranked object is served it reads the DRAM node's room (tw_node_room:
 *   free memory above what the allocator keeps from a program), less what
 *   tracked objects will still take at first touch, and when that is short
 *   it sends worse-ranked (or unranked) live objects' untouched pages to the
 *   slow node (their range's policy) and moves their pages there
 *   (move_pages), from their ends, so that
 *   the new object's pages find room at first touch, whatever the
 *   allocation order;
 * - follows the program's phases: when a large DRAM object is freed (the
 *   node's room grows), the best-ranked live objects get DRAM first: room
 *   for their untouched pages, their pages on other nodes (moved out above, or spilled at first touch) come
 *   back, and split objects whose tail is a NUMA node grow their head: the
 *   tail's first pages are preferred to the DRAM node (mbind MPOL_PREFERRED)
 *   and moved there, charged to the DRAM limit's account (credited at free);
 * - keeps that while the program runs: first touches spill even so (pages
 *   the demotions freed sit in per-CPU lists that MemFree and the
 *   watermark check do not count, until kswapd reclaims), so a watcher
 *   thread reads the room every TIERWISE_ROOM_INTERVAL ms and, when it grew
 *   by TW_ROOM_MIN since its lowest point, objects came or went, or ranked
 *   objects are not settled, runs the pass without the tails' growth:
 *   spilled pages come back into the room, or in exchange for as many
 *   pages of worse-ranked objects;
 * - says where the pages of those DRAM objects are: sampled at free and at
 *   exit into the site's `nodes` (run report), a warning when a DRAM site's
 *   pages are mostly elsewhere.
 *
 * The watcher is the one owner of that page work: allocating and freeing
 * threads post asks (room, a page sample before a free) and wait for its
 * answer, bounded (TIERWISE_ROOM_ASK_WAIT); a large free rings for its pass
 * and goes on; without a watcher they do it themselves (docs/room.md "Its
 * loop").
 *
 * Only the objects it tracks move (a table of TW_ROOM_SLOTS live ones); the
 * policy never binds (MPOL_BIND): a full node must not kill the program.
 * pmem tails are file pages and cannot move this way.
 */
#define _GNU_SOURCE
#include "tw_dram_limit.h"
#include "tw_room_plan.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The scheme: tw_cfg.room_* (tw_options in tw_config.c: each knob's
 * environment name, unit, default and what it answers to) */
#define TW_ROOM_MIN tw_cfg.room_min         /* DRAM parts tracked, room made */
#define TW_ROOM_RANK_MIN tw_cfg.room_rank_min /* ranked ones tracked */
#define TW_ROOM_MARGIN tw_cfg.room_margin   /* kept free above the watermark */
#define TW_ROOM_PCP_MIN tw_cfg.room_pcp_min /* a CPU's lists worth a pass */
#define TW_ROOM_WAIT_MAX tw_cfg.room_wait_max /* ticks between idle passes */
#define TW_ROOM_IDLE_SHARE tw_cfg.room_idle_share /* ...at most 1/N of a CPU */
#define TW_ROOM_SLOTS 1024 /* live objects tracked */
#define TW_ROOM_PAGE ((uintptr_t)4096)

typedef struct tw_room_blk {
  uintptr_t p;      /* the program's pointer; 0: free slot */
  uint64_t id;      /* which tracking of p (the view's write-back) */
  uintptr_t lo, hi; /* the DRAM part (pages inside it) */
  uintptr_t grown;  /* split: [hi, grown) of the tail promoted to DRAM */
  uintptr_t end;    /* split: end of the tail; plain block: hi */
  uint64_t charged; /* promoted bytes on the DRAM limit's account */
  size_t size;      /* the object's requested bytes */
  int rank;         /* placement rank, INT_MAX: none */
  int slot;         /* placement site, -1 */
  uint32_t site;
  int split;
  int settled; /* all its resident DRAM-part pages were on the DRAM node at
                  the last promotion pass, and none moved out since */
  int touched; /* all its DRAM-part pages were resident at the last look */
  int retracted; /* its later first touches were sent to the slow node */
  int small;     /* ranked, below TW_ROOM_MIN: its free rings no pass */
} tw_room_blk;

int tw_room_on;
size_t tw_room_track_min = SIZE_MAX;
static int tw_room_local = -1, tw_room_slow = -1;
/* The tracked objects: tracking and forgetting change them under
 * tw_room_lock, held only for that (never across page work). The passes
 * work on tw_view, a copy taken and put back under it (tw_view_take,
 * tw_view_put), one executor at a time (tw_room_exec): the watcher, the
 * owner of the page work - or, where there is none (TIERWISE_ROOM_INTERVAL=0,
 * a fork child), the thread that allocates or frees. */
static tw_room_blk tw_rb[TW_ROOM_SLOTS];
/* Slots [0, tw_rb_hi) have been used (a new object takes the first free
 * one, so this stays near the most objects live at once): the copies and
 * scans look no further (tw_room_lock). tw_view_n: its value at the view's
 * copy. */
static int tw_rb_hi, tw_view_n;
static tw_room_blk tw_view[TW_ROOM_SLOTS], tw_view0[TW_ROOM_SLOTS];
/* the view's ranks and live slots, the planner's input (tw_room_plan.c) */
static int tw_view_rank[TW_ROOM_SLOTS];
static unsigned char tw_view_live[TW_ROOM_SLOTS];
static uint64_t tw_rb_ids;
static int tw_rb_live;
static pthread_mutex_t tw_room_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t tw_room_exec = PTHREAD_MUTEX_INITIALIZER;
/* Room asked for by ranked objects about to be allocated (tw_room_before),
 * made by the watcher while the allocating thread waits, bounded; under
 * tw_room_lock. tw_ask_done: the last ticket answered (a futex). */
#define TW_ROOM_ASKS 64
enum { TW_ASK_ROOM, TW_ASK_SAMPLE };
static struct tw_room_ask {
  int kind;        /* room for a ranked object, a page sample */
  int rank;        /* room: the object's rank */
  unsigned promise; /* room: its promise's id (tw_promises) */
  uint64_t n;      /* room, sample: its bytes */
  uint32_t site;   /* a sample's site and object */
  const void *p;
  unsigned ticket;
} tw_asks[TW_ROOM_ASKS];
static int tw_nasks;
static unsigned tw_ask_ticket, tw_ask_done;
/* A free's pass is wanted and not yet begun (tw_room_freed: set without a
 * lock, the bell rung; nobody waits for it, and frees meanwhile ring no
 * other). */
static int tw_phase_posted;
/* The watcher's free's pass stopped for asks posted meanwhile (the frees'
 * page samples, a ranked malloc's room: their threads wait): it goes on
 * after they are answered (tw_room_answer; the watcher's only). */
static int tw_phase_again;
/* a sample whose thread stopped waiting (its object may be gone): its
 * ticket, at ticket % TW_ROOM_ASKS */
static unsigned tw_ask_dropped[TW_ROOM_ASKS];
/* Room made for ranked objects about to be allocated, not yet tracked (an
 * ask answered; the thread allocates, then tracks): until then a pass counts
 * it as owed at the object's rank, so that it does not give that room to
 * worse-ranked pages meanwhile (the watcher takes up a free's pass right
 * after answering an ask: on the yardstick's bfs at 1/2 it restored 13.9 MB
 * of worse-ranked pages that the next ask demoted again, and the edges'
 * first touches spilled). Kept by tw_room_make, cleared by tw_room_track
 * (the thread's tw_my_promise) or after TW_PROMISE_MS. Under tw_room_lock. */
#define TW_PROMISES 16
#define TW_PROMISE_MS 1000 /* an allocation and its tracking: microseconds */
static struct tw_promise {
  unsigned id; /* 0: free */
  int rank;
  uint64_t n, at_ns;
} tw_promises[TW_PROMISES];
static unsigned tw_promise_ids;
static __thread unsigned tw_my_promise;

/* Asks posted and not yet answered (the watcher). */
static int tw_asks_pending(void) {
  return __atomic_load_n(&tw_ask_done, __ATOMIC_ACQUIRE) !=
         __atomic_load_n(&tw_ask_ticket, __ATOMIC_ACQUIRE);
}
/* Work for the watcher's answer: asks, or a free's pass rung or stopped
 * for asks (the watcher's). */
static int tw_room_wanted(void) {
  return tw_asks_pending() || tw_phase_again ||
         __atomic_load_n(&tw_phase_posted, __ATOMIC_ACQUIRE);
}
static __thread int tw_room_owner; /* this thread is the watcher */
static int tw_room_ending;         /* the report is being written */
static tw_room_stats tw_rs;
static uint64_t *tw_rs_site; /* per placement site: demoted, restored,
                                promoted (3 each) */
static unsigned tw_room_gen;  /* objects tracked (the watcher; those
                                 forgotten: tw_room_freed's pass) */
static unsigned tw_room_bell; /* anything posted to the watcher: tw_room_gen's
                                 steps, asks, frees (a futex it sleeps on) */
static int tw_room_watching; /* the watcher was started */
static int tw_room_unsettled; /* ranked objects not settled at the last pass */
static void tw_room_watch_start(void);

/* The room lock in the fork handlers (tw_lifecycle.c): taken before the
 * DRAM limit's (tw_room_demote gives back under it; no lock of the limit's
 * is taken for a give without a block, nor the room's under another). */
void tw_room_atfork(int phase) {
  tw_mutex_atfork(&tw_room_exec, phase); /* (no pass in flight) */
  tw_mutex_atfork(&tw_room_lock, phase);
  if (phase == 2) { /* a child has no watcher: its own threads do the work */
    __atomic_store_n(&tw_room_watching, 0, __ATOMIC_RELAXED);
    tw_nasks = 0;
    tw_ask_done = tw_ask_ticket;
    tw_phase_posted = tw_phase_again = 0;
  }
}

/* The slow NUMA node the placement's tiers name (numa:N, or kmem's first
 * memory-only node), -1: none. */
static int tw_room_slow_node(void) {
  int n = tw_placement_nsites();
  for (int i = -1; i < n; i++) {
    int t = i < 0 ? tw_placement_default_tier() : tw_placement_tier(i);
    if (tw_tier_is_numa(t))
      return t - TW_TIER_NUMA0;
    if (t == TW_TIER_KMEM) {
      tw_nodeset m;
      if (tw_numa_memory_only(&m))
        for (unsigned k = 0; k < TW_NODES_MAX; k++)
          if (tw_set_has(&m, k))
            return (int)k;
    }
  }
  return -1;
}

void tw_room_init(void) {
  int slow = tw_room_slow_node(), local = tw_cpu_node();
  tw_rs.node = tw_rs.slow_node = -1;
  /* (zoneinfo grows with the CPUs: read only when it is used) */
  if (!tw_cfg.dram_limit_auto && !tw_cfg.numa_migrate &&
      (slow < 0 || !tw_cfg.room))
    return;
  uint64_t room = 0;
  if (local >= 0 && tw_node_meminfo((unsigned)local, "MemTotal"))
    room = tw_node_room((unsigned)local, &tw_rs.free_bytes,
                        &tw_rs.watermark_bytes);
  tw_rs.room_bytes = room;
  tw_rs.node = local;
  tw_rs.slow_node = slow;
  if (tw_cfg.dram_limit_auto) {
    /* the free pages in the node's per-CPU lists too, which MemFree does
     * not count (mm/page_alloc.c: a page moved to a pcp list leaves
     * NR_FREE_PAGES) and an allocation on that CPU takes first: a guest's
     * 2 CPUs held 8 MiB of a 21 MiB room there, and two processes sharing
     * the node each took 6 of their 10 MiB (issue 41) */
    if (room) {
      static uint64_t pcp[TW_CPUS_MAX]; /* (at start: no other thread) */
      tw_node_pcp((unsigned)local, pcp);
      for (int c = 0; c < TW_CPUS_MAX; c++)
        tw_rs.pcp_bytes += pcp[c];
    }
    /* (this process's share: tw_local_ranks) */
    uint64_t share =
        (room + tw_rs.pcp_bytes) / (tw_cfg.local_ranks ? tw_cfg.local_ranks : 1);
    tw_cfg.dram_limit = share ? share : 1; /* 1: no room at all */
    tw_free_slow = 1;
  }
  if (!tw_cfg.room || !room || slow < 0 || slow == local ||
      !tw_node_meminfo((unsigned)slow, "MemTotal"))
    return; /* (no slow node here: its tier falls back, nothing to move) */
  int n = tw_placement_nsites();
  size_t bytes = (size_t)(n > 0 ? n : 1) * 3 * sizeof(uint64_t);
  tw_rs_site = tw_internal_alloc(bytes);
  if (!tw_rs_site)
    return;
  memset(tw_rs_site, 0, bytes);
  tw_room_local = local;
  tw_room_slow = slow;
  tw_rs.kernel_demotes = (uint64_t)tw_kernel_demotes();
  /* frees of tracked objects must be seen; where nothing else needs the
   * slow path, its first step frees a glibc block smaller than the
   * smallest tracked object at once (tw_core_free: its chunk's size) -
   * TW_ROOM_MIN until a ranked block below it is tracked (tw_room_track) */
  if (!tw_free_slow)
    tw_free_big = TW_ROOM_MIN;
  tw_free_slow = 1;
  tw_room_track_min = TW_ROOM_MIN;
  __atomic_store_n(&tw_room_on, 1, __ATOMIC_RELEASE);
  tw_room_watch_start();
}

/* The DRAM node's room now: MemFree less what its zones keep from a
 * program (low watermarks plus lowmem_reserve), read at start (they change
 * only with sysctls or memory hotplug). */
static uint64_t tw_room_now(void) {
  uint64_t free = tw_node_meminfo((unsigned)tw_room_local, "MemFree");
  return free > tw_rs.watermark_bytes ? free - tw_rs.watermark_bytes : 0;
}

static int tw_room_rank(const tw_site *s) {
  uint64_t planned;
  int r = s && s->placed >= 0 ? tw_placement_rank(s->placed, &planned) : 0;
  return r > 0 ? r : INT_MAX;
}

/* What \p b's DRAM part will still take at first touch: room it is owed
 * (an array allocated before the kernel and first written in it must find
 * its room there, not given to another object's pages meanwhile). */
static uint64_t tw_room_owed(tw_room_blk *b) {
  if (b->touched)
    return 0;
  size_t absent = tw_pages_absent(b->lo, b->hi);
  b->touched = !absent;
  return absent;
}

/* An action tried on one object, \p applied: it moved pages (or took back
 * the room of untouched ones). */
static void tw_room_tally(int action, int applied) {
  tw_rs.tried[action]++;
  tw_rs.applied[action] += applied != 0;
}

static void tw_room_count(int slot, int what, uint64_t bytes) {
  if (slot >= 0 && bytes)
    tw_rs_site[3 * slot + what] += bytes;
}

/* Move \p need bytes of worse-ranked (than \p rank) objects' DRAM pages to
 * the slow node, worst first, each from its end. */
static void tw_room_demote(int rank, uint64_t need) {
  unsigned char cand[TW_ROOM_SLOTS];
  memcpy(cand, tw_view_live, (size_t)tw_view_n);
  while (need >= TW_ROOM_PAGE) {
    int v = tw_plan_victim(tw_view_rank, cand, tw_view_n, rank);
    if (v < 0)
      break;
    cand[v] = 0;
    tw_room_blk *b = &tw_view[v];
    /* its untouched pages give up the room they were owed: their first
     * touches go to the slow node (the range's policy; until a free gives
     * it room again) */
    uint64_t owed = tw_room_owed(b);
    if (owed && !tw_range_prefer(b->lo, b->hi, tw_room_slow)) {
      b->touched = b->retracted = 1;
      need = tw_plan_spend(need, owed);
    }
    size_t moved = 0;
    if (b->grown > b->hi) { /* a promoted tail goes back first */
      tw_range_prefer(b->hi, b->grown, tw_room_slow);
      moved += tw_pages_move(b->hi, b->grown, tw_room_local, tw_room_slow,
                             need, 1, NULL);
      b->grown = b->hi;
      tw_dram_give(NULL, b->charged);
      b->charged = 0;
    }
    if (moved < need)
      moved += tw_pages_move(b->lo, b->hi, tw_room_local, tw_room_slow,
                             need - moved, 1, NULL);
    tw_room_tally(TW_RA_DEMOTE, moved || b->retracted);
    tw_rs.demoted_bytes += moved;
    tw_room_count(b->slot, 0, moved);
    b->settled = 0;
    need = tw_plan_spend(need, moved);
  }
}

/* \p b (of the view) is still tracked: not freed since the view was taken. */
static int tw_view_tracked(const tw_room_blk *b) {
  const tw_room_blk *now = &tw_rb[b - tw_view];
  pthread_mutex_lock(&tw_room_lock);
  int same = now->p == b->p && now->id == b->id;
  pthread_mutex_unlock(&tw_room_lock);
  return same;
}

/* Settles \p b (touched, all on the DRAM node). Its pages still on other
 * nodes when the room is spent (first touches that spilled while the
 * kernel's free pages sat in per-CPU lists, which MemFree does not count,
 * or before kswapd reclaimed): as many pages of worse-ranked objects go to
 * the slow node, and b's come back in their place - the DRAM node's use
 * unchanged, the ranking kept. */
static void tw_room_exchange(tw_room_blk *b) {
  size_t away = tw_pages_elsewhere(b->lo, b->hi, tw_room_local);
  if (away < TW_ROOM_PAGE) {
    b->settled = b->touched;
    return;
  }
  /* (not for an object freed since the view was taken: a vector outgrown
   * while the pass ran - check-numa's bins case left node 0 a third
   * unused, the head's pages demoted for blocks already gone) */
  if (!tw_view_tracked(b))
    return;
  uint64_t before = tw_rs.demoted_bytes;
  tw_room_demote(b->rank, away);
  /* (tallied below, with what came back) */
  uint64_t freed = tw_rs.demoted_bytes - before;
  size_t in = freed ? tw_pages_move(b->lo, b->hi, -1, tw_room_local, freed, 0,
                                    NULL)
                    : 0;
  tw_room_tally(TW_RA_EXCHANGE, in);
  tw_rs.restored_bytes += in;
  tw_rs.exchanged_bytes += in;
  tw_room_count(b->slot, 1, in);
  b->settled = b->touched && in >= away;
}

/* The executor's copy of the tracked objects (tw_room_exec held). */
static void tw_view_take(void) {
  pthread_mutex_lock(&tw_room_lock);
  tw_view_n = tw_rb_hi;
  memcpy(tw_view, tw_rb, (size_t)tw_view_n * sizeof(*tw_view));
  pthread_mutex_unlock(&tw_room_lock);
  memcpy(tw_view0, tw_view, (size_t)tw_view_n * sizeof(*tw_view));
  for (int i = 0; i < tw_view_n; i++) {
    tw_view_live[i] = tw_view[i].p != 0;
    tw_view_rank[i] = tw_view[i].rank;
  }
}

/* Back into the table: what the pass learned and changed of each object
 * still tracked; of one forgotten meanwhile (freed while its pages moved),
 * the DRAM it was promoted since is given back (tw_room_forget gave what
 * it had) and its range's policy reset. */
static void tw_view_put(void) {
  int open = 0;
  pthread_mutex_lock(&tw_room_lock);
  for (int i = 0; i < tw_view_n; i++) {
    tw_room_blk *v = &tw_view[i], *was = &tw_view0[i], *now = &tw_rb[i];
    if (!v->p)
      continue;
    if (now->p == v->p && now->id == v->id) {
      *now = *v;
      open += v->rank != INT_MAX && !v->settled;
      continue;
    }
    if (v->charged > was->charged)
      tw_dram_give(NULL, v->charged - was->charged);
    if (v->grown != was->grown || v->retracted != was->retracted)
      tw_range_prefer(v->lo, v->grown > v->hi ? v->grown : v->hi, -1);
  }
  pthread_mutex_unlock(&tw_room_lock);
  __atomic_store_n(&tw_room_unsettled, open, __ATOMIC_RELAXED);
}

/* Promise \p id: \p n bytes of room made for a \p rank object (the
 * executor; at id % TW_PROMISES: the one it replaces, 16 asks older, is
 * long kept or expired). */
static void tw_promise_keep(unsigned id, int rank, uint64_t n) {
  uint64_t now = tw_now_ns();
  pthread_mutex_lock(&tw_room_lock);
  tw_promises[id % TW_PROMISES] = (struct tw_promise){id, rank, n, now};
  pthread_mutex_unlock(&tw_room_lock);
}

/* The live promises (expired ones dropped) into \p out; their count. */
static int tw_promises_take(struct tw_promise out[TW_PROMISES]) {
  uint64_t now = tw_now_ns();
  int k = 0;
  pthread_mutex_lock(&tw_room_lock);
  for (int i = 0; i < TW_PROMISES; i++) {
    struct tw_promise *q = &tw_promises[i];
    if (q->id && now - q->at_ns > (uint64_t)TW_PROMISE_MS * 1000000u)
      q->id = 0;
    if (q->id)
      out[k++] = *q;
  }
  pthread_mutex_unlock(&tw_room_lock);
  return k;
}

/* Room for \p n bytes of a \p rank object about to be allocated (the
 * executor, on tw_view), kept as promise \p id. */
static void tw_room_make(int rank, uint64_t n, unsigned id) {
  /* (what every tracked object will still take at first touch: a worse
   * ranked one touched first would take this one's room - it gives it up
   * in tw_room_demote) */
  /* (no margin where its first touches may go down to the min watermark
   * and kswapd only reclaims page cache: what the margin would leave free
   * is the room of a worse-ranked object's pages, moved out for nothing) */
  uint64_t margin = tw_plan_margin(tw_rs.kernel_demotes != 0,
                                   tw_range_prefer_many(), TW_ROOM_MARGIN);
  uint64_t room = tw_room_now(), need = n + margin;
  for (int i = 0; i < tw_view_n; i++)
    if (tw_view[i].p)
      need += tw_room_owed(&tw_view[i]);
  /* (and what was made for objects as good, not yet allocated) */
  struct tw_promise pr[TW_PROMISES];
  int np = tw_promises_take(pr);
  for (int i = 0; i < np; i++)
    if (pr[i].rank <= rank)
      need += pr[i].n;
  uint64_t shortfall = tw_plan_short(room, need);
  if (shortfall) {
    tw_rs.asked_bytes += shortfall;
    tw_room_demote(rank, shortfall);
  }
  if (id)
    tw_promise_keep(id, rank, n);
}

static uint64_t tw_room_pass(int watched, uint64_t extra);

/* The watcher's answer to the asks (tw_room_exec held): samples first
 * (their objects are about to be freed), then room, then one pass with
 * promotions for the frees that rang (tw_phase_posted). 1: that pass ran. */
static int tw_room_answer(void) {
  struct tw_room_ask asks[TW_ROOM_ASKS];
  pthread_mutex_lock(&tw_room_lock);
  int n = tw_nasks;
  unsigned ticket = tw_ask_ticket;
  memcpy(asks, tw_asks, (size_t)n * sizeof(*asks));
  tw_nasks = 0;
  pthread_mutex_unlock(&tw_room_lock);
  /* (a free from now on wants another pass) */
  int phase = __atomic_exchange_n(&tw_phase_posted, 0, __ATOMIC_ACQ_REL);
  int room = 0;
  for (int i = 0; i < n; i++) {
    room |= asks[i].kind == TW_ASK_ROOM;
    unsigned t = asks[i].ticket;
    if (asks[i].kind == TW_ASK_SAMPLE &&
        __atomic_load_n(&tw_ask_dropped[t % TW_ROOM_ASKS], __ATOMIC_ACQUIRE) != t)
      tw_site_sample_pages(asks[i].site, asks[i].p, asks[i].n);
  }
  if (room) {
    tw_view_take();
    for (int i = 0; i < n; i++)
      if (asks[i].kind == TW_ASK_ROOM)
        tw_room_make(asks[i].rank, asks[i].n, asks[i].promise);
    tw_view_put();
  }
  /* (answered before the free's pass: nobody waits for it, and it stops
   * only for asks posted after these) */
  __atomic_store_n(&tw_ask_done, ticket, __ATOMIC_RELEASE);
  tw_sys_futex_wake(&tw_ask_done, INT_MAX); /* (its waiters) */
  if (phase || tw_phase_again) {
    phase = 1;
    tw_phase_again = 0;
    tw_room_pass(0, 0);
  }
  return phase;
}

/* Posts an ask to the watcher and waits for its answer, bounded
 * (TIERWISE_ROOM_ASK_WAIT: after that the thread goes on - a ranked
 * object's first touches find what room there is, a sample is not taken).
 * 0: not posted (no watcher, or TW_ROOM_ASKS asks waiting). */
static unsigned tw_room_post(struct tw_room_ask a);
static int tw_room_ask(struct tw_room_ask a) {
  unsigned ticket = tw_room_post(a);
  if (!ticket)
    return 0;
  uint64_t end = 0; /* (the deadline: read once it is needed) */
  for (;;) {
    unsigned done = __atomic_load_n(&tw_ask_done, __ATOMIC_ACQUIRE);
    if ((int)(done - ticket) >= 0)
      return 1;
    uint64_t now = tw_now_ns();
    if (!end)
      end = now + tw_cfg.room_ask_wait_ms * 1000000u;
    else if (now >= end) {
      __atomic_store_n(&tw_ask_dropped[ticket % TW_ROOM_ASKS], ticket,
                       __ATOMIC_RELEASE);
      __atomic_fetch_add(&tw_rs.ask_timeouts, 1, __ATOMIC_RELAXED);
      return 1;
    }
    struct timespec left = {(time_t)((end - now) / 1000000000u),
                            (long)((end - now) % 1000000000u)};
    tw_sys_futex_wait(&tw_ask_done, done, &left);
  }
}

/* Posts an ask to the watcher and rings its bell; its ticket, 0: not
 * posted (no watcher, the watcher itself, or TW_ROOM_ASKS asks waiting). */
static unsigned tw_room_post(struct tw_room_ask a) {
  unsigned ticket = 0;
  if (!__atomic_load_n(&tw_room_watching, __ATOMIC_RELAXED) || tw_room_owner)
    return 0;
  pthread_mutex_lock(&tw_room_lock);
  if (tw_nasks < TW_ROOM_ASKS) {
    /* (atomic: the watcher reads it without the lock) */
    ticket = a.ticket = __atomic_add_fetch(&tw_ask_ticket, 1, __ATOMIC_RELEASE);
    tw_asks[tw_nasks++] = a;
    tw_rs.asks++;
    __atomic_fetch_add(&tw_room_bell, 1, __ATOMIC_RELAXED);
  }
  pthread_mutex_unlock(&tw_room_lock);
  if (ticket)
    tw_sys_futex_wake(&tw_room_bell, 1);
  return ticket;
}

void tw_room_before(const tw_site *s, uint64_t n) {
  int rank = tw_room_rank(s);
  if (n < TW_ROOM_MIN || rank == INT_MAX)
    return; /* only ranked data makes room */
  unsigned id = __atomic_add_fetch(&tw_promise_ids, 1, __ATOMIC_RELAXED);
  id += !id; /* (0: none) */
  tw_my_promise = id; /* (tw_room_track clears it) */
  if (tw_room_ask((struct tw_room_ask){
          .kind = TW_ASK_ROOM, .rank = rank, .n = n, .promise = id}))
    return; /* made by the watcher */
  pthread_mutex_lock(&tw_room_exec); /* no watcher: made here */
  tw_view_take();
  tw_room_make(rank, n, id);
  tw_view_put();
  pthread_mutex_unlock(&tw_room_exec);
}

/* tw_sample_by: an object of the room's size or more is sampled by the
 * watcher (a free or realloc waits for it); the report's own sampling at
 * exit, and the watcher's, are done in place. */
static int tw_room_sample(uint32_t site, const void *p, size_t len) {
  if (len < TW_ROOM_MIN || __atomic_load_n(&tw_room_ending, __ATOMIC_RELAXED))
    return 0;
  return tw_room_ask((struct tw_room_ask){
      .kind = TW_ASK_SAMPLE, .n = len, .site = site, .p = p});
}

/* This thread's promise is kept (its object is tracked, or will not be;
 * tw_room_lock held). */
static void tw_promise_done(void) {
  struct tw_promise *q = &tw_promises[tw_my_promise % TW_PROMISES];
  if (q->id == tw_my_promise)
    q->id = 0;
  tw_my_promise = 0;
}

void tw_room_track(const tw_site *s, const void *p, size_t size,
                   uint64_t dram, int tail_tier) {
  /* Objects of TW_ROOM_MIN or more; ranked ones from TW_ROOM_RANK_MIN:
   * no room was made before them (an ask per vector's growth would make
   * the kernel wait on the watcher), but their pages that spill at first
   * touch are exchanged for worse-ranked ones by the pass their tracking
   * rings - so a worse-ranked head yields them its room (issue 39's SSSP
   * bins: 85% on the slow node while the head filled node 0) */
  int rank = tw_room_rank(s);
  int skip = !s || dram < (rank != INT_MAX ? TW_ROOM_RANK_MIN : TW_ROOM_MIN);
  if (TW_UNLIKELY(tw_my_promise) && skip) {
    pthread_mutex_lock(&tw_room_lock);
    tw_promise_done();
    pthread_mutex_unlock(&tw_room_lock);
  }
  if (skip)
    return;
  /* the first small ranked block: from now on frees of glibc blocks down
   * to TW_ROOM_RANK_MIN look in the table (before it is tracked and
   * returned: a free of it, in any thread, comes after). Until then they
   * stay out of it - on the yardstick's fwlike-bfs, which has none, the
   * extra locked lookups of its build's frees moved the watcher's timing
   * enough to spill its vertex array at first touch: 1.005x in 3 of 3 runs
   * with TW_ROOM_MIN, 1.027-1.085x in 5 of 6 with the lower threshold */
  if (dram < TW_ROOM_MIN &&
      __atomic_load_n(&tw_room_track_min, __ATOMIC_RELAXED) > TW_ROOM_RANK_MIN) {
    __atomic_store_n(&tw_room_track_min, TW_ROOM_RANK_MIN, __ATOMIC_RELEASE);
    if (__atomic_load_n(&tw_free_big, __ATOMIC_RELAXED))
      __atomic_store_n(&tw_free_big, TW_ROOM_RANK_MIN, __ATOMIC_RELEASE);
  }
  uintptr_t a = (uintptr_t)p;
  tw_room_blk b = {
      .p = a,
      .lo = (a + TW_ROOM_PAGE - 1) & ~(TW_ROOM_PAGE - 1),
      .hi = (a + dram) & ~(TW_ROOM_PAGE - 1),
      .size = size,
      .rank = rank,
      .slot = s->placed,
      .site = (uint32_t)(s - tw_site_get(0)),
      .split = tail_tier >= 0,
      .small = dram < TW_ROOM_MIN,
  };
  b.grown = b.hi;
  /* a ranked block's first touches take the DRAM node's pages down to its
   * min watermark and from the per-CPU lists (tw_range_prefer; a split
   * object's head has that policy from its backend's split_head) */
  if (b.rank != INT_MAX && !b.split)
    tw_range_prefer(b.lo, b.hi, tw_room_local);
  /* only a NUMA node's tail can move (pmem's is file pages) */
  b.end = tail_tier >= 0 && (tw_tier_is_numa(tail_tier) ||
                             tail_tier == TW_TIER_KMEM)
              ? (a + size) & ~(TW_ROOM_PAGE - 1)
              : b.hi;
  int added = 0;
  pthread_mutex_lock(&tw_room_lock);
  for (int i = 0; i < TW_ROOM_SLOTS && !added; i++)
    if (!tw_rb[i].p) {
      b.id = ++tw_rb_ids;
      tw_rb[i] = b;
      tw_rb_live++;
      if (i >= tw_rb_hi)
        tw_rb_hi = i + 1;
      __atomic_fetch_add(&tw_room_gen, 1, __ATOMIC_RELAXED); /* (watcher) */
      __atomic_fetch_add(&tw_room_bell, 1, __ATOMIC_RELAXED);
      added = 1;
    }
  if (tw_my_promise) /* (it ends as the object is tracked: no pass sees neither) */
    tw_promise_done();
  pthread_mutex_unlock(&tw_room_lock);
  if (!added) /* (said at exit: the report's room.untracked, a warning) */
    __atomic_fetch_add(&tw_rs.untracked, 1, __ATOMIC_RELAXED);
  /* the watcher's pass at once, not at its next tick: the pages other
   * ranked objects spilled while this one was made (the kernel's free
   * pages in per-CPU lists) come back before it is used - numa-r23's bfs
   * and fwlike-bfs on 6.12 started their 1 s kernels with 336 and 858
   * pages of their edges on the slow node, back by the kernels' ends */
  if (added && __atomic_load_n(&tw_room_watching, __ATOMIC_RELAXED))
    tw_sys_futex_wake(&tw_room_bell, 1);
}

int tw_room_tracked(const void *p) {
  int found = 0;
  if (!__atomic_load_n(&tw_rb_live, __ATOMIC_RELAXED))
    return 0;
  pthread_mutex_lock(&tw_room_lock);
  for (int i = 0; i < tw_rb_hi && !found; i++)
    found = tw_rb[i].p == (uintptr_t)p;
  pthread_mutex_unlock(&tw_room_lock);
  return found;
}

int tw_room_forget(const void *p) {
  tw_room_blk b = {0};
  if (!p || !__atomic_load_n(&tw_rb_live, __ATOMIC_RELAXED))
    return 0;
  pthread_mutex_lock(&tw_room_lock);
  for (int i = 0; i < tw_rb_hi; i++)
    if (tw_rb[i].p == (uintptr_t)p) {
      b = tw_rb[i];
      tw_rb[i].p = 0;
      tw_rb_live--; /* (its pass: tw_room_freed's, which follows) */
      break;
    }
  pthread_mutex_unlock(&tw_room_lock);
  if (!b.p)
    return 0;
  /* (a heap range is reused: no policy left; a ranked plain block got one
   * in tw_room_track) */
  if (b.retracted || (b.rank != INT_MAX && !b.split))
    tw_range_prefer(b.lo, b.hi, b.split ? tw_room_local : -1);
  if (b.charged)
    tw_dram_give(NULL, b.charged);
  /* (its pages: sampled by the report's DRAM sampling, tw_place.c) */
  /* a small ranked block's free gives the kernel nothing back (a heap
   * chunk) or little: no pass for it */
  return !b.small;
}

/* Room grew: the best-ranked tracked objects get DRAM first - the room
 * their untouched pages will take, their pages elsewhere back, then split
 * objects' tails promoted - up to the room (less a margin) and the DRAM
 * limit's unreserved rest; \p extra bytes more (free pages the room does
 * not count: tw_room_pcp_passes). */
static uint64_t tw_room_pass(int watched, uint64_t extra) {
  tw_view_take();
  uint64_t moved0 = tw_rs.restored_bytes + tw_rs.promoted_bytes;
  uint64_t room = tw_room_now();
  uint64_t budget = tw_plan_budget(room, TW_ROOM_MARGIN, extra);
  unsigned char cand[TW_ROOM_SLOTS];
  memcpy(cand, tw_view_live, (size_t)tw_view_n);
  /* room made for objects not yet tracked is theirs at their rank */
  struct tw_promise pr[TW_PROMISES];
  int npr = tw_promises_take(pr);
  for (int done = 0;; done++) {
    /* the watcher's pass yields to the asks posted meanwhile (their threads
     * wait). A watched pass stops: a free's pass then grows the tails into
     * the room the free gave back before this pass restores worse-ranked
     * pages into it (a fresh-clone CI's room-promotes-after-phase: the
     * split grew 2 MiB, cold took the room); what is left is the next
     * pass's (a free rings for its pass without an ask: tw_phase_posted,
     * which a watched pass yields to as well - a check-numa run restored
     * cold's 40 MB into tmp's room while the split grew nothing). A free's
     * pass, after at least one object, goes on once they
     * are answered (tw_phase_again): the frees' page samples must not wait
     * for its page moves. */
    if (tw_room_owner && (watched || done) &&
        (tw_asks_pending() ||
         (watched && __atomic_load_n(&tw_phase_posted, __ATOMIC_ACQUIRE)))) {
      tw_phase_again |= !watched;
      break;
    }
    int v = tw_plan_best(tw_view_rank, cand, tw_view_n);
    if (v < 0)
      break;
    cand[v] = 0;
    tw_room_blk *b = &tw_view[v];
    for (int i = 0; i < npr; i++)
      if (pr[i].id && pr[i].rank <= b->rank) {
        budget = tw_plan_spend(budget, pr[i].n);
        pr[i].id = 0;
      }
    if (budget < TW_ROOM_PAGE) { /* the room is spent: exchanges only */
      if (!b->settled && b->rank != INT_MAX) {
        tw_room_owed(b); /* (is it all touched) */
        tw_room_exchange(b);
      }
      continue;
    }
    if (b->retracted && !tw_range_prefer(b->lo, b->hi, tw_room_local)) {
      b->retracted = 0; /* its first touches are the DRAM node's again */
      b->touched = 0;
    }
    uint64_t owed = tw_room_owed(b); /* its first touches come first */
    budget = tw_plan_spend(budget, owed);
    /* (a settled object is not looked at again: a pass per large free
     * must not cost all the tracked objects' pages each time) */
    int was = b->settled;
    size_t back = was ? 0
                      : tw_pages_move(b->lo, b->hi, -1, tw_room_local,
                                      budget, 0, NULL);
    if (!was)
      tw_room_tally(TW_RA_RESTORE, back);
    tw_rs.restored_bytes += back;
    tw_room_count(b->slot, 1, back);
    budget = tw_plan_spend(budget, back);
    /* what is still elsewhere (the budget spent, or pages a move skipped:
     * -EBUSY, -EAGAIN) is exchanged for worse-ranked pages, and decides
     * whether it is settled */
    if (!was)
      tw_room_exchange(b);
    if (watched)
      continue; /* (tails grow into the DRAM a free gave back, not into
                   any free memory: the placement's budget holds) */
    uint64_t grow = tw_plan_grow(b->end - b->grown, budget,
                                 tw_cfg.dram_limit != 0,
                                 tw_cfg.dram_limit ? tw_dram_rest() : 0,
                                 TW_ROOM_PAGE);
    tw_dram_ticket t;
    if (!grow)
      continue;
    if (!tw_dram_take(NULL, grow, &t)) {
      tw_room_tally(TW_RA_PROMOTE, 0);
      continue;
    }
    tw_dram_keep(&t, NULL, grow); /* (no block: not recorded) */
    if (tw_range_prefer(b->grown, b->grown + grow, tw_room_local)) {
      tw_dram_give(NULL, grow);
      tw_room_tally(TW_RA_PROMOTE, 0);
      continue;
    }
    tw_room_tally(TW_RA_PROMOTE, 1);
    size_t moved = tw_pages_move(b->grown, b->grown + grow, -1, tw_room_local,
                                 grow, 0, NULL);
    b->grown += grow;
    b->charged += grow;
    tw_rs.promoted_bytes += grow;
    tw_rs.promoted_moved_bytes += moved;
    tw_room_count(b->slot, 2, grow);
    budget -= grow; /* its untouched pages will fault into DRAM too */
  }
  if (watched)
    tw_rs.watched++;
  else
    tw_rs.phases++;
  tw_view_put();
  return tw_rs.restored_bytes + tw_rs.promoted_bytes - moved0;
}

/* A large DRAM object was freed: the pass with promotions, the owner's,
 * posted and not waited for; or the freeing thread's where there is no
 * owner. */
void tw_room_freed(void) {
  /* The free goes on: its pass is the watcher's (a BFS kernel that freed
   * large objects between its levels waited for three passes, 0.58 s of
   * guest time against first touch's 0.04 s: issue 39's stalls in the
   * kernel); one pass asked for serves every free before it begins. So the
   * room the free left goes to the better-ranked objects as fast as the
   * watcher moves their pages, while the program goes on. */
  if (__atomic_exchange_n(&tw_phase_posted, 1, __ATOMIC_ACQ_REL))
    return;
  if (__atomic_load_n(&tw_room_watching, __ATOMIC_RELAXED) && !tw_room_owner) {
    /* (no lock, no queue: the bell) */
    __atomic_fetch_add(&tw_room_bell, 1, __ATOMIC_RELEASE);
    tw_sys_futex_wake(&tw_room_bell, 1);
    return;
  }
  __atomic_store_n(&tw_phase_posted, 0, __ATOMIC_RELEASE); /* (no watcher) */
  pthread_mutex_lock(&tw_room_exec);
  tw_room_pass(0, 0);
  pthread_mutex_unlock(&tw_room_exec);
}

/* The room is spent and ranked objects still have pages elsewhere: the
 * DRAM node may still have free pages in the kernel's per-CPU lists, which
 * MemFree and the watermark check leave out and only an allocation on that
 * CPU takes (pages freed by moves and frees go there first; the yardstick's
 * guest had 6-16 MiB of its 1 GiB node 0 there during the programs' kernels
 * on 6.12, whose lists tune themselves, and 2-3.5 MiB on 6.1). So the
 * watcher runs a pass on each CPU it may run on whose lists hold
 * TW_ROOM_PCP_MIN or more, with them as the budget: the pages that pass
 * moves to the DRAM node are taken from there. Not where the kernel demotes
 * (tw_kernel_demotes): a move below the low watermark wakes kswapd, which
 * then demotes pages up to the high watermark - the ranked objects' among
 * them (the yardstick's fwlike-bfs in tierwise+linux mode on 6.12: 1,742
 * pages demoted, 1.224x against 1.005x without Linux's tiering). */
static uint64_t tw_room_pcp_passes(void) {
  static uint64_t pcp[TW_CPUS_MAX]; /* (the watcher's only) */
  cpu_set_t mine;
  if (tw_sys_affinity(&mine, NULL))
    return 0;
  tw_node_pcp((unsigned)tw_room_local, pcp);
  /* the margin the other passes keep above the watermark goes too: the
   * first touches it was kept for go down to the min watermark
   * (tw_range_prefer), and what it leaves to kswapd is page cache */
  uint64_t room = tw_room_now();
  uint64_t margin = room < TW_ROOM_MARGIN ? room : TW_ROOM_MARGIN;
  uint64_t moved = 0;
  for (int c = 0; c < TW_CPUS_MAX && c < CPU_SETSIZE; c++) {
    if (pcp[c] < TW_ROOM_PCP_MIN || !CPU_ISSET(c, &mine))
      continue;
    if (tw_sys_pin(c))
      continue;
    moved += tw_room_pass(1, pcp[c] - TW_ROOM_PCP_MIN / 2 + margin);
    margin = 0;
    tw_rs.pcp_passes++;
  }
  tw_sys_affinity(NULL, &mine);
  if (margin >= TW_ROOM_PCP_MIN)
    moved += tw_room_pass(1, margin);
  return moved;
}

/* The run report's node figures during the run (issue 39: those sampled
 * at free and at exit miss what happened in between - a head moved out
 * for the kernel and back after it): every TW_RUN_SAMPLE_MS the watcher
 * looks where at most TW_RUN_SAMPLE_PAGES pages of each tracked object's
 * DRAM part are (tw_room_exec held: frees of tracked objects wait for it)
 * and adds them to its site's run_node_pages. */
#define TW_RUN_SAMPLE_MS 1000
#define TW_RUN_SAMPLE_PAGES 64
static void tw_room_sample_run(void) {
  tw_view_take(); /* (read only: nothing to put back) */
  for (int i = 0; i < tw_view_n; i++) {
    const tw_room_blk *b = &tw_view[i];
    if (!b->p || b->hi <= b->lo)
      continue;
    uint64_t nodes[TW_REPORT_NODES] = {0};
    size_t looked = tw_numa_pages((const void *)b->lo, b->hi - b->lo, nodes,
                                  TW_REPORT_NODES, TW_RUN_SAMPLE_PAGES);
    tw_site *s = tw_site_get(b->site);
    __atomic_fetch_add(&s->run_pages_sampled, looked, __ATOMIC_RELAXED);
    for (int k = 0; k < TW_REPORT_NODES; k++)
      if (nodes[k])
        __atomic_fetch_add(&s->run_node_pages[k], nodes[k], __ATOMIC_RELAXED);
  }
}

/* The watcher: the asks first, at once (tw_room_answer); every
 * TIERWISE_ROOM_INTERVAL ms, the room; a pass when it grew by TW_ROOM_MIN
 * since the lowest it was seen at (spilled pages may now fit), when objects
 * came (those gone get their free's pass), or while ranked objects are not
 * settled (their first touches may still spill: exchanges) - then every
 * tick while passes move pages or objects come or go, backing off to every
 * TW_ROOM_WAIT_MAX-th while they move nothing (a ranked vector allocated
 * before the kernel is first touched in it: numa-r20's pagerank-pull on
 * 6.1 had its 5 s kernel run with 3.4 MiB of a head on the slow node and
 * 2 MiB of room unused, the watcher backed off to every 64th tick while
 * the graph was built). A quiet program costs one meminfo read per tick. */
static void *tw_room_watch(void *arg) {
  (void)arg;
  tw_room_owner = 1;
  tw_sys_thread_name("tw-room"); /* (its CPU time seen apart: top -H) */
  uint64_t ms = tw_cfg.room_interval_ms;
  struct timespec tick = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  uint64_t ns = ms * 100000u; /* a tenth of a tick */
  struct timespec brief = {(time_t)(ns / 1000000000u),
                           (long)(ns % 1000000000u)};
  uint64_t low = UINT64_MAX, next_sample = 0;
  unsigned seen = 0, rung = 0, idle = 0, wait = 1;
  for (;;) {
    /* a tick, ended early by the bell (an object tracked, an ask, a large
     * free); a tenth of one when objects came while the last pass ran (a
     * burst: one pass per that); none while asks or a free's pass wait
     * (posted after the bell was last read: not slept on) */
    int posted = tw_room_wanted();
    unsigned was = rung;
    if (posted)
      ;
    else if (__atomic_load_n(&tw_room_bell, __ATOMIC_RELAXED) == rung)
      tw_sys_futex_wait(&tw_room_bell, rung, &tick);
    else if (__atomic_load_n(&tw_room_gen, __ATOMIC_RELAXED) != seen)
      nanosleep(&brief, NULL);
    rung = __atomic_load_n(&tw_room_bell, __ATOMIC_RELAXED);
    int ticked = !posted && rung == was; /* (a tick, not the bell) */
    uint64_t cpu = tw_thread_cpu_ns(); /* (the report's watcher_cpu_ms) */
    if (cpu)
      __atomic_store_n(&tw_rs.watcher_cpu_ms, cpu / 1000000u,
                       __ATOMIC_RELAXED);
    /* asks first (their threads wait), then a free's pass with promotions */
    pthread_mutex_lock(&tw_room_exec);
    if (tw_room_wanted()) {
      unsigned gen = __atomic_load_n(&tw_room_gen, __ATOMIC_RELAXED);
      if (tw_room_answer())
        seen = gen; /* (objects came before a free's pass: it was theirs) */
    }
    pthread_mutex_unlock(&tw_room_exec);
    uint64_t now_ms = tw_now_ns() / 1000000u;
    if (tw_cfg.report_path && now_ms >= next_sample) {
      pthread_mutex_lock(&tw_room_exec);
      tw_room_sample_run();
      pthread_mutex_unlock(&tw_room_exec);
      next_sample = now_ms + TW_RUN_SAMPLE_MS;
    }
    uint64_t room = tw_room_now();
    low = room < low ? room : low;
    unsigned gen = __atomic_load_n(&tw_room_gen, __ATOMIC_RELAXED);
    int grew = room >= TW_ROOM_MARGIN + TW_ROOM_MIN && room >= low + TW_ROOM_MIN;
    int due = __atomic_load_n(&tw_room_unsettled, __ATOMIC_RELAXED) &&
              ticked && ++idle >= wait;
    if (!grew && gen == seen && !due)
      continue;
    if (grew)
      tw_rs.grown++; /* (the watcher's own count: only it writes it) */
    uint64_t c0 = tw_thread_cpu_ns();
    pthread_mutex_lock(&tw_room_exec);
    uint64_t moved = tw_room_pass(1, 0);
    /* (a pass that gives a worse-ranked object pages before a better one
     * is allocated is undone when it is: its room is made by demotions,
     * whose freed pages go to the allocating CPU's lists, where its first
     * touches take them - MPOL_PREFERRED_MANY, tw_range_prefer) */
    if (!tw_rs.kernel_demotes &&
        __atomic_load_n(&tw_room_unsettled, __ATOMIC_RELAXED) &&
        tw_room_now() < TW_ROOM_MARGIN + TW_ROOM_MIN)
      moved += tw_room_pcp_passes();
    pthread_mutex_unlock(&tw_room_exec);
    /* (an idle pass costs at most 1/TW_ROOM_IDLE_SHARE of a CPU: a large
     * object never all touched is read page by page at each) */
    uint64_t cost = tw_thread_cpu_ns() - c0;
    uint64_t floor = cost * TW_ROOM_IDLE_SHARE / (ms * 1000000u);
    wait = moved || gen != seen ? 1
           : wait < TW_ROOM_WAIT_MAX ? 2 * wait
                                      : TW_ROOM_WAIT_MAX;
    if (!moved && wait < floor)
      wait = floor < UINT_MAX ? (unsigned)floor : UINT_MAX;
    idle = 0;
    low = tw_room_now();
    seen = gen;
  }
  return NULL;
}

/* Started once the room is managed. A child of fork has no watcher (its
 * frees still run passes). */
static void tw_room_watch_start(void) {
  if (!tw_cfg.room_interval_ms)
    return;
  if (!tw_sys_thread(tw_room_watch)) {
    __atomic_store_n(&tw_room_watching, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&tw_sample_by, tw_room_sample, __ATOMIC_RELEASE);
  }
  else
    tw_warn("room: no watcher thread (", "pthread_create failed",
            "): spilled pages come back at large frees only");
}

void tw_room_site(int slot, uint64_t out[3]) {
  for (int k = 0; k < 3; k++)
    out[k] = tw_rs_site && slot >= 0 ? tw_rs_site[3 * slot + k] : 0;
}

void tw_room_end(void) {
  __atomic_store_n(&tw_room_ending, 1, __ATOMIC_RELAXED);
}

/* (Where the live DRAM objects' pages are, and the warning for a dram site
 * whose pages are mostly off the CPUs' nodes: the report's DRAM sampling,
 * tw_place.c and tw_report.c.) */
const tw_room_stats *tw_room_report(void) {
  tw_rs.on = tw_room_on;
  tw_pages_move_cost(&tw_rs.moves);
  return &tw_rs;
}

void tw_room_split_made(const void *p, uint64_t head, size_t size, int tier) {
  if (!tw_tier_is_numa(tier) && tier != TW_TIER_KMEM)
    return; /* (a pmem tail is a file mapping) */
  uintptr_t a = (uintptr_t)p;
  if (!tw_range_fault_default(a + head, a + size))
    __atomic_fetch_add(&tw_rs.migrate_bytes, size - head, __ATOMIC_RELAXED);
}
