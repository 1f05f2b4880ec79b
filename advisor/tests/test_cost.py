# SPDX-License-Identifier: MIT
"""Cost model and tier models: hand-computed cases."""

import pandas as pd
import pytest

from tierwise import cost, tiers

TOML = """
format = "tierwise-tiers"
version = 1
name = "hand"
fast = "dram"
slow = "pmem"
[model]
mlp = 4
line_bytes = 64
compute_ns_per_access = 0.5
[tiers.dram]
read_latency_ns = 100
write_latency_ns = 100
read_bandwidth_gbs = 100
write_bandwidth_gbs = 50
capacity = "1G"
alloc = "default"
[tiers.pmem]
read_latency_ns = 400
write_latency_ns = 300
read_bandwidth_gbs = 10
write_bandwidth_gbs = 2
capacity = "8G"
alloc = "memkind-pmem"
"""


@pytest.fixture
def model(tmp_path):
    p = tmp_path / "hand.toml"
    p.write_text(TOML)
    return tiers.load(str(p))


def sites(*rows):
    cols = [
        "stack",
        "peak_bytes",
        "loads",
        "stores",
        "llc_load_misses",
        "llc_store_misses",
        "writebacks",
    ]
    return pd.DataFrame([dict(zip(cols, r)) for r in rows])


def test_latency_bound_site(model):
    s = sites(("a", 4096, 2_000_000, 0, 1_000_000, 0, 0))
    c = cost.site_costs(s, model).iloc[0]
    assert c["t_fast"] == pytest.approx(1e6 * 100e-9 / 4)  # 0.025 s
    assert c["t_slow"] == pytest.approx(1e6 * 400e-9 / 4)  # 0.1 s (bw: 0.0064 s)
    assert c["benefit"] == pytest.approx(0.075)
    assert c["regime"] == "latency"


def test_streaming_writes_are_bandwidth_bound(model):
    s = sites(("b", 4096, 0, 10**8, 0, 0, 10**8))
    c = cost.site_costs(s, model).iloc[0]
    assert c["t_slow"] == pytest.approx(1e8 * 64 / 2e9)  # 3.2 s: writebacks cost bandwidth
    assert c["t_fast"] == pytest.approx(1e8 * 64 / 50e9)  # 0.128 s
    assert c["regime"] == "bandwidth"


def test_store_misses_use_write_latency(model):
    s = sites(("c", 1, 0, 0, 10**8, 10**7, 0))
    c = cost.site_costs(s, model).iloc[0]
    assert c["t_slow"] == pytest.approx((1e8 * 400 + 1e7 * 300) * 1e-9 / 4)  # 10.75 s


def test_placement_time_and_pseudo_sites(model):
    s = sites(("a", 10, 1000, 1000, 10**6, 0, 0), ("[stack]", None, 10**6, 0, 10**6, 0, 0))
    c = cost.site_costs(s, model)
    base = (1000 + 1000 + 10**6) * 0.5e-9
    pseudo = 1e6 * 100e-9 / 4  # pseudo-sites stay in DRAM
    assert cost.placement_seconds(s, c, model, set()) == pytest.approx(base + pseudo + 0.1)
    assert cost.placement_seconds(s, c, model, {0}) == pytest.approx(base + pseudo + 0.025)
    half = cost.placement_seconds(s, c, model, {0: 0.5})
    assert half == pytest.approx(base + pseudo + 0.0625)


def test_modelled_time_from_per_tier_counts(model):
    counts = pd.DataFrame(
        [
            {
                "stack": "a",
                "tier": "dram",
                "loads": 10,
                "stores": 0,
                "llc_load_misses": 10**6,
                "llc_store_misses": 0,
                "writebacks": 0,
            },
            {
                "stack": "a",
                "tier": "pmem",
                "loads": 10,
                "stores": 0,
                "llc_load_misses": 10**6,
                "llc_store_misses": 0,
                "writebacks": 0,
            },
        ]
    )
    r = cost.modelled_time(counts, model)
    assert r["per_tier"]["dram"]["seconds"] == pytest.approx(0.025)
    assert r["per_tier"]["pmem"]["seconds"] == pytest.approx(0.1)
    assert r["per_tier"]["pmem"]["llc_load_misses"] == 10**6
    assert r["seconds"] == pytest.approx(0.125 + 20 * 0.5e-9)
    with pytest.raises(ValueError, match="tier 'hbw' is not in the tier model"):
        cost.modelled_time(counts.assign(tier="hbw"), model)


