# SPDX-License-Identifier: MIT
# Test programs of test/reliability, built into build/test/reliability/Inputs
# (included from runtime/fuzz/CMakeLists.txt, next to the fuzz targets).
set(TW_REL_IN ${CMAKE_SOURCE_DIR}/test/reliability/Inputs)
set(TW_REL_OUT ${CMAKE_BINARY_DIR}/test/reliability/Inputs)
# Sites must stay distinct frames: no inlining into callers, no tail calls.
set(TW_REL_FLAGS -O1 -g -fno-optimize-sibling-calls -fno-inline)
add_executable(tw_stress ${TW_REL_IN}/tw_stress.c)
target_link_libraries(tw_stress PRIVATE pthread)
add_executable(tw_limit_stress ${TW_REL_IN}/tw_limit_stress.c)
target_link_libraries(tw_limit_stress PRIVATE pthread)
add_library(tw_early SHARED ${TW_REL_IN}/tw_early.c)
add_library(tw_sitelib SHARED ${TW_REL_IN}/tw_sitelib.c)
add_executable(tw_faults ${TW_REL_IN}/tw_faults.c)
target_link_libraries(tw_faults PRIVATE tw_early pthread dl)
add_executable(tw_static ${TW_REL_IN}/tw_static.c)
target_link_options(tw_static PRIVATE -static)
foreach(t tw_stress tw_limit_stress tw_early tw_sitelib tw_faults tw_static)
  target_compile_options(${t} PRIVATE ${TW_REL_FLAGS})
  set_target_properties(${t} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${TW_REL_OUT}
                        LIBRARY_OUTPUT_DIRECTORY ${TW_REL_OUT})
endforeach()
# Linked with libtierwise: the setuid test (AT_SECURE).
add_executable(tw_secure ${TW_REL_IN}/tw_secure.c)
target_include_directories(tw_secure PRIVATE ${CMAKE_SOURCE_DIR}/runtime/include)
target_link_libraries(tw_secure PRIVATE tierwise)
set_target_properties(tw_secure PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${TW_REL_OUT})
