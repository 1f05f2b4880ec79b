/* SPDX-License-Identifier: MIT */
/* Containers shaped like a framework's (fw_locations.cc): a segment buffer
 * whose constructor allocates, and a vector whose filling constructor
 * delegates to its sizing one, `vec(n, init) : vec(n)`, and a hash table
 * whose instance has a long name. */
#pragma once
#include <cstddef>
#include <cstdlib>

namespace fw {

template <class T> struct buffer {
  T *p;
  std::size_t n;
  explicit buffer(std::size_t n)
      : p(static_cast<T *>(std::malloc(n * sizeof(T)))), n(n) {}
  ~buffer() { std::free(p); }
  buffer(const buffer &) = delete;
};

template <class T> struct vec {
  T *p;
  std::size_t n;
  explicit vec(std::size_t n)
      : p(static_cast<T *>(std::malloc(n * sizeof(T)))), n(n) {}
  vec(std::size_t n, T init) : vec(n) {
    for (std::size_t i = 0; i < n; i++)
      p[i] = init;
  }
  ~vec() { std::free(p); }
  vec(const vec &) = delete;
};

namespace detail {
/* A long instance name: tables cut it inside its template arguments. */
template <class K, class V> struct hash_table {
  double *slots = nullptr;
  __attribute__((noinline)) void rehash(std::size_t n) {
    std::free(slots);
    slots = static_cast<double *>(std::malloc(n * sizeof(double)));
    for (std::size_t i = 0; i < n; i++)
      slots[i] = (double)i;
  }
};
} // namespace detail

} // namespace fw
