/* SPDX-License-Identifier: MIT */
/*
 * Layer 1 (mechanisms): the sample profiler's page-touch sampling, compiled
 * only into libtierwise-pmu.so (TW_WITH_PMU) and started instead of the PMU
 * events when TIERWISE_PMU_SOURCE=touch (`tierwise profile --backend
 * sample`). No PMU, no Valgrind, no privileges: what NUMA balancing's hint
 * faults do in the kernel, done on a sample of pages from user space.
 *
 * A sampler thread keeps TIERWISE_TOUCH_PAGES (default 32) pages armed in
 * runs of TW_TOUCH_RUN adjacent pages of a live census object, each run for
 * a tick (TIERWISE_TOUCH_TICK_US, default 10000), arming one run at a time,
 * evenly (tw_pace), while its mprotect calls (their time, measured: the TLB
 * flushes that are its cost) stay within TIERWISE_TOUCH_OVERHEAD percent of
 * the time since it started (tw_budget); the budget earned before a region
 * of interest opens is spent in it, up to all TW_TOUCH_SLOTS pages armed,
 * so a short region is sampled densely; runs alternate PROT_NONE (the first access of any
 * kind faults) and PROT_READ (the first write faults), and start at a page
 * drawn from all live pages or from a live object drawn uniformly (tw_arm).
 * The SIGSEGV handler finds the page among the armed slots, notes when it
 * faulted and whether the access wrote (the page-fault error code), gives
 * the whole run back and returns: the access runs again. A run not touched
 * is given back when its tick is over. Per site (tw_collect): the runs
 * armed and those first touched within 10 us, 100 us, 1 ms and 10 ms, the
 * touched runs first touched at their first page (a sweep enters a run
 * there), the page-seconds the samples stand for. pmu.json carries the
 * counts (tw_touch_params); the sample backend estimates the visits from
 * them and prices them as LLC misses (advisor/tierwise/backends/sample.py:
 * the model is there, with its tests); sites.csv, the samples per site
 * (tw_touch_columns).
 *
 * With TIERWISE_TOUCH_ROI=1 (`profile --roi markers`) pages are armed
 * only between the program's TIERWISE_ROI_BEGIN() and TIERWISE_ROI_END()
 * (tierwise.h calls tierwise_roi, defined here).
 *
 * The program must not see any of it:
 * - a fault that is not on an armed page goes to the program's own SIGSEGV
 *   action (tw_signal.c keeps it from the program's sigaction and signal
 *   calls); a fault on a page this sampler gave back a moment ago (the
 *   access raced with the give-back) is retried once per thread and address;
 * - the kernel does not take page faults for us: a read() into an armed
 *   page would fail with EFAULT. The calls that pass buffers or futex words
 *   to the kernel (tw_touch_io.c) register them first and give back armed
 *   pages in them; the sampler arms no page of a registered range, and arms
 *   under a flag those calls wait on, so neither can miss the other; the
 *   program's signal masks leave SIGSEGV out (a thread that blocks it is
 *   killed by a fault);
 * - a freed or unmapped object's pages are given back before its memory
 *   goes (tw_touch_release, from the census and the interposed munmap,
 *   mremap and mprotect), and every page before fork (the child starts with
 *   none) and at exit.
 * Slot words pack the page address and its state, so that a compare-and-swap
 * claims exactly that page's sample (no ABA between a slot's pages).
 */
#define _GNU_SOURCE
#include "tw_mech.h"
#include "tw_pmu.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <dlfcn.h>
#include <ucontext.h>
#include <unistd.h>
#include <valgrind/helgrind.h> /* the slot words' happens-before */

#define TW_TOUCH_SLOTS 256
#define TW_TOUCH_IO 32 /* buffers in the kernel at once; more: no arming */
#define TW_TOUCH_RUN 4 /* pages armed (and given back) with one mprotect */
#define TW_TOUCH_GROUPS (TW_TOUCH_SLOTS / TW_TOUCH_RUN) /* runs, at most */
/* The first touches of runs counted by how soon they came: within 10 us,
 * 100 us, 1 ms, 10 ms (tw_touch_site.soon; a run lives a tick, at least
 * 10 ms) */
#define TW_TOUCH_SOON 4
static const uint64_t tw_soon_ns[TW_TOUCH_SOON] = {10000, 100000, 1000000,
                                                   10000000};
#define TW_TOUCH_MIN_WAIT_NS 2000u /* a fault's own latency here: ~1.5 us */

enum { TW_T_FREE, TW_T_ARMED, TW_T_FAULTING, TW_T_DONE };

typedef struct {
  uint64_t word; /* page | state (atomic) */
  uint64_t obj;  /* the object's start (tw_touch_release by object) */
  uint64_t t0, t1, t2; /* armed, touched, given back untouched (ns) */
  int site, writes_only, wrote;
  int first; /* the slot of its run's first page */
  int run;   /* in a run's first slot: its pages (one mprotect), else 0 */
  double prob; /* in a run's first slot: the chance its page was drawn */
  double inv0; /* in a run's first slot: tw_inv[kind] when it was armed */
} tw_touch_slot;

typedef struct { /* per site (index site + 3: pseudo-sites first) */
  uint64_t n[2], f[2], wrote; /* [0] any access, [1] writes */
  uint64_t runs, at_first; /* full any-access runs touched; first page first */
  double exposure[2], weight[2]; /* s; page-seconds the samples stand for */
  /* whole runs armed, and of them those first touched within each of
   * tw_soon_ns: the rate estimate (advisor/tierwise/backends/sample.py) */
  uint64_t runs_armed[2], soon[2][TW_TOUCH_SOON];
} tw_touch_site;

