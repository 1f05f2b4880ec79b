# SPDX-License-Identifier: MIT
"""The NUMA tiering yardstick (issue 26; docs/numa-tiering.md): a benchmark,
not a test. Boots a QEMU (TCG) guest whose node 1 is a real KMEM-DAX node
(test/numa/kernel.sh, test/numa/kmem_dax.sh), limits node 0 to a stated
fraction (default 25%) of each program's peak footprint with an mlocked
`numactl --membind=0` filler, and runs the same program in several modes:

  first-touch@6.1      nothing installed
  linux@6.1            kernel.numa_balancing=2 + demotion_enabled (Debian 12's 6.1)
  linux@6.12           the same on the newest bookworm-backports kernel
  damon@6.12           DAMON migrate_hot/migrate_cold (+ demotion) on 6.12
  tierwise@6.1         `tierwise advise --tiers kmem --dram-budget <node 0 free>`
                       on a host-made sim profile, applied with the runtime
  tierwise+linux@6.1   the same with Linux tiering on
  first-touch@6.12, tierwise@6.12, tierwise+linux@6.12   the same on 6.12
  first-touch@7.2, linux@7.2, tierwise@7.2, tierwise+linux@7.2   the same on
                       Debian unstable's
                       7.2 (split packages: test/numa/kernel.sh)
  tierwise-pair@7.2    two instances of the program at once, each advised for
                       half of node 0 and run with TIERWISE_DRAM_LIMIT=auto
                       over 2 local processes (its share); each priced
                       against the oracle of half
  tierwise-quad@7.2    the same with four instances, a quarter each
  tierwise-sample@7.2  the user's whole flow in the guest, on the run's own
                       scale: `tierwise profile --backend sample --roi
                       markers` of the
                       program (no Valgrind, no PMU), `tierwise advise` for
                       node 0's free memory there, the run with it (issue 37)
  damon-auto@7.2       DAMON's self-tuned tiering: migrate_cold/migrate_hot
                       with quota goals on node 0's use (node_mem_free_bp
                       0.5%, node_mem_used_bp 99.7%: the kernel's
                       samples/damon/mtier.c), no demotion

During the program's kernel (examples/common stops the program at its start
and end: TW_EX_STOP_AT_KERNEL) test/bench/numa_sample samples, with
move_pages(2), where each object's pages are. The mean node-0 share of each
object's pages is priced with tierwise's own cost model
(advisor/tierwise/cost.py, the `cxl` preset, the per-site access counts of
the program's sim profile with --roi markers) into a ratio to all-DRAM;
pages the kernel migrated during the kernel region (pgmigrate_success) are
added at 4 KiB each at the slow tier's read bandwidth; NUMA hint faults are
reported, not priced. The ORACLE of a case is the best split of the node-0
capacity the case really held among the objects live in the kernel
(fractional knapsack by benefit per byte, per-site fractions), so cases are
compared at equal DRAM. TCG wall times are not NUMA latencies: no time is
compared.

  .venv/bin/python test/bench/numa_tiering.py [--programs pagerank-pull,...]
      [--modes tierwise@6.1,...] [--fraction 0.25] [-o build/bench/numa-tiering]
      [--table-only | --collect]

Results accumulate in OUT/results.json (a rerun of some modes replaces only
those rows); the table is printed and written to OUT/table.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "advisor"))
import pandas as pd  # noqa: E402

from tierwise import cost, reader, tiers  # noqa: E402
from tierwise.select import peak_footprint  # noqa: E402

PAGE = 4096
MiB = 1 << 20
# program -> (arguments of the sim profile, simulated LLC, extra arguments of
# the guest run, kernel work of the run / of the profile). The PageRank runs
# 5x the profile's iterations in the guest, to give the kernel's tiering
# time to act (the per-site counts scale with the iterations; the migration
# cost is priced against the run's own modelled time).
PROGRAMS = {
    "pagerank-pull": (["-g", "18", "-n", "10"], "2M", ["-n", "50"], 5.0),
    "bfs": (["-g", "18"], "2M", [], 1.0),
    "sssp": (["-g", "18"], "2M", [], 1.0),
    "fwlike-pagerank": (["-g", "18"], "2M", [], 1.0),
    "fwlike-bfs": (["-g", "18"], "2M", [], 1.0),
    # framework drivers (examples/frameworks): the libraries' own arrays are
    # listed with -v (tw_gb_objects, tw_ig_objects); scale 16, whose peak
    # (the graph's build) is that of the examples at 18
    "gb-pagerank": (["-g", "16", "-n", "10"], "2M", ["-n", "50"], 5.0),
    "ig-bfs": (["-g", "16"], "2M", [], 1.0),
}
MODES = ["first-touch@6.1", "linux@6.1", "tierwise@6.1", "tierwise+linux@6.1",
         "first-touch@6.12", "linux@6.12", "damon@6.12", "tierwise@6.12", "tierwise+linux@6.12",
         "first-touch@7.2", "linux@7.2", "damon-auto@7.2", "tierwise@7.2", "tierwise+linux@7.2",
         "tierwise-pair@7.2", "tierwise-quad@7.2", "tierwise-sample@7.2"]
# the modes of several instances at once: how many
PARTS = {"tierwise-pair": 2, "tierwise-quad": 4}
# the kernels: a newest package of a suite from a private apt source list
# (the system's sources are not touched); 6.1 is what Debian 12's
# linux-image-amd64 depends on
SUITES = {"6.12": ("bookworm-backports", r"^linux-image-6\.12\.[0-9.]+\+deb12-amd64$", "bpo"),
          "7.2": ("unstable", r"^linux-image-7\.2\.[0-9.]+\+deb14-amd64$", "unstable")}
# tierwise-sample's flow in the guest (numa_tiering_guest.sh), for the results
SAMPLE_FLOW = ("tierwise profile --backend sample --roi markers --sample-runs N --llc-size LLC -o NAME.prof "
               "-- PROGRAM ARGS; "
               "tierwise advise NAME.prof --tiers kmem --dram-budget TARGET -o NAME.placement.json")
# guest geometries: vCPUs (all on node 0), node 0 MiB, node 1 MiB (KMEM-DAX;
# kmem hot-adds 128 MiB less)
GEOMETRIES = {"small": (2, 1024, 640), "large": (4, 2048, 1280)}
GEOMETRY = GEOMETRIES["small"]


def sh(cmd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, text=True, **kw)


def tw(*args, **kw) -> subprocess.CompletedProcess:
    return sh([str(ROOT / "build" / "bin" / "tierwise"), *map(str, args)], **kw)


def commit() -> str:
    head = sh(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True).stdout.strip()
    dirty = sh(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
               capture_output=True).stdout.strip()
    return head + ("+dirty" if dirty else "")


def run_args(prog: str) -> list:
    """The guest run's arguments: the profile's, with the run's extras
    replacing an option of the same name."""
    args, _, extra, _ = PROGRAMS[prog]
    out = list(args)
    for k in range(0, len(extra), 2):
        if extra[k] in out:
            out[out.index(extra[k]) + 1] = extra[k + 1]
        else:
            out += extra[k : k + 2]
    return out


# --- host side: profile, peak, placement -----------------------------------
def profile(out: Path, prog: str) -> Path:
    args, llc = PROGRAMS[prog][:2]
    d = out / "prof" / f"{prog}{''.join(args)}-llc{llc}"
    if (d / "meta.json").exists():
        return d
    print(f"# {prog}: sim profile {' '.join(args)} --llc-size {llc} --roi markers", flush=True)
    t0 = time.time()
    r = tw("profile", "--backend", "sim", "--llc-size", llc, "--llc-ways", "16", "--roi", "markers",
           "-o", d, "--",
           ROOT / "build" / "examples" / prog, *args, "-v",
           env=dict(os.environ, OMP_NUM_THREADS="1"), capture_output=True)
    if r.returncode != 0:
        sys.exit(f"profiling {prog} failed: {r.stderr.strip().splitlines()[-3:]}")
    (d / "objects.txt").write_text(r.stderr)
    (d / "seconds").write_text(f"{time.time() - t0:.1f}\n")
    return d


def advise(out: Path, prog: str, prof: Path, budget: int, reuse: bool = False) -> tuple[Path, str]:
    """`tierwise advise --tiers kmem` (cxl where kmem is refused) for the
    node-0 capacity the guest leaves the program; with `reuse`, the
    placement made before (a guest may be reading it)."""
    pl = out / "placements" / f"{prog}-{budget >> 10}K.json"
    pl.parent.mkdir(parents=True, exist_ok=True)
    for t in ("kmem", "cxl"):
        cmd = ["advise", prof, "--tiers", t, "--dram-budget", f"{budget >> 10}K", "-o", pl]
        if reuse and pl.exists() and pl.with_suffix(f".{t}.log").exists():
            if "wrote" in pl.with_suffix(f".{t}.log").read_text():
                return pl, "tierwise " + " ".join(map(str, cmd)).replace(str(ROOT) + "/", "")
            continue
        r = tw(*cmd, capture_output=True)
        (pl.with_suffix(f".{t}.log")).write_text(r.stdout + r.stderr)
        if r.returncode == 0:
            return pl, "tierwise " + " ".join(map(str, cmd)).replace(str(ROOT) + "/", "")
    sys.exit(f"advise for {prog} failed: {r.stderr.strip()[-400:]}")


# --- guest --------------------------------------------------------------------
def kernel(out: Path, which: str) -> dict:
    """vmlinuz, initrd, moddir of Debian 12's 6.1 (what linux-image-amd64
    depends on), the newest 6.12 of bookworm-backports or the newest 7.2 of
    unstable (SUITES)."""
    top = ROOT / "build" / "numa"
    top.mkdir(parents=True, exist_ok=True)
    if which == "6.1":
        pick = ("apt-cache depends linux-image-amd64 | awk '$1 == \"Depends:\" && "
                "$2 ~ /^linux-image-6\\.1\\.0-[0-9]+-amd64$/ {print $2; exit}'")
        parts = ""
    else:
        suite, pattern, sub = SUITES[which]
        parts = str(top / sub)
        Path(parts).mkdir(exist_ok=True)
        (Path(parts) / f"{suite}.sources").write_text(
            f"Types: deb\nURIs: http://deb.debian.org/debian\nSuites: {suite}\n"
            "Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n")
        o = f"-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts={parts} -o Dir::State::Lists={parts}/lists"
        pick = (f"mkdir -p {parts}/lists/partial; apt-cache {o} show linux-image-amd64 >/dev/null 2>&1 || "
                f"apt-get -q {o} update >/dev/null 2>&1; apt-cache {o} search --names-only "
                f"'{pattern}' | cut -d' ' -f1 | sort -V | tail -1")
        cached = sorted(p for p in top.glob("kernel/linux-image-*") if re.match(pattern, p.name))
    pkg = sh(["bash", "-c", pick], capture_output=True).stdout.strip()
    if not pkg and which != "6.1" and cached:
        pkg = cached[-1].name
    if not pkg:
        sys.exit(f"no {which} kernel package found")
    script = (f"say() {{ echo \"numa_tiering: $*\" >&2; }}; die() {{ echo \"numa_tiering: $*\" >&2; exit 1; }}; "
              f"source {ROOT}/test/numa/kernel.sh; tw_kernel {top} {pkg} {parts}; "
              f"tw_initramfs {top} {ROOT}; tw_kmem_dax {GEOMETRY[1]} {GEOMETRY[2]} {GEOMETRY[0]}; "
              "echo \"$vmlinuz\"; echo \"$initrd\"; echo \"$moddir\"; echo \"$kver\"; "
              "echo \"$kmem_dax_append\"; echo \"${qemu_numa[*]}\"")
    r = sh(["bash", "-c", script], capture_output=True)
    if r.returncode != 0:
        sys.exit(r.stderr)
    v, i, m, k, app, q = r.stdout.strip().splitlines()[-6:]
    return {"vmlinuz": v, "initrd": i, "moddir": m, "kver": k, "append": app, "qemu": q.split()}


def boot(out: Path, kern: dict, runs: list, env: dict, timeout: int) -> Path:
    d = out / "guest" / kern["kver"]
    d.mkdir(parents=True, exist_ok=True)
    for f in ("done", "timeline", "failed"):
        (d / f).unlink(missing_ok=True)
    (d / "runs").write_text("".join(" ".join(map(str, r)) + "\n" for r in runs))
    (d / "env.sh").write_text("".join(f"{k}={shlex.quote(str(v))}\n" for k, v in env.items()))
    cmd = ["qemu-system-x86_64", "-accel", "tcg", "-cpu", "max", "-nographic", "-no-reboot",
           "-net", "none", "-smp", str(GEOMETRY[0]), "-kernel", kern["vmlinuz"], "-initrd", kern["initrd"],
           "-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,multidevs=remap",
           *kern["qemu"], "-append",
           f"console=ttyS0 quiet panic=-1 nokaslr {kern['append']} "
           f"tw_script={ROOT}/test/bench/numa_tiering_guest.sh tw_arg={d}"]
    print(f"# booting {kern['kver']}: {len(runs)} runs (limit {timeout} s)", flush=True)
    t0 = time.time()
    with open(d / "console.log", "w") as con:
        qemu = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=con, stderr=subprocess.STDOUT)
        done = threading.Event()
        watch = threading.Thread(target=host_load, args=(qemu.pid, d / "host-load", done))
        watch.start()
        try:
            qemu.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            qemu.kill()
            qemu.wait()
            print(f"# guest {kern['kver']} timed out after {timeout} s", flush=True)
        finally:
            done.set()
            watch.join()
    print(f"# guest {kern['kver']} done in {time.time() - t0:.0f} s", flush=True)
    return d


def host_load(pid: int, path: Path, done: threading.Event) -> None:
    """Every second while the guest runs: the host's busy CPUs other than
    QEMU's own (`T OTHER QEMU`, T in seconds since QEMU started, about the
    guest's uptime). Under TCG a guest's CPU stalls while the host runs
    something else on its cores (a vCPU holding a lock, or waited on by an
    IPI, is not running): the kernel phases of runs the host was busy
    beside are not comparable."""
    hz = os.sysconf("SC_CLK_TCK")

    def ticks():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        busy = sum(v) - v[3] - v[4]  # less idle, iowait
        try:
            with open(f"/proc/{pid}/stat") as f:
                q = f.read().rsplit(")", 1)[1].split()
            own = int(q[11]) + int(q[12])  # utime, stime of all its threads
        except OSError:
            own = 0
        return busy, own

    t0, (b0, q0) = time.time(), ticks()
    with open(path, "w") as out:
        while not done.wait(1.0):
            b1, q1 = ticks()
            out.write(f"{time.time() - t0:.1f} {max(b1 - b0 - (q1 - q0), 0) / hz:.2f} {(q1 - q0) / hz:.2f}\n")
            out.flush()
            b0, q0 = b1, q1


def host_other_cpus(d: Path, name: str) -> float | None:
    """The mean of the host's other busy CPUs (host_load) during run
    `name` (the guest's timeline stamps); None where either is missing."""
    try:
        stamps = {}
        for line in (d / "timeline").read_text().splitlines():
            t, what = line.split(" ", 1)
            stamps[what] = float(t)
        lo, hi = stamps[f"start {name}"], stamps[f"end {name}"]
        load = [(float(t), float(o)) for t, o, _q in
                (line.split() for line in (d / "host-load").read_text().splitlines())]
    except (OSError, KeyError, ValueError):
        return None
    seen = [o for t, o in load if lo <= t <= hi]
    return sum(seen) / len(seen) if seen else None


# --- pricing ------------------------------------------------------------------
def parse_samples(path: Path) -> dict:
    res = {"samples": [], "vmstat": {}, "held": [], "exit": None, "kernel_s": None,
           "cpustat": {}, "cputask": {}}
    cur = None
    for line in path.read_text().splitlines():
        f = line.split()
        if f[0] == "object":
            continue
        if f[0] == "sample":
            cur = {"t": float(f[2]), "kind": f[3], "objs": {}}
            res["samples"].append(cur)
        elif f[0] == "page":
            cur["objs"][f[2]] = tuple(int(x) for x in f[3:6])
        elif f[0] == "held":
            kv = dict(x.split("=") for x in f[2:4])
            an = dict(x.split("=") for x in f[5:7])
            res["held"].append({"N0": int(kv["N0"]), "N1": int(kv["N1"]),
                                "anon_N0": int(an["N0"]), "anon_N1": int(an["N1"])})
        elif f[0] == "vmstat":
            res["vmstat"][f[1]] = {k: int(v) for k, v in (x.split("=") for x in f[2:])}
        elif f[0] == "cpustat":  # /proc/stat's cpu line, ticks
            res["cpustat"][f[1]] = [int(x) for x in f[2:]]
        elif f[0] == "cputask":  # when p|k TID COMM UTIME STIME
            res["cputask"].setdefault(f[1], {})[(f[2], f[3])] = (f[4], int(f[5]) + int(f[6]))
        elif f[0] == "exit":
            res["exit"] = int(f[1])
        elif f[0] == "kernel":  # its guest time, within 5 ms (numa_sample.c)
            res["kernel_s"] = float(f[1])
    if res["kernel_s"] is None and len(res["samples"]) > 1:
        # an older numa_sample: from the first sample to the last, which
        # is taken up to one interval after the kernel's end
        res["kernel_s_upper"] = res["samples"][-1]["t"] - res["samples"][0]["t"]
    return res


USER_HZ = 100  # /proc/stat's and /proc/PID/stat's ticks


def kernel_cpu(sam: dict) -> dict | None:
    """Who had the guest's CPUs during the kernel phase, in seconds (from
    numa_sample's cpustat/cputask lines): the program's own threads, the
    runtime's watcher (the thread named tw-room), the kernel's memory
    threads by kind (kswapd, kcompactd, kworker, ...), and the CPUs' idle
    and iowait time. None for a run sampled before numa_sample counted."""
    st, tk = sam.get("cpustat", {}), sam.get("cputask", {})
    if "start" not in st or "end" not in st:
        return None
    d = [b - a for a, b in zip(st["start"], st["end"])]
    out = {"busy_s": (d[0] + d[1] + d[2] + d[5] + d[6]) / USER_HZ,
           "idle_s": d[3] / USER_HZ, "iowait_s": d[4] / USER_HZ,
           "program_s": 0.0, "watcher_s": 0.0, "kthreads_s": {}}
    a, b = tk.get("start", {}), tk.get("end", {})
    for key, (comm, t1) in b.items():
        t = (t1 - a.get(key, (comm, 0))[1]) / USER_HZ
        if not t:
            continue
        if key[0] == "p":
            out["watcher_s" if comm == "tw-room" else "program_s"] += t
        else:  # kworker/0:1-events -> kworker, kswapd0 -> kswapd
            kind = re.match(r"[a-z_]+", comm)
            kind = kind[0] if kind else comm
            out["kthreads_s"][kind] = out["kthreads_s"].get(kind, 0.0) + t
    return out


def object_sites(prof: Path, sites: pd.DataFrame, names: list) -> dict:
    """object name -> site index of the profile, for the objects of `names`
    live in the kernel: the profile run's `object NAME 0xADDR BYTES` lines
    (less those it says it freed before the kernel: `freed NAME`) matched
    to objects.csv rows of the same size live at the kernel, in allocation
    order (the k-th such object of a size is the k-th row of it). Live at
    the kernel: allocated by the instant T at which the last of them was
    and not freed before it; T is estimated from the objects of each size
    that lived longest. A library's temporaries of a named object's size,
    freed before the kernel, are so not taken for it (igraph_create's two
    8 MiB pair_order buffers took ig_oi's and ig_ii's places before, and
    fwlike's build temporary rank's). Where no such instant fits, the k-th
    object of the size in allocation order."""
    objs = pd.read_csv(prof / "objects.csv").sort_values("alloc_time", kind="stable")
    objs["free_time"] = objs["free_time"].fillna(float("inf"))  # (never freed)
    text = (prof / "objects.txt").read_text()
    freed = set(re.findall(r"^freed (\S+)$", text, re.M))
    want: dict = {}  # size -> the kernel's names of it, in print order
    for m in re.finditer(r"^object (\S+) 0x[0-9a-f]+ (\d+)$", text, re.M):
        if m[1] in names and m[1] not in freed and m[1] not in want.get(int(m[2]), []):
            want.setdefault(int(m[2]), []).append(m[1])
    rows = {size: objs[objs["size"] == size] for size in want}
    longest = [r.nlargest(len(want[size]), "free_time", keep="first") for size, r in rows.items()]
    t = max((int(r["alloc_time"].max()) for r in longest if len(r)), default=0)
    out = {}
    for size, r in rows.items():
        live = r[(r["alloc_time"] <= t) & (r["free_time"] > t)]
        for name, site in zip(want[size], (live if len(live) == len(want[size]) else r)["site"]):
            out[name] = site
    key = dict(zip(sites["site"], sites.index)) if "site" in sites else {}
    return {n: key.get(s, s) for n, s in out.items()}


def fractional_oracle(costs: pd.DataFrame, live: dict, capacity: float) -> dict:
    """Best split of `capacity` bytes among the sites in `live` ({site:
    bytes}): fractional knapsack by benefit per byte."""
    f, left = {}, capacity
    order = sorted(live, key=lambda i: -costs.at[i, "benefit"] / max(live[i], 1))
    for i in order:
        take = min(left, live[i])
        f[i] = take / live[i] if live[i] else 1.0
        left -= take
    return f


def price(prof: Path, sam: dict, model, work: float = 1.0, target: float = 0.0) -> dict:
    """Ratio to all-DRAM of a sampled run, its oracle and what it held;
    `work`: the run's kernel work over the profile's (iterations), by which
    the profile's modelled times are scaled against the migration cost."""
    p = reader.read_profile(prof)
    sites, costs = p.sites, cost.site_costs(p.sites, model)
    # objects with no page in any sample were freed before the kernel
    names = sorted(n for n in (sam["samples"][0]["objs"] if sam["samples"] else {})
                   if any(sum(s["objs"][n][:2]) for s in sam["samples"]))
    osite = object_sites(prof, sites, names)
    # per site: node-0 and present pages summed over the objects and samples
    n0, present, live = {}, {}, {}
    for s in sam["samples"]:
        for name, (a, b, _none) in s["objs"].items():
            if name not in osite:
                continue
            i = osite[name]
            n0[i] = n0.get(i, 0) + a
            present[i] = present.get(i, 0) + a + b
    for name in names:
        if name in osite:
            a, b, none = sam["samples"][0]["objs"][name]
            live[osite[name]] = live.get(osite[name], 0) + (a + b + none) * PAGE
    frac = {i: n0[i] / present[i] for i in n0 if present[i]}
    placeable = set(costs.index[costs["placeable"]])
    # sites without sampled objects (small blocks, freed before the kernel)
    # are priced as in DRAM in every case, all-DRAM included
    full = {i: 1.0 for i in placeable}
    case = {**full, **frac}
    slow = model.slow
    vm = sam["vmstat"]
    delta = {k: vm.get("end", {}).get(k, 0) - vm.get("start", {}).get(k, 0)
             for k in vm.get("start", {})}
    migrated = delta.get("pgmigrate_success", 0)
    mig_s = migrated * PAGE / (slow.read_bandwidth_gbs * 1e9)
    t_dram = work * cost.placement_seconds(sites, costs, model, full)
    t_case = work * cost.placement_seconds(sites, costs, model, case) + mig_s
    # node-0 bytes the objects held: the mean over the samples after the
    # kernel's start (at its start the kernel's own vectors may be untouched)
    later = [s for s in sam["samples"] if s["kind"] != "start"] or sam["samples"]
    held_obj = sum(
        sum(s["objs"][n][0] for n in names if n in osite) for s in later
    ) * PAGE / len(later)
    orc = fractional_oracle(costs, live, held_obj)
    t_orc = work * cost.placement_seconds(sites, costs, model, {**full, **{i: 0.0 for i in live}, **orc})
    # the process's node-0 pages over the same samples as the objects'
    idx = [k for k, s in enumerate(sam["samples"]) if s in later]
    held = [sam["held"][k] for k in idx if k < len(sam["held"])] or sam["held"]
    orc_t = fractional_oracle(costs, live, target)
    t_orc_t = work * cost.placement_seconds(sites, costs, model, {**full, **{i: 0.0 for i in live}, **orc_t})
    return {
        "oracle_target": t_orc_t / t_dram,
        "ratio": t_case / t_dram,
        "ratio_no_migration": (t_case - mig_s) / t_dram,
        "oracle": t_orc / t_dram,
        "node0_objects_bytes": held_obj,
        "node0_process_bytes": sum(h["N0"] for h in held) * PAGE / max(len(held), 1),
        "node0_anon_bytes": sum(h["anon_N0"] for h in held) * PAGE / max(len(held), 1),
        "live_bytes": sum(live.values()),
        "samples": len(sam["samples"]),
        "site_fraction": {str(sites.at[i, "location"] if "location" in sites else i): round(v, 3)
                          for i, v in frac.items()},
        "objects": {n: str(sites.at[osite[n], "location"]) if "location" in sites else str(osite[n])
                    for n in osite},
        "vmstat_delta": {k: v for k, v in delta.items() if v and re.match(
            r"pgpromote|pgdemote|numa_hint_faults|pgmigrate_success|numa_pages_migrated", k)},
        "migrated_pages": migrated,
        "kernel_s": sam.get("kernel_s"),
        "kernel_s_upper": sam.get("kernel_s_upper"),
        "kernel_cpu": kernel_cpu(sam),
    }


def other_instance(d: Path, name: str, x: str, prof: Path, model, work: float,
                   share: int) -> dict:
    """Instance x (b, c, d) of tierwise-pair/-quad (NAME.x.*), priced as
    the first."""
    rc = (d / f"{name}.{x}.rc").read_text().strip() if (d / f"{name}.{x}.rc").exists() else None
    sp = d / f"{name}.{x}.samples"
    if rc != "0" or not sp.exists():
        return {"error": f"no result (rc {rc})"}
    if m.startswith("tierwise-sample"):  # the guest's profile and advise
        r["sample_flow"] = (d / f"{name}.profile.log").read_text() if (d / f"{name}.profile.log").exists() else ""
    sam = parse_samples(sp)
    return price(prof, sam, model, work, share) if sam["samples"] else {"error": "no samples"}


# --- table --------------------------------------------------------------------
def kernel_time(r: dict, results: dict, prog: str, mode: str) -> str:
    """The kernel phase's guest time of a cell, and its ratio to first
    touch's on the same kernel where there is one ("<=": an upper bound,
    from a run before numa_sample timed the kernel); with --repeat, the
    median and every run's time; the CPU the runtime's watcher took during
    it, where it ran; the most CPU the host's other processes used during
    a run (host_load), where that was 0.1 CPU or more."""
    def secs(x):
        if x.get("kernel_s") is not None:
            return x["kernel_s"], ""
        return x.get("kernel_s_upper"), "<="
    t, bound = secs(r)
    if t is None:
        return ""
    ft = results.get(f"{prog}|first-touch@{mode.split('@')[1]}") if "@" in mode else None
    t0 = secs(ft)[0] if ft and not mode.startswith("first-touch") else None
    rel = f" = {t / t0:.2f}x FT" if t0 and not bound and not secs(ft)[1] else ""
    runs = [x["kernel_s"] for x in r.get("runs", []) if x.get("kernel_s") is not None]
    each = f" (median of {', '.join(f'{x:.2f}' for x in runs)})" if len(runs) > 1 else ""
    cpus = [x["kernel_cpu"]["watcher_s"] for x in r.get("runs", [r]) if x.get("kernel_cpu")]
    watcher = f"; tw-room {statistics.median_low(cpus):.2f} s" if any(cpus) else ""
    # (the host busy beside the guest: its kernel times are not comparable)
    host = max((x.get("host_other_cpus") or 0 for x in r.get("runs", [r])), default=0)
    busy = f"; host busy {host:.1f} CPU" if host >= 0.1 else ""
    return f"; kernel {bound}{t:.1f} s{each}{rel}{watcher}{busy}"


def table(results: dict, programs: list) -> str:
    modes = [m for m in MODES if any(f"{p}|{m}" in results for p in programs)]
    mib = lambda b: f"{b / MiB:.0f}"
    lines = ["| mode | " + " | ".join(programs) + " |", "|---|" + "---|" * len(programs)]
    for m in modes:
        row = []
        for p in programs:
            r = results.get(f"{p}|{m}")
            if not r or "ratio" not in r:
                row.append(r.get("error", "-") if r else "-")
                continue
            cell = (f"{r['ratio']:.3f}x (oracle {r['oracle']:.3f}x; N0 {mib(r['node0_objects_bytes'])}"
                    f"/{mib(r['node0_process_bytes'])} MiB{kernel_time(r, results, p, m)})")
            for b in r.get("others", [r["b"]] if r.get("b") else []):
                # tierwise-pair/-quad: the other instances
                cell += (f" + {b['ratio']:.3f}x (oracle {b['oracle']:.3f}x; N0 {mib(b['node0_objects_bytes'])} MiB)"
                         if "ratio" in b else f" + {b.get('error')}")
            if "migrated_per_placed_page" in r:  # and what they held together, moved
                cell += (f"; together N0 {mib(r.get('node0_process_sum', 0))} MiB of"
                         f" {mib(r['target'])}, {r['migrated_per_placed_page']:.2f} moves/page"
                         if "node0_process_sum" in r else f"; {r['migrated_per_placed_page']:.2f} moves/page")
            row.append(cell)
        lines.append(f"| {m} | " + " | ".join(row) + " |")
    row = []
    for p in programs:
        r = [results[k] for k in results if k.startswith(p + "|") and "oracle_target" in results[k]]
        row.append(f"{r[-1]['oracle_target']:.3f}x (N0 {mib(r[-1]['target'])} MiB)" if r else "-")
    lines.append("| oracle at node 0's free memory | " + " | ".join(row) + " |")
    lines.append("")
    lines.append("| mode | program | pgpromote_success | pgdemote_* | numa_hint_faults | pgmigrate_success | commit |")
    lines.append("|---|---|---|---|---|---|---|")
    for m in modes:
        for p in programs:
            r = results.get(f"{p}|{m}")
            if not r or "vmstat_delta" not in r:
                continue
            v = r["vmstat_delta"]
            dem = sum(x for k, x in v.items() if k.startswith("pgdemote"))
            lines.append(f"| {m} | {p} | {v.get('pgpromote_success', 0)} | {dem} | "
                         f"{v.get('numa_hint_faults', 0)} | {v.get('pgmigrate_success', 0)} | {r['commit']} |")
    return "\n".join(lines) + "\n"


def run_name(prog: str, mode: str, i: int) -> str:
    """The guest's file names of run i (0-based) of a program in a mode:
    NAME.samples, NAME.err, ...; repetitions after the first get .runN."""
    name = f"{prog}.{mode.split('@')[0]}"
    return name if i == 0 else f"{name}.run{i + 1}"


def collect_run(d: Path, name: str, prog: str, m: str, inf: dict, kern: dict, rev: str,
                a, model) -> dict | None:
    """One run's priced result from the guest's files (None: not run yet,
    with --collect)."""
    r = {"commit": rev, "kernel": kern["kver"], "peak": inf["peak"],
         "target": inf["target"], "args": run_args(prog),
         "advise": (SAMPLE_FLOW if m.startswith("tierwise-sample") else inf.get("advise"))
         if m.startswith("tierwise") else None,
         "runtime_env": a.runtime_env if m.startswith("tierwise") else "", "run": name}
    sp = d / f"{name}.samples"
    rc = (d / f"{name}.rc").read_text().strip() if (d / f"{name}.rc").exists() else None
    if a.collect and rc is None:
        return None  # not run (yet), or still running
    if not sp.exists() or rc != "0":
        r["error"] = f"no result (rc {rc})"
        return r
    if m.startswith("tierwise-sample"):  # the guest's profile and advise
        r["sample_flow"] = (d / f"{name}.profile.log").read_text() if (d / f"{name}.profile.log").exists() else ""
    sam = parse_samples(sp)
    k = PARTS.get(m.split("@")[0], 1)
    share = inf["target"] // k
    if not sam["samples"]:
        r["error"] = "no samples"
    else:
        r.update(price(inf["prof"], sam, model, PROGRAMS[prog][3], share))
    if k > 1:  # the other instances, what they held and moved
        r["advise"] = inf.get(f"advise_part{k}")
        r["others"] = [other_instance(d, name, x, inf["prof"], model, PROGRAMS[prog][3], share)
                       for x in "bcd"[:k - 1]]
        every = [r, *r["others"]]
        placed = sum(x.get("node0_objects_bytes", 0) for x in every) / PAGE
        r["migrated_per_placed_page"] = r.get("migrated_pages", 0) / max(placed, 1)
        r["node0_process_sum"] = sum(x.get("node0_process_bytes", 0) for x in every)
    r["host_other_cpus"] = host_other_cpus(d, name)
    r["mem"] = (d / f"{name}.mem").read_text()
    mc = re.search(r"^commit (\S+)$", r["mem"], re.M)
    if mc:  # the tree the run was started from
        r["commit"] = mc[1]
    return r


def merge_runs(every: list) -> dict:
    """A cell from its runs: the median run by ratio (the lower of the two
    middle ones for an even count), with the median kernel time of all runs
    and every run's figures in "runs" (one run: itself)."""
    if len(every) == 1:
        return every[0]
    ok = sorted((r for r in every if "ratio" in r), key=lambda r: r["ratio"])
    if not ok:
        return every[0]
    cell = dict(ok[(len(ok) - 1) // 2])
    times = [r["kernel_s"] for r in ok if r.get("kernel_s") is not None]
    if times:
        cell["kernel_s"] = statistics.median_low(times)
    cell["runs"] = [{k: r.get(k) for k in ("run", "ratio", "oracle", "kernel_s", "migrated_pages",
                                             "node0_objects_bytes", "kernel_cpu", "host_other_cpus",
                                             "error")}
                    for r in every]
    return cell


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", default=",".join(PROGRAMS))
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--fraction", type=float, default=0.25)
    ap.add_argument("--geometry", choices=GEOMETRIES, default="small",
                    help="the guest: small (2 vCPUs, node 0 1 GiB; default) or large "
                         "(4 vCPUs, node 0 2 GiB, node 1 1.25 GiB)")
    ap.add_argument("--interval-ms", type=int, default=1000)
    ap.add_argument("--above-watermarks", action="store_true",
                    help="leave node 0 the fraction above its zones' low watermarks, not as MemFree")
    ap.add_argument("--runtime-env", default="", metavar="'TIERWISE_X=V ...'",
                    help="more runtime settings for the tierwise modes (the room's knobs: "
                         "docs/room.md); use another -o")
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="run each program in each mode N times in the same boot; each cell "
                         "shows the median run (by ratio) and the median kernel time, and "
                         "keeps every run's figures (its \"runs\")")
    ap.add_argument("--sample-runs", type=int, default=1, metavar="N",
                    help="tierwise-sample: the profile pools N runs (profile --sample-runs)")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per guest boot")
    ap.add_argument("-o", "--out", type=Path, default=ROOT / "build" / "bench" / "numa-tiering")
    ap.add_argument("--table-only", action="store_true", help="print the table of results.json")
    ap.add_argument("--collect", action="store_true",
                    help="price what the last guests left (also of a guest still running) without booting")
    a = ap.parse_args()
    if a.repeat < 1:
        sys.exit("--repeat: at least 1")
    global GEOMETRY
    GEOMETRY = GEOMETRIES[a.geometry]
    a.out = a.out.resolve()  # the guest sees the host's / as /
    programs = a.programs.split(",")
    modes = a.modes.split(",")
    for m in modes:
        if m not in MODES:
            sys.exit(f"--modes: {m} is not one of {', '.join(MODES)}")
    for kv in a.runtime_env.split():
        if not re.fullmatch(r"TIERWISE_[A-Z0-9_]+=[^\s'\"]*", kv):
            sys.exit(f"--runtime-env: {kv!r} is not TIERWISE_NAME=VALUE")
    a.out.mkdir(parents=True, exist_ok=True)
    rpath = a.out / "results.json"
    results = json.loads(rpath.read_text()) if rpath.exists() else {}
    model = tiers.load("cxl")
    if not a.table_only:
        info, env_pl = {}, {}
        for prog in programs:
            prof = profile(a.out, prog)
            peak = peak_footprint(reader.read_profile(prof))
            target = int(peak * a.fraction)
            info[prog] = {"prof": prof, "peak": peak, "target": target}
            if any(m.startswith("tierwise") for m in modes):
                pl, cmd = advise(a.out, prog, prof, target, reuse=a.collect)
                info[prog]["placement"], info[prog]["advise"] = pl, cmd
                env_pl[f"PLACEMENT_{prog.replace('-', '_')}"] = pl
            for mode, k in PARTS.items():
                if any(m.startswith(mode + "@") for m in modes):
                    pl, cmd = advise(a.out, prog, prof, target // k, reuse=a.collect)
                    info[prog][f"advise_part{k}"] = cmd
                    env_pl[f"PLACEMENT_PART{k}_{prog.replace('-', '_')}"] = pl
        rev = commit()
        if a.collect:  # the commit of the runs collected: the one they were started with
            rev = json.loads(rpath.read_text()).get("_started", {}).get("commit", rev) if rpath.exists() else rev
        else:
            results["_started"] = {"commit": rev}
            rpath.write_text(json.dumps(results, indent=1, default=str))
        for kv in ("6.1", *SUITES):
            ms = [m for m in modes if m.endswith("@" + kv)]
            if not ms:
                continue
            kern = kernel(a.out, kv)
            # (each repetition after the others' last: a slow boot or host
            # slows every mode of one round alike)
            runs = [(run_name(prog, m, i), m.split("@")[0], info[prog]["target"] >> 10, prog,
                     " ".join(run_args(prog)))
                    for i in range(a.repeat) for prog in programs for m in ms]
            env = {"SRC": ROOT, "BUILD": ROOT / "build", "MODDIR": kern["moddir"],
                   "INTERVAL_MS": a.interval_ms, "COMMIT": rev,
                   "ABOVE_WMARK": int(a.above_watermarks), "RUNTIME_ENV": a.runtime_env,
                   "SAMPLE_RUNS": a.sample_runs, **env_pl,
                   **{f"LLC_{p.replace('-', '_')}": PROGRAMS[p][1] for p in programs}}
            if a.collect:
                d = a.out / "guest" / kern["kver"]
            else:
                d = boot(a.out, kern, runs, env, a.timeout)
            for prog in programs:
                for m in ms:
                    key = f"{prog}|{m}"
                    every = []
                    for i in range(a.repeat):
                        r = collect_run(d, run_name(prog, m, i), prog, m, info[prog], kern, rev, a, model)
                        if r is not None:
                            every.append(r)
                    if every:
                        results[key] = merge_runs(every)
                        rpath.write_text(json.dumps(results, indent=1, default=str))
    text = table(results, [p for p in PROGRAMS if any(k.startswith(p + "|") for k in results)])
    (a.out / "table.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
