# SPDX-License-Identifier: MIT
"""A Python multiprocessing pool (fork start method): its workers are forked
from the parent and run its code objects. Under a placement with every site
in pmem they printed `SystemError: unknown opcode` or hung, until the forking
thread waited for the child's copies of the pmem pages (tw_fork.c)."""
import multiprocessing as mp
import sys


def work(n):
    a = bytearray(n * 1000)
    return sum(a[::4096]) + n


if __name__ == "__main__":
    with mp.get_context(sys.argv[1] if len(sys.argv) > 1 else "fork").Pool(2) as p:
        print("pool sum", sum(p.map(work, range(40))), flush=True)
