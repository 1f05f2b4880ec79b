/* SPDX-License-Identifier: MIT */
/* Client requests the tierwise runtime sends to the tierwise Valgrind tool
 * during `tierwise simulate` (temporary copy until runtime/common/
 * tw_clientreq.h lands; the codes must stay equal).
 *   TW_CLREQ_SET_TIER(addr, tier): the block starting at addr (announced by
 *     VALGRIND_MALLOCLIKE_BLOCK or from malloc) lives in tier index tier
 *     (1..15; 0 = untiered).
 *   TW_CLREQ_NAME_TIER(tier, name): tier index tier is called name
 *     ("dram", "pmem", ...), used in sites_by_tier.csv. */
#ifndef TW_CLIENTREQ_SIM_H
#define TW_CLIENTREQ_SIM_H
#include "valgrind.h"

enum {
  TW_CLREQ_SET_TIER = VG_USERREQ_TOOL_BASE('T', 'W'),
  TW_CLREQ_NAME_TIER,
};
#endif
