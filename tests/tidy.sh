#!/usr/bin/env bash
# clang-tidy over every source file of common/, hub/ and pos/ that the build compiles (compile_commands.json of
# BUILD_DIR, default build/), with the checks of .clang-tidy; every finding is an error. Two at a time.
#   tests/tidy.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
tidy=$(command -v clang-tidy-14 || command -v clang-tidy)
[ -f "$build/compile_commands.json" ] || { echo "tidy: no $build/compile_commands.json (build first)" >&2; exit 2; }
# A unity build (ORDERHUB_UNITY, the default) compiles CMake's Unity/unity_N_cxx.cxx files, each including a batch of
# sources: those are checked whole (one parse of the shared headers for the batch), and the findings in the
# sources they include are reported because .clang-tidy's HeaderFilterRegex names common/, hub/ and pos/. Their
# only lines are the #include "x.cpp" that bugprone-suspicious-include exists to flag, so that check is off for the
# unity files (and so for the sources they include: a .cpp including another .cpp goes unflagged there).
lists=$(mktemp -d)
trap 'rm -rf "$lists"' EXIT
python3 - "$build/compile_commands.json" "$PWD" "$lists" <<'PY'
import json, os, re, sys
db, root, out = sys.argv[1:]
ours = lambda path: os.path.relpath(path, root).split(os.sep)[0] in ("common", "hub", "pos")
files, unity, sources = [], [], set()
for e in json.load(open(db)):
    f = os.path.realpath(os.path.join(e["directory"], e["file"]))
    if re.search(r"/Unity/unity_[0-9]+_cxx\.cxx$", f):
        included = [os.path.realpath(p) for p in re.findall(r'^#include "([^"]+)"', open(f).read(), re.M)]
        if any(ours(p) for p in included) and f not in unity:
            unity.append(f)
            sources.update(p for p in included if ours(p))
    elif ours(f) and f not in sources:
        files.append(f)
        sources.add(f)
open(os.path.join(out, "files"), "w").write("".join(p + "\n" for p in files))
open(os.path.join(out, "unity"), "w").write("".join(p + "\n" for p in unity))
print(len(sources), file=open(os.path.join(out, "count"), "w"))
PY
count=$(cat "$lists/count")
[ "$count" -gt 0 ] || { echo "tidy: no source file of common/, hub/ or pos/ in $build/compile_commands.json" >&2; exit 2; }
out=$lists/out
# --config-file: a unity file lies in the build folder, where no .clang-tidy is found by looking upwards. GCC-only
# warning flags of the build mean nothing to clang: not findings.
args=(-p "$build" --quiet --config-file="$PWD/.clang-tidy" --extra-arg=-Wno-unknown-warning-option)
status=0
xargs -a "$lists/files" -r -P2 -n4 "$tidy" "${args[@]}" >"$out" 2>&1 || status=1
xargs -a "$lists/unity" -r -P2 -n1 "$tidy" "${args[@]}" --checks=-bugprone-suspicious-include >>"$out" 2>&1 || status=1
if [ $status -eq 0 ]; then
  echo "clang-tidy: $count files, no finding"
else
  grep -E 'warning:|error:' "$out" | sort -u || cat "$out"
  echo "clang-tidy: findings in the files above (checks and reasons: .clang-tidy)"
  exit 1
fi
