#!/usr/bin/env bash
# What the build costs: a release build of retrygate from an empty target
# directory (wall and CPU time), the stripped binary's size, and the CPU time
# of the tree-sitter grammars alone (their C code is most of what the syntax
# trees add to a build). Prints `figure:` rows for scripts/figures.py.
# Takes several minutes; run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# TIME_FILE CMD...: runs CMD under /usr/bin/time, writing "wall user sys".
timed() {
  local out=$1; shift
  /usr/bin/time -f '%e %U %S' -o "$out" "$@"
}

timed "$tmp/release" env CARGO_TARGET_DIR="$tmp/release-target" cargo build --release --quiet
read -r wall user sys < "$tmp/release"
size=$(stat -c %s "$tmp/release-target/release/retrygate")
timed "$tmp/grammars" env CARGO_TARGET_DIR="$tmp/grammar-target" cargo build --release --quiet \
  -p tree-sitter -p tree-sitter-python -p tree-sitter-javascript -p tree-sitter-typescript \
  -p tree-sitter-go -p tree-sitter-java
read -r gwall guser gsys < "$tmp/grammars"

python3 - "$wall" "$user" "$sys" "$size" "$gwall" "$guser" "$gsys" <<'PY'
import json, sys
wall, user, sys_, size, gwall, guser, gsys = map(float, sys.argv[1:])
cpu, gcpu = user + sys_, guser + gsys
rows = [
    {"figure": "release build, empty target directory", "value": f"{wall:.0f} s wall, {cpu:.0f} s CPU"},
    {"figure": "release binary (stripped)", "value": f"{size / 1e6:.1f} MB"},
    {"figure": "tree-sitter and its grammars alone", "value": f"{gwall:.0f} s wall, {gcpu:.0f} s CPU",
     "baseline": f"whole build {cpu:.0f} s CPU", "ratio": f"{gcpu / cpu:.2f}"},
]
for r in rows:
    print("figure: " + json.dumps(r))
PY
