# SPDX-License-Identifier: MIT
"""Per-site per-tier access counts of a placed run, and their modelled time.

Two sources, best first:
1. `sites_by_tier.csv` in a sim profile taken with the placement applied
   (the runtime tells the Valgrind tool each block's tier by a client
   request): columns `site,tier,allocs,bytes_allocated,loads,stores,
   llc_load_misses,llc_store_misses,writebacks`; tier `default` = a block
   the runtime did not tag (pseudo-sites, allocations before it started),
   which lives in system memory.
2. An unplaced sim profile plus the run report of `tierwise run` with the
   placement (FORMATS.md, tierwise-run-report v1): each site's counts are
   split across tiers in proportion to the bytes the runtime actually put in
   each tier (fallbacks included), i.e. accesses are assumed uniform over a
   site's bytes. Sites the report does not name went to its default tier.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from tierwise.formats.tiers import TierModel
    from tierwise.reader import Profile

from tierwise.cost import COUNTS, OPTIONAL, counts_of, system_tier
from tierwise.formats import profile as profile_format


def read_site_tiers(profile_dir: Path, profile: Profile) -> pd.DataFrame | None:
    """Source 1 (formats.profile.read_sites_by_tier); None when the profile
    has no sites_by_tier.csv."""
    return profile_format.read_sites_by_tier(profile_dir, profile)


def resolve_default_tier(counts: pd.DataFrame, model: TierModel) -> pd.DataFrame:
    """Untagged blocks (tier `default`) are in system memory."""
    return counts.assign(tier=counts["tier"].replace("default", system_tier(model).name))


def counts_from_report(
    profile: Profile, report: dict, placement: dict, model: TierModel
) -> pd.DataFrame:
    """Source 2: rows stack, site, tier, COUNTS for every site of the profile.
    A report entry counts for a profile site when its stack is the site's
    stack or a frame-wise prefix of it (FORMATS.md matching rule): looked up
    per prefix, so 12,000 sites against 12,000 entries cost 12,000 x depth
    dictionary look-ups, not their product."""
    default = placement.get("default_tier", system_tier(model).name)
    by_stack: dict = {}
    for e in report.get("sites", []):
        per = by_stack.setdefault(e.get("stack", ""), {})
        for t, b in (e.get("bytes") or {}).items():
            per[t] = per.get(t, 0) + int(b)
    rows: list = []  # (site, tier, share, total)
    for i, stack in profile.sites["stack"].items():
        if stack in ("[static]", "[stack]", "[unknown]"):
            rows.append((i, system_tier(model).name, 1, 1))
            continue
        per_tier: dict = {}
        frames = stack.split(";")
        for k in range(1, len(frames) + 1):
            for t, b in by_stack.get(";".join(frames[:k]), {}).items():
                per_tier[t] = per_tier.get(t, 0) + b
        n = sum(per_tier.values())
        if n == 0:
            per_tier, n = {default: 1}, 1
        for t, b in per_tier.items():
            if b:
                rows.append((i, t, b, n))
    site, tier = [r[0] for r in rows], [r[1] for r in rows]
    share, total = [r[2] for r in rows], [r[3] for r in rows]
    c = counts_of(profile.sites).loc[site]
    vals = c.to_numpy(dtype="float64") * np.array(share, dtype="float64")[:, None]
    vals /= np.array(total, dtype="float64")[:, None]
    out = pd.DataFrame(vals, columns=c.columns)
    out.insert(0, "site", site)
    out.insert(1, "stack", profile.sites["stack"].loc[site].to_numpy())
    out.insert(2, "tier", tier)
    return out[["site", "stack", "tier"] + COUNTS + OPTIONAL]
