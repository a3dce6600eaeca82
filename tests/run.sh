#!/usr/bin/env bash
# The whole suite: installs what is missing, builds (Release, checked by clang-tidy; then one clang build with ASan
# and UBSan for the unit and database tests and the fuzz targets), starts a throwaway PostgreSQL, runs every ctest
# label, removes the cluster, and exits non-zero on any failure. Output ends with ctest's summary of the Release run.
#   ./tests/run.sh                 everything
#   ./tests/run.sh -L unit         one label (unit, pg, e2e), Release build only
#   ./tests/run.sh -L browser      the dashboard's browser test (also part of e2e)
set -euo pipefail
cd "$(dirname "$0")/.."

./deploy/install-deps.sh
(cd tests/interop && npm ci --no-audit --no-fund --silent)
(cd tests/browser && npm ci --no-audit --no-fund --silent)  # playwright-core for the dashboard's browser test
(cd tests/openapi && npm ci --no-audit --no-fund --silent)  # @redocly/cli lints schemas/openapi.yaml (e2e:test_openapi)
jobs=${ORDERHUB_BUILD_JOBS:-2}
# Each stage names the minutes since the start: CI has 30 minutes for all of it.
stage() { printf '== %s (at %d:%02d)\n' "$1" $((SECONDS / 60)) $((SECONDS % 60)); }

stage "Release build"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DORDERHUB_WERROR=ON -DORDERHUB_TESTS=ON >/dev/null
cmake --build build -j"$jobs"

pgdir=$(mktemp -d /tmp/orderhub-test-pg.XXXXXX)
cleanup() { ./deploy/pg-local.sh destroy "$pgdir" >/dev/null 2>&1 || true; }
trap cleanup EXIT
export ORDERHUB_TEST_DATABASE_URL=$(./deploy/pg-local.sh start "$pgdir" postgres)
export ORDERHUB_TEST_PG_RESTART="$PWD/deploy/pg-local.sh restart $pgdir"
export ORDERHUB_TEST_PG_DIR=$pgdir

status=0
if [ $# -eq 0 ]; then
  stage "clang-tidy: every source file of common/, hub/ and pos/, each finding an error (.clang-tidy)"
  ./tests/tidy.sh build || status=1
  # One sanitized build serves the unit and pg tests and the fuzz targets: clang 14 with ASan, UBSan and
  # libFuzzer's coverage (-DORDERHUB_FUZZ=ON), assertions on, -O1 (tests and fuzzing at a usable speed).
  stage "sanitized build (clang 14, ASan and UBSan): the unit and pg tests and the libFuzzer targets"
  CC=clang-14 CXX=clang++-14 cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-g -O1" \
    -DORDERHUB_FUZZ=ON -DORDERHUB_WERROR=ON -DORDERHUB_TESTS=ON >/dev/null
  cmake --build build-sanitize -j"$jobs" --target unit_tests pg_tests webhook_verdicts fuzz_targets
  stage "unit and pg tests under AddressSanitizer and UBSan"
  # libpqxx 6.4's own leak on a broken connection is suppressed (tests/lsan.supp says why); nothing else is.
  (cd build-sanitize && LSAN_OPTIONS="suppressions=$PWD/../tests/lsan.supp:print_suppressions=0" \
    ctest -L 'unit|pg' -j"$jobs" --output-on-failure) || status=1
  stage "fuzzing: each libFuzzer target for 30 s (a longer run: tests/fuzz/run.sh 3600)"
  ORDERHUB_FUZZ_BUILD_DIR=build-sanitize ./tests/fuzz/run.sh 30 || status=1
  stage "every test, Release build"
fi
# Three at a time: tests marked RUN_SERIAL (pg, the reliability scenarios, the browser and cluster-stopping e2e
# tests) still run alone.
(cd build && ctest -j3 --output-on-failure "$@") || status=1
exit $status
