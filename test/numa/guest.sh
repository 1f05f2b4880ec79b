#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs inside the check-numa guest (chrooted into the host's / over 9p) as
# `guest.sh OUTDIR`; OUTDIR/env.sh (written by check-numa.sh) names the
# source tree, the build, the host-made placements and the configuration.
# It only RUNS things and keeps their raw output in OUTDIR (TCG is slow:
# C programs under LD_PRELOAD, few Python calls); test/numa/check.py judges
# the results on the host. Each case NAME leaves NAME.out (stdout), NAME.err,
# NAME.rc, NAME.objs (numa_probe's page counts) and NAME.report.json.
set -u
source "$1/env.sh"
export PATH=/usr/sbin:/usr/bin:/sbin:/bin TMPDIR=/dev/shm HOME=/root LANG=C.UTF-8
cd "$OUT" || exit 1
probe=$BUILD/test/numa/numa_probe
rtlib=$BUILD/lib/libtierwise-runtime.so
# cli NAME VERB ARGS... [, NAME VERB ARGS...]: tierwise commands in one
# Python process (guest_cli.py), leaving NAME.{out,err,rc} like run().
cli() {
  TIERWISE_BUILD_DIR=$BUILD PYTHONPATH=$SRC/advisor "$SRC/.venv/bin/python" \
    "$SRC/test/numa/guest_cli.py" "$@" < /dev/null > cli.log 2>&1
}
stamp() { echo "$(cut -d' ' -f1 /proc/uptime) $*" >> "$OUT/timeline"; }

# run NAME [VAR=VALUE...] -- COMMAND...   (stdin from /dev/null)
run() {
  local name=$1 envs=()
  shift
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  stamp "start $name"
  env "${envs[@]}" "$@" < /dev/null > "$name.out" 2> "$name.err"
  echo $? > "$name.rc"
  stamp "end $name"
}
# place NAME PLACEMENT [VAR=VALUE...] -- PROBE_ARGS...: numa_probe under the runtime
place() {
  local name=$1 pl=$2
  shift 2
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  run "$name" LD_PRELOAD="$rtlib" TIERWISE_PLACEMENT="$pl" TIERWISE_REPORT="$OUT/$name.report.json" \
    "${envs[@]}" -- "$probe" -o "$OUT/$name.objs" "$@"
}

stamp booted
if [ "$CONFIG" = kmem-dax ]; then  # node 1 becomes a KMEM-DAX node (test/numa/kmem_dax.sh)
  source "$SRC/test/numa/kmem_dax.sh"
  kmem_dax_setup "$MODDIR" "$OUT/kmem-dax.txt"
  stamp "kmem-dax set up"
fi
# Automatic NUMA balancing (on by default with two nodes) unmaps pages at
# random times to sample accesses (move_pages then says -EFAULT for them)
# and migrates default-policy pages towards the CPU's node: off, so that
# where a page lies is what the placement (or first touch) decided.
echo "numa_balancing was $(cat /proc/sys/kernel/numa_balancing)" > balancing.txt
echo 0 > /proc/sys/kernel/numa_balancing
# What the machine looks like.
numactl -H > numactl.txt 2>&1
for n in /sys/devices/system/node/node[0-9]*; do
  echo "${n##*/} cpus=[$(cat $n/cpulist)] distance=[$(cat $n/distance)]"
  grep MemTotal "$n/meminfo"
  for acc in access0 access1; do
    for f in read_latency write_latency read_bandwidth write_bandwidth; do
      [ -r "$n/$acc/initiators/$f" ] && echo "  hmat $acc $f $(cat "$n/$acc/initiators/$f")"
    done
  done
done > nodes.txt

case $CONFIG in
  plain)
    run unplaced -- "$probe" -o "$OUT/unplaced.objs"
    run membind -- numactl --membind=1 "$probe" -o "$OUT/membind.objs"
    # The few Python calls, in one process: doctor, the cxl preset's advice
    # made here (it resolves to this machine's memory-only node), --tiers
    # auto without HMAT.
    cli doctor doctor , \
      advise-cxl advise "$HOST/simprof" --tiers cxl --dram-budget 1.5M -o "$OUT/cxl.json" , \
      advise-auto advise "$HOST/simprof" --tiers auto --dram-budget 1.5M -o "$OUT/auto.json"
    ;;
  kmem-dax) ;;  # no Python: the runtime's cases only (guest_runtime.sh)
  hmat-small)
    cli advise-auto advise "$HOST/simprof" --tiers auto --dram-budget 1.5M -o "$OUT/auto.json"
    ;;
esac
# The runtime's NUMA tiers (test/numa/guest_runtime.sh, check_runtime.py).
source "$SRC/test/numa/guest_runtime.sh"
runtime_cases
dmesg > dmesg.txt
stamp done
touch done
