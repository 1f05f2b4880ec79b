// SPDX-License-Identifier: MIT
// The program test/install/check-install.sh builds against an installed
// tierwise (pkg-config --cflags --libs tierwise) and takes through profile,
// advise, run and rewrite: three arrays from three sites, one swept often
// (hot), one written once and read once (cold), one read at random (warm);
// prints a checksum that does not depend on where the arrays are (with
// write(2): printf's buffer would be a fourth site, libc's own, which a
// source patch cannot place).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <tierwise.h>
#include <unistd.h>

#define N (256 * 1024) // 2 MiB of uint64_t per array

static uint64_t *make_hot(void) { return malloc(N * sizeof(uint64_t)); }
static uint64_t *make_cold(void) { return calloc(N, sizeof(uint64_t)); }
static uint64_t *make_warm(void) { return malloc(N * sizeof(uint64_t)); }

int main(void) {
  uint64_t *hot = make_hot(), *cold = make_cold(), *warm = make_warm();
  if (!hot || !cold || !warm)
    return 1;
  for (uint64_t i = 0; i < N; i++) {
    hot[i] = i * 0x9e3779b97f4a7c15ull;
    warm[i] = i ^ (i >> 3);
    cold[i] = i;
  }
  uint64_t sum = 0, x = 1;
  TIERWISE_ROI_BEGIN();
  for (int pass = 0; pass < 4; pass++)
    for (uint64_t i = 0; i < N; i += 2) {
      hot[i] += hot[(i * 7919) % N] ^ sum;
      sum += hot[i];
    }
  for (uint64_t i = 0; i < N / 4; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    sum += warm[(x >> 33) % N];
  }
  for (uint64_t i = 0; i < N; i += 64)
    sum += cold[i];
  TIERWISE_ROI_END();
  char line[64];
  int n = snprintf(line, sizeof line, "checksum: %016llx\n",
                   (unsigned long long)sum);
  if (write(1, line, (size_t)n) != n)
    return 1;
  free(hot);
  free(cold);
  free(warm);
  return 0;
}
