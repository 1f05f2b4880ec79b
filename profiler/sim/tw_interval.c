/* SPDX-License-Identifier: MIT */
/* Interval model of the tierwise Valgrind tool: how many of each site's LLC
 * misses overlap with other outstanding misses (memory-level parallelism),
 * in the spirit of interval simulation (Eyerman, Eeckhout, Karkhanis and
 * Smith, "A mechanistic performance model for superscalar out-of-order
 * processors", ACM TOCS 27(2), 2009; Sniper's interval core model).
 *
 * An out-of-order core keeps the last W instructions in its reorder buffer
 * (W = --rob). A long-latency load at the head of the window blocks commit;
 * every independent miss issued within the next W instructions is serviced
 * while it waits, so the interval costs one memory latency however many
 * misses it holds (up to the L1D's fill buffers, --mshr, which bound the
 * misses outstanding at once). A miss whose address depends on the value of
 * an earlier missing load cannot issue before that load returns: it starts
 * a new interval and pays a latency of its own (a pointer chase pays one per
 * element). A miss that continues a sweep (tw_stream.c) is taken as covered
 * by the hardware prefetcher, issued ahead of the demand: overlapped.
 *
 * Per thread the tool keeps the last TW_RING misses with their instruction
 * positions (the guest instruction clock tw_icount plus the access's offset
 * in its superblock, exact per instruction) and the current interval: the
 * position of its leading miss and how many misses it holds. Each miss of a
 * counter slot counts in
 *   llc_overlapped_misses  issued within W instructions after the interval's
 *                          leading miss, independent of the misses in
 *                          flight, with a fill buffer free (or a sequential
 *                          miss): it costs no latency of its own;
 *   llc_dependent_misses   its address depends on a missing load still in
 *                          the window that was not prefetched (it leads a
 *                          new interval);
 *   llc_inflight_misses    += the misses in flight with it, itself
 *                          included: those of its interval so far (1 for a
 *                          leading or dependent miss), or for a sequential
 *                          miss those issued in the last W instructions
 *                          (mean misses in flight = this / the slot's LLC
 *                          misses).
 * Every other miss leads a new interval. A locked read-modify-write (CAS,
 * LL/SC: every LOCK-prefixed instruction on amd64) is a fence: its miss
 * overlaps with nothing and the next miss leads a new interval; the tool
 * also counts them per slot (`atomics`, tw_atomic) for the advisor's
 * compute baseline.
 *
 * Dependence. Inside a superblock the instrumenter (tw_instr.c) follows the
 * VEX IR dataflow: temporaries, and guest registers written and read again
 * (PUT/GET), from each load's value to later load addresses, through
 * arithmetic and through other loads, so a load's descriptor names the
 * earlier loads of its superblock it depends on; a miss of one of them in
 * the same execution of the superblock (its position is exactly the
 * instruction distance earlier) makes the miss dependent. Across
 * superblocks the IR says nothing, so the descriptor also names the guest
 * integer registers whose value at superblock entry the address depends on;
 * the miss is dependent when one of them holds (zero- or sign-extended)
 * the value an earlier missing load in the window read, which the tool reads
 * back from memory (the load has completed by then). What is lost across
 * superblocks: a value changed on its way (scaled, offset, moved through
 * memory, a vector or flags register) before it reaches a later
 * superblock's address; a loaded value that a register holds by chance
 * counts as a dependence. Store misses occupy fill buffers and overlap like
 * loads; their addresses are not followed.
 *
 * Threads share tw_icount, so an interval does not survive a thread switch
 * (Valgrind switches threads every 100,000 superblocks or so). */
#include "pub_tool_basics.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vki.h"

#include "libvex_guest_amd64.h"
#include "tw_sim.h"

