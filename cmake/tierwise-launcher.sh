#!/bin/sh
# SPDX-License-Identifier: MIT
# PREFIX/bin/tierwise, the installed CLI (cmake/TierwiseInstall.cmake). The
# prefix is where this file lies, found at each start, so an install that is
# moved or copied elsewhere works (issue 36); the Python package beside it
# runs through lib/tierwise/python/tierwise-boot.py with -E -s (PYTHONPATH,
# PYTHONHOME and user site-packages do not change what the CLI imports; the
# programs it runs get the environment unchanged). run and config start
# Python without site (-S): see advisor/CMakeLists.txt.
self=$0 # a link to this file (~/bin/tierwise) is followed to it
while [ -L "$self" ]; do
  link=$(readlink -- "$self")
  case $link in /*) self=$link ;; *) self=${self%/*}/$link ;; esac
done
prefix=$(cd -- "${self%/*}/.." && pwd)
py=$prefix/lib/tierwise/venv/bin/python
boot=$prefix/lib/tierwise/python/tierwise-boot.py
if [ ! -x "$py" ] || [ ! -f "$boot" ] || ! "$py" -E -s -S -c '' 2>/dev/null; then
  echo "tierwise: $prefix is not a working tierwise install ($py cannot run): reinstall it with: make install PREFIX=$prefix" >&2
  exit 2
fi
TIERWISE_PREFIX=$prefix
export TIERWISE_PREFIX
unset TIERWISE_BUILD_DIR
case "$1" in run|config) exec "$py" -E -s -S "$boot" "$@" ;; esac
exec "$py" -E -s "$boot" "$@"
