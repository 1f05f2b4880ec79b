# SPDX-License-Identifier: MIT
"""Checking helper of the runtime tests (test/runtime). Sub-commands:
place PROFILE_DIR TIER PATTERN... [--dram-bytes N] -o FILE   placement
      naming the sites whose location or stack contains a PATTERN (each must
      match >= 1 site); --dram-bytes gives each a DRAM head of N bytes;
      PROFILE_DIR may be a backend's raw output (no meta.json: modules.csv,
      depth from pmu.json or backend.json)
where MAPS STDERR DIR                       for each `object NAME ADDR BYTES`
      line of STDERR: `NAME in-dir` if the object lies in a mapping of a
      file under DIR (in the /proc/PID/maps copy MAPS), `NAME not-in-dir` if
      no byte of it does, else `NAME split dir=BYTES other=BYTES`
report REPORT                               the run report as stable lines
free-test OBJS [NODE]                       numa_probe -F: MiB its 192 MiB took on NODE, and stayed after the frees
escape PLACEMENT N -o FILE                  the placement with every site's
      stack and location written as \\uXXXX escapes, its keys in reverse
      order with an unknown nested field, after N sites that match nothing
sites PROFILE_DIR PATTERN                   rows of sites.csv matching
objects STDERR                              `object` lines as NAME BYTES
job REPORT N                                waits (up to 60 s) for N reports of
      other processes beside REPORT (REPORT.COMMAND.PID), then prints one
      line per report: `named|other COMMAND named=BOOL pid-ok totals`
callsite BIN FUNC CALLEE TIER [DRAM_BYTES] -o FILE   placement of one
      one-frame site: the call to CALLEE (a substring of its symbol) in
      FUNC of BIN, found with objdump (for programs whose census the
      runtime does not take: foreign-alloc.test), in TIER, with a DRAM head
      of DRAM_BYTES when given
same-sim A.json B.json PCT [MODULE [MISS_PCT]]  `same` if every per-tier count of
      two `tierwise simulate --json` results agrees within PCT percent (with
      MODULE: only the sites whose innermost frame is in MODULE, from the
      placed profiles' sites_by_tier.csv, and not their writebacks, which
      depend on what else goes through the shared cache; LLC misses within
      MISS_PCT when given)
"""

import csv
import json
import re
import sys
from pathlib import Path


def place(args):
    out = args[args.index("-o") + 1]
    args = args[: args.index("-o")]
    head = None
    if "--dram-bytes" in args:
        k = args.index("--dram-bytes")
        head = int(args[k + 1])
        args = args[:k] + args[k + 2 :]
    prof, tier, patterns = Path(args[0]), args[1], args[2:]
    rows = list(csv.DictReader(open(prof / "sites.csv")))
    if (prof / "meta.json").exists():
        meta = json.loads((prof / "meta.json").read_text())
    else:  # raw backend output (the pmu glue's)
        params = prof / "pmu.json" if (prof / "pmu.json").exists() else prof / "backend.json"
        meta = {
            "depth": json.loads(params.read_text())["depth"],
            "modules": list(csv.DictReader(open(prof / "modules.csv"))),
        }
    sites = []
    for pat in patterns:
        hit = [r for r in rows if pat in r["location"] or pat in r["stack"]]
        if not hit:
            sys.exit(f"twcheck place: no site matches {pat!r}")
        sites += [
            {
                "stack": r["stack"],
                "location": r["location"],
                "tier": tier,
                "bytes": int(r["peak_bytes"] or 0),
                **({"dram_bytes": head} if head is not None else {}),
            }
            for r in hit
        ]
    doc = {
        "format": "tierwise-placement",
        "version": 1,
        "default_tier": "dram",
        "depth": meta["depth"],
        "modules": meta["modules"],
        "sites": sites,
    }
    Path(out).write_text(json.dumps(doc, indent=1))
    print(f"placed {len(sites)} site(s) in {tier}")


