# SPDX-License-Identifier: MIT
"""Tier models: the fast and slow tier of a machine (latency, bandwidth,
capacity, how to allocate) and the cost-model parameters, read from a preset
in tierwise/tiers/*.toml or a user TOML file (format `tierwise-tiers` v1,
grammar in advisor/FORMATS.md, read by formats.tiers), a slow tier's name
(`kmem`, `numa:N`: the cxl preset's numbers with that slow tier), or built
from this machine (`auto`: NUMA distances and HMAT, see tierwise/machine.py). A model whose slow tier
names a NUMA node says which node of this machine it means (`resolve_slow`),
and one naming a tier this machine cannot serve says so, in `notes`."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tierwise import machine

# The tier file's schema and reader: formats.tiers.
from tierwise.formats.tiers import TIER_FIELDS, Tier, TierModel  # noqa: F401
from tierwise.formats.placement import valid_tier
from tierwise.formats.tiers import read as read_file

PRESET_DIR = Path(__file__).resolve().parent / "tiers"
DEFAULT_PRESET = "optane-appdirect"
AUTO = "auto"
# Presets whose slow tier is a NUMA node: candidates for `auto`'s parameters.
NUMA_PRESETS = ("cxl", "numa-remote", "optane-kmem")
# `--tiers kmem` and `--tiers numa:N`: this preset's numbers with the named
# slow tier, as named (not resolved): the tier names `doctor` shows.
NAMED_SLOW_BASE = "cxl"
NAMED_SLOW = "kmem, numa:N"


def presets() -> list:
    return sorted(p.stem for p in PRESET_DIR.glob("*.toml"))


def named_slow(spec: str) -> bool:
    """`kmem` or `numa:N` (and no file of that name): a preset of the
    NAMED_SLOW_BASE preset's numbers with that slow tier."""
    named = spec == "kmem" or re.fullmatch(r"numa:\d+", spec) is not None
    if not named or Path(spec).exists():
        return False
    if not valid_tier(spec):
        raise ValueError(
            f"--tiers {spec}: no such tier: numa:N names nodes 0 to 15 (advisor/FORMATS.md "
            '"Tier names"), and no tier file of that name exists'
        )
    return True


def load(spec: str | None = None, sysfs: str | os.PathLike[str] | None = None) -> TierModel:
    """A preset name, a TOML file path or `auto` (None: the default preset),
    resolved against the machine whose sysfs is at `sysfs` (default:
    machine.sysfs_root())."""
    from tierwise import machine

    spec = spec or DEFAULT_PRESET
    if spec == AUTO:
        return _auto(machine, sysfs)
    model, resolve = _load_file(spec)
    ns = machine.nodes(sysfs)
    notes = []
    if named_slow(spec):
        notes.append(
            f"tier model {spec}: the {NAMED_SLOW_BASE} preset's latencies and bandwidths, "
            f"slow tier {spec} as named"
        )
    if resolve:
        node = machine.slow_node(ns, resolve)
        what = "memory-only NUMA node" if resolve == "memory-only" else "other NUMA node"
        if node is not None:
            local = machine.local_node(ns)
            name = f"numa:{node.node}"
            notes.append(
                f"tier model {model.name}: slow tier {name} = the nearest {what} of this "
                f"machine (node {node.node}, {node.memory_bytes >> 20} MiB"
                + (", memory only" if node.memory_only else f", cpus {node.cpus}")
                + f", distance {node_distance(local, node)} from node "
                + f"{local.node if local else '?'})"
            )
            model = dataclasses.replace(
                model, slow=dataclasses.replace(model.slow, name=name, alloc=name)
            )
        else:
            notes.append(
                f"tier model {model.name}: this machine has no {what}; the slow tier "
                f"stays {model.slow.name} as the preset says"
            )
    for t in (model.fast, model.slow):
        ok, why = machine.servable(t.name, ns)
        if not ok:
            notes.append(
                f"warning: tier {t.name} cannot be served on this machine ({why}): "
                f"the runtime here would put its sites in dram (fallback)"
            )
    return dataclasses.replace(model, notes=tuple(notes))


def node_distance(local: machine.Node | None, node: machine.Node) -> int:
    return local.distance.get(node.node, 0) if local else 0


