# SPDX-License-Identifier: MIT
# Test programs for test/runtime, built into build/test/runtime/Inputs.
set(TW_RT_IN ${CMAKE_SOURCE_DIR}/test/runtime/Inputs)
set(TW_RT_OUT ${CMAKE_BINARY_DIR}/test/runtime/Inputs)
foreach(prog tw_sites tw_threads tw_edge tw_fork_private tw_mismatch tw_system
             tw_rank_order tw_time_share tw_job_parent tw_job_helper
             tw_mmap_huge tw_fork_stress tw_fork_frees tw_signal tw_stacks
             tw_uncharged tw_strdup tw_realloc_head tw_slow_reuse
             tw_small_stack tw_closefds tw_chdir tw_remap tw_cancel
             tw_remote_free tw_many)
  add_executable(${prog} ${TW_RT_IN}/${prog}.c)
  target_compile_options(${prog} PRIVATE -O1 -g)
  target_link_libraries(${prog} PRIVATE pthread)
  set_target_properties(${prog} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${TW_RT_OUT})
endforeach()
# Six OpenMP regions whose libgomp team allocations share a cache key.
add_executable(tw_gomp_sites ${TW_RT_IN}/tw_gomp_sites.c)
target_compile_options(tw_gomp_sites PRIVATE -O1 -g)
target_link_libraries(tw_gomp_sites PRIVATE OpenMP::OpenMP_C)
set_target_properties(tw_gomp_sites PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${TW_RT_OUT})
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
add_executable(tw_api_head ${TW_RT_IN}/tw_api_head.c)
target_include_directories(tw_api_head PRIVATE ${CMAKE_SOURCE_DIR}/runtime/include)
target_link_libraries(tw_api_head PRIVATE tierwise)
set_target_properties(tw_api_head PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${TW_RT_OUT})
# dlopen: a plugin loaded after the runtime started.
add_library(tw_plugin SHARED ${TW_RT_IN}/tw_plugin.c)
target_compile_options(tw_plugin PRIVATE -O1 -g)
set_target_properties(tw_plugin PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${TW_RT_OUT})
# dlclose: the same plugin code as two libraries, loaded one after the other.
foreach(plug twplugA twplugB)
  add_library(${plug} SHARED ${TW_RT_IN}/tw_plugin.c)
  target_compile_options(${plug} PRIVATE -O1 -g)
  set_target_properties(${plug} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${TW_RT_OUT})
endforeach()
add_executable(tw_dlswap ${TW_RT_IN}/tw_dlswap.c)
target_link_libraries(tw_dlswap PRIVATE dl)
set_target_properties(tw_dlswap PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${TW_RT_OUT})
# dlopen/dlclose of one plugin 1000+ times (dlopen.test, dlloop).
add_executable(tw_dlloop ${TW_RT_IN}/tw_dlloop.c)
target_compile_options(tw_dlloop PRIVATE -O1 -g)
target_link_libraries(tw_dlloop PRIVATE dl)
set_target_properties(tw_dlloop PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${TW_RT_OUT})
add_executable(tw_dlopen ${TW_RT_IN}/tw_dlopen.c)
target_compile_options(tw_dlopen PRIVATE -O1 -g)
target_link_libraries(tw_dlopen PRIVATE dl)
set_target_properties(tw_dlopen PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${TW_RT_OUT})
# The size and tier-name grammars' C implementations against the shared
# vectors (sizes.test, tiers.test).
add_executable(tw_vector_check ${TW_RT_IN}/tw_vector_check.c
  ${CMAKE_SOURCE_DIR}/runtime/common/tw_size.c ${CMAKE_SOURCE_DIR}/runtime/src/tw_tiername.c)
target_include_directories(tw_vector_check PRIVATE ${CMAKE_SOURCE_DIR}/runtime/include
  ${CMAKE_SOURCE_DIR}/runtime/common ${CMAKE_SOURCE_DIR}/runtime/src)
set_target_properties(tw_vector_check PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${TW_RT_OUT})
# The page-owner map against memkind's own mappings (slow-owner.test).
add_executable(tw_slow_owner ${TW_RT_IN}/tw_slow_owner.c)
target_include_directories(tw_slow_owner PRIVATE ${CMAKE_SOURCE_DIR}/runtime/include)
target_link_libraries(tw_slow_owner PRIVATE tierwise pthread)
set_target_properties(tw_slow_owner PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${TW_RT_OUT})
# Programs linked with another allocator (foreign-alloc.test): the C and the
# C++ program once per Debian allocator library (Makefile APT_PKGS installs
# them); a library not found is said at configure time, and the test fails.
foreach(alloc jemalloc tcmalloc_minimal tcmalloc mimalloc)
  find_library(TW_LIB_${alloc} NAMES ${alloc} lib${alloc}.so.2 lib${alloc}.so.4)
  if(NOT TW_LIB_${alloc})
    message(WARNING "lib${alloc} not found: foreign-alloc.test will fail (apt install libjemalloc-dev libgoogle-perftools-dev libmimalloc-dev)")
    continue()
  endif()
  add_executable(tw_foreign_c_${alloc} ${TW_RT_IN}/tw_foreign.c)
  add_executable(tw_foreign_cc_${alloc} ${TW_RT_IN}/tw_foreign.cc)
  add_executable(tw_foreign_hello_${alloc} ${TW_RT_IN}/tw_foreign_hello.c)
  add_executable(tw_signal_${alloc} ${TW_RT_IN}/tw_signal.c) # (signals.test)
  foreach(t tw_foreign_c_${alloc} tw_foreign_cc_${alloc} tw_foreign_hello_${alloc}
          tw_signal_${alloc})
    target_compile_options(${t} PRIVATE -O1 -g)
    # (no --as-needed: the library stays linked even where the program's
    # calls would bind elsewhere)
    target_link_libraries(${t} PRIVATE -Wl,--no-as-needed ${TW_LIB_${alloc}})
    set_target_properties(${t} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${TW_RT_OUT})
  endforeach()
endforeach()
# The room's pure planner over a table of cases (room-plan.test).
add_executable(tw_room_plan_test ${TW_RT_IN}/tw_room_plan_test.c
               ${CMAKE_SOURCE_DIR}/runtime/src/tw_room_plan.c)
target_include_directories(tw_room_plan_test PRIVATE ${CMAKE_SOURCE_DIR}/runtime/src)
set_target_properties(tw_room_plan_test PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${TW_RT_OUT})
