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
#define NO_LINE (~(Addr)0)

/* A way of a set is one 64-bit word: the line's tag (line number / sets)
 * from bit tag_shift up, below it its owner's counter slot and 3 flag bits.
 * One word per way keeps an LLC lookup to the host cache lines of one run
 * of words, as Cachegrind's tag-only sets do, instead of separate tag and
 * metadata arrays. tag_shift leaves room for the tags of any address in a
 * 47-bit user address space (x86-64) in both caches, at most 32 bits; the
 * slots get what is left (tw_max_slots: 2^25 with a 64-set D1 and 64-byte
 * lines). A tag that does not fit is an error (tag_too_high), not a wrong
 * count. */
typedef ULong TwWay;
#define USER_ADDR_BITS 47
static UInt tag_shift = 32;
static ULong low_mask = 0xFFFFFFFFull, no_tag = 0xFFFFFFFFull;
UInt tw_max_slots = 1u << 17;

static inline ULong way_tag(TwWay w) { return w >> tag_shift; }
static inline UInt way_slot(TwWay w) { return (UInt)((w & low_mask) >> 3); }
static inline UInt way_flags(TwWay w) { return (UInt)w & 7u; }
static inline void way_set(TwWay *w, UInt slot, UInt flags) {
  *w = (*w & ~low_mask) | (ULong)slot << 3 | flags;
}
static inline TwWay new_way(ULong tag) {
  return tag << tag_shift | (ULong)TW_SITE_UNKNOWN << 3;
}

/* The most recently used way of every set is kept apart from the others, in
 * an array of its own (Cachegrind-like locality: neighbouring lines' MRU ways
 * share host cache lines, and the LLC's MRU array is a few hundred KiB).
 * Most LLC lookups hit there: a line leaving D1 is usually still the MRU line
 * of its LLC set when it comes back. */
typedef struct {
  TwWay *mru;  /* sets words: way 0 of each set */
  TwWay *rest; /* sets * (assoc - 1) words: ways 1.. of each set, in LRU
                  order */
  UWord sets, set_mask;
  UInt assoc, set_bits;
  Bool pow2;
  const HChar *name;
} TwCache;

/* A line handed between the levels. */
typedef struct {
  Addr ln; /* line number (address >> line_bits); NO_LINE: none */
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
  c->name = name;
  c->assoc = ways;
  c->sets = nlines / ways;
  c->pow2 = (c->sets & (c->sets - 1)) == 0;
  c->set_mask = c->sets - 1;
  c->set_bits = 0;
  while (((UWord)1 << c->set_bits) < c->sets)
    c->set_bits++;
  c->mru = VG_(malloc)("tw.cache", c->sets * sizeof(TwWay));
  c->rest = VG_(malloc)("tw.cache", (nlines - c->sets) * sizeof(TwWay) + 1);
}

static void cache_clear(const TwCache *c) {
  for (UWord i = 0; i < c->sets; i++)
    c->mru[i] = new_way(no_tag);
  for (UWord i = 0; i < c->sets * (c->assoc - 1); i++)
    c->rest[i] = new_way(no_tag);
}

static UInt floor_log2(UWord n) {
  UInt b = 0;
  while (n >>= 1)
    b++;
  return b;
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
  /* tags < 2^(47 - line_bits) / sets, plus one value for an empty way */
  UInt fewest = floor_log2(d1.sets < llc.sets ? d1.sets : llc.sets);
  UInt tag_bits = USER_ADDR_BITS - line_bits - fewest + 1;
  tag_shift = tag_bits < 32 ? 32 : 64 - tag_bits;
  low_mask = (1ULL << tag_shift) - 1;
  no_tag = ~0ULL >> tag_shift;
  tw_max_slots = 1u << (tag_shift - 3);
  cache_clear(&d1);
  cache_clear(&llc);
}

static inline UWord set_of(const TwCache *c, Addr ln) {
  return c->pow2 ? (ln & c->set_mask) : (ln % c->sets);
}

