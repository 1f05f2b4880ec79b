# SPDX-License-Identifier: MIT
# Thin driver over CMake and the project-local Python environment.
#   make build  - install missing system packages, create .venv, build everything
#   make test   - build, then run the whole lit + pytest suite
#   make demo   - build, then run the whole pipeline on a bundled example
SHELL := /bin/bash
BUILD ?= build
VENV  ?= .venv
JOBS  ?= $(shell nproc)

# Debian 12 packages the build and the tests need.
APT_PKGS := build-essential cmake pkg-config binutils python3 python3-venv \
  libmemkind-dev libpfm4-dev libunwind-dev libdw-dev libelf-dev libnuma-dev \
  numactl valgrind clang-19 libclang-19-dev llvm-19-dev llvm-19-tools libzstd-dev \
  libcjson-dev libomp-19-dev libclang-rt-19-dev \
  libgraphblas-dev libigraph-dev libopenmpi-dev openmpi-bin

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PY   := $(VENV)/bin/python

.PHONY: all build deps venv configure test demo clean check-sanitizers

all: build

deps:
	@missing=$$(for p in $(APT_PKGS); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "tierwise: installing Debian packages:" $$missing; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	fi

$(VENV)/.stamp: advisor/pyproject.toml
	@test -x $(PY) || /usr/bin/python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e advisor[test]
	@touch $@

venv: deps $(VENV)/.stamp

configure: venv
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DTIERWISE_PYTHON=$(abspath $(PY))

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	$(VENV)/bin/lit -sv --time-tests $(BUILD)/test
	$(VENV)/bin/pytest -q advisor/tests

# ASan/UBSan/TSan builds of the runtime's unit tests, parsers and the stress
# program; Valgrind memcheck/helgrind on the preloaded runtime (~1-2 min).
check-sanitizers: build
	test/reliability/check_sanitizers.sh $(BUILD)

demo: build
	$(BUILD)/bin/tierwise demo

clean:
	rm -rf $(BUILD)
