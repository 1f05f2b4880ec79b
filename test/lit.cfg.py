# SPDX-License-Identifier: MIT
# lit configuration for the tierwise suite. Tests are files under test/<area>/
# with RUN lines; substitutions:
#   %tierwise   build/bin/tierwise (the CLI)
#   %bin        build/bin        %lib  build/lib
#   %examples   build/examples   %src  source root
#   %python     the venv's python
#   FileCheck   LLVM 19's FileCheck
import os

import lit.formats

config.name = "tierwise"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".test", ".c", ".cc", ".cpp", ".py"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in", "CMakeLists.txt", "bench", "numa"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tw_build_root, "test")

b = config.tw_build_root
config.substitutions += [
    ("%tierwise", os.path.join(b, "bin", "tierwise")),
    ("%examples", os.path.join(b, "examples")),
    ("%bin", os.path.join(b, "bin")),
    ("%lib", os.path.join(b, "lib")),
    ("%src", config.tw_src_root),
    ("%python", config.tw_python),
]
config.environment["PATH"] = os.pathsep.join(
    [os.path.dirname(config.tw_filecheck), os.path.join(b, "bin"), config.environment.get("PATH", os.environ["PATH"])]
)
config.environment["TIERWISE_BUILD_DIR"] = b
# the runtime's placement cache (a large placement's compiled form,
# runtime/src/tw_placement_cache.c) in the build tree, not in $HOME/.cache
config.environment["TIERWISE_CACHE_DIR"] = os.path.join(b, "test", "placement-cache")
for var in ("HOME", "TMPDIR", "LANG"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
# Python helpers used by tests live in test/Inputs; the advisor package is
# this source tree's (not whichever tree .venv's editable install names).
config.environment["PYTHONPATH"] = os.pathsep.join(
    [os.path.join(config.tw_src_root, "advisor"), os.path.join(config.tw_src_root, "test", "Inputs")]
)
