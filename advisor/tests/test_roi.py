# SPDX-License-Identifier: MIT
"""tierwise.roi: which symbols a --roi name means (spellings of C and C++
names, template instances, clones), and finding a program's libraries."""

import shutil
import sys

import pytest

from tierwise.roi import modules_of, name_matches, program_of

INST = "_Z7ComputeIN6fwlike15SymmetricVertexEEvRNS0_5GraphIT_EE7Options"
DEM = "void Compute<fwlike::SymmetricVertex>(fwlike::Graph<fwlike::SymmetricVertex>&, Options)"


@pytest.mark.parametrize(
    "spec",
    [
        "Compute",
        "Compute<SymmetricVertex>",
        "Compute<fwlike::SymmetricVertex>",
        "void Compute<SymmetricVertex>",
        "Compute<SymmetricVertex>(Graph<SymmetricVertex>&, Options)",
        DEM,
        INST,
    ],
)
def test_spellings_of_a_template_instance_match(spec):
    assert name_matches(spec, INST, DEM)
    # GCC's clone is the same function
    assert name_matches(spec, INST + ".isra.0", DEM + " [clone .isra.0]")


@pytest.mark.parametrize(
    "spec", ["Compute<AsymmetricVertex>", "Comp", "ompute", "Compute(int)", "other::Compute", "_Z7Compute"]
)
def test_other_names_do_not(spec):
    assert not name_matches(spec, INST, DEM)


def test_qualified_members_and_c_names():
    ctor = "fwlike::Array<unsigned long>::Array(unsigned long)"
    for spec in ("fwlike::Array<unsigned long>::Array", "Array<unsigned long>::Array", "Array"):
        assert name_matches(spec, "_ZN6fwlike5ArrayImEC2Em", ctor)
    assert not name_matches("Array<int>::Array", "_ZN6fwlike5ArrayImEC2Em", ctor)
    assert name_matches("roi_kernel", "roi_kernel", "roi_kernel")
    assert not name_matches("roi_kernel2", "roi_kernel", "roi_kernel")


def test_program_behind_launchers_and_its_libraries():
    sh = shutil.which("sh")
    prog, env = program_of(["env", "FOO=1", "nice", "-n", "5", "sh", "-c", "true"])
    assert prog == sh and env["FOO"] == "1"
    mods = [m.rsplit("/", 1)[-1] for m in modules_of(sys.executable, env)]
    assert mods[0].startswith("python") and "libc.so.6" in mods


INLINED = r"""
int step(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i] *= 3; return s; }
__attribute__((flatten)) int run(int *a, int n) { return step(a, n) + step(a, n / 2); }
__attribute__((noinline)) int other(int *a, int n) { return a[n - 1]; }
int main(int argc, char **argv) { int a[8] = {argc}; return run(a, 8) + other(a, 8); }
"""


def test_inlined_copies_and_references(tmp_path):
    """DWARF inlined-subroutine entries name the function that holds each
    copy and the call's line; an out-of-line copy nothing calls is told
    from one that is called (issue 22 item 3)."""
    from tierwise import roi

    if not shutil.which("cc") or not shutil.which("readelf") or not shutil.which("objdump"):
        pytest.skip("no C compiler or binutils")
    src = tmp_path / "p.c"
    src.write_text(INLINED)
    prog = tmp_path / "p"
    import subprocess

    subprocess.run(["cc", "-O2", "-g", "-o", str(prog), str(src)], check=True)
    copies = roi.inlined_copies("step", str(prog))
    assert len(copies) == 2 and {c.holder for c in copies} == {"run"}
    assert sorted(c.call for c in copies) == ["p.c:3", "p.c:3"]
    assert copies[0].where() == "run at p.c:3" and copies[0].region() == "run"
    assert roi.inlined_copies("other", str(prog)) == []
    assert not roi.is_referenced(str(prog), "step")  # external, but never called
    assert roi.is_referenced(str(prog), "other")
    msg = roi.inlined_message("step", copies, has_copy=True)
    assert "every call is inlined (2 copies: into run at p.c:3)" in msg
    assert msg.endswith("--roi 'run'")
    assert roi.symbol_table(str(prog))["step"][1] > 0  # address, size


@pytest.mark.parametrize(
    "spec,want",
    [
        ("pool_alloc:2", ("pool_alloc", 2)),
        ("ns::pool_allocator<int>::allocate:2", ("ns::pool_allocator<int>::allocate", 2)),
        ("ns::pool_allocator::allocate", ("ns::pool_allocator::allocate", None)),
        ("a<std::pair<int, int> >::get:3", ("a<std::pair<int, int> >::get", 3)),
        ("_ZN2ns1fEm:1", ("_ZN2ns1fEm", 1)),
    ],
)
def test_pool_fn_names(spec, want):
    """--alloc-fn/--free-fn take C++ names as written (issue 22 item 2)."""
    from tierwise.backends.sim import split_pool_fn

    assert split_pool_fn(spec) == want


@pytest.mark.parametrize("spec", ["pool_alloc:9", "f:0", "ns::", 'a"b', ""])
def test_bad_pool_fn_names(spec):
    from tierwise.backends.sim import split_pool_fn

    with pytest.raises(ValueError, match="expected a function name"):
        split_pool_fn(spec)


def test_misspelt_names_get_close_suggestions(tmp_path):
    # issue 36: BFS_runer and pagerankpullgs got no suggestion (substrings
    # only), a C++ kernel's misspelling got libc's names
    import subprocess

    from tierwise import roi

    if not shutil.which("c++"):
        pytest.skip("no C++ compiler")
    src = tmp_path / "k.cc"
    src.write_text(
        "namespace gap { struct G {}; int BFS_runner(G &g) { return 1; }\n"
        "int PageRankPullGS(G &g, int n) { return n + 1; } }\n"
        "int main() { gap::G g; return gap::BFS_runner(g) + gap::PageRankPullGS(g, 2); }\n"
    )
    prog = tmp_path / "k"
    subprocess.run(["c++", "-O0", "-o", str(prog), str(src)], check=True)
    assert roi.resolve("BFS_runer", [str(prog)]).near == ["BFS_runner"]
    assert roi.resolve("pagerankpullgs", [str(prog)]).near == ["PageRankPullGS"]
    assert roi.resolve("trunk", [str(prog)]).near == []  # not libc's trunc
