/* SPDX-License-Identifier: MIT */
/* Internal interface of the tierwise Valgrind tool (sim backend): heap block
 * tracking with sites (tw_heap.c), the cache simulator (tw_cache.c), the
 * instrumenter (tw_instr.c) and output (tw_main.c). */
#ifndef TW_SIM_H
#define TW_SIM_H

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"

/* Pseudo-sites: accesses outside any tracked heap block. Internal site ids
 * 0..2; real sites start at TW_FIRST_SITE. */
enum { TW_SITE_STATIC = 0, TW_SITE_STACK = 1, TW_SITE_UNKNOWN = 2 };
#define TW_FIRST_SITE 3
#define TW_MAX_TIERS 21 /* untagged + tierwise.h's TW_TIER_COUNT */

/* The access counters of a slot: the count columns of sites.csv, and what
 * --roi windows (tw_roi.c). */
#define TW_SLICES 16 /* llc_miss_slice0..15: equal slices of a block's extent */
typedef struct {
  ULong loads, stores, llc_load_misses, llc_store_misses, writebacks;
  ULong llc_stream_misses; /* of the LLC misses, those continuing a sweep */
  /* interval model (tw_interval.c): of the LLC misses, those overlapped
   * with an earlier outstanding miss, those whose address depends on an
   * earlier missing load; and the sum over misses of the misses in flight
   * in the window when each issued (itself included) */
  ULong llc_overlapped_misses, llc_dependent_misses, llc_inflight_misses;
  ULong atomics; /* locked read-modify-writes (CAS, LL/SC) on the slot */
  /* of the LLC misses in heap blocks, those in each of TW_SLICES equal
   * slices of the block's extent (first slice: the block's start) */
  ULong llc_miss_slice[TW_SLICES];
} TwCounts;

/* to += plus - minus, counter by counter (minus may be NULL). */
static inline void tw_counts_add(TwCounts *to, const TwCounts *plus,
                                 const TwCounts *minus) {
  static const TwCounts zero;
  if (!minus)
    minus = &zero;
  to->loads += plus->loads - minus->loads;
  to->stores += plus->stores - minus->stores;
  to->llc_load_misses += plus->llc_load_misses - minus->llc_load_misses;
  to->llc_store_misses += plus->llc_store_misses - minus->llc_store_misses;
  to->writebacks += plus->writebacks - minus->writebacks;
  to->llc_stream_misses += plus->llc_stream_misses - minus->llc_stream_misses;
  to->llc_overlapped_misses +=
      plus->llc_overlapped_misses - minus->llc_overlapped_misses;
  to->llc_dependent_misses +=
      plus->llc_dependent_misses - minus->llc_dependent_misses;
  to->llc_inflight_misses +=
      plus->llc_inflight_misses - minus->llc_inflight_misses;
  to->atomics += plus->atomics - minus->atomics;
  for (Int i = 0; i < TW_SLICES; i++)
    to->llc_miss_slice[i] += plus->llc_miss_slice[i] - minus->llc_miss_slice[i];
}

/* A counter slot: one (site, tier) pair. Simulated cache lines carry the
 * slot id of their owner so that hits are charged without a lookup. */
typedef struct {
  TwCounts n;
  ULong allocs, bytes_allocated;
  UInt site, tier;
} TwSlot;

#define TW_POOL_HOSTS 4 /* pool block sites tracked per hand-out site */

typedef struct {
  HChar *stack; /* "mod+0xoff;..." (allocator frames removed) */
  UInt slot0;   /* counter slot of this site's untiered blocks */
  ULong allocs, bytes_allocated, cur_bytes, peak_bytes;
  /* A site of pool hand-outs (tw_poolfn.c): the sites of the heap blocks
   * its hand-outs lay in, with the hand-out bytes of each (the first
   * TW_POOL_HOSTS; sites.csv `pool_stack` names the one with the most). */
  UInt pool_host[TW_POOL_HOSTS];
  ULong pool_host_bytes[TW_POOL_HOSTS];
  UInt n_pool_hosts;
} TwSite;

/* A live heap block. */
typedef struct {
  Addr start;
  SizeT size;
  ULong alloc_time;
  UInt site, slot, tier;
  Bool custom; /* announced by VALGRIND_MALLOCLIKE_BLOCK */
  Bool mapped; /* a client anonymous mmap (tw_mmap.c) */
  UShort hosting; /* live pool hand-outs inside it (tw_poolfn.c) */
} TwBlock;

/* Options. */
extern Int tw_depth;
extern Long tw_objects_min_bytes;
extern ULong tw_icount; /* guest instructions executed (the clock) */

/* Counter slots (grown on demand; index with slot id). */
extern TwSlot *tw_slots;
extern UInt tw_n_slots;
extern TwSite *tw_sites;
extern UInt tw_n_sites;
extern const HChar *tw_tier_names[TW_MAX_TIERS];

/* tw_blockmap.c: address -> live block */
typedef struct {
  Addr start;
  SizeT size; /* its extent: the block's size, 1 for an empty block */
  TwBlock *b;
  UInt slot;
} TwOwner; /* a live block as the cache simulator sees it */
void tw_map_init(void);
void tw_map_insert(TwBlock *b);
void tw_map_remove(TwBlock *b);
void tw_map_slot_changed(TwBlock *b);
TwBlock *tw_find_block(Addr a);
TwBlock *tw_block_at(Addr p); /* the block starting at p */
void tw_map_prefetch(Addr p); /* soon asked about the chunk of p */
const TwOwner *tw_find_owner(Addr a);
TwBlock *tw_map_overlap(Addr a, SizeT len);
Bool tw_range_has_block(Addr a, SizeT len);
void tw_map_for_each(void (*f)(const TwBlock *));

