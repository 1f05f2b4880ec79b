/* SPDX-License-Identifier: MIT */
/*
 * Valgrind client requests between the tierwise runtime and the tierwise
 * Valgrind tool (`tierwise simulate`). Natively every request is a no-op of a
 * few instructions (valgrind.h's magic sequence).
 *
 * Protocol, in placement mode, per allocation the runtime serves:
 *   VALGRIND_MALLOCLIKE_BLOCK(p, size, 0, 0)   the user block (not the
 *                                             runtime's 16-byte header)
 *   TW_CLREQ_TIER(p, tier)                     tier: a tw_tier value of
 *                                             tierwise.h (0 dram, 1 pmem,
 *                                             2 kmem, 3 hbw)
 * and per free, before the memory is released:
 *   VALGRIND_FREELIKE_BLOCK(p, 0)
 * realloc is a FREELIKE of the old block and MALLOCLIKE + TIER of the new
 * one, even when the block does not move.
 *
 * The runtime asks once (TW_CLREQ_HELLO) whether the tool is this one. Under
 * another tool (memcheck, helgrind: they do not handle the request, which
 * then returns its default, 0) it announces only the blocks that tool cannot
 * see by itself - memkind's blocks and split mappings, with MALLOCLIKE and
 * FREELIKE only - and none of glibc's, which the tool's malloc replacement
 * already tracks (announcing them again makes memcheck report mismatched
 * frees). See tw_vg in runtime/src/tw_base.h.
 */
#pragma once

#include <valgrind/valgrind.h>

/** Tool base: VG_USERREQ_TOOL_BASE('T','W'). */
#define TW_CLREQ_BASE VG_USERREQ_TOOL_BASE('T', 'W')

enum tw_clreq_code {
  /** arg1: user pointer of a block just announced with MALLOCLIKE_BLOCK;
   *  arg2: its tier (tw_tier). Result: unused (0). */
  TW_CLREQ_CODE_TIER = TW_CLREQ_BASE + 1,
  /** Start / end of the region of interest (tierwise.h TIERWISE_ROI_BEGIN,
   *  TIERWISE_ROI_END); counted by the tool under --roi=markers. */
  TW_CLREQ_CODE_ROI_BEGIN = TW_CLREQ_BASE + 2,
  TW_CLREQ_CODE_ROI_END = TW_CLREQ_BASE + 3,
  /** Is this the tierwise tool? It answers TW_CLREQ_HELLO_REPLY; any other
   *  tool leaves the default, 0. No arguments. */
  TW_CLREQ_CODE_HELLO = TW_CLREQ_BASE + 4,
};

/** The tierwise tool's answer to TW_CLREQ_CODE_HELLO. */
#define TW_CLREQ_HELLO_REPLY 0x7477u /* "tw" */

/** 1 under the tierwise tool, 0 under another tool or natively. */
#define TW_CLREQ_HELLO()                                                       \
  (VALGRIND_DO_CLIENT_REQUEST_EXPR(0, TW_CLREQ_CODE_HELLO, 0, 0, 0, 0, 0) ==   \
   TW_CLREQ_HELLO_REPLY)

/** Tell the tool which tier serves the block at \p ptr. */
#define TW_CLREQ_TIER(ptr, tier)                                               \
  VALGRIND_DO_CLIENT_REQUEST_STMT(TW_CLREQ_CODE_TIER, (ptr), (tier), 0, 0, 0)
