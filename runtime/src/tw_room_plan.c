/* SPDX-License-Identifier: MIT */
/*
 * Layer 2 (policy): the room's decisions (tw_room.c, docs/room.md
 * "Planner"), pure: no system calls, no globals, no locks, no allocation -
 * the caller passes what it read (ranks, the room, the DRAM limit's rest)
 * and carries out the moves with its mechanics (tw_pages.c, tw_sys.c).
 * test/runtime/Inputs/tw_room_plan_test.c runs them over a table of cases;
 * room-plan-mutants.test breaks each rule below in turn (a one-line edit
 * of this file) and expects that table to fail.
 *
 * Its rules, as invariants:
 * R1 demotion: only objects ranked worse than the one that needs the room
 *    (a greater rank; unranked is INT_MAX, the worst) give up DRAM, worst
 *    first - a worse-ranked page holds DRAM only while no better-ranked
 *    page waits elsewhere, and never the other way round;
 * R2 promotion order: passes give DRAM to the best-ranked object first,
 *    each live object once;
 * R3 room: room is made only when it is short (the demoted bytes are the
 *    shortfall, no more), and a pass spends at most the room less the
 *    margin (plus free pages the room does not count: the per-CPU lists);
 * R4 growth: a split object's tail grows into DRAM by whole pages, within
 *    the pass's budget and the DRAM limit's unreserved rest;
 * R5 margin: none where first touches may go down to the min watermark
 *    (MPOL_PREFERRED_MANY) and the kernel does not demote;
 * R6 exchange: pages come in for as many as went out (the DRAM node's use
 *    unchanged) - kept by tw_room_exchange itself, which moves in at most
 *    what its demotion (R1) moved out: not a decision here, not checked by
 *    the table;
 * and the policy never binds (MPOL_BIND): nothing here asks for it.
 */
#include "tw_room_plan.h"

#include <limits.h>

/* R1: the worst-ranked candidate ranked worse than \p above; -1: none. */
int tw_plan_victim(const int *rank, const unsigned char *cand, int n,
                   int above) {
  int v = -1;
  for (int i = 0; i < n; i++)
    if (cand[i] && rank[i] > above && (v < 0 || rank[i] > rank[v]))
      v = i;
  return v;
}

/* R2: the best-ranked candidate; -1: none. */
int tw_plan_best(const int *rank, const unsigned char *cand, int n) {
  int v = -1;
  for (int i = 0; i < n; i++)
    if (cand[i] && (v < 0 || rank[i] < rank[v]))
      v = i;
  return v;
}

/* R5: the margin kept free above the watermark when room is made. */
uint64_t tw_plan_margin(int kernel_demotes, int prefer_many, uint64_t margin) {
  return !kernel_demotes && prefer_many ? 0 : margin;
}

/* R3: the bytes to demote for \p need with \p room free: the shortfall. */
uint64_t tw_plan_short(uint64_t room, uint64_t need) {
  return room < need ? need - room : 0;
}

/* R3: a pass's budget. */
uint64_t tw_plan_budget(uint64_t room, uint64_t margin, uint64_t extra) {
  return (room > margin ? room - margin : 0) + extra;
}

/* R4: how much of a \p tail bytes tail grows into DRAM (0: none). */
uint64_t tw_plan_grow(uint64_t tail, uint64_t budget, int limited,
                      uint64_t rest, uint64_t page) {
  uint64_t grow = tail < budget ? tail : budget;
  if (limited)
    grow = grow < rest ? grow : rest;
  grow &= ~(page - 1);
  return grow < page ? 0 : grow;
}

/* R3, R6: what is left of \p budget after \p used (never below 0). */
uint64_t tw_plan_spend(uint64_t budget, uint64_t used) {
  return budget - (used < budget ? used : budget);
}
