/* SPDX-License-Identifier: MIT */
/*
 * Layer 1 (mechanisms): the pmu profiler's sampling, compiled only into
 * libtierwise-pmu.so (TW_WITH_PMU), where TIERWISE_PMU_OUT=DIR is the
 * census (sites, objects, anonymous mmaps, modules with build-ids: the same
 * capture as every other mode) plus this: the default precise memory events
 * (profiler/pmu, tw_pmu.h: encoded with libpfm4) opened on every thread
 * (tw_thread.c starts them on new threads), their rings drained every 10 ms
 * by a reader thread (the application never blocks on it), and each
 * sample's address charged to the live census object holding it (objects of
 * at least TIERWISE_PMU_MIN_BYTES, default 4096; other addresses count as
 * [unknown]), scaled by the sampling period (TIERWISE_PMU_PERIOD, default
 * 20011). At exit the census writes the estimated count columns into
 * sites.csv and pmu.json (events, rings, samples) instead of backend.json.
 * TIERWISE_PMU_ALLOW_NO_EVENTS=1 keeps the census when the events do not
 * open (count columns then stay empty; tests, site identity), and
 * TIERWISE_PMU_TEST_RING=FILE (tests, where no PMU is) drains FILE at exit
 * as a ring of the first event: a perf mmap ring as the kernel lays it out
 * (the meta page, then a power-of-two data area) that the program wrote
 * with synthetic samples of its own objects' addresses.
 */
#define _GNU_SOURCE
#include "tw_mech.h"
#include "tw_pmu.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TW_RINGS_MAX 1024
#define TW_RING_PAGES 64 /* data pages per ring, a power of two */

typedef struct tw_ring {
  struct perf_event_mmap_page *meta;
  int fd, event;
} tw_ring;

static tw_pmu_event tw_ev[TW_PMU_MAX_EVENTS];
static int tw_nev;
static int tw_ev_rings[TW_PMU_MAX_EVENTS]; /* rings opened per event */
static tw_ring tw_rings[TW_RINGS_MAX];
static int tw_nrings;
static int tw_rings_lost; /* threads' rings past TW_RINGS_MAX (tw_slock) */
static tw_pmu_attr *tw_attr;
static tw_pmu_ring_stats tw_stats;
static pthread_mutex_t tw_slock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t tw_reader;
static volatile int tw_on, tw_reading;
static int tw_stopping; /* under tw_slock */
static long tw_page;
static int tw_touching; /* TIERWISE_PMU_SOURCE=touch: tw_touch.c samples */

int tw_sampling(void) { return tw_on; }

void tw_sample_thread(void) {
  for (int e = 0; tw_on && !tw_touching && e < tw_nev; e++) {
    int fd = (int)syscall(SYS_perf_event_open, &tw_ev[e].attr, 0, -1, -1, 0);
    if (fd < 0)
      continue;
    void *m = tw_sys_mmap(NULL, (TW_RING_PAGES + 1) * tw_page,
                          PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
      tw_fd_close(fd);
      continue;
    }
    pthread_mutex_lock(&tw_slock);
    int kept = tw_nrings < TW_RINGS_MAX;
    if (kept) {
      tw_rings[tw_nrings++] = (tw_ring){m, fd, e};
      tw_ev_rings[e]++;
    } else
      tw_rings_lost++;
    pthread_mutex_unlock(&tw_slock);
    if (!kept) { /* no room to drain it: never enabled, nothing leaks */
      tw_sys_munmap(m, (TW_RING_PAGES + 1) * tw_page);
      tw_fd_close(fd);
      continue;
    }
    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
  }
}

static void tw_on_sample(void *ctx, const tw_pmu_sample *s) {
  const tw_ring *r = ctx;
  tw_pmu_attr_sample(tw_attr, tw_ev[r->event].kind, s,
                     tw_ev[r->event].attr.sample_period);
}

static void tw_drain(void) { /* tw_slock held */
  for (int i = 0; i < tw_nrings; i++)
    tw_pmu_ring_drain(tw_rings[i].meta, (char *)tw_rings[i].meta + tw_page,
                      (uint64_t)TW_RING_PAGES * tw_page, TW_PMU_SAMPLE_TYPE,
                      tw_on_sample, &tw_rings[i], &tw_stats);
}

/* The reader's batch: samples copied out of the rings without tw_slock,
 * attributed under it afterwards, TW_BATCH at a time, so that allocating
 * threads (tw_sample_live/dead take tw_slock for every census object) wait
 * at most one batch's attribution, never a drain of every ring. Only the
 * reader uses it. */
#define TW_BATCH 512
static struct {
  tw_pmu_sample s;
  int event;
} tw_batch[TW_BATCH];
static int tw_nbatch;

static void tw_batch_flush(void) {
  pthread_mutex_lock(&tw_slock);
  for (int i = 0; i < tw_nbatch && tw_attr; i++)
    tw_pmu_attr_sample(tw_attr, tw_ev[tw_batch[i].event].kind, &tw_batch[i].s,
                       tw_ev[tw_batch[i].event].attr.sample_period);
  pthread_mutex_unlock(&tw_slock);
  tw_nbatch = 0;
}

