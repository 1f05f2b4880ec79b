/* SPDX-License-Identifier: MIT */
/* Cache simulator of the tierwise Valgrind tool: a write-back D1 and a
 * write-back LLC, both set-associative with true LRU and write-allocate.
 * Each simulated line carries the counter slot of its owner, so a hit is
 * charged without an address lookup. A line is "uniform" when it lies
 * entirely inside one heap block (or outside all blocks); hits on other lines
 * look the owner up per access. Dirty lines evicted from the LLC (and those
 * still dirty at exit) are writebacks, charged to the slot of the last
 * store to the line. Approximation: when the LLC evicts a line whose LLC
 * copy was dirty while D1 still holds it, later stores to the D1 copy do not
 * cause a second writeback (rare: the LLC is much larger than D1). */
#include "pub_tool_basics.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_mallocfree.h"

#include "tw_sim.h"

#define F_DIRTY 1u
#define F_UNIFORM 2u
#define F_LLCDIRTY 4u /* D1 only: the LLC copy was already dirty at fill */
#define NO_TAG (~(Addr)0)

/* Tags and per-line metadata are kept apart so the way search scans one
 * contiguous run of tags (Cachegrind does the same). */
typedef struct {
  UInt slot;
  UInt flags;
} TwMeta;

typedef struct {
  Addr *tags; /* line numbers (address >> line_bits), MRU first per set */
  TwMeta *meta;
  UWord sets, set_mask;
  UInt ways;
  Bool pow2;
} TwCache;

/* A line handed between the levels. */
typedef struct {
  Addr tag;
  UInt slot;
  UInt flags;
} TwLine;

static TwCache d1, llc;
static UInt line_bits;
static UWord line_size;

static void cache_alloc(TwCache *c, const HChar *name, ULong size, UInt ways) {
  UWord nlines = size / line_size;
  if (ways == 0 || nlines < ways || nlines % ways != 0) {
    VG_(fmsg)("tierwise: %s: size %llu with %u ways and %lu-byte lines is "
              "not a whole number of sets\n",
              name, size, ways, line_size);
    VG_(exit)(1);
  }
  c->ways = ways;
  c->sets = nlines / ways;
  c->pow2 = (c->sets & (c->sets - 1)) == 0;
  c->set_mask = c->sets - 1;
  c->tags = VG_(malloc)("tw.cache", nlines * sizeof(Addr));
  c->meta = VG_(malloc)("tw.cache", nlines * sizeof(TwMeta));
  for (UWord i = 0; i < nlines; i++) {
    c->tags[i] = NO_TAG;
    c->meta[i].slot = TW_SITE_UNKNOWN;
    c->meta[i].flags = 0;
  }
}

void tw_cache_init(ULong llc_size, UInt llc_ways, UInt line, ULong l1_size,
                   UInt l1_ways) {
  if (line < 8 || (line & (line - 1)) != 0) {
    VG_(fmsg)("tierwise: --line-size=%u: must be a power of two >= 8\n", line);
    VG_(exit)(1);
  }
  line_size = line;
  line_bits = 0;
  while ((1u << line_bits) < line)
    line_bits++;
  cache_alloc(&d1, "--l1-size", l1_size, l1_ways);
  cache_alloc(&llc, "--llc-size", llc_size, llc_ways);
}

static inline UWord set_index(const TwCache *c, Addr ln) {
  return (c->pow2 ? (ln & c->set_mask) : (ln % c->sets)) * c->ways;
}

/* Looks ln up in c, making it most recently used; returns its metadata. On
 * a miss the LRU line is copied to *victim and replaced by an empty line for
 * ln. */
static inline Bool touch(const TwCache *c, Addr ln, TwLine *victim,
                         TwMeta **front) {
  UWord base = set_index(c, ln);
  Addr *tags = c->tags + base;
  TwMeta *meta = c->meta + base;
  *front = meta;
  if (LIKELY(tags[0] == ln))
    return True;
  UInt w = c->ways, i;
  for (i = 1; i < w; i++)
    if (tags[i] == ln)
      break;
  TwMeta m;
  Bool hit = i < w;
  if (hit) {
    m = meta[i];
  } else {
    i = w - 1;
    victim->tag = tags[i];
    victim->slot = meta[i].slot;
    victim->flags = meta[i].flags;
    m.slot = TW_SITE_UNKNOWN;
    m.flags = 0;
  }
  for (; i > 0; i--) {
    tags[i] = tags[i - 1];
    meta[i] = meta[i - 1];
  }
  tags[0] = ln;
  meta[0] = m;
  return hit;
}