static inline ULong tag_of(const TwCache *c, Addr ln) {
  return c->pow2 ? (ln >> c->set_bits) : (ln / c->sets);
}

/* Way i (0: most recently used) of a set. */
static inline TwWay *way_at(const TwCache *c, UWord set, UInt i) {
  return i == 0 ? &c->mru[set] : &c->rest[set * (c->assoc - 1) + i - 1];
}

static Addr line_of(const TwCache *c, UWord set, TwWay w) {
  return way_tag(w) == no_tag ? NO_LINE : (Addr)(way_tag(w) * c->sets + set);
}

static void __attribute__((noreturn)) tag_too_high(const TwCache *c, Addr ln) {
  VG_(fmsg)("tierwise: address %#lx is beyond what the simulated cache (%s) "
            "can tag; use a larger --line-size\n",
            ln << line_bits, c->name);
  VG_(exit)(1);
}

/* Looks ln up in c, making it most recently used; *front is its way. On a
 * miss the LRU line is copied to *victim and replaced by an empty line for
 * ln. */
static inline __attribute__((always_inline)) Bool
touch(const TwCache *c, Addr ln, TwLine *victim, TwWay **front) {
  UWord set = set_of(c, ln);
  ULong tag = tag_of(c, ln);
  TwWay *w0 = &c->mru[set];
  *front = w0;
  if (LIKELY(way_tag(*w0) == tag))
    return True;
  UInt n = c->assoc - 1, i;
  TwWay *r = c->rest + set * n;
  for (i = 0; i < n; i++)
    if (way_tag(r[i]) == tag)
      break;
  TwWay m, *out;
  Bool hit = i < n;
  if (hit) {
    m = r[i];
  } else {
    if (UNLIKELY(tag >= no_tag))
      tag_too_high(c, ln);
    out = n ? &r[n - 1] : w0;
    victim->ln = line_of(c, set, *out);
    victim->slot = way_slot(*out);
    victim->flags = way_flags(*out);
    m = new_way(tag);
    if (n == 0) {
      *w0 = m;
      return False;
    }
    i = n - 1;
  }
  for (; i > 0; i--)
    r[i] = r[i - 1];
  r[0] = *w0;
  *w0 = m;
  return hit;
}

/* Pages holding a line that was ever found uniform with a non-heap owner
 * (static, stack, unknown): open addressing on page numbers. */
#define PAGE_BITS 12
static Addr *nh_pages;
static UWord nh_mask, nh_n;

static UWord nh_find(Addr pg) {
  UWord i = (pg * 0x9E3779B97F4A7C15ULL) >> 24 & nh_mask;
  while (nh_pages[i] != NO_LINE && nh_pages[i] != pg)
    i = (i + 1) & nh_mask;
  return i;
}

static void nh_add(Addr pg) {
  if (2 * (nh_n + 1) > nh_mask + 1) {
    Addr *old = nh_pages;
    UWord old_n = nh_mask + 1;
    nh_mask = old ? 2 * old_n - 1 : 1023;
    nh_pages = VG_(malloc)("tw.nhpages", (nh_mask + 1) * sizeof(Addr));
    for (UWord i = 0; i <= nh_mask; i++)
      nh_pages[i] = NO_LINE;
    for (UWord i = 0; old && i < old_n; i++)
      if (old[i] != NO_LINE)
        nh_pages[nh_find(old[i])] = old[i];
    VG_(free)(old);
  }
  UWord i = nh_find(pg);
  if (nh_pages[i] == NO_LINE) {
    nh_pages[i] = pg;
    nh_n++;
  }
}

static void note_nonheap_uniform(Addr ls) {
  static Addr last = NO_LINE;
  for (Addr pg = ls >> PAGE_BITS; pg <= (ls + line_size - 1) >> PAGE_BITS;
       pg++) {
    if (pg != last)
      nh_add(pg);
    last = pg;
  }
}

/* Owner of the line ln for an access at a; sets *flags to F_UNIFORM when
 * every byte of the line has that owner. */
