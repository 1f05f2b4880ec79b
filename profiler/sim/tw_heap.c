/* SPDX-License-Identifier: MIT */
/* Heap block tracking of the tierwise Valgrind tool: replacement malloc
 * family, blocks announced by client requests (VALGRIND_MALLOCLIKE_BLOCK),
 * an interval map from address to live block, allocation sites (one per
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

static WordFM *blocks;     /* TwBlock* (interval key) -> 0 */
static WordFM *stack_ids;  /* HChar* stack -> site id */
static WordFM *tier_slots; /* (site << 8 | tier) -> slot id */
static TwBlock *last_block;

/* Edge map: for each block, entries for its first and last cache-line-sized
 * chunk (64 bytes here, independent of the simulated line size). A chunk
 * with entries holds a block boundary; any block overlapping it is among
 * its entries. A chunk without entries is inside one block or in none, so
 * one interval-map lookup answers it. This keeps lookups on the small,
 * boundary-sharing blocks of allocation-heavy programs O(1). */
#define EDGE_BITS 6
typedef struct Edge {
  Addr chunk;
  TwBlock *b;
  struct Edge *next;
} Edge;
static Edge **edges;
static UWord edge_mask, n_edges;
static Edge *edge_free;

static inline UWord edge_hash(Addr chunk) {
  return (chunk * 0x9E3779B97F4A7C15ULL) >> 20 & edge_mask;
}

static void edge_grow(void) {
  UWord old_n = edge_mask + 1, new_n = old_n * 2;
  Edge **t = VG_(calloc)("tw.edges", new_n, sizeof(Edge *));
  UWord old_mask = edge_mask;
  edge_mask = new_n - 1;
  for (UWord i = 0; i <= old_mask; i++) {
    for (Edge *e = edges[i], *next; e; e = next) {
      next = e->next;
      UWord h = edge_hash(e->chunk);
      e->next = t[h];
      t[h] = e;
    }
  }
  VG_(free)(edges);
  edges = t;
}

static void edge_add(Addr chunk, TwBlock *b) {
  if (n_edges > edge_mask)
    edge_grow();
  Edge *e = edge_free;
  if (e)
    edge_free = e->next;
  else
    e = VG_(malloc)("tw.edge", sizeof *e);
  UWord h = edge_hash(chunk);
  e->chunk = chunk;
  e->b = b;
  e->next = edges[h];
  edges[h] = e;
  n_edges++;
}

static void edge_del(Addr chunk, TwBlock *b) {
  for (Edge **pp = &edges[edge_hash(chunk)]; *pp; pp = &(*pp)->next) {
    Edge *e = *pp;
    if (e->chunk == chunk && e->b == b) {
      *pp = e->next;
      e->next = edge_free;
      edge_free = e;
      n_edges--;
      return;
    }
  }
}

static inline Addr last_chunk(const TwBlock *b) {
  return (b->start + (b->size ? b->size : 1) - 1) >> EDGE_BITS;
}

static void edges_insert(TwBlock *b) {
  edge_add(b->start >> EDGE_BITS, b);
  if (last_chunk(b) != b->start >> EDGE_BITS)
    edge_add(last_chunk(b), b);
}

static void edges_remove(TwBlock *b) {
  edge_del(b->start >> EDGE_BITS, b);
  if (last_chunk(b) != b->start >> EDGE_BITS)
    edge_del(last_chunk(b), b);
}

/* Page memo: for recently looked-up 4 KiB pages, the block that covered the
 * address looked up there (NULL: no block overlaps the page at all). It
 * answers lookups inside large blocks and in non-heap memory without the
 * interval map; entries of a block's pages are dropped when blocks are
 * created or freed there. */
#define PAGE_BITS 12
#define MEMO_SIZE 4096
static struct {
  Addr page;
  TwBlock *b;
} memo[MEMO_SIZE];

static void memo_drop(Addr start, SizeT size) {
  Addr first = start >> PAGE_BITS;
  Addr last = (start + (size ? size : 1) - 1) >> PAGE_BITS;
  if (last - first >= MEMO_SIZE) {
    for (UInt i = 0; i < MEMO_SIZE; i++)
      if (memo[i].page >= first && memo[i].page <= last)
        memo[i].page = ~(Addr)0;
    return;
  }
  for (Addr pg = first; pg <= last; pg++)
    if (memo[pg % MEMO_SIZE].page == pg)
      memo[pg % MEMO_SIZE].page = ~(Addr)0;
}

