/* SPDX-License-Identifier: MIT */
/* Address map of the tierwise Valgrind tool: from an address or a range to
 * the live heap block there. Blocks are disjoint. Three structures answer
 * together:
 *   - the edge map: entries for 64-byte chunks (independent of the
 *     simulated line size): for a narrow block (touching at most
 *     NARROW_CHUNKS chunks) one in every chunk it touches, for a wide block
 *     one in its first and one in its last chunk. Any block overlapping a chunk with
 *     entries is among them, so one hash probe answers lookups there;
 *   - an interval map (WordFM, ordered by address) of the wide blocks only.
 *     A chunk without edge entries is inside one wide block or in none;
 *   - a page memo of recent interval-map answers, and a chunk cache of
 *     recent lookups.
 * Allocation-heavy programs mostly make narrow blocks, which then cost a
 * few hash updates instead of balanced-tree updates. */
#include "pub_tool_basics.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_wordfm.h"

#include "tw_sim.h"

#define EDGE_BITS 6
#define NO_CHUNK (~(Addr)0)
/* Open addressing with linear probing; an entry repeats its block's start,
 * extent and counter slot so that a lookup reads one host cache line (32
 * bytes, aligned), not the block. */
#define BIG_EXTENT 0xFFFFFFFFu /* the extent does not fit: read the block */
typedef struct {
  Addr chunk; /* NO_CHUNK: empty */
  Addr start;
  UInt extent; /* BIG_EXTENT: the block's (only a wide block's) */
  UInt slot;
  TwBlock *b;
} Edge;
static Edge *edges;
static UWord edge_mask, n_edges;

static WordFM *wide_blocks; /* TwBlock* (interval key) -> 0 */

/* Chunk cache: for recently looked-up chunks, a copy of what the cache
 * simulator needs of the block found there (direct-mapped; an entry is used
 * only if its extent holds the address). A hit reads neither the edge map
 * nor the block. Entries of a block's chunks are cleared when it is removed
 * or its slot changes. last_owner is the entry that answered last. */
#define CC_SIZE 16384
static TwOwner chunk_cache[CC_SIZE];
static TwOwner *last_owner = &chunk_cache[0];

static inline Bool owns(const TwOwner *o, Addr a) {
  return o->b && a - o->start < (o->size ? o->size : 1);
}

static inline UWord edge_hash(Addr chunk, UWord mask) {
  return (chunk * 0x9E3779B97F4A7C15ULL) >> 20 & mask;
}

static inline SizeT extent(const TwBlock *b) { return b->size ? b->size : 1; }

static inline Addr first_chunk(const TwBlock *b) {
  return b->start >> EDGE_BITS;
}

static inline Addr last_chunk(const TwBlock *b) {
  return (b->start + extent(b) - 1) >> EDGE_BITS;
}

/* Narrow blocks have an edge entry in every chunk they touch. */
#define NARROW_CHUNKS 64
static inline Bool is_wide(const TwBlock *b) {
  return last_chunk(b) - first_chunk(b) + 1 > NARROW_CHUNKS;
}

static inline Bool overlaps(const TwBlock *b, Addr a, SizeT len) {
  return b->start < a + len && a < b->start + extent(b);
}

static void edge_put(Edge *t, UWord mask, const Edge *e) {
  UWord i = edge_hash(e->chunk, mask);
  while (t[i].chunk != NO_CHUNK)
    i = (i + 1) & mask;
  t[i] = *e;
}

static Edge *edge_table(UWord n) {
  Edge *t = VG_(malloc)("tw.edges", n * sizeof *t);
  for (UWord i = 0; i < n; i++)
    t[i].chunk = NO_CHUNK;
  return t;
}

static void edge_add(Addr chunk, TwBlock *b) {
  if (2 * (n_edges + 1) > edge_mask + 1) {
    UWord new_mask = 2 * edge_mask + 1;
    Edge *t = edge_table(new_mask + 1);
    for (UWord i = 0; i <= edge_mask; i++)
      if (edges[i].chunk != NO_CHUNK)
        edge_put(t, new_mask, &edges[i]);
    VG_(free)(edges);
    edges = t;
    edge_mask = new_mask;
  }
  Edge e = {chunk, b->start,
            extent(b) < BIG_EXTENT ? (UInt)extent(b) : BIG_EXTENT, b->slot, b};
  edge_put(edges, edge_mask, &e);
  n_edges++;
}

static Edge *edge_of(Addr chunk, TwBlock *b) {
  for (UWord i = edge_hash(chunk, edge_mask); edges[i].chunk != NO_CHUNK;
       i = (i + 1) & edge_mask)
    if (edges[i].chunk == chunk && edges[i].b == b)
      return &edges[i];
  return NULL;
}

static void edge_set_slot(Addr chunk, TwBlock *b) {
  Edge *e = edge_of(chunk, b);
  if (e)
    e->slot = b->slot;
}