/* Owner of the line ln for an access at a; sets *flags to F_UNIFORM when
 * every byte of the line has that owner. */
static UInt lookup_slot(Addr a, Addr ln, UInt *flags) {
  Addr ls = ln << line_bits, le = ls + line_size;
  TwBlock *b = tw_find_block(a);
  if (b) {
    *flags = (b->start <= ls && le <= b->start + b->size) ? F_UNIFORM : 0;
    return b->slot;
  }
  *flags = tw_range_has_block(ls, line_size) ? 0 : F_UNIFORM;
  return tw_classify_nonheap(a);
}

static inline void llc_evicted(const TwLine *v) {
  if (v->tag != NO_TAG && (v->flags & F_DIRTY))
    tw_slots[v->slot].writebacks++;
}

/* A dirty line leaves D1: mark it dirty in the LLC without changing the
 * LLC's LRU order (a writeback is not a use), allocating it there only when
 * the LLC no longer holds it. */
static void llc_write_back_in(const TwLine *v) {
  UWord base = set_index(&llc, v->tag);
  TwMeta *m = NULL;
  for (UInt i = 0; i < llc.ways; i++) {
    if (llc.tags[base + i] == v->tag) {
      m = &llc.meta[base + i];
      break;
    }
  }
  if (!m) {
    TwLine victim = {NO_TAG, 0, 0};
    touch(&llc, v->tag, &victim, &m);
    llc_evicted(&victim);
    m->flags = v->flags & F_UNIFORM;
  } else {
    m->flags &= (v->flags | F_DIRTY);
  }
  m->flags |= F_DIRTY;
  m->slot = v->slot;
}

/* After a lookup on a line not known to be uniform: remember when it is,
 * unless that would move a pending writeback to another owner. */
static inline void relearn(TwMeta *l, UInt slot, UInt fl, Bool store) {
  if ((fl & F_UNIFORM) && (store || !(l->flags & F_DIRTY) || l->slot == slot)) {
    l->flags |= F_UNIFORM;
    l->slot = slot;
  }
}

static inline void access_line(Addr a, Bool store, Bool count) {
  Addr ln = a >> line_bits;
  TwMeta *l;
  TwLine victim;
  UInt slot, fl;
  if (LIKELY(touch(&d1, ln, &victim, &l))) {
    if (LIKELY(l->flags & F_UNIFORM)) {
      slot = l->slot;
    } else {
      slot = lookup_slot(a, ln, &fl);
      relearn(l, slot, fl, store);
    }
  } else {
    TwMeta *m;
    TwLine v2;
    if (victim.tag != NO_TAG &&
        (victim.flags & (F_DIRTY | F_LLCDIRTY)) == F_DIRTY)
      llc_write_back_in(&victim);
    if (touch(&llc, ln, &v2, &m)) {
      if (m->flags & F_UNIFORM) {
        slot = m->slot;
        l->flags = F_UNIFORM;
      } else {
        slot = lookup_slot(a, ln, &fl);
        relearn(m, slot, fl, store);
        l->flags = m->flags & F_UNIFORM;
      }
      l->slot = slot;
    } else {
      llc_evicted(&v2);
      slot = lookup_slot(a, ln, &fl);
      m->slot = slot;
      m->flags = fl;
      l->slot = slot;
      l->flags = fl;
      if (store)
        tw_slots[slot].llc_store_misses++;
      else
        tw_slots[slot].llc_load_misses++;
    }
    /* A store miss dirties the LLC copy at once; a D1 line whose LLC copy
     * is dirty needs no write-back-in search when it leaves D1. */
    if (store) {
      m->flags |= F_DIRTY;
      m->slot = slot;
    }
    if (m->flags & F_DIRTY)
      l->flags |= F_LLCDIRTY;
  }
  if (store) {
    l->flags |= F_DIRTY;
    l->slot = slot;
    if (count)
      tw_slots[slot].stores++;
  } else if (count) {
    tw_slots[slot].loads++;
  }
}

