# SPDX-License-Identifier: MIT
"""Where the native parts of tierwise live (the CMake build directory)."""

import os
from pathlib import Path


class MissingBuildError(RuntimeError):
    pass


def build_dir() -> Path:
    """The build directory: $TIERWISE_BUILD_DIR (set by build/bin/tierwise),
    else ../build next to the advisor package."""
    env = os.environ.get("TIERWISE_BUILD_DIR")
    if env:
        return Path(env).resolve()
    return (Path(__file__).resolve().parents[2] / "build").resolve()


def artifact(rel: str) -> Path:
    """A file of the build, e.g. artifact('lib/libtierwise-runtime.so');
    raises MissingBuildError with a one-line hint if it is not built."""
    p = build_dir() / rel
    if not p.exists():
        raise MissingBuildError(f"{p} not found: run `make build` first")
    return p


def source_dir() -> Path:
    return Path(__file__).resolve().parents[2]


def runtime_preload(env: dict) -> str:
    """LD_PRELOAD for `env` with the tierwise runtime first (raises
    MissingBuildError if it is not built)."""
    lib = str(artifact("lib/libtierwise-runtime.so"))
    pre = env.get("LD_PRELOAD", "")
    return f"{lib}:{pre}" if pre else lib
