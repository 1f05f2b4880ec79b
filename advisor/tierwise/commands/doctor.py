# SPDX-License-Identifier: MIT
"""`tierwise doctor`: what this machine offers for tiered-memory profiling
and placement (PMU and whether the default sampling events open,
perf_event_paranoid, memkind kinds, PMem/DAX mounts and devices, NUMA nodes,
Valgrind and the sim tool, transparent huge pages) and what tierwise will
use. `--json` prints the same as one JSON object."""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
from pathlib import Path
from typing import Any

from tierwise.cli import VERBS
from tierwise import machine
from tierwise.backends import pmu, sim


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "doctor",
        help=VERBS["doctor"],
        description=__doc__.split("\n\n")[0].replace("`tierwise doctor`: ", ""),
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _read(path, default=None):
    try:
        return Path(path).read_text().strip()
    except OSError:
        return default


def check_pmu() -> dict[str, Any]:
    ok, text = pmu.probe("open")
    enc_ok, enc = pmu.probe("encode")
    events = [
        json.loads(line)["name"] for line in enc.splitlines() if enc_ok and line.startswith("{")
    ]
    return {
        "events_open": ok,
        "detail": text,
        "default_events": events,
        "perf_event_paranoid": _read("/proc/sys/kernel/perf_event_paranoid"),
    }


def check_pmem() -> dict[str, Any]:
    mounts = []
    for line in (_read("/proc/mounts", "") or "").splitlines():
        dev, mnt, fstype, opts = (line.split() + ["", "", "", ""])[:4]
        if "dax" in opts.split(",") or dev.startswith("/dev/pmem"):
            mounts.append({"device": dev, "mount": mnt, "fstype": fstype, "options": opts})
    return {
        "fsdax_mounts": mounts,
        "pmem_devices": sorted(glob.glob("/dev/pmem*")),
        "devdax_devices": sorted(glob.glob("/dev/dax*")),
    }


def check_numa() -> list[dict[str, Any]]:
    """Each NUMA node: CPUs, memory, distance from the local node, the HMAT
    numbers the firmware publishes, and which tier names mean it here
    (memory-only nodes are slow tiers: kmem, numa:N, the cxl preset)."""
    ns = machine.nodes()
    local = machine.local_node(ns)
    out = []
    for n in ns:
        names = machine.tier_names(n, ns)
        out.append(
            {
                "node": n.node,
                "memory_bytes": n.memory_bytes,
                "cpus": n.cpus,
                "memory_only": n.memory_only,
                "distance": local.distance.get(n.node) if local else None,
                "local": local is not None and n.node == local.node,
                "slow_tier": local is not None and n.node != local.node and n.memory_bytes > 0,
                "tier_names": names,
                "hmat": n.hmat,
            }
        )
    return out


def _hmat_text(h):
    if not h:
        return ""
    acc = "access1" if "access1" in h else "access0"
    v = h[acc]
    parts = [
        f"{k.split('_')[0]} {v[k]} ns" for k in ("read_latency", "write_latency") if k in v
    ] + [
        f"{k.split('_')[0]} {v[k] / 1000:g} GB/s"
        for k in ("read_bandwidth", "write_bandwidth")
        if k in v
    ]
    return f"; HMAT ({acc}): " + ", ".join(parts)


def check_valgrind() -> dict[str, Any]:
    ok, why = sim.available()
    return {
        "valgrind": sim.valgrind_version() if shutil.which("valgrind") else None,
        "sim_tool": ok,
        "detail": why,
        "host_cache": sim.host_cache_geometry(),
        "avx512": sim.host_avx512(),
    }


def check_thp() -> dict[str, Any]:
    return {k: _read(f"/sys/kernel/mm/transparent_hugepage/{k}") for k in ("enabled", "defrag")}


