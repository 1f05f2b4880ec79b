#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 25's install check (.ci/run, after make test): `make install
# PREFIX=$tmp`, then, with the source tree (and the build tree in it) moved
# away, the installed tierwise on Inputs/prog.c built with `pkg-config --cflags
# --libs tierwise`: doctor, config, profile --backend sim, advise, run
# (checksum equal to the unplaced run, bytes in pmem), rewrite (the rebuilt
# program, without LD_PRELOAD, puts the same site in pmem; same checksum);
# then the prefix copied and moved elsewhere (check-relocate.sh).
# The tree is moved back on exit, whatever happens. ~1-3 min.
#   test/install/check-install.sh [BUILD_DIR]   (default: build)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$src" && realpath -m "${1:-build}")
tmp=$(mktemp -d /tmp/tw-install.XXXXXX)
prefix=$tmp/prefix
work=$tmp/work
moved=$src.tw-install-away
step() { echo "check-install: $*"; }
fail() { echo "check-install: FAIL: $*" >&2; exit 1; }

step "make install PREFIX=$prefix"
make -C "$src" --no-print-directory install PREFIX="$prefix" BUILD="$build" >"$tmp/install.log" 2>&1 ||
  { tail -30 "$tmp/install.log"; fail "make install"; }
mkdir -p "$work"
cp "$src/test/install/Inputs/prog.c" "$work/"
cp "$src/test/install/check-relocate.sh" "$tmp/"
case "$build/" in "$src/"*) ;; *) fail "$build is outside $src: it would not be moved away" ;; esac
if grep -rls "$src" "$prefix/bin/tierwise" "$prefix/lib/pkgconfig" "$prefix/lib/tierwise/python"; then
  fail "the installed files above name $src"
fi

# From here on neither tree is where it was; nothing may name them.
# Moved away (renamed); where the tree is a mount point and cannot be
# renamed, hidden under an empty tmpfs instead.
[ -e "$moved" ] && fail "$moved exists (an earlier run stopped half-way?)"
if mv "$src" "$moved" 2>/dev/null; then
  trap 'mv "$moved" "$src"; rm -rf "$tmp"' EXIT
  step "moved $src away"
elif mount -t tmpfs -o size=1M,mode=0700 tierwise-install-check "$src"; then
  trap 'cd /; umount "$src"; rm -rf "$tmp"' EXIT
  step "hid $src under an empty tmpfs"
else
  fail "cannot move $src away (rename and tmpfs mount both failed)"
fi
[ ! -e "$src/Makefile" ] || fail "$src is still there"
cd "$work"
export PATH=$prefix/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
unset TIERWISE_BUILD_DIR PYTHONPATH VIRTUAL_ENV PYTHONHOME
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
[ "$(command -v tierwise)" = "$prefix/bin/tierwise" ] || fail "tierwise is not $prefix/bin/tierwise"

step "tierwise doctor"
tierwise doctor >doctor.txt 2>&1 || { cat doctor.txt; fail "doctor"; }
grep -q "sim tool: valgrind tool built" doctor.txt || { cat doctor.txt; fail "doctor: no sim tool"; }

step "pkg-config --cflags --libs tierwise; tierwise config --cflags --libs"
pc=$(pkg-config --cflags --libs tierwise)
cfg=$(tierwise config --cflags --libs)
echo "  pkg-config: $pc"
echo "  config:     $cfg"
[ "$cfg" = "-I$prefix/include -L$prefix/lib -Wl,-rpath,$prefix/lib -Wl,--push-state,--no-as-needed -ltierwise -Wl,--pop-state" ] ||
  fail "tierwise config names other paths than $prefix"
[ -f "$(pkg-config --variable=includedir tierwise)/tierwise.h" ] || fail "pkg-config: no tierwise.h"
# The unmodified program needs the header only (its ROI markers); the
# rewritten one below links libtierwise.
# shellcheck disable=SC2086 # flags are words
cc -O1 -g prog.c $(pkg-config --cflags tierwise) -o prog || fail "build prog.c with pkg-config's --cflags"
plain=$(./prog | sed -n 's/^checksum: //p')
[ -n "$plain" ] || fail "prog printed no checksum"

