# SPDX-License-Identifier: MIT
"""Verdict on the runtime's cases of the check-numa guest
(test/numa/guest_runtime.sh), with check.py's helpers: pages counted by
move_pages and numa_maps in numa_probe, the program's checksum against an
unplaced run, exit status, the kernel log (no OOM kill, no SIGBUS), and the
run report: the tier and bytes each site got and where its pages really
landed (the report's per-site `nodes`, sampled with move_pages by the
runtime itself)."""

import re

import check as c

MiB = 1 << 20
PAGES16 = 16 * MiB // c.PAGE


def nodes_of(entry):
    """{node: sampled pages} of a report entry."""
    return {int(k): v for k, v in (entry or {}).get("nodes", {}).items()}


def report_nodes(cfg, case, func, want):
    """The report's own page sample for site func: every sampled resident
    page on the node `want` (an int), or on both nodes (want = "both")."""
    s = c.report_site(case, func)
    n = nodes_of(s)
    if want == "both":
        ok = n.get(0, 0) > 0 and n.get(1, 0) > 0
    else:
        ok = n.get(want, 0) > 0 and all(v <= c.TOL for k, v in n.items() if k != want)
    c.check(
        f"{cfg}/{case.name}-report-nodes",
        s is not None and ok,
        f"site {func}: report nodes {n} of pages_sampled "
        f"{(s or {}).get('pages_sampled')} (want {'N0 and N1' if want == 'both' else f'N{want}'})",
    )


def no_kill(cfg, d, case):
    oom = c.oom_lines(d)
    c.check(
        f"{cfg}/{case.name}-nothing-killed",
        case.rc == 0 and not oom,
        f"{case.name} exit {case.rc}; kernel log: {oom[:3] or 'no OOM kill, no SIGBUS'}",
    )


def head_case(cfg, head, tier, ref):
    """numa_probe's object a placed in `tier` with a 4 MiB DRAM head: one
    mapping, the head's pages first on N0, then the tail on N1; the report
    says 4 MiB dram and 12 MiB in the tier."""
    if head.rc == 0 and "a" in head.objs:
        a = head.objs["a"]
        runs = a["run_list"]
        n0 = a["mp_nodes"].get(0, 0)
        n1 = a["mp_nodes"].get(1, 0)
        head_pages = 4 * MiB // c.PAGE
        ok = (
            abs(n0 - head_pages) <= c.TOL
            and abs(n1 - (a["pages"] - head_pages)) <= c.TOL
            and len(runs) <= 3
            and runs[0][0] == 0
            and runs[-1][0] == 1
        )
        c.check(f"{cfg}/{head.name}-on-N0-tail-on-N1", ok,
                f"a: move_pages {a['mp']} runs {a['runs']} (want {head_pages} pages on N0, then the rest on N1)")
        s = c.report_site(head, "make_a") or {}
        b = s.get("bytes", {})
        c.check(f"{cfg}/{head.name}-report", b.get("dram") == 4 * MiB and b.get(tier) == 12 * MiB,
                f"site make_a bytes {b} (want dram 4 MiB, {tier} 12 MiB)")
        report_nodes(cfg, head, "make_a", "both")
        c.same_checksum(cfg, head, ref)
    else:
        c.check(f"{cfg}/{head.name}-on-N0-tail-on-N1", False, f"{head.name}: {head.why()}")


def fill_check(cfg, d, name, ref_name):
    """node 1 filled (150 MiB held by another process) between the
    allocation of a 200 MiB slow-tier object and its first touch: the
    program finishes, its pages are on N1 as far as they fit and on N0
    after that, nothing is killed."""
    ref, fill = c.Case(d, ref_name), c.Case(d, name)
    held = c.Case(d, f"{name}.hold")
    c.check(f"{cfg}/{name}-holder-ran", held.rc == 0 and "held" in held.out,
            f"numactl --membind=1 numa_probe --hold 150: {held.why()}; "
            f"node 1 {c.read(d / f'{name}.free-before').strip()} before, "
            f"{c.read(d / f'{name}.free-held').strip()} while held")
    if fill.rc == 0 and "a" in fill.objs:
        a = fill.objs["a"]
        n0, n1 = a["mp_nodes"].get(0, 0), a["mp_nodes"].get(1, 0)
        c.check(f"{cfg}/{name}-pages-on-N1-then-N0",
                n0 > 0 and n1 > 0 and n0 + n1 >= a["pages"] - c.TOL,
                f"a: move_pages {a['mp']} numa_maps {a['nm']} of {a['pages']} pages "
                "(want some on N1, the rest on N0)")
        c.same_checksum(cfg, fill, ref)
        report_nodes(cfg, fill, "make_a", "both")
    else:
        c.check(f"{cfg}/{name}-pages-on-N1-then-N0", False, f"{name}: {fill.why()}")
    no_kill(cfg, d, fill)


