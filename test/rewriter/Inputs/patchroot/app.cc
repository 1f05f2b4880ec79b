// SPDX-License-Identifier: MIT
// patch-apply.test: an app of the project, compiled from apps/.
#include "hdr/graph.h"
#include <cstdio>

int main() {
  std::size_t n = 1 << 16;
  double *r = make_ranks(n); // @call
  long *deg = static_cast<long *>(std::malloc(n * sizeof(long))); // @deg
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) {
    r[i] = 1.0 / (i + 1);
    deg[i] = (long)(i % 7);
    s += r[i] * deg[i];
  }
  std::printf("sum %.6f\n", s);
  std::free(r);
  std::free(deg);
  return 0;
}
