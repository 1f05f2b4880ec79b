#!/bin/bash
# SPDX-License-Identifier: MIT
# `make check-sanitizers`: the runtime's C unit tests and parsers under
# AddressSanitizer + UndefinedBehaviorSanitizer (clang-19), the stress
# program's threaded core under ThreadSanitizer, and the LD_PRELOAD runtime
# itself (where sanitizers cannot apply: it replaces malloc) under Valgrind
# memcheck and helgrind, running the stress program in placement (split
# objects, all in pmem, DRAM limit, fast path) and census modes, and the pmu
# profiler (the same interposer with sampling: its reader thread,
# pthread_create wrapper and attribution; events forced to icl encodings,
# which do not open here), each run's report or census checked for what the
# runtime did. Fails on the first
# finding.
#   test/reliability/check_sanitizers.sh [BUILD_DIR]   (~1 minute)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
CC=${CC_SAN:-clang-19}
OUT=$BUILD/sanitizers
IN=$BUILD/test/reliability/Inputs
RT=$BUILD/lib/libtierwise-runtime.so
rm -rf "$OUT" && mkdir -p "$OUT/pmem" "$OUT/cen" "$OUT/cen2" "$OUT/pmu" "$OUT/pmu2"
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

# Valgrind on the preloaded runtime. Two things make it the runtime that is
# checked, not Valgrind's own malloc:
# - --soname-synonyms=somalloc=nouserintercepts: by default memcheck and
#   helgrind replace the allocation functions of every object that exports
#   them (the program, the preloaded runtime), so the runtime's malloc would
#   never be called (its run report: 0 bytes placed). With a synonym naming
#   no library they replace only the system libraries' (libc's malloc,
#   __libc_malloc, ...): the program's calls reach the runtime, and the DRAM
#   blocks it takes from __libc_malloc are the tool's, checked as usual.
# - The runtime asks the tool whether it is tierwise's own (tw_clientreq.h,
#   TW_CLREQ_HELLO); under another tool it announces only its memkind blocks
#   and split mappings (MALLOCLIKE/FREELIKE), which memcheck then checks too:
#   accesses after free, uninitialised bytes (tw_vgbug is the control; not
#   leaks: memcheck leak-checks no block inside a file mapping, and the pmem
#   tier is one).
# After each placed run its report must show what was placed (check_report),
# and each census must hold the program's own counts (check_census).
# valgrind.supp: false positives in libunwind and memkind, each explained.
printf '{"format": "tierwise-placement", "version": 1, "default_tier": "pmem", "sites": []}' > "$OUT/all-pmem.json"
printf '{"format": "tierwise-placement", "version": 1, "default_tier": "dram", "sites": []}' > "$OUT/dram.json"
VG="valgrind --error-exitcode=3 -q --soname-synonyms=somalloc=nouserintercepts
  --suppressions=$SRC/test/reliability/valgrind.supp"