static void tw_on_sample_batched(void *ctx, const tw_pmu_sample *s) {
  tw_batch[tw_nbatch].s = *s;
  tw_batch[tw_nbatch].event = ((const tw_ring *)ctx)->event;
  if (++tw_nbatch == TW_BATCH)
    tw_batch_flush();
}

/* The reader's drain: rings are only appended (under tw_slock) while it
 * runs, so those counted under the lock are read without it. */
static void tw_drain_batched(void) {
  pthread_mutex_lock(&tw_slock);
  int n = tw_nrings;
  pthread_mutex_unlock(&tw_slock);
  for (int i = 0; i < n; i++)
    tw_pmu_ring_drain(tw_rings[i].meta, (char *)tw_rings[i].meta + tw_page,
                      (uint64_t)TW_RING_PAGES * tw_page, TW_PMU_SAMPLE_TYPE,
                      tw_on_sample_batched, &tw_rings[i], &tw_stats);
  tw_batch_flush();
}

static void *tw_reader_main(void *arg) {
  (void)arg;
  tw_in_core++; /* the attribution's own allocations are no sites */
  struct timespec ts = {0, 10 * 1000 * 1000};
  for (int stop = 0; !stop;) {
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&tw_slock);
    stop = tw_stopping;
    pthread_mutex_unlock(&tw_slock);
    if (!stop)
      tw_drain_batched();
  }
  return NULL;
}

int tw_sample_start(void) {
  tw_page = sysconf(_SC_PAGESIZE);
  const char *src = secure_getenv("TIERWISE_PMU_SOURCE");
  if (src && !strcmp(src, "touch")) { /* no events: page-touch samples */
    tw_attr = tw_pmu_attr_new();
    if (!tw_attr)
      return -1;
    tw_touching = tw_on = 1;
    if (tw_touch_start(tw_attr, &tw_slock)) {
      tw_touching = tw_on = 0;
      return -1;
    }
    return 0;
  }
  if (src && *src && strcmp(src, "events"))
    tw_warn("TIERWISE_PMU_SOURCE: not events or touch: ", src, "");
  const char *v = secure_getenv("TIERWISE_PMU_PERIOD");
  uint64_t period = v && *v ? strtoull(v, NULL, 0) : 20011;
  char why[512];
  tw_nev = tw_pmu_default_events(tw_ev, TW_PMU_MAX_EVENTS, period, NULL, why,
                                 sizeof(why));
  if (tw_nev < 0) {
    tw_warn("pmu: ", why, "");
    tw_nev = 0;
    v = secure_getenv("TIERWISE_PMU_ALLOW_NO_EVENTS");
    if (!v || strcmp(v, "1"))
      return -1;
  }
  tw_attr = tw_pmu_attr_new();
  if (!tw_attr)
    return -1;
  tw_on = 1;
  tw_sample_thread();
  /* glibc's pthread_create: the reader opens no events of its own */
  int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                void *) = dlsym(RTLD_NEXT, "pthread_create");
  tw_reading = create && create(&tw_reader, NULL, tw_reader_main, NULL) == 0;
  return 0;
}

/* TIERWISE_PMU_TEST_RING (tw_slock held). */
static void tw_test_ring(void) {
  const char *path = secure_getenv("TIERWISE_PMU_TEST_RING");
  struct stat st;
  if (!path || !*path || !tw_nev)
    return;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &st) || st.st_size <= tw_page) {
    tw_warn("pmu: cannot read the test ring ", path, "");
    if (fd >= 0)
      tw_fd_close(fd);
    return;
  }
  void *m = tw_sys_mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE, fd, 0);
  tw_fd_close(fd);
  if (m == MAP_FAILED)
    return;
  tw_ring r = {m, -1, 0};
  tw_pmu_ring_drain(m, (char *)m + tw_page, (uint64_t)st.st_size - tw_page,
                    TW_PMU_SAMPLE_TYPE, tw_on_sample, &r, &tw_stats);
  tw_ev_rings[0]++;
  tw_sys_munmap(m, (size_t)st.st_size);
}