def test_presets_load_and_cite():
    names = tiers.presets()
    assert {"optane-appdirect", "optane-kmem", "cxl", "hbm", "numa-remote"} <= set(names)
    for n in names:
        m = tiers.load(n)
        assert m.slow.read_latency_ns > 0 and m.fast.read_bandwidth_gbs > 0
        text = (tiers.PRESET_DIR / f"{n}.toml").read_text()
        for line in text.splitlines():  # every device number carries a citation comment
            if line.split("=")[0].strip() in tiers.TIER_FIELDS:
                assert "#" in line, f"{n}: {line}"
    m = tiers.load(None)
    assert (m.name, m.fast.name, m.slow.name) == ("optane-appdirect", "dram", "pmem")
    assert m.slow.write_bandwidth_gbs == pytest.approx(3.047)  # seed 004 table 2.3
    assert tiers.load("hbm").fast.name == "hbw"


@pytest.mark.parametrize(
    "text,err",
    [
        ("format = 'x'\nversion = 1", "expected format"),
        (TOML.replace('slow = "pmem"', 'slow = "kmem"'), "'slow' = 'kmem' names no"),
        (
            TOML.replace("read_bandwidth_gbs = 10\n", "read_bandwidth_gbs = -1\n"),
            "expected a positive number",
        ),
        (
            TOML.replace("[tiers.pmem]", "[tiers.slowmem]").replace(
                'slow = "pmem"', 'slow = "slowmem"'
            ),
            "tier name 'slowmem'",
        ),
        (TOML.replace('capacity = "8G"', 'capacity = "lots"'), "capacity 'lots'"),
    ],
)
def test_bad_tier_files(tmp_path, text, err):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(ValueError, match=err):
        tiers.load(str(p))


@pytest.mark.parametrize("name", ["kmem", "numa:1", "numa:3"])
def test_named_slow_tier_presets(name, tmp_path, monkeypatch):
    """--tiers kmem / numa:N: the cxl preset's numbers with that slow tier,
    as named (numa:3 stays numa:3 where cxl would resolve to node 2)."""
    monkeypatch.chdir(tmp_path)  # no file named like the spec
    cxl = tiers.load("cxl")
    m = tiers.load(name)
    assert (m.name, m.fast.name, m.slow.name) == (name, "dram", name)
    for k in tiers.TIER_FIELDS:
        assert getattr(m.slow, k) == getattr(cxl.slow, k)
        assert getattr(m.fast, k) == getattr(cxl.fast, k)
    assert (m.mlp, m.prefetch_factor) == (cxl.mlp, cxl.prefetch_factor)
    assert m.slow.alloc == ("kmem-dax" if name == "kmem" else name)
    assert any(f"slow tier {name} as named" in n for n in m.notes)
    assert set(m.to_json()) == {"dram", name}


def test_unknown_preset():
    with pytest.raises(ValueError, match="not a preset"):
        tiers.load("optane-memory-mode")
    with pytest.raises(ValueError, match=r"not a preset \(.*, kmem, numa:N\)"):
        tiers.load("numa:x")


def test_parse_size():
    from tierwise.sizes import parse_size  # what tier files' capacity uses

    assert parse_size("512M") == 512 << 20
    assert parse_size("1.5G") == 3 << 29
    assert parse_size("4096") == 4096
    assert parse_size("2GiB") == 2 << 30


def test_streamed_site_latency_hidden_by_prefetch(model, tmp_path):
    # 16 loads per missed line: a sweep; latency / prefetch_factor (10 here)
    p = tmp_path / "pf10.toml"
    p.write_text(TOML.replace("compute_ns_per_access", "prefetch_factor = 10\ncompute_ns_per_access"))
    s = sites(("d", 4096, 16_000_000, 0, 1_000_000, 0, 0))
    c = cost.site_costs(s, tiers.load(str(p))).iloc[0]
    assert c["t_slow"] == pytest.approx(1e6 * 400e-9 / 4 / 10)  # 0.01 s > bw 0.0064 s
    assert c["regime"] == "streamed"
    # the default factor (64, calibrated on seed 004) makes the sweep
    # bandwidth bound: 1e6 lines * 64 B / 10 GB/s
    c = cost.site_costs(s, model).iloc[0]
    assert model.prefetch_factor == 64
    assert c["t_slow"] == pytest.approx(1e6 * 64 / 10e9)
    assert c["regime"] == "bandwidth"
    # one miss per 2 accesses: random, full latency
    s = sites(("e", 4096, 2_000_000, 0, 1_000_000, 0, 0))
    assert cost.site_costs(s, model).iloc[0]["regime"] == "latency"


