/* SPDX-License-Identifier: MIT */
/* Test program: one AVX-512 instruction, as a -march=native build on an
 * AVX-512 host has. Valgrind 3.19 rejects it when decoding, whether or not
 * the host has AVX-512; natively it needs an AVX-512 CPU (tests run it under
 * the sim backend only). */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  double *a = malloc(64 * sizeof(double));
  for (int i = 0; i < 64; i++)
    a[i] = i;
  __asm__ volatile("vmovupd (%0), %%zmm1\n\tvmovupd %%zmm1, (%0)"
                   :
                   : "r"(a)
                   : "xmm1", "memory");
  printf("checksum: %x\n", (unsigned)a[63]);
  free(a);
  return 0;
}