static tw_touch_slot tw_slot[TW_TOUCH_SLOTS];
static struct {
  uint64_t start, end; /* atomic; start 0: free */
} tw_io[TW_TOUCH_IO];
static int tw_io_over;  /* buffers not registered (atomic) */
static int tw_arming;   /* the sampler is arming pages (atomic) */
static int tw_active;   /* slots not free (atomic; fast exit when 0) */
static int tw_touch_on; /* sampling started and not stopped */
static long tw_pg;
static uint64_t tw_tick_ns;
static int tw_base; /* runs armed at once: TIERWISE_TOUCH_PAGES / RUN (with
                     * credit, up to TW_TOUCH_GROUPS) */
/* The slots ever armed (atomic; stored before tw_active counts them): the
 * scans on a free, an I/O call and a fault stop there, about the pace's 32
 * until a region's credit arms more */
static int tw_hi;
static tw_touch_site *tw_ts;
static int tw_nts;
static uint64_t tw_armed_total, tw_faults_total, tw_retries, tw_skipped_io;
static uint64_t tw_arming_ns; /* time arming was allowed (ticks: / tick) */
/* The budget (tw_budget): the mprotect calls' time (atomic: the handler's
 * too) and count, against TIERWISE_TOUCH_OVERHEAD % of the time since
 * tw_start_ns */
static uint64_t tw_spent_ns, tw_calls, tw_start_ns, tw_stop_ns;
static double tw_share;
/* Runs armed of each kind now, and the integral over time of 1 / that
 * (s; at tw_inv_t): a run's samples stand for its life over the runs of
 * its kind armed meanwhile (tw_collect); tw_lock */
static int tw_alive[2];
static double tw_inv[2];
static uint64_t tw_inv_t;
/* TIERWISE_TOUCH_ROI=1: pages are armed only while the program's region
 * of interest is open (tierwise_roi; depth, entries, time in it; tw_lock) */
static int tw_roi_on, tw_roi_depth;
static uint64_t tw_roi_t0, tw_roi_ns, tw_roi_entered;
static struct sigaction tw_prog_segv; /* the program's action */
static int tw_prog_set;
static pthread_mutex_t *tw_lock; /* tw_sample.c's lock of the attribution */
static tw_pmu_attr *tw_attr;
static pthread_t tw_thread;
static unsigned tw_stop; /* (a futex word: the sampler sleeps on it) */
static uint64_t tw_rng = 0x9e3779b97f4a7c15ull;
static __thread uintptr_t tw_retried; /* the last address retried */

static uint64_t tw_word(uint64_t page, int state) { return page | state; }
static int tw_state(uint64_t w) { return (int)(w & 3); }
static uint64_t tw_page_of(uint64_t w) { return w & ~(uint64_t)3; }

