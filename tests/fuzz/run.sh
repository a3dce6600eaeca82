#!/usr/bin/env bash
# Builds the libFuzzer targets (build-fuzz/: clang 14, ASan + UBSan, coverage) and runs each for SECONDS
# (default 60). Each target first runs every input of regressions/<target>/ once, then fuzzes a copy of
# corpus/<target>/ (plus the regressions) in a temporary folder, so the corpus in the repository stays small and
# curated. A crash, time-out, leak or out-of-memory input is copied into regressions/<target>/, its path is
# printed, and the script exits non-zero once every target has run.
#   tests/fuzz/run.sh          60 s per target (tests/run.sh: 30 s)
#   tests/fuzz/run.sh 3600     one hour per target
# ORDERHUB_BUILD_JOBS (default 2) sets the build parallelism, as in tests/run.sh; ORDERHUB_FUZZ_JOBS (default 2)
# how many targets fuzz at the same time (each uses about one core). ORDERHUB_FUZZ_BUILD_DIR names a build already
# configured with -DORDERHUB_FUZZ=ON to use instead of build-fuzz/ (tests/run.sh passes its sanitizer build, which
# holds the unit and pg tests too).
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-60}
case "$seconds" in '' | *[!0-9]*) echo "usage: tests/fuzz/run.sh [SECONDS]" >&2; exit 2 ;; esac
build_jobs=${ORDERHUB_BUILD_JOBS:-2}
fuzz_jobs=${ORDERHUB_FUZZ_JOBS:-2}
fuzz_dir=tests/fuzz

build=${ORDERHUB_FUZZ_BUILD_DIR:-}
if [ -z "$build" ]; then
  build=build-fuzz
  ./deploy/install-deps.sh
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -DORDERHUB_FUZZ=ON -DORDERHUB_TESTS=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" -j"$build_jobs" --target fuzz_targets

work=$(mktemp -d /tmp/orderhub-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
# A sanitizer finding aborts with a symbolized stack; leaks are found by libFuzzer itself (-detect_leaks).
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# 8 KiB inputs reach the hub's 2 KiB test limits in fuzz_http and the 4 KiB signature header bound.
options=(-rss_limit_mb=2048 -timeout=10 -max_len=8192)

# Runs one target; its report goes to stdout, its verdict to $work/<target>.status (0 clean, 1 failed).
fuzz_target() {
  local bin=$1 target
  target=$(basename "$bin")
  local corpus=$fuzz_dir/corpus/$target regressions=$fuzz_dir/regressions/$target log=$work/$target.log
  local dict=() seeds=()
  [ -f "$fuzz_dir/dict/$target.dict" ] && dict=(-dict="$fuzz_dir/dict/$target.dict")
  echo 1 >"$work/$target.status"
  echo "== $target"

  # 1. Regression inputs: every input that ever failed must pass before fuzzing starts.
  mapfile -t seeds < <(find "$regressions" -type f 2>/dev/null | sort)
  if [ ${#seeds[@]} -gt 0 ]; then
    if ! "$bin" "${options[@]}" "${seeds[@]}" >"$log" 2>&1; then
      tail -n 60 "$log"
      echo "FAILED: $target fails on an input of $regressions/ (log above)"
      return
    fi
    echo "   ${#seeds[@]} regression inputs pass"
  fi

  # 2. Fuzzing on a copy of the seeds; new inputs stay in the temporary folder.
  mkdir -p "$work/$target/corpus" "$work/$target/artifacts"
  cp -r "$corpus/." "$work/$target/corpus/"
  [ ${#seeds[@]} -eq 0 ] || cp "${seeds[@]}" "$work/$target/corpus/"
  if "$bin" "${options[@]}" "${dict[@]}" -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="$work/$target/artifacts/" "$work/$target/corpus" >"$log" 2>&1; then
    local runs speed coverage
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    coverage=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -n 1)
    echo "   clean: $runs runs in ${seconds} s, $speed exec/s, $coverage," \
      "$(find "$work/$target/corpus" -type f | wc -l) corpus inputs"
    echo 0 >"$work/$target.status"
    return
  fi
  tail -n 60 "$log"
  local artifact found=0
  for artifact in "$work/$target/artifacts"/{crash,timeout,leak,oom}-*; do
    [ -f "$artifact" ] || continue
    mkdir -p "$regressions"
    cp "$artifact" "$regressions/"
    echo "FAILED: $target: input saved as $regressions/$(basename "$artifact")"
    found=1
  done
  [ $found -eq 1 ] || echo "FAILED: $target exited non-zero without an input (log above)"
}

targets=()
for bin in "$build"/bin/fuzz_*; do targets+=("$(basename "$bin")"); done
running=0
for target in "${targets[@]}"; do
  fuzz_target "$build/bin/$target" >"$work/$target.out" 2>&1 &
  running=$((running + 1))
  if [ $running -ge "$fuzz_jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait

status=0
for target in "${targets[@]}"; do
  cat "$work/$target.out"
  [ "$(cat "$work/$target.status" 2>/dev/null || echo 1)" = 0 ] || status=1
done
exit $status