def check_runtime_plain(d):
    cfg = "plain"
    ref = c.Case(d, "unplaced")
    for name, tier in (("numa1", "numa:1"), ("kmem", "kmem")):
        case = c.Case(d, name)
        if c.expect_nodes(cfg, f"{name}-a-on-N1-others-N0", case, {"a": 1, "b": 0, "c": 0}):
            c.same_checksum(cfg, case, ref)
            c.expect_report(cfg, case, "make_a", tier, 16 * MiB)
            report_nodes(cfg, case, "make_a", 1)
    # kmem came from /sys (no memkind KMEM-DAX node here): no warning
    kmem = c.Case(d, "kmem")
    warn = [w for w in (kmem.report or {}).get("warnings", []) if "kmem" in w]
    c.check(f"{cfg}/kmem-no-env-var", kmem.report is not None and not warn,
            f"run report warnings about kmem: {warn or 'none'}")

    cxl = c.Case(d, "cxl")
    if (d / "cxl.json").exists() and cxl.rc is not None:
        slow = c.cxl_slow_sites(d)
        heads = c.cxl_heads(d)  # split sites: head on N0, tail on N1
        where = {
            f[-1]: 1 if f in slow else 0 for f in ("make_a", "make_b", "make_c") if f not in heads
        }
        if c.expect_nodes(cfg, "cxl-advice-slow-sites-on-N1", cxl, where):
            c.same_checksum(cfg, cxl, ref)
        if heads:
            res = [
                c.on_split(cxl.objs[f[-1]], site) if f[-1] in cxl.objs
                else (False, f"no page counts for {f[-1]}")
                for f, site in sorted(heads.items())
            ]
            c.check(f"{cfg}/cxl-advice-heads-on-N0-tails-on-N1", all(ok for ok, _ in res),
                    "; ".join(t for _, t in res))
    else:
        c.check(f"{cfg}/cxl-advice-slow-sites-on-N1", False, "no cxl.json advice or no cxl run")

    head_case(cfg, c.Case(d, "head"), "numa:1", ref)

    fork = c.Case(d, "fork")
    if c.expect_nodes(cfg, "fork-child-keeps-placement", fork,
                      {"child-a": 1, "child-a2": 1, "child-b": 0, "child-c": 0}):
        c.same_checksum(cfg, fork, ref)

    lim = c.Case(d, "limit")
    if c.expect_nodes(cfg, "dram-limit-falls-back-to-N1", lim, {"a": 1, "b": 1, "c": 1}):
        c.same_checksum(cfg, lim, ref)
        un = [u for u in (lim.report or {}).get("unmatched", []) if u.get("bytes", 0) >= 16 * MiB]
        ok = len(un) >= 2 and all(u["fallback_bytes"] >= 16 * MiB and
                                  u["tier_bytes"].get("numa:1", 0) >= 16 * MiB for u in un)
        c.check(f"{cfg}/dram-limit-report", ok,
                "unmatched 16 MiB sites: " + "; ".join(
                    f"tier_bytes {u['tier_bytes']} fallback {u['fallback_bytes']}" for u in un))
    check_lazy_plain(d)
    check_room_plain(d)
    check_bins_plain(d)
    check_balance_plain(d)

    check_free(cfg, d)


