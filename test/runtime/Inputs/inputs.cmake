# SPDX-License-Identifier: MIT
# Test programs for test/runtime, built into build/test/runtime/Inputs.
set(TW_RT_IN ${CMAKE_SOURCE_DIR}/test/runtime/Inputs)
set(TW_RT_OUT ${CMAKE_BINARY_DIR}/test/runtime/Inputs)
foreach(prog tw_sites tw_threads tw_edge)
  add_executable(${prog} ${TW_RT_IN}/${prog}.c)
  target_compile_options(${prog} PRIVATE -O1 -g)
  target_link_libraries(${prog} PRIVATE pthread)
  set_target_properties(${prog} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${TW_RT_OUT})
endforeach()
add_executable(tw_cxx ${TW_RT_IN}/tw_cxx.cc)
target_compile_options(tw_cxx PRIVATE -O2 -g)
set_target_properties(tw_cxx PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${TW_RT_OUT})
# Unit test of the libc-free site-key code.
add_executable(tw_sitekey_test ${TW_RT_IN}/tw_sitekey_test.c)
target_link_libraries(tw_sitekey_test PRIVATE tw_sitekey)
set_target_properties(tw_sitekey_test PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${TW_RT_OUT})
# A program linked with libtierwise (the public API, no LD_PRELOAD).
add_executable(tw_api_user ${TW_RT_IN}/tw_api_user.cc)
target_include_directories(tw_api_user PRIVATE ${CMAKE_SOURCE_DIR}/runtime/include)
target_link_libraries(tw_api_user PRIVATE tierwise)
set_target_properties(tw_api_user PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${TW_RT_OUT})
