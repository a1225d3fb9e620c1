# aizone: the two commands a user needs are `make demo` and `make test`.
# Both install what they need (apt and pip), idempotently, then run.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= python3
# Mininet (mnexec + its Python module), iproute2/ethtool (links), iputils-ping,
# nftables (confines the switches' control ports to root: topologies/firewall.py),
# cpp (the P4 preprocessor), tcpdump (captures), openssl (TLS tests),
# g++, pkg-config and libgrpc++-dev (p4switch's native P4Runtime transport,
# built by pip install from p4switch/server/native.cc), gcc and python3-dev (Python's
# headers, for both native modules: also p4switch/rawio.c, the ports' batched I/O),
# openssh-client and sudo (a fabric
# over several servers: Mininet's cluster mode runs `sudo -E mnexec` over ssh, docs/scale-out.md).
APT_PACKAGES := mininet iproute2 iputils-ping ethtool nftables cpp gcc g++ pkg-config libgrpc++-dev tcpdump openssl python3-venv python3-dev openssh-client sudo
# What only the tests need: chromium (the dashboard's browser test, driven by Playwright),
# prometheus (a real server scrapes GET /metrics; promtool checks the exposition), tshark
# (decodes `aizone capture`'s pcap as RoCEv2),
# shellcheck, vagrant and vagrant-libvirt (checks of the VM's provisioning script and
# Vagrantfile), openssh-server (the cluster test's servers: namespaces running sshd),
# libfaketime (one such server with its clock off, which `up --servers` must refuse).
# Debian's browser is `chromium`; Ubuntu (the VM) ships it as `chromium-browser` (a snap).
OS_ID := $(shell . /etc/os-release 2>/dev/null && echo $$ID)
CHROMIUM := $(if $(filter ubuntu,$(OS_ID)),chromium-browser,chromium)
APT_TEST_PACKAGES := $(CHROMIUM) prometheus tshark shellcheck vagrant vagrant-libvirt openssh-server libfaketime
STAMP_PIP := $(VENV)/.pip-done
PYTEST_ARGS ?=
# The switch target of `make demo`: p4switch (the built-in one, the default), bmv2, or auto
# (BMv2 when simple_switch_grpc and p4c-bm2-ss are on PATH, else p4switch).
TARGET ?= p4switch
# BMv2 and p4c, when installed, run the dataplane and fabric suites a second time.
HAVE_BMV2 := $(shell command -v simple_switch_grpc >/dev/null && command -v p4c-bm2-ss >/dev/null && echo yes)
# A second interpreter aizone must install on (the VM's Ubuntu 24.04 has Python 3.12):
# pyenv's 3.12 (this machine image has one), else a python3.12 on PATH that runs; none:
# that check is skipped and says so.
PY312 ?= $(shell for p in $$(ls -d $(HOME)/.pyenv/versions/3.12.*/bin/python3.12 2>/dev/null) $$(command -v python3.12); do \
  $$p -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null && echo $$p && break; done)
VENV312 := $(VENV)/py312
SETUPTOOLS_312 := 84.2.1

.PHONY: demo test test-p4switch test-bmv2 test-py312 setup apt apt-test lint lint-ruff lint-mypy lint-imports lint-shell vagrant-validate bench clean-net

demo: setup
	$(PY) -m aizone.cli demo --topology topologies/ai_zone_small.yaml --target $(TARGET)

# Lint, then every suite on p4switch, then the dataplane and fabric suites on BMv2 (when
# installed), then the unit tests on Python 3.12.
test: setup apt-test lint test-p4switch test-bmv2 test-py312

test-p4switch: setup
	$(PY) -m pytest tests --target p4switch --durations=20 $(PYTEST_ARGS)

# Unit tests whose switch-side behaviour differs by target, run on BMv2 too. Fabric tests
# marked one_target (pyproject.toml) check what is the same on every target; they run once,
# on p4switch, above.
BMV2_UNIT := tests/unit/topologies/test_net.py::test_links_are_shaped_on_both_ends_at_the_tier_rate \
             tests/unit/topologies/test_net.py::test_congestion_queues_in_the_switch_not_in_tc \
             tests/unit/topologies/test_attach.py::test_set_link_takes_both_ends_down_and_back_with_shaping_and_routes

test-bmv2: setup
ifeq ($(HAVE_BMV2),yes)
	$(PY) -m pytest tests/dataplane tests/fabric $(BMV2_UNIT) --target bmv2 -m "not one_target" --durations=20 $(PYTEST_ARGS)
else
	@echo "aizone: BMv2 not on PATH (simple_switch_grpc, p4c-bm2-ss): the BMv2 runs of tests/dataplane and tests/fabric are skipped"
	@case ",$$AIZONE_REQUIRE," in *,bmv2,*) echo "aizone: but AIZONE_REQUIRE says this machine provides BMv2" >&2; exit 1;; esac
endif

test-py312: setup
ifeq ($(PY312),)
	@echo "aizone: no Python 3.12 (python3.12 on PATH or pyenv's): the install check on 3.12 is skipped"
