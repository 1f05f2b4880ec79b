#!/bin/bash
# SPDX-License-Identifier: MIT
# Inside the yardstick's QEMU guest (test/bench/numa_tiering.py; booted
# like check-numa's, chrooted into the host's / over 9p) as
# `numa_tiering_guest.sh DIR`: makes node 1 a KMEM-DAX node
# (test/numa/kmem_dax.sh), then for each line `NAME MODE TARGET_KIB
# PROGRAM ARGS...` of DIR/runs: takes node 0's memory down to TARGET_KIB
# free with an mlocked `numactl --membind=0 numa_sample --hold` filler, sets
# the mode's kernel switches, runs PROGRAM under test/bench/numa_sample
# (pages of each object sampled during the kernel, /proc/vmstat counters)
# and leaves DIR/NAME.{samples,out,err,rc,mem,report.json}. DIR/env.sh names
# SRC, BUILD, MODDIR, INTERVAL_MS, COMMIT (the tree's, noted in NAME.mem) and,
# for the tierwise modes, PLACEMENT_<program>.
# Modes: first-touch (numa_balancing 0, no demotion), linux
# (numa_balancing=2 + demotion_enabled), damon (DAMON migrate_hot to node 0
# and migrate_cold to node 1, plus demotion; 6.11+), damon-auto (the same
# two schemes with quotas DAMON tunes toward node 0's use, as mtier.c; no
# demotion; 6.16+), tierwise-pair and tierwise-quad (2 and 4 instances of
# the program at once, each placed for its share of node 0 and limited to
# it), tierwise (the runtime
# with the host-made placement, numa_balancing 0), tierwise+linux,
# tierwise-sample (profiled with the sample backend, advised and run here,
# LLC_<program> the profile's --llc-size, SAMPLE_RUNS its --sample-runs).
set -u
dir=$1
source "$dir/env.sh"
export PATH=/usr/sbin:/usr/bin:/sbin:/bin TMPDIR=/dev/shm HOME=/root LANG=C.UTF-8
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
cd "$dir" || exit 1
sampler=$BUILD/test/bench/numa_sample
rtlib=$BUILD/lib/libtierwise-runtime.so
stamp() { echo "$(cut -d' ' -f1 /proc/uptime) $*" >> "$dir/timeline"; }
# a node's free memory: MemFree plus the free pages in the kernel's per-CPU
# lists (zoneinfo's pagesets `count`), which MemFree leaves out: on 6.12
# they auto-tune and held 6-16 MiB of node 0 during the programs' kernels
# (2-3.5 MiB on 6.1), and moved by up to 20 MiB under a filler's
# allocation, so that fillers aimed by MemFree alone missed by that much
pcp_kib() { awk -v n="$1," '/^Node/ {on = ($2 == n)} on && $1 == "count:" {p += $2} END {print p * 4}' /proc/zoneinfo; }
free_kib() { echo $(($(awk '/MemFree/ {print $4}' /sys/devices/system/node/node$1/meminfo) + $(pcp_kib $1))); }

stamp booted
source "$SRC/test/numa/kmem_dax.sh"
source "$SRC/test/numa/zones.sh"
kmem_dax_setup "$MODDIR" "$dir/kmem-dax.txt" || { echo "no KMEM-DAX node 1" > "$dir/failed"; exit 1; }
uname -r > "$dir/kernel"
stamp "kmem-dax set up"

# a memory cgroup for the fillers: DAMON works on physical addresses and
# migrate_cold moved the mlocked fillers to node 1 (node 0 541 MiB free after
# a run); its schemes filter the cgroup out. (Reclaim and demotion leave
# mlocked pages alone, NUMA balancing promotes only pages on slower nodes.)
if ! [ -e /sys/fs/cgroup/cgroup.controllers ]; then
  mount -t cgroup2 none /sys/fs/cgroup 2>> "$dir/kmem-dax.txt"
fi
echo +memory > /sys/fs/cgroup/cgroup.subtree_control 2>> "$dir/kmem-dax.txt"
mkdir -p /sys/fs/cgroup/tw-filler

