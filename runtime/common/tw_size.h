/* SPDX-License-Identifier: MIT */
/*
 * The size grammar of tierwise (advisor/FORMATS.md "Sizes"), in C: the
 * runtime's TIERWISE_* variables. The one Python implementation is
 * advisor/tierwise/sizes.py; both are checked against the same vectors
 * (test/runtime/Inputs/size-vectors.txt, test/runtime/sizes.test).
 */
#pragma once

#include <stdint.h>

/* Parse \p s: DIGITS[.DIGITS] [spaces] [K|M|G|T [B|iB] | B], letters in any
 * case, every prefix a power of 1024 (KB = KiB = K); the value is rounded
 * down to a whole byte. 0 and *out set, or -1 (not a size, more than 18
 * decimals, or 2^64 or more). No libc: the Valgrind tool may use it too. */
int tw_parse_size(const char *s, uint64_t *out);
