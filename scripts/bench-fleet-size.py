#!/usr/bin/env python3
"""One client, 4 and 12 clients: does the replay's verdict depend on the fleet size?

Issue 53: got's back-off (waits of 1, 2, 4 s, each plus a fixed 0-100 ms)
read as spread out with 4 clients and as lockstep with 12. This replays each
real client of the replay tests (curl, urllib3, requests, tenacity,
reqwest-retry, the built-in `replay-client` profiles) and a got-like client
(tests/clients/got_like_client.py) on the scenario its test uses, with 4 and
with 12 clients, RUNS times each, while busy loops keep every core occupied
and the replays run a few at a time. A run's verdict is the replay's verdict
(pass or fail, what the gate acts on), and beside it the `desynchronized`
check's outcome (pass, a fail and its level, not applicable), after the
replay's own rerun of an inconclusive first run. (The replay reruns only when
nothing else failed at error weight: a client that already fails, say,
`retry-after-honored` keeps a small fleet's inconclusive reading, which
fails closed.)

It prints one line per replay, then a table: client, scenario, clients, the
outcomes seen, and the agreement: in how many runs 4 and 12 clients got the
same verdict, and the same `desynchronized` outcome. It is a benchmark, not a
test: it takes 10 to 20 minutes; `scripts/figures.py measure fleet` records
its figures for docs/benchmarks.md. Exit 0 when every client got the same
verdict with 4 and 12 clients in every run, 1 otherwise, 2 on a setup error.

Usage: scripts/bench-fleet-size.py [--runs 10] [--binary PATH] [--busy N]
                                   [--parallel 3] [--only NAME[,NAME...]]
(--binary defaults to target/release/retrygate, else target/debug/retrygate;
--busy defaults to one busy loop per core.) Loopback only.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = (4, 12)


def find_binary(given):
    if given:
        return given
    for profile in ("release", "debug"):
        path = os.path.join(ROOT, "target", profile, "retrygate")
        if os.access(path, os.X_OK):
            return path
    sys.exit("no retrygate binary: run `cargo build --release` first, or pass --binary PATH")


def reqwest_client():
    """tests/clients/reqwest-retry, built as tests/it/replay_clients.rs builds it."""
    target = os.path.join(ROOT, "target", "clients")
    path = os.path.join(target, "debug", "replay-client-reqwest-retry")
    if not os.access(path, os.X_OK):
        manifest = os.path.join(ROOT, "tests", "clients", "reqwest-retry", "Cargo.toml")
        subprocess.run(["cargo", "build", "--quiet", "--manifest-path", manifest, "--target-dir", target], check=True)
    return path


def clients(binary):
    """(name, scenario, command): each real client of the replay tests on its test's scenario."""
    py = lambda script, *args: ["python3", os.path.join(ROOT, "tests", "clients", script), *args]
    sh = lambda s: ["sh", "-c", s]
    profile = lambda p: [binary, "replay-client", "--profile", p]
    curl = 'curl -sS -o - --retry 5 "$RETRYGATE_URL/items"'
    out = [
        ("curl --retry 5", "default", sh(curl)),
        ("curl --retry 5", "no-retry-after", sh(curl)),
        ("urllib3 default", "default", py("urllib3_client.py", "default")),
        ("urllib3 ignore Retry-After", "default", py("urllib3_client.py", "ignore-retry-after")),
        ("urllib3 backoff_jitter 0.5", "no-retry-after", py("urllib3_client.py", "jitter")),
        ("requests HTTPAdapter(3)", "default", py("requests_client.py")),
        ("tenacity", "default", py("tenacity_client.py")),
        ("reqwest-retry", "default", [reqwest_client()]),
        ("replay-client storm", "default", profile("storm")),
        ("replay-client calm", "default", profile("calm")),
        ("replay-client compliant", "default", profile("compliant")),
        ("replay-client reference", "default", profile("reference")),
        ("replay-client reference", "no-retry-after", profile("reference")),
        ("got-like (1, 2, 4 s + 0-100 ms)", "no-retry-after", py("got_like_client.py")),
        ("got-like (Retry-After + 0-100 ms)", "default", py("got_like_client.py")),
    ]
    return out


def replay(binary, scenario, n, command):
    args = [binary, "replay", "--scenario", scenario, "--clients", str(n), "--format", "json", "--"] + command
    p = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if p.returncode == 2:
        raise RuntimeError(f"replay could not decide: {p.stderr.strip()}")
    report = json.loads(p.stdout)
    check = next(c for c in report["checks"] if c["check"] == "desynchronized")
    status = check["status"] if check["status"] != "fail" else f"fail/{check['level']}"
    summary = report.get("desync") or {}
    rerun = report.get("rerun_of")
    return {
        "verdict": report["verdict"],
        "desync": status,
        "reading": summary.get("reading", "-"),
        "concentration": summary.get("concentration"),
        "judged": summary.get("judged_waits"),
        "clients": report["clients"],
        "rerun": f"rerun of {rerun['clients']} ({rerun['desync']['reading'] if rerun.get('desync') else 'unread'})" if rerun else "",
    }