/* Deletion with backward shift (Knuth 6.4, algorithm R): later entries of
 * the probe run move up so that no run is broken. */
static void edge_del(Addr chunk, TwBlock *b) {
  UWord i = edge_hash(chunk, edge_mask);
  while (edges[i].chunk != chunk || edges[i].b != b) {
    if (edges[i].chunk == NO_CHUNK)
      return;
    i = (i + 1) & edge_mask;
  }
  n_edges--;
  for (UWord j = i;;) {
    edges[i].chunk = NO_CHUNK;
    UWord home;
    do {
      j = (j + 1) & edge_mask;
      if (edges[j].chunk == NO_CHUNK)
        return;
      home = edge_hash(edges[j].chunk, edge_mask);
      /* leave entry j where it is if its home lies cyclically in (i, j] */
    } while (i <= j ? (i < home && home <= j) : (i < home || home <= j));
    edges[i] = edges[j];
    i = j;
  }
}

/* Page memo: for recently looked-up 4 KiB pages, the wide block that
 * covered the address looked up there (NULL: no wide block overlaps the
 * page at all). Entries of a wide block's pages are dropped when it is
 * inserted or removed. */
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

static Word cmp_blocks(UWord k1, UWord k2) {
  const TwBlock *a = (const TwBlock *)k1, *b = (const TwBlock *)k2;
  if (a->start + extent(a) <= b->start)
    return -1;
  if (b->start + extent(b) <= a->start)
    return 1;
  return 0;
}

static TwBlock *wide_overlapping(Addr a, SizeT len) {
  TwBlock key = {.start = a, .size = len};
  UWord k;
  return VG_(lookupFM)(wide_blocks, &k, NULL, (UWord)&key) ? (TwBlock *)k
                                                           : NULL;
}

void tw_map_init(void) {
  wide_blocks = VG_(newFM)(VG_(malloc), "tw.blocks", VG_(free), cmp_blocks);
  for (UInt i = 0; i < MEMO_SIZE; i++)
    memo[i].page = ~(Addr)0;
  edge_mask = 4095;
  edges = edge_table(edge_mask + 1);
}

/* Calls op on each chunk that has an entry for b. */
static void for_edges(TwBlock *b, void (*op)(Addr, TwBlock *)) {
  Addr first = first_chunk(b), last = last_chunk(b);
  if (is_wide(b)) {
    op(first, b);
    op(last, b);
  } else {
    /* the chunks' probes are independent: start all their host misses */
    for (Addr c = first + 1; c <= last; c++)
      __builtin_prefetch(&edges[edge_hash(c, edge_mask)]);
    for (Addr c = first; c <= last; c++)
      op(c, b);
  }
}

void tw_map_insert(TwBlock *b) {
  for_edges(b, edge_add);
  if (is_wide(b)) {
    VG_(addToFM)(wide_blocks, (UWord)b, 0);
    memo_drop(b->start, b->size);
  }
}

/* Drops b from the chunk cache. */
static void cc_forget(TwBlock *b) {
  Addr n = last_chunk(b) - first_chunk(b) + 1;
  for (Addr c = first_chunk(b), i = 0; i < n && i < CC_SIZE; c++, i++)
    if (chunk_cache[c % CC_SIZE].b == b)
      chunk_cache[c % CC_SIZE].b = NULL;
}

void tw_map_remove(TwBlock *b) {
  for_edges(b, edge_del);
  if (is_wide(b)) {
    VG_(delFromFM)(wide_blocks, NULL, NULL, (UWord)b);
    memo_drop(b->start, b->size);
  }
  cc_forget(b);
}

void tw_map_slot_changed(TwBlock *b) {
  for_edges(b, edge_set_slot);
  cc_forget(b);
}

/* The owner entry of a block (size: its extent, which answers every
 * question TwOwner's users ask about a block the same as its size). */
static inline void owner_of(TwOwner *o, TwBlock *b) {
  o->start = b->start;
  o->size = extent(b);
  o->slot = b->slot;
  o->b = b;
}

/* 1: a is in *o (filled from the edge entry); 0: no block holds a; -1:
 * chunk has no edges, ask the interval map. */
static inline Int edge_find(Addr a, TwOwner *o) {
  Addr chunk = a >> EDGE_BITS;
  Int seen = 0;
  for (UWord i = edge_hash(chunk, edge_mask); edges[i].chunk != NO_CHUNK;
       i = (i + 1) & edge_mask) {
    const Edge *e = &edges[i];
    if (e->chunk != chunk)
      continue;
    seen = 1;
    SizeT ext = e->extent != BIG_EXTENT ? e->extent : extent(e->b);
    if (a - e->start < ext) {
      o->start = e->start;
      o->size = ext;
      o->slot = e->slot;
      o->b = e->b;
      return 1;
    }
  }
  return seen ? 0 : -1;
}