/* Intel 64 and IA-32 Architectures Optimization Reference Manual (248966),
 * the Skylake microarchitecture (client and server: Skylake-SP and Cascade
 * Lake, the Optane hosts of seeds 001 and 004): a 224-entry reorder buffer,
 * and 10 L1D fill buffers (the manual's Sunny Cove section raises them to
 * 12 "from 10"). */
Long tw_rob = 224, tw_mshr = 10;

/* Misses remembered per thread: more than a window of misses in flight
 * could hold under the fill-buffer bound. */
#define TW_RING 64

typedef struct {
  ULong pos; /* instruction position of the miss */
  Addr addr;
  UInt desc;
  UChar size;
  Bool store;
  Bool prefetched; /* a sequential miss: the prefetcher had it early */
} TwMiss;

typedef struct {
  TwMiss ring[TW_RING];
  UInt n;        /* misses recorded (ring index n % TW_RING is next) */
  ULong lead;    /* position of the current interval's leading miss */
  UInt in_lead;  /* misses in the current interval */
  Bool any_lead; /* an interval was started */
} TwWindow;

static TwWindow **windows; /* per ThreadId, allocated when first used */

/* Access descriptors, indexed by id (0: none). Written at instrumentation
 * time, read on LLC misses. */
static TwAccDesc *descs;
static UInt n_descs = 1, cap_descs;

UInt tw_desc_next(void) { return n_descs; }

UInt tw_desc_new(const TwAccDesc *d) {
  if (n_descs >= cap_descs) {
    cap_descs = cap_descs ? 2 * cap_descs : 4096;
    descs = VG_(realloc)("tw.descs", descs, cap_descs * sizeof *descs);
  }
  descs[n_descs] = *d;
  return n_descs++;
}

/* Offsets of the amd64 integer registers in the guest state, by the bit
 * number TwAccDesc.regs uses. */
static const Int gpr_offset[16] = {
    offsetof(VexGuestAMD64State, guest_RAX),
    offsetof(VexGuestAMD64State, guest_RCX),
    offsetof(VexGuestAMD64State, guest_RDX),
    offsetof(VexGuestAMD64State, guest_RBX),
    offsetof(VexGuestAMD64State, guest_RSP),
    offsetof(VexGuestAMD64State, guest_RBP),
    offsetof(VexGuestAMD64State, guest_RSI),
    offsetof(VexGuestAMD64State, guest_RDI),
    offsetof(VexGuestAMD64State, guest_R8),
    offsetof(VexGuestAMD64State, guest_R9),
    offsetof(VexGuestAMD64State, guest_R10),
    offsetof(VexGuestAMD64State, guest_R11),
    offsetof(VexGuestAMD64State, guest_R12),
    offsetof(VexGuestAMD64State, guest_R13),
    offsetof(VexGuestAMD64State, guest_R14),
    offsetof(VexGuestAMD64State, guest_R15),
};

/* The register (bit number) at guest state offset off, or -1. */
Int tw_gpr_at(Int off) {
  for (Int r = 0; r < 16; r++)
    if (gpr_offset[r] == off)
      return r;
  return -1;
}

static TwWindow *window_of(ThreadId tid) {
  if (UNLIKELY(!windows))
    windows = VG_(calloc)("tw.windows", VG_N_THREADS, sizeof *windows);
  if (UNLIKELY(tid >= VG_N_THREADS))
    tid = 0;
  if (UNLIKELY(!windows[tid]))
    windows[tid] = VG_(calloc)("tw.window", 1, sizeof(TwWindow));
  return windows[tid];
}

/* The value an earlier miss's load read, if its memory is still readable. */
static Bool loaded_value(const TwMiss *e, ULong *v) {
  if (e->size != 4 && e->size != 8)
    return False; /* not an index or a pointer */
  if (!VG_(am_is_valid_for_client)(e->addr, e->size, VKI_PROT_READ))
    return False;
  *v = e->size == 8 ? *(const ULong *)e->addr : *(const UInt *)e->addr;
  return True;
}

