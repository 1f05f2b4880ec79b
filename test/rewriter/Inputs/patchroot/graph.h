// SPDX-License-Identifier: MIT
// A framework header that apps/ reaches through a linked directory
// (apps/hdr -> ../include), as patch-apply.test sets it up.
#pragma once
#include <cstddef>
#include <cstdlib>

inline double *make_ranks(std::size_t n) {
  return static_cast<double *>(std::malloc(n * sizeof(double))); // @hdr
}
