#!/bin/busybox sh
# SPDX-License-Identifier: MIT
# /init of the check-numa guest's initramfs (busybox-static): loads the
# virtio and 9p modules shipped in the initramfs (those the kernel does not
# build in, in the order /modules/order gives), mounts the host's / over
# virtio-9p (mount tag "hostroot"), chroots into it and runs the script
# named by tw_script= on the kernel command line (argument tw_arg=), then
# powers off. The script's exit status is printed as "tw-guest: exit N" on the
# console, so the host sees a guest that could not even start its script.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /modules/order); do
  insmod /modules/$m.ko || echo "tw-guest: insmod $m failed"
done
script= arg=
for w in $(cat /proc/cmdline); do
  case "$w" in
    tw_script=*) script=${w#tw_script=} ;;
    tw_arg=*) arg=${w#tw_arg=} ;;
  esac
done
mkdir -p /host
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose hostroot /host; then
  echo "tw-guest: cannot mount the host's / over 9p"
  poweroff -f
fi
mount -t proc proc /host/proc
mount -t sysfs sysfs /host/sys
mount -t devtmpfs devtmpfs /host/dev
mkdir -p /host/dev/shm
mount -t tmpfs tmpfs /host/dev/shm
chroot /host /bin/bash "$script" "$arg"
echo "tw-guest: exit $?"
sync
poweroff -f