vg_opts() { # TOOL
  if [ "$1" = memcheck ]; then
    echo "--tool=memcheck --leak-check=full --errors-for-leak-kinds=definite,possible"
  else
    echo "--tool=$1"
  fi
}
run_vg() { # TOOL MODE-ENV...
  local tool=$1; shift
  env LD_PRELOAD="$RT" TIERWISE_UNMATCHED_MIN=0 "$@" $VG $(vg_opts "$tool") \
    "$IN/tw_stress" 2 3000 7 > "$OUT/vg.out" 2> "$OUT/vg.err" || {
    cat "$OUT/vg.err"; echo "check-sanitizers: $tool found errors"; exit 1; }
  grep -q '^failures: 0$' "$OUT/vg.out"
}
# check_report REPORT WHAT EXPR: the run report (r; s: its sites and
# unmatched stacks) satisfies the Python expression EXPR, else WHAT failed.
check_report() {
  python3 - "$@" <<'PY' || { echo "check-sanitizers: $2 (run report $1)"; exit 1; }
import json, sys
r = json.load(open(sys.argv[1]))
s = r["sites"] + r["unmatched"]
placed = [x for x in r["sites"] if x["matched"] and x["allocs"] > 0]
print("  report: totals %s, fallback %d bytes, cache hits %d, %s" % (
    r["totals"], sum(x["fallback_bytes"] for x in s), r["cache"]["hits"],
    "; ".join("placed site %s allocs %d bytes %s" % (x["stack"].split(";")[0],
              x["allocs"], x["bytes"]) for x in placed) or "no placed site"))
sys.exit(not eval(sys.argv[3]))
PY
}
# check_census DIR: DIR/sites.csv has a site with the allocs and bytes of
# each of the stress program's `count` lines (its own per-site counts).
check_census() {
  python3 - "$1/sites.csv" "$OUT/vg.out" <<'PY' || { echo "check-sanitizers: census $1 lacks the program's counts"; exit 1; }
import csv, sys
rows = {(int(r["allocs"] or 0), int(r["bytes_allocated"] or 0))
        for r in csv.DictReader(open(sys.argv[1]))}
want = [l.split() for l in open(sys.argv[2]) if l.startswith("count ")]
miss = [w[1] for w in want if (int(w[3]), int(w[5])) not in rows]
print("  census: %d sites; %d/%d of the program's sites with its counts%s" % (
    len(rows), len(want) - len(miss), len(want), " (missing: %s)" % " ".join(miss) if miss else ""))
sys.exit(not want or bool(miss))
PY
}

step "Valgrind memcheck: control, planted bugs in a pmem block must be found"
# (-gdwarf-4: Valgrind 3.19 cannot read clang-19's DWARF 5 line tables)
$CC -gdwarf-4 -O1 -fno-inline "$SRC/test/reliability/Inputs/tw_vgbug.c" -o "$OUT/tw_vgbug"
for bug in uaf:'Invalid read' uninit:'uninitialised value'; do
  rc=0
  env LD_PRELOAD="$RT" TIERWISE_PLACEMENT="$OUT/all-pmem.json" TIERWISE_PMEM_DIR="$OUT/pmem" \
    TIERWISE_REPORT="$OUT/rbug.json" $VG --tool=memcheck "$OUT/tw_vgbug" "${bug%%:*}" \
    > "$OUT/vg.out" 2> "$OUT/vg.err" || rc=$?
  [ $rc = 3 ] && grep -q "${bug#*:}" "$OUT/vg.err" && grep -q 'main (tw_vgbug.c' "$OUT/vg.err" || {
    cat "$OUT/vg.err"; echo "check-sanitizers: memcheck missed the ${bug%%:*} bug in a pmem block"; exit 1; }
  check_report "$OUT/rbug.json" "the control's block was not in pmem" 'r["totals"]["pmem"] >= 65536'
done

# Split objects (tw_split.c): the big site (128-512 KiB blocks, grown and
# shrunk by realloc) with a 128 KiB DRAM head, the rest in the pmem file.
# The placement names the site by the native census's whole stack: it
# matches under Valgrind because thread-start frames are not part of a site
# (natively clone3, under Valgrind 3.19 clone; advisor/FORMATS.md).
"$BUILD/bin/tierwise" profile --backend alloc -o "$OUT/stcen" -- "$IN/tw_stress" 1 2000 7 > /dev/null 2>&1
python3 - "$OUT/stcen/sites.csv" > "$OUT/split.json" <<'PY'
import csv, json, sys
big = [r["stack"] for r in csv.DictReader(open(sys.argv[1])) if "st_big" in r["location"]]
assert big, "no st_big site in the census"
print(json.dumps({"format": "tierwise-placement", "version": 1, "default_tier": "dram",
  "sites": [{"stack": s, "tier": "pmem", "dram_bytes": 131072} for s in big]}))
