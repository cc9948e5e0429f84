#!/usr/bin/env bash
# Runs the 429 replay benchmark (benches/replay.rs) and prints its figures:
# the replay server's added latency (median, p99) under 200 concurrent
# clients against a bare-TCP baseline from the same run, and the `default`
# replay's wall time against the 3 s its waits demand.
# Usage: scripts/bench-replay.sh [--dev]   (--dev skips the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == "--dev" ]]; then
    exec cargo bench --profile dev --bench replay
fi
exec cargo bench --bench replay
