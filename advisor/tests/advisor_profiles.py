# SPDX-License-Identifier: MIT
"""Helpers for the advisor tests: write hand-made profile directories."""

import json
from pathlib import Path

SITE_HEADER = (
    "site,stack,location,allocs,bytes_allocated,peak_bytes,loads,stores,"
    "llc_load_misses,llc_store_misses,writebacks"
)


def site_row(site, stack, peak, loads=0, stores=0, lm=0, sm=0, wb=0, location=None, allocs=1):
    loc = location if location is not None else f"f{site} x.c:{site + 1}"
    return f"{site},{stack},{loc},{allocs},{peak},{peak},{loads},{stores},{lm},{sm},{wb}"


def write_profile(d, rows, objects=None, meta=None, depth=6, modules=None):
    """rows: sites.csv data lines (or site_row results); objects: list of
    (site, size, alloc_time, free_time or None)."""
    d = Path(d)
    d.mkdir(parents=True, exist_ok=True)
    m = {
        "format": "tierwise-profile",
        "version": 1,
        "backend": "sim",
        "depth": depth,
        "complete": True,
        "exit_status": 0,
        "command": ["x"],
    }
    m.update(meta or {})
    (d / "meta.json").write_text(json.dumps(m))
    (d / "sites.csv").write_text("\n".join([SITE_HEADER] + list(rows)) + "\n")
    if objects is not None:
        lines = ["site,size,alloc_time,free_time"]
        lines += [f"{s},{z},{a},{'' if f is None else f}" for s, z, a, f in objects]
        (d / "objects.csv").write_text("\n".join(lines) + "\n")
    (d / "modules.csv").write_text(
        "module,path,build_id\n"
        + "\n".join(f"{mod},/bin/{mod},{bid}" for mod, bid in (modules or [("x", "ab12")]))
        + "\n"
    )
    return d