PY
# Rank reservations shared over time (tw_dram_limit.c: the lock around
# take, keep and give, the record table): every census site ranked, its
# peak planned, half of them live at the plan's first instant, half at the
# second.
python3 - "$OUT/stcen/sites.csv" > "$OUT/ranked.json" <<'PY'
import csv, json, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if int(r["peak_bytes"] or 0) > 0]
print(json.dumps({"format": "tierwise-placement", "version": 1, "default_tier": "dram",
  "sites": [{"stack": r["stack"], "tier": "dram", "rank": k + 1,
             "planned_bytes": int(r["peak_bytes"]),
             "planned_live": [int(r["peak_bytes"]), 0] if k % 2 else [0, int(r["peak_bytes"])]}
            for k, r in enumerate(rows)]}))
PY
for tool in memcheck helgrind; do
  step "Valgrind $tool: runtime, DRAM limit 256K with rank reservations over 2 instants"
  run_vg $tool TIERWISE_PLACEMENT="$OUT/ranked.json" TIERWISE_PMEM_DIR="$OUT/pmem" TIERWISE_DRAM_LIMIT=256K TIERWISE_REPORT="$OUT/r4.json"
  check_report "$OUT/r4.json" "no reservation over 2 instants" \
    'r["dram_limit"]["policy"] == "rank reservations" and r["dram_limit"]["instants"] == 2 and r["totals"]["dram"] > 0'
  step "Valgrind $tool: runtime, split objects (128K DRAM head, rest pmem)"
  run_vg $tool TIERWISE_PLACEMENT="$OUT/split.json" TIERWISE_PMEM_DIR="$OUT/pmem" TIERWISE_REPORT="$OUT/r3.json"
  check_report "$OUT/r3.json" "no split object in the run" 'any(
    x["bytes"].get("dram", 0) > 0 and x["bytes"].get("pmem", 0) > 0 for x in placed)'
  step "Valgrind $tool: runtime, all in pmem"
  run_vg $tool TIERWISE_PLACEMENT="$OUT/all-pmem.json" TIERWISE_PMEM_DIR="$OUT/pmem" TIERWISE_REPORT="$OUT/r.json"
  check_report "$OUT/r.json" "nothing in pmem" 'r["totals"]["pmem"] > 0 and r["totals"]["dram"] == 0'
  step "Valgrind $tool: runtime, DRAM limit 256K (fallbacks to pmem)"
  run_vg $tool TIERWISE_PLACEMENT="$OUT/dram.json" TIERWISE_PMEM_DIR="$OUT/pmem" TIERWISE_DRAM_LIMIT=256K TIERWISE_REPORT="$OUT/r1.json"
  check_report "$OUT/r1.json" "no fallback to pmem" \
    'r["totals"]["dram"] > 0 and r["totals"]["pmem"] > 0 and sum(x["fallback_bytes"] for x in s) > 0'
  step "Valgrind $tool: runtime, dram placement (fast path cache)"
  run_vg $tool TIERWISE_PLACEMENT="$OUT/dram.json" TIERWISE_REPORT="$OUT/r2.json"
  check_report "$OUT/r2.json" "no fast-path hit" 'r["totals"]["dram"] > 0 and r["cache"]["hits"] > 0'
done
# fork under load (test/runtime/fork-stress.test): two threads allocate
# through a headed site and a ranked DRAM site under a DRAM limit while the
# main thread forks; helgrind checks the parent's locking around fork (the
# atfork handlers take every runtime lock, in one order with memkind's:
# tw_lifecycle.c). The children are not checked (--child-silent-after-fork;
# they leave by exec): helgrind cannot follow glibc's and jemalloc's
# re-initialisation of their locks in a fork child and reports them held.
FS=$BUILD/test/runtime/Inputs/tw_fork_stress
"$BUILD/bin/tierwise" profile --backend alloc -o "$OUT/fscen" -- "$FS" 3 > /dev/null 2>&1
python3 - "$OUT/fscen/sites.csv" > "$OUT/fork.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
head = [r["stack"] for r in rows if r["location"].startswith("headed ")]
ranked = [r["stack"] for r in rows if r["location"].startswith("ranked ")]
assert head and ranked, "no headed/ranked site in the census"
print(json.dumps({"format": "tierwise-placement", "version": 1, "default_tier": "dram",
  "sites": [{"stack": s, "tier": "pmem", "dram_bytes": 1 << 20} for s in head]
         + [{"stack": s, "tier": "dram", "rank": 1, "planned_bytes": 262144} for s in ranked]}))