def check_lazy_plain(d):
    """A 64 KiB numa:1 block loads libmemkind (and libdaxctl, libkmod,
    libcrypto) while the loading thread prefers node 1: the block and at
    least 90% of each file's page-cache pages are on node 1."""
    cfg = "plain"
    lazy = c.Case(d, "lazy")
    c.expect_nodes(cfg, "lazy-small-block-on-N1", lazy, {"a": 1, "b": 0, "c": 0})
    files = {}
    for line in c.read(d / "lazy.files").splitlines():
        f = line.split()
        if f[:1] == ["file"] and len(f) == 5:
            files[f[1].rsplit("/", 1)[-1]] = {k: int(v) for k, v in (x.split("=") for x in f[2:])}
    ok = files.get("libmemkind.so.0", {}).get("cached", 0) > 0 and all(
        v["N1"] >= 0.9 * v["cached"] for v in files.values()
    )
    c.check(f"{cfg}/lazy-libmemkind-page-cache-on-N1", ok,
            "; ".join(f"{k} cached={v['cached']} N0={v['N0']} N1={v['N1']}" for k, v in files.items())
            or f"no lazy.files lines ({lazy.why()})")


def free_lines(case):
    """numa_probe -F's `free WHEN` lines: {when: {"anon": {node: pages},
    "objs": {node: pages}}}."""
    out = {}
    for line in (case.d / f"{case.name}.objs").read_text().splitlines() if case.rc == 0 else []:
        f = line.split()
        if f[:1] == ["free"] and "anon" in f and "objs" in f:
            a, o = f.index("anon"), f.index("objs")
            kv = lambda xs: {int(k[1:]): int(v) for k, v in (x.split("=") for x in xs)}  # noqa: E731
            out[f[1]] = {"anon": kv(f[a + 1 : o]), "objs": kv(f[o + 1 :])}
    return out


def big_n0_vmas(path, n=6):
    """The n anonymous VMAs of a numa_maps copy with the most node-0 pages:
    `ADDR POLICY N0=PAGES [anon=..]`."""
    rows = []
    for line in c.read(path).splitlines():
        f = line.split()
        n0 = sum(int(x[3:]) for x in f if x.startswith("N0="))
        if n0 and "file=" not in line and "anon=" in line:
            rows.append((n0, f"{f[0]} {f[1]} N0={n0}" + (" huge" if "kernelpagesize_kB=2048" in line or "huge" in line else "")))
    return "; ".join(r for _, r in sorted(rows, reverse=True)[:n]) or "none"


def check_free(cfg, d):
    """192 MiB of numa:1 objects freed: at most 16 MiB of them stays on
    node 1; with them live, the placed run holds at most 2 MiB more node-0
    anonymous memory outside the program's objects than the unplaced run
    (issue 26 asks for 16; memkind's arena metadata, 2.3 MiB, went to node 0
    until the tier's backend bound the mappings made while it opens)."""
    ref, free = c.Case(d, "free-ref"), c.Case(d, "free")
    fr, fp = free_lines(ref), free_lines(free)
    if not {"before", "live", "after"} <= fp.keys() or "live" not in fr:
        c.check(f"{cfg}/free-returned-to-N1", False, f"free: {free.why()}; free-ref: {ref.why()}")
        return
    n1 = {w: fp[w]["anon"].get(1, 0) for w in fp}
    took, stays = (n1["live"] - n1["before"]) * c.PAGE, (n1["after"] - n1["before"]) * c.PAGE
    c.check(f"{cfg}/free-returned-to-N1", took >= 190 * MiB and stays <= 16 * MiB,
            f"node 1 anon pages before/live/after {n1['before']}/{n1['live']}/{n1['after']}: "
            f"the objects took {took / MiB:.1f} MiB, {stays / MiB:.1f} MiB stayed after the frees "
            "(want >= 190 and <= 16)")
    other = {k: (v["live"]["anon"].get(0, 0) - v["live"]["objs"].get(0, 0)) * c.PAGE
             for k, v in (("placed", fp), ("unplaced", fr))}
    extra = other["placed"] - other["unplaced"]
    c.check(f"{cfg}/free-no-unaccounted-N0", extra <= 2 * MiB,
            f"node-0 anonymous memory outside the program's objects with 240 MiB live: "
            f"placed {other['placed'] / MiB:.1f} MiB, unplaced {other['unplaced'] / MiB:.1f} MiB "
            f"(+{extra / MiB:.1f}, want <= 2); THP {c.read(d / 'thp.txt').strip()}; "
            f"placed run's largest node-0 anonymous VMAs: {big_n0_vmas(d / 'free.objs.numa_maps')}")
    c.same_checksum(cfg, free, ref)
    report_nodes(cfg, free, "make_a", 1)


