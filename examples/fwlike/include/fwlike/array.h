// SPDX-License-Identifier: MIT
// fwlike's container wrapper: a fixed-size array that owns its storage, as
// header-only graph frameworks write one (Ligra/GBBS's sequence, Galois's
// LargeArray). Every array a kernel declares is allocated on the one
// `new T[n]` line of the constructor, so all of them share that frame: the
// case tierwise's site locations must see through (issue 14 item 1).
#pragma once

#include <cstddef>
#include <utility>

namespace fwlike {

template <class T> class Array {
public:
  // Allocates n elements and first-touches them in parallel (each thread
  // zeroes the part it will later work on), as NUMA-aware frameworks do.
  explicit Array(size_t n) : data_(new T[n]), size_(n) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
      data_[i] = T();
  }
  ~Array() { delete[] data_; }
  Array(const Array &) = delete;
  Array &operator=(const Array &) = delete;
  Array(Array &&o) noexcept : data_(o.data_), size_(o.size_) {
    o.data_ = nullptr;
    o.size_ = 0;
  }

  T &operator[](size_t i) { return data_[i]; }
  const T &operator[](size_t i) const { return data_[i]; }
  T *data() { return data_; }
  const T *data() const { return data_; }
  size_t size() const { return size_; }

private:
  T *data_;
  size_t size_;
};

} // namespace fwlike
