# SPDX-License-Identifier: MIT
"""Where the native parts of tierwise live (the CMake build directory).
Imports os only: `tierwise run` and `config` use it (cli.FAST_VERBS); the
functions that return a Path import pathlib when called."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Mapping


class MissingBuildError(RuntimeError):
    pass


def build_path() -> str:
    """The build directory as a string: $TIERWISE_BUILD_DIR (set by
    build/bin/tierwise), else ../build next to the advisor package."""
    env = os.environ.get("TIERWISE_BUILD_DIR")
    if env:
        return os.path.realpath(env)
    return os.path.realpath(os.path.join(source_path(), "build"))


def source_path() -> str:
    """The source tree's root as a string."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


def artifact_path(rel: str) -> str:
    """A file of the build as a string, e.g.
    artifact_path('lib/libtierwise-runtime.so'); raises MissingBuildError
    with a one-line hint if it is not built."""
    p = os.path.join(build_path(), rel)
    if not os.path.exists(p):
        raise MissingBuildError(f"{p} not found: run `make build` first")
    return p


def build_dir() -> Path:
    from pathlib import Path

    return Path(build_path())


def artifact(rel: str) -> Path:
    from pathlib import Path

    return Path(artifact_path(rel))


def source_dir() -> Path:
    from pathlib import Path

    return Path(source_path())


def runtime_preload(env: Mapping[str, str]) -> str:
    """LD_PRELOAD for `env` with the tierwise runtime first (raises
    MissingBuildError if it is not built)."""
    lib = artifact_path("lib/libtierwise-runtime.so")
    pre = env.get("LD_PRELOAD", "")
    return f"{lib}:{pre}" if pre else lib