def test_measured_sequential_misses_replace_the_ratio_rule(model):
    # 1e6 misses of which 3/4 continue a sweep (the sim backend counts them):
    # latency 1e6 * 400 ns / 4 * (1/4 + 3/4 / 64)
    s = sites(("f", 4096, 2_000_000, 0, 1_000_000, 0, 0)).assign(llc_stream_misses=750_000)
    c = cost.site_costs(s, model).iloc[0]
    assert c["t_slow"] == pytest.approx(1e6 * 400e-9 / 4 * (0.25 + 0.75 / 64))
    assert c["regime"] == "streamed"  # mostly sequential, still latency bound
    # a randomly reused site that mostly hits (16 accesses per miss) is a
    # sweep by the ratio rule, but its misses are not sequential: full latency
    s = sites(("g", 4096, 16_000_000, 0, 1_000_000, 0, 0)).assign(llc_stream_misses=0)
    c = cost.site_costs(s, model).iloc[0]
    assert c["t_slow"] == pytest.approx(1e6 * 400e-9 / 4)
    assert c["regime"] == "latency"
    # not measured (empty): the ratio rule decides
    s = sites(("h", 4096, 16_000_000, 0, 1_000_000, 0, 0)).assign(llc_stream_misses=[None])
    assert cost.site_costs(s, model).iloc[0]["regime"] == "bandwidth"


def test_measured_overlap_replaces_the_constant_mlp(model):
    # 1e6 load misses, 900,000 of them overlapped with an earlier outstanding
    # miss (interval model): only the 100,000 leading misses pay the latency
    # (MLP 10), whatever the constant mlp (4) and the sequential share say
    s = sites(("g", 4096, 2_000_000, 0, 1_000_000, 0, 0)).assign(
        llc_stream_misses=0, llc_overlapped_misses=900_000, llc_dependent_misses=0
    )
    c = cost.site_costs(s, model).iloc[0]
    assert c["t_slow"] == pytest.approx(1e5 * 400e-9)
    assert c["t_fast"] == pytest.approx(1e5 * 100e-9)
    assert c["mlp"] == pytest.approx(10)
    # a chase (none overlapped) pays every miss's latency: MLP 1
    s = s.assign(llc_overlapped_misses=0, llc_dependent_misses=1_000_000)
    c = cost.site_costs(s, model).iloc[0]
    assert c["t_slow"] == pytest.approx(1e6 * 400e-9)
    assert c["mlp"] == pytest.approx(1)
    # all overlapped (a prefetched sweep): no latency, the bandwidth term
    s = s.assign(llc_overlapped_misses=1_000_000)
    c = cost.site_costs(s, model).iloc[0]
    assert c["t_slow"] == pytest.approx(1e6 * 64 / 10e9)
    assert c["regime"] == "bandwidth"
    # not measured (pmu, census, older profiles): the constant, 4
    s = s.assign(llc_overlapped_misses=[None])
    c = cost.site_costs(s, model).iloc[0]
    assert c["t_slow"] == pytest.approx(1e6 * 400e-9 / 4)
    assert c["mlp"] == pytest.approx(4)


def test_atomics_add_to_the_compute_baseline(model):
    # 1000 loads + 1000 stores at 0.5 ns, 100 locked RMWs at atomic_ns (6)
    s = sites(("a", 4096, 1000, 1000, 0, 0, 0)).assign(atomics=100)
    assert cost.baseline_seconds(s, model) == pytest.approx((2000 * 0.5 + 100 * 6.0) * 1e-9)
    # not counted (pmu, census): only the accesses
    s = s.assign(atomics=[None])
    assert cost.baseline_seconds(s, model) == pytest.approx(2000 * 0.5 * 1e-9)
