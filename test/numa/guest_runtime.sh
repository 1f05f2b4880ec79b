# SPDX-License-Identifier: MIT
# The runtime's cases of the check-numa guest (sourced by guest.sh, which
# defines run/place/stamp; judged by check_runtime.py): numa_probe under
# LD_PRELOAD with placements that name NUMA tiers. plain (node 1 = 1 GiB):
# numa:1, kmem (no MEMKIND_DAX_KMEM_NODES), the cxl preset's advice made in
# the guest, a 4 MiB DRAM head, a fork child (its copies and a new object
# of the placed site on node 1), TIERWISE_DRAM_LIMIT falling
# back to numa:1. hmat-small (node 1 = 256 MiB): a 300 MiB object for
# numa:1 (more than the node has), and node 1 filled by another process
# between the allocation of a 200 MiB numa:1 object and its first touch.
# kmem-dax (node 1 = 256 MiB of KMEM-DAX memory): kmem, kmem with a 4 MiB
# DRAM head, and node 1 filled between the allocation of a 200 MiB kmem
# object and its first touch.

# fill_case NAME HOLD_MIB -- PROBE_ARGS...: numa_probe -w under
# $FILL_PLACEMENT (default numa1.json);
# once it has allocated, `numactl --membind=1 numa_probe --hold HOLD_MIB`
# takes node 1's memory, then the probe touches its objects.
fill_case() {
  local name=$1 hold=$2 f=/dev/shm/$1.in h=/dev/shm/$1.hold
  shift 3
  stamp "start $name"
  rm -f "$f" "$h" && mkfifo "$f" "$h"
  env LD_PRELOAD="$rtlib" TIERWISE_PLACEMENT="${FILL_PLACEMENT:-$HOST/numa1.json}" \
    TIERWISE_REPORT="$OUT/$name.report.json" \
    "$probe" -w -o "$OUT/$name.objs" "$@" < "$f" > "$name.out" 2> "$name.err" &
  local pid=$! hpid i
  exec 7> "$f"
  for i in $(seq 600); do grep -q '^allocated' "$name.out" 2> /dev/null && break; sleep 0.1; done
  grep MemFree /sys/devices/system/node/node1/meminfo > "$name.free-before"
  numactl --membind=1 "$probe" --hold "$hold" < "$h" > "$name.hold.out" 2> "$name.hold.err" &
  hpid=$!
  exec 8> "$h"
  for i in $(seq 600); do grep -q '^held' "$name.hold.out" 2> /dev/null && break; sleep 0.1; done
  grep MemFree /sys/devices/system/node/node1/meminfo > "$name.free-held"
  echo go >&7
  exec 7>&-
  wait $pid
  echo $? > "$name.rc"
  exec 8>&-
  wait $hpid
  echo $? > "$name.hold.rc"
  rm -f "$f" "$h"
  stamp "end $name"
}

runtime_cases() {
  case $CONFIG in
    plain)
      place numa1 "$HOST/numa1.json" --
      place kmem "$HOST/kmem.json" --
      [ -s "$OUT/cxl.json" ] && place cxl "$OUT/cxl.json" --
      place head "$HOST/head.json" --
      # the fork child allocates at make_a from another line of main: a
      # placement naming make_a's own frame only (a stack prefix) covers it
      sed -E 's/("stack": "[^;"]*)[^"]*"/\1"/' "$HOST/numa1.json" > "$OUT/numa1-frame.json"
      place fork "$OUT/numa1-frame.json" -- -f
      place limit "$HOST/numa1.json" TIERWISE_DRAM_LIMIT=8M --
      ;;
    hmat-small)
      run big-ref -- "$probe" -a 300 -o "$OUT/big-ref.objs"
      place big "$HOST/numa1.json" -- -a 300
      run fill-ref -- "$probe" -a 200 -o "$OUT/fill-ref.objs"
      fill_case fill 150 -- -a 200
      ;;
    kmem-dax)
      run unplaced -- "$probe" -o "$OUT/unplaced.objs"
      place kmem "$HOST/kmem.json" --
      place kmem-head "$HOST/kmem-head.json" --
      run fill-ref -- "$probe" -a 200 -o "$OUT/fill-ref.objs"
      FILL_PLACEMENT=$HOST/kmem.json fill_case kmem-fill 150 -- -a 200
      ;;
  esac
}
