# SPDX-License-Identifier: MIT
"""Benchmark: sim profiling time (`valgrind --tool=tierwise`, what
`tierwise profile --backend sim` runs) against `valgrind --tool=cachegrind
--cache-sim=yes` and `valgrind --tool=dhat` on example kernels at a small
scale. Runs are interleaved (tierwise, cachegrind, dhat, native, repeat) and
the best of --repeat runs is kept; prints CPU seconds (user + system of the
run, which stays meaningful on a loaded machine) and ratios side by side,
then the same for wall-clock seconds. With --baseline-lib DIR (the
VALGRIND_LIB directory of another tierwise build, e.g. one before a change)
that build runs in the same interleaving as `tw-base`, and tw/base is the
cost of the change. --same-counts (with --baseline-lib) first checks that
the two builds count the same: each kernel is profiled once by each, and
sites.csv must be identical column by column, objects.csv and stats.json
byte for byte. The runs are made deterministic: one OpenMP thread,
omp_get_wtime fixed at 0 by a preloaded shim (the kernels print elapsed
times, and formatting them changes the [stack] counts and every later
instruction time), and both builds run from the same VALGRIND_LIB path (its
preload library's path is in the client's environment).

usage: profiler_speed.py [--examples DIR] [--scale N] [--repeat N] [--llc-size B]
                         [--baseline-lib DIR] [--same-counts] [--no-dhat]
"""

import argparse
import csv
import os
import subprocess
import shutil
import sys
import tempfile
import time
from pathlib import Path

BUILD = Path(os.environ.get("TIERWISE_BUILD_DIR", Path(__file__).resolve().parents[2] / "build"))
KERNELS = ["pagerank-pull", "bfs", "adjlist"]


def timed(cmd, env=None):
    """(cpu seconds, wall seconds) of one run."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)}: exit status {proc.returncode}")
    return ru.ru_utime + ru.ru_stime, time.monotonic() - t0


FIXED_TIME_C = "double omp_get_wtime(void) { return 0.0; }\n"


def same_counts(kernels, args, libs, tmp):
    """Profiles each kernel with both builds (libs: name -> VALGRIND_LIB)
    and exits with a one-line error unless they count the same."""
    shim = Path(tmp) / "fixed_time.so"
    (Path(tmp) / "fixed_time.c").write_text(FIXED_TIME_C)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", shim, Path(tmp) / "fixed_time.c"], check=True)
    lib = Path(tmp) / "lib"
    for k in kernels:
        out = {}
        for name, src in libs.items():
            shutil.rmtree(lib, ignore_errors=True)
            shutil.copytree(src, lib, symlinks=True)
            env = dict(os.environ, VALGRIND_LIB=str(lib), LD_PRELOAD=str(shim), OMP_NUM_THREADS="1")
            prefix = f"{tmp}/same.{name}"
            cmd = ["valgrind", "-q", "--tool=tierwise", f"--out={prefix}", f"--llc-size={args.llc_size}"]
            subprocess.run(cmd + [str(Path(args.examples) / k), "-g", str(args.scale)], env=env,
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            out[name] = prefix
        a, b = out.values()
        rows = [list(csv.DictReader(open(f"{p}.sites.csv"))) for p in (a, b)]
        if len(rows[0]) != len(rows[1]):
            raise SystemExit(f"{k}: sites.csv: {len(rows[0])} sites against {len(rows[1])}")
        for x, y in zip(*rows):
            for col in x:
                if x[col] != y[col]:
                    raise SystemExit(f"{k}: sites.csv: site {x['site']} column {col}: {x[col]} against {y[col]}")
        for f in ("objects.csv", "stats.json"):
            if Path(f"{a}.{f}").read_bytes() != Path(f"{b}.{f}").read_bytes():
                raise SystemExit(f"{k}: {f} differs between the builds")
        print(f"{k} -g {args.scale}: same counts ({len(rows[0])} sites x {len(rows[0][0])} columns"
              " of sites.csv, objects.csv and stats.json identical)", flush=True)


def main():
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--examples", default=str(BUILD / "examples"))
    p.add_argument("--scale", type=int, default=16)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--llc-size", type=int, default=32 << 20)
    p.add_argument("--baseline-lib", metavar="DIR", help="VALGRIND_LIB of a tierwise build to compare with")
    p.add_argument("--same-counts", action="store_true",
                   help="first check that the build and --baseline-lib count the same")
    p.add_argument("--no-dhat", action="store_true", help="leave DHAT out")
    p.add_argument("kernels", nargs="*", default=KERNELS)
    a = p.parse_args()
    tw_env = dict(os.environ, VALGRIND_LIB=str(BUILD / "lib" / "valgrind"))
    tmp = tempfile.mkdtemp(prefix="tw-speed.")
    tools = {
        "tierwise": (
            ["valgrind", "-q", "--tool=tierwise", f"--out={tmp}/tw.%p", f"--llc-size={a.llc_size}"],
            tw_env,
        ),
        "cachegrind": (
            [
                "valgrind",
                "-q",
                "--tool=cachegrind",
                "--cache-sim=yes",
                "--cachegrind-out-file=/dev/null",
            ],
            None,
        ),
        "dhat": (["valgrind", "-q", "--tool=dhat", "--dhat-out-file=/dev/null"], None),
        "native": ([], None),
    }
    if a.no_dhat:
        del tools["dhat"]
    if a.same_counts:
        if not a.baseline_lib:
            p.error("--same-counts needs --baseline-lib")
        same_counts(a.kernels, a, {"tierwise": BUILD / "lib" / "valgrind", "tw-base": a.baseline_lib}, tmp)
    if a.baseline_lib:
        tools["tw-base"] = (
            tools["tierwise"][0],
            dict(os.environ, VALGRIND_LIB=str(Path(a.baseline_lib).resolve())),
        )
    head = (
        f"{'kernel':<18}"
        + "".join(f"{t:>12}" for t in tools)
        + f"{'tw/cg':>8}"
        + ("" if a.no_dhat else f"{'tw/dhat':>9}")
        + f"{'tw/nat':>8}"
        + (f"{'tw/base':>8}" if a.baseline_lib else "")
    )
    rows = {"cpu": [], "wall": []}
    for k in a.kernels:
        exe = Path(a.examples) / k
        cmd = [str(exe), "-g", str(a.scale)]
        best = {m: {t: float("inf") for t in tools} for m in rows}
        for _ in range(a.repeat):
            for t, (pre, env) in tools.items():
                cpu, wall = timed(pre + cmd, env)
                best["cpu"][t] = min(best["cpu"][t], cpu)
                best["wall"][t] = min(best["wall"][t], wall)
        for m, b in best.items():
            rows[m].append(
                f"{k + ' -g ' + str(a.scale):<18}"
                + "".join(f"{b[t]:>11.2f}s" for t in tools)
                + f"{b['tierwise'] / b['cachegrind']:>8.2f}"
                + ("" if a.no_dhat else f"{b['tierwise'] / b['dhat']:>9.2f}")
                + f"{b['tierwise'] / b['native']:>8.1f}"
                + (f"{b['tierwise'] / b['tw-base']:>8.3f}" if a.baseline_lib else "")
            )
        print(rows["cpu"][-1], "(cpu)", flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    for m in rows:
        print(f"\n{m} seconds, best of {a.repeat}\n{head}")
        print("\n".join(rows[m]))


if __name__ == "__main__":
    sys.exit(main())
