# SPDX-License-Identifier: MIT
# Guest side of the KMEM-DAX node (sourced by test/numa/guest.sh and
# test/bench/numa_tiering_guest.sh; the host side is tw_kmem_dax in
# test/numa/kernel.sh): node 1's range is Soft Reserved, dax_hmem makes it
# dax0.0, kmem hot-adds it and its memory blocks are onlined into
# ZONE_NORMAL (online_kernel: with online_movable and no swap a first-touch
# run was OOM-killed, ZONE_MOVABLE cannot hold kernel allocations). Then
# transparent huge pages are turned off (with `always`, kcompactd
# soft-locked for 161 s under TCG with tiering on).
#
#   kmem_dax_setup MODDIR LOG
#       MODDIR holds the kernel's device_dax/dax_hmem/kmem .ko files (those not
#       built in); LOG gets what was done and what the machine then looks
#       like: the dax devices and their drivers, node 1's MemTotal, each
#       memory tier's nodelist (lines `memory_tierN NODELIST`). Returns 1 if
#       node 1 has no memory afterwards.
kmem_dax_setup() {
  local moddir=$1 log=$2 m b n=0 insmod=insmod
  command -v insmod > /dev/null || insmod="busybox insmod"  # no kmod on the host
  {
    for m in device_dax dax_hmem kmem; do
      if [ -e "$moddir/$m.ko" ]; then
        $insmod "$moddir/$m.ko" && echo "insmod $m" || echo "insmod $m failed"
      else
        echo "$m: built in"
      fi
    done
    ls /sys/bus/dax/devices/ 2>&1 | sed 's/^/dax devices: /'
    # device_dax claims dax0.0 first where it is loaded: unbind, then kmem
    if [ -e /sys/bus/dax/drivers/device_dax/dax0.0 ]; then
      echo dax0.0 > /sys/bus/dax/drivers/device_dax/unbind && echo "unbound dax0.0 from device_dax"
    fi
    echo dax0.0 > /sys/bus/dax/drivers/kmem/new_id && echo "dax0.0 -> kmem (new_id)"
    [ -e /sys/bus/dax/drivers/kmem/dax0.0 ] || echo dax0.0 > /sys/bus/dax/drivers/kmem/bind 2>&1
    echo "dax0.0 driver: $(readlink /sys/bus/dax/devices/dax0.0/driver 2>&1)"
    echo "dax0.0 target_node: $(cat /sys/bus/dax/devices/dax0.0/target_node 2>&1)"
    for b in /sys/devices/system/node/node1/memory[0-9]*; do
      [ -e "$b/state" ] || continue
      if [ "$(cat "$b/state")" = offline ]; then
        echo online_kernel > "$b/state" && n=$((n + 1))
      fi
    done
    echo "onlined $n memory blocks of node 1 (online_kernel)"
    for b in /sys/devices/system/node/node1/memory[0-9]*; do
      [ -e "$b/state" ] && echo "${b##*/} $(cat "$b/state") $(cat "$b/valid_zones" 2>/dev/null)"
    done | sort | uniq -c -f1 | head -4
    echo never > /sys/kernel/mm/transparent_hugepage/enabled
    echo "transparent_hugepage $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
    grep MemTotal /sys/devices/system/node/node1/meminfo
    for m in /sys/devices/virtual/memory_tiering/memory_tier*; do
      [ -r "$m/nodelist" ] && echo "${m##*/} $(cat "$m/nodelist")"
    done
    echo "demotion_enabled $(cat /sys/kernel/mm/numa/demotion_enabled 2>&1)"
  } >> "$log" 2>&1
  grep -q 'MemTotal: *[1-9]' /sys/devices/system/node/node1/meminfo 2> /dev/null
}
