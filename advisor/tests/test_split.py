# SPDX-License-Identifier: MIT
"""The split fill (select.split_fill): one large site gets a DRAM head of
its objects. Checked against a brute force over every whole subset and
every split site with its largest feasible head, for feasibility at every
instant of the raw timeline, and end to end through `tierwise advise`."""

import itertools
import json

import numpy as np
import pytest

from advisor_profiles import site_row, write_profile
from tierwise import baselines, cost, reader, select, tiers
from tierwise.cli import main

PAGE, MIN_HEAD, UNIT = select.PAGE, select.SPLIT_MIN_HEAD, 64 << 10


def largest_head(usage, live_s, cap, size):
    """Largest page-multiple head in [MIN_HEAD, min(cap, size - 1)] with
    usage + min(h, live_s) <= cap at every instant (binary search: fitting
    only gets harder as h grows); 0 if none."""
    fits = lambda h: np.all(usage + np.minimum(h, live_s) <= cap)
    lo, hi = MIN_HEAD // PAGE, (int(size) - 1) // PAGE
    if hi < lo or not fits(lo * PAGE):
        return 0
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid * PAGE) else (lo, mid - 1)
    return lo * PAGE


def brute_force(live, v, size, cap, eligible):
    """(best whole-only value, best value with at most one split site)."""
    n = live.shape[0]
    whole, split = 0.0, 0.0
    for mask in range(1 << n):
        rows = [i for i in range(n) if mask >> i & 1]
        usage = live[rows].sum(axis=0) if rows else np.zeros(live.shape[1])
        if not np.all(usage <= cap):
            continue
        value = sum(max(v[i], 0) for i in rows)
        whole = max(whole, value)
        split = max(split, value)
        for p in eligible:
            if p not in rows:
                h = largest_head(usage, live[p], cap, size[p])
                split = max(split, value + v[p] * h / size[p])
    return whole, split


