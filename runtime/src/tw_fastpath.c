/* SPDX-License-Identifier: MIT */
/*
 * Layer 2 (policy). The placement fast path: a per-thread cache from a cheap key of the call
 * (the return address of the interposed function and the stack pointer at
 * the call) to the site the full unwind found for it. A key is learned from
 * TIERWISE_FASTPATH_LEARN full unwinds that must agree on the tier; then it
 * is served from the cache and re-validated by a full unwind every
 * TIERWISE_FASTPATH_CHECK-th allocation. A key whose unwinds disagree on the
 * tier is ambiguous and is always unwound. Allocations of at least
 * TIERWISE_FASTPATH_MAX bytes are always unwound: they are few and they are
 * the ones placement is about. A hit costs no atomic operation: its counts
 * stay in the entry until the entry is validated, replaced, or its thread or
 * the process ends. See runtime/README.md for what this can get wrong.
 */
#define _GNU_SOURCE
#include "tw_fast.h"

#include <pthread.h>
#include <sys/mman.h>

#define TW_FAST_TABLES 1024

__thread tw_fast_table *tw_fast_mine __attribute__((tls_model("initial-exec")));
size_t tw_fast_limit;
static tw_fast_table *tw_tables[TW_FAST_TABLES];
static int tw_ntables;
static uint64_t tw_done[4]; /* counters of tables whose thread ended */
static pthread_mutex_t tw_fast_lock = PTHREAD_MUTEX_INITIALIZER;
/* The first key mismatches (under tw_fast_lock): the site whose tier the
 * key served, the site a validation then found, hits served since the last
 * validation that agreed. */
static tw_fast_mismatch tw_mis[TW_FAST_MISMATCHES];
static int tw_nmis;
static pthread_key_t tw_fast_key;
static pthread_once_t tw_fast_once = PTHREAD_ONCE_INIT;

void tw_fast_atfork(int phase) { tw_mutex_atfork(&tw_fast_lock, phase); }

/* Other threads' tables too: their owners may be using them, so only the
 * countdown is written (a racing decrement may undo it for one entry,
 * which is then validated at its regular turn). */
void tw_fast_revalidate(void) {
  pthread_mutex_lock(&tw_fast_lock);
  for (int i = 0; i < tw_ntables; i++)
    for (int k = 0; k < TW_FAST_SLOTS; k++)
      if (tw_tables[i]->e[k].state == TW_TRUSTED)
        __atomic_store_n(&tw_tables[i]->e[k].left, 1, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&tw_fast_lock);
}

/* Move an entry's pending counts into its site (and its hits into the
 * table's count). */
static void tw_flush(tw_fast_table *t, tw_fast_entry *e) {
  if (!e->pend_allocs)
    return;
  t->hits += e->pend_allocs;
  tw_site *s = tw_site_get(e->site);
  __atomic_fetch_add(&s->allocs, e->pend_allocs, __ATOMIC_RELAXED);
  __atomic_fetch_add(&s->bytes, e->pend_bytes, __ATOMIC_RELAXED);
  __atomic_fetch_add(&s->tier_bytes[e->tier], e->pend_bytes, __ATOMIC_RELAXED);
  e->pend_allocs = e->pend_bytes = 0;
}

static void tw_flush_table(tw_fast_table *t, int retire) {
  for (int i = 0; i < TW_FAST_SLOTS; i++)
    tw_flush(t, &t->e[i]);
  if (!retire)
    return;
  uint64_t *c = &t->hits;
  for (int i = 0; i < 4; i++) {
    __atomic_fetch_add(&tw_done[i], c[i], __ATOMIC_RELAXED);
    c[i] = 0;
  }
  for (int i = 0; i < TW_FAST_SLOTS; i++)
    t->e[i].ra = 0;
  /* Under the lock that tw_fast_new_table reads in_use under: the next
   * thread to take the table sees it reset (a plain read there of an
   * atomic store here was a data race; helgrind found it). */
  pthread_mutex_lock(&tw_fast_lock);
  t->in_use = 0;
  pthread_mutex_unlock(&tw_fast_lock);
}

static void tw_fast_thread_end(void *t) {
  tw_in_core++;
  tw_flush_table(t, 1);
  tw_fast_mine = NULL;
  tw_in_core--;
}

