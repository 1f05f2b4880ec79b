/* SPDX-License-Identifier: MIT */
/*
 * Internal header of the tierwise runtime: what the interposed entry points
 * (tw_preload.c) and the public API (tw_api.c) call, and what the parts of
 * the core share. Not installed.
 *
 * Every block the runtime hands out carries a 16-byte header just below the
 * user pointer (tw_hdr): it says which allocator owns the block (glibc for
 * DRAM, a memkind kind for the other tiers), its size and its site, so that
 * free/realloc/malloc_usable_size never ask memkind_detect_kind (which
 * crashes on glibc pointers) and the census can account frees exactly.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tw_sitekey.h"

#define TW_HIDDEN __attribute__((visibility("hidden")))
#define TW_LIKELY(x) __builtin_expect(!!(x), 1)
#define TW_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* glibc's allocator itself (exported by libc.so.6): DRAM blocks come from
 * here, so the runtime needs no dlsym bootstrap. */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

enum { TW_T_DRAM = 0, TW_T_PMEM = 1, TW_T_KMEM = 2, TW_T_HBW = 3, TW_NTIERS };

/* Block header, immediately below the user pointer. */
typedef struct tw_hdr {
  uint32_t tag;  /* magic:16 | log2(offset):8 | flags:4 | tier:4 */
  uint32_t site; /* site index, TW_SITE_NONE for the runtime's own blocks */
  uint64_t size; /* requested size */
} tw_hdr;
#define TW_MAGIC 0x7457u
#define TW_HDR_TIME 0x10u /* a 64-bit allocation time precedes the header */
#define TW_SITE_NONE 0xffffffffu
#define TW_HDR_TIER(t) ((t) & 0xfu)
#define TW_HDR_LOG2OFF(t) (((t) >> 8) & 0xffu)

enum tw_mode { TW_MODE_OFF = 0, TW_MODE_PASS, TW_MODE_CENSUS, TW_MODE_PLACE };

typedef struct tw_site {
  const char *stack;
  uint64_t hash;
  int placed;             /* index into the placement's sites, -1: not named */
  int tier;               /* tier decided for this site */
  uint64_t dram_head;     /* placement's dram_bytes: each object's first
                             bytes from DRAM (tw_split.c); 0: none */
  uint64_t allocs, bytes; /* atomics */
  int64_t live;
  uint64_t peak;
  uint64_t tier_bytes[TW_NTIERS], fallback_bytes, fallback_allocs;
} tw_site;

typedef struct tw_config {
  int mode;
  int depth;
  size_t objects_min;
  size_t fast_max; /* allocations at least this big are always unwound */
  unsigned fast_learn, fast_check;
  const char *census_dir, *placement_path, *pmem_dir, *report_path;
  const char *maps_copy;
  uint64_t dram_limit; /* 0: none */
  size_t unmatched_min;
  int verbose;
} tw_config;

TW_HIDDEN extern tw_config tw_cfg;
TW_HIDDEN extern volatile int tw_mode_now; /* enum tw_mode, OFF until init */
TW_HIDDEN extern __thread int tw_in_core
    __attribute__((tls_model("initial-exec")));
/* Tier whose memkind call is running on this thread (0: none): mmap marks
 * the pages it maps with it. */
TW_HIDDEN extern __thread int tw_in_tier
    __attribute__((tls_model("initial-exec")));
/* Valgrind client requests (tw_clientreq.h), decided once when the config
 * is read: none natively (or TIERWISE_VALGRIND_REQUESTS=0); under tierwise's
 * own tool (`tierwise simulate`, it answers TW_CLREQ_HELLO) every block the
 * runtime serves is announced with its tier; under another tool (memcheck,
 * helgrind) only memkind's blocks and split mappings, which that tool cannot
 * see otherwise: glibc's blocks it tracks through its malloc replacement
 * (which serves __libc_malloc), and announcing them again is a second block
 * at the same address (memcheck: "Mismatched free()"). */
