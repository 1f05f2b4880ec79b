# SPDX-License-Identifier: MIT
"""Where the native parts are: the build tree, or an install prefix
(cmake/TierwiseInstall.cmake's layout, paths.INSTALLED)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tierwise import paths
from tierwise.commands import config


def test_build_tree(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TIERWISE_PREFIX", raising=False)
    monkeypatch.setenv("TIERWISE_BUILD_DIR", str(tmp_path))
    assert paths.prefix_path() is None
    assert paths.native_path("lib/valgrind/tierwise-amd64-linux") == str(
        tmp_path / "lib/valgrind/tierwise-amd64-linux"
    )
    assert paths.include_path() == os.path.join(paths.source_path(), "runtime", "include")
    with pytest.raises(paths.MissingBuildError, match="not built: run `make build`"):
        paths.artifact("lib/libtierwise.so")


def test_installed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TIERWISE_PREFIX", str(tmp_path))
    monkeypatch.setenv("TIERWISE_BUILD_DIR", "/nonexistent")  # the prefix wins
    assert paths.prefix_path() == str(tmp_path)
    moved = {
        "lib/valgrind/tierwise-amd64-linux": "lib/tierwise/valgrind/tierwise-amd64-linux",
        "lib/valgrind": "lib/tierwise/valgrind",
        "bin/tierwise-pmu-probe": "lib/tierwise/bin/tierwise-pmu-probe",
        "examples/bfs": "lib/tierwise/examples/bfs",
        "lib/libtierwise-runtime.so": "lib/libtierwise-runtime.so",
        "bin/tierwise-rewrite": "bin/tierwise-rewrite",
    }
    for rel, want in moved.items():
        assert paths.native_path(rel) == str(tmp_path / want), rel
    with pytest.raises(paths.MissingBuildError, match="not installed: reinstall"):
        paths.artifact("lib/libtierwise.so")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib/libtierwise.so").touch()
    lib = tmp_path / "lib"
    want = [f"-I{tmp_path / 'include'}", f"-L{lib}", f"-Wl,-rpath,{lib}"]
    want += ["-Wl,--push-state,--no-as-needed", "-ltierwise", "-Wl,--pop-state"]
    assert config.flags() == want


def test_installed_by_place(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A package at PREFIX/lib/tierwise/python/tierwise knows its prefix
    without the launcher's TIERWISE_PREFIX (python -m tierwise)."""
    monkeypatch.delenv("TIERWISE_PREFIX", raising=False)
    pkg = tmp_path / "lib/tierwise/python/tierwise"
    pkg.mkdir(parents=True)
    monkeypatch.setattr(paths, "__file__", str(pkg / "paths.py"))
    assert paths.prefix_path() == str(tmp_path)
