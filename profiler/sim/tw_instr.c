/* SPDX-License-Identifier: MIT */
/* Instrumentation of the tierwise Valgrind tool: every guest load and store
 * (plain, guarded, dirty-helper memory effects, CAS, LL/SC) becomes a call
 * to tw_load/tw_store, and the guest instruction clock tw_icount is advanced
 * before each side exit and at the end of each superblock. Under --roi=FUNC
 * the first instruction of FUNC calls tw_roi_func_entered and every
 * superblock ending in a return calls tw_roi_returned (tw_roi.c).
 *
 * Each access also gets a descriptor (TwAccDesc, tw_interval.c), passed in
 * the upper bits of the size argument: its instruction's offset in the
 * superblock, and the dataflow into its address - which earlier loads of
 * the superblock, and which guest integer registers as at superblock entry,
 * its address depends on. The dataflow follows IR temporaries and guest
 * registers written (PUT) and read back (GET) within the superblock,
 * through every operation and through loads (a load's value depends on its
 * own address too); indexed guest state (GetI/PutI), helper calls' results
 * from memory, CAS and LL/SC results carry only their address's
 * dependences. Only the first 64 accesses of a superblock can be named as
 * producers. */
#include "pub_tool_basics.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_machine.h"
#include "pub_tool_tooliface.h"

#include "tw_sim.h"

ULong tw_icount;

/* Dependences of a value: loads of this superblock (bit k: the access with
 * descriptor id base + k) and guest integer registers at entry. */
typedef struct {
  ULong loads;
  UShort regs;
} TwDeps;

/* The dataflow state while instrumenting one superblock. */
typedef struct {
  TwDeps *tmp;   /* per IR temporary */
  TwDeps *state; /* per 8-byte slot of the guest state, once PUT here */
  Bool *put;
  UInt n_slots;
  UInt base;       /* descriptor id of the first access (0: none yet) */
  UInt seen, counted; /* instructions seen; those added to tw_icount */
} TwFlow;

static TwDeps deps_or(TwDeps a, TwDeps b) {
  TwDeps r = {a.loads | b.loads, (UShort)(a.regs | b.regs)};
  return r;
}

/* What a read of the guest state at offset off gives. */
static TwDeps get_deps(const TwFlow *f, Int off) {
  TwDeps r = {0, 0};
  if ((UInt)off / 8 < f->n_slots && f->put[off / 8])
    return f->state[off / 8];
  Int g = tw_gpr_at(off);
  if (g >= 0)
    r.regs = (UShort)(1u << g);
  return r;
}

static TwDeps deps_of(const TwFlow *f, const IRExpr *e) {
  TwDeps r = {0, 0};
  if (!e)
    return r;
  switch (e->tag) {
  case Iex_RdTmp:
    return f->tmp[e->Iex.RdTmp.tmp];
  case Iex_Get:
    return get_deps(f, e->Iex.Get.offset);
  case Iex_Unop:
    return deps_of(f, e->Iex.Unop.arg);
  case Iex_Binop:
    return deps_or(deps_of(f, e->Iex.Binop.arg1), deps_of(f, e->Iex.Binop.arg2));
  case Iex_Triop:
    r = deps_or(deps_of(f, e->Iex.Triop.details->arg1),
                deps_of(f, e->Iex.Triop.details->arg2));
    return deps_or(r, deps_of(f, e->Iex.Triop.details->arg3));
  case Iex_Qop:
    r = deps_or(deps_of(f, e->Iex.Qop.details->arg1),
                deps_of(f, e->Iex.Qop.details->arg2));
    r = deps_or(r, deps_of(f, e->Iex.Qop.details->arg3));
    return deps_or(r, deps_of(f, e->Iex.Qop.details->arg4));
  case Iex_ITE:
    r = deps_or(deps_of(f, e->Iex.ITE.cond), deps_of(f, e->Iex.ITE.iftrue));
    return deps_or(r, deps_of(f, e->Iex.ITE.iffalse));
  case Iex_CCall:
    for (Int i = 0; e->Iex.CCall.args[i]; i++)
      r = deps_or(r, deps_of(f, e->Iex.CCall.args[i]));
    return r;
  case Iex_Load:
    return deps_of(f, e->Iex.Load.addr);
  default: /* constants, GetI, ... */
    return r;
  }
}

