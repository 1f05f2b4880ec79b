#!/bin/bash
# SPDX-License-Identifier: MIT
# `make check-sanitizers`: the runtime's C unit tests and parsers under
# AddressSanitizer + UndefinedBehaviorSanitizer (clang-19), the stress
# program's threaded core under ThreadSanitizer, and the LD_PRELOAD runtime
# itself (where sanitizers cannot apply: it replaces malloc) under Valgrind
# memcheck and helgrind, running the stress program in placement (pmem, DRAM
# limit, fast path) and census modes. Fails on the first finding.
#   test/reliability/check_sanitizers.sh [BUILD_DIR]   (~2 minutes)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
CC=${CC_SAN:-clang-19}
OUT=$BUILD/sanitizers
IN=$BUILD/test/reliability/Inputs
RT=$BUILD/lib/libtierwise-runtime.so
rm -rf "$OUT" && mkdir -p "$OUT/pmem" "$OUT/cen" "$OUT/cen2"
SAN="-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
step() { printf 'check-sanitizers: %s\n' "$*"; }

step "ASan+UBSan: site-key unit test (runtime/common/tw_sitekey.c)"
$CC $SAN -I"$SRC/runtime/common" "$SRC/test/runtime/Inputs/tw_sitekey_test.c" \
  "$SRC/runtime/common/tw_sitekey.c" -o "$OUT/tw_sitekey_test"
"$OUT/tw_sitekey_test" | tail -1

# The fuzz targets are ASan+UBSan builds of the parsers: replay the seed
# corpora and a short fuzzing run of each.
for t in placement size sitekey; do
  bin=$BUILD/runtime/fuzz/tw_fuzz_$t
  if [ ! -x "$bin" ]; then
    step "SKIP $t parser: $bin not built (libclang-rt-19-dev missing?)"
    continue
  fi
  step "ASan+UBSan: $t parser, seed corpus + 50000 fuzzed inputs"
  cp -r "$SRC/runtime/fuzz/corpus/$t" "$OUT/corpus-$t"
  (cd "$OUT" && "$bin" -runs=50000 -seed=1 "$OUT/corpus-$t" 2>&1 | grep -E '^Done|ERROR|property' )
done

step "ASan+UBSan: the stress program itself (4 threads)"
$CC $SAN -fno-optimize-sibling-calls -pthread "$SRC/test/reliability/Inputs/tw_stress.c" -o "$OUT/tw_stress_asan"
"$OUT/tw_stress_asan" 4 100000 3 | grep '^failures: 0$'

step "TSan: the stress program's threaded core (4 threads)"
$CC -g -O1 -fsanitize=thread -pthread "$SRC/test/reliability/Inputs/tw_stress.c" -o "$OUT/tw_stress_tsan"
TSAN_OPTIONS=halt_on_error=1 "$OUT/tw_stress_tsan" 4 100000 3 | grep '^failures: 0$'

# Valgrind on the preloaded runtime. The runtime marks its blocks for
# Valgrind (MALLOCLIKE client requests), so memcheck checks the program's use
# of placed blocks too.
printf '{"format": "tierwise-placement", "version": 1, "default_tier": "pmem", "sites": []}' > "$OUT/all-pmem.json"
printf '{"format": "tierwise-placement", "version": 1, "default_tier": "dram", "sites": []}' > "$OUT/dram.json"
VG="valgrind --error-exitcode=3 -q"
run_vg() { # TOOL MODE-ENV...
  local tool=$1; shift
  env LD_PRELOAD="$RT" "$@" $VG --tool="$tool" "$IN/tw_stress" 2 3000 7 > "$OUT/vg.out" 2> "$OUT/vg.err" || {
    cat "$OUT/vg.err"; echo "check-sanitizers: $tool found errors"; exit 1; }
  grep -q '^failures: 0$' "$OUT/vg.out"
}
for tool in memcheck helgrind; do
  step "Valgrind $tool: runtime, all in pmem, DRAM limit 256K"
  run_vg $tool TIERWISE_PLACEMENT="$OUT/all-pmem.json" TIERWISE_PMEM_DIR="$OUT/pmem" TIERWISE_DRAM_LIMIT=256K TIERWISE_REPORT="$OUT/r.json"
  step "Valgrind $tool: runtime, dram placement (fast path cache)"
  run_vg $tool TIERWISE_PLACEMENT="$OUT/dram.json" TIERWISE_REPORT="$OUT/r2.json"
done
step "Valgrind memcheck: runtime, census"
run_vg memcheck TIERWISE_CENSUS="$OUT/cen"
step "Valgrind helgrind: runtime, census"
run_vg helgrind TIERWISE_CENSUS="$OUT/cen2"
step "all clean"