def escape(args):
    doc = json.loads(Path(args[0]).read_text())
    out = args[args.index("-o") + 1]
    esc = {}

    def u(text):
        key = f"@{len(esc)}@"
        esc[key] = "".join(f"\\u{ord(c):04x}" for c in text)
        return key

    extra = [
        {"stack": f"nowhere+0x{i:x};main+0x{i:x}", "tier": "pmem", "bytes": 1 << 30}
        for i in range(int(args[1]))
    ]
    sites = []
    for s in doc["sites"]:
        s = dict(s, stack=u(s["stack"]), location=u(s.get("location", "")))
        s["note"] = {"nested": [1, "x", {"stack": "not this one"}]}
        sites.append(dict(reversed(list(s.items()))))
    doc["sites"] = extra + sites
    text = json.dumps(doc, indent=1)
    for key, value in esc.items():
        text = text.replace(key, value)
    Path(out).write_text(text)
    print(f"escaped {len(sites)} site(s) after {len(extra)}")


def where(args):
    maps, stderr, d = args
    d = str(Path(d).resolve())
    ranges = []
    for line in open(maps):
        parts = line.split(None, 5)
        if len(parts) == 6 and parts[5].strip().startswith(d + "/"):
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            ranges.append((lo, hi))
    ranges.sort()
    merged = []  # the file is mapped in pieces, snapshots repeat: join them
    for lo, hi in ranges:
        if merged and merged[-1][1] >= lo:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    ranges = merged
    for line in open(stderr):
        m = re.match(r"object (\S+) 0x([0-9a-f]+) (\d+)", line)
        if m:
            a, n = int(m[2], 16), int(m[3])
            inside = sum(max(0, min(hi, a + n) - max(lo, a)) for lo, hi in ranges)
            if inside in (0, n):
                print(f"{m[1]} {'in-dir' if inside else 'not-in-dir'}")
            else:
                print(f"{m[1]} split dir={inside} other={n - inside}")


def nodes(entry):
    """` nodes=N:PAGES,... sampled=K` where the report sampled pages."""
    if not entry.get("pages_sampled"):
        return ""
    n = ",".join(f"{k}:{v}" for k, v in sorted(entry["nodes"].items(), key=lambda kv: int(kv[0])))
    return f" nodes={n} sampled={entry['pages_sampled']}"


def report(args):
    rep = json.loads(Path(args[0]).read_text())
    assert rep["format"] == "tierwise-run-report" and rep["version"] == 1
    print("totals", " ".join(f"{k}={v}" for k, v in sorted(rep["totals"].items())))
    for s in rep["sites"]:
        b = " ".join(f"{k}={v}" for k, v in sorted(s["bytes"].items()))
        print(
            f"site {s['location'] or s['stack']} tier={s['tier']} allocs={s['allocs']} "
            f"{b} fallback={s['fallback_bytes']}{nodes(s)}"
            + (f" off_cpu={s['dram_pages_off_cpu_nodes']}" if "dram_pages_off_cpu_nodes" in s else "")
        )
    for u in rep["unmatched"]:
        b = " ".join(f"{k}={v}" for k, v in sorted(u["tier_bytes"].items()))
        print(
            f"unmatched allocs={u['allocs']} bytes={u['bytes']} "
            f"fallback={u['fallback_bytes']} {b}{nodes(u)}"
        )
    c = rep["cache"]
    print(
        f"cache hits={c['hits']} validations={c['validations']} "
        f"mismatches={c['mismatches']} unwinds={c['unwinds']}"
    )
    for w in rep["warnings"]:
        print("warning", w)
    for k, v in sorted(rep.get("backends", {}).items()):
        print(f"backend {k}={v}")


def free_test(args):
    """numa_probe -F's `free before|live|after` lines (pages per node, anon):
    how much its 192 MiB took on node N and how much stayed after the
    frees, in MiB."""
    node = int(args[1]) if len(args) > 1 else 1
    anon = {}
    for line in Path(args[0]).read_text().splitlines():
        f = line.split()
        if line.startswith("free ") and "anon" in f:
            rest = f[f.index("anon") + 1 :]
            anon[f[1]] = {int(k[1:]): int(v) for k, v in (x.split("=") for x in rest[: rest.index("objs")])}
    mib = lambda pages: pages * 4096 / (1 << 20)  # noqa: E731
    took = mib(anon["live"].get(node, 0) - anon["before"].get(node, 0))
    stays = mib(anon["after"].get(node, 0) - anon["before"].get(node, 0))
    print(f"free-test node {node}: took {took:.0f} MiB, {'at most' if stays <= 16 else 'MORE than'} 16 MiB stayed ({stays:.1f})")


