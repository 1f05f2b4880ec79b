/* SPDX-License-Identifier: MIT */
/*
 * Layer 2 (policy): the DRAM limit (tw_dram_limit.h). One account of live DRAM
 * bytes the runtime served (heap blocks' usable size, split objects' heads,
 * anonymous DRAM mappings), and, when the placement ranks its DRAM sites,
 * one reservation shared by the ranked sites admitted under the limit:
 * a site takes DRAM from the reservation first (up to its planned bytes)
 * and otherwise from the unreserved rest, so the limit minus the unspent
 * reservation is all that a lower-ranked (or unranked) site allocated first
 * can take.
 *
 * The reservation follows the advisor's lifetime-aware plan: placement
 * `planned_live` gives each ranked site's DRAM bytes at the instants of the
 * target run where the plan's DRAM use can peak. Sites are admitted best
 * rank first while, at every instant, the admitted sites' bytes fit the
 * limit, and the reservation is the most they hold at one instant: two
 * sites never live together share its bytes, as the advisor planned. A
 * site without planned_live holds its planned bytes at every instant, which
 * makes the reservation the sum of the planned bytes (static per-site
 * reservations).
 *
 * Every block charged to the reservation is recorded (address, site,
 * bytes) so that its free gives the bytes back to the reservation: a site
 * that frees and allocates again (realloc growth, per-iteration arrays), or
 * whose DRAM a later site inherits, keeps the reservation whole. Blocks
 * beyond the table (half of each stripe of it live at once, blocks under
 * 4 KiB a quarter, so that small ones do not crowd out large ones) spend
 * their share for good (their bytes still return to the account).
 *
 * No lock is shared by all threads: the account is one word changed by
 * compare-and-swap, a site's share of the reservation and the unspent
 * reservation are claimed by compare-and-swap, and a record is kept or
 * found under the lock of its stripe of the table (64 stripes) - only for
 * blocks charged to a reservation, and a free whose stripe holds no record
 * takes none. Two allocations racing for the last bytes of a site's share
 * may both see the share taken for a moment (one of them then takes from
 * the unreserved rest, or falls back, as one arriving a moment later would
 * under a lock).
 *
 * Only what was charged is credited: every block kept on the account sets
 * a bit at its address (a bit per 16 bytes, glibc's alignment: per GiB of
 * address space 8 MiB of sparse, never-reserved memory, touched only
 * where charged blocks are), and its free clears it and credits the block
 * only if it was set. The program's site-less blocks (stacks without a
 * user frame: libraries' own), the runtime's and those served before the
 * placement was loaded are never charged, so their frees no longer drive
 * the account below what the charged blocks hold.
 */
#define _GNU_SOURCE
#include "tw_dram_limit.h"

#include <pthread.h>
#include <sys/mman.h>
#include <stdatomic.h>
#include <stdlib.h>

#define TW_DRAM_REC_SLOTS (1u << 14) /* power of two */
#define TW_DRAM_REC_SMALL 4096u       /* smaller blocks: a quarter at most */

typedef struct tw_dram_rec {
  uintptr_t p; /* 0: empty */
  int slot;
  uint32_t slack; /* allocator rounding not on the account */
  uint64_t own;
} tw_dram_rec;

/* The records in stripes of 256 slots, each with its own lock and count
 * (a block's stripe and home slot from its address): no lock is shared by
 * all threads, and a free whose stripe holds no record takes none. */
#define TW_REC_STRIPES 64u
#define TW_REC_STRIPE (TW_DRAM_REC_SLOTS / TW_REC_STRIPES)
typedef struct tw_rec_stripe {
  pthread_mutex_t lock;
  _Atomic unsigned n;
} __attribute__((aligned(64))) tw_rec_stripe;

