#!/usr/bin/env bash
# CI's wall time as a new contributor or a CI runner meets it: a fresh clone
# of HEAD beside ../shared, an empty target directory, `.ci/run`, RUNS times
# (default 2). Prints each run's wall time and its steps (the `ci: ... took`
# lines .ci/run prints) as `figure:` rows for scripts/figures.py.
# Measures the committed HEAD, not the work tree. Run it with nothing else
# running: the goal is 600 s on 2 cores.
#   scripts/bench-ci.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-2}
root=$(pwd)
parent=$(dirname "$root")
for i in $(seq 1 "$runs"); do
  dir="$parent/.ci-bench-$$-$i"
  rm -rf "$dir"
  git clone --quiet "$root" "$dir"
  log="$dir.log"
  start=$(date +%s)
  status=0
  (cd "$dir" && ./.ci/run) >"$log" 2>&1 || status=$?
  wall=$(( $(date +%s) - start ))
  echo "run $i: .ci/run exited $status after $wall s (log: $log)"
  python3 - "$log" "$wall" "$status" "$i" "$(nproc)" <<'PY'
import json, re, sys
log, wall, status, run, cores = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
steps = re.findall(r"^(?:ci|test\.sh): (.+?) took (\d+) s$", open(log, encoding="utf-8", errors="replace").read(), re.M)
detail = ", ".join(f"{name} {secs} s" for name, secs in steps)
print("figure: " + json.dumps({
    "figure": f"run {run} of `.ci/run`, fresh clone, {cores} cores" + ("" if status == 0 else f" (FAILED, exit {status})"),
    "value": f"{wall} s",
    "goal": "under 600 s; " + (detail or "no step times in the log"),
}))
PY
  if [ "$status" -eq 0 ]; then rm -rf "$dir" "$log"; fi
done