static void tw_fast_key_init(void) {
  pthread_key_create(&tw_fast_key, tw_fast_thread_end);
}

static tw_fast_table *tw_fast_new_table(void) {
  tw_fast_table *t = NULL;
  pthread_mutex_lock(&tw_fast_lock);
  for (int i = 0; i < tw_ntables && !t; i++) /* reuse an ended thread's */
    if (!tw_tables[i]->in_use)
      t = tw_tables[i];
  if (!t && tw_ntables < TW_FAST_TABLES) {
    void *m = tw_sys_mmap(NULL, sizeof(tw_fast_table), PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED)
      tw_tables[tw_ntables++] = t = m;
  }
  if (t)
    t->in_use = 1;
  pthread_mutex_unlock(&tw_fast_lock);
  if (!t)
    return NULL;
  pthread_once(&tw_fast_once, tw_fast_key_init);
  pthread_setspecific(tw_fast_key, t);
  return tw_fast_mine = t;
}

/* Make \p e trusted for the next fast_check - 1 hits (0: never re-check). */
static void tw_trust(tw_fast_entry *e) {
  e->state = TW_TRUSTED;
  e->left = tw_cfg.fast_check ? tw_cfg.fast_check : UINT32_MAX;
  e->plain = e->tier == TW_TIER_DRAM && !tw_vg_tracks(TW_TIER_DRAM);
}

/* The key (ra, sp) of entry \p e was unwound to \p site (sure: every call
 * with this key has it): learned, trusted, found ambiguous. Inline in
 * both callers (a call cost ~25 instructions of saved registers a miss). */
static inline __attribute__((always_inline)) uint32_t
tw_fast_learn(tw_fast_table *t, tw_fast_entry *e, void *ra, void *sp,
              uint32_t site, int sure) {
  int tier = tw_site_get(site)->tier;
  if (e->ra != (uintptr_t)ra || e->sp != (uintptr_t)sp) {
    tw_flush(t, e);
    e->ra = (uintptr_t)ra;
    e->sp = (uintptr_t)sp;
    e->site = site;
    e->learned = 1;
    e->resets = 0;
    e->left = 0;
    e->state = TW_LEARN;
    e->tier = (uint8_t)tier;
    if (tw_cfg.fast_learn <= 1 || sure) /* sure: nothing to learn */
      tw_trust(e);
    return site;
  }
  if (e->state == TW_AMBIGUOUS)
    return site;
  /* hits served from e->tier since the last unwind of this key: only a
   * trusted key has any (a learning key unwinds every call) */
  uint32_t served = e->state == TW_TRUSTED ? e->pend_allocs : 0;
  uint32_t had = e->site;
  tw_flush(t, e);
  if (tier != e->tier) {
    /* Two call paths of different tiers share the key: unwound from now
     * on. Allocations went to another tier than their site's only if hits
     * were served since the last agreeing unwind: only then a mismatch. */
    if (served) {
      t->mismatches++;
      tw_fast_note(had, site, served);
    }
    e->state = TW_AMBIGUOUS;
    e->left = 0;
  } else if (site != e->site && e->resets < TW_FAST_RESETS) {
    /* Same tier, another site (libgomp's team allocations of several
     * parallel regions): learn again, so that hits are only counted to a
     * site that held for fast_learn unwinds in a row; a key whose sites keep
     * alternating is unwound (up to TW_FAST_RESETS times, then trusted
     * for its tier: its hits are counted to the last site). */
    e->resets++;
    e->learned = 1;
    e->state = TW_LEARN;
    e->left = 0;
    if (tw_cfg.fast_learn <= 1)
      tw_trust(e);
  } else if (e->state == TW_LEARN) {
    if (++e->learned >= tw_cfg.fast_learn)
      tw_trust(e);
  } else { /* trusted, due for validation */
    t->checks++;
    tw_trust(e);
  }
  e->site = site; /* hits are counted to the latest unwound site */
  return site;
}

/* Not in the cache, learning, ambiguous, or due for validation. */
static __attribute__((noinline)) uint32_t tw_fast_miss(tw_fast_table *t,
                                                       tw_fast_entry *e,
                                                       void *ra, void *sp) {
  int sure = 0;
  t->unwinds++;
  /* A key already unwound to a site whose first frame's module starts a
   * placement site: unwound again without looking for its first frame */
  uint32_t site = e->ra == (uintptr_t)ra && e->sp == (uintptr_t)sp &&
                          tw_site_get(e->site)->leads
                      ? tw_policy_site_here()
                      : tw_policy_site_at(ra, sp, &sure, t->memo, 0);
  if (site == TW_SITE_NONE)
    return site;
  return tw_fast_learn(t, e, ra, sp, site, sure);
}