PY
step "Valgrind helgrind: fork under load (8 forks; headed + ranked site, DRAM limit 4M)"
env LD_PRELOAD="$RT" TIERWISE_PLACEMENT="$OUT/fork.json" TIERWISE_PMEM_DIR="$OUT/pmem" \
  TIERWISE_DRAM_LIMIT=4M TIERWISE_REPORT="$OUT/r5.json" $VG --tool=helgrind --child-silent-after-fork=yes "$FS" 8 exec \
  > "$OUT/vg.out" 2> "$OUT/vg.err" || { cat "$OUT/vg.err"; echo "check-sanitizers: helgrind found errors"; exit 1; }
grep -q '^children stuck: 0$' "$OUT/vg.out" && grep -q '^children failed: 0$' "$OUT/vg.out" ||
  { cat "$OUT/vg.out"; echo "check-sanitizers: a forked child was stuck or failed"; exit 1; }
check_report "$OUT/r5.json" "the headed site was not split" 'any(
  x["bytes"].get("dram", 0) > 0 and x["bytes"].get("pmem", 0) > 0 for x in placed)'
# Threads under a DRAM limit (test/reliability/limit_stress.test): four
# threads' blocks of 16 B - 2 MiB, grown by realloc, falling back to pmem
# from every thread at once (the pmem kind's arenas, tw_be_memkind.c); the
# program's own threaded core under TSan first.
LS=$IN/tw_limit_stress
step "TSan: the limit stress program's threaded core (4 threads)"
$CC -g -O1 -fsanitize=thread -pthread "$SRC/test/reliability/Inputs/tw_limit_stress.c" -o "$OUT/tw_limit_stress_tsan"
TSAN_OPTIONS=halt_on_error=1 "$OUT/tw_limit_stress_tsan" 4 20000 7 | grep '^failures: 0$'
"$LS" 4 2000 7 > "$OUT/ls.plain"
step "Valgrind helgrind: runtime, 4 threads under DRAM limit 4MiB (fallbacks to pmem)"
env LD_PRELOAD="$RT" TIERWISE_PMEM_DIR="$OUT/pmem" TIERWISE_DRAM_LIMIT=4MiB TIERWISE_REPORT="$OUT/r7.json" \
  $VG --tool=helgrind "$LS" 4 2000 7 > "$OUT/ls.out" 2> "$OUT/vg.err" ||
  { cat "$OUT/vg.err"; echo "check-sanitizers: helgrind found errors"; exit 1; }
cmp -s "$OUT/ls.plain" "$OUT/ls.out" || { echo "check-sanitizers: tw_limit_stress's result changed"; exit 1; }
check_report "$OUT/r7.json" "no fallback to pmem" \
  'r["totals"]["pmem"] > 0 and sum(x["fallback_bytes"] for x in s) > 0'
# strdup, strndup and the asprintf family, interposed (tw_preload.c): hot's
# three sites in pmem (test/runtime/strdup-keys.test), so that the strings
# are copied into memkind blocks and glibc's vasprintf frees and reallocates
# its buffer through the runtime, keyed by its caller (a thread-local key).
SD=$BUILD/test/runtime/Inputs/tw_strdup
"$BUILD/bin/tierwise" profile --backend alloc -o "$OUT/sdcen" -- "$SD" 400 > "$OUT/sd.plain" 2> /dev/null
python3 "$SRC/test/runtime/Inputs/twcheck.py" place "$OUT/sdcen" pmem tw_strdup.c:16 tw_strdup.c:17 \
  tw_strdup.c:18 -o "$OUT/strdup.json" > /dev/null
