# SPDX-License-Identifier: MIT
"""tierwise.formats.profile and tierwise.symbolize: finishing a raw backend output
into a profile (locations from llvm-symbolizer, build-ids, meta.json)."""

import csv
import json
import shutil
import subprocess
from datetime import datetime, timezone

import pytest

from tierwise.formats import profile as profile_format
from tierwise.symbolize import Symbolizer, build_id, parse_frame

SRC = r"""
#include <stdlib.h>
__attribute__((noinline)) void *helper(size_t n) { return malloc(n); }
int main(void) { return helper(10) == 0; }
"""


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    if not shutil.which("cc"):
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("bin")
    (d / "prog.c").write_text(SRC)
    subprocess.run(
        ["cc", "-g", "-O1", "-o", str(d / "prog"), str(d / "prog.c")], check=True
    )
    return d / "prog"


def symbol_offset(binary, name):
    out = subprocess.run(["nm", str(binary)], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if parts[-1] == name:
            return int(parts[0], 16)
    raise AssertionError(name)


def test_parse_frame():
    assert parse_frame("bfs+0x1a2b") == ("bfs", 0x1A2B)
    assert parse_frame("libc.so.6+0x0") == ("libc.so.6", 0)
    assert parse_frame("[anon]+0x7f00") is None
    assert parse_frame("garbage") is None


def test_symbolizer_resolves_function_and_line(binary):
    off = symbol_offset(binary, "helper")
    sym = Symbolizer({"prog": str(binary)})
    chain = sym.inline_chain(f"prog+0x{off + 4:x}")
    assert chain and chain[0][0] == "helper" and chain[0][1].endswith("prog.c")
    assert chain[0][2] == 3
    loc = sym.location(f"prog+0x{off + 4:x};[anon]+0x10")
    assert loc.startswith("helper ") and loc.endswith("prog.c:3")
    assert sym.location("unknownmod+0x10") == ""


def test_finish_profile_fills_location_build_id_meta(tmp_path, binary):
    off = symbol_offset(binary, "helper")
    with open(tmp_path / "sites.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(profile_format.REQUIRED_SITE_COLUMNS)
        w.writerow([0, f"prog+0x{off + 4:x}", "", 3, 300, 200, "", "", "", "", ""])
    (tmp_path / "modules.csv").write_text(f"module,path,build_id\nprog,{binary},\n")
    (tmp_path / "objects.csv").write_text("site,size,alloc_time,free_time\n0,100,5,9\n")
    (tmp_path / "backend.json").write_text(
        json.dumps({"depth": 4, "objects_min_bytes": 64, "clock": "ns"})
    )
    t = datetime.now(timezone.utc)
    meta = profile_format.finish_profile(
        tmp_path, ["prog"], "alloc", {"exit_status": 0, "pid": 42}, t, t
    )
    assert meta["n_sites"] == 1 and meta["complete"] is True
    rows = list(csv.DictReader(open(tmp_path / "sites.csv")))
    assert rows[0]["location"].startswith("helper ") and rows[0]["location"].endswith(
        "prog.c:3"
    )
    assert rows[0]["peak_bytes"] == "200"
    on_disk = json.loads((tmp_path / "meta.json").read_text())
    for key in [
        "format",
        "version",
        "tool_version",
        "command",
        "backend",
        "backend_params",
        "estimated",
        "depth",
        "clock",
        "objects_min_bytes",
        "start_time",
        "end_time",
        "exit_status",
        "complete",
        "pid",
        "host",
        "modules",
    ]:
        assert key in on_disk, key
    assert on_disk["depth"] == 4 and on_disk["objects_min_bytes"] == 64
    bid = on_disk["modules"][0]["build_id"]
    assert len(bid) == 40 and int(bid, 16) >= 0
    assert bid == build_id(binary)


def test_killed_run_is_incomplete(tmp_path):
    t = datetime.now(timezone.utc)
    meta = profile_format.finish_profile(
        tmp_path, ["x"], "alloc", {"exit_status": None}, t, t
    )
    assert meta["complete"] is False and meta["exit_status"] is None
    assert json.loads((tmp_path / "meta.json").read_text())["complete"] is False


def test_wrong_columns_rejected(tmp_path):
    (tmp_path / "sites.csv").write_text("site,stack\n0,a+0x1\n")
    t = datetime.now(timezone.utc)
    with pytest.raises(ValueError, match="columns"):
        profile_format.finish_profile(tmp_path, ["x"], "alloc", {"exit_status": 0}, t, t)


def test_write_csv_does_not_follow_a_planted_symlink(tmp_path):
    """The temporary file is created O_EXCL|O_NOFOLLOW: a symlink planted at
    its name is removed, never written through."""
    import os

    from tierwise.formats import profile as profile_format

    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    target = tmp_path / "sites.csv"
    (tmp_path / f"sites.csv.tmp.{os.getpid()}").symlink_to(victim)
    profile_format.write_rows(target, ["a", "b"], [{"a": 1, "b": 2}])
    assert victim.read_text() == "keep me\n"
    assert target.read_text() == "a,b\n1,2\n"
    assert not target.is_symlink()


TWO_CALLERS = r"""
#include <stdlib.h>
__attribute__((noinline)) void *wrap(size_t n) { return malloc(n); }
int main(void) {
  void *a = wrap(10);
  void *b = wrap(20);
  void *c = malloc(30);
  return a == b || c == 0;
}
"""


def test_locations_name_the_caller_of_a_shared_wrapper(tmp_path):
    """Two sites through one wrapper get their caller lines (5 and 6) with
    `(via prog.c:3)`; a site whose innermost frame is its own keeps it."""
    if not shutil.which("cc") or not shutil.which("objdump"):
        pytest.skip("no C compiler or objdump")
    (tmp_path / "prog.c").write_text(TWO_CALLERS)
    prog = tmp_path / "prog"
    subprocess.run(["cc", "-g", "-O1", "-o", str(prog), str(tmp_path / "prog.c")], check=True)
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(prog)],
                         capture_output=True, text=True).stdout
    # return addresses of main's calls: the instruction after each call
    main = dis[dis.index("<main>:"):].split("\n\n")[0].splitlines()[1:]
    addrs = [int(l.split(":")[0], 16) for l in main if ":" in l]
    rets = {}
    for i, l in enumerate(main):
        for callee in ("wrap", "malloc"):
            if "call" in l and f"<{callee}" in l:
                rets.setdefault(callee, []).append(addrs[i + 1])
    w = symbol_offset(prog, "wrap")
    sym = Symbolizer({"prog": str(prog)})
    inner = f"prog+0x{w + 4:x}"
    stacks = [f"{inner};prog+0x{r - 1:x}" for r in rets["wrap"]] + [f"prog+0x{rets['malloc'][0] - 1:x}"]
    locs = sym.locations(stacks)
    assert locs[0].startswith("main ") and locs[0].endswith("prog.c:5 (via prog.c:3)")
    assert locs[1].endswith("prog.c:6 (via prog.c:3)")
    assert locs[2].startswith("main ") and locs[2].endswith("prog.c:7")
    # one site on its own: the wrapper's line, as before
    assert sym.location(stacks[0]).endswith("prog.c:3")


