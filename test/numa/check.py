# SPDX-License-Identifier: MIT
"""Verdict of `make check-numa`: reads the raw results the two-node guests
left in OUT/CONFIG/ (test/numa/guest.sh) and checks them. One line per
check, `PASS CONFIG/CHECK: detail` or `FAIL CONFIG/CHECK: why`; exit status
1 when any check fails or a guest did not finish.

Pages are counted twice for each object of numa_probe: with move_pages(2)
(`mp`, the node of every page of the object) and from /proc/PID/numa_maps
(`nm`, the N<node>= counts of the VMAs overlapping the object; a VMA may hold
more than the object, which `vma_bytes` shows). Both must agree with the
expectation within TOL pages (the page holding a block header, a partly
used last page). Usage: check.py OUT CONFIG..."""

import json
import re
import sys
import tomllib
from pathlib import Path

PAGE = 4096
TOL = 2  # pages
MiB = 1 << 20

results = []


def check(name, ok, detail):
    results.append((bool(ok), name, detail))


def parse_objs(path):
    objs, totals = {}, {}
    for line in Path(path).read_text().splitlines():
        if line.startswith("object "):
            f = line.split()
            o = {"name": f[1], "bytes": int(f[3])}
            for kv in f[4:]:
                k, v = kv.split("=", 1)
                o[k] = v
            o["pages"] = int(o["pages"])
            o["vma_bytes"] = int(o["vma_bytes"])
            o["mp_nodes"] = {
                int(k[1:]): int(v)
                for k, v in (x.split(":") for x in o["mp"].split(",") if x.startswith("N"))
            }
            o["none"] = int(o["mp"].rsplit("none:", 1)[1])
            o["nm_nodes"] = {
                int(k[1:]): int(v) for k, v in (x.split(":") for x in o["nm"].split(",") if x)
            }
            o["run_list"] = [tuple(int(y) for y in r.split("x")) for r in o["runs"].split(",")]
            objs[o["name"]] = o
        elif line.startswith("numa_maps total"):
            every, _, anon = line.partition(" anon")
            totals = {int(m[1]): int(m[2]) for m in re.finditer(r"N(\d+)=(\d+)", every)}
            totals["anon"] = {int(m[1]): int(m[2]) for m in re.finditer(r"N(\d+)=(\d+)", anon)}
    return objs, totals


class Case:
    """One run of the guest: NAME.{rc,out,err,objs,report.json}."""

    def __init__(self, d, name):
        self.d, self.name = d, name
        p = d / f"{name}.rc"
        self.rc = int(p.read_text()) if p.exists() else None
        self.out = (d / f"{name}.out").read_text() if (d / f"{name}.out").exists() else ""
        self.err = (d / f"{name}.err").read_text() if (d / f"{name}.err").exists() else ""
        self.objs, self.totals = ({}, {})
        if (d / f"{name}.objs").exists():
            self.objs, self.totals = parse_objs(d / f"{name}.objs")
        self.child = {}
        if (d / f"{name}.objs.child").exists():
            self.child, _ = parse_objs(d / f"{name}.objs.child")
        rp = d / f"{name}.report.json"
        self.report = json.loads(rp.read_text()) if rp.exists() else None

    def checksum(self):
        m = re.search(r"^checksum: ([0-9a-f]+)$", self.out, re.M)
        return m[1] if m else None

    def why(self):
        tail = " | ".join(self.err.strip().splitlines()[-3:])
        return f"exit {self.rc}" + (f", stderr: {tail}" if tail else "")


