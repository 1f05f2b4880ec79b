# SPDX-License-Identifier: MIT
"""The machine's NUMA nodes read from sysfs (tierwise/machine.py) and what the
tier models make of them (`auto`, the cxl / numa-remote presets resolved to
this machine, tiers it cannot serve), on fake sysfs trees in tmp_path. The
real kernel checks are in test/numa (make check-numa)."""

import json
from pathlib import Path

import pytest

from tierwise import machine, tiers


def fake_sysfs(root: Path, nodes, hmat=None):
    """nodes: [(cpulist, MiB, [distance row])]; hmat: {node: {access: {field: value}}}."""
    base = root / "devices/system/node"
    for i, (cpus, mib, dist) in enumerate(nodes):
        d = base / f"node{i}"
        d.mkdir(parents=True)
        (d / "cpulist").write_text(cpus + "\n")
        (d / "meminfo").write_text(
            f"Node {i} MemTotal:       {mib * 1024} kB\nNode {i} MemFree:        1000 kB\n"
        )
        (d / "distance").write_text(" ".join(map(str, dist)) + "\n")
        for acc, vals in (hmat or {}).get(i, {}).items():
            (d / acc / "initiators").mkdir(parents=True)
            for f, v in vals.items():
                (d / acc / "initiators" / f).write_text(f"{v}\n")
    (base / "possible").write_text(f"0-{len(nodes) - 1}\n")  # not a node directory
    return root


TWO = [("0-1", 1024, [10, 20]), ("", 1005, [20, 10])]
HMAT = {
    0: {"access1": {"read_latency": 110, "write_latency": 115, "read_bandwidth": 20480, "write_bandwidth": 16000}},
    1: {"access1": {"read_latency": 270, "write_latency": 300, "read_bandwidth": 8192, "write_bandwidth": 4096}},
}


def test_nodes_memory_only(tmp_path):
    ns = machine.nodes(fake_sysfs(tmp_path, TWO))
    assert [n.node for n in ns] == [0, 1]
    assert not ns[0].memory_only and ns[1].memory_only
    assert ns[1].memory_bytes == 1005 << 20
    assert ns[0].distance == {0: 10, 1: 20}
    assert machine.local_node(ns).node == 0
    assert machine.slow_node(ns, "memory-only").node == 1
    assert machine.tier_names(ns[1], ns) == ["kmem", "numa:1", "cxl preset", "numa-remote preset"]
    assert machine.tier_names(ns[0], ns) == ["dram"]


def test_presets_resolve_to_this_machine(tmp_path):
    # node 1: the other socket (CPUs, distance 21); node 2: a CXL expander
    # (memory only, distance 30). cxl means node 2, numa-remote node 1.
    root = fake_sysfs(
        tmp_path,
        [("0-3", 4096, [10, 21, 30]), ("4-7", 4096, [21, 10, 30]), ("", 8192, [30, 30, 10])],
    )
    cxl = tiers.load("cxl", root)
    assert cxl.slow.name == "numa:2" and cxl.slow.alloc == "numa:2"
    assert any("slow tier numa:2 = the nearest memory-only NUMA node" in n for n in cxl.notes)
    remote = tiers.load("numa-remote", root)
    assert remote.slow.name == "numa:1"
    assert any("nearest other NUMA node" in n and "cpus 4-7" in n for n in remote.notes)
    # the numbers stay the preset's
    assert cxl.slow.read_latency_ns == tiers.load("cxl", fake_sysfs(tmp_path / "b", TWO)).slow.read_latency_ns
    assert not any(n.startswith("warning") for n in cxl.notes + remote.notes)
    ns = machine.nodes(root)
    assert machine.tier_names(ns[2], ns) == ["kmem", "numa:2", "cxl preset"]
    assert machine.tier_names(ns[1], ns) == ["numa:1", "numa-remote preset"]


def test_unservable_tier_is_said(tmp_path):
    one = fake_sysfs(tmp_path, [("0-1", 2048, [10])])
    cxl = tiers.load("cxl", one)
    assert cxl.slow.name == "numa:1"
    assert any("no memory-only NUMA node" in n for n in cxl.notes)
    assert any(n.startswith("warning: tier numa:1 cannot be served") for n in cxl.notes)
    kmem = tiers.load("optane-kmem", one)
    assert any(n.startswith("warning: tier kmem cannot be served") for n in kmem.notes)
    assert tiers.load("optane-appdirect", one).notes == ()  # pmem: always served
    assert machine.servable("numa:3", machine.nodes(one))[0] is False