# node ranges from their memory blocks (for DAMON's physical-address targets)
node_range() {
  local bs=$((0x$(cat /sys/devices/system/memory/block_size_bytes))) lo= hi= b id
  for b in /sys/devices/system/node/node$1/memory[0-9]*; do
    id=${b##*/memory}
    [ -z "$lo" ] || [ "$id" -lt "$lo" ] && lo=$id
    [ -z "$hi" ] || [ "$id" -gt "$hi" ] && hi=$id
  done
  echo $((lo * bs)) $(((hi + 1) * bs))
}

damon_off() {
  local a=/sys/kernel/mm/damon/admin/kdamonds
  # DAMON_STAT (on by default in Debian's 7.x: CONFIG_DAMON_STAT_ENABLED_DEFAULT)
  # holds DAMON: a kdamond of ours could not be turned on (EBUSY); damo's
  # tiering example turns it off the same way
  [ -w /sys/module/damon_stat/parameters/enabled ] &&
    echo N > /sys/module/damon_stat/parameters/enabled 2> /dev/null
  [ -d $a ] || return 0
  for k in $a/[0-9]*; do
    [ -e "$k/state" ] && [ "$(cat "$k/state")" = on ] && echo off > "$k/state"
  done
  echo 0 > $a/nr_kdamonds
}

# damon_kdamond K MODE: kdamond K (0: node 0's range, migrate_cold to node
# 1; 1: node 1's, migrate_hot to node 0) on physical addresses, its one
# scheme (in $s) set up but for its access pattern's counts and quotas;
# sampling 5 ms, aggregation 100 ms; the fillers' cgroup filtered out.
damon_kdamond() {
  local a=/sys/kernel/mm/damon/admin/kdamonds k=$1 c range
  if [ $k = 0 ]; then action=migrate_cold nid=1; else action=migrate_hot nid=0; fi
  range=($(node_range $k))
  c=$a/$k/contexts
  echo 1 > $c/nr_contexts
  c=$c/0
  echo paddr > $c/operations
  echo 5000 > $c/monitoring_attrs/intervals/sample_us
  echo 100000 > $c/monitoring_attrs/intervals/aggr_us
  echo 1000000 > $c/monitoring_attrs/intervals/update_us
  ctx=$c
  echo 10 > $c/monitoring_attrs/nr_regions/min
  echo 1000 > $c/monitoring_attrs/nr_regions/max
  echo 1 > $c/targets/nr_targets
  echo 1 > $c/targets/0/regions/nr_regions
  echo ${range[1]} > $c/targets/0/regions/0/end
  echo ${range[0]} > $c/targets/0/regions/0/start
  echo 1 > $c/schemes/nr_schemes
  s=$c/schemes/0
  echo $action > $s/action
  echo $nid > $s/target_nid
  # (every range of a new scheme's access pattern starts as [0, 0])
  echo 4096 > $s/access_pattern/sz/min
  echo $((1 << 40)) > $s/access_pattern/sz/max
  echo 4294967295 > $s/access_pattern/age/max
  # the fillers' memory is not the program's: filtered out
  echo $2 > $s/filters/nr_filters
  echo memcg > $s/filters/0/type
  echo /tw-filler > $s/filters/0/memcg_path
  echo Y > $s/filters/0/matching
  [ -e $s/filters/0/allow ] && echo N > $s/filters/0/allow
  echo 1000 > $s/quotas/reset_interval_ms
  echo none > $s/watermarks/metric
  where="kdamond $k: node $k [${range[0]}, ${range[1]}) $action -> node $nid"
}

# damon_on: two kdamonds on physical addresses, as the kernel's "memory
# tiering with DAMON" setup: node 0's range with migrate_cold to node 1
# (regions not accessed for 2 s), node 1's with migrate_hot to node 0
# (regions accessed in >= 5% of the samples). Quotas 256 MiB per second
# each.
damon_on() {
  local a=/sys/kernel/mm/damon/admin/kdamonds k s action nid ctx where
  [ -d $a ] || { echo "no DAMON sysfs" >> "$dir/damon.txt"; return 1; }
  damon_off
  echo 2 > $a/nr_kdamonds
  for k in 0 1; do
    damon_kdamond $k 1
    if [ $action = migrate_cold ]; then
      echo 0 > $s/access_pattern/nr_accesses/min
      echo 0 > $s/access_pattern/nr_accesses/max
      echo 20 > $s/access_pattern/age/min
    else
      echo 1 > $s/access_pattern/nr_accesses/min
      echo 20 > $s/access_pattern/nr_accesses/max
      echo 0 > $s/access_pattern/age/min
    fi
    echo $((256 << 20)) > $s/quotas/bytes
    echo on > $a/$k/state
    echo "$where: $(cat $a/$k/state)" >> "$dir/damon.txt"
  done
}

# damon_auto_on: DAMON's self-tuned tiering (kernel 6.16+), as the kernel's
# samples/damon/mtier.c and damo's tiering example (damo
# scripts/mem_tier.sh) set it up: node 0's range with migrate_cold to node
# 1 for regions with no access, young pages rejected, node 1's with
# migrate_hot to node 0 for regions accessed in >= 5% of the samples, young
# pages allowed; apply interval 1 s; a 200 MB/s quota each whose size DAMON
# tunes toward a goal on node 0: node_mem_free_bp 0.5% (cold out) and
# node_mem_used_bp 99.7% (hot in); sampling self-tuned toward 4% of
# accesses in 3 aggregations (5 ms - 10 s). No demotion, no NUMA balancing.
damon_auto_on() {
  local a=/sys/kernel/mm/damon/admin/kdamonds k s action nid ctx where f
  [ -d $a ] || { echo "no DAMON sysfs" >> "$dir/damon.txt"; return 1; }
  damon_off
  echo 2 > $a/nr_kdamonds
  for k in 0 1; do
    damon_kdamond $k 2
    f=$ctx/monitoring_attrs/intervals/intervals_goal
    if [ -d $f ]; then
      echo 400 > $f/access_bp
      echo 3 > $f/aggrs
      echo 5000 > $f/min_sample_us
      echo 10000000 > $f/max_sample_us
    fi
    [ -e $s/apply_interval_us ] && echo 1000000 > $s/apply_interval_us
    echo 0 > $s/access_pattern/age/min
    if [ $action = migrate_cold ]; then
      echo 0 > $s/access_pattern/nr_accesses/min
      echo 0 > $s/access_pattern/nr_accesses/max
      f=N
    else # 5% of the samples of an aggregation (20 at 5 ms / 100 ms)
      echo 1 > $s/access_pattern/nr_accesses/min
      echo 4294967295 > $s/access_pattern/nr_accesses/max
      f=Y
    fi
    echo young > $s/filters/1/type
    echo Y > $s/filters/1/matching
    [ -e $s/filters/1/allow ] && echo $f > $s/filters/1/allow
    echo $((200 * 1000 * 1000)) > $s/quotas/bytes
    echo 1 > $s/quotas/goals/nr_goals
    if [ $action = migrate_cold ]; then
      echo node_mem_free_bp > $s/quotas/goals/0/target_metric
      echo 50 > $s/quotas/goals/0/target_value
    else
      echo node_mem_used_bp > $s/quotas/goals/0/target_metric
      echo 9970 > $s/quotas/goals/0/target_value
    fi
    echo 0 > $s/quotas/goals/0/nid
    echo on > $a/$k/state
    echo "$where, goal $(cat $s/quotas/goals/0/target_metric) $(cat $s/quotas/goals/0/target_value): $(cat $a/$k/state)" >> "$dir/damon.txt"
  done
}

# damon_stats: what each kdamond's scheme tried and applied
damon_stats() {
  local a=/sys/kernel/mm/damon/admin/kdamonds k s
  [ -d $a ] || return 0
  for k in $a/[0-9]*; do
    [ -e "$k/state" ] || continue
    echo update_schemes_stats > "$k/state" 2> /dev/null
    echo update_schemes_effective_quotas > "$k/state" 2> /dev/null
    s=$k/contexts/0/schemes/0
    echo "${k##*/} $(cat $s/action): tried $(cat $s/stats/nr_tried) ($(cat $s/stats/sz_tried) B), applied $(cat $s/stats/nr_applied) ($(cat $s/stats/sz_applied) B), quota exceeded $(cat $s/stats/qt_exceeds)$([ -e $s/quotas/goals/0/target_metric ] && echo ", goal $(cat $s/quotas/goals/0/target_metric) $(cat $s/quotas/goals/0/target_value), effective quota $(cat $s/quotas/effective_bytes 2> /dev/null) B")"
  done
}

# switches MODE: the kernel's tiering switches of a mode
switches() {
  local bal=0 dem=false
  case $1 in
    linux | tierwise+linux) bal=2 dem=true ;;
    damon) dem=true ;;
  esac
  damon_off
  echo $bal > /proc/sys/kernel/numa_balancing
  echo $dem > /sys/kernel/mm/numa/demotion_enabled
  [ $1 = damon ] && damon_on
  [ $1 = damon-auto ] && damon_auto_on
  echo "numa_balancing=$(cat /proc/sys/kernel/numa_balancing) demotion_enabled=$(cat /sys/kernel/mm/numa/demotion_enabled)"
}

