/* SPDX-License-Identifier: MIT */
/*
 * Layer 4 (entry points): pthread_create, interposed only by the pmu
 * profiler (libtierwise-pmu.so): each new thread opens the sampling events
 * on itself (tw_sample.c; perf events of one thread, whose rings cannot be
 * inherited) before running its start routine.
 */
#define _GNU_SOURCE
#include "tw_paths.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

typedef struct tw_start {
  void *(*fn)(void *);
  void *arg;
} tw_start;

static void *tw_thread_start(void *p) {
  tw_start s = *(tw_start *)p;
  __libc_free(p);
  tw_sample_thread();
  return s.fn(s.arg);
}

__attribute__((visibility("default"))) int
pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *),
               void *arg) {
  static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                     void *);
  if (!real)
    real = dlsym(RTLD_NEXT, "pthread_create");
  if (!real)
    return EAGAIN;
  if (!tw_sampling())
    return real(t, a, fn, arg);
  tw_start *s = __libc_malloc(sizeof(*s));
  if (!s)
    return EAGAIN;
  s->fn = fn;
  s->arg = arg;
  int rc = real(t, a, tw_thread_start, s);
  if (rc)
    __libc_free(s);
  return rc;
}
