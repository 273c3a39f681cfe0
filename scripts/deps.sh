#!/usr/bin/env bash
# scripts/deps.sh: the Debian packages CAIRN needs, split by use, each with why.
#   scripts/deps.sh [GROUP...]            install what is missing (apt-get as root, sudo
#                                         otherwise); quick and silent when all is present
#   scripts/deps.sh --check GROUP...      install nothing: exit 1 with one line naming what
#                                         is missing and the one command that installs it
#   scripts/deps.sh --dry-run GROUP...    print the install command it would run (nothing
#                                         when all is present), install nothing
#   scripts/deps.sh --list GROUP...       the groups' packages, one a line
# Groups: build (gcc, make and the C libraries bin/cairn, bin/cairn-farm, bin/cairn-agent
# and the runtime link: what plain `make` needs), test (build plus the rest of what
# `make test` uses), gpu (build plus what `make gpu` needs beyond it: a CUDA toolkit and
# driver, which no Debian package here provides, so they are checked as commands).
# Default group: test (what `make test`, and CI's .ci/run on a fresh machine, installs).
# DEPS_DPKG_QUERY and DEPS_APT_GET name the programs used (the tests put stand-ins there).
set -euo pipefail

BUILD=(
  gcc make pkg-config python3  # the compiler; scripts/embed_runtime.py runs in the build
  binutils                     # cairn build --lib's archives (objcopy, ar)
  libcjson-dev                 # all JSON
  libssl-dev                   # SHA-256, Ed25519
  libcurl4-openssl-dev         # agent HTTP
  libz3-dev                    # cairn verify
  libsqlite3-dev               # coordinator store
  libpq-dev                    # the PostgreSQL store
  libmicrohttpd-dev            # coordinator HTTP server
)
TEST=(
  clang                        # the matrix's second compiler
  g++                          # cairn build --lib's header compiled as C++
  openssl                      # the openssl CLI for offline bundle checks
  man-db                       # make install's man pages, rendered by tests/build/test_install.py
  clang-format                 # make test checks the tree's formatting
  libclang-rt-14-dev           # clang's sanitizer and libFuzzer runtimes
  postgresql                   # the tests' throwaway PostgreSQL server
  libopenblas-dev              # bench baseline for the bracket GEMM (tests/bench)
  libmpfr-dev                  # the correctly rounded math checked against MPFR (tests/c/cr_check.c)
  python3-pytest python3-numpy # test driver and exact models
  python3-yaml                 # tests/farm/test_fleet.py parses the Kubernetes manifest
  python3-venv python3-pip python3-setuptools  # pip install ./python, tested in a venv
  chromium python3-websocket   # the dashboard's browser tests (headless, DevTools protocol)
  valgrind                     # tests/farm: token comparison counted in instructions
  libxml2-utils                # tests/farm/test_ci.py: xmllint checks JUnit files against the schema
  prometheus                   # GET /metrics checked by promtool and scraped by a real Prometheus
)
GPU=()                          # make gpu: python3's standard library and the build's packages
GPU_COMMANDS=(nvcc nvidia-smi)  # a CUDA toolkit and its driver (not from Debian's archive here)

mode=install
case "${1:-}" in
  --check|--dry-run|--list) mode=${1#--}; shift ;;
esac
groups=("$@")
[ ${#groups[@]} -eq 0 ] && groups=(test)

packages=()
commands=()
for g in "${groups[@]}"; do
  case "$g" in
    build) packages+=("${BUILD[@]}") ;;
    test) packages+=("${BUILD[@]}" "${TEST[@]}") ;;
    gpu) packages+=("${BUILD[@]}" "${GPU[@]}"); commands+=("${GPU_COMMANDS[@]}") ;;
    *) echo "deps: unknown group '$g' (build, test or gpu)" >&2; exit 2 ;;
  esac
done
if [ "$mode" = list ]; then
  printf '%s\n' "${packages[@]}" "${commands[@]}" | awk '!seen[$0]++'
  exit 0
fi

dpkg_query=${DEPS_DPKG_QUERY:-dpkg-query}
missing=()
for p in $(printf '%s\n' "${packages[@]}" | awk '!seen[$0]++'); do
  if ! "$dpkg_query" -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
absent=()
for c in "${commands[@]}"; do
  command -v "$c" >/dev/null 2>&1 || [ -x "/usr/local/cuda/bin/$c" ] || absent+=("$c")
done

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo "
apt_get=${DEPS_APT_GET:-apt-get}
install_line="${SUDO}$apt_get install -y --no-install-recommends ${missing[*]}"
case "$mode" in
  check)
    [ ${#missing[@]} -eq 0 ] && [ ${#absent[@]} -eq 0 ] && exit 0
    line="deps: missing for ${groups[*]}:"
    [ ${#missing[@]} -gt 0 ] && line+=" ${missing[*]} (install them: $install_line)"
    [ ${#absent[@]} -gt 0 ] && line+=" ${absent[*]} (a CUDA toolkit and NVIDIA driver; not on PATH or in /usr/local/cuda/bin)"
    echo "$line" >&2
    exit 1 ;;
  dry-run)
    [ ${#missing[@]} -gt 0 ] && echo "$install_line"
    [ ${#absent[@]} -gt 0 ] && echo "deps: not installable here: ${absent[*]}"
    exit 0 ;;
esac
[ ${#absent[@]} -gt 0 ] && echo "deps: not installable here: ${absent[*]} (a CUDA toolkit and driver)" >&2
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO$apt_get update -qq
$SUDO$apt_get install -y -qq --no-install-recommends "${missing[@]}" >&2
