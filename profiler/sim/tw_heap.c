/* SPDX-License-Identifier: MIT */
/* Heap block tracking of the tierwise Valgrind tool: replacement malloc
 * family, blocks announced by client requests (VALGRIND_MALLOCLIKE_BLOCK),
 * their life (the address map is tw_blockmap.c), allocation sites (one per
 * distinct stack after allocator frames are removed) and counter slots
 * (one per site and tier). */
#include "pub_tool_basics.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_replacemalloc.h"
#include "pub_tool_stacktrace.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_wordfm.h"

#include "tw_sim.h"
#include "tw_sitekey.h"

TwSlot *tw_slots;
UInt tw_n_slots;
static UInt cap_slots;
TwSite *tw_sites;
UInt tw_n_sites;
static UInt cap_sites;

static WordFM *stack_ids;  /* HChar* stack -> site id */
static WordFM *tier_slots; /* (site << 8 | tier) -> slot id */

#define MAX_IPS 80
#define NEEDS_DEEPER (~0u)
typedef struct {
  UInt n, site; /* site: NEEDS_DEEPER for a short trace that is too short */
  Bool deep;    /* from the deeper unwind */
  ULong hash;
  Addr ips[0];
} RawStack;

/* Raw stack (return addresses as unwound, and which unwind) -> site: open
 * addressing on tw_hash_ips, so a malloc from a known context costs one
 * probe. */
static RawStack **raw;
static UWord raw_mask, n_raw;

/* Word by word: VG_(memcmp) goes byte by byte. */
static Bool same_ips(const Addr *a, const Addr *b, UInt n) {
  for (UInt i = 0; i < n; i++)
    if (a[i] != b[i])
      return False;
  return True;
}

static RawStack **raw_slot(ULong h, Bool deep, const Addr *ips, UInt n) {
  for (UWord i = h & raw_mask;; i = (i + 1) & raw_mask) {
    RawStack *r = raw[i];
    if (!r || (r->hash == h && r->n == n && r->deep == deep &&
               same_ips(r->ips, ips, n)))
      return &raw[i];
  }
}

static void raw_grow(void) {
  RawStack **old = raw;
  UWord old_n = raw_mask + 1;
  raw_mask = 2 * old_n - 1;
  raw = VG_(calloc)("tw.raw", raw_mask + 1, sizeof *raw);
  for (UWord i = 0; i < old_n; i++)
    if (old[i])
      *raw_slot(old[i]->hash, old[i]->deep, old[i]->ips, old[i]->n) = old[i];
  VG_(free)(old);
}

/* Blocks come from a free list refilled a batch at a time: one arena
 * allocation per batch instead of one per block. */
static TwBlock *block_free_list;

static TwBlock *block_alloc(void) {
  if (!block_free_list) {
    enum { BATCH = 1024 };
    TwBlock *batch = VG_(malloc)("tw.block", BATCH * sizeof *batch);
    for (UInt i = 0; i < BATCH; i++) {
      *(TwBlock **)&batch[i] = block_free_list;
      block_free_list = &batch[i];
    }
  }
  TwBlock *b = block_free_list;
  block_free_list = *(TwBlock **)b;
  return b;
}

static void block_free(TwBlock *b) {
  *(TwBlock **)b = block_free_list;
  block_free_list = b;
}

static Word cmp_str(UWord k1, UWord k2) {
  return VG_(strcmp)((const HChar *)k1, (const HChar *)k2);
}

static UInt new_slot(UInt site, UInt tier) {
  if (tw_n_slots == tw_max_slots) {
    VG_(fmsg)("tierwise: more than %u (site, tier) pairs, the most the "
              "simulated caches can tell apart with these sizes; use a "
              "smaller --depth or caches with more sets\n",
              tw_max_slots);
    VG_(exit)(1);
  }
  if (tw_n_slots == cap_slots) {
    cap_slots = cap_slots ? 2 * cap_slots : 256;
    tw_slots = VG_(realloc)("tw.slots", tw_slots, cap_slots * sizeof(TwSlot));
  }
  TwSlot *s = &tw_slots[tw_n_slots];
  VG_(memset)(s, 0, sizeof *s);
  s->site = site;
  s->tier = tier;
  return tw_n_slots++;
}

static UInt new_site(HChar *stack) {
  if (tw_n_sites == cap_sites) {
    cap_sites = cap_sites ? 2 * cap_sites : 256;
    tw_sites = VG_(realloc)("tw.sites", tw_sites, cap_sites * sizeof(TwSite));
  }
  TwSite *s = &tw_sites[tw_n_sites];
  VG_(memset)(s, 0, sizeof *s);
  s->stack = stack;
  s->slot0 = new_slot(tw_n_sites, 0);
  return tw_n_sites++;
}

