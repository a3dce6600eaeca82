#!/usr/bin/env bash
# clang-tidy over every source file of common/, hub/ and pos/ that the build compiles (compile_commands.json of
# BUILD_DIR, default build/), with the checks of .clang-tidy; every finding is an error. Two files at a time.
#   tests/tidy.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
tidy=$(command -v clang-tidy-14 || command -v clang-tidy)
[ -f "$build/compile_commands.json" ] || { echo "tidy: no $build/compile_commands.json (build first)" >&2; exit 2; }
files=$(python3 - "$build/compile_commands.json" "$PWD" <<'PY'
import json, os, sys
root = sys.argv[2]
seen = set()
for e in json.load(open(sys.argv[1])):
    f = os.path.realpath(os.path.join(e["directory"], e["file"]))
    rel = os.path.relpath(f, root)
    if rel.split(os.sep)[0] in ("common", "hub", "pos") and f not in seen:
        seen.add(f)
        print(rel)
PY
)
count=$(echo "$files" | wc -l)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# GCC-only warning flags of the build mean nothing to clang: not findings.
if echo "$files" | xargs -P2 -n4 "$tidy" -p "$build" --quiet --extra-arg=-Wno-unknown-warning-option >"$out" 2>&1; then
  echo "clang-tidy: $count files, no finding"
else
  grep -E 'warning:|error:' "$out" | sort -u || cat "$out"
  echo "clang-tidy: findings in the files above (checks and reasons: .clang-tidy)"
  exit 1
fi
