# SPDX-License-Identifier: MIT
"""Tier models: the fast and slow tier of a machine (latency, bandwidth,
capacity, how to allocate) and the cost-model parameters, read from a preset
in tierwise/tiers/*.toml or a user TOML file (format `tierwise-tiers` v1,
grammar in advisor/README.md)."""

import re

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib
from dataclasses import dataclass, asdict
from pathlib import Path

from tierwise.sizes import parse_size

PRESET_DIR = Path(__file__).resolve().parent / "tiers"
DEFAULT_PRESET = "optane-appdirect"
TIERS_FORMAT = "tierwise-tiers"
TIER_NAME = re.compile(r"dram|pmem|kmem|hbw|numa:\d+")
TIER_FIELDS = ("read_latency_ns", "write_latency_ns", "read_bandwidth_gbs", "write_bandwidth_gbs")
ALLOC_KINDS = re.compile(r"default|memkind-pmem|kmem-dax|hbw|numa:\d+")


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


def presets() -> list:
    return sorted(p.stem for p in PRESET_DIR.glob("*.toml"))


def _num(src, where, key, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{src}: {where}.{key} = {value!r}: expected a positive number")
    return float(value)


def load(spec=None) -> TierModel:
    """A preset name or a TOML file path (None: the default preset)."""
    spec = spec or DEFAULT_PRESET
    path = Path(spec)
    if not path.suffix == ".toml" or not path.exists():
        if (PRESET_DIR / f"{spec}.toml").exists():
            path = PRESET_DIR / f"{spec}.toml"
        elif path.suffix == ".toml":
            raise ValueError(f"--tiers {spec}: no such file")
        else:
            raise ValueError(
                f"--tiers {spec}: not a preset ({', '.join(presets())}) " "nor a .toml file"
            )
    try:
        doc = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: not valid TOML ({e})") from None
    if doc.get("format") != TIERS_FORMAT or doc.get("version") != 1:
        raise ValueError(
            f'{path}: expected format = "{TIERS_FORMAT}" and version = 1, got '
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
        built[name] = Tier(
            name,
            *(_num(path, f"tiers.{name}", k, t[k]) for k in TIER_FIELDS),
            capacity=parse_size(t.get("capacity", "0"), f"{path}: tiers.{name}.capacity"),
            alloc=alloc,
        )
    for role in ("fast", "slow"):
        if doc.get(role) not in built:
            raise ValueError(f"{path}: '{role}' = {doc.get(role)!r} names no [tiers.*] table")
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
    )
