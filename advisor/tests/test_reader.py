# SPDX-License-Identifier: MIT
"""The profile reader: declared schema, one clear error per broken contract,
and merging of several profiles by site stack."""

import json

import pandas as pd
import pytest

from advisor_profiles import SITE_HEADER, site_row, write_profile
from tierwise import reader


def good_rows():
    return [
        site_row(0, "x+0x10;x+0x20", 4096, 100, 50, 10, 5, 3),
        site_row(1, "x+0x30", 8192, 200, 0, 20, 0, 0),
        "2,[static],[static],,,,7,3,1,,",
    ]


def test_reads_declared_schema(tmp_path):
    p = reader.read_profile(write_profile(tmp_path / "p", good_rows(), [(0, 4096, 1, 5)]))
    assert list(p.sites.columns) == list(reader.SITE_COLUMNS)
    for c in reader.COUNT_COLUMNS:
        assert str(p.sites[c].dtype) == "Int64"
    assert p.sites.at[0, "llc_load_misses"] == 10
    assert pd.isna(p.sites.at[2, "peak_bytes"])  # empty = not measured
    assert list(p.placeable["site"]) == [0, 1]
    assert p.objects["free_time"].tolist() == [5]


def test_missing_column(tmp_path):
    d = write_profile(tmp_path / "p", good_rows())
    text = (d / "sites.csv").read_text().replace(",writebacks", "", 1)
    (d / "sites.csv").write_text(text)
    with pytest.raises(ValueError, match=r"sites.csv: missing column 'writebacks'"):
        reader.read_profile(d)


def test_wrong_dtype_names_column_and_value(tmp_path):
    rows = good_rows()
    rows[1] = rows[1].replace(",200,", ",2.5e3,")
    with pytest.raises(ValueError, match=r"sites.csv: column 'loads' row 3: value '2.5e3'"):
        reader.read_profile(write_profile(tmp_path / "p", rows))


def test_negative_count_rejected(tmp_path):
    rows = good_rows()
    rows[0] = rows[0].replace(",100,", ",-100,")
    with pytest.raises(ValueError, match=r"column 'loads' row 2: value '-100'"):
        reader.read_profile(write_profile(tmp_path / "p", rows))


def test_wrong_version(tmp_path):
    d = write_profile(tmp_path / "p", good_rows(), meta={"version": 7})
    with pytest.raises(ValueError, match=r"meta.json: field 'version' is 7"):
        reader.read_profile(d)


def test_wrong_format(tmp_path):
    d = write_profile(tmp_path / "p", good_rows(), meta={"format": "heaptrack"})
    with pytest.raises(ValueError, match=r"field 'format' is 'heaptrack'"):
        reader.read_profile(d)


def test_incomplete_profile(tmp_path):
    d = write_profile(tmp_path / "p", good_rows(), meta={"complete": False})
    with pytest.raises(ValueError, match=r"'complete' is false"):
        reader.read_profile(d)


def test_empty_sites_file(tmp_path):
    d = write_profile(tmp_path / "p", good_rows())
    (d / "sites.csv").write_text("")
    with pytest.raises(ValueError, match=r"sites.csv: empty file"):
        reader.read_profile(d)


def test_header_only_sites_file(tmp_path):
    d = write_profile(tmp_path / "p", [])
    with pytest.raises(ValueError, match=r"sites.csv: no sites"):
        reader.read_profile(d)


def test_missing_meta_and_dir(tmp_path):
    d = write_profile(tmp_path / "p", good_rows())
    (d / "meta.json").unlink()
    with pytest.raises(ValueError, match=r"meta.json: file missing"):
        reader.read_profile(d)
    with pytest.raises(ValueError, match=r"no such profile directory"):
        reader.read_profile(tmp_path / "nope")


def test_objects_unknown_site(tmp_path):
    d = write_profile(tmp_path / "p", good_rows(), [(9, 4096, 1, None)])
    with pytest.raises(ValueError, match=r"objects.csv: column 'site': value '9'"):
        reader.read_profile(d)


def test_merge_sums_counts_and_takes_max_peak(tmp_path):
    a = write_profile(
        tmp_path / "a",
        [site_row(0, "x+0x10", 4096, 100, 10, 5, 1, 2), site_row(1, "x+0x20", 100, 1, 1, 1, 1, 1)],
        [(0, 4096, 1, 2)],
    )
    b = write_profile(
        tmp_path / "b",
        [
            site_row(0, "x+0x30", 64, 7, 7, 7, 7, 7),
            site_row(1, "x+0x10", 8192, 50, 20, 3, 2, 1, location=""),
        ],
        [(1, 8192, 5, None), (0, 64, 1, None)],
    )
    m = reader.read_profiles([a, b])
    assert m.sites["stack"].tolist() == ["x+0x10", "x+0x20", "x+0x30"]
    s = m.sites.set_index("stack")
    assert s.at["x+0x10", "loads"] == 150
    assert s.at["x+0x10", "llc_store_misses"] == 3
    assert s.at["x+0x10", "peak_bytes"] == 8192  # max, not sum
    assert s.at["x+0x10", "allocs"] == 2
    assert s.at["x+0x10", "location"] == "f0 x.c:1"  # first non-empty
    assert s.at["x+0x30", "loads"] == 7
    # objects keep their own timeline, mapped to the merged site numbers
    o = m.objects
    assert sorted(o[o["profile"] == 1]["site"].tolist()) == [0, 2]
    assert o[o["profile"] == 0]["site"].tolist() == [0]


