# SPDX-License-Identifier: MIT
"""placement.json (advisor/FORMATS.md "placement.json", format
`tierwise-placement` v1): load and validate (ValueError naming the file,
field and value), build and write. Every verb reads and writes placements
here; the runtime (runtime/src/tw_placement.c) reads the same grammar.
Standard library only, no pathlib (used by `tierwise run`, cli.FAST_VERBS)."""

import json
import os
import re
from typing import Any, Iterable, Optional

FORMAT = "tierwise-placement"
VERSION = 1
TIERS = ("dram", "pmem", "kmem", "hbw")
# The tier-name grammar (FORMATS.md "Tier names"): numa:N for the 16 nodes
# tierwise.h's TW_TIER_NUMA(N) covers, N without a leading zero. The runtime
# and the rewriter check the same vectors (test/runtime/Inputs/tier-vectors.txt).
TIER_NAME = re.compile(r"dram|pmem|kmem|hbw|numa:(?:1[0-5]|[0-9])")


# The runtime's bounds (runtime/src/tw_placement.c tw_plan_fields): JSON
# numbers are doubles there, so a whole number may be written 4096.0, and
# byte counts stop below 2^63. The CLI and the runtime accept the same
# placements (test/runtime/Inputs/placement-vectors.txt).
MAX_BYTES = 9 * 10**18
MAX_RANK = 2**31 - 1
MAX_LIVE = 64  # planned_live entries (TW_PJSON_LIST_MAX)


def valid_tier(name: Any) -> bool:
    return isinstance(name, str) and TIER_NAME.fullmatch(name) is not None


def _not_a_tier(name: Any) -> str:
    """Why `name` is refused. numa:16 is no tier name on any machine (the
    runtime refuses the placement too); a numa:N this machine lacks is one,
    served from DRAM by the runtime with a warning (docs/tiers.md)."""
    if isinstance(name, str) and name.startswith("numa:"):
        return "not a tier (numa:N names nodes 0 to 15, no sign or leading zero)"
    return f"not a tier ({', '.join(TIERS)}, numa:N)"


