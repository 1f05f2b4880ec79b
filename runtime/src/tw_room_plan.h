/* SPDX-License-Identifier: MIT */
/* The room's decisions, pure (tw_room_plan.c; its rules at the top). */
#ifndef TW_ROOM_PLAN_H
#define TW_ROOM_PLAN_H
#include <stdint.h>

/* \p cand[i]: object i may still be picked (live, not yet picked); \p rank:
 * its placement rank (1 best, INT_MAX: none). */
int tw_plan_victim(const int *rank, const unsigned char *cand, int n,
                   int above);
int tw_plan_best(const int *rank, const unsigned char *cand, int n);
uint64_t tw_plan_margin(int kernel_demotes, int prefer_many, uint64_t margin);
uint64_t tw_plan_short(uint64_t room, uint64_t need);
uint64_t tw_plan_budget(uint64_t room, uint64_t margin, uint64_t extra);
uint64_t tw_plan_grow(uint64_t tail, uint64_t budget, int limited,
                      uint64_t rest, uint64_t page);
uint64_t tw_plan_spend(uint64_t budget, uint64_t used);
#endif
