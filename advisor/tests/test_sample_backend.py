# SPDX-License-Identifier: MIT
"""The sample backend's pricing of page samples (tierwise.backends.sample):
Che's approximation, the sweep share's significance rule, sweeps and
random visits from their windows, and sites.csv's
columns from fabricated samples."""

import csv
import math

from tierwise.backends import sample
from tierwise.formats import profile as profile_format


def test_che_time_everything_fits():
    assert math.isinf(sample.che_time([100.0, 200.0], [5.0, 1.0], 1000.0))


def test_che_time_fills_the_cache():
    lines, rates, cap = [1000.0, 100000.0], [1000.0, 1.0], 5000.0
    t = sample.che_time(lines, rates, cap)
    filled = sum(n * -math.expm1(-r * t) for n, r in zip(lines, rates))
    assert abs(filled - cap) < 1e-6 * cap
    # the hot lines stay (miss rarely), the cold ones miss
    assert math.exp(-rates[0] * t) < 0.01 < 0.9 < math.exp(-rates[1] * t)


def raw(**kw):
    base = {"any_samples": 400, "any_page_ms": 1000, "write_samples": 400,
            "first_was_write": 0, "runs": 100, "at_first": 25, "run_pages": 4}
    base.update(kw)
    return base


def test_sweep_share_needs_significance():
    # 25 of 100 touched runs at their first page: chance, no sweep
    assert sample.site_model(raw())["sweep"] == 0.0
    # 31 of 100: a chance of 1 in 10 under random access: none
    assert sample.site_model(raw(at_first=31))["sweep"] == 0.0
    # every run entered at its first page: all sweeps
    assert sample.site_model(raw(at_first=100))["sweep"] == 1.0
    # 55 of 100: (0.55 - 0.25) / 0.75
    assert abs(sample.site_model(raw(at_first=55))["sweep"] - 0.4) < 1e-9
    # 5 of 5 (1 in 1024 by chance) are sweeps; 3 of 4 (1 in 20) are not
    assert sample.site_model(raw(runs=5, at_first=5))["sweep"] == 1.0
    assert sample.site_model(raw(runs=4, at_first=3))["sweep"] == 0.0
    assert sample.site_model(raw(runs=0, at_first=0))["sweep"] == 0.0


def test_chance_tail_exact_and_large():
    # against exact integer arithmetic (p = 1/4: i ones, n - i threes over 4^n)
    for k, n in ((5, 5), (3, 4), (0, 7), (8, 7), (40, 100), (330, 1200), (300, 1200)):
        exact = sum(math.comb(n, i) * 3 ** (n - i) for i in range(k, n + 1)) / 4**n if k <= n else 0.0
        assert math.isclose(sample.chance_tail(k, n, 0.25), exact, rel_tol=1e-9, abs_tol=1e-300)
    # a site's runs past float range of comb(n, i) (about n = 1030): no
    # OverflowError, and a site whose first-page share is that of random
    # access is not read as swept
    assert 0.4 < sample.chance_tail(500, 2000, 0.25) < 0.6
    assert sample.site_model({"runs": 2000, "at_first": 500, "run_pages": 4, "any_touched": 2000,
                              "any_runs": 4000, "any_soon": [0, 0, 0, 2000],
                              "any_page_ms": 1000})["sweeps"] == 0


def test_sweeps_from_the_window_they_are_seen_in():
    # A sweep touches a run's 4 pages as one visit, in the window long
    # enough to see it: of 100 runs armed for 1 s of pages, 40 first
    # touched within 10 ms, all at their first page: -ln(1 - 0.4) / 10 ms
    # sweeps of a page a second; the page rate (page_visits) gives the
    # random visits, less the sweeps' share
    one = raw(at_first=100, any_runs=100, any_soon=[0, 0, 0, 40])
    page = sample.page_visits(one, "any")
    assert page > 0
    swept = sample.site_model(one)
    assert abs(swept["sweeps"] - -math.log1p(-0.4) / 0.01) < 1e-9
    assert swept["random"] == 0
    rand = sample.site_model(dict(one, at_first=25))
    assert rand["sweeps"] == 0 and abs(rand["random"] - page) < 1e-9
    # 55 of 100 at the first page: 0.4 of the runs' touches are sweeps
    mixed = sample.site_model(dict(one, at_first=55))
    assert abs(mixed["sweeps"] - -math.log1p(-0.16) / 0.01) < 1e-9
    assert abs(mixed["random"] - 0.6 * page) < 1e-9