enum { TW_VG_NONE, TW_VG_OTHER, TW_VG_SIM };
TW_HIDDEN extern int tw_vg;
/* Whether a block of \p tier (tw_tier) is announced to the Valgrind tool. */
static inline int tw_vg_tracks(int tier) {
  return TW_UNLIKELY(tw_vg) &&
         (tw_vg == TW_VG_SIM || tier != TW_T_DRAM);
}
/* Census mode: every block has a tw_hdr (sites, sizes, times at free);
 * other modes: no header, ownership from the page-tier map. */
TW_HIDDEN extern int tw_hdr_mode;

/* Page-tier map: per 1 GiB of address space, a byte per 4 KiB page giving
 * the tier whose memkind mapping holds it (0: not a tier mapping). */
#define TW_PMAP_TOP (1u << 17)
#define TW_PAGE_SPLIT 0x80 /* map value of a split block's pages (tw_split.c) */
TW_HIDDEN extern uint8_t *tw_pmap[TW_PMAP_TOP];
static inline int tw_page_tier(const void *p) {
  uintptr_t a = (uintptr_t)p;
  uint8_t *m = tw_pmap[(a >> 30) & (TW_PMAP_TOP - 1)];
  return TW_LIKELY(!m) ? 0 : m[(a >> 12) & ((1u << 18) - 1)];
}

/* ---- tw_core.c: the allocation paths (ra, sp: the caller's key) ---- */
TW_HIDDEN void tw_init(void);
TW_HIDDEN void *tw_alloc(size_t size, size_t align, int zero, void *ra,
                         void *sp);
TW_HIDDEN void tw_core_free(void *p);
TW_HIDDEN void *tw_core_realloc(void *p, size_t size, void *ra, void *sp);
TW_HIDDEN size_t tw_usable(void *p);
/* tierwise.h: from \p tier, the first \p dram_bytes from DRAM (0: none,
 * or a placement's head for the calling site; see tw_malloc_head). */
TW_HIDDEN void *tw_alloc_tier(int tier, uint64_t dram_bytes, size_t size,
                              size_t align, int zero);
TW_HIDDEN int tw_tier_of_ptr(const void *p);
TW_HIDDEN uint64_t tw_now_ns(void);
TW_HIDDEN void tw_warn(const char *a, const char *b, const char *c);

/* ---- tw_hdr.c: census blocks (with tw_hdr) ---- */
TW_HIDDEN void *tw_hb_alloc(size_t size, size_t align, int zero);
TW_HIDDEN void *tw_hb_alloc_tier(int tier, size_t size, size_t align, int zero);
TW_HIDDEN void tw_hb_free(void *p);
TW_HIDDEN size_t tw_hb_usable(void *p);
TW_HIDDEN int tw_hb_tier_of(const void *p);
TW_HIDDEN void *tw_hb_realloc(void *p, size_t size);

/* ---- tw_place.c: header-less placement and pass-through paths ---- */
TW_HIDDEN void *tw_pl_place(tw_site *s, size_t size, size_t align, int zero,
                            int tier);
TW_HIDDEN void *tw_pl_alloc(size_t size, size_t align, int zero, void *ra,
                            void *sp);
TW_HIDDEN void *tw_pl_alloc_tier(int tier, uint64_t dram_bytes, size_t size,
                                 size_t align, int zero);
TW_HIDDEN void tw_pl_free(void *p);
TW_HIDDEN size_t tw_pl_usable(void *p);
TW_HIDDEN void *tw_pl_realloc(void *p, size_t size, void *ra, void *sp);
TW_HIDDEN size_t tw_glibc_usable(void *p);
/* TIERWISE_DRAM_LIMIT's account, for DRAM mappings (tw_mmap.c). */
TW_HIDDEN int tw_dram_room(uint64_t n);
TW_HIDDEN void tw_dram_charge(int64_t n);