def check_runtime_hmat_small(d):
    cfg = "hmat-small"
    # a 300 MiB numa:1 object on a 256 MiB node: refused at allocation,
    # served from dram, reported; nothing killed
    ref, big = c.Case(d, "big-ref"), c.Case(d, "big")
    if c.expect_nodes(cfg, "too-big-falls-back-to-N0", big, {"a": 0}):
        c.same_checksum(cfg, big, ref)
        c.expect_report(cfg, big, "make_a", "numa:1", 0, fallback=True)
    no_kill(cfg, d, big)
    fill_check(cfg, d, "fill", "fill-ref")


def check_runtime_kmem_dax(d):
    """KMEM-DAX node 1 (256 MiB, lower memory tier): `kmem` is served on
    node 1 like numa:1 is on a plain memory-only node - pages on N1, the
    preferred policy (never MPOL_BIND: a full node must not kill the job),
    a DRAM head, a full node with nothing killed."""
    cfg = "kmem-dax"
    ref = c.Case(d, "unplaced")
    c.expect_nodes(cfg, "unplaced-on-N0", ref, {"a": 0, "b": 0, "c": 0})
    kmem = c.Case(d, "kmem")
    if c.expect_nodes(cfg, "kmem-a-on-N1-others-N0", kmem, {"a": 1, "b": 0, "c": 0}):
        c.same_checksum(cfg, kmem, ref)
        c.expect_report(cfg, kmem, "make_a", "kmem", 16 * MiB)
        report_nodes(cfg, kmem, "make_a", 1)
        pol = kmem.objs["a"].get("policy", "")
        c.check(f"{cfg}/kmem-policy-preferred", "bind" not in pol and "prefer" in pol,
                f"a: VMA policy {pol!r} (want preferred:1, never bind)")
    head_case(cfg, c.Case(d, "kmem-head"), "kmem", ref)
    fill_check(cfg, d, "kmem-fill", "fill-ref")


def n0_mib(o):
    """MiB of object o's pages on node 0 (move_pages)."""
    return o["mp_nodes"].get(0, 0) * c.PAGE / MiB