def test_short_and_fitted_locations():
    from tierwise.symbolize import fit_location, innermost_line, short_location, split_location

    loc = ("void Compute<fwlike::AsymmetricVertex>(fwlike::Graph<fwlike::AsymmetricVertex>&, "
           "Options) [clone .isra.0] /src/x/../pagerank.cc:45 (via array.h:18)")
    assert short_location(loc) == "Compute<fwlike::AsymmetricVertex> pagerank.cc:45 (via array.h:18)"
    # cut inside the template arguments, never in the function's own name
    # (issue 22 item 4: names were cut from their end, or dropped)
    assert fit_location(loc, 50) == "Compute<fwlike...> pagerank.cc:45 (via array.h:18)"  # 50
    assert fit_location(loc, 40) == "Compute<...> pagerank.cc:45 (via array.h:18)"
    # too narrow for any of the function: it stays, named, and so does the
    # part that tells sites apart
    assert fit_location(loc, 10) == "Compute<...> pagerank.cc:45 (via array.h:18)"
    long = "fw::detail::hash_table<fw::buffer<float>, fw::vec<double> >::rehash(unsigned long) /a/h.h:38"
    assert fit_location(long, 50) == "fw::detail::hash_table<fw::buff...>::rehash h.h:38"
    assert fit_location(long, 30) == "...::rehash h.h:38"
    # the outer frame that tells alike sites apart stays whole
    outer = "kernel(unsigned long) /a/k.cc:38 (via c.h:15) <- k.cc:51 #2"
    assert short_location(outer) == "kernel k.cc:38 (via c.h:15) <- k.cc:51 #2"
    assert innermost_line(outer) == "c.h:15"
    assert split_location("main /a/k.cc:49 (via c.h:15) <- k.cc:24:35") == (
        "main", "/a/k.cc:49", " (via c.h:15) <- k.cc:24:35")
    assert short_location("fwlike::Array<unsigned long>::Array(unsigned long) /a/array.h:18") == (
        "fwlike::Array<unsigned long>::Array array.h:18")
    for other in ("bfs+0x1a", "[static]", "GB_malloc_memory libgraphblas.so.7.4.0"):
        assert short_location(other) == fit_location(other, 4) == other
