# SPDX-License-Identifier: MIT
"""test/runtime/room-plan-mutants.test: the room planner's table test
(Inputs/tw_room_plan_test.c) fails when a rule it checks is broken. Each
mutant is runtime/src/tw_room_plan.c with one rule broken by a one-line
edit; it is compiled with the table test and run. Prints a line per
mutant, `killed` when the table reports a failure (its first FAIL line
with it), then `mutants: N, survived: S`; exits 1 if one survived, or if an
edit no longer matches the source (the planner changed: update the edit).

usage: plan_mutants.py RUNTIME_SRC TABLE_TEST_C WORKDIR [--cc CC]"""
import argparse
import subprocess
import sys
from pathlib import Path

# (rule, what the edit breaks, text in tw_room_plan.c, its replacement)
MUTANTS = [
    ("R1", "an equally ranked object is a victim",
     "if (cand[i] && rank[i] > above && (v < 0 || rank[i] > rank[v]))",
     "if (cand[i] && rank[i] >= above && (v < 0 || rank[i] > rank[v]))"),
    ("R1", "the best of the worse-ranked goes first",
     "if (cand[i] && rank[i] > above && (v < 0 || rank[i] > rank[v]))",
     "if (cand[i] && rank[i] > above && (v < 0 || rank[i] < rank[v]))"),
    ("R1", "a better-ranked object is a victim",
     "if (cand[i] && rank[i] > above && (v < 0 || rank[i] > rank[v]))",
     "if (cand[i] && (v < 0 || rank[i] > rank[v]))"),
    ("R2", "passes give DRAM to the worst first",
     "if (cand[i] && (v < 0 || rank[i] < rank[v]))",
     "if (cand[i] && (v < 0 || rank[i] > rank[v]))"),
    ("R2", "an object picked twice",
     "if (cand[i] && (v < 0 || rank[i] < rank[v]))",
     "if ((v < 0 || rank[i] < rank[v]))"),
    ("R3", "room made beyond the shortfall",
     "return room < need ? need - room : 0;",
     "return room < need ? need : 0;"),
    ("R3", "a pass spends the margin",
     "return (room > margin ? room - margin : 0) + extra;",
     "return room + extra;"),
    ("R3", "spending below zero",
     "return budget - (used < budget ? used : budget);",
     "return budget - used;"),
    ("R4", "growth by part of a page",
     "grow &= ~(page - 1);",
     ";"),
    ("R4", "growth past the DRAM limit's rest",
     "if (limited)",
     "if (0)"),
    ("R5", "no margin where the kernel demotes",
     "return !kernel_demotes && prefer_many ? 0 : margin;",
     "return prefer_many ? 0 : margin;"),
]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("src", type=Path)
    ap.add_argument("table", type=Path)
    ap.add_argument("work", type=Path)
    ap.add_argument("--cc", default="cc")
    a = ap.parse_args()
    a.work.mkdir(parents=True, exist_ok=True)
    plan = (a.src / "tw_room_plan.c").read_text()
    survived = 0
    for k, (rule, what, old, new) in enumerate(MUTANTS):
        if plan.count(old) != 1:
            print(f"{rule} {what}: the edit's text is not in tw_room_plan.c once")
            return 1
        c = a.work / f"mutant{k}.c"
        c.write_text(plan.replace(old, new))
        exe = a.work / f"mutant{k}"
        subprocess.run([a.cc, "-std=c11", "-O1", "-I", str(a.src), "-o", str(exe), str(a.table), str(c)],
                       check=True)
        out = subprocess.run([str(exe)], capture_output=True, text=True).stdout
        fails = [line for line in out.splitlines() if line.startswith("FAIL")]
        if fails:
            print(f"{rule} {what}: killed ({fails[0]})")
        else:
            print(f"{rule} {what}: SURVIVED")
            survived += 1
    print(f"mutants: {len(MUTANTS)}, survived: {survived}")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
