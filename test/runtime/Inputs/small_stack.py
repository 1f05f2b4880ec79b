#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""small-stack.test's driver: how much stack a thread must have left for
tw_small_stack's allocations, alone and under the runtime.

  small_stack.py PROG SLACK NAME=VAR=VALUE,VAR=VALUE... ...

Finds the least LEFT (in 512-byte steps) at which PROG runs alone, then runs
it at that LEFT + SLACK under each NAME's environment and prints "NAME: ok"
when it ends as alone (exit 0, same output), else what happened and the
least LEFT at which it does run."""

import os
import subprocess
import sys

STEPS = range(512, 65536 + 1, 512)


def run(prog, left, env):
    r = subprocess.run([prog, str(left)], env=env, capture_output=True, text=True)
    return r.returncode, r.stdout


def least(prog, env):
    for left in STEPS:
        rc, out = run(prog, left, env)
        if rc == 0:
            return left, out
    return None, None


def main():
    prog, slack, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    base = {k: v for k, v in os.environ.items() if not k.startswith("TIERWISE_")}
    base.pop("LD_PRELOAD", None)
    alone, _ = least(prog, base)
    if alone is None:
        sys.exit("small_stack: the program does not run alone")
    print(f"alone: runs with {alone} bytes left")
    for mode in modes:
        name, _, spec = mode.partition("=")
        env = dict(base)
        for kv in spec.split(","):
            k, _, v = kv.partition("=")
            env[k] = v
        left = alone + slack
        rc, out = run(prog, left, env)
        _, want = run(prog, left, base)
        if rc == 0 and out == want:
            print(f"{name}: ok")
        else:
            need, _ = least(prog, env)
            print(f"{name}: exit {rc} with {left} bytes left "
                  f"(runs with {need} left)")


if __name__ == "__main__":
    main()
