// SPDX-License-Identifier: MIT
// Layer 4 (entry points). libtierwise's C++ tier-tagged operator new/delete (tierwise.h): `new
// (tw::pmem) T[n]`; release with plain delete, whose free owns every tier.
#include "tierwise.h"

#include <cstdint>
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

TW_EXPORT void *operator new(std::size_t size, tw::head_tag head) {
  void *p = tw_malloc_head(head.tier, head.dram_bytes, size ? size : 1);
  if (!p)
    throw std::bad_alloc();
  return p;
}
TW_EXPORT void *operator new[](std::size_t size, tw::head_tag head) {
  return operator new(size, head);
}
TW_EXPORT void operator delete(void *ptr, tw::head_tag) noexcept {
  tw_free(ptr);
}
TW_EXPORT void operator delete[](void *ptr, tw::head_tag) noexcept {
  tw_free(ptr);
}

// Aligned: posix_memalign's rule (a power of two, at least a pointer), the
// size rounded up to the alignment as libstdc++'s aligned operator new does
// (so that a rewritten site counts the bytes it counts under `tierwise run`).
static void *tw_new_aligned(std::size_t size, std::align_val_t align,
                            tw::head_tag head) {
  std::size_t a = static_cast<std::size_t>(align);
  if (a < sizeof(void *))
    a = sizeof(void *);
  if (size > SIZE_MAX - a)
    throw std::bad_alloc();
  size = size ? (size + a - 1) & ~(a - 1) : a;
  void *p = nullptr;
  if (tw_posix_memalign_head(head.tier, head.dram_bytes, &p, a, size))
    throw std::bad_alloc();
  return p;
}
TW_EXPORT void *operator new(std::size_t size, std::align_val_t align,
                             tw::tier_tag tier) {
  return tw_new_aligned(size, align, tw::head_tag{tier.tier, 0});
}
TW_EXPORT void *operator new[](std::size_t size, std::align_val_t align,
                               tw::tier_tag tier) {
  return tw_new_aligned(size, align, tw::head_tag{tier.tier, 0});
}
TW_EXPORT void *operator new(std::size_t size, std::align_val_t align,
                             tw::head_tag head) {
  return tw_new_aligned(size, align, head);
}
TW_EXPORT void *operator new[](std::size_t size, std::align_val_t align,
                               tw::head_tag head) {
  return tw_new_aligned(size, align, head);
}
TW_EXPORT void operator delete(void *ptr, std::align_val_t,
                               tw::tier_tag) noexcept {
  tw_free(ptr);
}
TW_EXPORT void operator delete[](void *ptr, std::align_val_t,
                                 tw::tier_tag) noexcept {
  tw_free(ptr);
}
TW_EXPORT void operator delete(void *ptr, std::align_val_t,
                               tw::head_tag) noexcept {
  tw_free(ptr);
}
TW_EXPORT void operator delete[](void *ptr, std::align_val_t,
                                 tw::head_tag) noexcept {
  tw_free(ptr);
}