def _auto(machine, sysfs) -> TierModel:
    """The tier model of this machine: dram = the local node, slow = the
    nearest memory-only node (else the nearest other node); latencies and
    bandwidths from the HMAT where the firmware publishes them, the rest from
    the NUMA preset whose slow/fast latency ratio is nearest to the SLIT
    distance ratio, which also gives the model parameters."""
    root = machine.sysfs_root(sysfs)
    ns = machine.nodes(sysfs)
    local = machine.local_node(ns)
    slow = machine.slow_node(ns, "memory-only") or machine.slow_node(ns, "nearest")
    if local is None or slow is None:
        raise ValueError(
            f"--tiers auto: {root}/devices/system/node shows {len(ns)} NUMA node(s)"
            + (" and none with CPUs" if ns and local is None else "")
            + ", no second node with memory to be the slow tier; use a preset "
            f"({', '.join(presets())}, {NAMED_SLOW}) or a TOML file"
        )
    d_local = local.distance.get(local.node, 10) or 10
    ratio = node_distance(local, slow) / d_local
    cands = [_load_file(p)[0] for p in NUMA_PRESETS]
    base = min(cands, key=lambda m: abs(m.slow.read_latency_ns / m.fast.read_latency_ns - ratio))
    notes = [
        f"tier model auto: dram = node {local.node} (cpus {local.cpus}, "
        f"{local.memory_bytes >> 20} MiB), numa:{slow.node} = node {slow.node} "
        f"({slow.memory_bytes >> 20} MiB, {'memory only' if slow.memory_only else 'cpus ' + slow.cpus}"
        f", distance {node_distance(local, slow)}, {ratio:.2f}x local)"
    ]
    units = {"read_latency": 1.0, "write_latency": 1.0, "read_bandwidth": 1e-3, "write_bandwidth": 1e-3}
    tiers_out = []
    for role, node, preset_tier, name, alloc in (
        ("fast", local, base.fast, "dram", "default"),
        ("slow", slow, base.slow, f"numa:{slow.node}", f"numa:{slow.node}"),
    ):
        acc = "access1" if "access1" in node.hmat else "access0"
        h = node.hmat.get(acc, {})
        vals, got, missing = {}, [], []
        for f, key in zip(machine.HMAT_FIELDS, TIER_FIELDS):
            if f in h:
                vals[key] = h[f] * units[f]
                unit = "ns" if "latency" in f else "GB/s"
                got.append(f"{f.replace('_', ' ')} {vals[key]:g} {unit}")
            else:
                vals[key] = getattr(preset_tier, key)
                missing.append(f.replace("_", " "))
        if got:
            notes.append(
                f"tier model auto: {name} from the HMAT ({node.dir}/{acc}/initiators): "
                + ", ".join(got)
            )
        if missing:
            where = "no HMAT published" if not got else "the HMAT lacks " + ", ".join(missing)
            notes.append(
                f"tier model auto: {name}: {where} for node {node.node}; "
                f"{'its numbers come' if not got else 'those come'} from the nearest preset "
                f"{base.name} ({role} tier {preset_tier.name}; preset latency ratio "
                f"{base.slow.read_latency_ns / base.fast.read_latency_ns:.2f}, node distance "
                f"ratio {ratio:.2f})"
            )
        tiers_out.append(Tier(name, **vals, capacity=node.memory_bytes, alloc=alloc))
    return dataclasses.replace(
        base,
        name=AUTO,
        source=f"this machine ({root}/devices/system/node)",
        fast=tiers_out[0],
        slow=tiers_out[1],
        notes=tuple(notes),
    )


def _load_file(spec):
    """(model, resolve_slow or None) of a preset name (kmem and numa:N
    included) or TOML file."""
    if named_slow(spec):
        base, _ = read_file(PRESET_DIR / f"{NAMED_SLOW_BASE}.toml")
        alloc = "kmem-dax" if spec == "kmem" else spec
        model = dataclasses.replace(
            base,
            name=spec,
            source=f"{base.source} (the {NAMED_SLOW_BASE} preset's numbers, slow tier {spec})",
            slow=dataclasses.replace(base.slow, name=spec, alloc=alloc),
        )
        return model, None
    path = Path(spec)
    if not path.suffix == ".toml" or not path.exists():
        if (PRESET_DIR / f"{spec}.toml").exists():
            path = PRESET_DIR / f"{spec}.toml"
        elif path.suffix == ".toml":
            raise ValueError(f"--tiers {spec}: no such file")
        else:
            raise ValueError(
                f"--tiers {spec}: not a preset ({', '.join(presets())}, {NAMED_SLOW}), {AUTO} "
                "(this machine) nor a .toml file"
            )
    return read_file(path)
