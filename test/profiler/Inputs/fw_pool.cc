/* SPDX-License-Identifier: MIT */
/* A framework's own pool allocator, C++ and templated (issue 22 item 2):
 * ns::pool_allocator<double> takes 2 MiB blocks from malloc once and hands
 * them out whole, one array after another (a free list of blocks). One
 * block goes to a hot array (1 MiB read 16 times), is given back, then to a
 * cold one (1 MiB written once); a plain malloc'ed array `mid` (2 MiB read
 * 4 times) competes for DRAM. malloc (and so `tierwise run`) sees the
 * block, not the arrays: a placement must put the block in DRAM, as the
 * hot array's home, not the hand-outs it cannot place. allocate() is out of
 * line (-O1) except in warm_up(), which GCC flattens (an inlined copy).
 * Prints a checksum. */
#include <cstdio>
#include <cstdlib>

namespace ns {

template <class T> struct pool_allocator {
  static constexpr std::size_t block_bytes = (2u << 20) + 4096;
  void *free_list = nullptr;
  std::size_t blocks = 0;
  T *allocate(std::size_t n);
  void deallocate(T *p, std::size_t n);
};

template <class T> T *pool_allocator<T>::allocate(std::size_t n) {
  if (n * sizeof(T) > block_bytes)
    return nullptr;
  void *b = free_list;
  if (b) {
    free_list = *static_cast<void **>(b);
    return static_cast<T *>(b);
  }
  blocks++;
  return static_cast<T *>(std::malloc(block_bytes));
}

template <class T> void pool_allocator<T>::deallocate(T *p, std::size_t) {
  *reinterpret_cast<void **>(p) = free_list;
  free_list = p;
}

} // namespace ns

static ns::pool_allocator<double> pool;

/* Each pass reads every element; returns their sum. */
__attribute__((noinline)) static double passes(const double *a, std::size_t n,
                                                int k) {
  double s = 0;
  for (int r = 0; r < k; r++)
    for (std::size_t i = 0; i < n; i++)
      s += a[i];
  return s;
}

__attribute__((noinline)) static void fill(double *a, std::size_t n, double v) {
  for (std::size_t i = 0; i < n; i++)
    a[i] = v + (double)(i & 7);
}

__attribute__((flatten, noinline)) static double warm_up() {
  double *w = pool.allocate(16); /* inlined: a hand-out the tool cannot see */
  w[1] = 1;
  double s = w[1];
  pool.deallocate(w, 16);
  return s;
}

int main() {
  const std::size_t n = (1u << 20) / sizeof(double);
  double sum = warm_up();
  double *mid = static_cast<double *>(std::malloc(2 * n * sizeof(double)));
  fill(mid, 2 * n, 2);
  double *hot = pool.allocate(n);
  fill(hot, n, 1);
  sum += passes(hot, n, 16);
  sum += passes(mid, 2 * n, 4);
  pool.deallocate(hot, n);
  double *cold = pool.allocate(n);
  fill(cold, n, 3);
  sum += cold[n - 1];
  pool.deallocate(cold, n);
  std::printf("same block: %s, blocks %zu, checksum: %.0f\n",
              hot == cold ? "yes" : "no", pool.blocks, sum);
  std::free(mid);
  return 0;
}
