// SPDX-License-Identifier: MIT
// Layer 4 (entry points). libtierwise's C++ tier-tagged operator new/delete (tierwise.h): `new
// (tw::pmem) T[n]`; release with plain delete, whose free owns every tier.
#include "tierwise.h"

#include <new>

#define TW_EXPORT __attribute__((visibility("default")))

TW_EXPORT void *operator new(std::size_t size, tw::tier_tag tier) {
  void *p = tw_malloc(tier.tier, size ? size : 1);
  if (!p)
    throw std::bad_alloc();
  return p;
}

TW_EXPORT void *operator new[](std::size_t size, tw::tier_tag tier) {
  return operator new(size, tier);
}

TW_EXPORT void operator delete(void *ptr, tw::tier_tag) noexcept {
  tw_free(ptr);
}
TW_EXPORT void operator delete[](void *ptr, tw::tier_tag) noexcept {
  tw_free(ptr);
}