static uint64_t tw_now(void) { /* vDSO: async-signal-safe */
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t tw_rand(void) { /* xorshift64*, the sampler's only */
  tw_rng ^= tw_rng >> 12;
  tw_rng ^= tw_rng << 25;
  tw_rng ^= tw_rng >> 27;
  return tw_rng * 2685821657736338717ull;
}

/* mprotect, its time charged to the budget (async-signal-safe) */
static int tw_protect(uint64_t page, size_t len, int prot) {
  uint64_t t = tw_now();
  int rc = tw_sys_mprotect((void *)page, len, prot);
  __atomic_fetch_add(&tw_spent_ns, tw_now() - t, __ATOMIC_RELAXED);
  __atomic_fetch_add(&tw_calls, 1, __ATOMIC_RELAXED);
  return rc;
}

/* Claims an armed page as given back untouched at \p now; 1 if this call
 * did. t2 is written before the claim: whoever sees the page DONE sees it
 * (two claimers race only over which of their times it keeps). */
static int tw_claim(tw_touch_slot *s, uint64_t w, uint64_t now) {
  if (tw_state(w) != TW_T_ARMED)
    return 0;
  ANNOTATE_HAPPENS_AFTER(&s->word); /* (w was loaded armed: the sampler's) */
  __atomic_store_n(&s->t2, now, __ATOMIC_RELAXED);
  ANNOTATE_HAPPENS_BEFORE(&s->word);
  return __atomic_compare_exchange_n(&s->word, &w,
                                     tw_word(tw_page_of(w), TW_T_DONE), 0,
                                     __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/* Gives an armed page back (sampler, I/O, release): 1 if this call did. */
static int tw_disarm(tw_touch_slot *s, uint64_t w) {
  if (!tw_claim(s, w, tw_now()))
    return 0;
  tw_protect(tw_page_of(w), (size_t)tw_pg, PROT_READ | PROT_WRITE);
  return 1;
}

/* Waits out a handler giving the page back (a few system calls). */
static void tw_settle(tw_touch_slot *s) {
  while (tw_state(__atomic_load_n(&s->word, __ATOMIC_SEQ_CST)) ==
         TW_T_FAULTING)
    sched_yield();
  ANNOTATE_HAPPENS_AFTER(&s->word); /* its fields, as whoever settled it left them */
}

/* Gives back every armed page in [p, p + len): before the range's memory
 * is freed, unmapped or re-protected, and before a buffer goes to the
 * kernel. len 0: the object starting at p (census objects). */
void tw_touch_release(const void *p, size_t len) {
  if (!__atomic_load_n(&tw_active, __ATOMIC_SEQ_CST))
    return;
  uint64_t lo = (uint64_t)p, hi = lo + len;
  for (int i = 0, n = __atomic_load_n(&tw_hi, __ATOMIC_SEQ_CST); i < n; i++) {
    tw_touch_slot *s = &tw_slot[i];
    uint64_t w = __atomic_load_n(&s->word, __ATOMIC_SEQ_CST);
    if (tw_state(w) == TW_T_FREE)
      continue;
    uint64_t pg = tw_page_of(w);
    int in = len ? pg + (uint64_t)tw_pg > lo && pg < hi
                 : __atomic_load_n(&s->obj, __ATOMIC_RELAXED) == lo;
    if (!in)
      continue;
    tw_disarm(s, w);
    tw_settle(s);
  }
}

/* Gives back every armed page (before fork; before the default action of
 * a fault that is the program's). */
static void tw_release_all(void) {
  for (int i = 0, n = __atomic_load_n(&tw_hi, __ATOMIC_SEQ_CST); i < n; i++) {
    tw_disarm(&tw_slot[i], __atomic_load_n(&tw_slot[i].word, __ATOMIC_SEQ_CST));
    tw_settle(&tw_slot[i]);
  }
}

/* ---- the I/O calls' side (tw_touch_io.c) ---- */
int tw_touch_io_begin(const void *buf, size_t len) {
  if (!__atomic_load_n(&tw_touch_on, __ATOMIC_RELAXED) || !buf || !len)
    return -1;
  uint64_t lo = (uint64_t)buf, hi = lo + len;
  int k = -1;
  for (int i = 0; i < TW_TOUCH_IO && k < 0; i++) {
    uint64_t z = 0;
    if (__atomic_compare_exchange_n(&tw_io[i].start, &z, lo, 0,
                                    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
      k = i;
  }
  if (k >= 0)
    __atomic_store_n(&tw_io[k].end, hi, __ATOMIC_SEQ_CST);
  else
    __atomic_fetch_add(&tw_io_over, 1, __ATOMIC_SEQ_CST);
  /* The sampler checks the buffers before it arms a page: once it is not
   * arming, every page armed in this buffer is in a slot by now. */
  while (__atomic_load_n(&tw_arming, __ATOMIC_SEQ_CST))
    sched_yield();
  tw_touch_release(buf, len);
  return k < 0 ? TW_TOUCH_IO : k;
}

void tw_touch_io_end(int k) {
  if (k < 0)
    return;
  if (k == TW_TOUCH_IO) {
    __atomic_fetch_sub(&tw_io_over, 1, __ATOMIC_SEQ_CST);
    return;
  }
  __atomic_store_n(&tw_io[k].end, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&tw_io[k].start, 0, __ATOMIC_SEQ_CST);
}

static int tw_in_io(uint64_t pg) {
  if (__atomic_load_n(&tw_io_over, __ATOMIC_SEQ_CST))
    return 1;
  for (int i = 0; i < TW_TOUCH_IO; i++) {
    uint64_t lo = __atomic_load_n(&tw_io[i].start, __ATOMIC_SEQ_CST);
    uint64_t hi = __atomic_load_n(&tw_io[i].end, __ATOMIC_SEQ_CST);
    if (lo && (!hi || (pg < hi && pg + (uint64_t)tw_pg > lo)))
      return 1; /* (an end not yet stored: the whole address space) */
  }
  return 0;
}

/* ---- the fault handler ---- */
extern int __sigaction(int, const struct sigaction *, struct sigaction *);

/* The program's action, as the kernel would have run it: its mask (and
 * SIGSEGV unless SA_NODEFER) added to the mask at the fault. */
static void tw_chain(int sig, siginfo_t *si, void *ucv) {
  struct sigaction a = tw_prog_segv;
  if (a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN) {
    const ucontext_t *uc = ucv;
    sigset_t m = uc->uc_sigmask;
    for (int s = 1; s < NSIG; s++)
      if (sigismember(&a.sa_mask, s) == 1)
        sigaddset(&m, s);
    if (!(a.sa_flags & SA_NODEFER))
      sigaddset(&m, SIGSEGV);
    pthread_sigmask(SIG_SETMASK, &m, NULL);
    if (a.sa_flags & SA_RESETHAND)
      memset(&tw_prog_segv, 0, sizeof(tw_prog_segv));
    if (a.sa_flags & SA_SIGINFO)
      a.sa_sigaction(sig, si, ucv);
    else
      a.sa_handler(sig);
    return;
  }
  /* the default (a synchronous SIGSEGV is never ignored): the access runs
   * again and the kernel ends the program as it would have, with no
   * sampled page left */
  tw_release_all();
  struct sigaction dfl = {.sa_handler = SIG_DFL};
  sigemptyset(&dfl.sa_mask);
  __sigaction(SIGSEGV, &dfl, NULL);
}

static void tw_segv(int sig, siginfo_t *si, void *ucv) {
  int saved = errno;
  uint64_t addr = (uint64_t)si->si_addr;
  uint64_t pg = addr & ~(uint64_t)(tw_pg - 1);
  if (si->si_code == SEGV_ACCERR &&
      __atomic_load_n(&tw_active, __ATOMIC_SEQ_CST)) {
    for (int i = 0, n = __atomic_load_n(&tw_hi, __ATOMIC_SEQ_CST); i < n; i++) {
      tw_touch_slot *s = &tw_slot[i];
      uint64_t w = __atomic_load_n(&s->word, __ATOMIC_SEQ_CST);
      if (tw_state(w) == TW_T_FREE || tw_page_of(w) != pg)
        continue;
      if (tw_state(w) == TW_T_ARMED &&
          __atomic_compare_exchange_n(&s->word, &w,
                                      tw_word(pg, TW_T_FAULTING), 0,
                                      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
        ANNOTATE_HAPPENS_AFTER(&s->word); /* the sampler's fields */
        const ucontext_t *uc = ucv;
        uint64_t t1 = tw_now();
        s->t1 = t1;
        s->wrote = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
        /* the whole run back at once: one mprotect, and the run's other
         * pages' waits end here (the program does not run meanwhile) */
        const tw_touch_slot *f = &tw_slot[s->first];
        uint64_t run = tw_page_of(__atomic_load_n(&f->word, __ATOMIC_SEQ_CST));
        for (int k = 0; k < f->run; k++)
          if (s->first + k != i)
            tw_claim(&tw_slot[s->first + k],
                     __atomic_load_n(&tw_slot[s->first + k].word,
                                     __ATOMIC_SEQ_CST),
                     t1);
        tw_protect(run, (size_t)f->run * tw_pg, PROT_READ | PROT_WRITE);
        ANNOTATE_HAPPENS_BEFORE(&s->word);
        __atomic_store_n(&s->word, tw_word(pg, TW_T_DONE), __ATOMIC_SEQ_CST);
      }
      /* else given back, or being given back, by another thread: again */
      errno = saved;
      return;
    }
  }
  if (si->si_code == SEGV_ACCERR && tw_retried != addr &&
      __atomic_load_n(&tw_touch_on, __ATOMIC_RELAXED)) {
    /* raced with a give-back whose slot is already re-used: once more */
    tw_retried = addr;
    __atomic_fetch_add(&tw_retries, 1, __ATOMIC_RELAXED);
    errno = saved;
    return;
  }
  tw_retried = 0;
  errno = saved;
  tw_chain(sig, si, ucv);
}

/* tw_signal.c's interposed sigaction, for SIGSEGV while this sampler owns
 * it: the program's action is kept here, ours stays installed. */
int tw_touch_owns_segv(void) {
  return __atomic_load_n(&tw_prog_set, __ATOMIC_ACQUIRE);
}

int tw_touch_sigaction(const struct sigaction *act, struct sigaction *old) {
  struct sigaction was = tw_prog_segv;
  if (act)
    tw_prog_segv = *act;
  if (old)
    *old = was;
  return 0;
}

/* ---- the sampler ---- */
/* Brings tw_inv up to now (tw_lock). */
static void tw_inv_to(uint64_t now) {
  if (now <= tw_inv_t)
    return;
  for (int k = 0; k < 2; k++)
    if (tw_alive[k])
      tw_inv[k] += (double)(now - tw_inv_t) * 1e-9 / tw_alive[k];
  tw_inv_t = now;
}

static tw_touch_site *tw_site_row(int site) {
  int idx = site + 3;
  if (idx < 0)
    return NULL;
  if (idx >= tw_nts) {
    int n = tw_nts ? tw_nts : 64;
    while (n <= idx)
      n *= 2;
    tw_touch_site *t = __libc_realloc(tw_ts, (size_t)n * sizeof(*t));
    if (!t)
      return NULL;
    memset(t + tw_nts, 0, (size_t)(n - tw_nts) * sizeof(*t));
    tw_ts = t;
    tw_nts = n;
  }
  return &tw_ts[idx];
}

/* Gives back group g's run and charges its samples. Where a run's
 * first touch was says whether the site is swept: an ascending sweep enters
 * at the run's first page, random touches at any of its TW_TOUCH_RUN pages
 * as often, so (at_first / runs - 1/RUN) / (1 - 1/RUN) is the share of
 * visits that are sweeps. tw_lock held. */
static void tw_collect(int g, uint64_t now) {
  tw_touch_slot *first = &tw_slot[g * TW_TOUCH_RUN];
  uint64_t w = __atomic_load_n(&first->word, __ATOMIC_SEQ_CST);
  if (tw_state(w) == TW_T_FREE)
    return;
  /* the run's untouched pages back in one call (the touched ones are
   * read-write already: the call leaves them so) */
  int claimed = 0, len = first->run;
  for (int k = 0; k < len; k++) {
    tw_touch_slot *q = first + k;
    claimed += tw_claim(q, __atomic_load_n(&q->word, __ATOMIC_SEQ_CST), now);
  }
  if (claimed)
    tw_protect(tw_page_of(w), (size_t)len * tw_pg, PROT_READ | PROT_WRITE);
  uint64_t t = 0; /* the run's first touch */
  for (int k = 0; k < len; k++) {
    tw_settle(first + k); /* touched: t1 is set */
    if (first[k].t1 && (!t || first[k].t1 < t))
      t = first[k].t1;
  }
  tw_touch_site *r = tw_site_row(first->site);
  int kind = first->writes_only;
  /* each page stands for the run's life over the chance it was in a run
   * (TW_TOUCH_RUN draws' worth), shared by the runs of its kind armed
   * meanwhile: the integral of 1 / their number over its life (all draws
   * uniform: every live page over the run's life, shared by the pages
   * armed) */
  tw_inv_to(now);
  double weight = (tw_inv[kind] - first->inv0) / (first->prob * TW_TOUCH_RUN);
  tw_alive[kind]--;
  for (int k = 0; r && k < len; k++) {
    const tw_touch_slot *s = first + k;
    int faulted = s->t1 != 0;
    uint64_t end = faulted ? s->t1 : s->t2 ? s->t2 : now; /* (may precede t0) */
    double e = end > s->t0 + TW_TOUCH_MIN_WAIT_NS
                   ? (double)(end - s->t0) * 1e-9
                   : TW_TOUCH_MIN_WAIT_NS * 1e-9;
    r->n[kind]++;
    r->f[kind] += (uint64_t)faulted;
    r->wrote += (uint64_t)(faulted && !kind && s->wrote);
    r->exposure[kind] += e;
    r->weight[kind] += weight;
    tw_faults_total += (uint64_t)faulted;
    if (faulted && !kind && len == TW_TOUCH_RUN) {
      r->runs++; /* a sweep enters a run at its first page */
      r->at_first += (uint64_t)(k == 0);
    }
  }
  if (r && len == TW_TOUCH_RUN) {
    r->runs_armed[kind]++;
    for (int d = 0; t && d < TW_TOUCH_SOON; d++)
      r->soon[kind][d] += (uint64_t)(t < first->t0 + tw_soon_ns[d]);
  }
  for (int k = 0; k < len; k++) {
    __atomic_store_n(&first[k].word, 0, __ATOMIC_SEQ_CST);
    __atomic_fetch_sub(&tw_active, 1, __ATOMIC_SEQ_CST);
  }
}

static int tw_taken(uint64_t page) {
  for (int i = 0; i < tw_hi; i++) /* (the sampler's own) */
    if (tw_page_of(__atomic_load_n(&tw_slot[i].word, __ATOMIC_RELAXED)) ==
        page)
      return 1;
  return 0;
}

/* Arms group g's run: TW_TOUCH_RUN pages (fewer at an object's end) from a
 * page drawn uniformly from the live objects' whole pages, PROT_NONE (any
 * access faults) or, every other run, PROT_READ (writes fault), with one
 * mprotect: each call flushes the TLBs of the CPUs running the program,
 * 60 us here (a busy vCPU takes an IPI), the profiler's main cost, and
 * holds the address space's lock, which a fault takes before its signal
 * is sent - so one run is armed at a time, spaced over the tick. tw_lock
 * held: no object is freed while its pages are being armed. */
static void tw_arm(int g) {
  uint64_t total = tw_pmu_attr_pages(tw_attr, (uint64_t)tw_pg);
  if (!total)
    return;
  uint64_t page, obj, start, end;
  int site, len = 0, n = g * TW_TOUCH_RUN;
  static unsigned turn; /* runs alternate: any access, writes only; and */
  int writes_only = (int)(turn & 1), by_object = (int)(turn & 2);
  turn++;
  size_t objs = tw_pmu_attr_objects(tw_attr);
  /* Half the runs start at a page drawn from all live pages, half at a
   * page of an object drawn from the live objects: a 32 KiB array among
   * 200 MiB would otherwise get a sample a minute. Each sample stands for
   * 1 / the chance its page had of being drawn (tw_collect). */
  if (by_object
          ? tw_pmu_attr_object_at(tw_attr, tw_rand() % objs, &start, &end, &site)
          : tw_pmu_attr_pick_page(tw_attr, (uint64_t)tw_pg, tw_rand() % total,
                                  &page, &obj, &site) ||
                tw_pmu_attr_object_of(tw_attr, page, &start, &end))
    return;
  uint64_t lo = (start + (uint64_t)tw_pg - 1) & ~(uint64_t)(tw_pg - 1);
  uint64_t pages = end > lo ? (end - lo) / (uint64_t)tw_pg : 0;
  if (!pages)
    return; /* (an object without a whole page: never sampled) */
  if (by_object) {
    page = lo + (tw_rand() % pages) * (uint64_t)tw_pg;
    obj = start;
  }
  /* the chance of this page per draw, half uniform, half by object */
  tw_slot[n].prob = 0.5 / (double)total + 0.5 / (double)objs / (double)pages;
  __atomic_store_n(&tw_arming, 1, __ATOMIC_SEQ_CST);
  while (len < TW_TOUCH_RUN && page + (uint64_t)(len + 1) * tw_pg <= end &&
         !tw_taken(page + (uint64_t)len * tw_pg) &&
         !tw_in_io(page + (uint64_t)len * tw_pg))
    len++;
  if (!len) {
    tw_skipped_io++; /* (or armed already) */
    __atomic_store_n(&tw_arming, 0, __ATOMIC_SEQ_CST);
    return;
  }
  if (n + len > tw_hi) /* (before tw_active counts them: the scans see them) */
    __atomic_store_n(&tw_hi, n + len, __ATOMIC_SEQ_CST);
  for (int k = 0; k < len; k++) {
    tw_touch_slot *s = &tw_slot[n + k];
    s->obj = obj;
    s->site = site;
    s->writes_only = writes_only;
    s->first = n;
    s->run = k ? 0 : len;
    s->t1 = s->t2 = 0;
    s->wrote = 0;
    __atomic_fetch_add(&tw_active, 1, __ATOMIC_SEQ_CST);
    ANNOTATE_HAPPENS_BEFORE(&s->word); /* the fields above, to the handler */
    __atomic_store_n(&s->word, tw_word(page + (uint64_t)k * tw_pg, TW_T_ARMED),
                     __ATOMIC_SEQ_CST);
  }
  int failed = tw_protect(page, (size_t)len * tw_pg,
                          writes_only ? PROT_READ : PROT_NONE);
  /* The wait starts when the protection is in force: mprotect returns
   * after the TLBs are flushed (a start before the call made random
   * pages' touches look 5x rarer here). */
  uint64_t t0 = tw_now();
  tw_inv_to(t0);
  tw_alive[writes_only]++;
  tw_slot[n].inv0 = tw_inv[writes_only];
  for (int k = 0; k < len; k++) {
    tw_slot[n + k].t0 = t0;
    if (failed) { /* (gone meanwhile) not charged */
      __atomic_store_n(&tw_slot[n + k].word,
                       tw_word(page + (uint64_t)k * tw_pg, TW_T_DONE),
                       __ATOMIC_SEQ_CST);
      tw_slot[n + k].site = TW_PMU_SITE_UNKNOWN - 1;
    }
  }
  __atomic_store_n(&tw_arming, 0, __ATOMIC_SEQ_CST);
  tw_armed_total += (uint64_t)len;
}

/* The budget: how much of TIERWISE_TOUCH_OVERHEAD % of the time since the
 * sampler started is left (ns; below 0: overspent). */
static double tw_budget(uint64_t now) {
  return tw_share * (double)(now - tw_start_ns) -
         (double)__atomic_load_n(&tw_spent_ns, __ATOMIC_RELAXED);
}

/* The pace: TIERWISE_TOUCH_PAGES / 4 runs a tick, evenly; not by the
 * calls' cost, which is low where one thread runs (no other CPU's TLB to
 * flush): a pace by cost samples a program's serial phases more densely
 * than its parallel ones (gb-pagerank's generator 60% more, its kernel's
 * arrays 40% less). */
static uint64_t tw_pace(void) { return tw_tick_ns / (uint64_t)tw_base; }

/* Whether group g's slots are free (no run armed in them, none to charge). */
static int tw_group_free(int g) {
  return tw_state(__atomic_load_n(&tw_slot[g * TW_TOUCH_RUN].word,
                                  __ATOMIC_SEQ_CST)) == TW_T_FREE;
}

/* The first free group from g on, or -1. */
static int tw_next_free(int g) {
  while (g < TW_TOUCH_GROUPS && !tw_group_free(g))
    g++;
  return g < TW_TOUCH_GROUPS ? g : -1;
}

/* Wakes where the oldest run is a tick old (it is given back and charged)
 * or the next run is due: at the pace (tw_pace), or a tick / (all the
 * slots' runs) apart while there is credit, the budget earned while no
 * region of interest was open (a run costs two mprotects: the arming and
 * the touch's or the tick's give-back); never beyond the budget. A
 * region's start wakes it (tw_stop's futex). */
static void *tw_sampler(void *arg) {
  (void)arg;
  tw_in_core++;
  tw_sys_thread_name("tw-touch");
  uint64_t space = tw_tick_ns / TW_TOUCH_GROUPS, wait = space, last = 0;
  uint64_t due = 0; /* when the next run may be armed */
  uint64_t prev = tw_start_ns, spent0 = 0; /* the last wake; the spent then */
  double credit = 0; /* ns */
  for (;;) {
    struct timespec ts = {(time_t)(wait / 1000000000u),
                          (long)(wait % 1000000000u)};
    tw_sys_futex_wait((unsigned *)&tw_stop, 0, &ts);
    pthread_mutex_lock(tw_lock);
    int stop = __atomic_load_n(&tw_stop, __ATOMIC_ACQUIRE);
    uint64_t now = tw_now();
    if (stop) {
      for (int k = 0; k < TW_TOUCH_GROUPS; k++)
        tw_collect(k, now);
      if (tw_roi_depth > 0) /* (a region still open at exit) */
        tw_roi_ns += now - tw_roi_t0;
      tw_stop_ns = now;
      pthread_mutex_unlock(tw_lock);
      break;
    }
    int open = !tw_roi_on || tw_roi_depth > 0;
    uint64_t spent = __atomic_load_n(&tw_spent_ns, __ATOMIC_RELAXED);
    if (!open)
      credit += tw_share * (double)(now - prev);
    else if (credit > 0)
      credit -= (double)(spent - spent0);
    prev = now;
    uint64_t next = now + tw_tick_ns; /* (nothing to do: a tick) */
    for (int g = 0; g < TW_TOUCH_GROUPS; g++) { /* runs a tick old: charged */
      if (tw_group_free(g))
        continue;
      uint64_t end = tw_slot[g * TW_TOUCH_RUN].t0 + tw_tick_ns;
      if (end <= now)
        tw_collect(g, now);
      else if (end < next)
        next = end;
    }
    int free_g = tw_next_free(0);
    if (open) {
      tw_arming_ns += last ? now - last : 0;
      last = now;
      uint64_t step = credit > 0 ? space : tw_pace();
      /* the runs due since the last wake, one after another: a wake can
       * come late (a ms in a TCG guest), but no more than a tick's */
      if (!due) /* (opened) */
        due = now;
      else if (due + tw_tick_ns < now)
        due = now - tw_tick_ns;
      double left = tw_budget(now);
      while (free_g >= 0 && left >= 0 && due <= now) {
        tw_arm(free_g);
        due += step;
        /* the census's births and deaths, and a region's end, get in
         * between two armings (each an mprotect: 150 us in a TCG guest) */
        pthread_mutex_unlock(tw_lock);
        pthread_mutex_lock(tw_lock);
        if (tw_roi_on && tw_roi_depth == 0)
          break;
        left = tw_budget(tw_now());
        free_g = tw_next_free(free_g + 1);
      }
      /* the next arming: when due, and where the budget is spent, once
       * the time since the start has earned what was overspent */
      uint64_t at = due > now ? due : now + step;
      if (left < 0)
        at = now + (uint64_t)(-left / tw_share);
      if (at < next)
        next = at;
    } else {
      last = due = 0;
    }
    spent0 = __atomic_load_n(&tw_spent_ns, __ATOMIC_RELAXED);
    pthread_mutex_unlock(tw_lock);
    now = tw_now();
    wait = next > now ? next - now : 1000;
  }
  return NULL;
}

/* The program's TIERWISE_ROI_BEGIN() (begin 1) and TIERWISE_ROI_END() (0),
 * through tierwise.h's weak reference (this library defines it; exported).
 * With TIERWISE_TOUCH_ROI=1 the sampler arms pages only while the outermost
 * region is open; where it closes, the armed runs are charged and given
 * back at once, so that no sample stands for time outside it. Regions
 * nest, over all threads. Without the option: nothing. */
__attribute__((visibility("default"))) void tierwise_roi(int begin);
void tierwise_roi(int begin) {
  if (!__atomic_load_n(&tw_touch_on, __ATOMIC_RELAXED) || !tw_roi_on)
    return;
  tw_in_core++; /* (the lock is the census's: no I/O guard of ours) */
  pthread_mutex_lock(tw_lock);
  uint64_t now = tw_now();
  if (begin) {
    if (tw_roi_depth++ == 0) {
      tw_roi_t0 = now;
      tw_roi_entered++;
      tw_sys_futex_wake(&tw_stop, 1); /* the sampler arms from now */
    }
  } else if (tw_roi_depth > 0 && --tw_roi_depth == 0) {
    tw_roi_ns += now - tw_roi_t0;
    for (int k = 0; k < TW_TOUCH_GROUPS; k++)
      tw_collect(k, now);
  }
  pthread_mutex_unlock(tw_lock);
  tw_in_core--;
}

int tw_touch_start(tw_pmu_attr *attr, pthread_mutex_t *lock) {
  tw_pg = sysconf(_SC_PAGESIZE);
  tw_roi_on = (int)tw_opt[TW_O_TOUCH_ROI];
  tw_tick_ns = tw_opt[TW_O_TOUCH_TICK] * 1000u; /* (tw_config.c: bounds) */
  tw_share = (double)tw_opt[TW_O_TOUCH_OVERHEAD] / 100.0;
  tw_start_ns = tw_now();
  tw_base = (int)(tw_opt[TW_O_TOUCH_PAGES] + TW_TOUCH_RUN - 1) / TW_TOUCH_RUN;
  if (tw_base < 2)
    tw_base = 2; /* one run of each kind */
  tw_rng ^= (uint64_t)getpid() * 0x2545f4914f6cdd1dull ^ tw_now();
  tw_attr = attr;
  tw_lock = lock;
  /* a futex word, read by the kernel in the sampler's wait and written
   * atomically by tw_touch_stop: helgrind cannot see the futex's order */
  ANNOTATE_BENIGN_RACE_SIZED(&tw_stop, sizeof(tw_stop), "the sampler's futex word");
  /* the program's SIGSEGV action so far: kept, ours goes in its place */
  struct sigaction ours = {.sa_sigaction = tw_segv,
                           .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART};
  sigfillset(&ours.sa_mask); /* no handler of the program's nests in ours */
  if (__sigaction(SIGSEGV, NULL, &tw_prog_segv) ||
      __sigaction(SIGSEGV, &ours, NULL)) {
    tw_warn("sample: cannot install the SIGSEGV handler", "", "");
    return -1;
  }
  __atomic_store_n(&tw_prog_set, 1, __ATOMIC_RELEASE);
  tw_touch_on = 1;
  int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                void *) = dlsym(RTLD_NEXT, "pthread_create");
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* the sampler takes none */
  int rc = create ? create(&tw_thread, NULL, tw_sampler, NULL) : -1;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc) {
    tw_touch_on = 0;
    tw_warn("sample: cannot start the sampler thread", "", "");
    return -1;
  }
  return 0;
}

/* At exit: the sampler ends, every page is given back. */
void tw_touch_stop(void) {
  if (!tw_touch_on)
    return;
  __atomic_store_n(&tw_stop, 1, __ATOMIC_RELEASE);
  tw_sys_futex_wake(&tw_stop, 1);
  pthread_join(tw_thread, NULL);
  __atomic_store_n(&tw_touch_on, 0, __ATOMIC_RELAXED);
}

/* fork (tw_lock held by tw_sample_atfork from prepare to parent/child): no
 * page armed across it; the parent samples on, the child does not (it has
 * no sampler; its census goes on without samples). */
void tw_touch_atfork(int phase) {
  if (!tw_touch_on)
    return;
  if (phase == 0) { /* (no run is armed meanwhile: the lock is held) */
    tw_release_all();
    return;
  }
  if (phase == 2) {
    __atomic_store_n(&tw_touch_on, 0, __ATOMIC_RELAXED);
    /* the child's own: the parent's sampler thread, whose reads helgrind
     * would pair with this write, does not exist here */
    ANNOTATE_NEW_MEMORY(tw_slot, sizeof(tw_slot));
    memset(tw_slot, 0, sizeof(tw_slot));
    __atomic_store_n(&tw_active, 0, __ATOMIC_SEQ_CST);
  }
}

void tw_touch_columns(tw_out *o, int site) {
  int idx = site + 3;
  /* loads, stores, llc_load_misses, llc_store_misses, writebacks: left to
   * the sample backend, which prices pmu.json's "sites" (the visits and
   * what they came from: advisor/tierwise/backends/sample.py); samples */
  tw_out_str(o, ",,,,,,");
  tw_out_u64(o, idx >= 0 && idx < tw_nts ? tw_ts[idx].n[0] + tw_ts[idx].n[1] : 0);
  tw_out_str(o, "\n");
}

void tw_touch_params(tw_out *o) {
  tw_out_str(o, "{\"source\": \"touch\", \"tick_us\": ");
  tw_out_u64(o, tw_tick_ns / 1000u);
  tw_out_str(o, ", \"pages_per_tick\": ");
  tw_out_u64(o, (uint64_t)tw_base * TW_TOUCH_RUN);
  tw_out_str(o, ", \"ticks\": ");
  tw_out_u64(o, tw_arming_ns / tw_tick_ns);
  tw_out_str(o, ", \"overhead_pct\": ");
  tw_out_u64(o, tw_opt[TW_O_TOUCH_OVERHEAD]);
  tw_out_str(o, ", \"mprotects\": ");
  tw_out_u64(o, __atomic_load_n(&tw_calls, __ATOMIC_RELAXED));
  tw_out_str(o, ", \"mprotect_us\": ");
  tw_out_u64(o, __atomic_load_n(&tw_spent_ns, __ATOMIC_RELAXED) / 1000u);
  tw_out_str(o, ", \"sampler_us\": "); /* (read after the sampler stopped) */
  tw_out_u64(o, tw_stop_ns > tw_start_ns ? (tw_stop_ns - tw_start_ns) / 1000u : 0);
  tw_out_str(o, ", \"armed\": ");
  tw_out_u64(o, tw_armed_total);
  tw_out_str(o, ", \"faults\": ");
  tw_out_u64(o, tw_faults_total);
  tw_out_str(o, ", \"retried\": ");
  tw_out_u64(o, tw_retries);
  tw_out_str(o, ", \"skipped_in_io\": ");
  tw_out_u64(o, tw_skipped_io);
  if (tw_roi_on) { /* (read after the sampler stopped) */
    tw_out_str(o, ", \"roi_entered\": ");
    tw_out_u64(o, tw_roi_entered);
    tw_out_str(o, ", \"roi_us\": ");
    tw_out_u64(o, tw_roi_ns / 1000u);
  }
  tw_out_str(o, ", \"site_columns\": [\"any_samples\", \"any_touched\", "
                "\"any_exposure_us\", \"any_page_ms\", \"write_samples\", "
                "\"write_touched\", \"write_exposure_us\", "
                "\"write_page_ms\", \"first_was_write\", \"runs\", "
                "\"at_first\", \"run_pages\", \"any_runs\", "
                "\"any_soon\", \"write_runs\", \"write_soon\"], "
                "\"soon_us\": [10, 100, 1000, 10000], \"sites\": {");
  for (int i = 0, first = 1; i < tw_nts; i++) {
    const tw_touch_site *r = &tw_ts[i];
    if (!r->n[0] && !r->n[1])
      continue;
    uint64_t v[12] = {r->n[0], r->f[0], (uint64_t)(r->exposure[0] * 1e6),
                      (uint64_t)(r->weight[0] * 1e3), r->n[1], r->f[1],
                      (uint64_t)(r->exposure[1] * 1e6),
                      (uint64_t)(r->weight[1] * 1e3), r->wrote, r->runs,
                      r->at_first, TW_TOUCH_RUN};
    char id[24] = "-";
    if (i < 3)
      tw_fmt_u64(id + 1, (uint64_t)(3 - i)); /* a pseudo-site */
    else
      tw_fmt_u64(id, (uint64_t)(i - 3));
    tw_out_str(o, first ? "\"" : ", \"");
    tw_out_str(o, id);
    tw_out_str(o, "\": [");
    for (int k = 0; k < 12; k++) {
      tw_out_str(o, k ? ", " : "");
      tw_out_u64(o, v[k]);
    }
    for (int k = 0; k < 2; k++) {
      tw_out_str(o, ", ");
      tw_out_u64(o, r->runs_armed[k]);
      tw_out_str(o, ", [");
      for (int d = 0; d < TW_TOUCH_SOON; d++) {
        tw_out_str(o, d ? ", " : "");
        tw_out_u64(o, r->soon[k][d]);
      }
      tw_out_str(o, "]");
    }
    tw_out_str(o, "]");
    first = 0;
  }
  tw_out_str(o, "}, \"depth\": ");
  tw_out_u64(o, (uint64_t)tw_cfg.depth);
  tw_out_str(o, ", \"pid\": ");
  tw_out_u64(o, (uint64_t)getpid());
  tw_out_str(o, "}\n");
}