def check_room_plain(d):
    """numa_probe --phases, each run under fillers that leave node 0 about
    72 MiB of room (guest_runtime.sh room_cases): the hot object allocated
    last gets node 0 when the runtime makes room for it (worse-ranked pages
    moved to node 1), and the split object's tail is promoted into the DRAM
    its temporary buffer left (the phase change). Before (TIERWISE_ROOM=0)
    the hot object lands on node 1: the scenario really runs short of node
    0."""
    cfg = "plain"
    ref, off, on = c.Case(d, "room-ref"), c.Case(d, "room-off"), c.Case(d, "room")
    for name in ("room-base", "room-ref-top", "room-off-top", "room-top"):
        held = c.Case(d, f"{name}.hold")
        c.check(f"{cfg}/{name}-filler-ran", held.rc == 0 and "held" in held.out,
                f"numactl --membind=0 numa_probe --hold: {held.why()}; "
                + c.read(d / "room.filler").strip().replace("\n", "; "))
    names = ("p1-hot", "p1-tmp", "p1-cold", "p1-split", "p2-hot", "p2-split", "p2-cold")
    for case in (ref, off, on):
        if case.rc != 0 or any(n not in case.objs for n in names):
            c.check(f"{cfg}/{case.name}-ran", False, f"{case.name}: {case.why()}")
            return

    def summary(case):
        return ", ".join(f"{n} {n0_mib(case.objs[n]):.1f}" for n in names) + " MiB on N0"

    hot_pages = on.objs["p1-hot"]["pages"]
    c.check(f"{cfg}/room-before-hot-spills",
            off.objs["p1-hot"]["mp_nodes"].get(0, 0) < hot_pages // 2,
            f"TIERWISE_ROOM=0: {summary(off)}; first touch: {summary(ref)} "
            "(want the hot object mostly off N0 with TIERWISE_ROOM=0: node 0 really short)")
    r = (on.report or {}).get("room", {})
    # (its first touches may spill: the kernel's freed pages sit in per-CPU
    # lists MemFree does not count; the watcher then exchanges them for
    # worse-ranked pages - the look waits for that, at most 2 s + 60 s)
    waited = re.search(r"^hot_wait (\S+)", c.read(d / "room.objs"), re.M)
    c.check(f"{cfg}/room-hot-on-N0",
            on.objs["p1-hot"]["mp_nodes"].get(0, 0) >= hot_pages * 9 // 10,
            f"room: {summary(on)} (want p1-hot >= 90% on N0 within 2 s + 60 s of its first "
            f"touch; waited 2 s + {waited[1] if waited else '?'} s); "
            f"watcher passes {r.get('watched')}, exchanged {r.get('exchanged_bytes')} bytes")
    # (the hot object's own first touches may take node 0's pages down to
    # its min watermark, and from the per-CPU lists: MPOL_PREFERRED_MANY)
    pol = on.objs["p1-hot"].get("policy", "")
    c.check(f"{cfg}/room-hot-policy", "prefer(many)" in pol and ":0" in pol and "bind" not in pol,
            f"p1-hot: VMA policy {pol!r} (want prefer(many):0 on the ranked DRAM block, never bind)")
    split = c.report_site(on, "make_split") or {}
    grown = on.objs["p2-split"]["mp_nodes"].get(0, 0) - on.objs["p1-split"]["mp_nodes"].get(0, 0)
    vm = vmstat_delta(d, "room")
    c.check(f"{cfg}/room-promotes-after-phase",
            r.get("active") and r.get("demoted_bytes", 0) > 0
            and r.get("promoted_bytes", 0) >= 8 * MiB and grown * c.PAGE >= 8 * MiB,
            f"report room {r}; make_split promoted {split.get('promoted_bytes')} bytes; "
            f"split pages on N0 grew by {grown} ({grown * c.PAGE / MiB:.1f} MiB) after tmp was freed; "
            f"vmstat {vm}")
    c.same_checksum(cfg, off, ref)
    c.same_checksum(cfg, on, ref)
    no_kill(cfg, d, on)


def bins_line(case):
    """numa_probe --bins' `bins pages=P N0=x N1=y` as {"pages": P, 0: x, 1: y}."""
    m = re.search(r"^bins pages=(\d+)((?: N\d+=\d+)*)$", c.read(case.d / f"{case.name}.objs"), re.M)
    if not m:
        return None
    out = {"pages": int(m[1])}
    out.update({int(n): int(v) for n, v in re.findall(r"N(\d+)=(\d+)", m[2])})
    return out


def check_bins_plain(d):
    """numa_probe --bins under the room cases' fillers (node 0 about 72 MiB
    of room): 32 MiB of small vectors (blocks of 64-512 KiB, ranked 1) grown
    by two threads after a 96 MiB DRAM head (ranked 2) filled the room.
    Unplaced, they land mostly off node 0; placed, the room tracks them
    and exchanges their spilled pages for the head's: at least 90% on node
    0 while they are live (the look waits for that at most 60 s), node 0 as
    used as without the placement."""
    cfg = "plain"
    ref, old, on = c.Case(d, "bins-ref"), c.Case(d, "bins-untracked"), c.Case(d, "bins")
    got = {}
    for case in (ref, old, on):
        got[case.name] = bins_line(case)
        if case.rc != 0 or not got[case.name] or "big" not in case.objs:
            c.check(f"{cfg}/{case.name}-ran", False, f"{case.name}: {case.why()}")
            return
    b_ref, b_on = got["bins-ref"], got["bins"]
    c.check(f"{cfg}/bins-ref-spill", b_ref.get(0, 0) < b_ref["pages"] // 2,
            f"unplaced: vectors {b_ref}, big {n0_mib(ref.objs['big']):.1f} MiB on N0 "
            "(want the vectors mostly off N0: node 0 really full)")
    # (the placed run with the vectors untracked is shown, not checked: how
    # much of node 0 the head leaves them varies with the room the fillers
    # leave - 0% to 76% of their pages on node 0 in five runs)
    b_old = got["bins-untracked"]
    untracked = (f"untracked (TIERWISE_ROOM_RANK_MIN=1M): vectors {b_old}, big "
                 f"{n0_mib(old.objs['big']):.1f} MiB on N0")
    r = (on.report or {}).get("room", {})
    waited = re.search(r"^bins_wait (\S+)", c.read(d / "bins.objs"), re.M)
    c.check(f"{cfg}/bins-on-N0", b_on.get(0, 0) >= b_on["pages"] * 9 // 10,
            f"placed: vectors {b_on} (want >= 90% on N0; waited {waited[1] if waited else '?'} s), "
            f"big {n0_mib(on.objs['big']):.1f} MiB on N0; room {r.get('actions')}, "
            f"exchanged {r.get('exchanged_bytes')} bytes, untracked {r.get('untracked')}; {untracked}")
    # (the vectors' room comes from the head; node 0 as a whole stays used:
    # glibc keeps their outgrown blocks, on node 0 once exchanged)
    a_on, a_ref = on.totals.get("anon", {}).get(0, 0), ref.totals.get("anon", {}).get(0, 0)
    c.check(f"{cfg}/bins-node0-kept", a_ref > 0 and a_on >= a_ref * 95 // 100,
            f"node-0 anonymous pages: placed {a_on}, unplaced {a_ref} (want >= 95%: the room "
            f"moves the head aside, it does not leave node 0 unused); big "
            f"{n0_mib(on.objs['big']):.1f} MiB on N0 placed, {n0_mib(ref.objs['big']):.1f} unplaced")
    c.same_checksum(cfg, on, ref)
    no_kill(cfg, d, on)


