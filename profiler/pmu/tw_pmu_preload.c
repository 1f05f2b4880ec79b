/* SPDX-License-Identifier: MIT */
/* libtierwise-pmu.so: the pmu backend's LD_PRELOAD profiler (minimal glue
 * until the runtime's shared interposer lands in runtime/). It samples the
 * default events (tw_pmu_events.c) on every thread, drains the rings from a
 * reader thread every 10 ms (the application never blocks on it), and
 * attributes sample addresses to live heap objects of at least
 * TIERWISE_PMU_MIN_BYTES (default 4096; smaller ones count as [unknown]).
 * Sites follow advisor/FORMATS.md. At exit it writes the raw profile into
 * $TIERWISE_PMU_OUT: sites.csv, objects.csv, modules.csv, pmu.json.
 * TIERWISE_PMU_ALLOW_NO_EVENTS=1 keeps tracking sites and objects when the
 * events do not open (count columns then stay empty). */
#define _GNU_SOURCE
#include "tw_pmu.h"
#include "tw_pmu_sites.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

#define MAX_RINGS 1024
#define RING_PAGES 64 /* data pages per ring, a power of two */

typedef struct {
  struct perf_event_mmap_page *meta;
  int fd, event;
} ring_t;

static tw_pmu_event events[TW_PMU_MAX_EVENTS];
static int n_events;
static ring_t rings[MAX_RINGS];
static int n_rings;
static tw_pmu_attr *attr;
static tw_pmu_ring_stats stats;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t reader;
static volatile int active, stopping;
static size_t min_bytes = 4096;
static long page;
static __thread int in_hook;

static void open_thread_events(void) {
  for (int e = 0; e < n_events; e++) {
    int fd = (int)syscall(SYS_perf_event_open, &events[e].attr, 0, -1, -1, 0);
    if (fd < 0)
      continue;
    void *m = mmap(NULL, (RING_PAGES + 1) * page, PROT_READ | PROT_WRITE,
                   MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
      close(fd);
      continue;
    }
    pthread_mutex_lock(&lock);
    if (n_rings < MAX_RINGS)
      rings[n_rings++] = (ring_t){m, fd, e};
    pthread_mutex_unlock(&lock);
    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
  }
}

typedef struct {
  ring_t *r;
} drain_ctx;

static void on_sample(void *p, const tw_pmu_sample *s) {
  ring_t *r = ((drain_ctx *)p)->r;
  tw_pmu_attr_sample(attr, events[r->event].kind, s,
                     events[r->event].attr.sample_period);
}

static void drain_all(void) {
  pthread_mutex_lock(&lock);
  for (int i = 0; i < n_rings; i++) {
    drain_ctx c = {&rings[i]};
    tw_pmu_ring_drain(rings[i].meta, (char *)rings[i].meta + page,
                      (uint64_t)RING_PAGES * page, TW_PMU_SAMPLE_TYPE,
                      on_sample, &c, &stats);
  }
  pthread_mutex_unlock(&lock);
}

static void *reader_main(void *arg) {
  (void)arg;
  struct timespec ts = {0, 10 * 1000 * 1000};
  while (!stopping) {
    nanosleep(&ts, NULL);
    drain_all();
  }
  return NULL;
}

/* ---- object tracking ---- */

static void track(void *p, size_t n) {
  if (!active || !p || n < min_bytes || in_hook)
    return;
  in_hook = 1;
  int site = tw_pmu_site_of_caller(n);
  if (site < 0) { /* the C/C++ runtimes' own allocation: not a site */
    in_hook = 0;
    return;
  }
  pthread_mutex_lock(&lock);
  tw_pmu_attr_add_object(attr, (uintptr_t)p, n, site);
  pthread_mutex_unlock(&lock);
  tw_pmu_sites_alloc(p, site, n);
  in_hook = 0;
}

static void untrack(void *p) {
  if (!active || !p || in_hook)
    return;
  in_hook = 1;
  pthread_mutex_lock(&lock);
  if (tw_pmu_attr_remove_object(attr, (uintptr_t)p) == 0)
    tw_pmu_sites_freed(p);
  pthread_mutex_unlock(&lock);
  in_hook = 0;
}

void *malloc(size_t n) {
  void *p = __libc_malloc(n);
  track(p, n);
  return p;
}
void *calloc(size_t m, size_t n) {
  void *p = __libc_calloc(m, n);
  track(p, m * n);
  return p;
}
void *realloc(void *q, size_t n) {
  untrack(q);
  void *p = __libc_realloc(q, n);
  track(p, n);
  return p;
}
void free(void *p) {
  untrack(p);
  __libc_free(p);
}
void *memalign(size_t a, size_t n) {
  void *p = __libc_memalign(a, n);
  track(p, n);
  return p;
}
void *aligned_alloc(size_t a, size_t n) { return memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n) {
  void *p = __libc_memalign(a, n);
  if (!p)
    return ENOMEM;
  track(p, n);
  *out = p;
  return 0;
}

/* ---- threads ---- */

typedef struct {
  void *(*fn)(void *);
  void *arg;
} start_t;

static void *thread_start(void *p) {
  start_t s = *(start_t *)p;
  __libc_free(p);
  if (active)
    open_thread_events();
  return s.fn(s.arg);
}

int pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *),
                   void *arg) {
  static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                     void *);
  if (!real)
    real = dlsym(RTLD_NEXT, "pthread_create");
  start_t *s = __libc_malloc(sizeof *s);
  if (!s)
    return EAGAIN;
  s->fn = fn;
  s->arg = arg;
  return real(t, a, thread_start, s);
}

/* ---- start and end ---- */

__attribute__((constructor)) static void tw_pmu_init(void) {
  const char *out = getenv("TIERWISE_PMU_OUT");
  if (!out)
    return;
  page = sysconf(_SC_PAGESIZE);
  const char *v = getenv("TIERWISE_PMU_MIN_BYTES");
  if (v)
    min_bytes = strtoull(v, NULL, 0);
  v = getenv("TIERWISE_PMU_PERIOD");
  uint64_t period = v ? strtoull(v, NULL, 0) : 20011;
  char why[512];
  n_events = tw_pmu_default_events(events, TW_PMU_MAX_EVENTS, period, NULL, why,
                                   sizeof why);
  if (n_events < 0) {
    fprintf(stderr, "tierwise pmu: %s\n", why);
    n_events = 0;
    /* Sites and objects only (tests, and checking site identity). */
    if (!getenv("TIERWISE_PMU_ALLOW_NO_EVENTS"))
      return;
  }
  attr = tw_pmu_attr_new();
  tw_pmu_sites_init(out);
  active = 1;
  open_thread_events();
  static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                     void *);
  real = dlsym(RTLD_NEXT, "pthread_create");
  real(&reader, NULL, reader_main, NULL);
}

__attribute__((destructor)) static void tw_pmu_fini(void) {
  if (!active)
    return;
  stopping = 1;
  pthread_join(reader, NULL);
  drain_all();
  active = 0;
  tw_pmu_sites_write(attr, events, n_events, n_rings, &stats);
}
