# SPDX-License-Identifier: MIT
"""Where the native parts of tierwise live: the CMake build directory, or an
install prefix (`make install PREFIX=...`). Imports os only: `tierwise run`
and `config` use it (cli.FAST_VERBS); the functions that return a Path
import pathlib when called.

Every native part is named by its path in the build tree (e.g.
'lib/libtierwise-runtime.so', 'lib/valgrind/tierwise-amd64-linux'); an
installed tierwise finds the same file under its prefix, where a few of
them move out of the way of the system's own directories (INSTALLED)."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Mapping, Optional

# Build-tree path -> path under the install prefix, for the parts that do not
# keep their place (the rest do: bin/tierwise-rewrite, lib/libtierwise*.so).
# CMakeLists.txt's install rules put them there.
INSTALLED = (
    ("lib/valgrind/", "lib/tierwise/valgrind/"),
    ("bin/tierwise-pmu-probe", "lib/tierwise/bin/tierwise-pmu-probe"),
    ("bin/tierwise-launch", "lib/tierwise/bin/tierwise-launch"),
    ("examples/", "lib/tierwise/examples/"),
)


class MissingBuildError(RuntimeError):
    pass


def prefix_path() -> Optional[str]:
    """The install prefix of an installed tierwise: $TIERWISE_PREFIX (set by
    PREFIX/bin/tierwise), else PREFIX when this package lies at
    PREFIX/lib/tierwise/python/tierwise; None for the source tree."""
    env = os.environ.get("TIERWISE_PREFIX")
    if env:
        return os.path.realpath(env)
    pkg = os.path.dirname(os.path.realpath(__file__))
    python = os.path.dirname(pkg)
    if python.endswith(os.path.join(os.sep, "lib", "tierwise", "python")):
        return os.path.dirname(os.path.dirname(os.path.dirname(python)))
    return None


def build_path() -> str:
    """The directory the native parts are found under, as a string: the
    install prefix of an installed tierwise, else $TIERWISE_BUILD_DIR (set by
    build/bin/tierwise), else ../build next to the advisor package."""
    prefix = prefix_path()
    if prefix:
        return prefix
    env = os.environ.get("TIERWISE_BUILD_DIR")
    if env:
        return os.path.realpath(env)
    return os.path.realpath(os.path.join(source_path(), "build"))


def source_path() -> str:
    """The source tree's root as a string (an installed tierwise has none:
    use native_path and include_path for its files)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


def native_path(rel: str) -> str:
    """The file `rel` (its path in the build tree) of this tierwise, built
    or installed, as a string; it may not exist."""
    if prefix_path():
        for build, installed in INSTALLED:
            if rel == build.rstrip("/") or rel.startswith(build):
                rel = installed.rstrip("/") + rel[len(build.rstrip("/")) :]
                break
    return os.path.join(build_path(), rel)


def include_path() -> str:
    """The directory of tierwise.h."""
    prefix = prefix_path()
    if prefix:
        return os.path.join(prefix, "include")
    return os.path.join(source_path(), "runtime", "include")


def artifact_path(rel: str) -> str:
    """A file of the build as a string, e.g.
    artifact_path('lib/libtierwise-runtime.so'); raises MissingBuildError
    with a one-line hint if it is not built (or not installed)."""
    p = native_path(rel)
    if not os.path.exists(p):
        raise MissingBuildError(missing(p))
    return p


def missing(path: object) -> str:
    """The one-line message for a native part that is not there."""
    if prefix_path():
        return f"{path} not installed: reinstall tierwise"
    return f"{path} not built: run `make build`"


def build_dir() -> Path:
    from pathlib import Path

    return Path(build_path())


def native(rel: str) -> Path:
    """native_path as a Path."""
    from pathlib import Path

    return Path(native_path(rel))


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