/* The limit's account: live DRAM bytes plus the reservation's unspent
 * bytes, one word changed by compare-and-swap, so that the decision (does
 * the account plus what this allocation adds stay under the limit?) needs
 * no lock. A site taking from its reservation moves bytes from unspent to
 * live: only the rest is added. Signed: a credit racing ahead of its
 * charge (or a charge kept without a block, e.g. room's) must not wrap to
 * 2^64 and push every later block to the slow tier. */
static _Atomic int64_t tw_used;
static int tw_ranked;          /* any reservation */
static uint64_t *tw_res_bytes; /* per placement site: its cap (planned) */
static _Atomic uint64_t *tw_res_used; /* of it, held by the site now */
static _Atomic uint64_t *tw_res_peak; /* the most it held at once */
static _Atomic int64_t tw_unspent;    /* reservation not held by a site */
static uint64_t tw_reserved;   /* the reservation: admitted sites' peak */
static int tw_instants;        /* of the plan (placement planned_live) */
static tw_dram_rec *tw_recs;
static tw_rec_stripe tw_stripes[TW_REC_STRIPES]; /* zeroed: unlocked */

void tw_dram_limit_atfork(int phase) {
  for (unsigned i = 0; i < TW_REC_STRIPES; i++)
    tw_mutex_atfork(&tw_stripes[i].lock, phase);
}

/* Charged blocks: per GiB (as the page-owner map), a bit per 16 bytes.
 * The top table is mapped when a limit is set, not in .bss: a .bss of 2 MiB
 * or more can hold a 2 MiB-aligned piece that THP "always" backs with a
 * huge page at its first write - 2 MiB of DRAM the program does not have
 * (runtime/bss.test keeps .bss below that). */
#define TW_CHG_BYTES ((size_t)1 << 23)
static _Atomic(uint64_t *) *tw_chg;

static uint64_t *tw_chg_gib(uintptr_t a, int make) {
  if (!tw_chg)
    return NULL;
  _Atomic(uint64_t *) *top = &tw_chg[(a >> 30) & (TW_PMAP_TOP - 1)];
  uint64_t *m = atomic_load_explicit(top, memory_order_acquire);
  if (m || !make)
    return m;
  void *n = tw_sys_sparse(TW_CHG_BYTES);
  if (!n)
    return NULL;
  if (!atomic_compare_exchange_strong(top, &m, (uint64_t *)n)) {
    tw_sys_munmap(n, TW_CHG_BYTES); /* another thread made it first */
    return m;
  }
  return n;
}

/* Mark \p p charged (without memory for the mark it is never credited:
 * the account keeps its bytes, erring on the side of the limit). */
static void tw_chg_set(const void *p) {
  uintptr_t a = (uintptr_t)p;
  uint64_t *m = tw_chg_gib(a, 1);
  size_t g = (a & (((uintptr_t)1 << 30) - 1)) >> 4;
  if (m)
    atomic_fetch_or((_Atomic uint64_t *)&m[g >> 6], 1ull << (g & 63));
}

/* Was \p p charged? Clears the mark (a block is freed once). */
static int tw_chg_take(const void *p) {
  uintptr_t a = (uintptr_t)p;
  uint64_t *m = tw_chg_gib(a, 0);
  size_t g = (a & (((uintptr_t)1 << 30) - 1)) >> 4;
  uint64_t bit = 1ull << (g & 63);
  if (!m || !(atomic_load_explicit((_Atomic uint64_t *)&m[g >> 6],
                                   memory_order_relaxed) &
               bit))
    return 0;
  return (atomic_fetch_and((_Atomic uint64_t *)&m[g >> 6], ~bit) & bit) != 0;
}

typedef struct tw_ranked_site {
  int slot, rank;
} tw_ranked_site;

static int tw_by_rank(const void *a, const void *b) {
  const tw_ranked_site *x = a, *y = b;
  return x->rank != y->rank ? (x->rank > y->rank) - (x->rank < y->rank)
                            : (x->slot > y->slot) - (x->slot < y->slot);
}

/* Site \p slot's planned bytes at instant \p c: planned_live, or its
 * planned bytes throughout. */
