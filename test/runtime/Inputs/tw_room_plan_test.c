/* SPDX-License-Identifier: MIT */
/* The room's planner (runtime/src/tw_room_plan.c) over a table of cases,
 * each with its expected decisions, and its rules (R1-R5) checked over
 * every case's output. Prints 'cases: N, failed: F'. */
#include "tw_room_plan.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define PG 4096u
#define MIB (1024u * 1024u)
#define NONE INT_MAX
#define MAXO 8

typedef struct {
  const char *name;
  int n;                /* objects */
  int rank[MAXO];       /* 1 best, NONE: unranked */
  unsigned char live[MAXO];
  int asking;           /* rank of the object that needs room */
  int demote[MAXO + 1]; /* expected victims in order, -1 ends */
  int order[MAXO + 1];  /* expected pass order, -1 ends */
  uint64_t room, need;  /* room made: the shortfall expected */
  uint64_t want_short;
  uint64_t margin, extra, want_budget;
  int kdemotes, many;
  uint64_t want_margin;
  uint64_t tail, rest; /* growth of a split tail */
  int limited;
  uint64_t want_grow;
} tw_case;

static const tw_case cases[] = {
    {"demotion on: the margin is kept", 3, {1, 2, 3}, {1, 1, 1}, 1,
     {2, 1, -1}, {0, 1, 2, -1}, 0, 5 * MIB, 5 * MIB, MIB, 0, 0, 1, 1, MIB,
     0, 0, 0, 0},
    {"demotion off, preferred-many: no margin", 2, {2, 1}, {1, 1}, 1,
     {0, -1}, {1, 0, -1}, 2 * MIB, MIB, 0, MIB, 0, MIB, 0, 1, 0,
     0, 0, 0, 0},
    {"demotion off, no preferred-many: the margin", 1, {1}, {1}, 1, {-1},
     {0, -1}, MIB, MIB, 0, MIB, 0, 0, 0, 0, MIB, 0, 0, 0, 0},
    {"a full node: a better-ranked object arrives", 4, {3, NONE, 1, 2},
     {1, 1, 1, 1}, 2, {1, 0, -1}, {2, 3, 0, 1, -1}, 0, 4 * MIB + MIB,
     5 * MIB, MIB, 0, 0, 1, 1, MIB, 0, 0, 0, 0},
    {"the best-ranked arrives: no victim is better", 3, {1, 2, 3},
     {1, 1, 1}, 3, {-1}, {0, 1, 2, -1}, 100 * PG, 101 * PG, PG, MIB, 0, 0,
     1, 1, MIB, 0, 0, 0, 0},
    {"free slots are no objects", 4, {5, 9, 1, NONE}, {1, 0, 1, 0}, 1,
     {0, -1}, {2, 0, -1}, 8 * MIB, 8 * MIB, 0, MIB, 0, 7 * MIB, 1, 0, MIB,
     0, 0, 0, 0},
    {"a burst of frees: tails grow within the room", 2, {1, 2}, {1, 1}, 1,
     {1, -1}, {0, 1, -1}, 64 * MIB, MIB, 0, MIB, 0, 63 * MIB, 1, 1, MIB,
     100 * MIB, 0, 0, 63 * MIB},
    {"a burst of frees: the DRAM limit's rest holds", 1, {1}, {1}, 1, {-1},
     {0, -1}, 64 * MIB, 0, 0, MIB, 0, 63 * MIB, 1, 1, MIB, 100 * MIB,
     3 * MIB + 123, 1, 3 * MIB},
    {"room below the margin: only the per-CPU lists", 1, {1}, {1}, 1, {-1},
     {0, -1}, MIB / 2, MIB, MIB / 2, MIB, 512 * 1024, 512 * 1024, 1, 0, MIB,
     8 * MIB, 0, 0, 512 * 1024},
    {"less than a page: no growth", 1, {1}, {1}, 1, {-1}, {0, -1}, MIB + 100,
     0, 0, MIB, 0, 100, 1, 1, MIB, 8 * MIB, 0, 0, 0},
    {"an exchange: pages elsewhere for worse-ranked ones", 3, {2, 1, NONE},
     {1, 1, 1}, 1, {2, 0, -1}, {1, 0, 2, -1}, 0, 300 * PG, 300 * PG, MIB,
     0, 0, 0, 0, MIB, 0, 0, 0, 0},
    {"equal ranks are not victims", 2, {2, 2}, {1, 1}, 2, {-1}, {0, 1, -1},
     0, PG, PG, MIB, 0, 0, 1, 1, MIB, 0, 0, 0, 0},
};