def test_merge_takes_the_first_non_empty_location(tmp_path):
    """A site without a location in the first profile (not symbolized
    there) gets the next profile's; one with none anywhere keeps ""."""
    a = write_profile(tmp_path / "a", [site_row(0, "x+0x10", 64, location=""),
                                       site_row(1, "x+0x20", 64, location="")])
    b = write_profile(tmp_path / "b", [site_row(0, "x+0x10", 64, location="g y.c:7"),
                                       site_row(1, "x+0x20", 64, location="")])
    c = write_profile(tmp_path / "c", [site_row(0, "x+0x10", 64, location="h z.c:9")])
    s = reader.read_profiles([a, b, c]).sites.set_index("stack")
    assert s.at["x+0x10", "location"] == "g y.c:7"
    assert s.at["x+0x20", "location"] == ""
    assert s["location"].map(type).eq(str).all()


def test_merge_rejects_different_depths(tmp_path):
    a = write_profile(tmp_path / "a", good_rows(), depth=6)
    b = write_profile(tmp_path / "b", good_rows(), depth=4)
    with pytest.raises(ValueError, match="different stack depths"):
        reader.read_profiles([a, b])


def test_merge_rejects_different_programs(tmp_path):
    # issue 36: advise merged two programs' profiles without a word
    a = write_profile(tmp_path / "a", good_rows(), meta={"command": ["/bin/bfs", "-g", "8"]})
    b = write_profile(tmp_path / "b", good_rows(), meta={"command": ["./pagerank-push"]})
    with pytest.raises(ValueError, match=r"different programs: .*a \(bfs\), .*b \(pagerank-push\)"):
        reader.read_profiles([a, b])
    c = write_profile(tmp_path / "c", good_rows(), meta={"command": ["bfs", "-g", "9"]})
    assert len(reader.read_profiles([a, c]).paths) == 2  # one program, two runs


def test_merge_notes_build_id_change(tmp_path):
    a = write_profile(tmp_path / "a", good_rows(), modules=[("x", "aaaa")])
    b = write_profile(tmp_path / "b", good_rows(), modules=[("x", "bbbb")])
    assert any("different build-ids" in n for n in reader.read_profiles([a, b]).notes)


def test_site_without_user_frame_counts_as_unknown(tmp_path):
    rows = good_rows() + ["3,,,2,100,100,9,3,7,1,1"]
    p = reader.read_profile(write_profile(tmp_path / "p", rows))
    assert p.sites.at[3, "stack"] == "[unknown]"
    assert 3 not in p.placeable.index
    assert "without a user frame" in p.notes[0]


def test_optional_stream_misses_column(tmp_path):
    # without the column (pmu, alloc backends): read as not measured
    a = reader.read_profile(write_profile(tmp_path / "a", good_rows()))
    assert a.sites["llc_stream_misses"].isna().all()
    # with it (sim backend): read, and summed when profiles merge
    d = write_profile(tmp_path / "b", [site_row(0, "x+0x10;x+0x20", 4096, 100, 50, 10, 5, 3)])
    text = (d / "sites.csv").read_text().splitlines()
    (d / "sites.csv").write_text(f"{text[0]},llc_stream_misses\n{text[1]},12\n")
    b = reader.read_profile(d)
    assert b.sites.at[0, "llc_stream_misses"] == 12
    m = reader.read_profiles([d, d]).sites.set_index("stack")
    assert m.at["x+0x10;x+0x20", "llc_stream_misses"] == 24
    # merged with a profile that counted the site's misses but not which
    # were sequential (pmu): the share is unknown, not 12 of all the misses
    m = reader.read_profiles([tmp_path / "a", d]).sites.set_index("stack")
    assert pd.isna(m.at["x+0x10;x+0x20", "llc_stream_misses"])
    assert pd.isna(m.at["x+0x30", "llc_stream_misses"])
    # merged with a census (no access counts at all): the sim profile's
    c = write_profile(tmp_path / "c", ["0,x+0x10;x+0x20,f0 x.c:1,1,4096,4096,,,,,"])
    m = reader.read_profiles([c, d]).sites.set_index("stack")
    assert m.at["x+0x10;x+0x20", "llc_stream_misses"] == 12