void tw_sample_stop(void) {
  if (!tw_on)
    return;
  if (tw_touching) {
    tw_touch_stop();
    return;
  }
  pthread_mutex_lock(&tw_slock);
  tw_stopping = 1;
  pthread_mutex_unlock(&tw_slock);
  if (tw_reading)
    pthread_join(tw_reader, NULL);
  tw_reading = 0;
  pthread_mutex_lock(&tw_slock);
  tw_drain();
  tw_test_ring();
  for (int i = 0; i < tw_nrings; i++)
    ioctl(tw_rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
  pthread_mutex_unlock(&tw_slock);
}

/* Objects are charged by address; the census calls these for each object
 * of at least objects_min bytes (heap blocks and anonymous mappings). */
void tw_sample_live(const void *p, size_t size, uint32_t site) {
  if (!tw_on || site == TW_SITE_NONE)
    return;
  pthread_mutex_lock(&tw_slock);
  if (tw_attr)
    tw_pmu_attr_add_object(tw_attr, (uintptr_t)p, size, (int)site);
  pthread_mutex_unlock(&tw_slock);
}

void tw_sample_dead(const void *p) {
  if (!tw_on)
    return;
  pthread_mutex_lock(&tw_slock);
  if (tw_touching) /* its sampled pages back before its memory goes */
    tw_touch_release(p, 0);
  if (tw_attr)
    tw_pmu_attr_remove_object(tw_attr, (uintptr_t)p);
  pthread_mutex_unlock(&tw_slock);
}

/* After the census is written: the attribution is released (objects freed
 * later, by other destructors, are not looked up). */
void tw_sample_end(void) {
  pthread_mutex_lock(&tw_slock);
  tw_pmu_attr_free(tw_attr);
  tw_attr = NULL;
  tw_on = 0;
  pthread_mutex_unlock(&tw_slock);
}

/* The count columns of sites.csv (loads, stores, llc_load_misses,
 * llc_store_misses; writebacks are never measured) of \p site, or of the
 * [unknown] pseudo-site for TW_SITE_NONE: each empty where no event that
 * opened measures it. */
void tw_sample_columns(tw_out *o, uint32_t site) {
  if (tw_touching) {
    tw_touch_columns(o, site == TW_SITE_NONE ? TW_PMU_SITE_UNKNOWN : (int)site);
    return;
  }
  int has[TW_PMU_NCOLS] = {0};
  for (int e = 0; e < tw_nev; e++) {
    if (!tw_ev_rings[e])
      continue; /* encoded, but it opened on no thread */
    if (tw_ev[e].kind == TW_PMU_LLC_LOAD_MISS)
      has[TW_PMU_COL_LLC_LOAD_MISSES] = 1;
    if (tw_ev[e].kind == TW_PMU_STORE)
      has[TW_PMU_COL_STORES] = 1;
    if (tw_ev[e].kind == TW_PMU_IBS_OP)
      for (int c = 0; c < TW_PMU_NCOLS; c++)
        has[c] = 1;
  }
  int id = site == TW_SITE_NONE ? TW_PMU_SITE_UNKNOWN : (int)site;
  for (int c = 0; c < TW_PMU_NCOLS; c++) {
    tw_out_str(o, ",");
    if (tw_on && has[c])
      tw_out_u64(o, tw_pmu_attr_count(tw_attr, id, c));
  }
  tw_out_str(o, ",\n");
}

/* pmu.json: the events as opened, ring statistics, the depth. */
void tw_sample_params(tw_out *o) {
  if (tw_touching) {
    tw_touch_params(o);
    return;
  }
  tw_out_str(o, "{\"events\": [");
  for (int e = 0; e < tw_nev; e++) {
    const struct perf_event_attr *a = &tw_ev[e].attr;
    tw_out_str(o, e ? ", {\"name\": " : "{\"name\": ");
    tw_out_json(o, tw_ev[e].name);
    tw_out_str(o, ", \"type\": ");
    tw_out_u64(o, a->type);
    tw_out_str(o, ", \"config\": ");
    tw_out_u64(o, a->config);
    tw_out_str(o, ", \"precise_ip\": ");
    tw_out_u64(o, a->precise_ip);
    tw_out_str(o, ", \"sample_period\": ");
    tw_out_u64(o, a->sample_period);
    tw_out_str(o, "}");
  }
  tw_out_str(o, "], \"rings\": ");
  tw_out_u64(o, (uint64_t)tw_nrings);
  tw_out_str(o, ", \"rings_lost\": ");
  tw_out_u64(o, (uint64_t)tw_rings_lost);
  tw_out_str(o, ", \"samples\": ");
  tw_out_u64(o, tw_stats.samples);
  tw_out_str(o, ", \"lost_samples\": ");
  tw_out_u64(o, tw_stats.lost_samples);
  tw_out_str(o, ", \"bad_records\": ");
  tw_out_u64(o, tw_stats.bad_records);
  tw_out_str(o, ", \"depth\": ");
  tw_out_u64(o, (uint64_t)tw_cfg.depth);
  tw_out_str(o, ", \"pid\": ");
  tw_out_u64(o, (uint64_t)getpid());
  tw_out_str(o, "}\n");
}

/* fork (0 prepare, 1 parent, 2 child): the rings are the parent's threads'
 * and the child has no reader thread: the child's census goes on, without
 * samples (its count columns stay empty). */
void tw_sample_atfork(int phase) {
  if (phase == 0) {
    pthread_mutex_lock(&tw_slock);
    if (tw_touching)
      tw_touch_atfork(0);
    return;
  }
  if (tw_touching)
    tw_touch_atfork(phase);
  if (phase == 2 && tw_on && !tw_touching) {
    for (int i = 0; i < tw_nrings; i++) {
      tw_sys_munmap(tw_rings[i].meta, (TW_RING_PAGES + 1) * tw_page);
      tw_fd_close(tw_rings[i].fd);
    }
    tw_nrings = 0;
    tw_reading = 0;
    tw_nev = 0;
  }
  pthread_mutex_unlock(&tw_slock);
}
int tw_sample_touching(void) { return tw_touching; }
