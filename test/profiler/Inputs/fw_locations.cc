/* SPDX-License-Identifier: MIT */
/* Allocation sites whose stacks differ only in an outer frame, as in the
 * frameworks of issue 22 item 4 (built -O2: the containers inline):
 * - a matrix tile and its transpose, each a buffer<float> made in load(),
 *   loaded from two places (four sites; every inner frame is shared by two);
 * - a kernel run twice by a timing macro on one source line (warm-up and
 *   timed call: two sites alike down to the line);
 * - vec(n, init) delegating to vec(n), next to a plain vec(n);
 * - a hash table instance with a long name.
 * Prints a checksum so the run is checked whole. */
#include <cstdio>

#include "fw_containers.h"

#define TIMED(call)                                                            \
  do {                                                                         \
    call; /* warm-up */                                                        \
    call;                                                                      \
  } while (0)

struct Tiles {
  fw::buffer<float> a;
  fw::buffer<float> at;
  explicit Tiles(std::size_t n) : a(n), at(n) {}
};

__attribute__((noinline)) static double load(std::size_t n, float s) {
  Tiles t(n);
  for (std::size_t i = 0; i < n; i++)
    t.a.p[i] = t.at.p[n - 1 - i] = s * (float)i;
  double sum = 0;
  for (std::size_t i = 0; i < n; i++)
    sum += t.a.p[i] - t.at.p[i];
  return sum;
}

__attribute__((noinline)) static double kernel(std::size_t n) {
  fw::buffer<double> work(n);
  asm volatile("" : : "r"(work.p) : "memory"); /* kept: not elided */
  double s = 0;
  for (std::size_t i = 0; i < n; i++)
    s += (work.p[i] = (double)i);
  return s;
}

static double total;

int main() {
  total += load(1 << 14, 1.0f); /* the input matrix */
  total += load(1 << 15, 2.0f); /* the transposed input */
  TIMED(total += kernel(1 << 16));
  fw::vec<double> x(1 << 13, 1.0);
  fw::vec<double> y(1 << 12);
  for (std::size_t i = 0; i < y.n; i++)
    y.p[i] = x.p[i];
  total += y.p[7];
  fw::detail::hash_table<fw::buffer<float>, fw::vec<double>> table;
  table.rehash(1 << 10);
  total += table.slots[3];
  std::free(table.slots);
  std::printf("checksum: %.0f\n", total);
  return 0;
}