def _whole(v: Any, lo: int, hi: int) -> bool:
    """v is a whole JSON number (an int, or a float without a fraction) in
    [lo, hi]."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    return (isinstance(v, int) or v.is_integer()) and lo <= v <= hi


def validate(doc: Any, source: str = "placement") -> dict:
    """Raise ValueError on the first field that breaks the grammar."""

    def bad(field, value, why):
        raise ValueError(f"{source}: {field} = {value!r}: {why}")

    if not isinstance(doc, dict):
        bad("(top level)", type(doc).__name__, "must be a JSON object")
    if doc.get("format") != FORMAT:
        bad("format", doc.get("format"), f"expected {FORMAT!r}")
    if isinstance(doc.get("version"), bool) or doc.get("version") != VERSION:
        bad("version", doc.get("version"), f"this tierwise reads version {VERSION}")
    if not valid_tier(doc.get("default_tier")):
        bad("default_tier", doc.get("default_tier"), _not_a_tier(doc.get("default_tier")))
    depth = doc.get("depth")
    if "depth" in doc and not _whole(depth, 1, 64):
        bad("depth", depth, "must be an integer 1..64")
    sites = doc.get("sites")
    if not isinstance(sites, list):
        bad("sites", sites, "must be a list")
    instants: dict[str, int] = {}  # planned_live: one length on every site
    tiers: dict[str, tuple[int, str]] = {}  # stack -> (first site, its tier)
    for i, s in enumerate(sites):
        if (
            not isinstance(s, dict)
            or not isinstance(s.get("stack"), str)
            or not s["stack"]
        ):
            bad(
                f"sites[{i}].stack",
                s.get("stack") if isinstance(s, dict) else s,
                "must be a non-empty stack string",
            )
        if not valid_tier(s.get("tier")):
            bad(f"sites[{i}].tier", s.get("tier"), _not_a_tier(s.get("tier")))
        first, tier = tiers.setdefault(s["stack"], (i, s["tier"]))
        if tier != s["tier"]:
            bad(f"sites[{i}].tier", s["tier"], f"sites[{first}] has the same stack in tier {tier}")
        if "bytes" in s and not _whole(s["bytes"], 0, MAX_BYTES):
            bad(f"sites[{i}].bytes", s["bytes"], "must be an integer >= 0")
        if "dram_bytes" in s:
            head = s["dram_bytes"]
            if not _whole(head, 1, MAX_BYTES) or head % 4096:
                bad(f"sites[{i}].dram_bytes", head, "must be a positive multiple of 4096")
            if s["tier"] == "dram":
                bad(
                    f"sites[{i}].dram_bytes",
                    head,
                    "only for a site whose tier is not dram (the DRAM head of its objects)",
                )
        if "dram_fraction" in s:
            f = s["dram_fraction"]
            if not isinstance(f, (int, float)) or isinstance(f, bool) or not 0 < f <= 1:
                bad(f"sites[{i}].dram_fraction", f, "must be a number in (0, 1]")
            if s["tier"] == "dram":
                bad(
                    f"sites[{i}].dram_fraction",
                    f,
                    "only for a site whose tier is not dram (the DRAM head of its objects)",
                )
        for key in ("rank", "planned_bytes"):
            v = s.get(key)
            if key in s and not _whole(v, key == "rank", MAX_RANK if key == "rank" else MAX_BYTES):
                bad(
                    f"sites[{i}].{key}",
                    v,
                    "must be a positive integer" if key == "rank" else "must be an integer >= 0",
                )
        live = s.get("planned_live")
        if "planned_live" in s and (
            not isinstance(live, list)
            or not 1 <= len(live) <= MAX_LIVE
            or any(not isinstance(x, int) or isinstance(x, bool) or x < 0 for x in live)
            or any(x > s.get("planned_bytes", 0) for x in live)
            or len(live) != instants.setdefault("n", len(live))
        ):
            bad(
                f"sites[{i}].planned_live",
                live if not isinstance(live, list) else f"(a list of {len(live)})",
                f"must be a list of 1 to {MAX_LIVE} integers from 0 to planned_bytes, "
                "as long on every site",
            )
    return doc


def load(path: "os.PathLike[str] | str") -> dict:
    """Read and validate a placement file."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.loads(f.read())
    except FileNotFoundError:
        raise ValueError(f"{path}: placement file not found") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e})") from None
    except RecursionError:  # json's decoder recurses per level of [ and {
        raise ValueError(f"{path}: not valid JSON (nested too deeply)") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text (byte {e.start}); not a placement") from None
    except OSError as e:
        raise ValueError(f"{path}: cannot read the placement ({e.strerror})") from None
    return validate(doc, str(path))


def make(
    sites: Iterable[dict],
    default_tier: str = "dram",
    depth: Optional[int] = None,
    **extra: Any,
) -> dict:
    """A validated placement document; `sites`: dicts with at least stack
    and tier; `extra`: the optional top-level keys (budget_bytes, modules,
    notes, ...), written in the order given, before `sites`; `modules`:
    dicts with module, build_id and (where known) path."""
    doc = {"format": FORMAT, "version": VERSION, "default_tier": default_tier}
    if depth is not None:
        doc["depth"] = depth
    for key, value in extra.items():
        if key == "modules" and value is not None:
            value = [
                {"module": m["module"]}
                | ({"path": m["path"]} if "path" in m else {})
                | {"build_id": m.get("build_id", "")}
                for m in value
            ]
        doc[key] = value
    doc["sites"] = [dict(s) for s in sites]
    return validate(doc)


def write(doc: dict, path: "os.PathLike[str] | str") -> None:
    """Validate `doc` and write it to `path` (a temporary file renamed over
    it: a reader never sees half a placement)."""
    validate(doc, str(path))
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, path)