static void set_tmp(TwFlow *f, IRTemp t, TwDeps d) {
  if (t != IRTemp_INVALID)
    f->tmp[t] = d;
}

/* The value a load at addr with descriptor id gives: its address's
 * dependences and the load itself. */
static TwDeps loaded(const TwFlow *f, const IRExpr *addr, UInt id) {
  TwDeps d = deps_of(f, addr);
  if (id - f->base < 64)
    d.loads |= 1ULL << (id - f->base);
  return d;
}

/* A descriptor for an access at addr of the current instruction. */
static UInt describe(TwFlow *f, const IRExpr *addr, Bool atomic) {
  TwDeps dep = deps_of(f, addr);
  TwAccDesc d;
  d.atomic = atomic;
  d.prod = dep.loads;
  d.regs = dep.regs;
  d.instr = (UShort)(f->seen < 0xFFFF ? f->seen : 0xFFFF);
  d.seg = (UShort)(f->seen - f->counted < 0xFFFF ? f->seen - f->counted : 0);
  if (f->base == 0) /* the superblock's first access */
    f->base = tw_desc_next();
  d.base = f->base;
  return tw_desc_new(&d);
}

static UInt add_access_kind(IRSB *sb, TwFlow *f, Bool store, IRExpr *addr,
                            Int size, IRExpr *guard, Bool atomic) {
  static void *load_fn, *store_fn;
  if (!load_fn)
    tw_cache_helpers(&load_fn, &store_fn);
  const HChar *name = store ? "tw_store" : "tw_load";
  void *fn = store ? store_fn : load_fn;
  UInt id = describe(f, addr, atomic);
  IRExpr **args = mkIRExprVec_2(
      addr, mkIRExpr_HWord((HWord)(UInt)size | (HWord)id << 16));
  IRDirty *d = unsafeIRDirty_0_N(2, name, VG_(fnptr_to_fnentry)(fn), args);
  if (guard)
    d->guard = guard;
  addStmtToIRSB(sb, IRStmt_Dirty(d));
  return id;
}

static UInt add_access(IRSB *sb, TwFlow *f, Bool store, IRExpr *addr,
                       Int size, IRExpr *guard) {
  return add_access_kind(sb, f, store, addr, size, guard, False);
}

/* A locked read-modify-write at addr: counted for its site (tw_atomic),
 * then its load and store, marked atomic. */
static void add_atomic(IRSB *sb, TwFlow *f, IRExpr *addr, Int size) {
  addStmtToIRSB(sb, IRStmt_Dirty(unsafeIRDirty_0_N(
                        1, "tw_atomic", VG_(fnptr_to_fnentry)((void *)tw_atomic),
                        mkIRExprVec_1(addr))));
  add_access_kind(sb, f, False, addr, size, NULL, True);
  add_access_kind(sb, f, True, addr, size, NULL, True);
}

static void add_icount(IRSB *sb, UInt n) {
  if (n == 0)
    return;
  IRTemp old = newIRTemp(sb->tyenv, Ity_I64);
  IRTemp sum = newIRTemp(sb->tyenv, Ity_I64);
  IRExpr *where = mkIRExpr_HWord((HWord)&tw_icount);
  addStmtToIRSB(sb, IRStmt_WrTmp(old, IRExpr_Load(Iend_LE, Ity_I64, where)));
  addStmtToIRSB(sb,
                IRStmt_WrTmp(sum, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(old),
                                               IRExpr_Const(IRConst_U64(n)))));
  addStmtToIRSB(sb, IRStmt_Store(Iend_LE, where, IRExpr_RdTmp(sum)));
}

/* A call of fn(guest stack pointer) at this point of sb. */
static void add_sp_call(IRSB *sb, const VexGuestLayout *layout,
                        const HChar *name, void *fn) {
  IRTemp sp = newIRTemp(sb->tyenv, Ity_I64); /* dirty call args are atoms */
  addStmtToIRSB(sb, IRStmt_WrTmp(sp, IRExpr_Get(layout->offset_SP, Ity_I64)));
  IRExpr **args = mkIRExprVec_1(IRExpr_RdTmp(sp));
  addStmtToIRSB(sb, IRStmt_Dirty(unsafeIRDirty_0_N(
                        1, name, VG_(fnptr_to_fnentry)(fn), args)));
}