static void __attribute__((noinline)) load_slow(Addr a, UWord size) {
  access_line(a, False, True);
  if (UNLIKELY(((a & (line_size - 1)) + size) > line_size))
    access_line(a + size - 1, False, False);
}

static void __attribute__((noinline)) store_slow(Addr a, UWord size) {
  access_line(a, True, True);
  if (UNLIKELY(((a & (line_size - 1)) + size) > line_size))
    access_line(a + size - 1, True, False);
}

/* The common case inline: a D1 hit on the most recently used way of a
 * uniform line, within the line. It does what access_line does there. */
static inline TwMeta *d1_mru_uniform(Addr a, UWord size) {
  Addr ln = a >> line_bits;
  UWord base = set_index(&d1, ln);
  TwMeta *l = &d1.meta[base];
  if (LIKELY(d1.tags[base] == ln && (l->flags & F_UNIFORM) &&
             (a & (line_size - 1)) + size <= line_size))
    return l;
  return NULL;
}

VG_REGPARM(2) void tw_load(Addr a, UWord size) {
  TwMeta *l = d1_mru_uniform(a, size);
  if (LIKELY(l != NULL))
    tw_slots[l->slot].loads++;
  else
    load_slow(a, size);
}

VG_REGPARM(2) void tw_store(Addr a, UWord size) {
  TwMeta *l = d1_mru_uniform(a, size);
  if (LIKELY(l != NULL)) {
    l->flags |= F_DIRTY;
    tw_slots[l->slot].stores++;
  } else {
    store_slow(a, size);
  }
}

static void forget_in(const TwCache *c, Addr first, Addr last) {
  UWord n = last - first + 1;
  if (n > c->sets) {
    /* Large range: one pass over the whole cache is cheaper. */
    for (UWord i = 0; i < c->sets * c->ways; i++)
      if (c->tags[i] >= first && c->tags[i] <= last)
        c->meta[i].flags &= ~F_UNIFORM;
    return;
  }
  for (Addr ln = first; ln <= last; ln++) {
    UWord base = set_index(c, ln);
    for (UInt w = 0; w < c->ways; w++)
      if (c->tags[base + w] == ln)
        c->meta[base + w].flags &= ~F_UNIFORM;
  }
}

/* A block was allocated or freed at [a, a+len): lines cached for it no
 * longer have a known single owner. Their slot stays as the owner of a later
 * writeback (the site whose data is dirty in them). */
void tw_cache_forget_range(Addr a, SizeT len) {
  if (len == 0)
    len = 1;
  Addr first = a >> line_bits, last = (a + len - 1) >> line_bits;
  forget_in(&d1, first, last);
  forget_in(&llc, first, last);
}

/* At exit: dirty lines still cached count as writebacks (they would reach
 * memory eventually). */
static TwLine line_at(const TwCache *c, UWord i) {
  TwLine l = {c->tags[i], c->meta[i].slot, c->meta[i].flags};
  return l;
}

void tw_cache_flush(void) {
  for (UWord i = 0; i < d1.sets * d1.ways; i++) {
    TwLine l = line_at(&d1, i);
    if (l.tag != NO_TAG && (l.flags & (F_DIRTY | F_LLCDIRTY)) == F_DIRTY)
      llc_write_back_in(&l);
  }
  for (UWord i = 0; i < llc.sets * llc.ways; i++) {
    TwLine l = line_at(&llc, i);
    llc_evicted(&l);
  }
}

/* A forked child starts with empty caches: lines the parent dirtied are the
 * parent's writebacks. */
void tw_cache_reset(void) {
  const TwCache *cs[2] = {&d1, &llc};
  for (UInt c = 0; c < 2; c++)
    for (UWord i = 0; i < cs[c]->sets * cs[c]->ways; i++) {
      cs[c]->tags[i] = NO_TAG;
      cs[c]->meta[i].flags = 0;
    }
}
