# SPDX-License-Identifier: MIT
"""tierwise.compiledb: the compile_commands.json entry whose object is in a
binary, from its DWARF producer flags or its CMake target directory."""

import subprocess

from tierwise import compiledb


def entry(d, out, *flags):
    return {"directory": str(d), "file": "k.c", "command": f"gcc -g {' '.join(flags)} -c k.c -o {out}"}


def test_defines_and_producer_agreement():
    assert compiledb.defines(["-DA=1", "-D", "B", "-UC", "-O2"]) == {"-DA=1", "-DB", "-UC"}
    gcc = "GNU C11 12.2.0 -mtune=generic -march=x86-64 -g -O2 -std=gnu11"
    assert compiledb._agrees(["gcc", "-O2", "-DX", "-std=gnu11"], gcc)
    assert not compiledb._agrees(["gcc", "-O0", "-DX"], gcc)
    clang = "clang version 19 /usr/bin/clang -g -O2 -D X -c k.c"
    assert compiledb._agrees(["clang", "-O2", "-DX"], clang)
    assert not compiledb._agrees(["clang", "-O2"], clang)


def test_select_by_the_binarys_producer_then_target_dir(tmp_path):
    (tmp_path / "k.c").write_text("int main(void) { return K; }\n")
    subprocess.run(
        ["gcc", "-g", "-O1", "-DK=0", "k.c", "-o", "prog"], cwd=tmp_path, check=True
    )
    a = entry(tmp_path, "CMakeFiles/prog.dir/k.c.o", "-O1", "-DK=0")
    b = entry(tmp_path, "CMakeFiles/other.dir/k.c.o", "-O3", "-DK=1")
    c = entry(tmp_path, "CMakeFiles/third.dir/k.c.o", "-O1", "-DK=2")
    keep, notes = compiledb.select([a, b, c], [tmp_path / "k.c"], [tmp_path / "prog"])
    assert keep == [a]
    assert "using the one built with -O1 -DK=0" in notes[0]
    assert "DW_AT_producer" in notes[0] and "CMake target directory" in notes[0]
    # Neither tells: all kept, and said so.
    d = entry(tmp_path, "o/d.o", "-O1", "-DK=0")
    e = entry(tmp_path, "o/e.o", "-O1", "-DK=1")
    keep, notes = compiledb.select([d, e], [tmp_path / "k.c"], [tmp_path / "prog"])
    assert keep == [d, e] and "does not tell" in notes[0]


def test_select_by_the_object_named_after_the_binary_in_either_order(tmp_path):
    """A Makefile's objects (pr-push.o for pr-push) or a one-step compile
    and link (-o pr-push) name the binary; the order of the entries does
    not matter."""
    (tmp_path / "k.c").write_text("int main(void) { return K; }\n")
    subprocess.run(["gcc", "-g", "-O2", "-DK=0", "k.c", "-o", "pr-push"], cwd=tmp_path, check=True)
    push = entry(tmp_path, "o/pr-push.o", "-O2", "-DK=0")
    pull = entry(tmp_path, "o/pr-pull.o", "-O2", "-DK=1")
    for order in ([push, pull], [pull, push]):
        keep, notes = compiledb.select(order, [tmp_path / "k.c"], [tmp_path / "pr-push"])
        assert keep == [push]
        assert "using the one built with -O2 -DK=0 (its object is named after the binary)" in notes[0]
    linked = entry(tmp_path, "pr-push", "-O2", "-DK=0")
    keep, _ = compiledb.select([pull, linked], [tmp_path / "k.c"], [tmp_path / "pr-push"])
    assert keep == [linked]
