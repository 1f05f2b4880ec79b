/* SPDX-License-Identifier: MIT */
/* Placeholder object for vgpreload_tierwise-amd64-linux.so, whose content is
 * Valgrind's replacement malloc (libreplacemalloc_toolpreload, whole
 * archive, without its libstdc++ redirections: CMakeLists.txt). */
int tw_vgpreload_marker;
