# SPDX-License-Identifier: MIT
# Kernel, initramfs and KMEM-DAX machine of the QEMU guests, sourced by
# test/numa/check-numa.sh and test/bench/numa_tiering.py (through
# `bash -c 'source kernel.sh; ...'`). Needs die() and say() from the caller.
#
#   tw_kernel TOP PKG [SOURCE_PARTS_DIR]
#       fetches PKG (a linux-image-*-amd64) with `apt-get download` into TOP
#       unless TOP/kernel/PKG is already unpacked; with SOURCE_PARTS_DIR, apt
#       reads only the deb822 *.sources files there and keeps its lists in
#       SOURCE_PARTS_DIR/lists (how the bookworm-backports and unstable
#       kernels are fetched without touching the system's apt sources); a
#       split 7.x image brings its linux-binary/modules/base packages. Sets
#       kdir, vmlinuz, kver, modroot (the modules' directory).
#   tw_initramfs TOP SRC
#       the initramfs of $kver (busybox-static, the virtio/9p modules that
#       are not built in, test/numa/init.sh) in $initrd, and the DAX modules
#       (device_dax, dax_hmem, kmem; decompressed) in $moddir for the guest
#       to insmod over 9p.
#   tw_kmem_dax N0_MIB N1_MIB [VCPUS (default 2, all on node 0)]
#       QEMU arguments in qemu_numa (array) and kernel arguments in
#       kmem_dax_append for a guest whose node 0 = the CPUs + N0_MIB and whose
#       node 1 (N1_MIB, memory only) the firmware gives as RAM but the kernel
#       marks Soft Reserved (memmap=SIZE%START-1+0xefffffff: E820 RAM becomes
#       EFI_MEMORY_SP), so that dax_hmem makes it dax0.0 and kmem hot-adds it:
#       a KMEM-DAX node, which the kernel puts in a lower memory tier. Its
#       last 2 MiB stays reserved (memmap=2M$ADDR): SeaBIOS takes the last
#       128 KiB below the end of low RAM, and a node with boot RAM would be a
#       DRAM-tier node. kmem hot-adds whole 128 MiB memory blocks only, so
#       node 1 ends up with N1_MIB - 128 MiB (N1_MIB a multiple of 128).

