// SPDX-License-Identifier: MIT
// fwlike/alloc.h: the allocator of a work-stealing framework (issue 35
// item 2), shaped as parlaylib's: every array is a std::vector whose
// allocator asks one process-wide pool; the pool cuts small requests from
// 64 KiB slabs and gives a big one a block of its own. The arrays of
// different tiers (a hot rank array, a cold edge array) all reach the pool
// through the standard library (std::vector -> allocator_traits ->
// allocator::allocate), where no parameter can pass a tier: `tierwise
// rewrite` gives the pool's allocate a tier parameter that allocator::
// allocate fills with the thread's tier scope (tw::scope_tier) and sets the
// scope at each placed vector's construction.
#pragma once

#include <cstddef>
#include <mutex>
#include <new>
#include <vector>

namespace fwlike {

class pool_allocator {
public:
  static constexpr std::size_t kSmallMax = 1 << 12, kSlab = 1 << 16;
  void *allocate(std::size_t bytes) {
    if (bytes > kSmallMax)
      return ::operator new(bytes, std::align_val_t(64)); // own block @poolbig
    std::size_t size = (bytes + 63) / 64 * 64;
    std::lock_guard<std::mutex> hold(lock_);
    if (!slab_ || used_ + size > kSlab) {
      slab_ = static_cast<char *>(::operator new(kSlab, std::align_val_t(64)));
      slabs_.push_back(slab_);
      used_ = 0;
    }
    void *p = slab_ + used_;
    used_ += size;
    return p;
  }
  // Small blocks go back with their slab, when the pool ends.
  void deallocate(void *p, std::size_t bytes) {
    if (bytes > kSmallMax)
      ::operator delete(p, std::align_val_t(64));
  }
  ~pool_allocator() {
    for (char *s : slabs_)
      ::operator delete(s, std::align_val_t(64));
  }

private:
  std::mutex lock_;
  char *slab_ = nullptr;
  std::size_t used_ = 0;
  std::vector<char *> slabs_;
};

inline pool_allocator &default_pool() {
  static pool_allocator pool;
  return pool;
}

// The standard allocator every sequence uses.
template <class T> struct allocator {
  using value_type = T;
  allocator() = default;
  template <class U> allocator(const allocator<U> &) {}
  T *allocate(std::size_t n) {
    return static_cast<T *>(default_pool().allocate(n * sizeof(T))); // @poolcall
  }
  void deallocate(T *p, std::size_t n) {
    default_pool().deallocate(p, n * sizeof(T));
  }
  template <class U> bool operator==(const allocator<U> &) const {
    return true;
  }
  template <class U> bool operator!=(const allocator<U> &) const {
    return false;
  }
};

template <class T> using sequence = std::vector<T, allocator<T>>;

} // namespace fwlike