/* tw_heap.c */
void tw_heap_init(void);
UInt tw_classify_nonheap(Addr a);
UInt tw_slot_for(UInt site, UInt tier);
TwBlock *tw_new_block(ThreadId tid, Addr p, SizeT size, Bool custom);
TwBlock *tw_new_block_at(Addr p, SizeT size, UInt site, Bool custom);
UInt tw_site_of_ips(const Addr *ips, UInt n);
void tw_retag_block(TwBlock *b, UInt slot);
void tw_write_object(UInt site, SizeT size, ULong alloc_time, Bool freed);
void tw_release_block(Addr p, Bool mapped);
void tw_unmap_range(Addr a, SizeT len);
void tw_set_block_tier(Addr p, UInt tier);
void tw_heap_fini(void);
void tw_register_malloc_replacement(void);

/* tw_mmap.c: client anonymous mmaps as heap blocks */
void tw_pre_syscall(ThreadId tid, UInt sysno, UWord *args, UInt n_args);
void tw_post_syscall(ThreadId tid, UInt sysno, UWord *args, UInt n_args,
                     SysRes res);

/* tw_sitekey.c: site identity per advisor/FORMATS.md */
HChar *tw_format_stack(const Addr *ips, UInt n_ips, Int depth);

/* tw_cache.c */
extern UInt tw_max_slots; /* counter slots a simulated cache way can name */
void tw_cache_init(ULong llc_size, UInt llc_ways, UInt line, ULong l1_size,
                   UInt l1_ways);
/* The second argument of tw_load/tw_store: the access size in the low 16
 * bits, above them the access's descriptor id (tw_interval.c; 0: none). */
#define TW_ACC_SIZE(arg) ((arg) & 0xFFFFu)
#define TW_ACC_DESC(arg) ((UInt)((arg) >> 16))
VG_REGPARM(2) void tw_load(Addr a, UWord arg);
VG_REGPARM(2) void tw_store(Addr a, UWord arg);
/* tw_load and tw_store, or the same specialised for this cache geometry */
void tw_cache_helpers(void **load, void **store);
void tw_cache_forget_range(Addr a, SizeT len);
void tw_cache_forget_fresh_range(Addr a, SizeT len);
void tw_cache_forget_inside(Addr a, SizeT len);
void tw_cache_flush(void);
void tw_cache_reset(void);

/* tw_stream.c: an LLC miss of slot on line: sequential or not */
Bool tw_stream_miss(UInt slot, Addr line);

/* tw_interval.c: the interval model (memory-level parallelism) */
extern Long tw_rob, tw_mshr; /* --rob, --mshr */
typedef struct {
  ULong prod; /* loads of this superblock (bit k: descriptor base + k) whose
                 values its address depends on */
  UInt base;  /* descriptor id of the superblock's first load */
  UShort regs;  /* guest integer registers, as at superblock entry, its
                   address depends on (bit r: amd64 GPR r) */
  UShort instr; /* its instruction's index in the superblock (from 1) */
  UShort seg;   /* instructions since tw_icount was last advanced */
  Bool atomic;  /* part of a locked read-modify-write (CAS, LL/SC) */
} TwAccDesc;
UInt tw_desc_new(const TwAccDesc *d); /* its id */
UInt tw_desc_next(void);               /* the id the next one gets */
Int tw_gpr_at(Int offset); /* guest state offset -> GPR bit number, or -1 */
void tw_interval_miss(UInt slot, UInt desc, Addr a, UWord size, Bool store,
                      Bool stream);
VG_REGPARM(1) void tw_atomic(Addr a); /* a locked RMW on a's slot */

/* tw_instr.c */
IRSB *tw_instrument(VgCallbackClosure *closure, IRSB *sbIn,
                    const VexGuestLayout *layout, const VexGuestExtents *vge,
                    const VexArchInfo *archinfo_host, IRType gWordTy,
                    IRType hWordTy);

/* tw_poolfn.c: a program's pool allocator (--alloc-fn, --free-fn) */
Bool tw_poolfn_option(const HChar *spec, Bool is_free);
Bool tw_poolfn_any(void);
Int tw_poolfn_at(Addr a);
VG_REGPARM(2) void tw_poolfn_entered(Addr sp, UWord fn);
VG_REGPARM(1) void tw_poolfn_returned(Addr sp);
void tw_poolfn_host_gone(TwBlock *b);
void tw_poolfn_fini(void);

/* tw_roi.c: region of interest (--roi) */
Bool tw_roi_set(const HChar *spec);
Bool tw_roi_is_function(void);
Bool tw_roi_is_entry(Addr a);
void tw_roi_marker(Bool begin);
VG_REGPARM(1) void tw_roi_func_entered(Addr sp);
VG_REGPARM(1) void tw_roi_returned(Addr sp);
void tw_roi_fork_child(void);
void tw_roi_fini(void);

/* tw_main.c: buffered output */
typedef struct {
  Int fd;
  UInt used;
  HChar buf[65536];
} TwOut;
Bool tw_out_open(TwOut *o, const HChar *suffix);
void tw_out_printf(TwOut *o, const HChar *fmt, ...) PRINTF_CHECK(2, 3);
void tw_out_close(TwOut *o);
extern TwOut tw_objects_out;
void tw_write_modules(TwOut *o);
void tw_roi_write_stats(TwOut *o); /* tw_roi.c */
/* User frames (after the allocator's) of a trace; *ended: the trace ended
 * at a non-executable address (past _start) within ips. */
UInt tw_user_frames(const Addr *ips, UInt n_ips, Bool *ended);

#endif
