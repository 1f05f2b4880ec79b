/* SPDX-License-Identifier: MIT */
/*
 * Layer 2 (policy): the C interface of tw_placement_json.cc, the JSON
 * reader of placement.json (simdjson On-Demand), for tw_placement.c. Plain
 * C, so the C++ file includes it without the runtime's headers.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes after the text that must be readable (simdjson's SIMD loads). */
#define TW_PJSON_PADDING 64

/** A string field: kind 0 absent, 1 a string (p, n: its unescaped text in
 * the caller's buffer, not NUL-terminated), 2 another JSON type. */
typedef struct tw_pjstr {
  const char *p;
  uint32_t n;
  int8_t kind;
} tw_pjstr;

/** A number field: kind 0 absent, 1 a number (v), 2 another JSON type. */
typedef struct tw_pjnum {
  double v;
  int8_t kind;
} tw_pjnum;

/** Most entries of a list of integers (planned_live) the reader keeps. */
#define TW_PJSON_LIST_MAX 64

/** A list of integers: kind 0 absent, 1 a list of 1 to TW_PJSON_LIST_MAX
 * integers from 0 to 2^64-1 (v[0..n)), 2 anything else. */
typedef struct tw_pjlist {
  int8_t kind;
  int n;
  uint64_t v[TW_PJSON_LIST_MAX];
} tw_pjlist;

/** The fields of one element of "sites" that the runtime reads (all
 * absent for an element that is not an object). */
typedef struct tw_pjsite {
  tw_pjstr stack, location, tier;
  tw_pjnum bytes, dram_bytes, dram_fraction, rank, planned_bytes;
  tw_pjlist planned_live; /* last: only its kind and n are cleared */
} tw_pjsite;

/** The top-level fields; sites and modules: kind as in tw_pjstr. */
typedef struct tw_pjroot {
  tw_pjstr format, default_tier;
  tw_pjnum version, depth;
  int8_t sites, modules;
} tw_pjroot;

/** Where the elements go, in file order: site returns 0 to stop the read
 * (a bad site, said by it); module gets each module with both strings. */
typedef struct tw_pjsink {
  void *ctx;
  int (*site)(void *ctx, const tw_pjsite *s);
  void (*module)(void *ctx, const tw_pjstr *module, const tw_pjstr *build_id);
} tw_pjsink;

/** Read placement JSON \p buf (\p len bytes, then TW_PJSON_PADDING
 * readable bytes; strings with escapes are rewritten in place).
 * \return 1 read (fields in \p root), -1 stopped by sink->site, 0 not JSON
 * (\p err_at: where the reader stopped, within buf..buf+len). */
int tw_pjson_read(char *buf, size_t len, tw_pjroot *root, const tw_pjsink *sink,
                  const char **err_at);

#ifdef __cplusplus
}
#endif