void tw_heap_init(void) {
  tw_map_init();
  raw_mask = 1023;
  raw = VG_(calloc)("tw.raw", raw_mask + 1, sizeof *raw);
  stack_ids = VG_(newFM)(VG_(malloc), "tw.ids", VG_(free), cmp_str);
  tier_slots = VG_(newFM)(VG_(malloc), "tw.tiers", VG_(free), NULL);
  new_site(VG_(strdup)("tw.site", "[static]"));
  new_site(VG_(strdup)("tw.site", "[stack]"));
  new_site(VG_(strdup)("tw.site", "[unknown]"));
}

UInt tw_slot_for(UInt site, UInt tier) {
  if (tier == 0)
    return tw_sites[site].slot0;
  UWord key = ((UWord)site << 8) | tier, slot;
  if (VG_(lookupFM)(tier_slots, NULL, &slot, key))
    return (UInt)slot;
  slot = new_slot(site, tier);
  VG_(addToFM)(tier_slots, key, slot);
  return (UInt)slot;
}

/* Remembers a raw trace not seen before: its site (formatting the trace
 * unless it is a short one marked NEEDS_DEEPER). */
static UInt remember_stack(RawStack **slot, ULong h, Bool deep, const Addr *ips,
                           UInt n, UInt site) {
  if (site != NEEDS_DEEPER) {
    HChar *stack = tw_format_stack(ips, n, tw_depth);
    UWord id, old_key;
    if (!stack[0]) { /* no user frame (tw_stack_format): not a site; its
                      * accesses are [unknown]'s, as in native runs */
      VG_(free)(stack);
      id = TW_SITE_UNKNOWN;
    } else if (VG_(lookupFM)(stack_ids, &old_key, &id, (UWord)stack)) {
      VG_(free)(stack);
    } else {
      id = new_site(stack);
      VG_(addToFM)(stack_ids, (UWord)stack, id);
    }
    site = (UInt)id;
  }
  RawStack *r = VG_(malloc)("tw.raw", sizeof(RawStack) + n * sizeof(Addr));
  r->n = n;
  r->site = site;
  r->deep = deep;
  r->hash = h;
  VG_(memcpy)(r->ips, ips, n * sizeof(Addr));
  *slot = r;
  if (++n_raw > raw_mask / 2)
    raw_grow();
  return site;
}

static UInt site_of_stack(ThreadId tid) {
  /* the last allocation needed the deeper unwind (allocation-heavy code
   * repeats its contexts) */
  static Bool go_deep;
  Addr ips[MAX_IPS];
  /* Usually one allocator frame (the vgpreload replacement) precedes the
   * user frames: a short trace identifies the site unless it was cut short
   * of `depth` user frames, in which case a deeper one is the key. Known
   * traces cost one hash probe; a short trace known to be too short
   * (which depends only on its addresses) costs one probe and the deeper
   * unwind. A short trace is the start of a deeper one (the unwinder
   * stops at the limit), so after an allocation that needed the deeper
   * unwind the next one unwinds deep at once and takes its short trace
   * from there. */
  UInt want = tw_depth + 3;
  UInt deep = tw_depth + 24 < MAX_IPS ? tw_depth + 24 : MAX_IPS;
  UInt n_deep = 0, n;
  if (go_deep) {
    n_deep = VG_(get_StackTrace)(tid, ips, deep, NULL, NULL, 0);
    n = n_deep < want ? n_deep : want;
  } else {
    n = VG_(get_StackTrace)(tid, ips, want, NULL, NULL, 0);
  }
  ULong h = tw_hash_ips((const uintptr_t *)ips, (int)n);
  RawStack **slot = raw_slot(h, False, ips, n);
  if (!*slot) {
    /* a trace that ended (past _start) within the short unwind is whole */
    Bool ended;
    Bool short_ = n == want && tw_user_frames(ips, n, &ended) < (UInt)tw_depth &&
                  !ended;
    if (!short_) {
      go_deep = False;
      return remember_stack(slot, h, False, ips, n, 0);
    }
    remember_stack(slot, h, False, ips, n, NEEDS_DEEPER);
  } else if ((*slot)->site != NEEDS_DEEPER) {
    go_deep = False;
    return (*slot)->site;
  }
  go_deep = True;
  if (!n_deep)
    n_deep = VG_(get_StackTrace)(tid, ips, deep, NULL, NULL, 0);
  h = tw_hash_ips((const uintptr_t *)ips, (int)n_deep);
  slot = raw_slot(h, True, ips, n_deep);
  if (*slot)
    return (*slot)->site;
  return remember_stack(slot, h, True, ips, n_deep, 0);
}