/* The block holding a, or NULL; *o is filled when there is one. */
static TwBlock *find_uncached(Addr a, TwOwner *o) {
  Int r = edge_find(a, o);
  if (r >= 0)
    return r ? o->b : NULL;
  TwBlock *b;
  Addr pg = a >> PAGE_BITS;
  UInt m = pg % MEMO_SIZE;
  if (memo[m].page == pg) {
    b = memo[m].b;
    if (!b || a - b->start < b->size)
      goto found;
  }
  b = wide_overlapping(a, 1);
  if (b || !wide_overlapping(pg << PAGE_BITS, 1u << PAGE_BITS)) {
    memo[m].page = pg;
    memo[m].b = b;
  }
found:
  if (b)
    owner_of(o, b);
  return b;
}

const TwOwner *tw_find_owner(Addr a) {
  if (owns(last_owner, a))
    return last_owner;
  /* the edge entry's host line, in parallel with the chunk cache's */
  __builtin_prefetch(&edges[edge_hash(a >> EDGE_BITS, edge_mask)]);
  TwOwner *o = &chunk_cache[(a >> EDGE_BITS) % CC_SIZE];
  if (!owns(o, a) && !find_uncached(a, o))
    return NULL;
  last_owner = o;
  return o;
}

/* The live block starting at p, or NULL: every block has an edge entry in
 * its first chunk, so one probe answers (free and friends; no lookup cache
 * is filled with a block about to go). */
TwBlock *tw_block_at(Addr p) {
  Addr chunk = p >> EDGE_BITS;
  for (UWord i = edge_hash(chunk, edge_mask); edges[i].chunk != NO_CHUNK;
       i = (i + 1) & edge_mask)
    if (edges[i].chunk == chunk && edges[i].start == p)
      return edges[i].b;
  return NULL;
}

/* Starts reading the address map's entries for p's chunk into the host's
 * caches (a hint; changes nothing). */
void tw_map_prefetch(Addr p) {
  __builtin_prefetch(&edges[edge_hash(p >> EDGE_BITS, edge_mask)]);
}

TwBlock *tw_find_block(Addr a) {
  const TwOwner *o = tw_find_owner(a);
  return o ? o->b : NULL;
}

/* A narrow block (no wide one) overlapping [a, a+len): each has an edge
 * entry in every chunk it touches. Probes the range's chunks, or the whole
 * edge map when that is smaller. */
static TwBlock *narrow_overlapping(Addr a, SizeT len) {
  Addr first = a >> EDGE_BITS, last = (a + len - 1) >> EDGE_BITS;
  if (last - first > edge_mask) {
    for (UWord i = 0; i <= edge_mask; i++)
      if (edges[i].chunk != NO_CHUNK && overlaps(edges[i].b, a, len))
        return edges[i].b;
    return NULL;
  }
  for (Addr c = first; c <= last; c++)
    for (UWord i = edge_hash(c, edge_mask); edges[i].chunk != NO_CHUNK;
         i = (i + 1) & edge_mask)
      if (edges[i].chunk == c && overlaps(edges[i].b, a, len))
        return edges[i].b;
  return NULL;
}

/* Some block overlapping [a, a+len), len >= 1; NULL if none. */
TwBlock *tw_map_overlap(Addr a, SizeT len) {
  TwBlock *b = wide_overlapping(a, len);
  return b ? b : narrow_overlapping(a, len);
}

Bool tw_range_has_block(Addr a, SizeT len) {
  Addr pg = a >> PAGE_BITS;
  if (memo[pg % MEMO_SIZE].page == pg && (a + len - 1) >> PAGE_BITS == pg) {
    const TwBlock *b = memo[pg % MEMO_SIZE].b;
    if (b && b->start <= a && a + len <= b->start + b->size)
      return True;
    if (!b) /* no wide block in the page */
      return narrow_overlapping(a, len) != NULL;
  }
  return tw_map_overlap(a, len) != NULL;
}

static Int cmp_start(const void *x, const void *y) {
  const TwBlock *a = *(TwBlock *const *)x, *b = *(TwBlock *const *)y;
  return a->start < b->start ? -1 : a->start > b->start;
}

/* Calls f on every live block in address order. */
void tw_map_for_each(void (*f)(const TwBlock *)) {
  UWord n = 0;
  TwBlock **all = VG_(malloc)("tw.all", (n_edges + 1) * sizeof *all);
  for (UWord i = 0; i <= edge_mask; i++)
    if (edges[i].chunk != NO_CHUNK && edges[i].chunk == first_chunk(edges[i].b))
      all[n++] = edges[i].b;
  VG_(ssort)(all, n, sizeof *all, cmp_start);
  for (UWord i = 0; i < n; i++)
    f(all[i]);
  VG_(free)(all);
}
