/* SPDX-License-Identifier: MIT */
/**
 * \file tierwise.h
 * \brief Public API of libtierwise: allocate from a named memory tier.
 *
 * This is what `tierwise rewrite` turns placed allocation sites into. A
 * program linked with `tierwise config --libs` also gets libtierwise's
 * malloc/free family, so every pointer, from any tier, can be released with
 * plain free(), realloc()'d, passed to malloc_usable_size() and deleted with
 * delete/delete[]: frees never need rewriting.
 *
 * Tiers other than TW_TIER_DRAM are configured by the same environment as the
 * LD_PRELOAD runtime (TIERWISE_PMEM_DIR, TIERWISE_DRAM_LIMIT, ...; see
 * advisor/FORMATS.md). An allocation from a tier that is unavailable falls
 * back to another tier and is counted as a fallback in the run report; it
 * fails only where malloc() would have failed.
 */
#pragma once

#include <stddef.h>

/**
 * \brief Region of interest for `tierwise profile --roi markers`: the sim
 * and sample profilers count accesses only between TIERWISE_ROI_BEGIN() and
 * TIERWISE_ROI_END() (they nest), e.g. around a kernel, leaving out graph
 * loading. Header-only, no link dependency: a Valgrind client request (a
 * few instructions that do nothing outside Valgrind; left out where
 * <valgrind/valgrind.h> is not installed) and a call of tierwise_roi()
 * where a library defines it (the sample profiler's, preloaded: a weak
 * reference, a test of one address otherwise).
 */
#ifdef __cplusplus
extern "C" {
#endif
/** \brief 1: the region begins, 0: it ends. Defined by the sample
 * profiler (libtierwise-pmu.so); call it through the macros. */
void tierwise_roi(int begin) __attribute__((weak));
#ifdef __cplusplus
}
#endif
#define TIERWISE_ROI_CALL_(b)                                                  \
  do {                                                                         \
    if (tierwise_roi)                                                          \
      tierwise_roi(b);                                                         \
  } while (0)
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
/* TW_CLREQ_CODE_ROI_BEGIN/END of the runtime's tw_clientreq.h */
#define TIERWISE_ROI_BEGIN()                                                   \
  do {                                                                         \
    VALGRIND_DO_CLIENT_REQUEST_STMT(VG_USERREQ_TOOL_BASE('T', 'W') + 2, 0, 0,  \
                                    0, 0, 0);                                  \
    TIERWISE_ROI_CALL_(1);                                                     \
  } while (0)
#define TIERWISE_ROI_END()                                                     \
  do {                                                                         \
    VALGRIND_DO_CLIENT_REQUEST_STMT(VG_USERREQ_TOOL_BASE('T', 'W') + 3, 0, 0,  \
                                    0, 0, 0);                                  \
    TIERWISE_ROI_CALL_(0);                                                     \
  } while (0)
#endif
#endif
#ifndef TIERWISE_ROI_BEGIN
#define TIERWISE_ROI_BEGIN() TIERWISE_ROI_CALL_(1)
#define TIERWISE_ROI_END() TIERWISE_ROI_CALL_(0)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * \brief The memory tiers libtierwise can allocate from (the runtime's own
 * tier numbers too: placement.json's tier names map to these).
 */
typedef enum tw_tier {
  TW_TIER_DRAM = 0, /**< the default kind: local DRAM */
  TW_TIER_PMEM = 1, /**< file-backed slow tier (fsdax mount, or a directory) */
  TW_TIER_KMEM = 2, /**< memory-only NUMA node(s) (PMem in KMEM-DAX mode, CXL):
                         memkind's KMEM-DAX kind where it finds one, else the
                         nodes with memory and no CPUs of this machine */
  TW_TIER_HBW = 3,  /**< high-bandwidth memory (MCDRAM, HBM) */
  TW_TIER_NUMA0 = 4, /**< "numa:N" is TW_TIER_NUMA(N): pages on NUMA node N */
  TW_TIER_COUNT = TW_TIER_NUMA0 + 16 /**< numa:0 .. numa:15 */
} tw_tier;

/** \brief The tier "numa:N" (0 <= N < 16). */
#define TW_TIER_NUMA(n) ((tw_tier)(TW_TIER_NUMA0 + (n)))

/** \brief Error codes (negative) returned by the int-valued functions. */
enum tw_error {
  TW_OK = 0,
  TW_EINVAL = -1, /**< unknown tier or bad alignment */
  TW_ENOMEM = -2, /**< no tier could serve the request */
};

/**
 * \brief Allocate \p size bytes from \p tier.
 * \return the block, or NULL with errno ENOMEM where malloc() would fail.
 */
