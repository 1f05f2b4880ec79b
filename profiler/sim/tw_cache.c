/* SPDX-License-Identifier: MIT */
/* Cache simulator of the tierwise Valgrind tool: a write-back D1 and a
 * write-back LLC, both set-associative with true LRU and write-allocate.
 * Each simulated line carries the counter slot of its owner, so a hit is
 * charged without an address lookup. A line is "uniform" when it lies
 * entirely inside one heap block (or outside all blocks); hits on other lines
 * look the owner up per access. Dirty lines evicted from the LLC (and those
 * still dirty at exit) are writebacks, charged to the slot of the last
 * store to the line. */
#include "pub_tool_basics.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_mallocfree.h"

#include "tw_sim.h"

#define F_DIRTY 1u
#define F_UNIFORM 2u
#define NO_TAG (~(Addr)0)

typedef struct {
  Addr tag; /* line number (address >> line_bits) */
  UInt slot;
  UInt flags;
} TwLine;

typedef struct {
  TwLine *lines;
  UWord sets, set_mask;
  UInt ways;
  Bool pow2;
} TwCache;

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
  c->lines = VG_(malloc)("tw.cache", nlines * sizeof(TwLine));
  for (UWord i = 0; i < nlines; i++) {
    c->lines[i].tag = NO_TAG;
    c->lines[i].slot = TW_SITE_UNKNOWN;
    c->lines[i].flags = 0;
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

static inline TwLine *set_of(const TwCache *c, Addr ln) {
  UWord s = c->pow2 ? (ln & c->set_mask) : (ln % c->sets);
  return c->lines + s * c->ways;
}

/* Looks ln up in c, making it most recently used. On a miss the LRU line is
 * copied to *victim and replaced by an empty line for ln. */
static inline Bool touch(const TwCache *c, Addr ln, TwLine *victim,
                         TwLine **front) {
  TwLine *set = set_of(c, ln);
  *front = set;
  if (LIKELY(set[0].tag == ln))
    return True;
  UInt w = c->ways;
  for (UInt i = 1; i < w; i++) {
    if (set[i].tag == ln) {
      TwLine hit = set[i];
      for (UInt j = i; j > 0; j--)
        set[j] = set[j - 1];
      set[0] = hit;
      return True;
    }
  }
  *victim = set[w - 1];
  for (UInt j = w - 1; j > 0; j--)
    set[j] = set[j - 1];
  set[0].tag = ln;
  set[0].flags = 0;
  return False;
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

/* A dirty line leaves D1: write it into the LLC (allocating it there). */
static void llc_write_back_in(const TwLine *v) {
  TwLine *m, victim;
  if (!touch(&llc, v->tag, &victim, &m)) {
    llc_evicted(&victim);
    m->flags = v->flags & F_UNIFORM;
  } else {
    m->flags &= (v->flags | F_DIRTY);
  }
  m->flags |= F_DIRTY;
  m->slot = v->slot;
}

static inline void access_line(Addr a, Bool store, Bool count) {
  Addr ln = a >> line_bits;
  TwLine *l, victim;
  UInt slot, fl;
  if (LIKELY(touch(&d1, ln, &victim, &l))) {
    slot = (l->flags & F_UNIFORM) ? l->slot : lookup_slot(a, ln, &fl);
  } else {
    TwLine *m, v2;
    if (victim.tag != NO_TAG && (victim.flags & F_DIRTY))
      llc_write_back_in(&victim);
    if (touch(&llc, ln, &v2, &m)) {
      if (m->flags & F_UNIFORM) {
        slot = m->slot;
        l->flags = F_UNIFORM;
      } else {
        slot = lookup_slot(a, ln, &fl);
        l->flags = 0;
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

VG_REGPARM(2) void tw_load(Addr a, UWord size) {
  access_line(a, False, True);
  if (UNLIKELY(((a & (line_size - 1)) + size) > line_size))
    access_line(a + size - 1, False, False);
}

VG_REGPARM(2) void tw_store(Addr a, UWord size) {
  access_line(a, True, True);
  if (UNLIKELY(((a & (line_size - 1)) + size) > line_size))
    access_line(a + size - 1, True, False);
}

static void forget_in(const TwCache *c, Addr first, Addr last) {
  UWord n = last - first + 1;
  if (n > c->sets) {
    /* Large range: one pass over the whole cache is cheaper. */
    for (UWord i = 0; i < c->sets * c->ways; i++)
      if (c->lines[i].tag >= first && c->lines[i].tag <= last)
        c->lines[i].flags &= ~F_UNIFORM;
    return;
  }
  for (Addr ln = first; ln <= last; ln++) {
    TwLine *set = set_of(c, ln);
    for (UInt w = 0; w < c->ways; w++)
      if (set[w].tag == ln)
        set[w].flags &= ~F_UNIFORM;
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
void tw_cache_flush(void) {
  for (UWord i = 0; i < d1.sets * d1.ways; i++)
    if (d1.lines[i].tag != NO_TAG && (d1.lines[i].flags & F_DIRTY))
      llc_write_back_in(&d1.lines[i]);
  for (UWord i = 0; i < llc.sets * llc.ways; i++)
    llc_evicted(&llc.lines[i]);
}