/* 1: a is in *out; 0: no block holds a; -1: chunk has no edges, ask the
 * interval map. */
static inline Int edge_find(Addr a, TwBlock **out) {
  Addr chunk = a >> EDGE_BITS;
  Int seen = 0;
  for (Edge *e = edges[edge_hash(chunk)]; e; e = e->next) {
    if (e->chunk != chunk)
      continue;
    seen = 1;
    if (a - e->b->start < (e->b->size ? e->b->size : 1)) {
      *out = e->b;
      return 1;
    }
  }
  return seen ? 0 : -1;
}

#define MAX_IPS 80
typedef struct {
  UInt n, site;
  ULong hash;
  Addr ips[0];
} RawStack;

/* Raw stack (return addresses as unwound) -> site: open addressing on
 * tw_hash_ips, so a malloc from a known context costs one probe. */
static RawStack **raw;
static UWord raw_mask, n_raw;

static RawStack **raw_slot(ULong h, const Addr *ips, UInt n) {
  for (UWord i = h & raw_mask;; i = (i + 1) & raw_mask) {
    RawStack *r = raw[i];
    if (!r || (r->hash == h && r->n == n &&
               VG_(memcmp)(r->ips, ips, n * sizeof(Addr)) == 0))
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
      *raw_slot(old[i]->hash, old[i]->ips, old[i]->n) = old[i];
  VG_(free)(old);
}

static Word cmp_blocks(UWord k1, UWord k2) {
  const TwBlock *a = (const TwBlock *)k1, *b = (const TwBlock *)k2;
  SizeT sa = a->size ? a->size : 1, sb = b->size ? b->size : 1;
  if (a->start + sa <= b->start)
    return -1;
  if (b->start + sb <= a->start)
    return 1;
  return 0;
}

static Word cmp_str(UWord k1, UWord k2) {
  return VG_(strcmp)((const HChar *)k1, (const HChar *)k2);
}

static UInt new_slot(UInt site, UInt tier) {
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
  blocks = VG_(newFM)(VG_(malloc), "tw.blocks", VG_(free), cmp_blocks);
  raw_mask = 1023;
  raw = VG_(calloc)("tw.raw", raw_mask + 1, sizeof *raw);
  stack_ids = VG_(newFM)(VG_(malloc), "tw.ids", VG_(free), cmp_str);
  tier_slots = VG_(newFM)(VG_(malloc), "tw.tiers", VG_(free), NULL);
  for (UInt i = 0; i < MEMO_SIZE; i++)
    memo[i].page = ~(Addr)0;
  edge_mask = 4095;
  edges = VG_(calloc)("tw.edges", edge_mask + 1, sizeof(Edge *));
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

static UInt site_of_stack(ThreadId tid) {
  Addr ips[MAX_IPS];
  /* Usually one allocator frame (the vgpreload replacement) precedes the
   * user frames: a short trace identifies the site unless it was cut short
   * of `depth` user frames, in which case a deeper one is the key. Known
   * traces cost one hash probe. */
  UInt want = tw_depth + 3;
  UInt n = VG_(get_StackTrace)(tid, ips, want, NULL, NULL, 0);
  ULong h = tw_hash_ips((const uintptr_t *)ips, (int)n);
  RawStack **slot = raw_slot(h, ips, n);
  if (*slot)
    return (*slot)->site;
  if (n == want && tw_user_frames(ips, n) < (UInt)tw_depth) {
    want = tw_depth + 24 < MAX_IPS ? tw_depth + 24 : MAX_IPS;
    n = VG_(get_StackTrace)(tid, ips, want, NULL, NULL, 0);
    h = tw_hash_ips((const uintptr_t *)ips, (int)n);
    slot = raw_slot(h, ips, n);
    if (*slot)
      return (*slot)->site;
  }
  HChar *stack = tw_format_stack(ips, n, tw_depth);
  UWord site, old_key;
  if (VG_(lookupFM)(stack_ids, &old_key, &site, (UWord)stack)) {
    VG_(free)(stack);
  } else {
    site = new_site(stack);
    VG_(addToFM)(stack_ids, (UWord)stack, site);
  }
  RawStack *r = VG_(malloc)("tw.raw", sizeof(RawStack) + n * sizeof(Addr));
  r->n = n;
  r->site = (UInt)site;
  r->hash = h;
  VG_(memcpy)(r->ips, ips, n * sizeof(Addr));
  *slot = r;
  if (++n_raw > raw_mask / 2)
    raw_grow();
  return (UInt)site;
}

TwBlock *tw_find_block(Addr a) {
  TwBlock *b = last_block;
  if (b && a - b->start < (b->size ? b->size : 1))
    return b;
  Int r = edge_find(a, &b);
  if (r == 0)
    return NULL;
  if (r < 0) {
    Addr pg = a >> PAGE_BITS;
    UInt m = pg % MEMO_SIZE;
    if (memo[m].page == pg) {
      b = memo[m].b;
      if (!b)
        return NULL;
      if (a - b->start < b->size) {
        last_block = b;
        return b;
      }
    }
    TwBlock key = {.start = a, .size = 1};
    UWord k;
    if (!VG_(lookupFM)(blocks, &k, NULL, (UWord)&key)) {
      TwBlock page = {.start = pg << PAGE_BITS, .size = 1u << PAGE_BITS};
      if (!VG_(lookupFM)(blocks, NULL, NULL, (UWord)&page)) {
        memo[m].page = pg;
        memo[m].b = NULL;
      }
      return NULL;
    }
    b = (TwBlock *)k;
    memo[m].page = pg;
    memo[m].b = b;
  }
  last_block = b;
  return b;
}

Bool tw_range_has_block(Addr a, SizeT len) {
  Addr pg = a >> PAGE_BITS;
  if (memo[pg % MEMO_SIZE].page == pg && (a + len - 1) >> PAGE_BITS == pg) {
    const TwBlock *b = memo[pg % MEMO_SIZE].b;
    if (!b)
      return False;
    if (b->start <= a && a + len <= b->start + b->size)
      return True;
  }
  if (len <= (1u << EDGE_BITS) &&
      (a >> EDGE_BITS) == ((a + len - 1) >> EDGE_BITS)) {
    TwBlock *b;
    if (edge_find(a, &b) >= 0)
      return True; /* the chunk holds a boundary, hence a block */
  }
  TwBlock key = {.start = a, .size = len};
  return VG_(lookupFM)(blocks, NULL, NULL, (UWord)&key);
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

/* Forgets a malloc'ed block that a custom allocator (the tierwise runtime)
 * carved its own announced block out of: the announced one replaces it. */
static void retract(TwBlock *b) {
  VG_(delFromFM)(blocks, NULL, NULL, (UWord)b);
  edges_remove(b);
  memo_drop(b->start, b->size);
  if (last_block == b)
    last_block = NULL;
  TwSite *s = &tw_sites[b->site];
  s->allocs--;
  s->bytes_allocated -= b->size;
  s->cur_bytes -= b->size;
  tw_slots[b->slot].allocs--;
  tw_slots[b->slot].bytes_allocated -= b->size;
  VG_(free)(b);
}

TwBlock *tw_new_block(ThreadId tid, Addr p, SizeT size, Bool custom) {
  TwBlock key = {.start = p, .size = size};
  UWord k;
  /* malloc never hands out overlapping memory; announced blocks may lie in
   * a malloc'ed one (the runtime's own blocks) or be announced twice. */
  while (custom && VG_(lookupFM)(blocks, &k, NULL, (UWord)&key)) {
    TwBlock *old = (TwBlock *)k;
    if (!custom || old->custom)
      return old; /* already tracked (e.g. announced twice) */
    retract(old);
  }
  TwBlock *b = VG_(malloc)("tw.block", sizeof *b);
  b->start = p;
  b->size = size;
  b->alloc_time = tw_icount;
  b->site = site_of_stack(tid);
  b->tier = 0;
  b->slot = tw_sites[b->site].slot0;
  b->custom = custom;
  b->mapped = False;
  VG_(addToFM)(blocks, (UWord)b, 0);
  edges_insert(b);
  memo_drop(p, size);
  TwSite *s = &tw_sites[b->site];
  s->allocs++;
  s->bytes_allocated += size;
  s->cur_bytes += size;
  if (s->cur_bytes > s->peak_bytes)
    s->peak_bytes = s->cur_bytes;
  tw_slots[b->slot].allocs++;
  tw_slots[b->slot].bytes_allocated += size;
  tw_cache_forget_range(p, size);
  return b;
}

static void write_object(const TwBlock *b, Bool freed) {
  if ((Long)b->size < tw_objects_min_bytes)
    return;
  if (freed)
    tw_out_printf(&tw_objects_out, "%u,%lu,%llu,%llu\n",
                  b->site - TW_FIRST_SITE, b->size, b->alloc_time, tw_icount);
  else
    tw_out_printf(&tw_objects_out, "%u,%lu,%llu,\n", b->site - TW_FIRST_SITE,
                  b->size, b->alloc_time);
}

static TwBlock *block_at(Addr p) {
  TwBlock *b = tw_find_block(p);
  return (b && b->start == p) ? b : NULL;
}

/* Ends the block starting at p if it is of the kind asked for: free and
 * FREELIKE end malloc'ed and announced blocks, munmap ends mappings. */
void tw_release_block(Addr p, Bool mapped) {
  TwBlock *b = block_at(p);
  if (!b || b->mapped != mapped)
    return;
  VG_(delFromFM)(blocks, NULL, NULL, (UWord)b);
  edges_remove(b);
  memo_drop(b->start, b->size);
  if (last_block == b)
    last_block = NULL;
  tw_sites[b->site].cur_bytes -= b->size;
  write_object(b, True);
  tw_cache_forget_range(b->start, b->size);
  VG_(free)(b);
}

/* Ends every mapping overlapping [a, a+len) (munmap, or a new mapping over
 * the range of one whose unmapping was not seen). */
void tw_unmap_range(Addr a, SizeT len) {
  TwBlock key = {.start = a, .size = len ? len : 1};
  UWord k;
  while (VG_(lookupFM)(blocks, &k, NULL, (UWord)&key)) {
    TwBlock *b = (TwBlock *)k;
    if (!b->mapped)
      return;
    tw_release_block(b->start, True);
  }
}

void tw_set_block_tier(Addr p, UInt tier) {
  TwBlock *b = block_at(p);
  if (!b || tier >= TW_MAX_TIERS)
    return;
  TwSlot *old = &tw_slots[b->slot];
  old->allocs--;
  old->bytes_allocated -= b->size;
  b->tier = tier;
  b->slot = tw_slot_for(b->site, tier);
  tw_slots[b->slot].allocs++;
  tw_slots[b->slot].bytes_allocated += b->size;
  tw_cache_forget_range(b->start, b->size);
}

/* Blocks still live at exit go to objects.csv with an empty free time. */
void tw_heap_fini(void) {
  UWord k;
  VG_(initIterFM)(blocks);
  while (VG_(nextIterFM)(blocks, &k, NULL))
    write_object((TwBlock *)k, False);
  VG_(doneIterFM)(blocks);
}

/* ---- replacement malloc family ---- */

static void *tw_alloc(ThreadId tid, SizeT n, SizeT align, Bool zero) {
  if ((SSizeT)n < 0)
    return NULL;
  void *p = VG_(cli_malloc)(align, n);
  if (!p)
    return NULL;
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
  tw_release_block((Addr)p, False);
  VG_(cli_free)(p);
}
static void tw_free_aligned(ThreadId tid, void *p, SizeT align) {
  tw_free(tid, p);
}
static void *tw_realloc(ThreadId tid, void *p, SizeT n) {
  if (!p)
    return tw_malloc(tid, n);
  TwBlock *old = block_at((Addr)p);
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
  TwBlock *b = block_at((Addr)p);
  return b ? b->size : 0;
}

void tw_register_malloc_replacement(void) {
  VG_(needs_malloc_replacement)(tw_malloc, tw_malloc, tw_new_aligned, tw_malloc,
                                tw_new_aligned, tw_memalign, tw_calloc, tw_free,
                                tw_free, tw_free_aligned, tw_free,
                                tw_free_aligned, tw_realloc, tw_usable_size, 0);
}