void *tw_malloc(tw_tier tier, size_t size);
/** \brief calloc() from \p tier. */
void *tw_calloc(tw_tier tier, size_t nmemb, size_t size);
/**
 * \brief Allocate \p size bytes whose first \p dram_bytes lie in DRAM and
 * the rest in \p tier: placement.json's `dram_bytes` for one call (what
 * `tierwise rewrite` turns a site with a DRAM head into).
 *
 * An object of at most \p dram_bytes bytes comes wholly from DRAM. A larger
 * one is split when \p tier is TW_TIER_PMEM: one mapping whose first
 * \p dram_bytes, rounded down to a page, are anonymous memory and the rest
 * the pmem directory's file. Where it cannot be split (another tier, an
 * alignment or a DRAM limit that leaves no room, no pmem directory) the
 * whole object comes from \p tier as tw_malloc() would. \p dram_bytes 0 is
 * tw_malloc(). Release, resize or measure it with free(), realloc() (a split
 * block stays split, with the same head and tier) and malloc_usable_size().
 * \return the block, or NULL with errno ENOMEM where malloc() would fail.
 */
void *tw_malloc_head(tw_tier tier, size_t dram_bytes, size_t size);
/**
 * \brief calloc() with a DRAM head: tw_malloc_head() of \p nmemb * \p size
 * zeroed bytes (NULL with errno ENOMEM when the product overflows).
 */
void *tw_calloc_head(tw_tier tier, size_t dram_bytes, size_t nmemb,
                     size_t size);
/**
 * \brief Resize \p ptr (from any tier, or NULL) into \p tier.
 * The block moves to \p tier if it lives elsewhere.
 */
void *tw_realloc(tw_tier tier, void *ptr, size_t size);
/** \brief aligned_alloc() from \p tier. */
void *tw_aligned_alloc(tw_tier tier, size_t alignment, size_t size);
/** \brief memalign() from \p tier. */
void *tw_memalign(tw_tier tier, size_t alignment, size_t size);
/**
 * \brief posix_memalign() from \p tier.
 * \return 0, EINVAL or ENOMEM exactly as posix_memalign().
 */
int tw_posix_memalign(tw_tier tier, void **memptr, size_t alignment,
                      size_t size);
/**
 * \brief The DRAM-head forms of tw_realloc(), tw_aligned_alloc(),
 * tw_memalign() and tw_posix_memalign(): the block gets \p dram_bytes of
 * DRAM head as tw_malloc_head() gives one (what a placement's dram_bytes
 * does to the same call under `tierwise run`; an alignment the split cannot
 * keep leaves the whole object in \p tier, as there). tw_realloc_head()
 * moves the contents into a new block with the head.
 */
void *tw_realloc_head(tw_tier tier, size_t dram_bytes, void *ptr, size_t size);
void *tw_aligned_alloc_head(tw_tier tier, size_t dram_bytes, size_t alignment,
                            size_t size);
void *tw_memalign_head(tw_tier tier, size_t dram_bytes, size_t alignment,
                       size_t size);
int tw_posix_memalign_head(tw_tier tier, size_t dram_bytes, void **memptr,
                           size_t alignment, size_t size);
/**
 * \brief A placement as one value: a tier and a DRAM head (placement.json's
 * `tier` and `dram_bytes`). What `tierwise rewrite` gives a wrapper that
 * sites with DRAM heads share, in place of a tw_tier parameter: its
 * allocation becomes the head form, `tw_malloc_head(place.tier,
 * place.dram_bytes, n)` or `new (tw::head_tag{place.tier, place.dram_bytes})
 * T[n]`, and a call path the placement does not name passes
 * TW_PLACE(TW_TIER_DRAM, 0) (dram_bytes 0: the whole object in the tier).
 */
typedef struct tw_place {
  tw_tier tier;
  size_t dram_bytes;
} tw_place;
/** \brief A tw_place value (C99 compound literal, C++ braced init). */
#ifdef __cplusplus
#define TW_PLACE(tier, dram_bytes) (tw_place{(tier), (size_t)(dram_bytes)})
#else
#define TW_PLACE(tier, dram_bytes) ((tw_place){(tier), (size_t)(dram_bytes)})
#endif
/** \brief The default placement: all of the object in DRAM. */
#define TW_PLACE_DRAM TW_PLACE(TW_TIER_DRAM, 0)
/** \brief Release a block from any tier (same as free()). */
void tw_free(void *ptr);
/** \brief The tier that owns \p ptr, or -1 if libtierwise does not own it. */
int tw_tier_of(const void *ptr);
/**
 * \brief Parse a tier name ("dram", "pmem", "kmem", "hbw", "numa:N").
 * \return the tier, or TW_EINVAL for an unknown name.
 */