def decide(r: dict[str, Any]) -> dict[str, Any]:
    use = {}
    if r["pmu"]["events_open"]:
        use["profile_backend"] = "pmu (events open)"
    elif r["valgrind"]["sim_tool"]:
        use["profile_backend"] = (
            f"sim (pmu: {r['pmu']['detail']}; --backend sample for near-native estimates)"
        )
    else:
        use["profile_backend"] = (
            f"sample (pmu: {r['pmu']['detail']}; sim: {r['valgrind']['detail']})"
        )
    mounts = r["pmem"]["fsdax_mounts"]
    kmem_nodes = [n for n in r["numa"] if n["memory_only"]]
    remote = [n for n in r["numa"] if n["slow_tier"]]
    if mounts:
        use["slow_tier"] = f"pmem: memkind file kind on {mounts[0]['mount']} (fsdax)"
    elif kmem_nodes:
        use["slow_tier"] = (
            f"kmem: memory-only NUMA node{'s' if len(kmem_nodes) > 1 else ''} "
            f"{', '.join(str(n['node']) for n in kmem_nodes)} "
            f"(also {', '.join(t for t in kmem_nodes[0]['tier_names'] if t != 'kmem')})"
        )
    elif remote:
        near = min(remote, key=lambda n: (n["distance"] or 0, n["node"]))
        name = f"numa:{near['node']}"
        also = [t for t in near["tier_names"] if t != name]
        use["slow_tier"] = f"{name} (remote NUMA node, distance {near['distance']}" + (
            f"; also {', '.join(also)})" if also else ")"
        )
    else:
        use["slow_tier"] = (
            "pmem emulated: memkind file kind on a plain directory (--pmem-dir); "
            "no real slow tier here, use `tierwise simulate` to compare placements"
        )
    return use


def run(args: argparse.Namespace) -> int:
    r: dict[str, Any] = {
        "pmu": check_pmu(),
        "memkind": machine.memkind_kinds(),
        "pmem": check_pmem(),
        "numa": check_numa(),
        "valgrind": check_valgrind(),
        "thp": check_thp(),
        "cpu": os.cpu_count(),
    }
    kmem_nodes = [str(n["node"]) for n in r["numa"] if n["memory_only"]]
    if kmem_nodes and "kmem" in r["memkind"]["kinds"]:
        r["memkind"]["kinds"]["kmem"] = (
            f"tier kmem = memory-only NUMA node{'s' if len(kmem_nodes) > 1 else ''} "
            f"{', '.join(kmem_nodes)} (the runtime's NUMA node backend, MPOL_PREFERRED; "
            f"memkind's own MEMKIND_DAX_KMEM kind, not used: {r['memkind']['kinds']['kmem']})"
        )
    r["will_use"] = decide(r)
    if args.json:
        print(json.dumps(r, indent=1))
        return 0
    p, v = r["pmu"], r["valgrind"]
    print(
        f"PMU sampling:      {'events open' if p['events_open'] else 'unavailable'}: {p['detail']}"
    )
    print(f"  default events:  {', '.join(p['default_events']) or '(none encodable)'}")
    print(f"  perf_event_paranoid: {p['perf_event_paranoid']}")
    print(f"memkind:           {r['memkind'].get('library') or r['memkind'].get('error')}")
    for tier, state in r["memkind"]["kinds"].items():
        print(f"  {tier:<17}{state}")
    print(
        f"PMem/DAX:          fsdax mounts {len(r['pmem']['fsdax_mounts'])}, "
        f"/dev/pmem* {len(r['pmem']['pmem_devices'])}, /dev/dax* {len(r['pmem']['devdax_devices'])}"
    )
    for m in r["pmem"]["fsdax_mounts"]:
        print(f"  {m['mount']} ({m['device']}, {m['fstype']})")
    print(f"NUMA nodes:        {len(r['numa'])} (distances from the local node)")
    for n in r["numa"]:
        kind = "memory only" if n["memory_only"] else f"cpus {n['cpus']}"
        if n["local"]:
            role = "local: dram"
        elif n["slow_tier"]:
            role = f"{'memory-only ' if n['memory_only'] else ''}slow tier: {', '.join(n['tier_names'])}"
        else:
            role = "no memory"
        dist = f", distance {n['distance']}" if n["distance"] is not None else ""
        print(
            f"  node {n['node']}: {n['memory_bytes'] >> 20} MiB, {kind}{dist}; {role}"
            f"{_hmat_text(n['hmat'])}"
        )
    print(f"Valgrind:          {v['valgrind'] or 'not installed'}; sim tool: {v['detail']}")
    hc = v["host_cache"]
    if hc:
        print(
            f"  host cache:      L1d {hc.get('l1_size', 0) >> 10} KiB {hc.get('l1_ways')}-way, "
            f"LLC {hc.get('llc_size', 0) >> 10} KiB {hc.get('llc_ways')}-way, {hc.get('line_size')} B lines"
        )
    if v["avx512"]:
        print(
            f"  warning: the CPU has AVX-512 ({', '.join(v['avx512'])}). "
            f"{sim.AVX512_ADVICE}"
        )
    print(f"THP:               {r['thp']['enabled']}")
    print("tierwise will use:")
    for k, val in r["will_use"].items():
        print(f"  {k.replace('_', ' ')}: {val}")
    return 0
