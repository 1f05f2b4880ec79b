# SPDX-License-Identifier: MIT
# `make install PREFIX=...` / `cmake --install build --prefix ...`: everything
# an installed tierwise needs, so that PREFIX/bin/tierwise works with the
# source and build trees gone. The layout (advisor/tierwise/paths.py INSTALLED):
#   bin/tierwise             the CLI (a shell launcher, written at install time)
#   bin/tierwise-rewrite     the source rewriter
#   include/tierwise.h       the API of libtierwise
#   lib/libtierwise*.so      runtime (LD_PRELOAD), libtierwise, pmu profiler
#   lib/pkgconfig/tierwise.pc
#   lib/tierwise/valgrind/   the sim backend's Valgrind tool (VALGRIND_LIB)
#   lib/tierwise/bin/        tierwise-pmu-probe (doctor, pmu backend),
#                            tierwise-launch (what `tierwise run` execs)
#   lib/tierwise/examples/   the example kernels (`tierwise demo`)
#   lib/tierwise/python/     the tierwise Python package
#   lib/tierwise/venv/       a venv with its dependencies (pandas, numpy, ...),
#                            created at install time by pip from the
#                            dependencies in advisor/pyproject.toml
set(TIERWISE_INSTALL_PYTHON /usr/bin/python3 CACHE FILEPATH
    "Python that creates PREFIX/lib/tierwise/venv at install time")

install(TARGETS tierwise-runtime tierwise tierwise-pmu LIBRARY DESTINATION lib)
install(FILES ${CMAKE_SOURCE_DIR}/runtime/include/tierwise.h DESTINATION include)
install(TARGETS tierwise-rewrite RUNTIME DESTINATION bin)
install(TARGETS tierwise-pmu-probe tierwise-launch RUNTIME DESTINATION lib/tierwise/bin)
install(TARGETS tierwise-amd64-linux RUNTIME DESTINATION lib/tierwise/valgrind)
install(TARGETS vgpreload_tierwise LIBRARY DESTINATION lib/tierwise/valgrind)
# Symbolic links to the installed Valgrind's own files (profiler/sim).
install(FILES ${CMAKE_BINARY_DIR}/lib/valgrind/vgpreload_core-amd64-linux.so
              ${CMAKE_BINARY_DIR}/lib/valgrind/default.supp
        DESTINATION lib/tierwise/valgrind)
install(TARGETS pagerank-push pagerank-pull bfs sssp spmv-pagerank adjlist
        RUNTIME DESTINATION lib/tierwise/examples)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/advisor/tierwise DESTINATION lib/tierwise/python
        PATTERN __pycache__ EXCLUDE)

# The pkg-config file, the venv and the launcher name the prefix, known
# only at install time (cmake --install --prefix).
install(CODE "
set(tw_root \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}\")
set(prefix \"\${CMAKE_INSTALL_PREFIX}\")
set(PROJECT_VERSION \"${PROJECT_VERSION}\")
message(STATUS \"Installing: \${tw_root}/lib/pkgconfig/tierwise.pc\")
configure_file(\"${CMAKE_SOURCE_DIR}/runtime/tierwise.pc.in\"
               \"\${tw_root}/lib/pkgconfig/tierwise.pc\" @ONLY)
set(tw_venv \"\${tw_root}/lib/tierwise/venv\")
message(STATUS \"Creating: \${tw_venv} (pip: pandas, numpy, ... from advisor/pyproject.toml)\")
execute_process(COMMAND \"${TIERWISE_INSTALL_PYTHON}\" -m venv \"\${tw_venv}\"
                COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND \"\${tw_venv}/bin/python\" -c
  \"import sys, tomllib; open(sys.argv[2], 'w').write(''.join(d + chr(10) for d in tomllib.load(open(sys.argv[1], 'rb'))['project']['dependencies']))\"
  \"${CMAKE_SOURCE_DIR}/advisor/pyproject.toml\" \"\${tw_venv}/requirements.txt\"
  COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND \"\${tw_venv}/bin/python\" -m pip install -q
                --disable-pip-version-check -r \"\${tw_venv}/requirements.txt\"
                COMMAND_ERROR_IS_FATAL ANY)
set(tw_p \"\${CMAKE_INSTALL_PREFIX}\")
set(tw_cli \"\${tw_root}/bin/tierwise\")
message(STATUS \"Installing: \${tw_cli}\")
file(WRITE \"\${tw_cli}\" \"#!/bin/sh
# The tierwise CLI, installed by make install / cmake --install.
# run and config start Python without site (-S): see advisor/CMakeLists.txt.
TIERWISE_PREFIX='\${tw_p}'
export TIERWISE_PREFIX
unset TIERWISE_BUILD_DIR
PYTHONPATH=\\\"\${tw_p}/lib/tierwise/python\\\${PYTHONPATH:+:\\\$PYTHONPATH}\\\"
export PYTHONPATH
case \\\"\\\$1\\\" in run|config) exec '\${tw_p}/lib/tierwise/venv/bin/python' -S -m tierwise \\\"\\\$@\\\" ;; esac
exec '\${tw_p}/lib/tierwise/venv/bin/python' -m tierwise \\\"\\\$@\\\"
\")
file(CHMOD \"\${tw_cli}\" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
     GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
")