def test_page_visits_from_the_fastest_bin():
    # 1000 runs of a page touched at 10,000/s (a run: 4 pages): 9.5% first
    # touched within 10 us, 63.2% within 100 us: every bin measured from
    # its own start gives the page's rate
    r = {"any_runs": 1000, "any_soon": [95, 632, 1000, 1000], "any_page_ms": 1000,
         "run_pages": 4}
    assert abs(sample.page_visits(r, "any") - 10000 / 4) < 0.01 * 10000 / 4
    # a TCG guest's contrib array: no touch within 10 us, 5 within 100 us,
    # 113 of 118 within 1 ms: the rate in the 100 us - 1 ms bin, not 5
    # touches read from 0 (-ln(1 - 5/118) / 100 us, 8x colder)
    g = {"any_runs": 118, "any_soon": [0, 5, 113, 118], "any_page_ms": 1000, "run_pages": 4}
    fastest = math.log((1 - 5 / 118) / (5 / 118)) / 900e-6 / 4
    assert abs(sample.page_visits(g, "any") - fastest) < 1e-6 * fastest
    assert sample.page_visits(g, "any") > 7 * -math.log1p(-5 / 118) / 100e-6 / 4
    # used in bursts (touch_check's hot array): 6 of 44 within 10 us, 32
    # within 100 us, 44 within 10 ms: the first bin's rate, the fastest
    h = {"any_runs": 44, "any_soon": [6, 32, 34, 44], "any_page_ms": 1000, "run_pages": 4}
    assert abs(sample.page_visits(h, "any") - -math.log1p(-6 / 44) / 10e-6 / 4) < 1e-6
    # fewer than 5 touches in every bin: the bin with the most
    f = {"any_runs": 100, "any_soon": [0, 0, 1, 4], "any_page_ms": 1000, "run_pages": 4}
    assert abs(sample.page_visits(f, "any") - math.log(0.99 / 0.96) / 9e-3 / 4) < 1e-6
    # none touched: no visits; no runs: none either
    assert sample.page_visits(dict(g, any_soon=[0, 0, 0, 0]), "any") == 0
    assert sample.page_visits({"any_runs": 0}, "any") == 0


def test_reprice_columns(tmp_path):
    cols = profile_format.REQUIRED_SITE_COLUMNS + ["samples"]
    rows = [
        {"site": "0", "stack": "a", "location": "", "allocs": "1",
         "bytes_allocated": str(64 << 20), "peak_bytes": str(64 << 20), "samples": "800"},
        {"site": "1", "stack": "b", "location": "", "allocs": "1",
         "bytes_allocated": str(64 << 20), "peak_bytes": str(64 << 20), "samples": "800"},
        {"site": "2", "stack": "c", "location": "", "allocs": "1",
         "bytes_allocated": str(1 << 20), "peak_bytes": str(1 << 20), "samples": "0"},
    ]
    path = tmp_path / "sites.csv"
    profile_format.write_rows(path, cols, rows)
    pages_s = (64 << 20) // 4096 * 1.0  # a second of each big object
    samples = {
        # swept: every run entered at its first page, a sweep a second
        # (1% of the runs touched within their 10 ms)
        0: raw(any_page_ms=round(pages_s * 1000), at_first=100,
               any_runs=100000, any_soon=[0, 0, 0, 1000]),
        # random: a visit of a page a second (a run of 4 pages: 4/s; the
        # windows of 100,000 runs as an exponential fills them), one line
        # each; half the first touches wrote
        1: raw(any_page_ms=round(pages_s * 1000), at_first=25, first_was_write=50,
               any_runs=100000, any_soon=[4, 40, 399, 3921]),
    }
    for r in samples.values():
        r["any_touched"] = 100
    sample.reprice(path, samples, 1 << 20, 1.0)
    got = {r["site"]: r for r in csv.DictReader(open(path))}
    swept, rand = got["0"], got["1"]
    # the sweep touches 64 lines a visit, all prefetched
    sweeps = -math.log1p(-0.01) / 0.01 * pages_s
    assert int(swept["loads"]) == round(64 * sweeps)
    assert int(swept["llc_stream_misses"]) == int(swept["llc_load_misses"])
    # a random visit touches a line; half of them wrote
    assert abs(int(rand["loads"]) + int(rand["stores"]) - pages_s) < 0.01 * pages_s
    assert int(rand["llc_store_misses"]) == int(rand["llc_load_misses"])
    assert int(rand["llc_stream_misses"]) == 0
    # 128 MiB of lines touched about once a second through a 1 MiB cache:
    # nearly every touch misses
    assert int(swept["llc_load_misses"]) > 0.95 * int(swept["loads"])
    # a site without samples keeps its columns empty (not measured)
    assert got["2"]["llc_load_misses"] == "" and got["2"]["samples"] == "0"


def test_auto_falls_back_to_sample(monkeypatch):
    """--backend auto: pmu where its events open, else sim, else sample."""
    import argparse
    import types

    from tierwise import pipeline

    avail = {"pmu": (False, "no PMU"), "sim": (True, "ok"), "sample": (True, "ok")}
    monkeypatch.setattr(
        pipeline, "backend",
        lambda name: types.SimpleNamespace(available=lambda args: avail[name]),
    )
    args = argparse.Namespace(backend="auto")
    assert pipeline.choose_backend(args) == "sim"
    avail["sim"] = (False, "valgrind not found")
    assert pipeline.choose_backend(args) == "sample"
    avail["pmu"] = (True, "ok")
    assert pipeline.choose_backend(args) == "pmu"
    assert pipeline.choose_backend(argparse.Namespace(backend="sim")) == "sim"
