# aizone: the two commands a user needs are `make demo` and `make test`.
# Both install what they need (apt and pip), idempotently, then run.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= python3
# Mininet (mnexec + its Python module), iproute2/ethtool (links), iputils-ping,
# cpp (the P4 preprocessor), tcpdump (captures), openssl (TLS tests),
# g++, pkg-config and libgrpc++-dev (p4switch's native P4Runtime transport,
# built by pip install from p4switch/server/native.cc).
APT_PACKAGES := mininet iproute2 iputils-ping ethtool cpp gcc g++ pkg-config libgrpc++-dev tcpdump openssl python3-venv
# What only the tests need: chromium (the dashboard's browser test, driven by Playwright).
APT_TEST_PACKAGES := chromium
STAMP_PIP := $(VENV)/.pip-done
PYTEST_ARGS ?=

.PHONY: demo test setup apt apt-test lint bench clean-net

demo: setup
	$(PY) -m controller.cli demo --topology topologies/rack.yaml

test: setup apt-test
	$(VENV)/bin/ruff check p4switch controller topologies traffic tests bench
	$(VENV)/bin/mypy
	$(PY) -m pytest tests $(PYTEST_ARGS)

lint: setup
	$(VENV)/bin/ruff check p4switch controller topologies traffic tests bench
	$(VENV)/bin/mypy

bench: setup
	$(PY) bench/compile_time.py
	$(PY) bench/pps.py
	$(PY) bench/p4rt_write.py

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
$(STAMP_PIP): pyproject.toml setup.py p4switch/server/native.cc
	@[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	@echo "aizone: pip install -e '.[test,scale]' into $(VENV)"
	@$(PY) -m pip install -q --upgrade pip > $(VENV)/pip.log 2>&1 || { grep -v '^WARNING: Location' $(VENV)/pip.log; exit 1; }
	@$(PY) -m pip install -v -e '.[test,scale]' > $(VENV)/pip.log 2>&1 || { grep -v '^WARNING: Location' $(VENV)/pip.log; exit 1; }
	@$(PY) -c 'import p4switch.server._native' 2>/dev/null || { \
	  echo "aizone: p4switch's native P4Runtime transport did not build (g++, pkg-config, libgrpc++-dev); the compiler said:" >&2; \
	  grep -iE 'error|grpc\+\+' $(VENV)/pip.log | head -20 >&2; exit 1; }
	@# p4runtime-shell 0.0.6 pins protobuf<3.21 and IPython 7; it works with the
	@# modern stack (p4switch.proto aliases its p4.* imports), so its pins are skipped.
	@$(PY) -m pip install -q --no-deps p4runtime-shell==0.0.6 > $(VENV)/pip-shell.log 2>&1 || { grep -v '^WARNING: Location' $(VENV)/pip-shell.log; exit 1; }
	@site=$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); \
	  ln -sfn /usr/lib/python3/dist-packages/mininet $$site/mininet
	@$(PY) -c 'import p4switch, controller, topologies, traffic, mininet.net'
	@touch $@

clean-net: setup
	$(PY) -m controller.cli down