def vmstat_delta(d, name):
    """{counter: after - before} of the guest's /proc/vmstat around a run."""
    def read(which):
        p = d / f"{name}.vmstat-{which}"
        return dict((k, int(v)) for k, v in (line.split() for line in c.read(p).splitlines() if line.strip()))
    before, after = read("before"), read("after")
    return {k: after[k] - before.get(k, 0) for k in after}


def check_balance_plain(d):
    """NUMA balancing on (mode 1) beside a split object whose 24 MiB tail is
    placed on node 1 by policy (mbind: the kernel's scanner skips it, its
    pages stay) or by migration (TIERWISE_NUMA_MODE=migrate: faulted onto
    node 1, default policy: the scanner sees them and moves the ones the
    CPUs of node 0 read to node 0)."""
    cfg = "plain"
    pol, mig = c.Case(d, "bal-policy"), c.Case(d, "bal-migrate")
    for case in (pol, mig):
        if case.rc != 0 or "p1-split" not in case.objs or "p2-split" not in case.objs:
            c.check(f"{cfg}/{case.name}-ran", False, f"{case.name}: {case.why()}")
            return
    def n1(case, when):
        return case.objs[f"{when}-split"]["mp_nodes"].get(1, 0)

    tail = 24 * MiB // c.PAGE
    vpol, vmig = vmstat_delta(d, "bal-policy"), vmstat_delta(d, "bal-migrate")
    room = (mig.report or {}).get("room") or {}
    text = (f"split tail pages on N1 after allocation/after 20 s: policy {n1(pol, 'p1')}/{n1(pol, 'p2')} "
            f"(vmstat {vpol}), migrate {n1(mig, 'p1')}/{n1(mig, 'p2')} (vmstat {vmig}); "
            f"migrate_bytes {room.get('migrate_bytes')}")
    # placed by migration: the 24 MiB tail faulted onto node 1, policy reset
    c.check(f"{cfg}/migrate-mode-tail-placed", room.get("migrate_bytes") == 24 * MiB, text)
    # the policy tail is never scanned (stays on N1, nothing migrated); the
    # migrated tail is, and the pages node 0's CPUs read move to node 0
    c.check(f"{cfg}/migrate-mode-visible-to-balancing",
            n1(pol, "p2") >= tail - c.TOL and vpol.get("numa_pages_migrated", 0) <= c.TOL
            and n1(mig, "p2") <= tail - 256 and vmig.get("numa_pages_migrated", 0) >= 256,
            text + " (want the policy tail kept on N1, at least 1 MiB of the migrated one "
            "moved to N0 by the kernel)")
    c.same_checksum(cfg, mig, pol)
