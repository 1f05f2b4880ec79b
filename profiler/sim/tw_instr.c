/* SPDX-License-Identifier: MIT */
/* Instrumentation of the tierwise Valgrind tool: every guest load and store
 * (plain, guarded, dirty-helper memory effects, CAS, LL/SC) becomes a call
 * to tw_load/tw_store, and the guest instruction clock tw_icount is advanced
 * before each side exit and at the end of each superblock. Under --roi=FUNC
 * the first instruction of FUNC calls tw_roi_func_entered and every
 * superblock ending in a return calls tw_roi_returned (tw_roi.c). */
#include "pub_tool_basics.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_machine.h"
#include "pub_tool_tooliface.h"

#include "tw_sim.h"

ULong tw_icount;

static void add_access(IRSB *sb, Bool store, IRExpr *addr, Int size,
                       IRExpr *guard) {
  const HChar *name = store ? "tw_store" : "tw_load";
  void *fn = store ? (void *)tw_store : (void *)tw_load;
  IRExpr **args = mkIRExprVec_2(addr, mkIRExpr_HWord(size));
  IRDirty *d = unsafeIRDirty_0_N(2, name, VG_(fnptr_to_fnentry)(fn), args);
  if (guard)
    d->guard = guard;
  addStmtToIRSB(sb, IRStmt_Dirty(d));
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
  UInt seen = 0, counted = 0;
  Bool roi_func = tw_roi_is_function(), pools = tw_poolfn_any();
  for (; i < sbIn->stmts_used && sbIn->stmts[i]->tag != Ist_IMark; i++)
    addStmtToIRSB(sb, sbIn->stmts[i]);
  for (; i < sbIn->stmts_used; i++) {
    IRStmt *st = sbIn->stmts[i];
    if (!st || st->tag == Ist_NoOp)
      continue;
    switch (st->tag) {
    case Ist_IMark:
      seen++;
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
      if (e->tag == Iex_Load)
        add_access(sb, False, e->Iex.Load.addr, sizeofIRType(e->Iex.Load.ty),
                   NULL);
      break;
    }
    case Ist_Store:
      add_access(sb, True, st->Ist.Store.addr,
                 sizeofIRType(typeOfIRExpr(sbIn->tyenv, st->Ist.Store.data)),
                 NULL);
      break;
    case Ist_StoreG: {
      IRStoreG *sg = st->Ist.StoreG.details;
      add_access(sb, True, sg->addr,
                 sizeofIRType(typeOfIRExpr(sbIn->tyenv, sg->data)), sg->guard);
      break;
    }
    case Ist_LoadG: {
      IRLoadG *lg = st->Ist.LoadG.details;
      IRType ty = Ity_INVALID, wide = Ity_INVALID;
      typeOfIRLoadGOp(lg->cvt, &wide, &ty);
      add_access(sb, False, lg->addr, sizeofIRType(ty), lg->guard);
      break;
    }
    case Ist_Dirty: {
      IRDirty *d = st->Ist.Dirty.details;
      if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify)
        add_access(sb, False, d->mAddr, d->mSize, NULL);
      if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify)
        add_access(sb, True, d->mAddr, d->mSize, NULL);
      break;
    }
    case Ist_CAS: {
      IRCAS *cas = st->Ist.CAS.details;
      Int size = sizeofIRType(typeOfIRExpr(sbIn->tyenv, cas->dataLo));
      if (cas->dataHi)
        size *= 2;
      add_access(sb, False, cas->addr, size, NULL);
      add_access(sb, True, cas->addr, size, NULL);
      break;
    }
    case Ist_LLSC: {
      __typeof__(st->Ist.LLSC) *ll = &st->Ist.LLSC;
      if (ll->storedata == NULL)
        add_access(sb, False, ll->addr,
                   sizeofIRType(typeOfIRTemp(sbIn->tyenv, ll->result)), NULL);
      else
        add_access(sb, True, ll->addr,
                   sizeofIRType(typeOfIRExpr(sbIn->tyenv, ll->storedata)),
                   NULL);
      break;
    }
    case Ist_Exit:
      add_icount(sb, seen - counted);
      counted = seen;
      break;
    default:
      break;
    }
    addStmtToIRSB(sb, st);
  }
  add_icount(sb, seen - counted);
  if (roi_func && sb->jumpkind == Ijk_Ret)
    add_sp_call(sb, layout, "tw_roi_returned", (void *)tw_roi_returned);
  if (pools && sb->jumpkind == Ijk_Ret)
    add_sp_call(sb, layout, "tw_poolfn_returned", (void *)tw_poolfn_returned);
  return sb;
}
