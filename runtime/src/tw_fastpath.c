/* SPDX-License-Identifier: MIT */
/*
 * The placement fast path: a per-thread cache from a cheap key of the call
 * (the return address of the interposed function and the stack pointer at
 * the call) to the site the full unwind found for it. A key is learned from
 * TIERWISE_FASTPATH_LEARN full unwinds that must agree on the tier; then it
 * is served from the cache and re-validated by a full unwind every
 * TIERWISE_FASTPATH_CHECK-th allocation. A key whose unwinds disagree on the
 * tier is ambiguous and is always unwound. Allocations of at least
 * TIERWISE_FASTPATH_MAX bytes are always unwound: they are few and they are
 * the ones placement is about. See runtime/README.md for what this can get
 * wrong.
 */
#define _GNU_SOURCE
#include "tw_core.h"

#include <pthread.h>
#include <sys/mman.h>

#define TW_FAST_SLOTS 4096
enum { TW_LEARN = 0, TW_TRUSTED = 1, TW_AMBIGUOUS = 2 };

typedef struct tw_fast_entry {
  uintptr_t ra, sp;
  uint32_t site;
  uint32_t count;
  int state;
  int tier;
} tw_fast_entry;

static __thread tw_fast_entry *tw_fast_table
    __attribute__((tls_model("initial-exec")));
static uint64_t tw_hits, tw_checks, tw_mismatches, tw_unwinds; /* atomics */
static pthread_key_t tw_fast_key;
static pthread_once_t tw_fast_once = PTHREAD_ONCE_INIT;

static void tw_fast_release(void *t) {
  munmap(t, TW_FAST_SLOTS * sizeof(tw_fast_entry));
}

static void tw_fast_key_init(void) {
  pthread_key_create(&tw_fast_key, tw_fast_release);
}

static tw_fast_entry *tw_fast_thread_table(void) {
  void *t = mmap(NULL, TW_FAST_SLOTS * sizeof(tw_fast_entry),
                 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (t == MAP_FAILED)
    return NULL;
  pthread_once(&tw_fast_once, tw_fast_key_init);
  pthread_setspecific(tw_fast_key, t);
  return tw_fast_table = t;
}

static uint32_t tw_unwound(void) {
  __atomic_fetch_add(&tw_unwinds, 1, __ATOMIC_RELAXED);
  return tw_site_here();
}

uint32_t tw_fast_site(size_t size, void *ra, void *sp) {
  tw_fast_entry *t = tw_fast_table;
  if (size >= tw_cfg.fast_max || !tw_cfg.fast_learn)
    return tw_unwound();
  if (TW_UNLIKELY(!t) && !(t = tw_fast_thread_table()))
    return tw_unwound();
  uintptr_t k = (uintptr_t)ra ^ ((uintptr_t)sp * 0x9e3779b1u);
  tw_fast_entry *e = &t[(k ^ (k >> 12)) & (TW_FAST_SLOTS - 1)];
  if (e->ra != (uintptr_t)ra || e->sp != (uintptr_t)sp) {
    uint32_t site = tw_unwound();
    if (site == TW_SITE_NONE)
      return site;
    e->ra = (uintptr_t)ra;
    e->sp = (uintptr_t)sp;
    e->site = site;
    e->count = 1;
    e->state = TW_LEARN;
    e->tier = tw_site_get(site)->tier;
    return site;
  }
  if (TW_LIKELY(e->state == TW_TRUSTED)) {
    if (TW_LIKELY(++e->count % tw_cfg.fast_check)) {
      __atomic_fetch_add(&tw_hits, 1, __ATOMIC_RELAXED);
      return e->site;
    }
    __atomic_fetch_add(&tw_checks, 1, __ATOMIC_RELAXED);
  }
  uint32_t site = tw_unwound();
  if (site == TW_SITE_NONE || e->state == TW_AMBIGUOUS)
    return site;
  if (tw_site_get(site)->tier != e->tier) {
    __atomic_fetch_add(&tw_mismatches, 1, __ATOMIC_RELAXED);
    e->state = TW_AMBIGUOUS;
  } else if (e->state == TW_LEARN && ++e->count >= tw_cfg.fast_learn) {
    e->state = TW_TRUSTED;
    e->count = 0;
  }
  e->site = site; /* cached hits are counted to the latest unwound site */
  return site;
}

void tw_fast_stats(uint64_t out[4]) {
  out[0] = __atomic_load_n(&tw_hits, __ATOMIC_RELAXED);
  out[1] = __atomic_load_n(&tw_checks, __ATOMIC_RELAXED);
  out[2] = __atomic_load_n(&tw_mismatches, __ATOMIC_RELAXED);
  out[3] = __atomic_load_n(&tw_unwinds, __ATOMIC_RELAXED);
}
