# SPDX-License-Identifier: MIT
"""Tier model files (advisor/FORMATS.md "Tier model files", format
`tierwise-tiers` v1, TOML): the schema (`Tier`, `TierModel`), the reader
and its validation (ValueError naming the file, key and value). The presets
in tierwise/tiers/*.toml are such files; which file a --tiers argument
names, and `auto`, are tierwise/tiers.py's."""

import re
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Optional, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python < 3.11
    import tomli as tomllib

from tierwise.formats.placement import TIER_NAME
from tierwise.sizes import parse_size

FORMAT = "tierwise-tiers"
VERSION = 1
TIER_FIELDS = ("read_latency_ns", "write_latency_ns", "read_bandwidth_gbs", "write_bandwidth_gbs")
ALLOC_KINDS = re.compile(r"default|memkind-pmem|kmem-dax|hbw|numa:(?:1[0-5]|[0-9])")


@dataclass(frozen=True)
class Tier:
    name: str
    read_latency_ns: float
    write_latency_ns: float
    read_bandwidth_gbs: float
    write_bandwidth_gbs: float
    capacity: int
    alloc: str


@dataclass(frozen=True)
class TierModel:
    name: str
    source: str
    fast: Tier
    slow: Tier
    mlp: float = 4.0
    line_bytes: int = 64
    compute_ns_per_access: float = 0.3
    stream_miss_ratio: float = 0.25
    prefetch_factor: float = 64.0
    # a locked read-modify-write (LOCK XADD/CMPXCHG): ~18 cycles on Skylake
    # (Agner Fog, instruction tables), at ~3 GHz as compute_ns_per_access
    atomic_ns: float = 6.0
    # What the advisor must say about this model on this machine: where it
    # came from (auto), which node a preset's slow tier resolved to, tiers
    # this machine cannot serve.
    notes: tuple = ()

    def tier(self, name: str) -> Tier:
        if name == self.fast.name:
            return self.fast
        if name == self.slow.name:
            return self.slow
        raise ValueError(
            f"tier '{name}' is not in the tier model {self.name} "
            f"(it has {self.fast.name}, {self.slow.name})"
        )

    def to_json(self) -> dict:
        """The `tiers` object of placement.json."""
        return {
            t.name: {k: v for k, v in asdict(t).items() if k != "name"}
            for t in (self.fast, self.slow)
        }


def _num(src: Any, where: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{src}: {where}.{key} = {value!r}: expected a positive number")
    return float(value)


def read(path: Path) -> Tuple[TierModel, Optional[str]]:
    """(model, resolve_slow or None) of the tier model file at `path`."""
    try:
        doc = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: not valid TOML ({e})") from None
    if doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise ValueError(
            f'{path}: expected format = "{FORMAT}" and version = {VERSION}, got '
            f"{doc.get('format')!r} version {doc.get('version')!r}"
        )
    tiers = doc.get("tiers")
    if not isinstance(tiers, dict):
        raise ValueError(f"{path}: missing [tiers.NAME] tables")
    built = {}
    for name, t in tiers.items():
        if not TIER_NAME.fullmatch(name):
            raise ValueError(f"{path}: tier name '{name}' must be dram, pmem, kmem, hbw or numa:N")
        for key in TIER_FIELDS:
            if key not in t:
                raise ValueError(f"{path}: tiers.{name} has no '{key}'")
        alloc = str(t.get("alloc", "default"))
        if not ALLOC_KINDS.fullmatch(alloc):
            raise ValueError(
                f"{path}: tiers.{name}.alloc = '{alloc}': expected default, "
                "memkind-pmem, kmem-dax, hbw or numa:N"
            )
        read_ns, write_ns, read_gbs, write_gbs = (
            _num(path, f"tiers.{name}", k, t[k]) for k in TIER_FIELDS
        )
        built[name] = Tier(
            name,
            read_ns,
            write_ns,
            read_gbs,
            write_gbs,
            capacity=parse_size(t.get("capacity", "0"), f"{path}: tiers.{name}.capacity"),
            alloc=alloc,
        )
    for role in ("fast", "slow"):
        if doc.get(role) not in built:
            raise ValueError(f"{path}: '{role}' = {doc.get(role)!r} names no [tiers.*] table")
    resolve = doc.get("resolve_slow")
    if resolve is not None and resolve not in ("memory-only", "nearest"):
        raise ValueError(
            f"{path}: resolve_slow = {resolve!r}: expected \"memory-only\" or \"nearest\""
        )
    if resolve is not None and not (
        TIER_NAME.fullmatch(doc["slow"]) and doc["slow"].startswith("numa:")
    ):
        raise ValueError(f"{path}: resolve_slow needs a numa:N slow tier, not {doc['slow']!r}")
    model = doc.get("model", {})
    return TierModel(
        name=str(doc.get("name", path.stem)),
        source=str(path),
        fast=built[doc["fast"]],
        slow=built[doc["slow"]],
        mlp=_num(path, "model", "mlp", model.get("mlp", 4)),
        line_bytes=int(_num(path, "model", "line_bytes", model.get("line_bytes", 64))),
        compute_ns_per_access=float(model.get("compute_ns_per_access", 0.3)),
        stream_miss_ratio=float(model.get("stream_miss_ratio", 0.25)),
        prefetch_factor=_num(path, "model", "prefetch_factor", model.get("prefetch_factor", 64)),
        atomic_ns=_num(path, "model", "atomic_ns", model.get("atomic_ns", 6.0)),
    ), resolve
