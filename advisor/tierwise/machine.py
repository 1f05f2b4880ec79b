# SPDX-License-Identifier: MIT
"""This machine's memory as Linux shows it in sysfs: NUMA nodes (CPUs,
memory, SLIT distances), memory-only nodes (CXL expanders, KMEM-DAX PMem)
and the latencies and bandwidths the firmware's HMAT publishes
(nodeN/access{0,1}/initiators/{read,write}_{latency,bandwidth}: ns and MB/s,
Documentation/admin-guide/mm/numaperf.rst). Which node each tier name means
here (`kmem`, `numa:N`, and the slow tier of the `cxl` and `numa-remote`
presets) is decided once, in this module; `tierwise doctor` shows it and
`tiers.load` uses it. The sysfs root is `TIERWISE_SYSFS` when set (tests use
fake trees), else /sys."""

from __future__ import annotations

import ctypes
import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tierwise.formats.placement import valid_tier

HMAT_FIELDS = ("read_latency", "write_latency", "read_bandwidth", "write_bandwidth")


def sysfs_root(root: str | os.PathLike[str] | None = None) -> Path:
    return Path(root or os.environ.get("TIERWISE_SYSFS") or "/sys")


@dataclass(frozen=True)
class Node:
    node: int
    cpus: str  # cpulist, "" for a memory-only node
    memory_bytes: int
    distance: dict  # {other node: SLIT distance}
    # {"access0": {"read_latency": ns, ..., "read_bandwidth": MB/s, ...}, "access1": ...}
    hmat: dict = field(default_factory=dict)

    @property
    def memory_only(self) -> bool:
        return not self.cpus and self.memory_bytes > 0

    @property
    def dir(self) -> str:
        return f"devices/system/node/node{self.node}"


def _read(path, default=""):
    try:
        return Path(path).read_text().strip()
    except OSError:
        return default


def nodes(root: str | os.PathLike[str] | None = None) -> list[Node]:
    """The NUMA nodes under ROOT/devices/system/node, by number (empty when
    the kernel has no NUMA support or ROOT has no such directory)."""
    base = sysfs_root(root) / "devices/system/node"
    found = []
    for d in base.glob("node[0-9]*"):
        if not re.fullmatch(r"node\d+", d.name):
            continue
        n = int(d.name[4:])
        mem = 0
        m = re.search(r"MemTotal:\s+(\d+)\s*kB", _read(d / "meminfo"))
        if m:
            mem = int(m[1]) * 1024
        found.append((n, d, _read(d / "cpulist"), mem))
    found.sort()
    order = [n for n, *_ in found]
    result = []
    for n, d, cpus, mem in found:
        row = _read(d / "distance").split()
        dist = {}
        if len(row) == len(order):
            dist = {o: int(v) for o, v in zip(order, row) if v.isdigit()}
        hmat = {}
        for acc in ("access0", "access1"):
            vals = {}
            for f in HMAT_FIELDS:
                v = _read(d / acc / "initiators" / f)
                if v.isdigit() and int(v) > 0:
                    vals[f] = int(v)
            if vals:
                hmat[acc] = vals
        result.append(Node(n, cpus, mem, dist, hmat))
    return result


def local_node(ns: list[Node]) -> Node | None:
    """The node tierwise treats as local: the lowest-numbered node with CPUs
    (a process runs there unless bound elsewhere)."""
    with_cpus = [n for n in ns if n.cpus]
    return with_cpus[0] if with_cpus else None


def _dist(local, n):
    return local.distance.get(n.node, 10 if n.node == local.node else 20)


def slow_node(ns: list[Node], want: str) -> Node | None:
    """The node a preset's slow tier means here. want = "memory-only" (the
    nearest memory-only node: a CXL expander, KMEM-DAX) or "nearest" (the
    nearest other node with memory, memory-only or not). None if there is
    none."""
    local = local_node(ns)
    if local is None:
        return None
    cands = [n for n in ns if n.node != local.node and n.memory_bytes > 0]
    if want == "memory-only":
        cands = [n for n in cands if n.memory_only]
    elif want != "nearest":
        raise ValueError(f"resolve_slow = '{want}': expected memory-only or nearest")
    return min(cands, key=lambda n: (_dist(local, n), n.node), default=None)


RESOLVING_PRESETS = {"cxl": "memory-only", "numa-remote": "nearest"}


def tier_names(node: Node, ns: list[Node]) -> list[str]:
    """The tier names and presets that mean `node` on this machine."""
    local = local_node(ns)
    if local is not None and node.node == local.node:
        return ["dram"]
    names = [f"numa:{node.node}"]
    if node.memory_only:
        names.insert(0, "kmem")
    for preset, want in RESOLVING_PRESETS.items():
        s = slow_node(ns, want)
        if s is not None and s.node == node.node:
            names.append(f"{preset} preset")
    return names


MEMKIND_KINDS = {
    "MEMKIND_DEFAULT": "dram",
    "MEMKIND_HBW": "hbw",
    "MEMKIND_DAX_KMEM": "kmem",
    "MEMKIND_HIGHEST_CAPACITY": "highest-capacity",
}


def memkind_kinds() -> dict[str, Any]:
    """memkind's kinds on this machine: {"library": ..., "kinds": {tier: state}}
    (memkind_check_available; `hbw` is served only where it says available)."""
    try:
        lib = ctypes.CDLL("libmemkind.so.0")
    except OSError as e:
        return {"library": None, "error": str(e), "kinds": {}}
    lib.memkind_check_available.argtypes = [ctypes.c_void_p]
    kinds = {}
    for sym, tier in MEMKIND_KINDS.items():
        try:
            kind = ctypes.c_void_p.in_dll(lib, sym)
        except ValueError:
            kinds[tier] = "not in this memkind"
            continue
        kinds[tier] = "available" if lib.memkind_check_available(kind) == 0 else "unavailable"
    kinds["pmem"] = "available (file kind on any directory; fsdax mount for real PMem)"
    return {"library": "libmemkind.so.0", "kinds": kinds}


@functools.cache
def _memkind_kinds_cached():
    return memkind_kinds()


def servable(
    tier: str, ns: list[Node], kinds: dict[str, Any] | None = None
) -> tuple[bool, str]:
    """(True, why) if this machine can serve `tier` (a placement tier name);
    (False, why) otherwise. kinds: memkind_kinds()["kinds"] (asked when None
    and the tier is hbw: its availability comes only from memkind)."""
    m = re.fullmatch(r"numa:(\d+)", tier) if valid_tier(tier) else None
    if m:
        n = next((x for x in ns if x.node == int(m[1])), None)
        if n is None or n.memory_bytes == 0:
            have = ", ".join(str(x.node) for x in ns) or "none"
            return False, f"this machine has no NUMA node {m[1]} with memory (nodes: {have})"
        return True, f"NUMA node {n.node}"
    if tier == "kmem":
        mo = [x.node for x in ns if x.memory_only]
        if not mo:
            return False, "this machine has no memory-only NUMA node (kmem means those)"
        return True, f"memory-only NUMA node(s) {', '.join(map(str, mo))}"
    if tier == "hbw":
        state = (kinds or _memkind_kinds_cached()["kinds"]).get("hbw", "unavailable")
        return state == "available", f"memkind MEMKIND_HBW {state}"
    return True, "always served (dram: glibc; pmem: memkind file kind on a directory)"
