#!/bin/sh
# SPDX-License-Identifier: MIT
# foreign-alloc.test's matrix: each program linked with another allocator
# (tw_foreign_{c,cc}_ALLOC, inputs.cmake) run unplaced, then with the
# runtime preloaded under each placement kind - none (pass-through), an
# all-DRAM placement, its make_big site in pmem, the same site with a
# 64 KiB DRAM head - and one line per run: `ALLOC LANG KIND rc=N same|DIFF
# pmem=BYTES allocator=LIB stood_down=yes|no` (pmem: the report's pmem
# total; allocator: the report's "allocator" library, or none).
#   foreign_matrix.sh RTIN RTLIB TWCHECK OUT ALLOC...
rtin=$1 rtlib=$2 twcheck=$3 out=$4
shift 4
mkdir -p "$out/pmem"
printf '{"format": "tierwise-placement", "version": 1, "default_tier": "dram", "sites": []}\n' > "$out/dram.json"
for alloc in "$@"; do
  for lang in c cc; do
    prog=$rtin/tw_foreign_${lang}_$alloc
    [ $lang = c ] && callee=malloc || callee=_Zna
    "$prog" > "$out/$alloc.$lang.plain" 2>/dev/null
    $twcheck callsite "$prog" make_big $callee pmem -o "$out/$alloc.$lang.site.json"
    $twcheck callsite "$prog" make_big $callee pmem 65536 -o "$out/$alloc.$lang.head.json"
    for kind in none dram site head; do
      base=$out/$alloc.$lang.$kind
      rm -f "$base.report.json"
      if [ $kind = none ]; then
        env LD_PRELOAD="$rtlib" "$prog" > "$base.out" 2> "$base.err"
      else
        [ $kind = dram ] && pl=$out/dram.json || pl=$out/$alloc.$lang.$kind.json
        env LD_PRELOAD="$rtlib" TIERWISE_PLACEMENT="$pl" TIERWISE_PMEM_DIR="$out/pmem" \
          TIERWISE_REPORT="$base.report.json" "$prog" > "$base.out" 2> "$base.err"
      fi
      rc=$?
      cmp -s "$out/$alloc.$lang.plain" "$base.out" && same=same || same=DIFF
      facts="pmem=- allocator=- stood_down=-"
      if [ -f "$base.report.json" ]; then
        facts=$(python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
a = r.get("allocator")
print("pmem=%d allocator=%s stood_down=%s" % (r["totals"].get("pmem", 0),
      a["library"] if a else "none", "yes" if r.get("stood_down") else "no"))' "$base.report.json")
      fi
      echo "$alloc $lang $kind rc=$rc $same $facts"
    done
  done
done
