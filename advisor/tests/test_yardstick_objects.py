# SPDX-License-Identifier: MIT
"""The yardstick's object-to-site mapping (test/bench/numa_tiering.py
object_sites): a program's named objects matched to the profile's objects
of their size that live at the kernel, not to same-size temporaries freed
before it, and objects the program says it freed left out."""

import importlib.util
import sys
from pathlib import Path

import pandas as pd

BENCH = Path(__file__).resolve().parents[2] / "test" / "bench" / "numa_tiering.py"


def load():
    spec = importlib.util.spec_from_file_location("numa_tiering", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("numa_tiering", mod)
    spec.loader.exec_module(mod)
    return mod


def write(prof, objects, lines):
    prof.mkdir()
    pd.DataFrame(objects, columns=["site", "size", "alloc_time", "free_time"]).to_csv(
        prof / "objects.csv", index=False)
    (prof / "objects.txt").write_text("".join(line + "\n" for line in lines))


def test_temporaries_of_a_named_size_are_not_taken(tmp_path):
    # igraph_create: from, to, a temporary, oi, a temporary, ii (8 MiB each);
    # the generator's permutation (1 MiB) freed before the kernel, then a
    # kernel vector of its size (site 9)
    M, K = 8 << 20, 1 << 20
    write(tmp_path / "p", [
        (2, K, 1, 50),
        (35, M, 100, 900), (36, M, 101, 901), (40, M, 200, 300), (41, M, 201, 902),
        (43, M, 300, 400), (44, M, 301, 903), (45, 4096, 500, None), (9, K, 600, 700),
    ], ["object permutation 0x1 1048576", "freed permutation",
        "object ig_from 0x2 8388608", "object ig_to 0x3 8388608",
        "object ig_oi 0x4 8388608", "object ig_ii 0x5 8388608", "object ig_dist 0x6 4096"])
    sites = pd.DataFrame({"site": [2, 9, 35, 36, 40, 41, 43, 44, 45]})
    names = ["permutation", "ig_from", "ig_to", "ig_oi", "ig_ii", "ig_dist"]
    got = load().object_sites(tmp_path / "p", sites, names)
    site = {n: int(sites.loc[i, "site"]) for n, i in got.items()}
    assert site == {"ig_from": 35, "ig_to": 36, "ig_oi": 41, "ig_ii": 44, "ig_dist": 45}


def test_allocation_order_where_no_instant_fits(tmp_path):
    # two objects of one size that never live together: the k-th of the
    # size in allocation order, as before
    write(tmp_path / "p", [(1, 4096, 10, 20), (2, 4096, 30, 40)],
          ["object a 0x1 4096", "object b 0x2 4096"])
    sites = pd.DataFrame({"site": [1, 2]})
    got = load().object_sites(tmp_path / "p", sites, ["a", "b"])
    assert {n: int(sites.loc[i, "site"]) for n, i in got.items()} == {"a": 1, "b": 2}