def random_instance(rng):
    """Up to 8 sites over up to 6 instants; an eligible site has one object
    live at a time (its row: 0 or an object's bytes), sizes in 64 KiB units."""
    n, t = int(rng.integers(1, 9)), int(rng.integers(1, 7))
    size = rng.integers(1, 48, size=n) * UNIT
    live = np.zeros((n, t))
    for i in range(n):
        objs = rng.integers(1, int(size[i] // UNIT) + 1, size=t) * UNIT
        objs[rng.integers(0, t)] = size[i]  # the peak is one object's size
        live[i] = np.where(rng.random(t) < 0.65, objs, 0)
        live[i, rng.integers(0, t)] = size[i]
    v = rng.uniform(-1, 10, size=n) * size / UNIT * rng.choice([0.2, 1, 5], size=n)
    eligible = [i for i in range(n) if v[i] > 0 and size[i] >= 16 * UNIT]
    cap = int(rng.integers(0, int(live.sum(axis=0).max()) + 2 * UNIT))
    return live, v, size, cap, eligible


def check_feasible(live, cap, rows, s, h, size):
    usage = live[sorted(rows)].sum(axis=0) if rows else np.zeros(live.shape[1])
    if s is not None:
        assert h % PAGE == 0 and MIN_HEAD <= h < size[s] and s not in rows
        usage = usage + np.minimum(h, live[s])
    assert np.all(usage <= cap)


@pytest.mark.parametrize("seed", range(120))
def test_split_fill_reaches_the_brute_force_optimum(seed):
    rng = np.random.default_rng(seed)
    live, v, size, cap, eligible = random_instance(rng)
    _, rows, _ = select.lifetime_knapsack(live, v, cap)
    value, whole, s, h, exact = select.split_fill(live, v, size, cap, rows, eligible)
    check_feasible(live, cap, whole, s, h, size)
    got = sum(v[i] for i in whole) + (v[s] * h / size[s] if s is not None else 0)
    assert value == pytest.approx(got)
    best_whole, best_split = brute_force(live, v, size, cap, eligible)
    assert value >= best_whole - 1e-9  # never below the whole-site optimum
    assert exact  # <= 8 sites: every eligible site is a search candidate
    assert value == pytest.approx(best_split)


@pytest.mark.parametrize("seed", range(40))
def test_greedy_steps_alone_keep_their_guarantee(seed, monkeypatch):
    """Without the exact search (over LIFETIME_EXACT_MAX candidates) the
    result is feasible and at least the whole-site value plus the best head
    beside the knapsack's sites."""
    monkeypatch.setattr(select, "LIFETIME_EXACT_MAX", 0)
    rng = np.random.default_rng(1000 + seed)
    live, v, size, cap, eligible = random_instance(rng)
    _, rows, _ = select.lifetime_knapsack(live, v, cap)
    value, whole, s, h, exact = select.split_fill(live, v, size, cap, rows, eligible)
    fits = (v > 0) & np.all(live <= cap, axis=1)
    assert exact == (not fits.any())  # skipped unless there is nothing to search
    check_feasible(live, cap, whole, s, h, size)
    usage = live[sorted(rows)].sum(axis=0) if rows else np.zeros(live.shape[1])
    base = sum(v[i] for i in rows)
    fill = max(
        [base]
        + [
            base + v[p] * largest_head(usage, live[p], cap, size[p]) / size[p]
            for p in eligible
            if p not in rows
        ]
    )
    assert value >= fill - 1e-9
    assert value <= brute_force(live, v, size, cap, eligible)[1] + 1e-9


def test_local_improvement_drops_a_less_dense_site():
    # one instant, 1 MiB budget: the knapsack takes the 640 KiB site A (value
    # 10 > 8), the 2 MiB site S (value 40 / 2 MiB) gets only 384 KiB of head;
    # dropping A (less dense than S) gives S 1 MiB - 4 KiB of head, worth more
    mib = 1 << 20
    live = np.array([[10 * UNIT], [2 * mib]], dtype=float)
    v = np.array([10.0, 40.0])
    size = np.array([10 * UNIT, 2 * mib])
    _, rows, _ = select.lifetime_knapsack(live, v, mib)
    assert rows == {0}
    value, whole, s, h, _ = select.split_fill(live, v, size, mib, rows, [1])
    assert (whole, s, h) == (set(), 1, mib)
    assert value == pytest.approx(40 * mib / (2 * mib))


def test_the_head_fits_where_the_object_is_smaller_than_the_slack():
    # the split site's smaller object (64 KiB) fits wholly beside a busy
    # instant (124 KiB free); only the instant where its 2 MiB object is
    # live bounds the head
    mib = 1 << 20
    live = np.array([[900 * 1024, 0], [64 * 1024, 2 * mib]], dtype=float)
    v = np.array([5.0, 4.0])
    size = np.array([900 * 1024, 2 * mib])
    value, whole, s, h, exact = select.split_fill(live, v, size, mib, {0}, [1])
    assert whole == {0} and s == 1 and h == mib and exact


def timeline_profile(tmp_path, rng, name):
    """Random sites: big ones with objects one after another (eligible),
    others with overlapping objects; counts give each site a benefit."""
    n = int(rng.integers(2, 7))
    rows, objs, eligible = [], [], []
    after = lambda mine: all(f is not None and f <= b[2] for (_, _, _, f), b in zip(mine, mine[1:]))
    for i in range(n):
        seq = rng.random() < 0.6
        k = int(rng.integers(1, 4))
        sizes = [int(rng.integers(2, 40)) * UNIT for _ in range(k)]
        t = int(rng.integers(0, 20))
        for z in sizes:
            life = int(rng.integers(1, 15))
            free = None if rng.random() < 0.15 else t + life
            objs.append((i, z, t, free))
            if free is None:
                break
            t = free if seq else t + int(rng.integers(0, life))
        mine = [o for o in objs if o[0] == i]
        instants = sorted({o[2] for o in mine})
        peak = max(
            sum(z for _, z, a, f in mine if a <= u and (f is None or f > u)) for u in instants
        )
        misses = int(rng.integers(0, 5000)) * (peak // UNIT)
        rows.append(
            site_row(
                i,
                f"x+0x{i + 1:x}",
                peak,
                misses * 4,
                misses,
                misses,
                0,
                misses // 4,
                allocs=len(mine),
            )
        )
        if after(sorted(mine, key=lambda o: o[2])) and peak >= 16 * UNIT and misses > 0:
            eligible.append(i)
    d = write_profile(tmp_path / name, rows, objs)
    return reader.read_profile(d), objs, eligible


def live_at(objs, n, t):
    return np.array(
        [
            sum(z for s, z, a, f in objs if s == i and a <= t and (f is None or f > t))
            for i in range(n)
        ],
        dtype=float,
    )


@pytest.mark.parametrize("seed", range(25))
def test_select_on_random_timelines(tmp_path, seed):
    """Through select(): the split site is one whose objects never overlap,
    the raw timeline holds the DRAM bytes at every allocation instant, and
    the value is the brute-force optimum over whole subsets and split sites."""
    rng = np.random.default_rng(seed)
    p, objs, eligible = timeline_profile(tmp_path, rng, "p")
    n = len(p.sites)
    model = tiers.load("optane-appdirect")
    c = cost.site_costs(p.sites, model)
    live = np.stack([live_at(objs, n, t) for t in sorted({o[2] for o in objs})], axis=1)
    budget = int(rng.integers(0, int(live.sum(axis=0).max()) + 1))
    sel = select.select(p, c, budget, "cost")
    whole = select.select(p, c, budget, "cost", partial=False)
    assert whole.partial == {}
    ben = c["benefit"].to_numpy()
    f = sel.fractions(c)
    value = sum(ben[i] * f[i] for i in f)
    assert value >= sum(ben[i] for i in whole.fast) - 1e-12
    assert set(sel.partial) <= set(eligible)
    h = sel.partial.get(next(iter(sel.partial), None), 0)
    usage = live[sorted(sel.fast)].sum(axis=0) if sel.fast else np.zeros(live.shape[1])
    for s in sel.partial:
        usage = usage + np.minimum(h, live[s])
    assert np.all(usage <= budget) and sel.used_bytes == int(usage.max())
    size = c["bytes"].to_numpy()
    _, best = brute_force(live, np.maximum(ben, 0), size, budget, eligible)
    assert value == pytest.approx(best, rel=1e-9, abs=1e-15)
    # the oracle with partial=True enumerates the same space: equal value
    frac, used = baselines.oracle(p, c, budget, partial=True)
    assert sum(ben[i] * frac[i] for i in frac) == pytest.approx(best, rel=1e-9, abs=1e-15)
    assert used <= budget
    whole_frac, _ = baselines.oracle(p, c, budget)
    assert all(x == 1.0 for x in whole_frac.values())
    assert sum(ben[i] for i in whole_frac) == pytest.approx(
        sum(ben[i] for i in whole.fast), rel=1e-9, abs=1e-15
    )


def test_one_at_a_time(tmp_path):
    rows = [site_row(i, f"x+0x{i + 1:x}", 1 << 20, allocs=a) for i, a in enumerate([2, 2, 3, 1])]
    objs = [
        (0, 1 << 20, 0, 5),
        (0, 1 << 20, 5, 9),  # one after the other
        (1, 1 << 20, 0, 5),
        (1, 1 << 20, 4, 9),  # overlapping
        (2, 1 << 20, 0, 5),
        (2, 1 << 20, 6, 9),  # a third allocation untracked
        (3, 1 << 20, 0, None),
    ]
    p = reader.read_profile(write_profile(tmp_path / "p", rows, objs))
    assert list(select.one_at_a_time(p, p.sites.index)) == [True, False, False, True]
    q = reader.read_profile(write_profile(tmp_path / "q", rows))
    assert list(select.one_at_a_time(q, q.sites.index)) == [False, False, False, True]


def bfs_like(tmp_path):
    """A 4 MiB adjacency array (hot, random) and two 768 KiB frontier
    arrays (hotter per byte), all live together: at a 2 MiB budget the
    frontier arrays fit and 512 KiB is left for the adjacency array's head."""
    mib = 1 << 20
    adj = site_row(0, "bfs+0x10;bfs+0x1", 4 * mib, 400000, 0, 200000, location="build adj.c:10")
    # the two frontier arrays: the same counts
    counts = (768 << 10, 300000, 100000, 150000, 50000, 20000)
    rows = [adj] + [
        site_row(i, f"bfs+0x{i}0;bfs+0x1", *counts, location=f"bfs bfs.c:{19 + i}") for i in (1, 2)
    ]
    objs = [(0, 4 * mib, 0, None), (1, 768 << 10, 1, None), (2, 768 << 10, 2, None)]
    return write_profile(tmp_path / "bfs", rows, objs)


def test_advise_writes_the_head_and_whole_sites_gives_none(tmp_path, capsys):
    d = bfs_like(tmp_path)
    out = tmp_path / "split.json"
    assert main(["advise", str(d), "--dram-budget", "2M", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "dram+pmem" in text
    assert "site 0 (build adj.c:10) is split: the first 512.0 KiB of each object in dram" in text
    assert "dram: 2.0 MiB in 2 sites and 1 head;" in text
    doc = json.loads(out.read_text())
    from tierwise.formats import placement

    placement.validate(doc)
    adj = next(s for s in doc["sites"] if s["location"] == "build adj.c:10")
    assert adj["tier"] == "pmem" and adj["dram_bytes"] == 512 << 10
    whole_out = tmp_path / "whole.json"
    assert (
        main(["advise", str(d), "--dram-budget", "2M", "--whole-sites", "-o", str(whole_out)]) == 0
    )
    text = capsys.readouterr().out
    assert "dram+pmem" not in text and "is split" not in text
    whole = json.loads(whole_out.read_text())
    assert not any("dram_bytes" in s for s in whole["sites"])
    # the head's share of the benefit: an eighth of the array
    full = next(s for s in whole["sites"] if s["location"] == "build adj.c:10")["benefit"]
    assert adj["benefit"] == pytest.approx(full / 8, rel=1e-6)
    ms, ws = doc["modelled_seconds"], whole["modelled_seconds"]
    assert ms["placement"] == pytest.approx(ws["placement"] - full / 8, rel=1e-6)
    assert ms["all_fast"] == ws["all_fast"]


def test_compare_counts_the_head(tmp_path):
    from tierwise.comparison import compare_table

    p = reader.read_profile(bfs_like(tmp_path))
    model = tiers.load("optane-appdirect")
    foot = select.peak_footprint(p)
    split, _ = compare_table(p, model, [2 * (1 << 20) / foot], policies=["cost"], with_oracle=True)
    whole, _ = compare_table(
        p, model, [2 * (1 << 20) / foot], policies=["cost"], with_oracle=True, partial=False
    )
    at = lambda df, pol: df[df["policy"] == pol].iloc[0]
    assert at(split, "cost")["modelled_seconds"] < at(whole, "cost")["modelled_seconds"]
    assert at(split, "cost")["fast_bytes"] == 2 << 20
    # each oracle searches what its cost policy may choose: equal; the
    # whole-subset oracle is beaten by the head
    for df in (split, whole):
        assert at(df, "cost")["modelled_seconds"] == pytest.approx(at(df, "oracle")["modelled_seconds"])
    assert at(split, "cost")["modelled_seconds"] < at(whole, "oracle")["modelled_seconds"]


def test_no_split_for_a_tier_the_runtime_cannot_split(tmp_path):
    p = reader.read_profile(bfs_like(tmp_path))
    from tierwise.advice import advise

    for preset in ("cxl", "optane-kmem"):
        doc, _, sel, _ = advise(p, tiers.load(preset), "2M")
        assert sel.partial == {} and not any("dram_bytes" in s for s in doc["sites"])


def test_split_without_a_timeline(tmp_path):
    """No objects.csv: a site of one allocation may be split, beside the
    plain knapsack's sites (sum of peaks); with --no-lifetime the same."""
    d = bfs_like(tmp_path)
    (d / "objects.csv").unlink()
    p = reader.read_profile(d)
    c = cost.site_costs(p.sites, tiers.load("optane-appdirect"))
    sel = select.select(p, c, (2 << 20) + 3000, "cost")
    assert sel.fast == {1, 2} and sel.partial == {0: 512 << 10}
    assert sel.used_bytes == 2 << 20
    q = reader.read_profile(bfs_like(tmp_path / "q"))
    assert select.select(q, c, (2 << 20) + 3000, "cost", lifetime=False).partial == {0: 512 << 10}