else
	@[ -x $(VENV312)/bin/python ] || $(PY312) -m venv $(VENV312)
	@echo "aizone: pip install -e '.[test]' into $(VENV312) ($$($(VENV312)/bin/python --version))"
	@# setuptools: Debian's and Ubuntu's Mininet import distutils, gone from Python 3.12;
	@# setuptools provides it again.
	@$(VENV312)/bin/python -m pip install -q -e '.[test]' 'setuptools==$(SETUPTOOLS_312)' > $(VENV312)/pip.log 2>&1 || { grep -v '^WARNING: Location' $(VENV312)/pip.log; exit 1; }
	@site=$$($(VENV312)/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); \
	  ln -sfn /usr/lib/python3/dist-packages/mininet $$site/mininet
	$(VENV312)/bin/python -m pytest tests/unit -q -p no:cacheprovider $(PYTEST_ARGS)
endif

# Each check its own target, so that `make -k` runs them all and reports every failure.
lint: lint-ruff lint-mypy lint-imports lint-shell vagrant-validate

lint-ruff: setup
	$(VENV)/bin/ruff check aizone p4switch controller topologies traffic model experiments tests bench

lint-mypy: setup
	$(VENV)/bin/mypy

# The import contracts in pyproject.toml: layers point down, no circle in any package.
lint-imports: setup
	$(VENV)/bin/lint-imports

lint-shell: apt-test
	shellcheck vagrant/provision.sh .ci/run

# The Vagrantfile with each provider's own validation: libvirt through Debian's
# vagrant-libvirt; VirtualBox (not packaged by Debian) through Vagrant's built-in
# plugin, which only needs `VBoxManage --version` to answer: a stand-in that prints a
# version does (nothing else is run, no VM is made).
VBOX_STUB := $(CURDIR)/$(VENV)/vbox-stub
vagrant-validate: apt-test
	@mkdir -p $(VBOX_STUB) && printf '#!/bin/sh\necho 7.0.14r161095\n' > $(VBOX_STUB)/VBoxManage && chmod +x $(VBOX_STUB)/VBoxManage
	cd vagrant && VAGRANT_DOTFILE_PATH=$(VBOX_STUB)/.vagrant VAGRANT_DEFAULT_PROVIDER=libvirt vagrant validate
	cd vagrant && VAGRANT_DOTFILE_PATH=$(VBOX_STUB)/.vagrant PATH=$(VBOX_STUB):$$PATH VAGRANT_DEFAULT_PROVIDER=virtualbox vagrant validate

bench: setup
	$(PY) bench/compile_time.py
	$(PY) bench/pps.py
	$(PY) bench/tm_ops.py
	$(PY) bench/p4rt_write.py
	$(PY) bench/bringup.py
	$(PY) bench/traffic_cpu.py
	$(PY) bench/flow_model.py
	$(PY) bench/api_auth.py
	$(PY) bench/tunnel_cost.py

setup: apt $(STAMP_PIP)

# System packages: installs only what is missing (a no-op when all are there).
define apt_install
	@if [ "$$(id -u)" != 0 ]; then echo "aizone: run as root (Mininet and raw sockets need it): sudo make $(MAKECMDGOALS)" >&2; exit 1; fi
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "aizone: apt-get install$$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; \
	fi
endef

apt:
	$(call apt_install,$(APT_PACKAGES))

apt-test:
	$(call apt_install,$(APT_TEST_PACKAGES))

# Python packages into the project's venv. Mininet's module comes from the
# Debian package (it is not on PyPI) and is linked into the venv.
$(STAMP_PIP): pyproject.toml setup.py p4switch/server/native.cc p4switch/rawio.c
	@[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	@echo "aizone: pip install -e '.[test,scale]' into $(VENV)"
	@$(PY) -m pip install -q --upgrade pip > $(VENV)/pip.log 2>&1 || { grep -v '^WARNING: Location' $(VENV)/pip.log; exit 1; }
	@$(PY) -m pip install -v -e '.[test,scale]' > $(VENV)/pip.log 2>&1 || { grep -v '^WARNING: Location' $(VENV)/pip.log; exit 1; }
	@# Python 3.12 (the VM's): Mininet imports distutils, which setuptools provides again.
	@$(PY) -c 'import sys; sys.exit(sys.version_info >= (3, 12))' || $(PY) -m pip install -q 'setuptools==$(SETUPTOOLS_312)' >> $(VENV)/pip.log 2>&1
	@$(PY) -c 'import p4switch.server._native' 2>/dev/null || { \
	  echo "aizone: p4switch's native P4Runtime transport did not build (g++, pkg-config, libgrpc++-dev); the compiler said:" >&2; \
	  grep -iE 'error|grpc\+\+' $(VENV)/pip.log | head -20 >&2; exit 1; }
	@$(PY) -c 'import p4switch._rawio' 2>/dev/null || { \
	  echo "aizone: p4switch's batched port I/O (p4switch/rawio.c) did not build (gcc, Python's headers); the compiler said:" >&2; \
	  grep -iE 'error|rawio' $(VENV)/pip.log | head -20 >&2; exit 1; }
	@# p4runtime-shell 0.0.6 pins protobuf<3.21 and IPython 7; it works with the
	@# modern stack (p4switch.proto aliases its p4.* imports), so its pins are skipped.
	@$(PY) -m pip install -q --no-deps p4runtime-shell==0.0.6 > $(VENV)/pip-shell.log 2>&1 || { grep -v '^WARNING: Location' $(VENV)/pip-shell.log; exit 1; }
	@site=$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); \
	  ln -sfn /usr/lib/python3/dist-packages/mininet $$site/mininet
	@$(PY) -c 'import p4switch, controller, topologies, traffic, mininet.net'
	@touch $@

clean-net: setup
	$(PY) -m aizone.cli down