for tool in memcheck helgrind; do
  step "Valgrind $tool: runtime, strdup, strndup and asprintf (their sites in pmem)"
  env LD_PRELOAD="$RT" TIERWISE_PLACEMENT="$OUT/strdup.json" TIERWISE_PMEM_DIR="$OUT/pmem" \
    TIERWISE_REPORT="$OUT/r6.json" $VG $(vg_opts $tool) "$SD" 400 > "$OUT/sd.out" 2> "$OUT/vg.err" ||
    { cat "$OUT/vg.err"; echo "check-sanitizers: $tool found errors"; exit 1; }
  cmp -s "$OUT/sd.plain" "$OUT/sd.out" || { echo "check-sanitizers: tw_strdup's strings changed"; exit 1; }
  check_report "$OUT/r6.json" "the strdup sites' blocks were not all in pmem" \
    'len(placed) == 3 and all(x["bytes"].get("dram", 0) == 0 for x in placed) and r["cache"]["mismatches"] == 0'
done
step "Valgrind memcheck: runtime, census"
run_vg memcheck TIERWISE_CENSUS="$OUT/cen"
check_census "$OUT/cen"
step "Valgrind helgrind: runtime, census"
run_vg helgrind TIERWISE_CENSUS="$OUT/cen2"
check_census "$OUT/cen2"
PMU="LD_PRELOAD=$BUILD/lib/libtierwise-pmu.so LIBPFM_FORCE_PMU=icl TIERWISE_PMU_ALLOW_NO_EVENTS=1 TIERWISE_PMU_MIN_BYTES=1"
step "Valgrind memcheck: pmu profiler (census + sampling)"
run_vg memcheck $PMU TIERWISE_PMU_OUT="$OUT/pmu"
check_census "$OUT/pmu"
step "Valgrind helgrind: pmu profiler (census + sampling)"
run_vg helgrind $PMU TIERWISE_PMU_OUT="$OUT/pmu2"
check_census "$OUT/pmu2"
# The sample profiler's page-touch sampling (tw_touch.c): the SIGSEGV
# handler, the sampler thread arming and giving back pages, the program's
# own handler and faults, reads into a sampled buffer, a thread with every
# signal blocked and a fork (touch_check), its output the unprofiled run's.
# Valgrind resumes a faulting access with every register right only with
# allregs-at-mem-access (its manual: precise exceptions); without it the
# program's sums came out wrong under memcheck, natively never. No leak
# check here: the fork child's exit status would carry memcheck's error
# code for the parent's blocks it leaves behind (the cases above check
# leaks).
TOUCH="$BUILD/test-inputs/profiler/touch_check"
"$TOUCH" 3 "$OUT/touch-scratch" > "$OUT/touch-native.out"
for tool in memcheck helgrind; do
  step "Valgrind $tool: sample profiler (page touches)"
  rm -rf "$OUT/touch-$tool" && mkdir -p "$OUT/touch-$tool"
  env LD_PRELOAD="$BUILD/lib/libtierwise-pmu.so" TIERWISE_PMU_SOURCE=touch \
    TIERWISE_PMU_MIN_BYTES=16384 TIERWISE_PMU_OUT="$OUT/touch-$tool" \
    $VG --vex-iropt-register-updates=allregs-at-mem-access --tool=$tool \
    "$TOUCH" 3 "$OUT/touch-scratch" \
    > "$OUT/vg.out" 2> "$OUT/vg.err" || {
    cat "$OUT/vg.err"; echo "check-sanitizers: $tool found errors"; exit 1; }
  # (Valgrind's fork repeats the line printed before it: compared without)
  sort -u "$OUT/vg.out" | diff - <(sort -u "$OUT/touch-native.out") || {
    echo "check-sanitizers: touch_check's output changed under $tool"; exit 1; }
  python3 -c "import json, sys; p = json.load(open(sys.argv[1])); print('  sampled: %d pages armed, %d touched' % (p['armed'], p['faults'])); sys.exit(p['armed'] == 0)" "$OUT/touch-$tool/pmu.json" || {
    echo "check-sanitizers: no page sampled under $tool"; exit 1; }
done
step "all clean"
