/* SPDX-License-Identifier: MIT */
/*
 * Layer 4 (entry points). libtierwise's public C API (runtime/include/tierwise.h): allocation from
 * a named tier. The blocks carry the runtime's header, so the interposed
 * free/realloc/malloc_usable_size of the same library handle every tier.
 */
#define _GNU_SOURCE
#include "tierwise.h"
#include "tw_paths.h"

#include <errno.h>

#define TW_EXPORT __attribute__((visibility("default")))

static int tw_ok_tier(tw_tier t) { return (int)t >= 0 && t < TW_TIER_COUNT; }
static int tw_pow2(size_t a) { return a && !(a & (a - 1)); }

/* tw_malloc and tw_malloc_head: from \p tier, the first \p dram_bytes from
 * DRAM (placement dram_bytes by API, 0: none): the object lies wholly in
 * DRAM, split (tw_split.c) or whole in \p tier, as tw_place.c decides for a
 * placed site's; \p zero: calloc. */
static void *tw_head(tw_tier tier, size_t dram_bytes, size_t size, int zero) {
  if (!tw_ok_tier(tier)) {
    errno = EINVAL;
    return NULL;
  }
  void *p = tw_alloc_tier((int)tier, dram_bytes, size, 0, zero);
  if (!p)
    errno = ENOMEM;
  return p;
}

TW_EXPORT void *tw_malloc(tw_tier tier, size_t size) {
  return tw_head(tier, 0, size, 0);
}

TW_EXPORT void *tw_malloc_head(tw_tier tier, size_t dram_bytes, size_t size) {
  return tw_head(tier, dram_bytes, size, 0);
}

TW_EXPORT void *tw_calloc_head(tw_tier tier, size_t dram_bytes, size_t nmemb,
                               size_t size) {
  size_t total;
  if (!tw_ok_tier(tier) || __builtin_mul_overflow(nmemb, size, &total)) {
    errno = tw_ok_tier(tier) ? ENOMEM : EINVAL;
    return NULL;
  }
  return tw_head(tier, dram_bytes, total, 1);
}

TW_EXPORT void *tw_calloc(tw_tier tier, size_t nmemb, size_t size) {
  return tw_calloc_head(tier, 0, nmemb, size);
}

TW_EXPORT void *tw_realloc_head(tw_tier tier, size_t dram_bytes, void *ptr,
                                size_t size) {
  if (!ptr)
    return tw_malloc_head(tier, dram_bytes, size);
  if (size == 0) {
    tw_core_free(ptr);
    return NULL;
  }
  size_t old = tw_usable(ptr);
  int from = tw_tier_of_ptr(ptr);
  void *q = tw_malloc_head(tier, dram_bytes, size);
  if (!q)
    return NULL;
  if (from < 0) /* not ours: cannot know its size; refuse to guess */
    return q;
  __builtin_memcpy(q, ptr, old < size ? old : size);
  tw_core_free(ptr);
  return q;
}

TW_EXPORT void *tw_memalign_head(tw_tier tier, size_t dram_bytes,
                                 size_t alignment, size_t size) {
  if (!tw_ok_tier(tier) || !tw_pow2(alignment)) {
    errno = EINVAL;
    return NULL;
  }
  void *p = tw_alloc_tier((int)tier, dram_bytes, size, alignment, 0);
  if (!p)
    errno = ENOMEM;
  return p;
}

TW_EXPORT void *tw_aligned_alloc_head(tw_tier tier, size_t dram_bytes,
                                      size_t alignment, size_t size) {
  return tw_memalign_head(tier, dram_bytes, alignment, size);
}

TW_EXPORT int tw_posix_memalign_head(tw_tier tier, size_t dram_bytes,
                                     void **memptr, size_t alignment,
                                     size_t size) {
  if (!tw_ok_tier(tier) || !tw_pow2(alignment) || alignment % sizeof(void *))
    return EINVAL;
  void *p = tw_alloc_tier((int)tier, dram_bytes, size, alignment, 0);
  if (!p)
    return ENOMEM;
  *memptr = p;
  return 0;
}

TW_EXPORT void *tw_realloc(tw_tier tier, void *ptr, size_t size) {
  return tw_realloc_head(tier, 0, ptr, size);
}

TW_EXPORT void *tw_memalign(tw_tier tier, size_t alignment, size_t size) {
  return tw_memalign_head(tier, 0, alignment, size);
}

TW_EXPORT void *tw_aligned_alloc(tw_tier tier, size_t alignment, size_t size) {
  return tw_memalign_head(tier, 0, alignment, size);
}

TW_EXPORT int tw_posix_memalign(tw_tier tier, void **memptr, size_t alignment,
                                size_t size) {
  return tw_posix_memalign_head(tier, 0, memptr, alignment, size);
}

TW_EXPORT void tw_free(void *ptr) { tw_core_free(ptr); }

TW_EXPORT int tw_tier_of(const void *ptr) { return tw_tier_of_ptr(ptr); }

TW_EXPORT int tw_tier_from_name(const char *name) {
  int t = tw_tier_parse(name);
  return t < 0 ? TW_EINVAL : t;
}

TW_EXPORT const char *tw_tier_name(int tier) { return tw_tier_str(tier); }
