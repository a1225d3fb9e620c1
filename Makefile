# aizone: the two commands a user needs are `make demo` and `make test`.
# Both install what they need (apt and pip) idempotently, then run.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= python3
APT_PACKAGES := mininet iproute2 ethtool cpp gcc tcpdump python3-venv
STAMP_APT := $(VENV)/.apt-done
STAMP_PIP := $(VENV)/.pip-done

.PHONY: demo test setup deps lint clean-net bench

demo: setup
	$(PY) -m controller.cli demo --topology topologies/rack.yaml

test: setup
	$(PY) -m pytest tests

lint: setup
	$(VENV)/bin/ruff check p4switch controller topologies traffic tests bench

bench: setup
	$(PY) bench/compile_time.py

setup: $(STAMP_PIP)

# System packages: Mininet (mnexec and its Python module), iproute2, the C preprocessor.
$(STAMP_APT):
	@if [ "$$(id -u)" != 0 ]; then echo "aizone: run as root (Mininet and raw sockets need it): sudo make $(MAKECMDGOALS)"; exit 1; fi
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "aizone: apt-get install$$missing"; \
	  DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	@[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	@touch $@

# Python packages into the project's venv; Mininet's module comes from the
# Debian package (it is not on PyPI) and is linked into the venv.
$(STAMP_PIP): $(STAMP_APT) pyproject.toml
	$(PY) -m pip install -q --upgrade pip >/dev/null
	$(PY) -m pip install -q -e '.[test]'
	@site=$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); \
	  ln -sfn /usr/lib/python3/dist-packages/mininet $$site/mininet
	@touch $@

clean-net:
	-$(PY) -m controller.cli down