tw_kernel() {
  local top=$1 pkg=$2 parts=${3:-} opts=() pkgs p
  if [ -n "$parts" ]; then
    opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$parts"
      -o "Dir::State::Lists=$parts/lists")
    mkdir -p "$parts/lists/partial"
  fi
  kdir=$top/kernel/$pkg
  if ! tw_vmlinuz > /dev/null; then
    if [ -n "$parts" ] && ! apt-cache "${opts[@]}" show "$pkg" > /dev/null 2>&1; then
      apt-get -q "${opts[@]}" update > /dev/null 2>&1 || die "apt-get update with the sources in $parts failed"
    fi
    # Debian 14's kernels (7.x) are split: the image package depends on the
    # kernel (linux-binary-V), its modules (linux-modules-V) and their base
    # files (linux-base-V) of its own version V; up to 6.12 one package
    pkgs=("$pkg")
    for p in $(apt-cache "${opts[@]}" depends "$pkg" 2> /dev/null |
      awk -v v="${pkg#linux-image-}" '$1 == "Depends:" &&
        $2 ~ /^linux-(binary|modules|base)-/ && substr($2, length($2) - length(v) + 1) == v {print $2}'); do
      pkgs+=("$p")
    done
    say "fetching ${pkgs[*]} (apt-get download)"
    for p in "${pkgs[@]}"; do rm -f "$top"/"$p"_*.deb; done
    (cd "$top" && apt-get -q "${opts[@]}" -o APT::Sandbox::User=root download "${pkgs[@]}") ||
      die "apt-get download ${pkgs[*]} failed"
    rm -rf "$kdir.tmp" && mkdir -p "$kdir.tmp"
    for p in "${pkgs[@]}"; do
      dpkg-deb -x "$top"/"$p"_*.deb "$kdir.tmp" || die "dpkg-deb -x $p failed"
    done
    rm -rf "$kdir" && mv "$kdir.tmp" "$kdir"
  fi
  vmlinuz=$(tw_vmlinuz) || die "no vmlinuz in ${pkgs[*]:-$pkg}"
  if [ "${vmlinuz%/vmlinuz}" != "$vmlinuz" ]; then # usr/lib/modules/KVER/vmlinuz
    kver=${vmlinuz%/vmlinuz}
    kver=${kver##*/}
    modroot=$kdir/usr/lib/modules/$kver
  else # boot/vmlinuz-KVER
    kver=${vmlinuz##*/vmlinuz-}
    modroot=$kdir/lib/modules/$kver
  fi
}

# tw_vmlinuz: the kernel image in $kdir (boot/vmlinuz-KVER up to 6.12,
# usr/lib/modules/KVER/vmlinuz in 7.x), or fails
tw_vmlinuz() {
  local f
  for f in "$kdir"/boot/vmlinuz-* "$kdir"/usr/lib/modules/*/vmlinuz; do
    [ -f "$f" ] && echo "$f" && return 0
  done
  return 1
}

# tw_ko KO DEST: a module file, decompressed
tw_ko() {
  case "$1" in
    *.xz) xz -dc "$1" > "$2" ;;
    *.zst) zstd -qdc "$1" > "$2" ;;
    *) cp "$1" "$2" ;;
  esac
}

# tw_find_ko NAME: the module's file in $kdir, empty if built in or absent
tw_find_ko() {
  find "$modroot" \( -name "$1.ko" -o -name "$1.ko.xz" -o -name "$1.ko.zst" \) | head -1
}

tw_builtin() { grep -q "/$1.ko\$" "$modroot/modules.builtin" 2> /dev/null; }

tw_initramfs() {
  local top=$1 src=$2 ir m ko
  initrd=$top/initrd-$kver.gz
  moddir=$top/modules-$kver
  if [ ! -s "$initrd" ] || [ "$src/test/numa/init.sh" -nt "$initrd" ]; then
    say "building the initramfs for $kver"
    ir=$(mktemp -d "$top/initramfs.XXXXXX")
    mkdir -p "$ir"/{bin,modules,proc,sys,dev,host}
    cp "$(readlink -f "$(command -v busybox)")" "$ir/bin/busybox"
    ! ldd "$ir/bin/busybox" > /dev/null 2>&1 || die "$(command -v busybox) is not static (install busybox-static)"
    cp "$src/test/numa/init.sh" "$ir/init" && chmod 755 "$ir/init"
    # in load order; 6.12 builds the virtio ones in and has no fscache
    # (merged into netfs)
    for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci \
      netfs fscache 9pnet 9pnet_virtio 9p; do
      ko=$(tw_find_ko $m)
      if [ -z "$ko" ]; then
        tw_builtin $m || [ $m = fscache ] || die "module $m not in $modroot"
        continue
      fi
      tw_ko "$ko" "$ir/modules/$m.ko"
      echo $m >> "$ir/modules/order"
    done
    (cd "$ir" && find . | busybox cpio -o -H newc -R 0:0 2> /dev/null | gzip -1) > "$initrd.tmp"
    mv "$initrd.tmp" "$initrd"
    rm -rf "$ir"
  fi
  if [ ! -s "$moddir/kmem.ko" ]; then
    rm -rf "$moddir" && mkdir -p "$moddir"
    for m in device_dax dax_hmem kmem; do
      ko=$(tw_find_ko $m)
      if [ -z "$ko" ]; then
        tw_builtin $m || die "module $m not in $modroot"
        continue
      fi
      tw_ko "$ko" "$moddir/$m.ko"
    done
  fi
}

tw_kmem_dax() {
  local n0=$1 n1=$2 ncpu=${3:-2}
  local start=$((n0 << 20)) size=$((n1 << 20))
  local sp=$((size - (2 << 20)))
  qemu_numa=(-m $((n0 + n1))M
    -object memory-backend-ram,id=m0,size=${n0}M -object memory-backend-ram,id=m1,size=${n1}M
    -numa node,nodeid=0,cpus=0-$((ncpu - 1)),memdev=m0 -numa node,nodeid=1,memdev=m1)
  kmem_dax_append=$(printf 'memmap=0x%x%%0x%x-1+0xefffffff memmap=0x%x$0x%x' \
    $sp $start $((2 << 20)) $((start + sp)))
}