uint32_t tw_fast_memo(void *ra, void *sp) {
  tw_fast_table *t = tw_fast_mine;
  int sure;
  if (TW_UNLIKELY(!t))
    return TW_SITE_NONE;
  tw_fast_entry *e = tw_fast_probe(t, ra, sp);
  /* a hit, or a key tw_fast_miss unwinds in full: not here */
  if (e->ra == (uintptr_t)ra && e->sp == (uintptr_t)sp &&
      (e->left > 1 || tw_site_get(e->site)->leads))
    return TW_SITE_NONE;
  uint32_t site = tw_site_memo(ra, sp, &sure, t->memo);
  /* a site the memo holds was decided by this thread (tw_policy_site_at
   * decides every site tw_site_first gives); one that leads a placement
   * site is the full stack's (tw_policy_site_at) */
  if (site == TW_SITE_NONE || tw_site_get(site)->leads)
    return TW_SITE_NONE;
  t->unwinds++;
  return tw_fast_learn(t, e, ra, sp, site, sure);
}

static __attribute__((noinline)) uint32_t tw_fast_first(void *ra, void *sp,
                                                        tw_fast_entry **hit) {
  if (!tw_cfg.fast_learn || !tw_fast_new_table())
    return tw_policy_site_at(ra, sp, &(int){0}, NULL, 0);
  return tw_fast_site(0, ra, sp, hit);
}

uint32_t tw_fast_site(size_t size, void *ra, void *sp, tw_fast_entry **hit) {
  tw_fast_table *t = tw_fast_mine;
  if (TW_UNLIKELY(!t))
    return size >= tw_cfg.fast_max
               ? tw_policy_site_at(ra, sp, &(int){0}, NULL, 1)
               : tw_fast_first(ra, sp, hit);
  if (size >= tw_cfg.fast_max)
    return tw_policy_site_at(ra, sp, &(int){0}, t->memo, 1);
  tw_fast_entry *e = tw_fast_probe(t, ra, sp);
  if (TW_LIKELY(e->ra == (uintptr_t)ra && e->sp == (uintptr_t)sp &&
                e->left > 1)) {
    e->left--;
    *hit = e;
    return e->site;
  }
  return tw_fast_miss(t, e, ra, sp);
}

void tw_fast_count_hit(void) { tw_fast_mine->hits++; }

void tw_fast_note(uint32_t served_site, uint32_t found_site, uint32_t hits) {
  pthread_mutex_lock(&tw_fast_lock);
  int i = 0;
  while (i < tw_nmis && (tw_mis[i].served_site != served_site ||
                         tw_mis[i].found_site != found_site))
    i++;
  if (i < tw_nmis)
    tw_mis[i].hits += hits;
  else if (tw_nmis < TW_FAST_MISMATCHES)
    tw_mis[tw_nmis++] = (tw_fast_mismatch){served_site, found_site, hits};
  pthread_mutex_unlock(&tw_fast_lock);
}

int tw_fast_mismatches(tw_fast_mismatch *out, int max) {
  pthread_mutex_lock(&tw_fast_lock);
  int n = tw_nmis < max ? tw_nmis : max;
  for (int i = 0; i < n; i++)
    out[i] = tw_mis[i];
  pthread_mutex_unlock(&tw_fast_lock);
  return n;
}

void tw_fast_stats(uint64_t out[4]) {
  pthread_mutex_lock(&tw_fast_lock);
  for (int i = 0; i < 4; i++)
    out[i] = __atomic_load_n(&tw_done[i], __ATOMIC_RELAXED);
  for (int i = 0; i < tw_ntables; i++) {
    if (!tw_tables[i]->in_use)
      continue;
    tw_flush_table(tw_tables[i], 0); /* at exit: other threads may race */
    uint64_t *c = &tw_tables[i]->hits;
    for (int j = 0; j < 4; j++)
      out[j] += c[j];
  }
  pthread_mutex_unlock(&tw_fast_lock);
}
