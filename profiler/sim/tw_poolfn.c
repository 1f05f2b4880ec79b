/* SPDX-License-Identifier: MIT */
/* A program's own pool allocator (--alloc-fn, --free-fn), for the tierwise
 * Valgrind tool. A pool that takes a block from malloc once and hands it to
 * one array after another hides every owner but the first: malloc sees one
 * allocation, and every access to the block is charged to that first site.
 * As Massif's --alloc-fn names allocation wrappers, the user names the
 * pool's functions; each call of an alloc-fn that returns p is then a
 * hand-out: an allocation at the site of the alloc-fn's caller (the stack at
 * its entry without its own frame), with its size, and the free-fn's call
 * with p ends it.
 *
 *   --alloc-fn=NAME[:ARG]  ARG (1-6): the integer argument that is the size;
 *                          without it, the hand-out reaches to the end of the
 *                          heap block p lies in (pools of whole blocks)
 *   --free-fn=NAME[:ARG]   ARG: the argument that is the pointer [1]
 *   --alloc-fn=symbols:NAME,NAME,...[:ARG]  (and --free-fn=symbols:...)
 *                          any of these symbols, as in the symbol table
 *                          (mangled; run with --demangle=no): what
 *                          `tierwise profile` passes for a C++ name it
 *                          resolved before the run (advisor/tierwise/roi.py)
 *
 * While a hand-out is live, every access to the heap block it lies in (the
 * pool's block, still an allocation of the pool's own site) is charged to
 * the hand-out's site, and its tier is the block's (so `tierwise simulate`
 * sees what the runtime did to the pool's block). A pool that carves several
 * live hand-outs from one block gets its accesses charged to the newest;
 * the tool says so once. A hand-out outside every tracked block is a block
 * of its own. Arguments are read from the System V AMD64 registers at the
 * function's first instruction, the result from RAX when it returns (the
 * calling thread's stack pointer back above its entry value, as --roi). */
#include "pub_tool_basics.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_stacktrace.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_wordfm.h"

#include "libvex_guest_amd64.h"
#include "tw_sim.h"

#define MAX_FNS 8
#define MAX_PENDING 16 /* nested alloc-fn calls per thread */

typedef struct {
  /* a name, or n_names names one after another, each ended by a NUL */
  HChar *name;
  UInt n_names;
  /* exact symbol names (a @VERSION may follow), not a demangled prefix */
  Bool symbols;
  UInt arg; /* alloc: size argument (0: to the host block's end); free: ptr */
  Bool free;
} PoolFn;

static PoolFn fns[MAX_FNS];
static UInt n_fns;

typedef struct {
  Addr sp;   /* stack pointer at entry */
  UInt site; /* the caller's site */
  ULong size_arg;
  UInt fn;
} Pending;

static Pending *pending; /* [VG_N_THREADS][MAX_PENDING] */
static UInt *n_pending;  /* [VG_N_THREADS] */

typedef struct {
  Addr p;
  SizeT size;
  ULong alloc_time;
  UInt site;
  TwBlock *host; /* the pool's block it lies in; NULL: a block of its own */
} HandOut;

static WordFM *handouts; /* Addr p -> HandOut* */
static Bool warned_shared;

static const Int arg_offset[7] = {
    0,
    offsetof(VexGuestAMD64State, guest_RDI),
    offsetof(VexGuestAMD64State, guest_RSI),
    offsetof(VexGuestAMD64State, guest_RDX),
    offsetof(VexGuestAMD64State, guest_RCX),
    offsetof(VexGuestAMD64State, guest_R8),
    offsetof(VexGuestAMD64State, guest_R9)};

static ULong guest_reg(ThreadId tid, Int offset) {
  ULong v = 0;
  VG_(get_shadow_regs_area)(tid, (UChar *)&v, 0, offset, sizeof v);
  return v;
}

Bool tw_poolfn_option(const HChar *spec, Bool is_free) {
  if (n_fns == MAX_FNS || !*spec)
    return False;
  Bool symbols = VG_(strncmp)(spec, "symbols:", 8) == 0;
  HChar *name = VG_(strdup)("tw.poolfn", symbols ? spec + 8 : spec);
  HChar *colon = VG_(strrchr)(name, ':');
  UInt arg = is_free ? 1 : 0;
  if (colon) {
    *colon = 0;
    if (colon[1] < '1' || colon[1] > '6' || colon[2] || !*name)
      return False;
    arg = (UInt)(colon[1] - '0');
  }
  UInt n_names = 1;
  if (symbols)
    for (HChar *c = name; *c; c++)
      if (*c == ',') {
        *c = 0;
        n_names++;
      }
  fns[n_fns++] = (PoolFn){name, n_names, symbols, arg, is_free};
  return True;
}

Bool tw_poolfn_any(void) { return n_fns > 0; }

Int tw_poolfn_at(Addr a) {
  const HChar *name;
  if (!n_fns || !VG_(get_fnname_if_entry)(VG_(current_DiEpoch)(), a, &name))
    return -1;
  for (UInt i = 0; i < n_fns; i++) {
    const HChar *want = fns[i].name;
    for (UInt k = 0; k < fns[i].n_names; k++, want += VG_(strlen)(want) + 1) {
      SizeT n = VG_(strlen)(want);
      /* a symbol matches with a @VERSION after it; a name "f" matches "f"
       * and, for demangled C++, "f(int, long)" */
      if (*want && VG_(strncmp)(name, want, n) == 0 &&
          (name[n] == 0 || name[n] == (fns[i].symbols ? '@' : '(')))
        return (Int)i;
    }
  }
  return -1;
}

