#!/usr/bin/env bash
# Installs the Debian 12 packages OrderHub needs to build, test and run, and only those that are missing.
# Idempotent; runs `apt-get update` once, and only when something is missing. Works as root or through sudo.
#   deploy/install-deps.sh           build, run and test dependencies (clang 14 for the fuzzers of tests/fuzz,
#                                    clang-tidy 14 for tests/tidy.sh, HAProxy for the multi-instance tests,
#                                    Chromium for tests/browser)
#   deploy/install-deps.sh --bench   also the load-test tools (wrk, Google Benchmark for tests/load, perf for
#                                    profiling, pg_stat_statements from postgresql-contrib)
set -euo pipefail

packages=(
  g++ cmake make pkg-config
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libpqxx-dev libpq-dev libssl-dev catch2 libgoogle-perftools-dev liburing-dev
  postgresql-15 postgresql-client-15
  python3 python3-jsonschema python3-yaml ca-certificates openssl curl jq
  clang-14 libclang-rt-14-dev clang-tidy-14
  nodejs npm
  haproxy chromium
)
if [ "${1:-}" = "--bench" ]; then packages+=(wrk postgresql-contrib libbenchmark-dev linux-perf valgrind); fi

missing=()
for p in "${packages[@]}"; do
  # A Node.js that bundles npm (NodeSource's nodejs) conflicts with Debian's npm package: the command is enough.
  if [ "$p" = npm ] && command -v npm >/dev/null 2>&1; then continue; fi
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "missing packages (${missing[*]}) and neither root nor sudo: install them as root" >&2
  exit 1
fi
echo "installing: ${missing[*]}" >&2
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
