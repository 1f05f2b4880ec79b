# SPDX-License-Identifier: MIT
# Thin driver over CMake and the project-local Python environment.
#   make build  - install missing system packages, create .venv, build everything
#   make test   - build, then run the whole lit + pytest suite and mypy
#   make demo   - build, then run the whole pipeline on a bundled example
#   make check-numa - the tests that need a real two-node NUMA kernel (QEMU)
#   make install PREFIX=DIR - install tierwise into DIR (default /usr/local)
SHELL := /bin/bash
BUILD ?= build
VENV  ?= .venv
JOBS  ?= $(shell nproc)
PREFIX ?= /usr/local

# Debian 12 packages the build and the tests need.
APT_PKGS := build-essential cmake pkg-config binutils python3 python3-venv \
  libmemkind-dev libpfm4-dev libunwind-dev libdw-dev libelf-dev libnuma-dev \
  numactl valgrind clang-19 libclang-19-dev llvm-19-dev llvm-19-tools libzstd-dev \
  libsimdjson-dev libomp-19-dev libclang-rt-19-dev libgtest-dev \
  libgraphblas-dev libigraph-dev libopenmpi-dev openmpi-bin strace \
  libjemalloc-dev libgoogle-perftools-dev libmimalloc-dev

# What `make check-numa` needs on top (its QEMU guest and initramfs); the
# kernel it boots is fetched by test/numa/check-numa.sh (apt-get download).
NUMA_APT_PKGS := qemu-system-x86 busybox-static

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PY   := $(VENV)/bin/python

.PHONY: all build deps numa-deps venv configure test demo install clean check-sanitizers check-numa

all: build

# $(call apt_install,PACKAGES,EXTRA apt-get install OPTIONS): the missing ones.
define apt_install
	@missing=$$(for p in $(1); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "tierwise: installing Debian packages:" $$missing; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(2) $$missing; \
	fi
endef

deps:
	$(call apt_install,$(APT_PKGS))

numa-deps:
	$(call apt_install,$(NUMA_APT_PKGS),--no-install-recommends)

$(VENV)/.stamp: advisor/pyproject.toml
	@test -x $(PY) || /usr/bin/python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e advisor[test]
	@touch $@

venv: deps $(VENV)/.stamp

configure: venv
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DTIERWISE_PYTHON=$(abspath $(PY)) -DTIERWISE_WERROR=$(if $(CI),ON,OFF)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	$(VENV)/bin/lit -sv --time-tests $(BUILD)/test
	$(VENV)/bin/pytest -q advisor/tests
	cd advisor && $(abspath $(VENV))/bin/mypy

# ASan/UBSan/TSan builds of the runtime's unit tests, parsers and the stress
# program; Valgrind memcheck/helgrind on the preloaded runtime (~1-2 min).
check-sanitizers: build
	test/reliability/check_sanitizers.sh $(BUILD)

# A QEMU (TCG) guest with Debian 12's kernel, node 1 memory only, the host's
# / over virtio-9p: placements on NUMA nodes checked from numa_maps (~5 min).
check-numa: build numa-deps
	test/numa/check-numa.sh $(BUILD)

demo: build
	$(BUILD)/bin/tierwise demo

# The CLI, libraries, Valgrind tool, tierwise.h, tierwise.pc and the Python
# package with a venv of its dependencies (cmake/TierwiseInstall.cmake).
install: build
	cmake --install $(BUILD) --prefix $(abspath $(PREFIX))

clean:
	rm -rf $(BUILD)