/* A call of fn(guest stack pointer, arg) before the instruction at ip, with
 * the guest's instruction pointer set to ip first (Valgrind updates it
 * lazily), so that the call can unwind the guest's stack. */
static void add_sp_call2(IRSB *sb, const VexGuestLayout *layout, Addr ip,
                         const HChar *name, void *fn, UWord arg) {
  addStmtToIRSB(sb, IRStmt_Put(layout->offset_IP, mkIRExpr_HWord(ip)));
  IRTemp sp = newIRTemp(sb->tyenv, Ity_I64);
  addStmtToIRSB(sb, IRStmt_WrTmp(sp, IRExpr_Get(layout->offset_SP, Ity_I64)));
  IRExpr **args = mkIRExprVec_2(IRExpr_RdTmp(sp), mkIRExpr_HWord(arg));
  addStmtToIRSB(sb, IRStmt_Dirty(unsafeIRDirty_0_N(
                        2, name, VG_(fnptr_to_fnentry)(fn), args)));
}

IRSB *tw_instrument(VgCallbackClosure *closure, IRSB *sbIn,
                    const VexGuestLayout *layout, const VexGuestExtents *vge,
                    const VexArchInfo *archinfo_host, IRType gWordTy,
                    IRType hWordTy) {
  IRSB *sb = deepCopyIRSBExceptStmts(sbIn);
  Int i = 0;
  Bool roi_func = tw_roi_is_function(), pools = tw_poolfn_any();
  TwFlow f;
  VG_(memset)(&f, 0, sizeof f);
  f.tmp = VG_(calloc)("tw.flow", sbIn->tyenv->types_used + 1, sizeof *f.tmp);
  f.n_slots = (UInt)layout->total_sizeB / 8 + 1;
  f.state = VG_(calloc)("tw.flow", f.n_slots, sizeof *f.state);
  f.put = VG_(calloc)("tw.flow", f.n_slots, sizeof *f.put);
  /* Temporaries that are a CAS's address: a plain load from one is the
   * first half of a locked read-modify-write (VEX's lock xadd, lock add:
   * load, compute, CAS), so it is marked atomic too. */
  Bool *cas_addr = VG_(calloc)("tw.flow", sbIn->tyenv->types_used + 1, 1);
  for (Int j = 0; j < sbIn->stmts_used; j++) {
    const IRStmt *st = sbIn->stmts[j];
    if (st && st->tag == Ist_CAS && st->Ist.CAS.details->addr->tag == Iex_RdTmp)
      cas_addr[st->Ist.CAS.details->addr->Iex.RdTmp.tmp] = True;
  }
  for (; i < sbIn->stmts_used && sbIn->stmts[i]->tag != Ist_IMark; i++)
    addStmtToIRSB(sb, sbIn->stmts[i]);
  for (; i < sbIn->stmts_used; i++) {
    IRStmt *st = sbIn->stmts[i];
    if (!st || st->tag == Ist_NoOp)
      continue;
    switch (st->tag) {
    case Ist_IMark:
      f.seen++;
      Int pool_fn = pools ? tw_poolfn_at(st->Ist.IMark.addr) : -1;
      if (pool_fn >= 0) { /* tw_poolfn.c: its arguments, before it runs */
        addStmtToIRSB(sb, st);
        add_sp_call2(sb, layout, st->Ist.IMark.addr, "tw_poolfn_entered",
                     (void *)tw_poolfn_entered, (UWord)pool_fn);
        continue;
      }
      if (roi_func && tw_roi_is_entry(st->Ist.IMark.addr)) {
        addStmtToIRSB(sb, st); /* the call belongs to this instruction */
        add_sp_call(sb, layout, "tw_roi_func_entered",
                    (void *)tw_roi_func_entered);
        continue;
      }
      break;
    case Ist_WrTmp: {
      IRExpr *e = st->Ist.WrTmp.data;
      if (e->tag == Iex_Load) {
        const IRExpr *a = e->Iex.Load.addr;
        UInt id = add_access_kind(
            sb, &f, False, e->Iex.Load.addr, sizeofIRType(e->Iex.Load.ty), NULL,
            a->tag == Iex_RdTmp && cas_addr[a->Iex.RdTmp.tmp]);
        set_tmp(&f, st->Ist.WrTmp.tmp, loaded(&f, e->Iex.Load.addr, id));
      } else {
        set_tmp(&f, st->Ist.WrTmp.tmp, deps_of(&f, e));
      }
      break;
    }
    case Ist_Put: {
      Int off = st->Ist.Put.offset;
      Int size = sizeofIRType(typeOfIRExpr(sbIn->tyenv, st->Ist.Put.data));
      TwDeps d = deps_of(&f, st->Ist.Put.data);
      for (Int s = off / 8; s <= (off + size - 1) / 8 && s < (Int)f.n_slots;
           s++) {
        /* a write of part of a slot keeps what the rest of it held */
        f.state[s] = size < 8 ? deps_or(d, get_deps(&f, s * 8)) : d;
        f.put[s] = True;
      }
      break;
    }
    case Ist_Store:
      add_access(sb, &f, True, st->Ist.Store.addr,
                 sizeofIRType(typeOfIRExpr(sbIn->tyenv, st->Ist.Store.data)),
                 NULL);
      break;
    case Ist_StoreG: {
      IRStoreG *sg = st->Ist.StoreG.details;
      add_access(sb, &f, True, sg->addr,
                 sizeofIRType(typeOfIRExpr(sbIn->tyenv, sg->data)), sg->guard);
      break;
    }
    case Ist_LoadG: {
      IRLoadG *lg = st->Ist.LoadG.details;
      IRType ty = Ity_INVALID, wide = Ity_INVALID;
      typeOfIRLoadGOp(lg->cvt, &wide, &ty);
      UInt id = add_access(sb, &f, False, lg->addr, sizeofIRType(ty), lg->guard);
      set_tmp(&f, lg->dst,
              deps_or(loaded(&f, lg->addr, id), deps_of(&f, lg->alt)));
      break;
    }
    case Ist_Dirty: {
      IRDirty *d = st->Ist.Dirty.details;
      TwDeps res = {0, 0};
      if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify)
        res = loaded(&f, d->mAddr,
                     add_access(sb, &f, False, d->mAddr, d->mSize, NULL));
      if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify)
        add_access(sb, &f, True, d->mAddr, d->mSize, NULL);
      for (Int a = 0; d->args[a]; a++)
        if (!is_IRExpr_VECRET_or_GSPTR(d->args[a]))
          res = deps_or(res, deps_of(&f, d->args[a]));
      set_tmp(&f, d->tmp, res);
      break;
    }
    case Ist_CAS: {
      IRCAS *cas = st->Ist.CAS.details;
      Int size = sizeofIRType(typeOfIRExpr(sbIn->tyenv, cas->dataLo));
      if (cas->dataHi)
        size *= 2;
      add_atomic(sb, &f, cas->addr, size);
      set_tmp(&f, cas->oldLo, deps_of(&f, cas->addr));
      set_tmp(&f, cas->oldHi, deps_of(&f, cas->addr));
      break;
    }
    case Ist_LLSC: {
      __typeof__(st->Ist.LLSC) *ll = &st->Ist.LLSC;
      if (ll->storedata == NULL)
        add_access(sb, &f, False, ll->addr,
                   sizeofIRType(typeOfIRTemp(sbIn->tyenv, ll->result)), NULL);
      else
        add_access(sb, &f, True, ll->addr,
                   sizeofIRType(typeOfIRExpr(sbIn->tyenv, ll->storedata)),
                   NULL);
      set_tmp(&f, ll->result, deps_of(&f, ll->addr));
      break;
    }
    case Ist_Exit:
      add_icount(sb, f.seen - f.counted);
      f.counted = f.seen;
      break;
    default:
      break;
    }
    addStmtToIRSB(sb, st);
  }
  add_icount(sb, f.seen - f.counted);
  if (roi_func && sb->jumpkind == Ijk_Ret)
    add_sp_call(sb, layout, "tw_roi_returned", (void *)tw_roi_returned);
  if (pools && sb->jumpkind == Ijk_Ret)
    add_sp_call(sb, layout, "tw_poolfn_returned", (void *)tw_poolfn_returned);
  VG_(free)(f.tmp);
  VG_(free)(f.state);
  VG_(free)(f.put);
  VG_(free)(cas_addr);
  return sb;
}
