/* SPDX-License-Identifier: MIT */
/*
 * The interposed entry points: malloc, calloc, realloc, free, the aligned
 * variants, malloc_usable_size (C++ new/delete reach us through malloc and
 * free). Each is tiny: it takes the caller's key (return address, stack
 * pointer) and hands over to the core (tw_core.c).
 */
#define _GNU_SOURCE
#include "tw_core.h"

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#define TW_EXPORT __attribute__((visibility("default")))
#define TW_RA __builtin_return_address(0)
#define TW_SP __builtin_frame_address(0)

TW_EXPORT void *malloc(size_t size) {
  void *p = tw_alloc(size, 0, 0, TW_RA, TW_SP);
  if (!p)
    errno = ENOMEM;
  return p;
}

TW_EXPORT void free(void *p) { tw_core_free(p); }

TW_EXPORT void *calloc(size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return NULL;
  }
  void *p = tw_alloc(total, 0, 1, TW_RA, TW_SP);
  if (!p)
    errno = ENOMEM;
  return p;
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

TW_EXPORT void *aligned_alloc(size_t align, size_t size) {
  if (!tw_pow2(align)) {
    errno = EINVAL;
    return NULL;
  }
  void *p = tw_alloc(size, align, 0, TW_RA, TW_SP);
  if (!p)
    errno = ENOMEM;
  return p;
}

TW_EXPORT void *memalign(size_t align, size_t size) {
  if (!tw_pow2(align)) {
    errno = EINVAL;
    return NULL;
  }
  void *p = tw_alloc(size, align, 0, TW_RA, TW_SP);
  if (!p)
    errno = ENOMEM;
  return p;
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
