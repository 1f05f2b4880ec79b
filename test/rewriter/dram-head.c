// SPDX-License-Identifier: MIT
// A site placed partly in DRAM (dram_bytes: its objects' first bytes in
// DRAM, the rest in pmem) has no source form: it is listed as not rewritten
// with the reason and left as it is; the whole-pmem site beside it is
// rewritten; the exit status says not every placed site was rewritten.
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/dram-head.json %s > %t.json
// RUN: not %bin/tierwise-rewrite --placement %t.json %s -- -std=c11 > %t.diff 2> %t.err
// RUN: FileCheck %s < %t.diff
// RUN: FileCheck --check-prefix=ERR %s < %t.err
#include <stdlib.h>

int main(void) {
  char *a = malloc(1 << 22); // @whole
  char *b = malloc(1 << 22); // @head
  // CHECK: +  char *a = tw_malloc(TW_TIER_PMEM, 1 << 22);
  // CHECK-NOT: {{^}}+  char *b
  free(a);
  free(b);
  return 0;
}
// ERR: not rewritten: site 1 (main dram-head.c:{{[0-9]+}}): placed partly in DRAM (dram_bytes 1048576): a source edit places whole allocations; apply this site with `tierwise run` (LD_PRELOAD)
// ERR: 1 of 2 placed sites rewritten in 1 files
