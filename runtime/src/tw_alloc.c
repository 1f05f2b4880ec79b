/* SPDX-License-Identifier: MIT */
/*
 * Layer 3 (allocation paths): the dispatch of the interposed malloc family
 * and the public API to the census path (tw_hdr.c, blocks with a header) or
 * the placement/pass-through path (tw_place.c, no header).
 */
#define _GNU_SOURCE
#include "tw_paths.h"

#include <errno.h>
#include <stddef.h>

static inline int tw_size_ok(size_t size) {
  if (TW_LIKELY(size <= PTRDIFF_MAX - 4096))
    return 1;
  errno = ENOMEM; /* fails as in glibc, in every mode */
  return 0;
}

void *tw_alloc(size_t size, size_t align, int zero, void *ra, void *sp) {
  if (TW_UNLIKELY(!tw_config_ready()))
    tw_config_read();
  if (TW_UNLIKELY(!tw_size_ok(size)))
    return NULL;
  if (TW_UNLIKELY(tw_foreign))
    return tw_fa_alloc(size, align, zero);
  if (TW_LIKELY(!tw_hdr_mode))
    return tw_pl_alloc(size, align, zero, ra, sp);
  return tw_hb_alloc(size, align, zero);
}

void *tw_alloc_tier(int tier, uint64_t dram_bytes, size_t size, size_t align,
                    int zero) {
  if (TW_UNLIKELY(!tw_config_ready()))
    tw_config_read();
  if (!tw_size_ok(size))
    return NULL;
  if (tw_foreign)
    return tw_fa_alloc(size, align, zero);
  if (!tw_hdr_mode)
    return tw_pl_alloc_tier(tier, dram_bytes, size, align, zero);
  /* census blocks have a header and are never split: a head only decides
   * that an object within it is DRAM's */
  return tw_hb_alloc_tier(dram_bytes && size <= dram_bytes ? TW_TIER_DRAM
                                                           : tier,
                          size, align, zero);
}

void tw_core_free(void *p) {
  if (!p)
    return;
  if (TW_UNLIKELY(!tw_config_ready())) /* (tw_free_slow until then) */
    tw_config_read();
  if (TW_UNLIKELY(tw_foreign)) {
    tw_fa_free(p);
    return;
  }
  /* (the room's frees: a glibc block below its smallest object, at once) */
  size_t big = __atomic_load_n(&tw_free_big, __ATOMIC_ACQUIRE);
  if (big && tw_page_owner(p) == TW_OWNER_GLIBC && tw_glibc_chunk(p) < big) {
    __libc_free(p);
    return;
  }
  if (TW_LIKELY(!tw_hdr_mode))
    tw_pl_free(p);
  else
    tw_hb_free(p);
}

size_t tw_usable(void *p) {
  if (!p)
    return 0;
  if (TW_UNLIKELY(tw_foreign))
    return tw_fa_usable(p);
  return tw_hdr_mode ? tw_hb_usable(p) : tw_pl_usable(p);
}

int tw_tier_of_ptr(const void *p) {
  if (!p)
    return -1;
  return tw_hdr_mode ? tw_hb_tier_of(p) : tw_pl_tier_of(p);
}

void *tw_core_realloc(void *p, size_t size, void *ra, void *sp) {
  if (TW_UNLIKELY(!tw_config_ready()))
    tw_config_read();
  if (TW_UNLIKELY(tw_foreign))
    return tw_fa_realloc(p, size);
  if (!p)
    return size < tw_fast_limit ? tw_pl_alloc_miss(size, 0, ra, sp)
                                : tw_alloc(size, 0, 0, ra, sp);
  if (size == 0) {
    tw_core_free(p);
    return NULL;
  }
  if (!tw_size_ok(size))
    return NULL;
  return tw_hdr_mode ? tw_hb_realloc(p, size) : tw_pl_realloc(p, size, ra, sp);
}
