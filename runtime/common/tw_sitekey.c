/* SPDX-License-Identifier: MIT */
/*
 * Site keys (see tw_sitekey.h): frame formatting, the allocator module rule,
 * hashing. Deliberately libc-free so that the Valgrind tool can build it.
 */
#include "tw_sitekey.h"

static int tw_starts(const char *s, const char *prefix) {
  while (*prefix)
    if (*s++ != *prefix++)
      return 0;
  return 1;
}

/* 1 if s starts with prefix and continues with ".so" (end or more dots). */
static int tw_is_so(const char *s, const char *prefix) {
  if (!tw_starts(s, prefix))
    return 0;
  s += 0;
  while (*s)
    if (tw_starts(s++, ".so"))
      return 1;
  return 0;
}

int tw_module_is_allocator(const char *b) {
  /* (by its first characters first: it is asked for every module loaded
   * and every new stack's first frames) */
  if (!b)
    return 0;
  if (b[0] == 'v')
    return tw_starts(b, "vgpreload_") && tw_is_so(b, "vgpreload_");
  if (b[0] != 'l')
    return 0;
  if (b[1] == 'd')
    return tw_starts(b, "ld-linux") && tw_is_so(b, "ld-linux");
  if (b[1] != 'i' || b[2] != 'b')
    return 0;
  switch (b[3]) {
  case 't':
    return tw_starts(b, "libtierwise") && tw_is_so(b, "libtierwise");
  case 'j':
    return tw_starts(b, "libjemalloc");
  case 'm':
    return tw_starts(b, "libmemkind.so");
  case 'c':
    return tw_starts(b, "libc.so");
  case 's':
    return tw_starts(b, "libstdc++.so");
  case 'g':
    return tw_starts(b, "libgcc_s.so");
  default:
    return 0;
  }
}

const char *tw_basename(const char *path) {
  const char *b = path;
  if (!path)
    return path;
  for (; *path; path++)
    if (*path == '/')
      b = path + 1;
  return b;
}

static size_t tw_put(char *buf, size_t cap, size_t at, const char *s) {
  while (*s && at + 1 < cap)
    buf[at++] = *s++;
  if (cap)
    buf[at < cap ? at : cap - 1] = 0;
  return at;
}

static size_t tw_put_hex(char *buf, size_t cap, size_t at, uintptr_t v) {
  char tmp[2 + 2 * sizeof(v) + 1];
  int i = sizeof(tmp) - 1;
  tmp[i] = 0;
  do {
    tmp[--i] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v);
  tmp[--i] = 'x';
  tmp[--i] = '0';
  return tw_put(buf, cap, at, tmp + i);
}

static size_t tw_frame_at(char *buf, size_t cap, size_t at, const tw_frame *f) {
  at = tw_put(buf, cap, at, f->module ? f->module : "[anon]");
  at = tw_put(buf, cap, at, "+");
  return tw_put_hex(buf, cap, at, f->offset);
}

size_t tw_frame_format(char *buf, size_t cap, const tw_frame *frame) {
  return tw_frame_at(buf, cap, 0, frame);
}

size_t tw_stack_format(char *buf, size_t cap, const tw_frame *frames, int n,
                       int depth) {
  int first = 0, kept = 0;
  size_t at = 0;
  if (cap)
    buf[0] = 0;
  while (first < n && tw_module_is_allocator(tw_basename(frames[first].module)))
    first++;
  if (first == n)
    return 0; /* only allocator frames (the C/C++ runtimes' and tierwise's
               * own start-up, e.g. libstdc++'s emergency pool): no user
               * code to name, not a site (empty) */
  /* Thread start (start_thread, then clone3 natively but clone under
   * Valgrind, which lacks clone3): trailing libc frames are not part of a
   * site, so native and Valgrind runs name a thread's sites alike. */
  while (n - 1 > first && frames[n - 1].module &&
         tw_starts(tw_basename(frames[n - 1].module), "libc.so"))
    n--;
  for (int i = first; i < n && kept < depth; i++, kept++) {
    if (kept)
      at = tw_put(buf, cap, at, ";");
    at = tw_frame_at(buf, cap, at, &frames[i]);
  }
  return at;
}

/* 8 bytes at a time, each word xor'ed into the state and multiplied (a
 * bijection per word, so words differing alone never collide); the end mixes
 * in the last n % 8 bytes and the length. Bytewise FNV-1a cost ~5
 * instructions a byte: 25M for a 20,000-site placement's stacks at start. */
#define TW_HASH_MUL 0x9fb21c651e98df25ull

uint64_t tw_hash_words(uint64_t h, const char *s, size_t nwords) {
  for (size_t i = 0; i < nwords; i++) {
    uint64_t w;
    __builtin_memcpy(&w, s + 8 * i, 8);
    h = (h ^ w) * TW_HASH_MUL;
  }
  return h;
}

uint64_t tw_hash_end(uint64_t h, const char *tail, size_t n) {
  uint64_t w = 0;
  for (size_t i = 0; i < (n & 7); i++)
    w |= (uint64_t)(unsigned char)tail[i] << (8 * i);
  h = (h ^ w) * TW_HASH_MUL ^ n;
  h ^= h >> 33; /* the 64-bit finaliser of MurmurHash3 */
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h ? h : 1;
}

uint64_t tw_hash_span(const char *s, size_t n) {
  return tw_hash_end(tw_hash_words(TW_HASH_SEED, s, n / 8), s + n / 8 * 8, n);
}

uint64_t tw_hash_str(const char *s) {
  size_t n = 0;
  while (s[n])
    n++;
  return tw_hash_span(s, n);
}

uint64_t tw_hash_ips(const uintptr_t *ips, int n) {
  /* Multiplicative mixing per word: faster than bytewise FNV on the hot path
   * of the census, which hashes every allocation's stack. */
  uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;
  for (int i = 0; i < n; i++) {
    h ^= (uint64_t)ips[i];
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  return h ? h : 1;
}

int tw_stack_matches(const char *site, const char *stack) {
  while (*site && *site == *stack) {
    site++;
    stack++;
  }
  return *site == 0 && (*stack == 0 || *stack == ';');
}