def test_auto_without_hmat_names_preset(tmp_path):
    m = tiers.load("auto", fake_sysfs(tmp_path, TWO))
    cxl = tiers.load("cxl", tmp_path)
    assert m.name == "auto"
    assert (m.fast.name, m.slow.name, m.slow.alloc) == ("dram", "numa:1", "numa:1")
    # distance ratio 2.0: cxl (latency ratio 250/110 = 2.27) is nearer than
    # numa-remote (150/95 = 1.58) and optane-kmem (403.7/137.14 = 2.94)
    assert m.slow.read_latency_ns == cxl.slow.read_latency_ns == 250
    assert m.fast.read_bandwidth_gbs == cxl.fast.read_bandwidth_gbs
    assert m.slow.capacity == 1005 << 20 and m.fast.capacity == 1024 << 20
    assert m.mlp == cxl.mlp
    assert any("no HMAT published for node 1" in n and "nearest preset cxl" in n for n in m.notes)


def test_auto_distance_picks_preset(tmp_path):
    m = tiers.load("auto", fake_sysfs(tmp_path, [("0-1", 1024, [10, 16]), ("2-3", 1024, [16, 10])]))
    assert m.slow.read_latency_ns == 150  # ratio 1.6: numa-remote
    assert any("nearest preset numa-remote" in n for n in m.notes)


def test_auto_uses_hmat(tmp_path):
    m = tiers.load("auto", fake_sysfs(tmp_path, TWO, HMAT))
    assert (m.fast.read_latency_ns, m.fast.write_latency_ns) == (110, 115)
    assert (m.fast.read_bandwidth_gbs, m.fast.write_bandwidth_gbs) == (20.48, 16.0)
    assert (m.slow.read_latency_ns, m.slow.write_latency_ns) == (270, 300)
    assert (m.slow.read_bandwidth_gbs, m.slow.write_bandwidth_gbs) == (8.192, 4.096)
    text = "\n".join(m.notes)
    assert "numa:1 from the HMAT (devices/system/node/node1/access1/initiators): read latency 270 ns" in text
    assert "no HMAT" not in text


def test_auto_partial_hmat_and_access0(tmp_path):
    hmat = {0: {"access0": {"read_latency": 100}}, 1: {"access0": {"read_latency": 300, "read_bandwidth": 5000}}}
    m = tiers.load("auto", fake_sysfs(tmp_path, TWO, hmat))
    cxl = tiers.load("cxl", tmp_path)
    assert m.fast.read_latency_ns == 100 and m.fast.write_latency_ns == cxl.fast.write_latency_ns
    assert m.slow.read_bandwidth_gbs == 5.0 and m.slow.write_bandwidth_gbs == cxl.slow.write_bandwidth_gbs
    text = "\n".join(m.notes)
    assert "access0/initiators" in text
    assert "the HMAT lacks write latency, read bandwidth, write bandwidth for node 0" in text


def test_auto_needs_two_nodes(tmp_path):
    with pytest.raises(ValueError, match=r"1 NUMA node\(s\), no second node"):
        tiers.load("auto", fake_sysfs(tmp_path, [("0-1", 2048, [10])]))
    with pytest.raises(ValueError, match="0 NUMA node"):
        tiers.load("auto", tmp_path / "none")


def test_resolve_slow_grammar(tmp_path):
    base = (tiers.PRESET_DIR / "cxl.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(base.replace('resolve_slow = "memory-only"', 'resolve_slow = "far"'))
    with pytest.raises(ValueError, match=r"resolve_slow = 'far': expected"):
        tiers.load(str(bad))


def test_doctor_lists_memory_only_nodes(tmp_path, monkeypatch, capsys):
    from tierwise.commands import doctor

    monkeypatch.setenv("TIERWISE_SYSFS", str(fake_sysfs(tmp_path, TWO, HMAT)))
    nodes = doctor.check_numa()
    n1 = nodes[1]
    assert n1["memory_only"] and n1["slow_tier"] and n1["distance"] == 20
    assert n1["tier_names"] == ["kmem", "numa:1", "cxl preset", "numa-remote preset"]
    assert n1["hmat"]["access1"]["read_latency"] == 270
    r = {"pmu": {"events_open": True}, "valgrind": {}, "pmem": {"fsdax_mounts": []}, "numa": nodes}
    assert doctor.decide(r)["slow_tier"].startswith("kmem: memory-only NUMA node 1 (also numa:1")
    json.dumps(nodes)  # doctor --json prints it


def test_hbw_needs_memkind(tmp_path):
    ns = machine.nodes(fake_sysfs(tmp_path, TWO))
    assert machine.servable("hbw", ns, {"hbw": "unavailable"}) == (False, "memkind MEMKIND_HBW unavailable")
    assert machine.servable("hbw", ns, {"hbw": "available"})[0] is True
    # this machine's memkind decides when not given; a warning exactly when unavailable
    state = machine.memkind_kinds()["kinds"].get("hbw")
    hbm = tiers.load("hbm", tmp_path)
    warned = any(n.startswith("warning: tier hbw cannot be served") for n in hbm.notes)
    assert warned == (state != "available")