static uint64_t tw_live_at(int slot, int c, uint64_t planned) {
  const uint64_t *live;
  return tw_placement_live(slot, &live) > c ? live[c] : planned;
}

void tw_dram_limit_init(void) {
  int n = tw_placement_nsites(), k = 0, nt = 1;
  if (!tw_cfg.dram_limit || n <= 0)
    return;
  tw_chg = tw_sys_sparse(TW_PMAP_TOP * sizeof(*tw_chg));
  tw_ranked_site *order = tw_internal_alloc((size_t)n * sizeof(*order));
  tw_res_bytes = tw_internal_alloc((size_t)n * sizeof(uint64_t));
  tw_res_used = tw_internal_alloc((size_t)n * sizeof(*tw_res_used));
  tw_res_peak = tw_internal_alloc((size_t)n * sizeof(*tw_res_peak));
  if (!order || !tw_res_bytes || !tw_res_used || !tw_res_peak)
    return;
  for (int i = 0; i < n; i++) {
    uint64_t planned;
    const uint64_t *live;
    int rank = tw_placement_rank(i, &planned), m = tw_placement_live(i, &live);
    if (rank > 0 && planned)
      order[k++] = (tw_ranked_site){i, rank};
    nt = m > nt ? m : nt;
  }
  uint64_t *usage = tw_internal_alloc((size_t)nt * sizeof(uint64_t));
  if (!usage)
    return;
  qsort(order, (size_t)k, sizeof(*order), tw_by_rank);
  /* best first, each while its bytes fit beside those admitted at every
   * instant (a site that does not is skipped: a smaller one after it may
   * still fit) */
  for (int j = 0; j < k; j++) {
    uint64_t planned;
    int slot = order[j].slot, fits = 1;
    tw_placement_rank(slot, &planned);
    for (int c = 0; c < nt && fits; c++)
      fits = usage[c] + tw_live_at(slot, c, planned) <= tw_cfg.dram_limit;
    if (!fits)
      continue;
    for (int c = 0; c < nt; c++)
      usage[c] += tw_live_at(slot, c, planned);
    tw_res_bytes[slot] = planned;
  }
  for (int c = 0; c < nt; c++)
    tw_reserved = usage[c] > tw_reserved ? usage[c] : tw_reserved;
  tw_instants = nt;
  if (tw_reserved) {
    tw_recs = tw_internal_alloc(TW_DRAM_REC_SLOTS * sizeof(tw_dram_rec));
    atomic_store(&tw_unspent, (int64_t)tw_reserved);
    atomic_fetch_add(&tw_used, (int64_t)tw_reserved); /* all unspent */
    tw_ranked = 1;
  }
}

/* Up to \p n bytes of site \p slot's reservation (its cap not yet held,
 * and the unspent reservation), moved to the site: what was taken. */
static uint64_t tw_claim(int slot, uint64_t n) {
  uint64_t cap = tw_res_bytes[slot], used = atomic_load(&tw_res_used[slot]), c;
  do {
    c = used < cap ? cap - used : 0;
    c = n < c ? n : c;
    if (!c)
      return 0; /* the site holds its planned bytes: the rest only */
  } while (!atomic_compare_exchange_weak(&tw_res_used[slot], &used, used + c));
  int64_t un = atomic_load(&tw_unspent);
  uint64_t got;
  do {
    got = un > 0 ? (uint64_t)un : 0; /* shared in time: another site */
    got = c < got ? c : got;         /* may hold what this one planned */
  } while (got && !atomic_compare_exchange_weak(&tw_unspent, &un,
                                                un - (int64_t)got));
  if (got < c)
    atomic_fetch_sub(&tw_res_used[slot], c - got);
  uint64_t peak = atomic_load(&tw_res_peak[slot]), now = used + got;
  while (now > peak &&
         !atomic_compare_exchange_weak(&tw_res_peak[slot], &peak, now))
    ;
  return got;
}