def sites(args):
    for r in csv.DictReader(open(Path(args[0]) / "sites.csv")):
        if args[1] in r["location"] or args[1] in r["stack"]:
            print(
                f"site {r['location']} allocs={r['allocs']} "
                f"bytes={r['bytes_allocated']} peak={r['peak_bytes']}"
            )


def objects(args):
    for line in open(args[0]):
        m = re.match(r"object (\S+) 0x[0-9a-f]+ (\d+)", line)
        if m:
            print(m[1], m[2])


def job(args):
    import time

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "advisor"))
    from tierwise.formats.report import other_reports

    named, want = Path(args[0]), int(args[1])
    t0 = time.monotonic()
    while len(other_reports(named)) < want and time.monotonic() - t0 < 60:
        time.sleep(0.1)
    for kind, path in [("named", named)] + [("other", Path(q)) for q in other_reports(named)]:
        rep = json.loads(path.read_text())
        cmd = Path(rep["command"].split()[0]).name
        pid_ok = kind == "named" or path.name.endswith(f".{cmd}.{rep['pid']}")
        tot = " ".join(f"{k}={v}" for k, v in sorted(rep["totals"].items()))
        print(f"{kind} {cmd} named={str(rep['named']).lower()} pid-ok={pid_ok} {tot}")


def _own_tiers(result, module):
    """Per-tier counts of MODULE's own sites in a simulate result's profile."""
    prof = Path(json.loads(Path(result).read_text())["profile"])
    if not prof.is_absolute():
        prof = Path(result).resolve().parent / prof
    stacks = {r["site"]: r["stack"] for r in csv.DictReader(open(prof / "sites.csv"))}
    out = {}
    for r in csv.DictReader(open(prof / "sites_by_tier.csv")):
        if stacks.get(r["site"], "").startswith(module + "+"):
            t = out.setdefault(r["tier"], {})
            for k in ("loads", "stores", "llc_load_misses", "llc_store_misses", "writebacks"):
                t[k] = t.get(k, 0) + int(r[k])
    return out


def same_sim(args):
    if len(args) > 3:
        a, b = (_own_tiers(x, args[3]) for x in args[:2])
    else:
        a, b = (json.loads(Path(x).read_text())["per_tier"] for x in args[:2])
    pct = float(args[2])
    worst = 0.0
    for tier in set(a) | set(b):
        keys = ["loads", "stores", "llc_load_misses", "llc_store_misses", "writebacks"]
        for k in keys[:4] if len(args) > 3 else keys:
            x, y = a.get(tier, {}).get(k, 0), b.get(tier, {}).get(k, 0)
            d = abs(x - y) / max(x, y, 1) * 100
            if "misses" in k and len(args) > 4:  # MISS_PCT
                d = d * pct / float(args[4])
            worst = max(worst, d)
    print("same" if worst <= pct else f"differ by {worst:.2f}%")


def callsite(args):
    import subprocess

    out = args[args.index("-o") + 1]
    args = args[: args.index("-o")]
    binary, func, callee, tier = args[:4]
    dis = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", binary], capture_output=True, text=True, check=True
    ).stdout
    lines, ra, inside = dis.splitlines(), None, False
    for i, line in enumerate(lines):
        if line.endswith(">:"):
            inside = func in line.rsplit("<", 1)[-1]
            continue
        if inside and "call" in line and callee in line:
            nxt = next(x for x in lines[i + 1 :] if re.match(r"\s*[0-9a-f]+:", x))
            ra = int(nxt.split(":")[0], 16)
            break
    if ra is None:
        sys.exit(f"twcheck callsite: no call to {callee!r} in {func!r}")
    site = {"stack": f"{Path(binary).name}+0x{ra - 1:x}", "location": func, "tier": tier}
    if len(args) > 4:
        site["dram_bytes"] = int(args[4])
    Path(out).write_text(
        json.dumps({"format": "tierwise-placement", "version": 1, "default_tier": "dram", "sites": [site]})
    )


if __name__ == "__main__":
    {
        "place": place,
        "escape": escape,
        "where": where,
        "report": report,
        "free-test": free_test,
        "sites": sites,
        "objects": objects,
        "job": job,
        "same-sim": same_sim,
        "callsite": callsite,
    }[sys.argv[1]](sys.argv[2:])
