/* SPDX-License-Identifier: MIT */
/*
 * The size grammar (tw_size.h, advisor/FORMATS.md "Sizes"): exact integer
 * arithmetic, the same as advisor/tierwise/sizes.py.
 */
#include "tw_size.h"

#define TW_SIZE_MAX_DECIMALS 18

static int tw_lower(char c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }
static int tw_digit(char c) { return c >= '0' && c <= '9'; }

int tw_parse_size(const char *s, uint64_t *out) {
  unsigned __int128 whole = 0, frac = 0, scale = 1, mult = 1;
  if (!tw_digit(*s))
    return -1;
  for (; tw_digit(*s); s++) {
    whole = whole * 10 + (unsigned)(*s - '0');
    if (whole > UINT64_MAX)
      return -1;
  }
  if (*s == '.') {
    if (!tw_digit(*++s))
      return -1;
    for (int n = 0; tw_digit(*s); s++, n++) {
      if (n == TW_SIZE_MAX_DECIMALS)
        return -1;
      frac = frac * 10 + (unsigned)(*s - '0');
      scale *= 10;
    }
  }
  const char *unit = s;
  while (*unit == ' ')
    unit++;
  if (*unit) { /* spaces only before a unit */
    const char *prefixes = "kmgt";
    int i = 0;
    while (prefixes[i] && prefixes[i] != tw_lower(*unit))
      i++;
    if (prefixes[i]) {
      mult = (unsigned __int128)1 << (10 * (i + 1));
      unit++;
      if (tw_lower(*unit) == 'i' && tw_lower(unit[1]) == 'b')
        unit += 2;
      else if (tw_lower(*unit) == 'b')
        unit++;
    } else if (tw_lower(*unit) == 'b')
      unit++;
    else
      return -1;
    if (*unit)
      return -1;
  } else if (unit != s)
    return -1; /* trailing spaces */
  /* whole < 2^64, mult <= 2^40: no overflow; if whole * mult fits in 64
   * bits, (whole * scale + frac) * mult < 2^125 */
  if (whole * mult > UINT64_MAX)
    return -1;
  unsigned __int128 v = (whole * scale + frac) * mult / scale;
  if (v > UINT64_MAX)
    return -1;
  *out = (uint64_t)v;
  return 0;
}