static HandOut *take_handout(Addr p) {
  UWord key, val;
  if (!handouts || !VG_(delFromFM)(handouts, &key, &val, p))
    return NULL;
  return (HandOut *)val;
}

/* Ends a hand-out: its bytes are no longer live at its site, and the host
 * block's accesses go back to the pool's own site. */
static void end_handout(HandOut *h) {
  if (h->host) {
    tw_sites[h->site].cur_bytes -= h->size;
    tw_write_object(h->site, h->size, h->alloc_time, True);
    if (h->host->slot == tw_slot_for(h->site, h->host->tier))
      tw_retag_block(h->host, tw_slot_for(h->host->site, h->host->tier));
    h->host->hosting--;
  } else {
    tw_release_block(h->p, False);
  }
  VG_(free)(h);
}

static void hand_out(const Pending *pd, Addr p) {
  HandOut *old = take_handout(p);
  if (old) /* handed out again without a free-fn call: the last owner ends */
    end_handout(old);
  TwBlock *host = tw_find_block(p);
  SizeT size = fns[pd->fn].arg ? (SizeT)pd->size_arg
               : host          ? host->start + host->size - p
                               : 0;
  HandOut *h = VG_(malloc)("tw.handout", sizeof *h);
  *h = (HandOut){p, size, tw_icount, pd->site, host};
  if (host) {
    TwSite *s = &tw_sites[pd->site];
    s->allocs++;
    s->bytes_allocated += size;
    s->cur_bytes += size;
    if (s->cur_bytes > s->peak_bytes)
      s->peak_bytes = s->cur_bytes;
    UInt slot = tw_slot_for(pd->site, host->tier);
    if (host->hosting++ && !warned_shared) {
      warned_shared = True;
      VG_(umsg)("tierwise: --alloc-fn %s handed out two live pieces of one "
                "heap block; its accesses are charged to the newest\n",
                fns[pd->fn].name);
    }
    tw_slots[slot].allocs++;
    tw_slots[slot].bytes_allocated += size;
    tw_retag_block(host, slot);
    UInt k = 0;
    while (k < s->n_pool_hosts && s->pool_host[k] != host->site)
      k++;
    if (k == s->n_pool_hosts && k < TW_POOL_HOSTS)
      s->pool_host[s->n_pool_hosts++] = host->site;
    if (k < s->n_pool_hosts)
      s->pool_host_bytes[k] += size;
  } else {
    tw_new_block_at(p, size, pd->site, True);
  }
  if (!handouts)
    handouts = VG_(newFM)(VG_(malloc), "tw.handouts", VG_(free), NULL);
  VG_(addToFM)(handouts, p, (UWord)h);
}

VG_REGPARM(2) void tw_poolfn_entered(Addr sp, UWord fn) {
  ThreadId tid = VG_(get_running_tid)();
  if (fns[fn].free) {
    HandOut *h = take_handout((Addr)guest_reg(tid, arg_offset[fns[fn].arg]));
    if (h)
      end_handout(h);
    return;
  }
  if (!pending) {
    pending = VG_(calloc)("tw.pending", VG_N_THREADS * MAX_PENDING,
                          sizeof *pending);
    n_pending = VG_(calloc)("tw.pending", VG_N_THREADS, sizeof *n_pending);
  }
  if (n_pending[tid] == MAX_PENDING)
    return;
  Addr ips[64];
  UInt n = VG_(get_StackTrace)(tid, ips, tw_depth + 24 < 64 ? tw_depth + 24 : 64,
                               NULL, NULL, 0);
  Pending *pd = &pending[tid * MAX_PENDING + n_pending[tid]++];
  pd->sp = sp;
  pd->fn = (UInt)fn;
  pd->site = tw_site_of_ips(n > 1 ? ips + 1 : ips, n > 1 ? n - 1 : n);
  pd->size_arg = fns[fn].arg ? guest_reg(tid, arg_offset[fns[fn].arg]) : 0;
}

VG_REGPARM(1) void tw_poolfn_returned(Addr sp) {
  if (!n_pending)
    return;
  ThreadId tid = VG_(get_running_tid)();
  while (n_pending[tid] > 0) {
    Pending *pd = &pending[tid * MAX_PENDING + n_pending[tid] - 1];
    if (sp <= pd->sp)
      return; /* still inside (a return from a callee of the alloc-fn) */
    n_pending[tid]--;
    Addr p = (Addr)guest_reg(tid, offsetof(VexGuestAMD64State, guest_RAX));
    if (p)
      hand_out(pd, p);
  }
}

/* The pool freed a block that hands out: its hand-outs end with it. */
void tw_poolfn_host_gone(TwBlock *b) {
  if (!handouts)
    return;
  UWord key, val;
  Addr ps[64];
  for (;;) {
    UInt n = 0;
    VG_(initIterFM)(handouts);
    while (n < 64 && VG_(nextIterFM)(handouts, &key, &val))
      if (((HandOut *)val)->host == b)
        ps[n++] = key;
    VG_(doneIterFM)(handouts);
    if (!n)
      return;
    for (UInt i = 0; i < n; i++)
      end_handout(take_handout(ps[i]));
  }
}

/* Hand-outs live at exit go to objects.csv with an empty free time. */
void tw_poolfn_fini(void) {
  UWord key, val;
  if (!handouts)
    return;
  VG_(initIterFM)(handouts);
  while (VG_(nextIterFM)(handouts, &key, &val)) {
    HandOut *h = (HandOut *)val;
    if (h->host) /* one of its own is a live block (tw_heap_fini) */
      tw_write_object(h->site, h->size, h->alloc_time, False);
  }
  VG_(doneIterFM)(handouts);
}
