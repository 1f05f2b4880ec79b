/* SPDX-License-Identifier: MIT */
/*
 * Site keys: the pure, libc-free pieces of site identity (advisor/FORMATS.md
 * "Site identity") shared by the LD_PRELOAD runtime and the Valgrind tool,
 * which has no libc. Frame formatting into a caller buffer, the allocator
 * module rule, and hashing. Nothing here allocates or calls libc.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Default number of user frames kept per site (TIERWISE_DEPTH). */
#define TW_DEFAULT_DEPTH 6
/** Largest depth any part of tierwise accepts. */
#define TW_MAX_DEPTH 64

/** One resolved frame: module basename (NULL: outside any file mapping),
 * and the ELF address of the call, (return_address - 1) - load_bias, or the
 * absolute address for anonymous frames. */
typedef struct tw_frame {
  const char *module;
  uintptr_t offset;
} tw_frame;

/** 1 if \p basename is an allocator module whose leading frames are removed
 * (libtierwise*.so, vgpreload_*.so, libmemkind.so*, libc.so*,
 * libstdc++.so*, libgcc_s.so*, ld-linux*.so*, libjemalloc*), else 0. */
int tw_module_is_allocator(const char *basename);

/** The basename of \p path (the part after the last '/'). */
const char *tw_basename(const char *path);

/** Write one frame `MODULE+0xOFFSET` (or `[anon]+0xADDR`) into \p buf.
 * \return characters written, excluding the terminating NUL that is always
 * written when \p cap > 0; output is truncated to cap - 1. */
size_t tw_frame_format(char *buf, size_t cap, const tw_frame *frame);

/** Build the site stack string from \p n frames, innermost first: leading
 * allocator frames removed, at most \p depth user frames kept, joined by ';'.
 * \return the string length; 0, and "", if no user frame remains (the C/C++
 * runtimes' and tierwise's own allocations: not a site; FORMATS.md).
 * NUL-terminated; truncated to cap - 1. */
size_t tw_stack_format(char *buf, size_t cap, const tw_frame *frames, int n,
                       int depth);

/** The hash of a stack string (or any bytes): tw_hash_span(s, n) ==
 * tw_hash_end(tw_hash_words(TW_HASH_SEED, s, n / 8), s + n / 8 * 8, n), so
 * the hashes of all prefixes of one string cost one pass over it (placement
 * matching). Never 0. ~0.5 instructions a byte. */
#define TW_HASH_SEED 0xcbf29ce484222325ull
uint64_t tw_hash_words(uint64_t h, const char *s, size_t nwords);
/** Finishes a hash of \p n bytes; \p tail: its last n % 8 bytes. */
uint64_t tw_hash_end(uint64_t h, const char *tail, size_t n);
uint64_t tw_hash_span(const char *s, size_t n);
/** tw_hash_span of a NUL-terminated string. */
uint64_t tw_hash_str(const char *s);
/** Hash of raw return addresses (never 0, so 0 can mark an empty slot). */
uint64_t tw_hash_ips(const uintptr_t *ips, int n);

/** Prefix match per FORMATS.md: 1 if placement stack \p site equals \p stack
 * or is a prefix of it ending at a frame boundary (';'). */
int tw_stack_matches(const char *site, const char *stack);

#ifdef __cplusplus
}
#endif
