#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 36 item 9 (called by check-install.sh on its install; or by hand):
# an installed PREFIX copied and moved elsewhere works - --version, doctor,
# config (naming the new prefix), pkg-config (its files there), run - also
# with a hostile PYTHONPATH (a numpy.py and json.py that exit) and from a
# link to bin/tierwise; one whose venv is broken fails in one line saying how
# to reinstall. The original PREFIX is left as it was.
#   test/install/check-relocate.sh PREFIX
set -euo pipefail
orig=$(cd "$1" && pwd)
tmp=$(mktemp -d /tmp/tw-relocate.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
step() { echo "check-relocate: $*"; }
fail() { echo "check-relocate: FAIL: $*" >&2; exit 1; }
cp -a "$orig" "$tmp/copied"
mv "$tmp/copied" "$tmp/moved"
p=$tmp/moved
hostile=$tmp/hostile
mkdir -p "$hostile" "$tmp/work"
for m in numpy json argparse; do echo 'raise SystemExit("hostile module imported")' >"$hostile/$m.py"; done
cd "$tmp/work"
unset TIERWISE_BUILD_DIR TIERWISE_PREFIX VIRTUAL_ENV PYTHONHOME
export PYTHONPATH=$hostile

step "$p/bin/tierwise --version, doctor (PYTHONPATH=$hostile)"
"$p/bin/tierwise" --version | grep -q '^tierwise ' || fail "--version"
"$p/bin/tierwise" doctor >doctor.txt 2>&1 || { cat doctor.txt; fail "doctor"; }
step "config names $p"
cfg=$("$p/bin/tierwise" config --cflags --libs)
[[ "$cfg" == "-I$p/include -L$p/lib "* ]] || fail "config: $cfg"
[ -f "$(PKG_CONFIG_PATH=$p/lib/pkgconfig pkg-config --variable=includedir tierwise)/tierwise.h" ] ||
  fail "pkg-config: no tierwise.h under the moved prefix"
step "run --placement P -- /bin/true, and through a link to bin/tierwise"
echo '{"format": "tierwise-placement", "version": 1, "default_tier": "dram", "sites": []}' >p.json
"$p/bin/tierwise" run --placement p.json -- /bin/true 2>run.txt || { cat run.txt; fail "run"; }
grep -q "tierwise run: dram" run.txt || { cat run.txt; fail "run: no summary"; }
ln -s "$p/bin/tierwise" tw-link
./tw-link config --cflags | grep -q -- "-I$p/include" || fail "through a link: not $p"
# the program still gets the user's PYTHONPATH
"$p/bin/tierwise" run --placement p.json -- sh -c 'echo "PYTHONPATH=$PYTHONPATH"' 2>/dev/null |
  grep -qx "PYTHONPATH=$hostile" || fail "run: the program lost PYTHONPATH"

step "profile --backend alloc, advise (pandas and numpy from the venv, not PYTHONPATH)"
"$p/bin/tierwise" profile --backend alloc -o prof -- "$p/lib/tierwise/examples/bfs" -g 6 >prof.txt 2>&1 ||
  { cat prof.txt; fail "profile"; }
"$p/bin/tierwise" advise prof --policy size --dram-budget 20% -o placed.json >advise.txt 2>&1 ||
  { cat advise.txt; fail "advise"; }

step "a broken venv: one line saying how to reinstall"
rm "$p/lib/tierwise/venv/bin/python"
if "$p/bin/tierwise" --version >out.txt 2>err.txt; then fail "ran without its venv"; fi
[ "$(wc -l <err.txt)" = 1 ] && grep -q "reinstall it with: make install PREFIX=$p" err.txt ||
  { cat err.txt; fail "broken venv: not one line naming the reinstall"; }
step "ok: a moved prefix works, a hostile PYTHONPATH changes nothing"
