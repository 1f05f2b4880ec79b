// SPDX-License-Identifier: MIT
// A file with allocations but no placed sites: no diff. With only
// default-tier sites the exit status is 0; sites in files that were not
// given are listed and the exit status is 1.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/no-sites-default.json %s > %t.default.json
// RUN: %bin/tierwise-rewrite --placement %t.default.json %s -- 2> %t.default.err | count 0
// RUN: FileCheck --check-prefix=DEFAULT %s < %t.default.err
// RUN: not %bin/tierwise-rewrite --placement %S/Inputs/no-sites-elsewhere.json %s -- 2> %t.elsewhere.err | count 0
// RUN: FileCheck --check-prefix=ELSEWHERE %s < %t.elsewhere.err
#include <stdlib.h>

int main(void) {
  char *a = malloc(100); // @a
  free(a);
  return 0;
}
// DEFAULT: 0 of 0 placed sites rewritten in 0 files
// ELSEWHERE: not rewritten: site 0 (init_graph graph.c:42): not in the given files (innermost frame init_graph graph.c:42)
// ELSEWHERE: 0 of 1 placed sites rewritten in 0 files
