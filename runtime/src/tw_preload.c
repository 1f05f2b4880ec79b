/* SPDX-License-Identifier: MIT */
/*
 * Layer 4 (entry points). The interposed entry points: malloc, calloc,
 * realloc, free, the aligned variants, malloc_usable_size (C++ new/delete
 * reach us through malloc and free), and strdup, strndup and the asprintf
 * family (libc's allocate from inside libc, under keys no call site owns).
 * Each is tiny: it takes the caller's key (return address, stack pointer)
 * and hands over to the allocation paths (tw_alloc.c). malloc, calloc and
 * free first try the placement fast path inline (tw_fast.h): a cache hit for
 * a DRAM site and the free of a DRAM block end in a tail call to glibc.
 */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE /* (its inline asprintf would clash with ours) */
#include "tw_paths.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define TW_EXPORT __attribute__((visibility("default")))
#define TW_RA __builtin_return_address(0)
#define TW_SP __builtin_frame_address(0)

/* The key of the caller of asprintf or vasprintf while glibc's vasprintf
 * runs in this thread (ra NULL: none): the allocations it makes (a
 * 100-byte buffer, then the result's malloc or realloc, ~2 per call) are
 * keyed by it (tw_wrapped). */
static __thread struct {
  void *ra, *sp;
} tw_wrap __attribute__((tls_model("initial-exec")));

static void *tw_malloc_wrapped(size_t size, int zero);

/* A size the fast path does not serve (inline: the compiler keeps
 * tw_malloc_slow's frame to this path, a miss tail-calls). */
static inline __attribute__((always_inline)) void *
tw_malloc_big(size_t size, int zero, void *ra, void *sp) {
  void *p = tw_alloc(size, 0, zero, ra, sp);
  if (!p)
    errno = ENOMEM;
  return p;
}

/* A fast-path miss (or a size the fast path does not serve); tail calls
 * (tw_pl_alloc_miss sets errno itself). */
static inline __attribute__((always_inline)) void *
tw_malloc_miss(size_t size, int zero, void *ra, void *sp) {
  return size < tw_fast_limit ? tw_pl_alloc_miss(size, zero, ra, sp)
                              : tw_malloc_big(size, zero, ra, sp);
}

/* The slow paths, out of line so that the fast ones need no saved
 * registers; a miss from vasprintf's allocations takes its caller's key
 * (the one load more a miss costs is what the strdup and asprintf keys
 * save: tw_malloc_slow tail-calls, it had a frame before). */
static __attribute__((noinline)) void *tw_malloc_slow(size_t size, int zero,
                                                      void *ra, void *sp) {
  if (TW_UNLIKELY(tw_wrap.ra != NULL))
    return tw_malloc_wrapped(size, zero);
  return tw_malloc_miss(size, zero, ra, sp);
}

/* malloc's body, its key that of the function it is expanded in (a
 * macro: malloc's code is the same as when it was written out there, the
 * key read where it is used - passed to an inline helper, it cost the
 * fast path one register move). */
#define TW_MALLOC_HERE(size)                                                   \
  ({                                                                           \
    tw_fast_entry *e_ = tw_fast_hit(size, TW_RA, TW_SP);                       \
    /* Counted before the call so that glibc's is a tail call; a small         \
     * allocation that fails (out of memory) is counted all the same. */       \
    TW_LIKELY(e_ != NULL)                                                      \
    ? (e_->pend_allocs++, e_->pend_bytes += size,                              \
       TW_LIKELY(e_->plain) ? __libc_malloc(size)                              \
                            : tw_fast_serve(e_, size, 0))                      \
    : tw_malloc_slow(size, 0, TW_RA, TW_SP);                                   \
  })

/* An allocation inside vasprintf: its caller's key, a hit served as
 * malloc serves one. */
static __attribute__((noinline)) void *tw_malloc_wrapped(size_t size,
                                                         int zero) {
  void *ra = tw_wrap.ra, *sp = tw_wrap.sp;
  tw_fast_entry *e = tw_fast_hit(size, ra, sp);
  if (e) {
    e->pend_allocs++;
    e->pend_bytes += size;
    if (TW_LIKELY(e->plain))
      return zero ? __libc_calloc(1, size) : __libc_malloc(size);
    return tw_fast_serve(e, size, zero);
  }
  return tw_malloc_miss(size, zero, ra, sp);
}

TW_EXPORT void *malloc(size_t size) { return TW_MALLOC_HERE(size); }

/* strdup and strndup: glibc's make one malloc(length + 1) from inside libc,
 * whose key (a return address into strdup, its stack pointer) is shared by
 * every caller at the same stack depth - a key whose unwinds keep finding
 * other first frames, never trusted (an Open MPI start-up's ~5,900 strdup
 * calls were fast-path misses). Here the same one malloc with the caller's
 * key: a call site's key is trusted at once (its first frame is its own).
 * The same allocations and the same sites (the full stack skips this
 * library's frames as it skipped libc's). */