def count(xs):
    out = {}
    for x in xs:
        out[x] = out.get(x, 0) + 1
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--binary")
    ap.add_argument("--busy", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--parallel", type=int, default=3, help="replays at once")
    ap.add_argument("--only", help="comma-separated client names (a prefix is enough)")
    a = ap.parse_args()
    if a.runs < 1 or a.busy < 0 or a.parallel < 1:
        sys.exit("--runs and --parallel must be 1 or more, --busy 0 or more")
    if not shutil.which("curl"):
        sys.exit("curl is missing: run .ci/install-replay-deps.sh")
    ok = subprocess.run(["python3", "-c", "import urllib3, requests, tenacity"], capture_output=True).returncode == 0
    if not ok:
        sys.exit("python3 with urllib3, requests and tenacity is missing: run .ci/install-replay-deps.sh")
    binary = find_binary(a.binary)
    todo = clients(binary)
    if a.only:
        names = [s.strip() for s in a.only.split(",")]
        todo = [c for c in todo if any(c[0].startswith(n) for n in names)]
    # Busy loops on every core, bounded in time in case this script dies; not
    # on our stdout, which scripts/figures.py reads to its end.
    busy = [
        subprocess.Popen(["timeout", "3600", sys.executable, "-c", "while True: pass"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(a.busy)
    ]
    results = {}  # (name, scenario, n) -> [result per run]
    started = time.monotonic()
    try:
        print(f"{len(todo)} clients x {len(SIZES)} fleet sizes x {a.runs} runs, {a.parallel} replays at once, "
              f"{a.busy} busy {'loop' if a.busy == 1 else 'loops'}, load average {os.getloadavg()[0]:.1f}, binary {binary}",
              flush=True)
        jobs = [(name, scenario, n, cmd, i) for i in range(a.runs) for (name, scenario, cmd) in todo for n in SIZES]
        with ThreadPoolExecutor(max_workers=a.parallel) as pool:
            futures = [(j, pool.submit(replay, binary, j[1], j[2], j[3])) for j in jobs]
            for (name, scenario, n, _, i), f in futures:
                r = f.result()
                results.setdefault((name, scenario, n), []).append(r)
                c = r["concentration"]
                c = "-" if c is None else f"{c:.1f}x"
                print(f"run {i + 1:>2} {name} on {scenario}, {n:>2} clients: {r['verdict']}, desync {r['desync']:<16} "
                      f"{r['reading']:<12} {c:>8} judged {r['judged'] or '-'} {r['rerun']} | load {os.getloadavg()[0]:.1f}",
                      flush=True)
    finally:
        # SIGTERM: `timeout` passes it on to the loop (a SIGKILL would not).
        for p in busy:
            p.terminate()
            p.wait()

    print()
    print(f"{time.monotonic() - started:.0f} s")
    print()
    print("| client | scenario | clients | verdict, `desynchronized` (runs) | same verdict, 4 and 12 | same `desynchronized` |")
    print("|---|---|---|---|---|---|")
    rows, all_agree = [], True
    key = lambda r: f"{r['verdict']}, {r['desync']}"
    tally = lambda rs: "; ".join(f"{v} ({k})" for v, k in sorted(count(key(r) for r in rs).items(), key=lambda x: -x[1]))
    for name, scenario, _ in todo:
        four, twelve = results[(name, scenario, 4)], results[(name, scenario, 12)]
        same = sum(1 for x, y in zip(four, twelve) if x["verdict"] == y["verdict"])
        same_desync = sum(1 for x, y in zip(four, twelve) if x["desync"] == y["desync"])
        all_agree &= same == len(four)
        for n, rs in ((4, four), (12, twelve)):
            reruns = sum(1 for r in rs if r["rerun"])
            seen = tally(rs) + (f"; {reruns} rerun" if reruns else "")
            agreement = f"{same} of {len(four)} | {same_desync} of {len(four)}" if n == 4 else " |"
            print(f"| {name} | {scenario} | {n} | {seen} | {agreement} |")
        rows.append({
            "figure": f"{name} on `{scenario}`, 4 and 12 clients: same verdict; same `desynchronized`",
            "value": f"{same} of {len(four)}; {same_desync} of {len(four)}",
            "goal": "same verdict every run; seen: " + tally(four + twelve),
        })
    # Machine-readable rows for scripts/figures.py.
    for row in rows:
        print("figure: " + json.dumps(row))
    sys.exit(0 if all_agree else 1)


if __name__ == "__main__":
    try:
        main()
    except (RuntimeError, OSError, json.JSONDecodeError, subprocess.TimeoutExpired, subprocess.CalledProcessError) as e:
        print(f"bench-fleet-size: {e}", file=sys.stderr)
        sys.exit(2)
