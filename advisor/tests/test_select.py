# SPDX-License-Identifier: MIT
"""Selection: exact knapsack against brute force, lifetime-aware packing,
budgets, and each greedy policy's ranking on a hand-made profile."""

import itertools
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor_profiles import site_row, write_profile
from tierwise import cost, reader, select, tiers


def brute_force(w, v, cap):
    best = 0.0
    for r in range(len(w) + 1):
        for comb in itertools.combinations(range(len(w)), r):
            if sum(w[i] for i in comb) <= cap:
                best = max(best, sum(v[i] for i in comb))
    return best


@pytest.mark.parametrize("seed", range(60))
def test_knapsack_matches_brute_force(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 11)
    w = [rng.choice([0, rng.randint(1, 100), rng.randint(1, 10) * 4096]) for _ in range(n)]
    v = [rng.choice([rng.uniform(-1, 5), rng.uniform(0, 100), 0.0]) for _ in range(n)]
    cap = rng.randint(0, max(1, sum(w)))
    value, chosen, exact = select.knapsack(w, v, cap)
    assert exact
    assert sum(w[i] for i in chosen) <= cap
    assert value == pytest.approx(sum(v[i] for i in chosen))
    assert value == pytest.approx(brute_force(w, [max(x, 0) for x in v], cap))
    assert all(v[i] > 0 for i in chosen)


def test_knapsack_beats_density_greedy():
    # density order takes item 0 (10/6) then nothing fits; optimum is 1+2
    value, chosen, _ = select.knapsack([6, 5, 5], [10, 8, 8], 10)
    assert chosen == {1, 2} and value == 16


def brute_force_live(live, v, cap):
    best = 0.0
    n = live.shape[0]
    for mask in range(1 << n):
        rows = [i for i in range(n) if mask >> i & 1]
        if not rows or np.all(live[rows].sum(axis=0) <= cap):
            best = max(best, sum(max(v[i], 0) for i in rows))
    return best


@pytest.mark.parametrize("seed", range(30))
def test_lifetime_knapsack_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, t = int(rng.integers(1, 9)), int(rng.integers(1, 6))
    live = rng.integers(0, 50, size=(n, t)) * (rng.random((n, t)) < 0.6)
    v = rng.uniform(-2, 10, size=n)
    cap = int(rng.integers(0, 120))
    value, chosen, exact = select.lifetime_knapsack(live.astype(float), v, cap)
    assert exact
    if chosen:
        assert np.all(live[sorted(chosen)].sum(axis=0) <= cap)
    assert value == pytest.approx(brute_force_live(live, v, cap))


def two_phases(tmp_path):
    """site 0 lives [0,10), site 1 [10,20), site 2 always, site 3 untracked"""
    d = write_profile(
        tmp_path / "p",
        [site_row(i, f"x+0x{i}0", b) for i, b in enumerate([100, 100, 30, 7])],
        [(0, 60, 0, 10), (0, 40, 5, 10), (1, 100, 10, 20), (2, 30, 0, None)],
    )
    return reader.read_profile(d)


def test_live_matrix_from_timeline(tmp_path):
    p = two_phases(tmp_path)
    m = select.live_matrix(p.objects, p.sites.index, p.sites["peak_bytes"].astype("int64"))
    cols = {tuple(c) for c in m.T}
    # instants 5 (0:100, 2:30) and 10 (1:100, 2:30); site 3 counts as always live
    assert cols == {(100, 0, 30, 7), (0, 100, 30, 7)}


def test_peak_footprint_is_the_largest_live_total(tmp_path):
    # peak live 100 + 30 + 7 = 137, against 237 summed per site
    assert select.peak_footprint(two_phases(tmp_path)) == 137
    e = write_profile(tmp_path / "q", [site_row(i, f"x+0x{i}0", 50) for i in range(2)], [])
    assert select.peak_footprint(reader.read_profile(e)) == 100  # no timeline: sum


def test_lifetime_aware_cost_policy_shares_dram(tmp_path):
    # two phases, each 100 bytes; a 130-byte budget holds both only if lifetimes are used
    d = write_profile(
        tmp_path / "p",
        [
            site_row(0, "x+0x10", 100, 1000, 0, 1000),
            site_row(1, "x+0x20", 100, 1000, 0, 900),
            site_row(2, "x+0x30", 30, 10, 0, 5),
        ],
        [(0, 100, 0, 10), (1, 100, 10, 20), (2, 30, 0, None)],
    )
    p = reader.read_profile(d)
    m = tiers.load("optane-appdirect")
    c = cost.site_costs(p.sites, m)
    aware = select.select(p, c, 130, "cost", lifetime=True)
    plain = select.select(p, c, 130, "cost", lifetime=False)
    assert aware.fast == {0, 1, 2} and aware.used_bytes == 130
    assert plain.fast == {0, 2} and plain.used_bytes == 130
    # the plan's timeline (placement planned_live): 0 and 1 take the same
    # bytes one after the other, 2 is live at both instants
    assert sorted(zip(aware.timeline[0], aware.timeline[1], aware.timeline[2])) == [
        (0, 100, 30),
        (100, 0, 30),
    ]
    assert plain.timeline == {}  # packed by peak bytes: static reservations say it


