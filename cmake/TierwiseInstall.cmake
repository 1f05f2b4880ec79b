# SPDX-License-Identifier: MIT
# `make install PREFIX=...` / `cmake --install build --prefix ...`: everything
# an installed tierwise needs, so that PREFIX/bin/tierwise works with the
# source and build trees gone. The layout (advisor/tierwise/paths.py INSTALLED):
#   bin/tierwise             the CLI (cmake/tierwise-launcher.sh)
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

# Nothing installed names the prefix, so that an install moved or copied
# elsewhere works (issue 36): bin/tierwise finds it from its own path,
# tierwise.pc from pkg-config's ${pcfiledir}, and the venv from its
# pyvenv.cfg (its python is a link to TIERWISE_INSTALL_PYTHON, which stays).
install(FILES ${CMAKE_SOURCE_DIR}/advisor/tierwise-boot.py DESTINATION lib/tierwise/python)
install(PROGRAMS ${CMAKE_SOURCE_DIR}/cmake/tierwise-launcher.sh DESTINATION bin RENAME tierwise)
set(prefix "\${pcfiledir}/../..")
configure_file(${CMAKE_SOURCE_DIR}/runtime/tierwise.pc.in ${CMAKE_BINARY_DIR}/tierwise.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/tierwise.pc DESTINATION lib/pkgconfig)
install(CODE "
set(tw_root \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}\")
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
")
