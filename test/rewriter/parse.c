// SPDX-License-Identifier: MIT
// Parse failures and what GCC accepts: this file applies C11 atomics to a
// plain (non-_Atomic) int, which Clang's <stdatomic.h> refuses and GCC's
// accepts; it is parsed again in GNU mode (-std=gnu11, GCC's headers) and
// rewritten. Inputs/parse/broken.c does not parse at all: the error names
// the file and the first error, and its site is listed as not rewritten
// with that reason. A site inside fopen (libc's own allocation: a site
// never has libc's frames) is said to be so.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/parse.json %s > %t.json
// RUN: not %bin/tierwise-rewrite --placement %t.json %s %S/Inputs/parse/broken.c -- -std=c11 > %t.diff 2> %t.err
// RUN: FileCheck %s < %t.diff
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// RUN: not grep -e 'errors\? generated' -e 'Error while processing' %t.err
// ERR: note: {{.*}}parse.c parsed in GNU mode (-std=gnu*, GCC's headers) after: parse.c:[[@LINE+14]]:{{[0-9]+}}: address argument to atomic operation must be a pointer to _Atomic type
// ERR: error: {{.*}}broken.c does not parse, also in GNU mode: broken.c:6:21: expected ';' at end of declaration (its sites are listed as not rewritten)
// ERR-DAG: not rewritten: site 1 (broken {{.*}}broken.c:6): broken.c did not parse (broken.c:6:21: expected ';' at end of declaration)
// ERR-DAG: not rewritten: site 2 (main parse.c:[[@LINE+12]]): libc's own allocation, inside fopen at parse.c:[[@LINE+12]]: a site never has the C library's frames (by design), and there is nothing to rewrite
// ERR: 1 of 3 placed sites rewritten in 1 files
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static int counter;

int main(void) {
  long *edges = malloc(1 << 20); // @a
  // CHECK: +  long *edges = tw_malloc(TW_TIER_PMEM, 1 << 20);
  atomic_fetch_add(&counter, 1);
  FILE *f = fopen("/dev/null", "r"); // @f
  if (f)
    fclose(f);
  free(edges);
  return counter - 1;
}