def test_planned_timeline_one_instant_is_none():
    # every chosen site at its peak at one instant: nothing to share
    live = np.array([[5.0, 5.0], [3.0, 2.0]])
    assert select.planned_timeline(live, {0, 1}, {}) == {}
    # a head counts min(head, live bytes); rows not chosen are left out
    live = np.array([[8.0, 0.0], [0.0, 8.0], [9.0, 9.0]])
    assert select.planned_timeline(live, {0}, {1: 4}) == {0: [8, 0], 1: [0, 4]}
    # two heads, each at its own instant
    two = select.planned_timeline(live, set(), {0: 3, 1: 4})
    assert sorted(zip(two[0], two[1])) == [(0, 4), (3, 0)]


@pytest.mark.parametrize("seed", range(6))
def test_merge_instants_bounds_every_instant(seed):
    rng = np.random.default_rng(seed)
    m = rng.integers(0, 100, size=(7, 90)).astype("float64") * (rng.random((7, 90)) < 0.4)
    merged = select.merge_instants(m, 5)
    assert merged.shape == (7, 5)
    # every instant of m lies under some merged instant: a set that fits the
    # merged ones at every instant fits m
    assert all(np.any(np.all(merged >= m[:, [j]], axis=0)) for j in range(m.shape[1]))
    # and nothing grows beyond the site's own peak
    assert np.all(merged.max(axis=1) <= m.max(axis=1))


@pytest.fixture
def hand_profile(tmp_path):
    # site: peak bytes, loads, stores, load misses, store misses, writebacks
    rows = [
        site_row(0, "x+0x10", 1000, 900, 0, 500, 0, 0),  # read-only, miss-heavy
        site_row(1, "x+0x20", 2000, 500, 1500, 100, 300, 1500),  # write-heavy
        site_row(2, "x+0x30", 100, 50, 20, 1, 0, 0),  # small, cold
        site_row(3, "x+0x40", 4000, 2000, 100, 50, 10, 10),  # big, cool
        "4,[static],[static],,,,10,10,10,10,10",
    ]
    return reader.read_profile(write_profile(tmp_path / "p", rows))


@pytest.mark.parametrize(
    "policy,order",
    [
        ("write-intensity", [1, 2, 3, 0]),  # stores per byte: .75, .2, .025, 0
        ("misses", [0, 1, 3, 2]),  # misses per byte: .5, .2, .015, .01
        ("size", [2, 0, 1, 3]),
    ],
)
def test_policy_rankings(hand_profile, policy, order):
    key = select.scores(hand_profile.placeable, policy)
    assert sorted(key.index, key=lambda s: -key[s]) == order


@pytest.mark.parametrize(
    "policy,budget,fast",
    [
        ("write-intensity", 2100, {1, 2}),
        ("write-intensity", 2050, {1}),  # 2 does not fit after 1; 3 and 0 neither
        ("misses", 3000, {0, 1}),
        ("size", 1100, {2, 0}),
        ("size", 3100, {2, 0, 1}),
    ],
)
def test_greedy_fill(hand_profile, policy, budget, fast):
    m = tiers.load("optane-appdirect")
    c = cost.site_costs(hand_profile.sites, m)
    s = select.select(hand_profile, c, budget, policy)
    assert s.fast == fast and s.used_bytes <= budget


def test_cost_policy_picks_best_benefit_set(hand_profile):
    m = tiers.load("optane-appdirect")
    c = cost.site_costs(hand_profile.sites, m)
    s = select.select(hand_profile, c, 3000, "cost")
    ben = c["benefit"]
    best = max(
        (sum(ben[i] for i in comb), set(comb))
        for r in range(5)
        for comb in itertools.combinations(range(4), r)
        if sum(c["bytes"][i] for i in comb) <= 3000
    )
    assert s.fast == best[1]
    assert 4 not in s.fast  # pseudo-sites are never placed