static void tw_unreserve(int slot, uint64_t own) {
  atomic_fetch_sub(&tw_res_used[slot], own);
  atomic_fetch_add(&tw_unspent, (int64_t)own);
}

int tw_dram_take(const tw_site *s, uint64_t n, tw_dram_ticket *t) {
  *t = (tw_dram_ticket){-1, 0, 0};
  if (!tw_cfg.dram_limit)
    return 1;
  int slot = tw_ranked && s ? s->placed : -1;
  uint64_t own = slot >= 0 && tw_res_bytes[slot] ? tw_claim(slot, n) : 0;
  /* fits if account + n - own <= limit: the site's own bytes were already
   * on the account as unspent reservation */
  int64_t add = (int64_t)(n - own), u = atomic_load(&tw_used);
  do {
    if ((u > 0 ? (uint64_t)u : 0) + (uint64_t)add > tw_cfg.dram_limit) {
      if (own)
        tw_unreserve(slot, own);
      return 0;
    }
  } while (!atomic_compare_exchange_weak(&tw_used, &u, u + add));
  *t = (tw_dram_ticket){own ? slot : -1, n, own};
  return 1;
}

uint64_t tw_dram_take_upto(const tw_site *s, uint64_t n, uint64_t least,
                           uint64_t unit, tw_dram_ticket *t) {
  if (tw_dram_take(s, n, t))
    return n;
  if (least >= n)
    return 0;
  /* the room the account shows, and what of the site's own reservation
   * it has not claimed (shared in time: at most what is unspent) */
  int64_t u = atomic_load(&tw_used), un = atomic_load(&tw_unspent);
  uint64_t used = u > 0 ? (uint64_t)u : 0;
  uint64_t room = tw_cfg.dram_limit > used ? tw_cfg.dram_limit - used : 0;
  int slot = tw_ranked && s ? s->placed : -1;
  if (slot >= 0 && tw_res_bytes[slot]) {
    uint64_t cap = tw_res_bytes[slot], took = atomic_load(&tw_res_used[slot]);
    uint64_t own = cap > took ? cap - took : 0;
    room += own < (uint64_t)(un > 0 ? un : 0) ? own : (uint64_t)(un > 0 ? un : 0);
  }
  uint64_t want = (room < n ? room : n) / unit * unit;
  /* (others take and give meanwhile: a few tries, each half the last) */
  for (int k = 0; k < 4 && want >= unit && want >= least;
       k++, want = want / 2 / unit * unit)
    if (tw_dram_take(s, want, t))
      return want;
  return 0;
}

#define TW_PART_HEAD_MIN ((uint64_t)1 << 20)

uint64_t tw_dram_take_head(const tw_site *s, uint64_t n, tw_dram_ticket *t) {
  return tw_dram_take_upto(s, n, n >= TW_PART_HEAD_MIN ? n / 2 : n, 4096, t);
}

/* A block's home slot; its stripe is home / TW_REC_STRIPE, and probes
 * wrap inside the stripe. */
static unsigned tw_rec_slot(uintptr_t p) {
  return (unsigned)((p >> 4) * 0x9e3779b97f4a7c15ull >> 50) &
         (TW_DRAM_REC_SLOTS - 1);
}

static unsigned tw_rec_next(unsigned i) {
  return (i & ~(TW_REC_STRIPE - 1)) | ((i + 1) & (TW_REC_STRIPE - 1));
}

/* A recorded block's allocator rounding (glibc's usable size over the
 * request: up to a page for a large block) stays off the account: the
 * advisor planned the requested bytes, and a reservation that fits them
 * exactly must not push the next ranked site out by a page per block. */
