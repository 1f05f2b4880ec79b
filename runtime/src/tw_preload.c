/* SPDX-License-Identifier: MIT */
/*
 * Layer 4 (entry points). The interposed entry points: malloc, calloc, realloc, free, the aligned
 * variants, malloc_usable_size (C++ new/delete reach us through malloc and
 * free). Each is tiny: it takes the caller's key (return address, stack
 * pointer) and hands over to the allocation paths (tw_alloc.c). malloc, calloc and free
 * first try the placement fast path inline (tw_fast.h): a cache hit for a
 * DRAM site and the free of a DRAM block end in a tail call to glibc.
 */
#define _GNU_SOURCE
#include "tw_paths.h"

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#define TW_EXPORT __attribute__((visibility("default")))
#define TW_RA __builtin_return_address(0)
#define TW_SP __builtin_frame_address(0)

/* The slow paths, out of line so that the fast ones need no saved
 * registers. */
static __attribute__((noinline)) void *tw_malloc_slow(size_t size, int zero,
                                                      void *ra, void *sp) {
  void *p = size < tw_fast_limit ? tw_pl_alloc_miss(size, zero, ra, sp)
                                  : tw_alloc(size, 0, zero, ra, sp);
  if (!p)
    errno = ENOMEM;
  return p;
}

TW_EXPORT void *malloc(size_t size) {
  tw_fast_entry *e = tw_fast_hit(size, TW_RA, TW_SP);
  if (TW_LIKELY(e != NULL)) {
    /* Counted before the call so that glibc's is a tail call; a small
     * allocation that fails (out of memory) is counted all the same. */
    e->pend_allocs++;
    e->pend_bytes += size;
    if (TW_LIKELY(e->plain))
      return __libc_malloc(size);
    return tw_fast_serve(e, size, 0);
  }
  return tw_malloc_slow(size, 0, TW_RA, TW_SP);
}

TW_EXPORT void free(void *p) {
  if (TW_LIKELY(!tw_free_slow) && TW_LIKELY(tw_page_owner(p) == TW_OWNER_GLIBC)) {
    __libc_free(p);
    return;
  }
  tw_core_free(p);
}

TW_EXPORT void *calloc(size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return NULL;
  }
  tw_fast_entry *e = tw_fast_hit(total, TW_RA, TW_SP);
  if (TW_LIKELY(e != NULL)) {
    e->pend_allocs++;
    e->pend_bytes += total;
    if (TW_LIKELY(e->plain))
      return __libc_calloc(1, total);
    return tw_fast_serve(e, total, 1);
  }
  return tw_malloc_slow(total, 1, TW_RA, TW_SP);
}

TW_EXPORT void *realloc(void *p, size_t size) {
  void *q = tw_core_realloc(p, size, TW_RA, TW_SP);
  if (!q && size)
    errno = ENOMEM;
  return q;
}

TW_EXPORT void *reallocarray(void *p, size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return NULL;
  }
  return tw_core_realloc(p, total, TW_RA, TW_SP);
}

static int tw_pow2(size_t a) { return a && !(a & (a - 1)); }

TW_EXPORT int posix_memalign(void **out, size_t align, size_t size) {
  if (!tw_pow2(align) || align % sizeof(void *))
    return EINVAL;
  void *p = tw_alloc(size, align, 0, TW_RA, TW_SP);
  if (!p)
    return ENOMEM;
  *out = p;
  return 0;
}

/* aligned_alloc and memalign: the caller's key is taken by the exported
 * function and passed in (an inlined helper keeps it the user's). */
static inline __attribute__((always_inline)) void *
tw_aligned(size_t align, size_t size, void *ra, void *sp) {
  if (!tw_pow2(align)) {
    errno = EINVAL;
    return NULL;
  }
  void *p = tw_alloc(size, align, 0, ra, sp);
  if (!p)
    errno = ENOMEM;
  return p;
}

TW_EXPORT void *aligned_alloc(size_t align, size_t size) {
  return tw_aligned(align, size, TW_RA, TW_SP);
}

TW_EXPORT void *memalign(size_t align, size_t size) {
  return tw_aligned(align, size, TW_RA, TW_SP);
}

TW_EXPORT void *valloc(size_t size) {
  void *p = tw_alloc(size, (size_t)sysconf(_SC_PAGESIZE), 0, TW_RA, TW_SP);
  if (!p)
    errno = ENOMEM;
  return p;
}

TW_EXPORT void *pvalloc(size_t size) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (size > SIZE_MAX - page) {
    errno = ENOMEM;
    return NULL;
  }
  size = (size + page - 1) & ~(page - 1);
  void *p = tw_alloc(size ? size : page, page, 0, TW_RA, TW_SP);
  if (!p)
    errno = ENOMEM;
  return p;
}

TW_EXPORT size_t malloc_usable_size(void *p) { return tw_usable(p); }
