#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make check-numa`: the checks that need a real two-node NUMA kernel. Boots
# Debian 12's stock kernel under QEMU (TCG: a stock kernel hangs under KVM on
# these machines) with node 0 = 2 CPUs + 1 GiB and node 1 = memory only (like
# a CXL expander or KMEM-DAX PMem), the host's / shared over virtio-9p, and
# runs test/numa/guest.sh inside; the guest writes its raw results (program
# outputs, numa_maps counts, run reports, doctor/advise output) into
# BUILD/numa/out/CONFIG/ over 9p, and test/numa/check.py judges them here.
#   usage: test/numa/check-numa.sh [BUILD_DIR]
#   env:   TW_NUMA_TIMEOUT  seconds per guest (default 600)
#          TW_NUMA_CONFIGS  guests to boot (default "plain hmat-small kmem-dax")
# Cached under BUILD/numa: the kernel .deb (the linux-image-6.1.0-*-amd64 that
# apt's linux-image-amd64 depends on), its unpacked tree and the initramfs.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
source "$src/test/numa/kernel.sh"
build=$(cd "${1:-build}" && pwd)
top=$build/numa
out=$top/out
timeout_s=${TW_NUMA_TIMEOUT:-600}
configs=${TW_NUMA_CONFIGS:-plain hmat-small kmem-dax}
say() { echo "check-numa: $*"; }
die() { echo "check-numa: $*" >&2; exit 1; }
mkdir -p "$top"
for tool in qemu-system-x86_64 busybox apt-get dpkg-deb; do
  command -v $tool > /dev/null || die "$tool not found (make check-numa installs qemu-system-x86 and busybox-static)"
done
[ -x "$build/test/numa/numa_probe" ] || die "$build/test/numa/numa_probe missing: run make build first"

# --- kernel ---------------------------------------------------------------
kernel_pkg() {
  apt-cache depends linux-image-amd64 2> /dev/null |
    awk '$1 == "Depends:" && $2 ~ /^linux-image-6\.1\.0-[0-9]+-amd64$/ {print $2; exit}'
}
pkg=$(kernel_pkg)
if [ -z "$pkg" ] && ! ls -d "$top"/kernel/linux-image-6.1.0-* > /dev/null 2>&1; then
  apt-get update -q > /dev/null 2>&1 || true  # fresh machine without package lists
  pkg=$(kernel_pkg)
fi
if [ -z "$pkg" ]; then  # apt lists unavailable: use a cached kernel if there is one
  pkg=$(ls -d "$top"/kernel/linux-image-6.1.0-* 2> /dev/null | sort -V | tail -1 | xargs -r basename)
  [ -n "$pkg" ] || die "apt-cache names no linux-image-6.1.0-*-amd64 for linux-image-amd64 and none is cached in $top/kernel"
fi
tw_kernel "$top" "$pkg"

# --- initramfs: busybox-static, the virtio/9p modules, test/numa/init.sh ----
tw_initramfs "$top" "$src"

# --- host-side preparation (placements: the advisor is slow under TCG) -------
rm -rf "$out" && mkdir -p "$out"
say "preparing placements on the host"
bash "$src/test/numa/prepare.sh" "$src" "$build" "$out/host" > "$out/host.log" 2>&1 ||
  { tail -20 "$out/host.log"; die "host-side preparation failed (log: $out/host.log)"; }

# --- guests -----------------------------------------------------------------
qemu_common=(-accel tcg -cpu max -nographic -no-reboot -net none -smp 2
  -kernel "$vmlinuz" -initrd "$initrd"
  -virtfs "local,path=/,mount_tag=hostroot,security_model=none,multidevs=remap")
boot() {  # boot CONFIG QEMU_ARGS...
  # nokaslr: with KASLR the kernel image (~43 MiB of code, data and bss) lands
  # at a random physical address, sometimes in node 1 - seen: node 1 of the
  # 256 MiB guest had 205 MiB MemTotal instead of 250, and the fill case's
  # 200 MiB object no longer fitted. Without it the kernel sits in node 0.
  local cfg=$1 dir=$out/$1 t0=$SECONDS rc=0
  shift
  mkdir -p "$dir"
  printf 'SRC=%q\nBUILD=%q\nOUT=%q\nHOST=%q\nCONFIG=%q\nMODDIR=%q\n' "$src" "$build" "$dir" "$out/host" "$cfg" "$moddir" > "$dir/env.sh"
  say "booting guest '$cfg' (QEMU TCG, limit ${timeout_s}s)"
  timeout -k 10 "$timeout_s" qemu-system-x86_64 "${qemu_common[@]}" "$@" \
    -append "console=ttyS0 quiet panic=-1 nokaslr ${append:-}tw_script=$src/test/numa/guest.sh tw_arg=$dir" \
    < /dev/null > "$dir/console.log" 2>&1 || rc=$?
  if [ $rc = 124 ] || [ $rc = 137 ]; then
    echo "guest '$cfg' timed out after ${timeout_s}s" > "$dir/timeout"
  fi
  say "guest '$cfg' done in $((SECONDS - t0))s (qemu exit $rc)"
}
for cfg in $configs; do
  case $cfg in
    plain)  # node 1: 1 GiB, memory only, no HMAT
      boot plain -m 2G \
        -object memory-backend-ram,id=m0,size=1G -object memory-backend-ram,id=m1,size=1G \
        -numa node,nodeid=0,cpus=0-1,memdev=m0 -numa node,nodeid=1,memdev=m1 ;;
    hmat-small)  # node 1: 256 MiB, memory only; an HMAT (latency ns, bandwidth)
      boot hmat-small -machine hmat=on -m 1280M \
        -object memory-backend-ram,id=m0,size=1G -object memory-backend-ram,id=m1,size=256M \
        -numa node,nodeid=0,cpus=0-1,memdev=m0 -numa node,nodeid=1,memdev=m1,initiator=0 \
        -numa hmat-lb,initiator=0,target=0,hierarchy=memory,data-type=access-latency,latency=110 \
        -numa hmat-lb,initiator=0,target=0,hierarchy=memory,data-type=access-bandwidth,bandwidth=20G \
        -numa hmat-lb,initiator=0,target=1,hierarchy=memory,data-type=access-latency,latency=270 \
        -numa hmat-lb,initiator=0,target=1,hierarchy=memory,data-type=access-bandwidth,bandwidth=8G ;;
    kmem-dax)  # node 1: 384 MiB Soft Reserved, hot-added by kmem (256 MiB): a KMEM-DAX node
      tw_kmem_dax 1024 384
      append="$kmem_dax_append " boot kmem-dax "${qemu_numa[@]}" ;;
    *) die "unknown guest configuration '$cfg' (plain, hmat-small, kmem-dax)" ;;
  esac
done

# --- verdict ----------------------------------------------------------------
python3 "$src/test/numa/check.py" "$out" $configs