/* Owner of an address outside every heap block. A one-page memo keeps
 * repeated misses on the same static page cheap. */
UInt tw_classify_nonheap(Addr a) {
  static Addr memo_page = ~(Addr)0;
  static UInt memo_site;
  ThreadId tid;
  Addr lo, hi;
  VG_(thread_stack_reset_iter)(&tid);
  while (VG_(thread_stack_next)(&tid, &lo, &hi)) {
    Addr base = hi + 1 - VG_(thread_get_stack_size)(tid);
    if (a >= base && a <= hi)
      return TW_SITE_STACK;
  }
  if ((a >> 12) == memo_page)
    return memo_site;
  memo_page = a >> 12;
  memo_site = VG_(DebugInfo_sect_kind)(NULL, a) != Vg_SectUnknown
                  ? TW_SITE_STATIC
                  : TW_SITE_UNKNOWN;
  return memo_site;
}

/* Set once a malloc'ed block was retracted: cached lines of it may stay
 * uniform with its slot after it is gone, so from then on every new block
 * forgets its range in the caches (tw_cache_forget_fresh_range). */
static Bool retracted;

/* Forgets a malloc'ed block that a custom allocator (the tierwise runtime)
 * carved its own announced block out of: the announced one replaces it. */
static void retract(TwBlock *b) {
  retracted = True;
  tw_map_remove(b);
  TwSite *s = &tw_sites[b->site];
  s->allocs--;
  s->bytes_allocated -= b->size;
  s->cur_bytes -= b->size;
  tw_slots[b->slot].allocs--;
  tw_slots[b->slot].bytes_allocated -= b->size;
  block_free(b);
}

TwBlock *tw_new_block(ThreadId tid, Addr p, SizeT size, Bool custom) {
  /* malloc never hands out overlapping memory; announced blocks may lie in
   * a malloc'ed one (the runtime's own blocks) or be announced twice. */
  TwBlock *old;
  while (custom && (old = tw_map_overlap(p, size ? size : 1))) {
    if (old->custom)
      return old; /* already tracked (e.g. announced twice) */
    retract(old);
  }
  return tw_new_block_at(p, size, site_of_stack(tid), custom);
}

/* A new block at a known site, where no block is. */
TwBlock *tw_new_block_at(Addr p, SizeT size, UInt site, Bool custom) {
  TwBlock *b = block_alloc();
  b->start = p;
  b->size = size;
  b->alloc_time = tw_icount;
  b->site = site;
  b->tier = 0;
  b->slot = tw_sites[b->site].slot0;
  b->custom = custom;
  b->mapped = False;
  b->hosting = 0;
  tw_map_insert(b);
  TwSite *s = &tw_sites[b->site];
  s->allocs++;
  s->bytes_allocated += size;
  s->cur_bytes += size;
  if (s->cur_bytes > s->peak_bytes)
    s->peak_bytes = s->cur_bytes;
  tw_slots[b->slot].allocs++;
  tw_slots[b->slot].bytes_allocated += size;
  if (custom || retracted)
    tw_cache_forget_range(p, size);
  else
    tw_cache_forget_fresh_range(p, size);
  return b;
}

void tw_write_object(UInt site, SizeT size, ULong alloc_time, Bool freed) {
  /* a pseudo-site's block (no user frame, remember_stack) has no object */
  if ((Long)size < tw_objects_min_bytes || site < TW_FIRST_SITE)
    return;
  if (freed)
    tw_out_printf(&tw_objects_out, "%u,%lu,%llu,%llu\n", site - TW_FIRST_SITE,
                  size, alloc_time, tw_icount);
  else
    tw_out_printf(&tw_objects_out, "%u,%lu,%llu,\n", site - TW_FIRST_SITE,
                  size, alloc_time);
}

static void write_object(const TwBlock *b, Bool freed) {
  tw_write_object(b->site, b->size, b->alloc_time, freed);
}

/* The site of a stack given as return addresses (a pool's hand-out:
 * tw_poolfn.c), through the deep raw-stack table. */
UInt tw_site_of_ips(const Addr *ips, UInt n) {
  ULong h = tw_hash_ips((const uintptr_t *)ips, (int)n);
  RawStack **slot = raw_slot(h, True, ips, n);
  if (*slot)
    return (*slot)->site;
  return remember_stack(slot, h, True, ips, n, 0);
}

/* Accesses to b are charged to counter slot \p slot from now on. */
void tw_retag_block(TwBlock *b, UInt slot) {
  b->slot = slot;
  tw_map_slot_changed(b);
  tw_cache_forget_range(b->start, b->size);
}