/* Does a register the address of d read at superblock entry hold the value
 * the earlier miss e loaded? regval caches the registers (read once). */
static Bool reg_carries(ThreadId tid, const TwAccDesc *d, const TwMiss *e,
                        ULong *regval, UInt *have) {
  ULong v;
  if (!loaded_value(e, &v))
    return False;
  ULong sx = e->size == 4 ? (ULong)(Long)(Int)(UInt)v : v;
  for (UInt r = 0; r < 16; r++) {
    if (!(d->regs >> r & 1))
      continue;
    if (!(*have >> r & 1)) {
      VG_(get_shadow_regs_area)(tid, (UChar *)&regval[r], 0, gpr_offset[r], 8);
      *have |= 1u << r;
    }
    if (regval[r] == v || regval[r] == sx)
      return True;
  }
  return False;
}

VG_REGPARM(1) void tw_atomic(Addr a) {
  const TwOwner *o = tw_find_owner(a);
  tw_slots[o ? o->slot : tw_classify_nonheap(a)].n.atomics++;
}

void tw_interval_miss(UInt slot, UInt desc, Addr a, UWord size, Bool store,
                      Bool stream) {
  static const TwAccDesc none;
  const TwAccDesc *d = desc && desc < n_descs ? &descs[desc] : &none;
  ULong pos = tw_icount + d->seg;
  ThreadId tid = VG_(get_running_tid)();
  TwWindow *w = window_of(tid);
  ULong W = (ULong)tw_rob;
  /* The superblock execution this access belongs to began after entry. */
  ULong entry = pos >= d->instr ? pos - d->instr : 0;
  UInt in_window = 0, have = 0;
  ULong regval[16];
  Bool dependent = False;
  UInt seen = w->n < TW_RING ? w->n : TW_RING;
  for (UInt k = 1; k <= seen; k++) {
    const TwMiss *e = &w->ring[(w->n - k) % TW_RING];
    if (e->pos + W <= pos || e->pos > pos)
      break; /* retired from the window (or another thread's clock) */
    in_window++;
    if (dependent || store || e->store || e->prefetched || e->desc == 0)
      continue;
    UInt k0 = e->desc - d->base;
    if (e->pos > entry) { /* same execution of this superblock */
      if (e->desc >= d->base && k0 < 64 && (d->prod >> k0 & 1))
        dependent = True;
    } else if (d->regs && reg_carries(tid, d, e, regval, &have)) {
      dependent = True;
    }
  }
  TwCounts *c = &tw_slots[slot].n;
  if (d->atomic) {
    /* A locked read-modify-write drains the store buffer and holds later
     * loads: it overlaps with nothing, and the next miss leads anew. */
    if (dependent)
      c->llc_dependent_misses++;
    w->lead = pos;
    w->in_lead = (UInt)tw_mshr;
    w->any_lead = True;
    c->llc_inflight_misses += 1;
  } else if (dependent) {
    c->llc_dependent_misses++;
    w->lead = pos; /* issues when its producer returns: a new interval */
    w->in_lead = 1;
    w->any_lead = True;
    c->llc_inflight_misses += 1;
  } else if (stream) {
    /* prefetched ahead of the demand, with the window's other misses */
    c->llc_overlapped_misses++;
    c->llc_inflight_misses += in_window + 1;
  } else if (w->any_lead && pos >= w->lead && pos - w->lead < W &&
             w->in_lead < (UInt)tw_mshr) {
    c->llc_overlapped_misses++;
    c->llc_inflight_misses += ++w->in_lead;
  } else {
    w->lead = pos;
    w->in_lead = 1;
    w->any_lead = True;
    c->llc_inflight_misses += 1;
  }
  TwMiss *m = &w->ring[w->n++ % TW_RING];
  m->pos = pos;
  m->addr = a;
  m->desc = store ? 0 : desc;
  m->size = size < 255 ? (UChar)size : 255;
  m->store = store;
  m->prefetched = stream;
}