@pytest.mark.parametrize(
    "text,total,expect",
    [
        ("20%", 1000, 200),
        ("0%", 1000, 0),
        ("100%", 1000, 1000),
        ("2K", 0, 2048),
        ("1G", 5, 1 << 30),
    ],
)
def test_parse_budget(text, total, expect):
    assert select.parse_budget(text, total) == expect


@pytest.mark.parametrize(
    "text,err", [("120%", "between 0% and 100%"), ("lots", "expected a size"), ("-5%", "between")]
)
def test_bad_budget(text, err):
    with pytest.raises(ValueError, match=err):
        select.parse_budget(text, 100)


@pytest.mark.parametrize("seed", range(10))
def test_peak_instants_keep_every_subset_peak(tmp_path, seed):
    """The pruned timeline gives every subset of sites the same peak as
    evaluating live bytes at every allocation instant."""
    rng = np.random.default_rng(seed)
    n = 5
    objs = []
    for _ in range(40):
        a = int(rng.integers(0, 100))
        objs.append(
            (
                int(rng.integers(0, n)),
                int(rng.integers(1, 9)),
                a,
                a + int(rng.integers(0, 30)) if rng.random() < 0.8 else None,
            )
        )
    rows = [site_row(i, f"x+0x{i + 1:x}", 1) for i in range(n)]
    p = reader.read_profile(write_profile(tmp_path / "p", rows, objs))
    pruned = select.live_matrix(p.objects, p.sites.index, p.sites["peak_bytes"].astype("int64") * 0)
    full = np.zeros((n, 0))
    for t in sorted({o[2] for o in objs}):
        col = [
            sum(z for s, z, a, f in objs if s == i and a <= t and (f is None or f > t))
            for i in range(n)
        ]
        full = np.hstack([full, np.array(col, dtype=float)[:, None]])
    for mask in range(1, 1 << n):
        rows_ = [i for i in range(n) if mask >> i & 1]
        assert pruned[rows_].sum(axis=0).max() == full[rows_].sum(axis=0).max()


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 4),  # site
            st.integers(1, 1000),  # size
            st.integers(0, 30),  # alloc time
            st.one_of(st.none(), st.integers(0, 30)),  # lifetime (None: never freed)
            st.integers(0, 1),  # profile
        ),
        max_size=25,
    ),
    st.lists(st.integers(0, 3000), min_size=5, max_size=5),
)
def test_peak_footprint_equals_the_live_matrix_peak(objs, extra):
    # the event sweep gives the largest column total of live_matrix (the
    # lifetime-aware packing's view), residual bytes included
    import pandas as pd

    from tierwise.reader import Profile

    o = pd.DataFrame(
        [(s, z, a, None if life is None else a + life, pr) for s, z, a, life, pr in objs],
        columns=["site", "size", "alloc_time", "free_time", "profile"],
    ).astype({"free_time": "Float64"})
    sites = pd.DataFrame({"site": range(5), "stack": [f"x+0x{i}0" for i in range(5)]})
    per_site = o.groupby("site")["size"].sum() if len(o) else pd.Series(dtype="int64")
    sites["peak_bytes"] = [int(per_site.get(i, 0)) + extra[i] for i in range(5)]
    p = Profile(["a"], [{}], sites.set_index("site", drop=False), o, pd.DataFrame())
    live = select.live_matrix(o, sites.index, sites["peak_bytes"])
    assert select.peak_footprint(p) == int(live.sum(axis=0).max())


def test_lifetime_knapsack_scales_to_thousands_of_sites():
    # Python/MPI profiles: thousands of small sites (recursion used to fail
    # there). Above LIFETIME_EXACT_MAX candidates the answer is feasible at
    # every instant, flagged not proven, and no worse than either incumbent.
    rng = np.random.default_rng(7)
    n, t = 3000, 40
    live = rng.integers(0, 4096, size=(n, t)).astype("float64")
    live[rng.random((n, t)) < 0.7] = 0  # short-lived sites
    values = rng.random(n)
    cap = 200_000
    value, rows, exact = select.lifetime_knapsack(live, values, cap)
    assert not exact
    assert np.all(live[sorted(rows)].sum(axis=0) <= cap)
    assert value == pytest.approx(values[sorted(rows)].sum())
    items = [i for i in range(n) if values[i] > 0 and np.all(live[i] <= cap)]
    g_value, _ = select._greedy_lifetime(live, values, items, cap)
    assert value >= g_value - 1e-9
    # the plain knapsack on peak bytes ignores lifetimes and is feasible too
    k_value, _, _ = select.knapsack(live.max(axis=1), values, cap)
    assert value >= k_value - 1e-9
