// SPDX-License-Identifier: MIT
// One source in compile_commands.json twice, with different flags (as a
// framework builds one app per graph type): `tierwise rewrite -p` keeps the
// entry whose object is in the placement's binary, by the flags its DWARF
// records (GCC: -O, -std, never -D), else by the CMake target directory of
// the object; where nothing tells, tierwise-rewrite parses each
// configuration, says where they disagree and rewrites the allocation of
// each. NEW_VEC is malloc without -DWIDE and calloc with it.
// RUN: rm -rf %t && mkdir -p %t/o %t/CMakeFiles/configs.dir %t/CMakeFiles/configs-wide.dir && cp %s %t/configs.c
// Case 1: -O0 without -DWIDE (in binary narrow) and -O2 -DWIDE: the producer tells.
// RUN: cd %t && gcc -g -O0 -c configs.c -o o/narrow.o && gcc o/narrow.o -o narrow
// RUN: printf '[{"directory": "%t", "file": "configs.c", "command": "gcc -g -O2 -DWIDE -c configs.c -o o/wide.o"},\n {"directory": "%t", "file": "configs.c", "command": "gcc -g -O0 -c configs.c -o o/narrow.o"}]\n' > %t/compile_commands.json
// RUN: %python %S/Inputs/callsites.py %t/narrow malloc pmem > %t/a.json
// RUN: cd %t && %tierwise rewrite --placement a.json -p %t --binary narrow configs.c > a.diff 2> a.err
// RUN: FileCheck --check-prefix=PICKA %s < %t/a.err
// RUN: FileCheck --check-prefix=NARROW %s < %t/a.diff
// PICKA: note: configs.c: 2 compile commands; using the one built with -O0 (its flags agree with the binary's DW_AT_producer)
// PICKA-NOT: disagree
// PICKA: 1 of 1 placed sites rewritten
// NARROW-NOT: calloc
// NARROW: +#define NEW_VEC(n) tw_malloc(TW_TIER_PMEM, (n) * sizeof(ELEM))
// Case 2: both -O2, objects in CMake target directories: configs-wide is the
// binary, so the -DWIDE entry.
// RUN: cd %t && gcc -g -O2 -DWIDE -c configs.c -o CMakeFiles/configs-wide.dir/configs.c.o && gcc CMakeFiles/configs-wide.dir/configs.c.o -o configs-wide
// RUN: printf '[{"directory": "%t", "file": "configs.c", "command": "gcc -g -O2 -DWIDE -c configs.c -o CMakeFiles/configs-wide.dir/configs.c.o"},\n {"directory": "%t", "file": "configs.c", "command": "gcc -g -O2 -c configs.c -o CMakeFiles/configs.dir/configs.c.o"}]\n' > %t/compile_commands.json
// RUN: %python %S/Inputs/callsites.py %t/configs-wide calloc pmem > %t/b.json
// RUN: cd %t && %tierwise rewrite --placement b.json -p %t --binary configs-wide configs.c > b.diff 2> b.err
// RUN: FileCheck --check-prefix=PICKB %s < %t/b.err
// RUN: FileCheck --check-prefix=WIDE %s < %t/b.diff
// PICKB: note: configs.c: 2 compile commands; using the one built with -O2 -DWIDE (its object is in the binary's CMake target directory)
// PICKB: 1 of 1 placed sites rewritten
// WIDE: +#define NEW_VEC(n) tw_calloc(TW_TIER_PMEM, (n), sizeof(ELEM))
// WIDE-NOT: tw_malloc
// Case 3: both -O2, objects elsewhere: nothing tells; both parsed, the
// disagreement reported, both definitions rewritten.
// RUN: printf '[{"directory": "%t", "file": "configs.c", "command": "gcc -g -O2 -DWIDE -c configs.c -o o/w.o"},\n {"directory": "%t", "file": "configs.c", "command": "gcc -g -O2 -c configs.c -o o/n.o"}]\n' > %t/compile_commands.json
// RUN: cd %t && %tierwise rewrite --placement b.json -p %t --binary configs-wide configs.c > c.diff 2> c.err
// RUN: FileCheck --check-prefix=NONE %s < %t/c.err
// RUN: FileCheck --check-prefix=BOTH %s < %t/c.diff
// NONE: note: configs.c: 2 compile commands, and the binary does not tell which built it (its DW_AT_producer records no -D (GCC never does)): tierwise-rewrite parses each and reports where they disagree
// NONE: note: configs.c: its 2 compile commands disagree: the one with -DWIDE alone has the allocations at configs.c:{{[0-9]+}} (calloc)
// NONE: note: configs.c: its 2 compile commands disagree: the one with no -D of its own alone has the allocations at configs.c:{{[0-9]+}} (malloc)
// NONE: 1 of 1 placed sites rewritten
// BOTH: +#define NEW_VEC(n) tw_calloc(TW_TIER_PMEM, (n), sizeof(ELEM))
// BOTH: +#define NEW_VEC(n) tw_malloc(TW_TIER_PMEM, (n) * sizeof(ELEM))
#include <stdio.h>
#include <stdlib.h>

#ifdef WIDE
#define ELEM double
#define NEW_VEC(n) calloc((n), sizeof(ELEM))
#else
#define ELEM float
#define NEW_VEC(n) malloc((n) * sizeof(ELEM))
#endif

int main(int argc, char **argv) {
  (void)argv;
  ELEM *v = NEW_VEC(1000 * argc);
  v[0] = 1;
  printf("%g %p\n", (double)v[0], (void *)v); // v escapes: not elided
  free(v);
  return 0;
}
