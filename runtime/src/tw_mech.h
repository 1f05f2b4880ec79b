/* SPDX-License-Identifier: MIT */
/*
 * Layer 1 of the runtime, the mechanisms (runtime/README.md "Layers"):
 * sites (tw_stack.c), tiers as backends with one ops table each
 * (tw_tiers.c, tw_be_*.c), split objects (tw_split.c), fork isolation of
 * file mappings (tw_fork.c), the table of anonymous mappings (tw_maps.c) and
 * the census records (tw_census.c). They decide nothing: which site goes
 * to which tier is the policy's (tw_policy.h). Calls only into itself and
 * the base. Not installed.
 */
#pragma once

#include "tw_base.h"

#include <signal.h> /* struct sigaction (the sample profiler's SIGSEGV) */

/* ---- tw_stack.c: unwinding, module map, the site table ---- */
#define TW_REPORT_NODES 16 /* nodes whose pages the run report counts */
typedef struct tw_site {
  const char *stack;
  uint64_t hash;
  /* The policy's decision (tw_policy.c sets it when it first sees the site;
   * until then: not named, dram, no head). */
  int decided;            /* atomic: the three fields below are set */
  int placed;             /* index into the placement's sites, -1: not named */
  int tier;               /* tier decided for this site */
  int leads;              /* some placement site's stack starts with this
                             site's first frame */
  int mod_leads;          /* some placement site's stack starts in the
                             module of this site's first frame */
  uint64_t dram_head;     /* placement's dram_bytes: each object's first
                             bytes from DRAM (tw_split.c); 0: none */
  double dram_frac;       /* placement's dram_fraction (wins); 0: none */
  int first_mod;          /* the module of its first frame: index + 1
                             (tw_module_base), 0: none (set at creation) */
  int api;                /* allocated through tierwise.h (tw_malloc, new
                             (tw::pmem)): the report lists it whatever its
                             size, at the call the rewrite placed */
  uint64_t allocs, bytes; /* atomics */
  int64_t live;
  uint64_t peak;
  uint64_t tier_bytes[TW_TIER_COUNT], fallback_bytes, fallback_allocs;
  /* Where its pages really are (tw_maps.c): sampled resident pages per
   * NUMA node, and pages sampled (resident or not), of its large objects. */
  uint64_t node_pages[TW_REPORT_NODES], pages_sampled;
  /* the same during the run, for the objects the room tracks: sampled by
   * its watcher every second (tw_room.c) */
  uint64_t run_node_pages[TW_REPORT_NODES], run_pages_sampled;
} tw_site;

/* Site of the current call stack (full unwind). */
TW_HIDDEN uint32_t tw_site_here(void);
/* A thread's memo of return addresses (tw_site_first), direct-mapped, one
 * writer and reader (its thread; the memory is the caller's): a user
 * frame's one-frame site, or an allocator frame's step (TW_FM_STEP | its
 * frame rule's slot). An Open MPI start-up makes ~12,000 allocations from
 * ~1,500 first frames, most through strdup or asprintf, nearly every one
 * a fast-path miss (the key, a return address into libc and a stack
 * pointer, is shared by many call paths): each looked its frames' modules
 * and rules up, validated each step, and hashed and probed the raw-stack
 * table - two thirds of a miss. Valid while the raw-stack table's
 * generation is unchanged (a module unloaded that a stack went through). */
typedef struct tw_frame_memo {
  uintptr_t ra; /* 0: empty */
  uint32_t gen;
  uint32_t site;
} tw_frame_memo;
#define TW_FM_BITS 12
#define TW_FM_STEP 0x80000000u
static inline tw_frame_memo *tw_fm_slot(const tw_frame_memo *memo,
                                        uintptr_t a) {
  return (tw_frame_memo *)&memo[(a * 0x9e3779b97f4a7c15ull) >>
                                (64 - TW_FM_BITS)];
}
/* The site named by the first user frame alone (FORMATS.md: the first frame
 * of tw_site_here()'s stack) of an allocation whose interposed entry point
 * was called from return address \p ra, its frame address \p sp: ra's own
 * frame when ra is in a user module, else the first user frame stepped to
 * from the call out of the allocator's frames; TW_SITE_NONE when not found
 * so. Interned once per distinct frame; never unwinds the whole stack.
 * *by_ra: 1 when the frame is ra's own (the same for every call from ra).
 * \p memo: the calling thread's (1 << TW_FM_BITS entries), or NULL. */