step "tierwise profile --backend sim --roi markers"
tierwise profile --backend sim --roi markers --llc-size 256K --llc-ways 16 \
  --l1-size 32K --l1-ways 8 --line-size 64 -o prof -- ./prog >profile.txt 2>&1 ||
  { cat profile.txt; fail "profile"; }
grep -q "checksum: $plain" profile.txt || fail "profiled run: other checksum"
for f in make_hot make_cold make_warm; do
  grep -q "$f" prof/sites.csv || fail "profile: no site in $f"
done

step "tierwise advise --dram-budget 2M"
tierwise advise prof --dram-budget 2M -o placement.json >advise.txt 2>&1 || { cat advise.txt; fail "advise"; }
python3 - placement.json <<'PY' || fail "placement: not make_hot in DRAM and the other two in pmem"
import json, sys
p = json.load(open(sys.argv[1]))
tier = {f: s["tier"] for s in p["sites"] for f in ("make_hot", "make_cold", "make_warm") if f in s.get("location", "")}
print("  placement:", tier)
sys.exit(0 if tier == {"make_hot": "dram", "make_cold": "pmem", "make_warm": "pmem"} else 1)
PY

step "tierwise run --placement"
tierwise run --placement placement.json --report run.json -- ./prog >run.txt 2>&1 || { cat run.txt; fail "run"; }
grep -q "checksum: $plain" run.txt || { cat run.txt; fail "placed run: other checksum than $plain"; }
report_pmem() { # report: bytes in pmem at the make_cold and make_warm sites
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
b = {f: s["bytes"].get("pmem", 0) for s in r["sites"] for f in ("make_cold", "make_warm") if f in s.get("location", "")}
print("  pmem bytes:", b)
sys.exit(0 if len(b) == 2 and min(b.values()) >= 2 << 20 else 1)
PY
}
report_pmem run.json || fail "run report: make_cold/make_warm not in pmem"

step "tierwise rewrite, rebuild, run without LD_PRELOAD"
# shellcheck disable=SC2086
tierwise rewrite --placement placement.json --binary prog -i prog.c -- $(pkg-config --cflags tierwise) \
  >rewrite.txt 2>&1 || { cat rewrite.txt; fail "rewrite"; }
[ "$(grep -c "TW_TIER_PMEM" prog.c)" = 2 ] || { cat rewrite.txt; fail "rewrite: not two pmem sites in prog.c"; }
# shellcheck disable=SC2086
cc -O1 -g prog.c $pc -o prog-rewritten || fail "rebuild the rewritten prog.c with pkg-config's flags"
# (tierwise.pc names the prefix from its own place, ${pcfiledir}/../..: the
# library's path as ldd prints it is that, not normalized)
loaded=$(ldd prog-rewritten | awk '$1 == "libtierwise.so" {print $3}')
[ -n "$loaded" ] && [ "$(realpath "$loaded")" = "$(realpath "$prefix/lib/libtierwise.so")" ] ||
  fail "prog-rewritten does not load $prefix/lib/libtierwise.so (it loads '$loaded')"
mkdir -p pmem
out=$(TIERWISE_REPORT=$work/rewritten.json TIERWISE_PMEM_DIR=$work/pmem ./prog-rewritten)
[ "$out" = "checksum: $plain" ] || fail "rewritten prog: $out, not $plain"
python3 - rewritten.json <<'PY' || fail "rewritten prog: nothing in pmem"
import json, sys
t = json.load(open(sys.argv[1]))["totals"]
print("  rewritten totals:", t)
sys.exit(0 if t.get("pmem", 0) >= 4 << 20 else 1)
PY
bash "$tmp/check-relocate.sh" "$prefix" # a copy moved elsewhere; a hostile PYTHONPATH
step "ok: installed tierwise works without $src"