while read -r name mode target prog args; do
  [ -n "$name" ] || continue
  stamp "start $name"
  rm -f "$name".*
  switches first-touch > /dev/null
  sync
  echo 3 > /proc/sys/vm/drop_caches
  envs=() envb=() others= bpids=()
  case $mode in
    tierwise | tierwise+linux)
      pl=PLACEMENT_${prog//-/_}
      # shellcheck disable=SC2206
      envs=(env LD_PRELOAD="$rtlib" TIERWISE_PLACEMENT="${!pl}" $RUNTIME_ENV TIERWISE_REPORT="$dir/$name.report.json")
      ;;
    tierwise-sample) # the user's whole flow in this guest, on this run's
      # scale: `tierwise profile --backend sample` of the program (node 0
      # not yet limited), `tierwise advise` for TARGET there, then the run
      # with that placement
      llc=LLC_${prog//-/_}
      t0=$(cut -d' ' -f1 /proc/uptime)
      rm -rf "$name.prof"
      # shellcheck disable=SC2086
      "$BUILD/bin/tierwise" profile --backend sample --roi markers --sample-runs "${SAMPLE_RUNS:-1}" --llc-size "${!llc}" -o "$dir/$name.prof" -- \
        "$BUILD/examples/$prog" $args < /dev/null > "$name.profile.out" 2> "$name.profile.err"
      echo "profile rc $? $(awk -v t0="$t0" '{printf "%.1f s", $1 - t0}' /proc/uptime)" > "$name.profile.log"
      "$BUILD/bin/tierwise" advise "$dir/$name.prof" --tiers kmem --dram-budget "${target}K" \
        -o "$dir/$name.placement.json" > "$name.advise.log" 2>&1
      echo "advise rc $?" >> "$name.profile.log"
      sync
      echo 3 > /proc/sys/vm/drop_caches
      # shellcheck disable=SC2206
      envs=(env LD_PRELOAD="$rtlib" TIERWISE_PLACEMENT="$dir/$name.placement.json" $RUNTIME_ENV
        TIERWISE_REPORT="$dir/$name.report.json")
      ;;
    tierwise-pair | tierwise-quad) # 2 (4) instances at once, each placed
      # for its share of node 0 and limited to it (the room over 2 (4)
      # local processes); the others are NAME.b (.c, .d)
      k=2 others=b
      [ "$mode" = tierwise-quad ] && k=4 others="b c d"
      pl=PLACEMENT_PART${k}_${prog//-/_}
      # shellcheck disable=SC2206
      envs=(env LD_PRELOAD="$rtlib" TIERWISE_PLACEMENT="${!pl}" TIERWISE_DRAM_LIMIT=auto
        TIERWISE_LOCAL_RANKS=$k $RUNTIME_ENV TIERWISE_REPORT="$dir/$name.report.json")
      envb=("${envs[@]}")
      ;;
  esac
  # warm-up: the program's and (tierwise modes) the runtime's files are read
  # into the page cache now, before node 0's room is measured, so that the
  # libraries a mode loads do not take the program's DRAM
  "${envs[@]}" "$BUILD/examples/$prog" -h < /dev/null > /dev/null 2>&1
  "${envs[@]}" "$sampler" 2> /dev/null
  rm -f "$name.report.json"
  # the fillers: node 0 down to TARGET KiB free (free_kib). A first one leaves 16 MiB
  # more (its page tables and the kernel's own allocations take some), then
  # each next one, after a second for node 0's free count to settle, takes
  # what is left above the target (the second leaves 2 MiB of it): a single
  # top-up missed the target by up to 7.5 MiB either way on 6.12 (numa-r5),
  # by 0.6 MiB on 6.1. Stops within 256 KiB above the target; `free_steps_kib`
  # in NAME.mem is node 0's free memory before each filler and at the end.
  # ABOVE_WMARK=1: the target is room above what the page allocator keeps
  # from a program in node 0's zones (their low watermarks and
  # lowmem_reserve: below them it falls back to node 1), as the runtime's
  # room counts it (test/numa/zones.sh)
  if [ "${ABOVE_WMARK:-0}" = 1 ]; then
    target=$((target + $(zone_not_room_kib)))
  fi
  f=/dev/shm/$name.fill
  rm -f "$f" && mkfifo "$f"
  fills= steps=
  for k in 1 2 3 4 5 6; do
    [ $k = 1 ] || sleep 1
    free=$(free_kib 0)
    steps="$steps $free"
    over=$((free - target))
    if [ $k = 1 ]; then
      fill=$((over - 16384))
    elif [ $over -le 256 ]; then
      break
    elif [ $k = 2 ] && [ $over -gt 4096 ]; then
      fill=$((over - 2048))
    else
      fill=$over
    fi
    [ $fill -gt 0 ] || fill=0
    # (7>&-: a filler holding the fifo's write end would never see its end)
    # (in the memory cgroup /tw-filler: DAMON's schemes filter it out)
    sh -c 'echo $$ > /sys/fs/cgroup/tw-filler/cgroup.procs 2> /dev/null; exec "$@"' sh \
      numactl --membind=0 "$sampler" --hold ${fill}K < "$f" 7>&- > "$name.fill$k.out" 2>&1 &
    fpids[$k]=$!
    [ $k = 1 ] && exec 7> "$f"
    for i in $(seq 1200); do grep -q '^held' "$name.fill$k.out" 2> /dev/null && break; sleep 0.1; done
    fills="$fills $fill"
  done
  {
    echo "commit ${COMMIT:-?}"
    echo "target_kib $target"
    echo "filler_kib$fills"
    echo "free_steps_kib$steps"
    echo "free_before_kib N0=$(free_kib 0) N1=$(free_kib 1)"
    echo "pcp_before_kib N0=$(pcp_kib 0) N1=$(pcp_kib 1)"
    echo "switches $(switches "$mode")"
    echo "runtime_env ${RUNTIME_ENV:-}"
  } > "$name.mem"
  for x in $others; do # the other instances (tierwise-pair, -quad)
    envb[${#envb[@]}-1]=TIERWISE_REPORT="$dir/$name.$x.report.json"
    # shellcheck disable=SC2086
    "$sampler" -i "$INTERVAL_MS" -o "$name.$x.samples" -e "$name.$x.err" -- \
      "${envb[@]}" "$BUILD/examples/$prog" $args -v < /dev/null 7>&- > "$name.$x.out" &
    bpids+=("$x:$!")
  done
  # shellcheck disable=SC2086
  "$sampler" -i "$INTERVAL_MS" -o "$name.samples" -e "$name.err" -- \
    "${envs[@]}" "$BUILD/examples/$prog" $args -v < /dev/null 7>&- > "$name.out"
  echo $? > "$name.rc"
  for xp in "${bpids[@]}"; do
    wait "${xp#*:}"
    echo $? > "$name.${xp%%:*}.rc"
  done
  echo "free_after_kib N0=$(free_kib 0) N1=$(free_kib 1)" >> "$name.mem"
  case $mode in damon | damon-auto) damon_stats >> "$name.mem" ;; esac
  exec 7>&-
  wait "${fpids[@]}"
  rm -f "$f"
  switches first-touch > /dev/null
  stamp "end $name"
done < "$dir/runs"
dmesg > dmesg.txt
stamp done
touch done
