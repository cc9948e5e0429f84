#!/usr/bin/env bash
# Installs what the replay tests (tests/replay*.rs) run as real third-party clients:
# curl, and Python 3 with urllib3, requests and tenacity (tests/clients/*.py: the
# write-loss clients use requests + urllib3; curl's Idempotency-Key comes from
# /proc/sys/kernel/random/uuid). The Rust client under tests/clients/reqwest-retry
# is built by the test itself with cargo.
# Idempotent: safe to run on a machine that already has everything.
set -euo pipefail

need_apt=()
command -v curl >/dev/null 2>&1 || need_apt+=(curl)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3 python3-pip)
# A Debian python3 comes without pip; urllib3 2.x (backoff_jitter) needs pip.
if command -v python3 >/dev/null 2>&1 && ! python3 -m pip --version >/dev/null 2>&1; then
    need_apt+=(python3-pip)
fi
if ((${#need_apt[@]})); then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
fi

if ! python3 -c 'import urllib3, requests, tenacity' >/dev/null 2>&1; then
    # --break-system-packages is needed on a Debian-managed python3 (PEP 668);
    # a pyenv or venv python ignores it.
    python3 -m pip install --quiet --disable-pip-version-check \
        'urllib3>=2' 'requests>=2.31' 'tenacity>=8' \
        || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages \
            'urllib3>=2' 'requests>=2.31' 'tenacity>=8'
fi

python3 -c 'import urllib3, requests, tenacity; print("replay deps: urllib3", urllib3.__version__, "requests", requests.__version__, "tenacity ok")'
curl --version | head -n1

# The Rust client (reqwest + reqwest-retry) is built by tests/it/replay_clients.rs;
# fetch its crates now so the test run itself needs no registry.
here="$(cd "$(dirname "$0")/.." && pwd)"
cargo fetch --quiet --manifest-path "$here/tests/clients/reqwest-retry/Cargo.toml"
