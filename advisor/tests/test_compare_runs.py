# SPDX-License-Identifier: MIT
"""tierwise.compare_runs: line maps through a rewrite's patch, site keys,
and the per-site comparison of two run reports (the real programs:
test/rewriter/*-e2e.test through `tierwise compare-runs`)."""

import json

from tierwise import cli, compare_runs

PATCH = """--- a/src/k.c
+++ b/src/k.c
@@ -1,4 +1,5 @@
 #include <stdlib.h>
+#include <tierwise.h>
 int main(void) {
-  double *v = malloc(8);
+  double *v = tw_malloc(TW_TIER_PMEM, 8);
   return v == 0;
@@ -10,3 +11,5 @@
 static int f(void) {
-  return 1;
+  int x = 1;
+  return x;
 }
+/* end */
"""


def test_patch_line_map_pairs_replacements_and_shifts_the_rest():
    m = compare_runs.patch_line_map(PATCH)
    assert m("k.c", 1) == 1
    assert m("k.c", 2) is None  # the added include
    assert m("k.c", 3) == 2
    assert m("k.c", 4) == 3  # the rewritten allocation: one for one
    assert m("k.c", 5) == 4
    assert m("k.c", 8) == 7  # between the hunks: shifted by one
    assert m("k.c", 11) == 10
    assert m("k.c", 12) is None and m("k.c", 13) is None  # 1 line became 2
    assert m("k.c", 14) == 12
    assert m("k.c", 15) is None
    assert m("k.c", 20) == 17  # after the last hunk: shifted by three
    assert m("other.c", 7) == 7  # a file the patch does not touch


def test_base_function_names_one_function_however_it_is_spelled():
    assert compare_runs.base_function("void fwlike::Array<double>::Array(unsigned long)") == "Array"
    assert compare_runs.base_function("long* make_array<long>(unsigned long) [clone .isra.0]") == "make_array"
    assert compare_runs.base_function("alloc_edges_tier") == "alloc_edges"
    assert compare_runs.base_function("main") == "main"


class Frames:
    """Stacks with their frames given, in place of llvm-symbolizer (the
    Symbolizer itself is tested in test_symbolize.py)."""

    def __init__(self, table):
        self.table = table

    def resolve(self, frames):
        list(frames)

    def user_frames(self, stack):
        return self.table[stack]


def test_reports_compared_by_location_with_lines_through_the_patch():
    # A: the original under LD_PRELOAD; B: the rebuilt program, whose
    # allocation is a line lower (the include) and goes through tierwise.h.
    a_sym = Frames({"p+0x10": [("main", "/s/k.c", 4)], "p+0x20": [("f", "/s/k.c", 11)]})
    b_sym = Frames(
        {
            "q+0x99": [("tw::operator new", "/i/tierwise.h", 50), ("main", "/s/k.c", 5)],
            "q+0x77": [("f", "/s/k.c", 12)],
        }
    )
    a = {"sites": [{"stack": "p+0x10", "tier": "pmem", "bytes": {"dram": 0, "pmem": 800}}],
         "unmatched": [{"stack": "p+0x20", "tier_bytes": {"dram": 64}}]}
    b = {"sites": [], "unmatched": [{"stack": "q+0x99", "api": True, "tier_bytes": {"dram": 0, "pmem": 800}}]}
    lines = compare_runs.patch_line_map(PATCH)
    rows = compare_runs.compare(
        compare_runs.bytes_by_site(a, a_sym), compare_runs.bytes_by_site(b, b_sym, lines=lines)
    )
    assert [r.location() for r in rows] == ["main k.c:4", "f k.c:11"]
    assert rows[0].placed and rows[0].same and rows[0].a == {"pmem": 800}
    assert not rows[1].placed and rows[1].b == {}
    # The same call in B with other bytes differs.
    b["unmatched"][0]["tier_bytes"] = {"dram": 800}
    rows = compare_runs.compare(
        compare_runs.bytes_by_site(a, a_sym), compare_runs.bytes_by_site(b, b_sym, lines=lines)
    )
    assert rows[0].placed and not rows[0].same and rows[0].b == {"dram": 800}


def test_cli_says_which_program_is_missing(tmp_path, capsys):
    rep = {"format": "tierwise-run-report", "version": 1, "command": str(tmp_path / "gone"),
           "sites": [], "unmatched": []}
    (tmp_path / "a.json").write_text(json.dumps(rep))
    assert cli.main(["compare-runs", str(tmp_path / "a.json"), str(tmp_path / "a.json")]) == 2
    err = capsys.readouterr().err
    assert "tierwise compare-runs: error:" in err and "no program to symbolize its stacks with" in err
    assert "--binary-a" in err
