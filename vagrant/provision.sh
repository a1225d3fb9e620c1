#!/usr/bin/env bash
# Provisions the aizone VM (Ubuntu 24.04): the reference P4 tools from the p4lang
# project's Ubuntu packages (p4lang-p4c: p4c-bm2-ss; p4lang-bmv2: simple_switch_grpc,
# simple_switch_CLI), pinned; Mininet; aizone from the synced folder (`make setup`:
# its Debian packages and a venv); then `make test`, which runs every suite on
# p4switch and the dataplane and fabric suites on BMv2.
#
# Idempotent (run it again: `vagrant provision`), no prompts, as root.
#
# Environment:
#   AIZONE_SRC        the checkout in the VM (default /home/vagrant/aizone)
#   AIZONE_RUN_TESTS  1 (default): run `make test` at the end; 0: do not
#   P4C_VERSION       p4lang-p4c version to pin (a prefix of the package version)
#   BMV2_VERSION      p4lang-bmv2 version to pin (a prefix of the package version)
set -euo pipefail

SRC="${AIZONE_SRC:-/home/vagrant/aizone}"
RUN_TESTS="${AIZONE_RUN_TESTS:-1}"
# The versions CI's reference build has (../shared/p4tools): p4c 1.2.4.8, BMv2 1.15.5.
P4C_VERSION="${P4C_VERSION:-1.2.4.8}"
BMV2_VERSION="${BMV2_VERSION:-1.15.5}"
export DEBIAN_FRONTEND=noninteractive
APT=(apt-get -y -qq -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)

log() { printf 'aizone-provision: %s\n' "$*"; }

# shellcheck source=/dev/null
. /etc/os-release
if [ "${ID:-}" != ubuntu ]; then
    log "expected Ubuntu, found ${PRETTY_NAME:-unknown}; the p4lang repository is per Ubuntu release"
    exit 1
fi

# --- the p4lang repository (the p4c and behavioral-model READMEs name it) ----------
REPO="http://download.opensuse.org/repositories/home:/p4lang/xUbuntu_${VERSION_ID}/"
KEYRING=/etc/apt/keyrings/home_p4lang.gpg
LIST=/etc/apt/sources.list.d/home_p4lang.list
PREFS=/etc/apt/preferences.d/aizone-p4lang

if ! command -v gpg >/dev/null || ! command -v curl >/dev/null; then
    "${APT[@]}" update
    "${APT[@]}" install --no-install-recommends ca-certificates curl gpg
fi
if [ ! -s "$KEYRING" ]; then
    log "adding the p4lang repository key"
    install -d -m 0755 /etc/apt/keyrings
    curl -fsSL "${REPO}Release.key" | gpg --dearmor --yes -o "$KEYRING.tmp"
    mv "$KEYRING.tmp" "$KEYRING"
fi
want_list="deb [signed-by=$KEYRING] $REPO /"
if [ "$(cat "$LIST" 2>/dev/null)" != "$want_list" ]; then
    echo "$want_list" > "$LIST"
fi
# Pin both tools: apt never takes another version, upgrades included.
cat > "$PREFS.tmp" <<EOF
Package: p4lang-p4c
Pin: version ${P4C_VERSION}*
Pin-Priority: 1001

Package: p4lang-bmv2
Pin: version ${BMV2_VERSION}*
Pin-Priority: 1001
EOF
mv "$PREFS.tmp" "$PREFS"
"${APT[@]}" update

# Refuse to install something else than the pinned versions.
for spec in "p4lang-p4c=$P4C_VERSION" "p4lang-bmv2=$BMV2_VERSION"; do
    pkg="${spec%%=*}"
    ver="${spec#*=}"
    if ! apt-cache madison "$pkg" | awk '{print $3}' | grep -q "^${ver}"; then
        log "$pkg $ver is not in $REPO; it has: $(apt-cache madison "$pkg" | awk '{print $3}' | xargs)"
        log "set ${pkg#p4lang-} version with P4C_VERSION / BMV2_VERSION (see vagrant/README.md)"
        exit 1
    fi
done

log "installing p4lang-p4c $P4C_VERSION, p4lang-bmv2 $BMV2_VERSION, Mininet"
"${APT[@]}" install --no-install-recommends p4lang-p4c p4lang-bmv2 mininet nftables make python3-venv git
for tool in p4c-bm2-ss simple_switch_grpc simple_switch_CLI; do
    command -v "$tool" >/dev/null || { log "$tool missing after the install"; exit 1; }
done
log "p4c: $(p4c-bm2-ss --version 2>&1 | head -1); BMv2: $(simple_switch_grpc --version 2>&1 | head -1)"

# --- aizone from the synced folder ---------------------------------------------------
if [ ! -f "$SRC/Makefile" ]; then
    log "no aizone checkout at $SRC (is the synced folder there? vagrant rsync)"
    exit 1
fi
cd "$SRC"
log "aizone: make setup (Debian packages, .venv with Python $(python3 -c 'import sys; print(sys.version.split()[0])'))"
make setup

if [ "$RUN_TESTS" = 1 ]; then
    log "aizone: make test (p4switch and BMv2)"
    make test
else
    log "aizone: tests skipped (AIZONE_RUN_TESTS=$RUN_TESTS); run them with: cd $SRC && sudo make test"
fi
log "done: vagrant ssh, then cd aizone && sudo make demo TARGET=bmv2"