static UInt lookup_slot(Addr a, Addr ln, UInt *flags) {
  Addr ls = ln << line_bits, le = ls + line_size;
  const TwOwner *o = tw_find_owner(a);
  if (o) {
    *flags = (o->start <= ls && le <= o->start + o->size) ? F_UNIFORM : 0;
    return o->slot;
  }
  *flags = tw_range_has_block(ls, line_size) ? 0 : F_UNIFORM;
  if (*flags)
    note_nonheap_uniform(ls);
  return tw_classify_nonheap(a);
}

static inline void llc_evicted(const TwLine *v) {
  if (v->ln != NO_LINE && (v->flags & F_DIRTY))
    tw_slots[v->slot].n.writebacks++;
}

/* A dirty line leaves D1: mark it dirty in the LLC without changing the
 * LLC's LRU order (a writeback is not a use), allocating it there only when
 * the LLC no longer holds it. */
static void llc_write_back_in(const TwLine *v) {
  UWord set = set_of(&llc, v->ln);
  ULong tag = tag_of(&llc, v->ln);
  TwWay *m = NULL;
  for (UInt i = 0; i < llc.assoc; i++) {
    if (way_tag(*way_at(&llc, set, i)) == tag) {
      m = way_at(&llc, set, i);
      break;
    }
  }
  if (!m) {
    TwLine victim = {NO_LINE, 0, 0};
    touch(&llc, v->ln, &victim, &m);
    llc_evicted(&victim);
    way_set(m, way_slot(*m), v->flags & F_UNIFORM);
  } else {
    way_set(m, way_slot(*m), way_flags(*m) & (v->flags | F_DIRTY));
  }
  way_set(m, v->slot, way_flags(*m) | F_DIRTY);
}

/* After a lookup on a line not known to be uniform: remember when it is,
 * unless that would move a pending writeback to another owner. */
static inline void relearn(TwWay *l, UInt slot, UInt fl, Bool store) {
  if ((fl & F_UNIFORM) && (store || !(way_flags(*l) & F_DIRTY) ||
                           way_slot(*l) == slot))
    way_set(l, slot, way_flags(*l) | F_UNIFORM);
}

/* An LLC miss at a in slot's block: counted in the slice of the block's
 * extent it lies in (where in an object its misses are: advisor heads). */
static inline void miss_slice(UInt slot, Addr a) {
  const TwOwner *o = tw_find_owner(a); /* the lookup just made: memoised */
  if (o && o->slot == slot && o->size > 0 && a >= o->start)
    tw_slots[slot].n.llc_miss_slice[(ULong)(a - o->start) * TW_SLICES /
                                    o->size]++;
}

static inline void access_line(Addr a, Bool store, Bool count, UWord arg) {
  Addr ln = a >> line_bits;
  TwWay *l;
  TwLine victim;
  UInt slot, fl;
  if (LIKELY(touch(&d1, ln, &victim, &l))) {
    if (LIKELY(way_flags(*l) & F_UNIFORM)) {
      slot = way_slot(*l);
    } else {
      slot = lookup_slot(a, ln, &fl);
      relearn(l, slot, fl, store);
    }
  } else {
    TwWay *m;
    TwLine v2 = {NO_LINE, 0, 0};
    if (victim.ln != NO_LINE &&
        (victim.flags & (F_DIRTY | F_LLCDIRTY)) == F_DIRTY)
      llc_write_back_in(&victim);
    if (touch(&llc, ln, &v2, &m)) {
      if (way_flags(*m) & F_UNIFORM) {
        slot = way_slot(*m);
        way_set(l, slot, F_UNIFORM);
      } else {
        slot = lookup_slot(a, ln, &fl);
        relearn(m, slot, fl, store);
        way_set(l, slot, way_flags(*m) & F_UNIFORM);
      }
    } else {
      llc_evicted(&v2);
      slot = lookup_slot(a, ln, &fl);
      way_set(m, slot, fl);
      way_set(l, slot, fl);
      if (store)
        tw_slots[slot].n.llc_store_misses++;
      else
        tw_slots[slot].n.llc_load_misses++;
      miss_slice(slot, a);
      tw_interval_miss(slot, TW_ACC_DESC(arg), a, TW_ACC_SIZE(arg), store,
                       tw_stream_miss(slot, ln));
    }
    /* A store miss dirties the LLC copy at once; a D1 line whose LLC copy
     * is dirty needs no write-back-in search when it leaves D1. */
    if (store)
      way_set(m, slot, way_flags(*m) | F_DIRTY);
    if (way_flags(*m) & F_DIRTY)
      *l |= F_LLCDIRTY;
  }
  if (store) {
    way_set(l, slot, way_flags(*l) | F_DIRTY);
    if (count)
      tw_slots[slot].n.stores++;
  } else if (count) {
    tw_slots[slot].n.loads++;
  }
}