int tw_tier_from_name(const char *name);
/** \brief The name of \p tier ("dram", ..., "numa:1"), or NULL if out of
 * range. */
const char *tw_tier_name(int tier);

#ifdef __cplusplus
} /* extern "C" */

#include <new>

namespace tw {
/** \brief Tag for placement new: `new (tw::pmem) T[n]`. */
struct tier_tag {
  tw_tier tier;
};
/* C++17 inline variables are one object in the whole program; before C++17
 * a namespace-scope constexpr has internal linkage (one copy per translation
 * unit, equal values), which placement new only passes by value. */
#if __cplusplus >= 201703L
#define TW_TAG_LINKAGE_ inline
#else
#define TW_TAG_LINKAGE_
#endif
TW_TAG_LINKAGE_ constexpr tier_tag dram{TW_TIER_DRAM};
TW_TAG_LINKAGE_ constexpr tier_tag pmem{TW_TIER_PMEM};
TW_TAG_LINKAGE_ constexpr tier_tag kmem{TW_TIER_KMEM};
TW_TAG_LINKAGE_ constexpr tier_tag hbw{TW_TIER_HBW};
#undef TW_TAG_LINKAGE_
} // namespace tw

namespace tw {
/** \brief Tag for placement new with a DRAM head:
 * `new (tw::head_tag{TW_TIER_PMEM, N}) T[n]`, the block's first N bytes in
 * DRAM as tw_malloc_head() gives them (placement dram_bytes). */
struct head_tag {
  tw_tier tier;
  std::size_t dram_bytes;
};
} // namespace tw

namespace tw {
/* The tier of the innermost live tier_scope on this thread, -1: none. One
 * object in the program (an inline function's static). */
inline int &scope_slot_() noexcept {
  static thread_local int tier = -1;
  return tier;
}
/** \brief The tier the innermost live tw::tier_scope of this thread sets, or
 * \p otherwise when there is none. `tierwise rewrite` passes it to a pool's
 * allocate that the placed call paths reach through library code (a
 * std::vector calling its allocator), where no parameter can carry a tier:
 * `pool().allocate(n * sizeof(T), tw::scope_tier(TW_TIER_DRAM))`. */
inline tw_tier scope_tier(tw_tier otherwise) noexcept {
  return scope_slot_() < 0 ? otherwise : static_cast<tw_tier>(scope_slot_());
}
/** \brief Sets the tier scope_tier() gives on this thread while it lives.
 * `tierwise rewrite` makes one a temporary in the first argument of a placed
 * call, `cold((tw::tier_scope(TW_TIER_PMEM), n))`, so it lasts for exactly
 * that call (to the end of the full expression). */
class tier_scope {
public:
  explicit tier_scope(tw_tier tier) noexcept : saved_(scope_slot_()) {
    scope_slot_() = static_cast<int>(tier);
  }
  ~tier_scope() { scope_slot_() = saved_; }
  tier_scope(const tier_scope &) = delete;
  tier_scope &operator=(const tier_scope &) = delete;

private:
  int saved_;
};
} // namespace tw

/* Release with plain delete / delete[]: libtierwise's free owns every tier. */
void *operator new(std::size_t size, tw::tier_tag tier);
void *operator new[](std::size_t size, tw::tier_tag tier);
void operator delete(void *ptr, tw::tier_tag tier) noexcept;
void operator delete[](void *ptr, tw::tier_tag tier) noexcept;
void *operator new(std::size_t size, tw::head_tag head);
void *operator new[](std::size_t size, tw::head_tag head);
void operator delete(void *ptr, tw::head_tag head) noexcept;
void operator delete[](void *ptr, tw::head_tag head) noexcept;
#ifdef __cpp_aligned_new
/* Over-aligned types (`new (tw::pmem) T` with alignas(64) T) and explicit
 * `::operator new(n, std::align_val_t(a), tw::pmem)` calls. */
void *operator new(std::size_t size, std::align_val_t align,
                   tw::tier_tag tier);
void *operator new[](std::size_t size, std::align_val_t align,
                     tw::tier_tag tier);
void *operator new(std::size_t size, std::align_val_t align,
                   tw::head_tag head);
void *operator new[](std::size_t size, std::align_val_t align,
                     tw::head_tag head);
void operator delete(void *ptr, std::align_val_t align,
                     tw::tier_tag tier) noexcept;
void operator delete[](void *ptr, std::align_val_t align,
                       tw::tier_tag tier) noexcept;
void operator delete(void *ptr, std::align_val_t align,
                     tw::head_tag head) noexcept;
void operator delete[](void *ptr, std::align_val_t align,
                       tw::head_tag head) noexcept;
#endif
#endif