TW_HIDDEN uint32_t tw_site_first(void *ra, void *sp, int *by_ra,
                                 tw_frame_memo *memo);
/* What tw_site_first gives from the thread's \p memo alone (ra's frame
 * memo'ed, and for an allocator's frame every frame stepped to until the
 * first user frame): a user frame's site and *by_ra, or TW_SITE_NONE when
 * the memo does not know (tw_site_first then). No lock, no module look-up:
 * most of an Open MPI start-up's allocations. */
TW_HIDDEN uint32_t tw_site_memo(void *ra, void *sp, int *by_ra,
                                const tw_frame_memo *memo);
TW_HIDDEN extern tw_site *tw_sites; /* (tw_stack.c) */
static inline tw_site *tw_site_get(uint32_t idx) { return &tw_sites[idx]; }
TW_HIDDEN uint32_t tw_site_count(void);
/* Count an object of \p size served for \p s: its first \p head bytes
 * from DRAM (a split object, tw_split.c), the rest from \p tier. */
static inline void tw_site_served(tw_site *s, size_t size, int tier,
                                  uint64_t head) {
  __atomic_fetch_add(&s->allocs, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&s->bytes, size, __ATOMIC_RELAXED);
  if (head)
    __atomic_fetch_add(&s->tier_bytes[TW_TIER_DRAM], head, __ATOMIC_RELAXED);
  __atomic_fetch_add(&s->tier_bytes[tier], size - head, __ATOMIC_RELAXED);
}
/* Whether the placement gives the site's objects a DRAM head. */
static inline int tw_site_has_head(const tw_site *s) {
  return s->dram_head || s->dram_frac > 0;
}
/* The DRAM head of an object of \p size at site \p s (NULL: none):
 * dram_fraction of it rounded to the nearest page, else dram_bytes. */