static void __attribute__((noinline)) load_slow(Addr a, UWord arg) {
  UWord size = TW_ACC_SIZE(arg);
  access_line(a, False, True, arg);
  if (UNLIKELY(((a & (line_size - 1)) + size) > line_size))
    access_line(a + size - 1, False, False, arg);
}

static void __attribute__((noinline)) store_slow(Addr a, UWord arg) {
  UWord size = TW_ACC_SIZE(arg);
  access_line(a, True, True, arg);
  if (UNLIKELY(((a & (line_size - 1)) + size) > line_size))
    access_line(a + size - 1, True, False, arg);
}

/* The common case inline: a D1 hit on the most recently used way of a
 * uniform line, within the line. It does what access_line does there. */
static inline TwWay *d1_mru_uniform(Addr a, UWord size) {
  Addr ln = a >> line_bits;
  TwWay *w = &d1.mru[set_of(&d1, ln)];
  if (LIKELY(way_tag(*w) == tag_of(&d1, ln) && (*w & F_UNIFORM) &&
             (a & (line_size - 1)) + size <= line_size))
    return w;
  return NULL;
}

VG_REGPARM(2) void tw_load(Addr a, UWord arg) {
  TwWay *l = d1_mru_uniform(a, TW_ACC_SIZE(arg));
  if (LIKELY(l != NULL))
    tw_slots[way_slot(*l)].n.loads++;
  else
    load_slow(a, arg);
}

VG_REGPARM(2) void tw_store(Addr a, UWord arg) {
  TwWay *l = d1_mru_uniform(a, TW_ACC_SIZE(arg));
  if (LIKELY(l != NULL)) {
    *l |= F_DIRTY;
    tw_slots[way_slot(*l)].n.stores++;
  } else {
    store_slow(a, arg);
  }
}

/* The same for the default geometry (64-byte lines, a 64-set D1, so tags
 * from bit 28 of a way), with the shifts and masks as constants: tw_load
 * reads seven globals and tests for a power-of-two set count on every
 * access. */
#define DEF_LINE_BITS 6
#define DEF_D1_SET_BITS 6
#define DEF_TAG_SHIFT 28
static inline __attribute__((always_inline)) TwWay *d1_mru_uniform_def(Addr a,
                                                                     UWord size) {
  Addr ln = a >> DEF_LINE_BITS;
  TwWay *w = &d1.mru[ln & ((1u << DEF_D1_SET_BITS) - 1)];
  if (LIKELY((*w >> DEF_TAG_SHIFT) == (ln >> DEF_D1_SET_BITS) &&
             (*w & F_UNIFORM) &&
             (a & ((1u << DEF_LINE_BITS) - 1)) + size <= (1u << DEF_LINE_BITS)))
    return w;
  return NULL;
}

static inline UInt way_slot_def(TwWay w) {
  return (UInt)((w & ((1ULL << DEF_TAG_SHIFT) - 1)) >> 3);
}

static VG_REGPARM(2) void tw_load_def(Addr a, UWord arg) {
  TwWay *l = d1_mru_uniform_def(a, TW_ACC_SIZE(arg));
  if (LIKELY(l != NULL))
    tw_slots[way_slot_def(*l)].n.loads++;
  else
    load_slow(a, arg);
}

