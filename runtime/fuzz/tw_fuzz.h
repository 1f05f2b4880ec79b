/* SPDX-License-Identifier: MIT */
/* Helpers shared by the libFuzzer targets of runtime/fuzz (tw_fuzz_env.c). */
#pragma once

#include <stddef.h>
#include <stdint.h>

extern unsigned long tw_fuzz_warnings;
/* Free what the parser allocated with tw_internal_alloc for one input. */
void tw_fuzz_reset(void);
/* A NUL-terminated malloc'd copy of the input. */
char *tw_fuzz_text(const uint8_t *data, size_t size);
/* Abort (a crash for libFuzzer) with a message when \p ok is false. */
#define TW_FUZZ_CHECK(ok, what)                                                \
  do {                                                                         \
    if (!(ok)) {                                                               \
      fprintf(stderr, "tw_fuzz: property violated: %s\n", what);               \
      abort();                                                                 \
    }                                                                          \
  } while (0)