static inline uint64_t tw_site_head(const tw_site *s, size_t size) {
  if (!s)
    return 0;
  if (s->dram_frac > 0) {
    double h = s->dram_frac * (double)size;
    return h >= (double)size ? (uint64_t)size
                             : ((uint64_t)(h + 2048.0) >> 12) << 12;
  }
  return s->dram_head;
}
/* An object of \p size that did not get the site's tier. */
static inline void tw_site_fell_back(tw_site *s, size_t size) {
  __atomic_fetch_add(&s->fallback_bytes, size, __ATOMIC_RELAXED);
  __atomic_fetch_add(&s->fallback_allocs, 1, __ATOMIC_RELAXED);
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
/* Iterate modules (path, basename, build-id hex). */
typedef void (*tw_module_fn)(void *ctx, const char *path, const char *base,
                             const char *build_id);
TW_HIDDEN void tw_modules_each(tw_module_fn fn, void *ctx);
/* The build-id of the runtime's own module, hex ("" without one). */
TW_HIDDEN void tw_own_build_id(char out[41]);
/* The basename of module \p idx (a site's first_mod - 1): a module's
 * entry is never reused (a library loaded again gets another one). */
TW_HIDDEN const char *tw_module_base(int idx);
#define TW_MODULES_MAX 1024
TW_HIDDEN void tw_stack_atfork(int phase); /* 0 prepare, 1 parent, 2 child */
/* Site lookups that found no slot in the raw-stack table (full around the
 * stack's hash) and were formatted instead. */
TW_HIDDEN uint64_t tw_stack_overflows(void);
/* After dlclose: forget the modules that are gone and the raw stacks that
 * may point into them. */
/* 1: some module a raw stack went through was unloaded */
TW_HIDDEN int tw_modules_closed(void);

/* ---- tiers: one backend per tier, an ops table each (memkind_ops) ---- */
/* Every operation gets the tier it serves (a backend may serve several:
 * memkind's for pmem/hbw, the NUMA node one for numa:N and kmem). An
 * allocation that returns NULL with errno EAGAIN fell back for a reason
 * other than a full tier (no warning). */
typedef struct tw_tier_ops {
  const char *name; /* the backend, in messages */
  /* Make \p tier servable; 0, or nonzero after one warning line. */
  int (*open)(int tier);
  void *(*malloc)(int tier, size_t size);
  void *(*calloc)(int tier, size_t size); /* zeroed */
  void *(*aligned)(int tier, size_t align, size_t size); /* align > 16 */
  void *(*realloc)(int tier, void *p, size_t size); /* NULL: failed, p kept */
  void (*free)(int tier, void *p);
  size_t (*usable)(int tier, void *p);
  /* A split object (tw_split.c) is one anonymous mapping: [p, p+len) is the
   * part this tier holds - the DRAM head (split_head of the DRAM backend) or
   * the slow tail (split_tail); 0, or nonzero: it cannot (then the mapping
   * is released and the object placed whole). NULL: not supported. */
  int (*split_head)(int tier, void *p, size_t len, int tail_tier);
  int (*split_tail)(int tier, void *p, size_t len);
  /* fork: 0 prepare, 1 parent, 2 child (NULL: nothing to do). */
  void (*atfork)(int tier, int phase);
  /* memkind mapped [p, p+len) while serving \p tier (its allocator's own
   * memory: metadata, extents of its default hooks); NULL: nothing to do. */
  void (*mapped)(int tier, void *p, size_t len, int flags);
  /* What serves \p tier, for the run report's "backends" ("numa-node 1");
   * its length. NULL: the backend's `id`. */
  size_t (*describe)(int tier, char *buf, size_t cap);
  /* Make now what the tier's first allocation would make (the pmem kind:
   * libmemkind loaded); NULL: nothing deferred. */
  void (*prepare)(int tier);
  const char *id; /* "glibc", "memkind-file", "memkind-hbw" */
  /* Freed blocks of at most this usable size may wait in the freeing
   * thread's cache for its next allocation of their class (tw_tcache.c);
   * 0: never. */
  size_t cache_max;
} tw_tier_ops;

TW_HIDDEN extern const tw_tier_ops tw_glibc_ops;   /* tw_be_glibc.c */
TW_HIDDEN extern const tw_tier_ops tw_mk_pmem_ops; /* tw_be_memkind.c */
TW_HIDDEN extern const tw_tier_ops tw_mk_hbw_ops;
TW_HIDDEN extern const tw_tier_ops tw_numa_ops; /* tw_be_numa.c */

/* tw_tcache.c: the slow tiers' thread cache, for blocks of at most
 * TW_TC_MAX (a backend's cache_max caps it). tw_tc_get: a cached block of
 * \p tier holding \p size bytes at an \p align boundary, or NULL;
 * tw_tc_put: 1 when \p p (a block of \p tier, served by \p ops, of usable
 * size \p usable, 0: not known yet) was kept, 0: the caller frees it.
 * \p align: a power of two. */
#define TW_TC_MAX ((size_t)2 << 20)
TW_HIDDEN void *tw_tc_get(int tier, size_t size, size_t align);
TW_HIDDEN int tw_tc_put(int tier, const tw_tier_ops *ops, void *p,
                        size_t usable);
TW_HIDDEN void tw_tc_atfork(int phase);
/* The cache is on (TIERWISE_SLOW_CACHE, not under Valgrind). */
TW_HIDDEN int tw_tc_on(void);

/* tw_be_glibc.c */
TW_HIDDEN size_t tw_glibc_usable(void *p);
/* The size of glibc block \p p's chunk (its header's size field less the
 * flags in its low 3 bits: glibc's malloc/malloc.c mchunk_size): at least
 * the block's usable size, read with one load. */
static inline size_t tw_glibc_chunk(const void *p) {
  return ((const size_t *)p)[-1] & ~(size_t)7;
}
TW_HIDDEN void tw_glibc_init(void);

/* tw_be_memkind.c: libmemkind, dlopen'ed on first use; the operations on a
 * kind, shared by its backends (a tier's kind set by its open). */
TW_HIDDEN int tw_memkind_load(void);
/* Called after libmemkind was loaded once the process runs (the pmem kind
 * is made at its first allocation): jemalloc registered its fork handlers
 * then, after the runtime's upper set (tw_lifecycle.c sets it; NULL at
 * start, when the tiers open before that set is registered). */
TW_HIDDEN extern void (*tw_memkind_late)(void);
/* A NUMA tier's fixed kind over [addr, addr + size), made (libmemkind
 * loaded) at the first call, from any thread, with around(tier, 1) called
 * before and around(tier, 0) after; 0 (errno EAGAIN): it could not be
 * made, or this thread is loading libmemkind - serve from DRAM. */
TW_HIDDEN int tw_memkind_fixed_ready(int tier, void *addr, size_t size,
                                     void (*around)(int, int));
/* fork child: tw_mk_lock made anew (a tier's atfork, phase 2). */
TW_HIDDEN void tw_memkind_atfork_child(void);
TW_HIDDEN void *tw_mk_malloc(int tier, size_t size);
TW_HIDDEN void *tw_mk_calloc(int tier, size_t size);
TW_HIDDEN void *tw_mk_aligned(int tier, size_t align, size_t size);
TW_HIDDEN void *tw_mk_realloc(int tier, void *p, size_t size);
TW_HIDDEN void tw_mk_free(int tier, void *p);
TW_HIDDEN size_t tw_mk_usable(int tier, void *p);

/* tw_be_numa.c: the machine's NUMA nodes (from /sys) */
#define TW_NODES_MAX 64
#define TW_LONG_BITS (8 * sizeof(unsigned long))
typedef struct tw_nodeset {
  unsigned long bits[TW_NODES_MAX / TW_LONG_BITS];
} tw_nodeset;
static inline void tw_set_add(tw_nodeset *s, unsigned n) {
  if (n < TW_NODES_MAX)
    s->bits[n / TW_LONG_BITS] |= 1ul << (n % TW_LONG_BITS);
}
static inline int tw_set_has(const tw_nodeset *s, unsigned n) {
  return n < TW_NODES_MAX && (s->bits[n / TW_LONG_BITS] >> (n % TW_LONG_BITS)) & 1;
}
/* Nodes with memory and no CPUs: a KMEM-DAX/CXL-shaped node (0: none). */
TW_HIDDEN int tw_numa_memory_only(tw_nodeset *out);
/* Nodes with CPUs (/sys has_cpu); their number, 0 when unreadable. */
TW_HIDDEN int tw_numa_cpu_nodes(tw_nodeset *out);
/* The nodes of up to \p max pages of [p, p+len), evenly spaced
 * (move_pages): resident ones counted in per_node[node] for nodes below
 * \p nnodes. Returns the number of pages looked at. */
TW_HIDDEN size_t tw_numa_pages(const void *p, size_t len, uint64_t *per_node,
                               unsigned nnodes, size_t max);

/* "Node N <field>: <v> kB" of node N's /sys meminfo, in bytes (0:
 * unknown; TIERWISE_SYSFS_NODE: another directory). */
TW_HIDDEN uint64_t tw_node_meminfo(unsigned node, const char *field);

/* tw_pages.c: a node's real room, moving pages between nodes */
/* Node \p node's room: its MemFree above its zones' low watermarks and its
 * DMA zone's free pages (/proc/zoneinfo); *free and *wmark (either may be
 * NULL): the parts. */
TW_HIDDEN uint64_t tw_node_room(unsigned node, uint64_t *free, uint64_t *wmark);
TW_HIDDEN int tw_cpu_node(void); /* the calling thread's node, -1 */
/* Free bytes of \p node in each CPU's per-CPU page lists (zoneinfo's
 * pagesets `count`): free memory that MemFree and the watermark check leave
 * out, which only allocations on that CPU can take. */
#define TW_CPUS_MAX 1024
TW_HIDDEN void tw_node_pcp(unsigned node, uint64_t pcp[TW_CPUS_MAX]);
/* 1 when the kernel demotes pages from a node whose free memory falls
 * below its watermarks to a lower memory tier (kswapd), rather than
 * reclaiming only page cache: /sys/kernel/mm/numa/demotion_enabled
 * (TIERWISE_SYSFS_NODE: DIR/demotion_enabled); 0 if unreadable. */
TW_HIDDEN int tw_kernel_demotes(void);
/* Move resident pages of [lo, hi) (pages inside it) that are on node
 * \p from (any node but \p to: from < 0) to node \p to with move_pages(2),
 * walking from the low end (from the high end: \p backward) until \p want
 * bytes moved or the target refuses; returns the bytes moved, *stop (may be
 * NULL) how far it looked. No policy changes. */
TW_HIDDEN size_t tw_pages_move(uintptr_t lo, uintptr_t hi, int from, int to,
                               size_t want, int backward, uintptr_t *stop);
/* What tw_pages_move's moves cost its callers (the room's watcher): the
 * move_pages(2) calls that asked to move pages, the pages they were given,
 * the calling thread's CPU time in them, the most a call took per page. */
typedef struct tw_move_cost {
  uint64_t calls, pages, cpu_ns, worst_ns_per_page;
} tw_move_cost;
TW_HIDDEN void tw_pages_move_cost(tw_move_cost *out);
/* Bytes of [lo, hi) (pages inside it) not yet resident: what the range
 * will still take from some node at first touch (move_pages(2) status
 * queries, 512 pages a call). */
TW_HIDDEN size_t tw_pages_absent(uintptr_t lo, uintptr_t hi);
/* Bytes of [lo, hi)'s resident pages on another node than \p node. */
TW_HIDDEN size_t tw_pages_elsewhere(uintptr_t lo, uintptr_t hi, int node);
/* [lo, hi)'s later faults prefer node \p node (mbind MPOL_PREFERRED_MANY
 * with that node, where the kernel has it, else MPOL_PREFERRED; never
 * bound); \p node < 0: the default policy again. 0 or -1. */
TW_HIDDEN int tw_range_prefer(uintptr_t lo, uintptr_t hi, int node);
/* 1 while tw_range_prefer's faults may take the node's pages down to its
 * min watermark (MPOL_PREFERRED_MANY, 5.15 on; not refused so far). */
TW_HIDDEN int tw_range_prefer_many(void);
/* Fault every page of [lo, hi) in under its policy now (fresh anonymous
 * memory), then set the range's policy back to the default: the pages stay
 * on their node and the NUMA-balancing scanner, which skips ranges with an
 * mbind policy, sees them. 0 or -1. */
TW_HIDDEN int tw_range_fault_default(uintptr_t lo, uintptr_t hi);

/* tw_tiers.c: the tier table (which backend serves which tier) */
TW_HIDDEN const tw_tier_ops *tw_tier_backend(int tier);
/* Open the tiers marked in \p used now (warnings at start). */
TW_HIDDEN void tw_tiers_open(const int used[TW_TIER_COUNT]);
/* What \p tier defers to its first allocation, made now (ops->prepare). */
TW_HIDDEN void tw_tier_prepare(int tier);
TW_HIDDEN int tw_tier_available(int tier);
/* The run report's name of what served \p tier into \p buf ("glibc",
 * "numa-node 1", "unavailable": its sites fell back to dram); 0 when the
 * tier was never used. */
TW_HIDDEN size_t tw_tier_describe(int tier, char *buf, size_t cap);
/* A block of \p size from \p tier (DRAM: glibc), zeroed when \p zero; NULL
 * when the tier cannot serve it (said once per tier). */
TW_HIDDEN void *tw_tier_alloc(int tier, size_t size, size_t align, int zero);
TW_HIDDEN void tw_tier_free(int tier, void *p);
TW_HIDDEN void *tw_tier_realloc(int tier, void *p, size_t size);
TW_HIDDEN size_t tw_tier_usable(int tier, void *p);
TW_HIDDEN void tw_tiers_atfork(int phase);
/* memkind mapped [p, p+len) during a call for \p tier (tw_mmap.c). */
TW_HIDDEN void tw_tier_mapped(int tier, void *p, size_t len, int flags);
/* Under Valgrind: MALLOCLIKE (+ tier request for the tierwise tool) for a
 * block the runtime placed, when tw_vg_tracks(tier); tw_unannounce: its
 * FREELIKE, before release. */
TW_HIDDEN void tw_announce(void *p, size_t size, int tier);
TW_HIDDEN void tw_unannounce(void *p, int tier);

/* ---- tw_fork.c: private copies of shared file mappings in fork children */
TW_HIDDEN void tw_fork_note_map(void *p, size_t len, int prot, int flags,
                                int fd);
TW_HIDDEN void tw_fork_note_unmap(void *p, size_t len);
TW_HIDDEN void tw_fork_atfork(int phase);

/* ---- tw_split.c: objects with a DRAM head and a slow-tier tail ---- */
/* A block of \p size whose first *\p head bytes (rounded down to a page
 * multiple in *head, less than size) are DRAM and the rest \p tier's, or
 * NULL (the caller places the whole object). Zeroed when \p zero (fresh
 * pages read as zero; a reused pmem mapping's tail is cleared). */
TW_HIDDEN void *tw_split_alloc(uint32_t site, size_t size, size_t align,
                               uint64_t *head, int tier, int zero);
typedef struct tw_split_info {
  uintptr_t base;
  size_t size, len; /* requested, mapped */
  uint64_t head;
  uint32_t site;
  int tier;
} tw_split_info;
/* The split block holding \p p: 1 and *out, or 0. */
TW_HIDDEN int tw_split_find(const void *p, tw_split_info *out);
/* Its DRAM head; \p keep: a pmem-tailed mapping may be kept for reuse
 * (a malloc'ed object's: never an munmap'ed one, whose range the program
 * may map again with MAP_FIXED). */
TW_HIDDEN uint64_t tw_split_free(void *p, int keep);
TW_HIDDEN void tw_split_atfork(int phase); /* 0 prepare, 1 parent, 2 child */
TW_HIDDEN void tw_split_each(void (*fn)(const tw_split_info *));

/* ---- tw_maps.c: tracked objects and where their pages are ---- */
/* Anonymous mappings served as allocations (tw_mapped.c), and the large
 * (>= TW_SAMPLE_MIN) slow-tier blocks of placement mode: two tables keyed
 * by start address. */
#define TW_SAMPLE_MIN ((size_t)64 << 10)
typedef struct tw_map {
  uintptr_t addr; /* 0 empty, 1 deleted */
  size_t len;
  uint32_t site;
  int owner; /* TW_OWNER_GLIBC: the kernel's; a tier; TW_OWNER_SPLIT */
  uint64_t t0;
} tw_map;
TW_HIDDEN void tw_map_put(uintptr_t a, size_t len, uint32_t site, int owner);
TW_HIDDEN int tw_map_take(uintptr_t a, tw_map *out);
TW_HIDDEN int tw_map_get(uintptr_t a, tw_map *out); /* (left in) */
/* the mapping at \p from is now [to, to + len) (mremap): same site, owner,
 * start time */
TW_HIDDEN void tw_map_move(uintptr_t from, uintptr_t to, size_t len);
/* Mappings still live, of at least TIERWISE_OBJECTS_MIN bytes. */
TW_HIDDEN void tw_maps_live(void (*row)(uint32_t, uint64_t, uint64_t));
TW_HIDDEN void tw_obj_put(uintptr_t a, size_t len, uint32_t site, int owner);
TW_HIDDEN int tw_obj_take(uintptr_t a, tw_map *out);
/* The run report: sample the pages of [p, p+len) of \p site (at most 1024,
 * evenly spaced) into its node_pages (only with a run report). */
TW_HIDDEN void tw_site_sample_pages(uint32_t site, const void *p, size_t len);
/* Where the policy has an owner of page work (the room's watcher,
 * tw_room.c): it samples [p, p+len) for the calling thread, which waits for
 * it, bounded, and returns 1; 0: sampled by the caller. NULL: none. */
TW_HIDDEN extern int (*tw_sample_by)(uint32_t site, const void *p, size_t len);
/* At exit: sample the tracked mappings and large blocks still live (split
 * objects: tw_split_each). */
TW_HIDDEN void tw_maps_sample_live(void);
TW_HIDDEN void tw_maps_atfork(int phase); /* 0 prepare, 1 parent, 2 child */
/* A large glibc block (DRAM, placed or fallen back) whose pages the report
 * samples: recorded, and the page of its start marked TW_OWNER_SAMPLED, so
 * that its free leaves the inline path (whose instructions do not change)
 * for tw_dram_sampled_forget. */
TW_HIDDEN void tw_dram_sampled_put(void *p, size_t len, uint32_t site);
/* \p p, in a TW_OWNER_SAMPLED page, is freed or resized: if it is such a
 * block, its pages are sampled and its mark cleared; its site, or
 * TW_SITE_NONE (a small block in the same page: nothing to do). */
TW_HIDDEN uint32_t tw_dram_sampled_forget(void *p);

/* ---- tw_census.c: the census's records and output ---- */
/* A census block's header (tw_hdr.c), immediately below the user pointer:
 * its owner, size and site, so that a free accounts the site's live bytes
 * and the object timeline exactly, with no lookup. */
typedef struct tw_hdr {
  uint32_t tag;  /* magic:16 | log2(offset):8 | timed:1 | tier:7 */
  uint32_t site; /* site index, TW_SITE_NONE for the runtime's own blocks */
  uint64_t size; /* requested size */
} tw_hdr;
#define TW_MAGIC 0x7457u
#define TW_HDR_TIME 0x80u /* a 64-bit allocation time precedes the header */
#define TW_HDR_TIER(t) ((t) & 0x7fu)
#define TW_HDR_LOG2OFF(t) (((t) >> 8) & 0xffu)
_Static_assert(TW_TIER_COUNT <= 0x7f, "a tier fits the header's 7 bits");
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

/* ---- tw_sample.c: the pmu profiler's sampling (libtierwise-pmu.so) ---- */
/* Compiled only with TW_WITH_PMU: the census (TIERWISE_PMU_OUT) plus
 * precise memory events whose sample addresses are charged to the live
 * census objects holding them. Other builds have no sampling. */
#ifdef TW_WITH_PMU
/* At start-up: open the events on this thread and start the reader; 0, or
 * -1 when they do not open (and TIERWISE_PMU_ALLOW_NO_EVENTS is not 1). */
TW_HIDDEN int tw_sample_start(void);
TW_HIDDEN int tw_sampling(void); /* sampling started */
TW_HIDDEN void tw_sample_thread(void); /* open the events on this thread */
/* An object of at least objects_min bytes of \p site is live / released. */
TW_HIDDEN void tw_sample_live(const void *p, size_t size, uint32_t site);
TW_HIDDEN void tw_sample_dead(const void *p);
TW_HIDDEN void tw_sample_stop(void); /* at exit: stop reading, last drain */
TW_HIDDEN void tw_sample_end(void);  /* after the census is written */
/* sites.csv's count columns of \p site (TW_SITE_NONE: [unknown]), from the
 * first comma to the end of the line. */
TW_HIDDEN void tw_sample_columns(tw_out *o, uint32_t site);
TW_HIDDEN void tw_sample_params(tw_out *o); /* pmu.json */
TW_HIDDEN void tw_sample_atfork(int phase); /* 0 prepare, 1 parent, 2 child */
/* census: whether the sample columns end with `samples` (touch sampling) */
TW_HIDDEN int tw_sample_touching(void);

/* ---- tw_touch.c: page-touch sampling (TIERWISE_PMU_SOURCE=touch) ---- */
struct tw_pmu_attr;
TW_HIDDEN int tw_touch_start(struct tw_pmu_attr *attr, pthread_mutex_t *lock);
TW_HIDDEN void tw_touch_stop(void);
TW_HIDDEN void tw_touch_atfork(int phase);
/* Give back the sampled pages in [p, p + len) (len 0: of the object at p)
 * before that memory is freed, unmapped or re-protected. */
TW_HIDDEN void tw_touch_release(const void *p, size_t len);
/* Around a call that hands [buf, buf + len) to the kernel: begin returns
 * the token for end (-1: nothing to do). */
TW_HIDDEN int tw_touch_io_begin(const void *buf, size_t len);
TW_HIDDEN void tw_touch_io_end(int token);
TW_HIDDEN int tw_touch_owns_segv(void);
TW_HIDDEN int tw_touch_sigaction(const struct sigaction *act,
                                 struct sigaction *old);
TW_HIDDEN void tw_touch_columns(tw_out *o, int site);
TW_HIDDEN void tw_touch_params(tw_out *o);
#else
static inline void tw_touch_release(const void *p, size_t len) {
  (void)p, (void)len;
}
static inline int tw_sample_touching(void) { return 0; }
static inline int tw_touch_owns_segv(void) { return 0; }
static inline int tw_touch_sigaction(const struct sigaction *act,
                                     struct sigaction *old) {
  (void)act, (void)old;
  return -1;
}
static inline int tw_sample_start(void) { return -1; }
static inline int tw_sampling(void) { return 0; }
static inline void tw_sample_live(const void *p, size_t size, uint32_t site) {
  (void)p, (void)size, (void)site;
}
static inline void tw_sample_dead(const void *p) { (void)p; }
static inline void tw_sample_stop(void) {}
static inline void tw_sample_end(void) {}
static inline void tw_sample_atfork(int phase) { (void)phase; }
static inline void tw_sample_columns(tw_out *o, uint32_t site) {
  (void)site;
  tw_out_str(o, ",,,,,\n"); /* not measured */
}
static inline void tw_sample_params(tw_out *o) { (void)o; }
#endif