/* Ends the block starting at p if it is of the kind asked for: free and
 * FREELIKE end malloc'ed and announced blocks, munmap ends mappings. */
static void release(TwBlock *b, Bool mapped) {
  if (!b || b->mapped != mapped)
    return;
  if (b->hosting)
    tw_poolfn_host_gone(b);
  tw_map_remove(b);
  tw_sites[b->site].cur_bytes -= b->size;
  write_object(b, True);
  tw_cache_forget_inside(b->start, b->size);
  block_free(b);
}

void tw_release_block(Addr p, Bool mapped) { release(tw_block_at(p), mapped); }

/* Ends every mapping overlapping [a, a+len) (munmap, or a new mapping over
 * the range of one whose unmapping was not seen). */
void tw_unmap_range(Addr a, SizeT len) {
  TwBlock *b;
  while ((b = tw_map_overlap(a, len ? len : 1))) {
    if (!b->mapped)
      return;
    tw_release_block(b->start, True);
  }
}

void tw_set_block_tier(Addr p, UInt tier) {
  TwBlock *b = tw_block_at(p);
  if (!b || tier >= TW_MAX_TIERS)
    return;
  TwSlot *old = &tw_slots[b->slot];
  old->allocs--;
  old->bytes_allocated -= b->size;
  b->tier = tier;
  b->slot = tw_slot_for(b->site, tier);
  tw_map_slot_changed(b);
  tw_slots[b->slot].allocs++;
  tw_slots[b->slot].bytes_allocated += b->size;
  tw_cache_forget_range(b->start, b->size);
}

/* Blocks still live at exit go to objects.csv with an empty free time. */
static void write_live(const TwBlock *b) { write_object(b, False); }

void tw_heap_fini(void) {
  tw_map_for_each(write_live);
  tw_poolfn_fini();
}

/* ---- replacement malloc family ---- */

static void *tw_alloc(ThreadId tid, SizeT n, SizeT align, Bool zero) {
  if ((SSizeT)n < 0)
    return NULL;
  void *p = VG_(cli_malloc)(align, n);
  if (!p)
    return NULL;
  /* the address map's entry for the block's first chunk arrives while the
   * stack is unwound */
  tw_map_prefetch((Addr)p);
  if (zero)
    VG_(memset)(p, 0, n);
  tw_new_block(tid, (Addr)p, n, False);
  return p;
}

static void *tw_malloc(ThreadId tid, SizeT n) {
  return tw_alloc(tid, n, VG_(clo_alignment), False);
}
static void *tw_memalign(ThreadId tid, SizeT align, SizeT n) {
  return tw_alloc(tid, n, align, False);
}
static void *tw_new_aligned(ThreadId tid, SizeT n, SizeT align) {
  return tw_alloc(tid, n, align, False);
}
static void *tw_calloc(ThreadId tid, SizeT m, SizeT size) {
  if (size && m > ((SizeT)-1) / size)
    return NULL;
  return tw_alloc(tid, m * size, VG_(clo_alignment), True);
}
static void tw_free(ThreadId tid, void *p) {
  /* The host's cache misses overlap: the arena's header of p (read by
   * cli_free) while the address map is read, the block while the arena
   * frees p (release touches no client memory). */
  __builtin_prefetch((const char *)p - 16);
  TwBlock *b = tw_block_at((Addr)p);
  if (b) { /* 40 bytes: may span two host lines */
    __builtin_prefetch(b);
    __builtin_prefetch((const char *)(b + 1) - 1);
  }
  VG_(cli_free)(p);
  release(b, False);
}
static void tw_free_aligned(ThreadId tid, void *p, SizeT align) {
  tw_free(tid, p);
}
static void *tw_realloc(ThreadId tid, void *p, SizeT n) {
  if (!p)
    return tw_malloc(tid, n);
  TwBlock *old = tw_block_at((Addr)p);
  if (!old)
    return NULL; /* not ours: the core reports nothing, like DHAT */
  void *q = tw_malloc(tid, n);
  if (!q)
    return NULL;
  VG_(memcpy)(q, p, old->size < n ? old->size : n);
  tw_free(tid, p);
  return q;
}
static SizeT tw_usable_size(ThreadId tid, void *p) {
  TwBlock *b = tw_block_at((Addr)p);
  return b ? b->size : 0;
}

void tw_register_malloc_replacement(void) {
  VG_(needs_malloc_replacement)(tw_malloc, tw_malloc, tw_new_aligned, tw_malloc,
                                tw_new_aligned, tw_memalign, tw_calloc, tw_free,
                                tw_free, tw_free_aligned, tw_free,
                                tw_free_aligned, tw_realloc, tw_usable_size, 0);
}