/* ---- tw_stack.c: unwinding, module map, the site table ---- */
/* Site of the current call stack (full unwind). */
TW_HIDDEN uint32_t tw_site_here(void);
TW_HIDDEN tw_site *tw_site_get(uint32_t idx);
/* Count an object of \p size served for \p s: its first \p head bytes
 * from DRAM (a split object, tw_split.c), the rest from \p tier. */
static inline void tw_site_served(tw_site *s, size_t size, int tier,
                                  uint64_t head) {
  __atomic_fetch_add(&s->allocs, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&s->bytes, size, __ATOMIC_RELAXED);
  if (head)
    __atomic_fetch_add(&s->tier_bytes[TW_T_DRAM], head, __ATOMIC_RELAXED);
  __atomic_fetch_add(&s->tier_bytes[tier], size - head, __ATOMIC_RELAXED);
}
/* Add \p size to the site's live bytes and raise its peak (census). */
static inline void tw_site_live_add(tw_site *s, size_t size) {
  int64_t live = __atomic_add_fetch(&s->live, (int64_t)size, __ATOMIC_RELAXED);
  uint64_t peak = __atomic_load_n(&s->peak, __ATOMIC_RELAXED);
  while ((uint64_t)live > peak &&
         !__atomic_compare_exchange_n(&s->peak, &peak, (uint64_t)live, 1,
                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    ;
}
TW_HIDDEN uint32_t tw_site_count(void);
/* Write modules.csv rows / iterate modules (path, build-id hex). */
typedef void (*tw_module_fn)(void *ctx, const char *path, const char *base,
                             const char *build_id);
TW_HIDDEN void tw_modules_each(tw_module_fn fn, void *ctx);
TW_HIDDEN void *tw_internal_alloc(size_t size); /* never freed */
TW_HIDDEN void tw_stack_atfork(int phase); /* 0 prepare, 1 parent, 2 child */

/* ---- tw_fastpath.c: the per-thread decision cache (more in tw_fast.h) ---- */
TW_HIDDEN void tw_fast_stats(uint64_t out[4]); /* hits, validations,
                                                  mismatches, unwinds; flushes
                                                  pending counts */

/* ---- tw_tiers.c: memkind tiers ---- */
TW_HIDDEN void tw_tiers_init(void);
/* The child of a fork: new slow-tier allocations from fresh kinds. */
TW_HIDDEN void tw_tiers_forked(void);
/* Under Valgrind: MALLOCLIKE (+ tier request for the tierwise tool) for a
 * block the runtime placed (tw_place.c; also anonymous mappings, tw_mmap.c),
 * when tw_vg_tracks(tier); tw_unannounce: its FREELIKE, before release. */
TW_HIDDEN void tw_announce(void *p, size_t size, int tier);
TW_HIDDEN void tw_unannounce(void *p, int tier);
/* ---- tw_fork.c: private slow tier in fork children ---- */
TW_HIDDEN void tw_fork_note_map(void *p, size_t len, int prot, int flags,
                                int fd);
TW_HIDDEN void tw_fork_note_unmap(void *p, size_t len);
TW_HIDDEN void tw_fork_prepare(void);
TW_HIDDEN void tw_fork_parent(void);
TW_HIDDEN void tw_fork_child(void);
TW_HIDDEN void *tw_tier_malloc(int tier, size_t size, size_t align);
TW_HIDDEN void tw_tier_free(int tier, void *base);
TW_HIDDEN void *tw_tier_realloc(int tier, void *p, size_t size);
TW_HIDDEN size_t tw_tier_usable(int tier, void *p);
TW_HIDDEN int tw_tier_available(int tier);
TW_HIDDEN const char *tw_tier_str(int tier);
TW_HIDDEN int tw_tier_parse(const char *name);

/* ---- tw_placement.c ---- */
TW_HIDDEN int tw_placement_load(const char *path);
TW_HIDDEN int tw_placement_parse(const char *text, const char *name);
TW_HIDDEN int tw_placement_match(const char *stack, int *tier);
TW_HIDDEN int tw_placement_default_tier(void);
TW_HIDDEN int tw_placement_depth(void);
TW_HIDDEN int tw_placement_nsites(void);
TW_HIDDEN const char *tw_placement_field(int i, int which); /* 0 stack,
                                                             1 location */
TW_HIDDEN int tw_placement_tier(int i);
TW_HIDDEN uint64_t tw_placement_dram_bytes(int i); /* 0 for -1 */
TW_HIDDEN void tw_placement_check_modules(void);

/* ---- tw_census.c / tw_report.c: output at exit ---- */
TW_HIDDEN void tw_census_object(uint32_t site, uint64_t size, uint64_t t0,
                                uint64_t t1);
TW_HIDDEN void tw_census_live(void *user);
TW_HIDDEN void tw_census_dead(void *user);
TW_HIDDEN void tw_census_write(void);
/* Claim DIR/.census-owner if no process has (called when the census starts,
 * so the program the user named owns the plain names, not a child it runs
 * before its first big allocation). */
TW_HIDDEN void tw_census_claim(void);
TW_HIDDEN void tw_census_atfork(int phase); /* 0 prepare, 1 parent, 2 child */
TW_HIDDEN void tw_report_write(void);
TW_HIDDEN void tw_report_warning(const char *line);
TW_HIDDEN void tw_maps_snapshot(void);

/* ---- tw_mmap.c: anonymous mappings as allocations ---- */
TW_HIDDEN void *tw_sys_mmap(void *addr, size_t len, int prot, int flags, int fd,
                            off_t off);
TW_HIDDEN int tw_sys_munmap(void *addr, size_t len);
TW_HIDDEN void tw_mmap_live_rows(void (*row)(uint32_t, uint64_t, uint64_t));
/* Mark pages [a, a+len) in the page-tier map as \p tier's (0: unmark). */
TW_HIDDEN void tw_pmap_mark(uintptr_t a, size_t len, int tier);

/* ---- tw_split.c: objects with a DRAM head and a slow-tier tail ---- */
/* A block of \p size whose first *\p head bytes (rounded down to a page
 * multiple in *head, less than size) are DRAM and the rest \p tier's, or
 * NULL (the caller places the whole object). Not zeroed: fresh pages read
 * as zero. */
TW_HIDDEN void *tw_split_alloc(uint32_t site, size_t size, size_t align,
                               uint64_t *head, int tier);
typedef struct tw_split_info {
  uintptr_t base;
  size_t size, len; /* requested, mapped */
  uint64_t head;
  uint32_t site;
  int tier;
} tw_split_info;
/* The split block holding \p p: 1 and *out, or 0. */
TW_HIDDEN int tw_split_find(const void *p, tw_split_info *out);
TW_HIDDEN uint64_t tw_split_free(void *p); /* its DRAM head */

/* ---- tw_out.c: buffered write(2) output, no stdio ---- */
typedef struct tw_out {
  int fd;
  size_t len;
  int failed;
  char buf[1 << 15];
} tw_out;
TW_HIDDEN int tw_out_open(tw_out *o, const char *path, char *tmp, size_t cap);
TW_HIDDEN int tw_out_close(tw_out *o, const char *tmp, const char *path);
TW_HIDDEN void tw_out_str(tw_out *o, const char *s);
TW_HIDDEN void tw_out_json(tw_out *o, const char *s); /* quoted, escaped */
TW_HIDDEN void tw_out_u64(tw_out *o, uint64_t v);
TW_HIDDEN void tw_out_flush(tw_out *o);
TW_HIDDEN size_t tw_fmt_u64(char *buf, uint64_t v);
/* mkdir -p: parents as mkdir(2) with the umask, \p path itself mode 0700.
 * 0, or -1 and errno. */
TW_HIDDEN int tw_mkdirs(const char *path);
/* tw_parse_size: the size grammar (common/tw_size.h) */
#include "tw_size.h"