TW_EXPORT char *strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = TW_MALLOC_HERE(n);
  return p ? memcpy(p, s, n) : NULL;
}

TW_EXPORT char *strndup(const char *s, size_t max) {
  size_t n = strnlen(s, max);
  char *p = TW_MALLOC_HERE(n + 1);
  if (!p)
    return NULL;
  p[n] = 0;
  return memcpy(p, s, n);
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
  void *ra = TW_RA, *sp = TW_SP;
  if (TW_UNLIKELY(tw_wrap.ra != NULL)) { /* inside vasprintf: its caller's */
    ra = tw_wrap.ra;
    sp = tw_wrap.sp;
  }
  void *q = tw_core_realloc(p, size, ra, sp);
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

/* asprintf, vasprintf, __asprintf_chk (_FORTIFY_SOURCE's asprintf): glibc's
 * vasprintf allocates from inside libc, under a key (a return address into
 * vasprintf, its stack pointer) shared by every caller at the same stack
 * depth, never trusted (an Open MPI start-up's ~3,800 calls made ~7,600
 * fast-path misses). glibc's vasprintf all the same (__vasprintf_chk; flag
 * 0 is vasprintf's mode), its allocations keyed by the caller's key: the
 * same allocations and sites (the full stack skips this library's frames
 * as it skips libc's), a call site's key trusted at once. */
extern int __vasprintf_chk(char **out, int flag, const char *fmt, va_list ap);

static inline __attribute__((always_inline)) int
tw_wrapped(char **out, int flag, const char *fmt, va_list ap, void *ra,
           void *sp) {
  /* no fast path (no placement): nothing to key; nested (from a signal
   * handler): the outer call's key holds */
  if (!tw_fast_limit || tw_wrap.ra)
    return __vasprintf_chk(out, flag, fmt, ap);
  tw_wrap.sp = sp;
  tw_wrap.ra = ra;
  int r = __vasprintf_chk(out, flag, fmt, ap);
  tw_wrap.ra = NULL;
  return r;
}

TW_EXPORT int vasprintf(char **out, const char *fmt, va_list ap) {
  return tw_wrapped(out, 0, fmt, ap, TW_RA, TW_SP);
}

TW_EXPORT int asprintf(char **out, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = tw_wrapped(out, 0, fmt, ap, TW_RA, TW_SP);
  va_end(ap);
  return r;
}

TW_EXPORT int __asprintf_chk(char **out, int flag, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = tw_wrapped(out, flag, fmt, ap, TW_RA, TW_SP);
  va_end(ap);
  return r;
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

/* An alignment that is not a power of two, as glibc's memalign takes it:
 * up to malloc's (16) it is malloc's (0 here), else the next power of two
 * (at least 32); SIZE_MAX: none (EINVAL). Before, the runtime refused them
 * all with EINVAL, and a program that asked memalign for 24 or 0, which
 * glibc serves, got NULL under the runtime. */
static size_t tw_glibc_align(size_t a) {
  if (a <= 16)
    return 0;
  if (a > SIZE_MAX / 2 + 1)
    return SIZE_MAX;
  size_t p = 32;
  while (p < a)
    p <<= 1;
  return p;
}

/* glibc's aligned_alloc refuses such alignments (C11's rule) where it is
 * not memalign under another name (2.36's is): asked once, of glibc's own. */
static int tw_aligned_alloc_strict(void) {
  static int strict = -1;
  if (strict < 0) {
    void *(*ga)(size_t, size_t);
    *(void **)&ga = dlvsym(RTLD_NEXT, "aligned_alloc", "GLIBC_2.16");
    int saved = errno;
    errno = 0;
    void *p = ga ? ga(24, 48) : NULL;
    strict = !p && errno == EINVAL;
    if (p)
      __libc_free(p);
    errno = saved;
  }
  return strict;
}

/* aligned_alloc and memalign: the caller's key is taken by the exported
 * function and passed in (an inlined helper keeps it the user's). */
static inline __attribute__((always_inline)) void *
tw_aligned(size_t align, size_t size, int strict, void *ra, void *sp) {
  if (!tw_pow2(align) &&
      ((strict && tw_aligned_alloc_strict()) ||
       (align = tw_glibc_align(align)) == SIZE_MAX)) {
    errno = EINVAL;
    return NULL;
  }
  void *p = tw_alloc(size, align, 0, ra, sp);
  if (!p)
    errno = ENOMEM;
  return p;
}

TW_EXPORT void *aligned_alloc(size_t align, size_t size) {
  return tw_aligned(align, size, 1, TW_RA, TW_SP);
}

TW_EXPORT void *memalign(size_t align, size_t size) {
  return tw_aligned(align, size, 0, TW_RA, TW_SP);
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
