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
