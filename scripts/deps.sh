#!/usr/bin/env bash
# Installs the Debian packages CAIRN needs (listed below, each with why) when any is missing.
# Does nothing, quickly, when everything is present. Uses apt-get as root, sudo otherwise.
set -euo pipefail

PACKAGES=(
  gcc clang make pkg-config
  binutils g++                # cairn build --lib's archives (objcopy, ar); its header as C++
  man-db                      # make install's man pages, rendered by tests/build/test_install.py
  clang-format                # make test checks the tree's formatting
  libclang-rt-14-dev          # clang's sanitizer and libFuzzer runtimes
  libcjson-dev                # all JSON
  libssl-dev openssl          # SHA-256, Ed25519; openssl CLI for offline bundle checks
  libcurl4-openssl-dev        # agent HTTP
  libz3-dev                   # cairn verify
  libsqlite3-dev              # coordinator store
  postgresql libpq-dev        # the PostgreSQL store (libpq) and the tests' throwaway server
  libmicrohttpd-dev           # coordinator HTTP server
  libopenblas-dev             # bench baseline for the bracket GEMM
  libmpfr-dev                 # the correctly rounded math checked against MPFR (tests/c/cr_check.c)
  python3 python3-pytest python3-numpy   # test driver and exact models
  python3-yaml                # tests/farm/test_fleet.py parses the Kubernetes manifest
  chromium python3-websocket  # the dashboard's browser tests (headless, DevTools protocol)
  valgrind                    # tests/farm: token comparison counted in instructions
  libxml2-utils               # tests/farm/test_ci.py: xmllint checks JUnit files against the schema
  prometheus                  # GET /metrics checked by promtool and scraped by a real Prometheus
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