def test_optional_interval_columns(tmp_path):
    # the interval model's counts: read, summed on merge, unknown where a
    # profile counted the site's misses without them (pmu)
    a = reader.read_profile(write_profile(tmp_path / "a", good_rows()))
    assert a.sites["llc_overlapped_misses"].isna().all()
    d = write_profile(tmp_path / "b", [site_row(0, "x+0x10;x+0x20", 4096, 100, 50, 10, 5, 3)])
    text = (d / "sites.csv").read_text().splitlines()
    (d / "sites.csv").write_text(
        f"{text[0]},llc_stream_misses,llc_overlapped_misses,llc_dependent_misses,"
        f"llc_inflight_misses\n{text[1]},2,9,4,30\n"
    )
    b = reader.read_profile(d).sites
    assert (b.at[0, "llc_overlapped_misses"], b.at[0, "llc_dependent_misses"]) == (9, 4)
    m = reader.read_profiles([d, d]).sites.set_index("stack")
    assert m.at["x+0x10;x+0x20", "llc_inflight_misses"] == 60
    m = reader.read_profiles([tmp_path / "a", d]).sites.set_index("stack")
    assert pd.isna(m.at["x+0x10;x+0x20", "llc_overlapped_misses"])


def test_fold_handouts_counts_a_pool_block_by_its_hand_outs(tmp_path):
    """A pool block (site 0, only its free list's accesses) handed to a hot
    and then a cold array (sites 1, 2: sites.csv pool_stack names the
    block's stack), and a plain array (site 3): what `tierwise run` can
    place is the block, with its hand-outs' counts, whole; the advice puts
    it, not the hand-outs, in DRAM (issue 22 item 2)."""
    mib = 1 << 20
    rows = [
        site_row(0, "p+0x10;p+0x20", 2 * mib, 2, 4, 1, 0, 0) + ",",
        site_row(1, "p+0x30", 2 * mib, 2_000_000, 131_072, 262_144, 16_384, 16_384) + ",p+0x10;p+0x20",
        site_row(2, "p+0x40", 2 * mib, 0, 131_072, 0, 16_384, 16_384) + ",p+0x10;p+0x20",
        site_row(3, "p+0x50", 2 * mib, 1_000_000, 262_144, 131_072, 32_768, 32_768) + ",",
    ]
    objects = [(0, 2 * mib, 0, 100), (1, 2 * mib, 10, 50), (2, 2 * mib, 60, 90), (3, 2 * mib, 5, 99)]
    d = write_profile(tmp_path / "pool", rows, objects)
    text = (d / "sites.csv").read_text().replace(SITE_HEADER, SITE_HEADER + ",pool_stack", 1)
    (d / "sites.csv").write_text(text)
    prof = reader.read_profile(d)
    assert prof.sites.at[1, "pool_stack"] == "p+0x10;p+0x20"
    folded, pairs = reader.fold_handouts(prof)
    assert [loc for _, loc in pairs] == ["f0 x.c:1", "f0 x.c:1"]
    assert list(folded.sites["stack"]) == ["p+0x10;p+0x20", "p+0x50"]
    assert list(folded.sites["site"]) == [0, 1]
    block = folded.sites.loc[0]
    assert (block["loads"], block["stores"], block["llc_load_misses"]) == (2_000_002, 262_148, 262_145)
    assert folded.whole == {"p+0x10;p+0x20"}
    assert sorted(folded.objects["site"]) == [0, 1]  # the hand-outs' objects are gone
    assert "2 site(s) of pool hand-outs" in folded.notes[-1]
    # unchanged without hand-outs
    plain = reader.read_profile(write_profile(tmp_path / "plain", good_rows()))
    assert reader.fold_handouts(plain)[0] is plain

    from tierwise import pipeline

    adv = pipeline.advise([d], f"{2 * mib + 4096}B")
    tiers = {s["stack"]: s["tier"] for s in adv.placement["sites"]}
    assert tiers == {"p+0x10;p+0x20": "dram", "p+0x50": "pmem"}
    assert all("dram_bytes" not in s for s in adv.placement["sites"] if s["stack"] == "p+0x10;p+0x20")


def test_missing_optional_files_are_named(tmp_path):
    # issue 36: a profile without objects.csv or modules.csv was read without comment
    d = write_profile(tmp_path / "p", good_rows())
    (d / "modules.csv").unlink()
    notes = reader.read_profiles([d]).notes
    assert [n for n in notes if "no objects.csv" in n] == [
        f"{d}: no objects.csv: no allocation timeline, so sites are packed by their peak "
        "bytes as if all were live at once"
    ]
    assert sum("no modules.csv" in n for n in notes) == 1


def test_processes_of_one_job_and_mixed_programs_merge(tmp_path):
    # a job's children (PROF/children/<command>.<pid>) are one placement's
    kids = tmp_path / "job" / "children"
    a = write_profile(kids / "bfs.1", good_rows(), meta={"command": ["bfs"]})
    b = write_profile(kids / "sssp.2", good_rows(), meta={"command": ["sssp"]})
    assert len(reader.read_profiles([a, b]).paths) == 2
    c = write_profile(tmp_path / "other", good_rows(), meta={"command": ["pr"]})
    with pytest.raises(ValueError, match="pass --mixed-programs"):
        reader.read_profiles([a, c])
    assert len(reader.read_profiles([a, c], mixed_programs=True).paths) == 2
