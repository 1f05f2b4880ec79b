// SPDX-License-Identifier: MIT
// -p BUILD_DIR: the file's flags come from compile_commands.json (this file
// only parses with the -D and -I given there).
// RUN: rm -rf %t && mkdir -p %t/include
// RUN: echo '#define TW_TEST_BYTES (1 << 20)' > %t/include/sizes.h
// RUN: sed -e 's|@DIR@|%t|g' -e 's|@FILE@|%s|g' %S/Inputs/compile_commands.json.in > %t/compile_commands.json
// RUN: %python %S/Inputs/mkplacement.py %S/Inputs/compile-db.json %s > %t/placement.json
// RUN: %bin/tierwise-rewrite --placement %t/placement.json -p %t %s | FileCheck %s
// The CLI passes -p and the files through:
// RUN: %tierwise rewrite --placement %t/placement.json -p %t %s | FileCheck %s
#ifndef TW_FROM_COMPILE_DB
#error "compiled without the flags of compile_commands.json"
#endif
#include <sizes.h>
#include <stdlib.h>

int main(void) {
  char *buf = malloc(TW_TEST_BYTES); // @a
  // CHECK: +  char *buf = tw_malloc(TW_TIER_PMEM, TW_TEST_BYTES);
  free(buf);
  return 0;
}