static int failed_case;
static void fail(const tw_case *c, const char *what) {
  printf("FAIL %s: %s\n", c->name, what);
  failed_case = 1;
}

/* The planner's picks in order into \p got (-1 ends), against the
 * expected ones: victims (R1: worse-ranked than the asking object, worst
 * first, all of them) or the pass order (R2: best first, each live object
 * once); \p cand: what was left unpicked. */
static int picks(const tw_case *c, int demote, unsigned char *cand, int *got) {
  const int *want = demote ? c->demote : c->order;
  int k = 0;
  memcpy(cand, c->live, MAXO);
  for (;;) {
    int v = demote ? tw_plan_victim(c->rank, cand, c->n, c->asking)
                   : tw_plan_best(c->rank, cand, c->n);
    if (v < 0)
      break;
    if (!c->live[v] || !cand[v])
      fail(c, "an object not live, or picked twice");
    cand[v] = 0;
    got[k++] = v;
  }
  got[k] = -1;
  for (int i = 0; i <= k; i++)
    if (got[i] != want[i])
      fail(c, demote ? "demotion order" : "pass order");
  return k;
}

static void run(const tw_case *c) {
  unsigned char cand[MAXO];
  int got[MAXO + 1];
  /* demotion: victims in order */
  int k = picks(c, 1, cand, got);
  for (int i = 0; i < k; i++) {
    if (c->rank[got[i]] <= c->asking)
      fail(c, "R1: a victim is not worse-ranked");
    if (i && c->rank[got[i]] > c->rank[got[i - 1]])
      fail(c, "R1: a better-ranked victim before a worse one");
  }
  for (int o = 0; o < c->n; o++)
    if (c->live[o] && c->rank[o] > c->asking && cand[o])
      fail(c, "R1: a worse-ranked object kept its DRAM");
  /* R2: the pass order, best first, each live object once */
  k = picks(c, 0, cand, got);
  for (int i = 1; i < k; i++)
    if (c->rank[got[i]] < c->rank[got[i - 1]])
      fail(c, "R2: a worse-ranked object before a better one");
  /* R3: the shortfall, no more; the budget */
  uint64_t s = tw_plan_short(c->room, c->need);
  if (s != c->want_short)
    fail(c, "shortfall");
  if (s > c->need || (c->room >= c->need && s) || c->room + s < c->need)
    fail(c, "R3: room made is not the shortfall");
  uint64_t b = tw_plan_budget(c->room, c->margin, c->extra);
  if (b != c->want_budget)
    fail(c, "budget");
  if (b > (c->room > c->margin ? c->room - c->margin : 0) + c->extra)
    fail(c, "R3: a budget above the room less the margin");
  if (tw_plan_spend(b, b + PG) != 0 || tw_plan_spend(b, 0) != b)
    fail(c, "R3: spending");
  /* R4: growth by whole pages within the budget and the limit's rest */
  uint64_t g = tw_plan_grow(c->tail, b, c->limited, c->rest, PG);
  if (g != c->want_grow)
    fail(c, "growth");
  if (g % PG || g > b || g > c->tail || (c->limited && g > c->rest))
    fail(c, "R4: growth beyond the budget, tail or limit");
  /* R5 */
  uint64_t m = tw_plan_margin(c->kdemotes, c->many, MIB);
  if (m != c->want_margin)
    fail(c, "margin");
  if (m != MIB && (c->kdemotes || !c->many))
    fail(c, "R5: no margin where the kernel demotes");
}

int main(void) {
  int n = (int)(sizeof(cases) / sizeof(cases[0])), failed = 0;
  for (int i = 0; i < n; i++) {
    failed_case = 0;
    run(&cases[i]);
    failed += failed_case;
  }
  printf("cases: %d, failed: %d\n", n, failed);
  return failed != 0;
}