void tw_dram_keep(const tw_dram_ticket *t, const void *p, uint64_t bytes) {
  if (!tw_cfg.dram_limit)
    return;
  if (p)
    tw_chg_set(p); /* credited at its free */
  uint64_t slack = bytes > t->charged ? bytes - t->charged : 0;
  int kept = 0;
  if (t->own && tw_recs && slack < (1u << 31)) {
    unsigned i = tw_rec_slot((uintptr_t)p);
    tw_rec_stripe *st = &tw_stripes[i / TW_REC_STRIPE];
    pthread_mutex_lock(&st->lock);
    /* small blocks only while a quarter is free for large ones */
    unsigned most = bytes < TW_DRAM_REC_SMALL ? TW_REC_STRIPE / 4
                                              : TW_REC_STRIPE / 2;
    if (atomic_load(&st->n) < most) {
      while (tw_recs[i].p)
        i = tw_rec_next(i);
      tw_recs[i] = (tw_dram_rec){(uintptr_t)p, t->slot, (uint32_t)slack, t->own};
      atomic_fetch_add(&st->n, 1);
      kept = 1;
    }
    pthread_mutex_unlock(&st->lock);
  }
  /* not recorded: the reservation is spent for good, the rounding counted */
  atomic_fetch_add(&tw_used, (int64_t)bytes - (int64_t)t->charged -
                                 (kept ? (int64_t)slack : 0));
}

void tw_dram_undo(const tw_dram_ticket *t) {
  if (!t->charged)
    return;
  atomic_fetch_sub(&tw_used, (int64_t)(t->charged - t->own));
  if (t->own)
    tw_unreserve(t->slot, t->own);
}

void tw_dram_give(const void *p, uint64_t bytes) {
  if (!tw_cfg.dram_limit || (p && !tw_chg_take(p)))
    return; /* never charged: nothing to credit */
  unsigned i = tw_rec_slot((uintptr_t)p);
  tw_rec_stripe *st = &tw_stripes[i / TW_REC_STRIPE];
  if (!p || !tw_recs || !atomic_load(&st->n)) {
    atomic_fetch_sub(&tw_used, (int64_t)bytes);
    return;
  }
  pthread_mutex_lock(&st->lock);
  while (tw_recs[i].p && tw_recs[i].p != (uintptr_t)p)
    i = tw_rec_next(i);
  tw_dram_rec r = tw_recs[i];
  if (r.p) {
    /* backward-shift deletion inside the stripe: no tombstones */
    for (unsigned j = tw_rec_next(i); tw_recs[j].p; j = tw_rec_next(j)) {
      unsigned home = tw_rec_slot(tw_recs[j].p);
      if (((j - home) & (TW_REC_STRIPE - 1)) >=
          ((j - i) & (TW_REC_STRIPE - 1))) {
        tw_recs[i] = tw_recs[j];
        i = j;
      }
    }
    tw_recs[i].p = 0;
    atomic_fetch_sub(&st->n, 1);
  }
  pthread_mutex_unlock(&st->lock);
  /* live less the block (its rounding was never on it), unspent plus what
   * it held of its site's reservation */
  atomic_fetch_sub(&tw_used, (int64_t)bytes -
                                 (r.p ? (int64_t)(r.own + r.slack) : 0));
  if (r.p)
    tw_unreserve(r.slot, r.own);
}

int tw_dram_plan(int slot, uint64_t *planned, uint64_t *reserved,
                 uint64_t *held) {
  int rank = tw_placement_rank(slot, planned);
  int on = tw_res_bytes && tw_cfg.dram_limit;
  *reserved = on ? tw_res_bytes[slot] : 0;
  *held = on ? atomic_load(&tw_res_peak[slot]) : 0;
  return rank;
}

uint64_t tw_dram_reserved_total(int *instants) {
  *instants = tw_instants;
  return tw_reserved;
}

uint64_t tw_dram_rest(void) {
  if (!tw_cfg.dram_limit)
    return UINT64_MAX;
  int64_t u = atomic_load(&tw_used);
  uint64_t used = u > 0 ? (uint64_t)u : 0;
  return used < tw_cfg.dram_limit ? tw_cfg.dram_limit - used : 0;
}