def on_node(o, node):
    """(ok, text): every page of object o is on `node` (move_pages and
    numa_maps), within TOL pages."""
    mp = o["mp_nodes"]
    nm = o["nm_nodes"]
    slack = max(0, (o["vma_bytes"] - o["bytes"]) // PAGE)
    other_mp = sum(v for k, v in mp.items() if k != node) + o["none"]
    other_nm = sum(v for k, v in nm.items() if k != node)
    ok = (
        mp.get(node, 0) >= o["pages"] - TOL
        and other_mp <= TOL
        and nm.get(node, 0) >= o["pages"] - TOL
        and other_nm <= TOL + slack
    )
    return ok, f"{o['name']}: move_pages {o['mp']}, numa_maps {o['nm']} of {o['pages']} pages"


def expect_nodes(cfg, check_name, case, where):
    """where: {object name: node}."""
    if case.rc != 0:
        check(f"{cfg}/{check_name}", False, f"{case.name} failed: {case.why()}")
        return False
    missing = [n for n in where if n not in case.objs and n not in case.child]
    if missing:
        check(f"{cfg}/{check_name}", False, f"no page counts for {missing} in {case.name}.objs")
        return False
    res = [on_node(case.objs.get(n) or case.child[n], node) for n, node in where.items()]
    want = ", ".join(f"{n} on N{node}" for n, node in where.items())
    check(
        f"{cfg}/{check_name}",
        all(ok for ok, _ in res),
        f"want {want}; got " + "; ".join(t for _, t in res),
    )
    return True


def same_checksum(cfg, case, ref):
    ok = case.rc == 0 and case.checksum() is not None and case.checksum() == ref.checksum()
    check(
        f"{cfg}/{case.name}-checksum",
        ok,
        f"checksum {case.checksum()} (unplaced {ref.checksum()}); {case.why()}",
    )


def report_site(case, func):
    """The run report's entry of the site whose location or stack names func."""
    if not case.report:
        return None
    for s in case.report.get("sites", []):
        if func in (s.get("location") or "") or func in (s.get("stack") or ""):
            return s
    return None


def slow_bytes(b):
    return sum(v for k, v in (b or {}).items() if k != "dram")


def expect_report(cfg, case, func, tier, min_slow, fallback=False):
    s = report_site(case, func)
    name = f"{cfg}/{case.name}-report"
    if s is None:
        check(name, False, f"run report {case.name}.report.json has no site {func}")
        return
    sb = slow_bytes(s.get("bytes"))
    fb = s.get("fallback_bytes", 0)
    ok = s.get("tier") == tier and sb >= min_slow and ((fb > 0) if fallback else (fb == 0))
    check(
        name,
        ok,
        f"site {func}: tier {s.get('tier')} (want {tier}), bytes {s.get('bytes')} "
        f"(want >= {min_slow} off dram), fallback_bytes {fb} (want {'> 0' if fallback else '0'})",
    )


TIER_KEYS = ("read_latency_ns", "write_latency_ns", "read_bandwidth_gbs", "write_bandwidth_gbs")
ADVISOR = Path(__file__).resolve().parents[2] / "advisor"


def read(p):
    return p.read_text() if p.exists() else ""


def auto_tiers(d):
    """{tier: {TIER_KEYS...}} of the placement `advise --tiers auto` wrote."""
    p = d / "auto.json"
    if not p.exists():
        return {}
    return {
        t: {k: float(v[k]) for k in TIER_KEYS}
        for t, v in json.loads(p.read_text()).get("tiers", {}).items()
    }


def oom_lines(d):
    p = d / "dmesg.txt"
    if not p.exists():
        return ["(no dmesg.txt)"]
    return [
        line
        for line in p.read_text().splitlines()
        if re.search(r"Out of memory|Killed process|oom-kill|invoked oom-killer|SIGBUS", line)
    ]


def check_machine(cfg, d, node1_mib):
    text = (d / "nodes.txt").read_text() if (d / "nodes.txt").exists() else ""
    m0 = re.search(r"^node0 cpus=\[([^\]]*)\]", text, re.M)
    m1 = re.search(r"^node1 cpus=\[([^\]]*)\].*\n.*MemTotal:\s+(\d+) kB", text, re.M)
    ok = m0 and m0[1] == "0-1" and m1 and m1[1] == "" and 0.8 * node1_mib < int(m1[2]) / 1024 <= node1_mib
    check(
        f"{cfg}/machine",
        ok,
        f"node 0 cpus [{m0[1] if m0 else '?'}], node 1 cpus [{m1[1] if m1 else '?'}] "
        f"{int(m1[2]) >> 10 if m1 else '?'} MiB (want memory only, <= {node1_mib} MiB)",
    )


def check_plain(d):
    cfg = "plain"
    check_machine(cfg, d, 1024)
    ref = Case(d, "unplaced")
    expect_nodes(cfg, "unplaced-on-N0", ref, {"a": 0, "b": 0, "c": 0})
    mb = Case(d, "membind")
    if expect_nodes(cfg, "membind-on-N1", mb, {"a": 1, "b": 1, "c": 1}):
        same_checksum(cfg, mb, ref)
        t = mb.totals.get("anon", {})
        check(
            f"{cfg}/membind-numa_maps-anon",
            t.get(1, 0) >= 3 * 4096 and t.get(0, 0) <= TOL,
            f"anonymous pages of the whole process N0={t.get(0, 0)} N1={t.get(1, 0)} "
            f"(want >= {3 * 4096} on N1, <= {TOL} on N0)",
        )
    doc = Case(d, "doctor")
    m = re.search(r"^\s*node 1: .*$", doc.out, re.M)
    line = m[0].strip() if m else "(no node 1 line)"
    check(
        f"{cfg}/doctor-names-node1-slow-tier",
        doc.rc == 0
        and m
        and "memory only" in line
        and "slow tier" in line
        and "kmem" in line
        and "numa:1" in line,
        f"doctor: {line}; {doc.why()}",
    )
    adv = Case(d, "advise-cxl")
    pl = d / "cxl.json"
    if adv.rc == 0 and pl.exists():
        slow = cxl_slow_sites(d)
        check(
            f"{cfg}/advise-cxl-resolves-node1",
            0 < len(slow) < 3 and set(slow.values()) == {"numa:1"} and re.search(r"numa:1", adv.out),
            f"slow sites among make_a/b/c {slow} (want 1 or 2, in numa:1: the memory-only node "
            "here); advise said: "
            + " | ".join(line for line in adv.out.splitlines() if "cxl" in line or "node" in line)[:400],
        )
    else:
        check(f"{cfg}/advise-cxl-resolves-node1", False, f"advise --tiers cxl: {adv.why()}")
    auto = Case(d, "advise-auto")
    text = auto.out + auto.err
    m = re.search(r"no HMAT published for node 1; its numbers come from the nearest preset (\S+)", text)
    got = auto_tiers(d)
    want = None
    if m:
        preset = tomllib.loads((ADVISOR / "tierwise/tiers" / f"{m[1]}.toml").read_text())
        slow = preset["tiers"][preset["slow"]]
        want = {k: float(slow[k]) for k in TIER_KEYS}
    check(
        f"{cfg}/advise-auto-no-hmat-says-preset",
        auto.rc == 0 and m and got.get("numa:1") == want and "HMAT (" not in text,
        f"advise --tiers auto: said {m[0] if m else '(no preset named)'}; "
        f"numa:1 in its placement {got.get('numa:1')} (want the preset's {want}); {auto.why()}",
    )


def check_hmat_small(d):
    cfg = "hmat-small"
    check_machine(cfg, d, 256)
    auto = Case(d, "advise-auto")
    text = auto.out + auto.err
    hmat = {}  # node -> {field: value} as the guest's sysfs shows (access1: CPU initiators)
    for m in re.finditer(r"^node(\d+) .*?(?=^node|\Z)", read(d / "nodes.txt"), re.M | re.S):
        for h in re.finditer(r"hmat access1 (\w+) (\d+)", m[0]):
            hmat.setdefault(int(m[1]), {})[h[1]] = int(h[2])
    want = {
        name: {
            "read_latency_ns": float(v["read_latency"]),
            "write_latency_ns": float(v["write_latency"]),
            "read_bandwidth_gbs": v["read_bandwidth"] / 1000,
            "write_bandwidth_gbs": v["write_bandwidth"] / 1000,
        }
        for name, v in (("dram", hmat.get(0)), ("numa:1", hmat.get(1)))
        if v and len(v) == 4
    }
    got = auto_tiers(d)
    printed = [l for l in text.splitlines() if "from the HMAT" in l]
    check(
        f"{cfg}/advise-auto-uses-hmat",
        auto.rc == 0
        and len(want) == 2
        and all(got.get(t) == want[t] for t in want)
        and len(printed) == 2
        and all(f"read latency {want[t]['read_latency_ns']:g} ns" in text for t in want),
        f"HMAT in sysfs {hmat}; advise printed: {' | '.join(printed)}; its placement's tiers "
        f"{got} (want {want}); {auto.why()}",
    )


def check_kmem_dax(d):
    """node 1 is a KMEM-DAX node: memory only, dax0.0 bound to kmem, in a
    lower memory tier than node 0 (memory_tierN: a larger N is a larger
    abstract distance)."""
    cfg = "kmem-dax"
    check_machine(cfg, d, 256)
    text = read(d / "kmem-dax.txt")
    drv = re.search(r"^dax0.0 driver: (\S*)", text, re.M)
    check(f"{cfg}/dax0.0-kmem", drv and drv[1].endswith("/kmem"),
          f"dax0.0 driver {drv[1] if drv else '(none)'}; " + " | ".join(
              l for l in text.splitlines() if l.startswith(("insmod", "onlined", "dax")))[:400])
    tier = {}
    for m in re.finditer(r"^memory_tier(\d+) (\S+)$", text, re.M):
        for part in m[2].split(","):
            lo, _, hi = part.partition("-")
            for n in range(int(lo), int(hi or lo) + 1):
                tier[n] = int(m[1])
    check(f"{cfg}/node1-lower-tier", 0 in tier and 1 in tier and tier[1] > tier[0],
          f"memory tiers {sorted(set(tier.values()))}: node 0 in {tier.get(0)}, node 1 in "
          f"{tier.get(1)} (want node 1 in a larger-numbered, lower tier)")


def cxl_slow_sites(d):
    """{make_x: tier} of the probe's sites that advise --tiers cxl put off dram."""
    placement = json.loads((d / "cxl.json").read_text())
    return {
        f: s["tier"]
        for s in placement["sites"]
        for f in ("make_a", "make_b", "make_c")
        if f in s.get("location", "") + s.get("stack", "") and s["tier"] != "dram"
    }


def cxl_heads(d):
    """{make_x: site entry} of the probe's sites that advise --tiers cxl gave
    a DRAM head (their tier is the slow one, the head's pages are on node 0)."""
    placement = json.loads((d / "cxl.json").read_text())
    return {
        f: s
        for s in placement["sites"]
        for f in ("make_a", "make_b", "make_c")
        if f in s.get("location", "") + s.get("stack", "") and "dram_bytes" in s
    }


def on_split(o, site):
    """(ok, text): object o's head as placement entry `site` says (its
    dram_fraction of the object, rounded to the nearest page, else
    dram_bytes) on node 0, the rest on node 1 (move_pages), within TOL pages
    each."""
    if "dram_fraction" in site:
        head_pages = round(site["dram_fraction"] * o["bytes"] / PAGE)
    else:
        head_pages = min(site["dram_bytes"], o["bytes"]) // PAGE
    mp = o["mp_nodes"]
    ok = (
        abs(mp.get(0, 0) - head_pages) <= TOL
        and abs(mp.get(1, 0) - (o["pages"] - head_pages)) <= TOL
        and o["none"] <= TOL
    )
    return ok, (
        f"{o['name']}: move_pages {o['mp']} of {o['pages']} pages "
        f"(want {head_pages} on N0, the rest on N1)"
    )


# The runtime's cases (check_runtime.py, which uses this module's helpers).
sys.modules.setdefault("check", sys.modules[__name__])
import check_runtime  # noqa: E402

CONFIGS = {
    "plain": (check_plain, check_runtime.check_runtime_plain),
    "hmat-small": (check_hmat_small, check_runtime.check_runtime_hmat_small),
    "kmem-dax": (check_kmem_dax, check_runtime.check_runtime_kmem_dax),
}


def main(argv):
    out = Path(argv[1])
    for cfg in argv[2:]:
        d = out / cfg
        if (d / "timeout").exists() or not (d / "done").exists():
            why = (d / "timeout").read_text().strip() if (d / "timeout").exists() else "the guest did not finish"
            con = (d / "console.log").read_text(errors="replace") if (d / "console.log").exists() else ""
            tail = " | ".join(con.strip().splitlines()[-5:])
            timeline = (d / "timeline").read_text().strip().splitlines()[-1:] if (d / "timeline").exists() else []
            check(f"{cfg}/guest", False, f"{why}; last step {timeline}; console: {tail}")
        for fn in CONFIGS[cfg]:
            try:
                fn(d)
            except (OSError, ValueError, KeyError) as e:
                check(f"{cfg}/{fn.__name__}", False, f"cannot read the guest's results in {d}: {e!r}")
    for ok, name, detail in results:
        print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}")
    failed = [name for ok, name, _ in results if not ok]
    print(
        f"check-numa: {len(results) - len(failed)} of {len(results)} checks passed"
        + (f"; FAILED: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