static VG_REGPARM(2) void tw_store_def(Addr a, UWord arg) {
  TwWay *l = d1_mru_uniform_def(a, TW_ACC_SIZE(arg));
  if (LIKELY(l != NULL)) {
    *l |= F_DIRTY;
    tw_slots[way_slot_def(*l)].n.stores++;
  } else {
    store_slow(a, arg);
  }
}

void tw_cache_helpers(void **load, void **store) {
  Bool def = line_bits == DEF_LINE_BITS && d1.pow2 &&
             d1.set_bits == DEF_D1_SET_BITS && tag_shift == DEF_TAG_SHIFT;
  *load = def ? (void *)tw_load_def : (void *)tw_load;
  *store = def ? (void *)tw_store_def : (void *)tw_store;
}

static void forget_in(const TwCache *c, Addr first, Addr last) {
  UWord n = last - first + 1;
  if (n > c->sets) {
    /* Large range: one pass over the whole cache is cheaper. */
    for (UWord set = 0; set < c->sets; set++)
      for (UInt i = 0; i < c->assoc; i++) {
        TwWay *w = way_at(c, set, i);
        Addr ln = line_of(c, set, *w);
        if (ln != NO_LINE && ln >= first && ln <= last)
          *w &= ~(ULong)F_UNIFORM;
      }
    return;
  }
  for (Addr ln = first; ln <= last; ln++) {
    UWord set = set_of(c, ln);
    ULong tag = tag_of(c, ln);
    for (UInt i = 0; i < c->assoc; i++)
      if (way_tag(*way_at(c, set, i)) == tag)
        *way_at(c, set, i) &= ~(ULong)F_UNIFORM;
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

/* A block at [a, a+len) ends. Only lines wholly inside it can be uniform
 * (a line it shares with other memory is found uniform neither while the
 * block lives nor, see below, when it is born), so only those are
 * forgotten; a block smaller than a line costs no cache search. */
void tw_cache_forget_inside(Addr a, SizeT len) {
  Addr first = (a + line_size - 1) >> line_bits, end = (a + len) >> line_bits;
  if (first < end)
    tw_cache_forget_range(first << line_bits, (end - first) << line_bits);
}

/* A block was allocated in memory outside every block. A line there can
 * only be uniform with a non-heap owner: a line uniform with a block's slot
 * lies in that block while it lives, and its lines are forgotten when it is
 * freed (tw_heap.c keeps this so, or forgets every new block's range). So
 * when no line was ever found uniform with a non-heap owner on the block's
 * pages, there is nothing to forget and the caches are not searched. */
void tw_cache_forget_fresh_range(Addr a, SizeT len) {
  if (len == 0)
    len = 1;
  Addr first = a >> PAGE_BITS, last = (a + len - 1) >> PAGE_BITS;
  for (Addr pg = first; nh_pages && pg <= last; pg++) {
    if (nh_pages[nh_find(pg)] == pg) {
      tw_cache_forget_range(a, len);
      return;
    }
  }
}

/* At exit: dirty lines still cached count as writebacks (they would reach
 * memory eventually). */
static TwLine line_at(const TwCache *c, UWord set, UInt i) {
  TwWay w = *way_at(c, set, i);
  TwLine l = {line_of(c, set, w), way_slot(w), way_flags(w)};
  return l;
}

void tw_cache_flush(void) {
  for (UWord set = 0; set < d1.sets; set++)
    for (UInt i = 0; i < d1.assoc; i++) {
      TwLine l = line_at(&d1, set, i);
      if (l.ln != NO_LINE && (l.flags & (F_DIRTY | F_LLCDIRTY)) == F_DIRTY)
        llc_write_back_in(&l);
    }
  for (UWord set = 0; set < llc.sets; set++)
    for (UInt i = 0; i < llc.assoc; i++) {
      TwLine l = line_at(&llc, set, i);
      llc_evicted(&l);
    }
}

/* A forked child starts with empty caches: lines the parent dirtied are the
 * parent's writebacks. */
void tw_cache_reset(void) {
  cache_clear(&d1);
  cache_clear(&llc);
}
