#!/usr/bin/env python3
"""The `desynchronized` check under contention: false-pass and false-fail rates.

Replays, round after round, two fleets at once against the loopback 429
server, while busy loops keep every core of the machine occupied:

- a lockstep fleet: curl `--retry 5`, which waits exactly what Retry-After
  asks (`default` scenario: 429 with Retry-After: 1, three times). Every round
  must be judged lockstep or inconclusive; a pass is a false pass.
- a jittered fleet: retrygate's `reference` client, which honours Retry-After
  and adds up to max(0.5 s, Retry-After / 2) on top. Every round must pass; a
  lockstep or inconclusive verdict is a false fail.

It prints one line per round (each fleet's reading, concentration and noise
baseline), then both rates and the spread of the figures. It is a benchmark,
not a test: it takes minutes; `scripts/figures.py measure desync` records
its figures for docs/benchmarks.md. Exit 0 when both rates are 0, 1 otherwise, 2 on a setup error.

Usage: scripts/bench-desync.py [--rounds 50] [--clients 8] [--binary PATH]
                               [--busy N] [--max-minutes 30]
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_binary(given):
    if given:
        return given
    for profile in ("release", "debug"):
        path = os.path.join(ROOT, "target", profile, "retrygate")
        if os.access(path, os.X_OK):
            return path
    sys.exit("no retrygate binary: run `cargo build --release` first, or pass --binary PATH")


def start_replay(binary, clients, command):
    args = [binary, "replay", "--scenario", "default", "--clients", str(clients), "--format", "json", "--"]
    return subprocess.Popen(args + command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def reading(proc):
    out, err = proc.communicate(timeout=300)
    if proc.returncode == 2:
        raise RuntimeError(f"replay could not decide: {err.strip()}")
    report = json.loads(out)
    check = next(c for c in report["checks"] if c["check"] == "desynchronized")
    summary = report.get("desync") or {}
    return {
        "status": check["status"],
        "reading": summary.get("reading", check["status"]),
        "concentration": summary.get("concentration"),
        "noise_pair_ms": summary.get("noise_pair_ms"),
        "retry_pair_ms": summary.get("retry_pair_ms"),
        "rerun": report.get("rerun_of"),
        "message": check["message"],
    }


def fmt(r):
    c = r["concentration"]
    c = "-" if c is None else f"{c:.1f}x"
    n = r["noise_pair_ms"]
    n = "-" if n is None else f"{n:.1f} ms"
    first = r["rerun"]
    rerun = ""
    if first:
        d = first["desync"]
        rerun = f" (rerun after {d['reading']} {d['concentration']:.1f}x with {first['clients']} clients)"
    return f"{r['reading']:<12} {c:>9}, noise {n:>9}{rerun}"


def quantiles(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return "-"
    pick = lambda p: xs[int(p * (len(xs) - 1))]
    return f"min {xs[0]:.1f}, median {pick(0.5):.1f}, max {xs[-1]:.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--binary")
    ap.add_argument("--busy", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--max-minutes", type=float, default=30.0)
    a = ap.parse_args()
    if a.rounds < 1 or a.clients < 1 or a.busy < 0:
        sys.exit("--rounds and --clients must be 1 or more, --busy 0 or more")
    if not shutil.which("curl"):
        sys.exit("curl is missing: run .ci/install-replay-deps.sh")
    binary = find_binary(a.binary)
    lockstep_cmd = ["sh", "-c", 'curl -sS -o - --retry 5 "$RETRYGATE_URL/items"']
    jitter_cmd = [binary, "replay-client", "--profile", "reference"]
    deadline = time.monotonic() + a.max_minutes * 60

    # Busy loops on every core, each bounded by the script's own time limit.
    busy = [
        subprocess.Popen(
            ["timeout", str(int(a.max_minutes * 60) + 5), sys.executable, "-c", "while True: pass"]
        )
        for _ in range(a.busy)
    ]
    lockstep, jittered = [], []
    try:
        print(f"{a.rounds} rounds, {a.clients} clients per fleet, two fleets at once, {a.busy} busy {'loop' if a.busy == 1 else 'loops'}, "
              f"load average {os.getloadavg()[0]:.1f}, binary {binary}")
        for i in range(a.rounds):
            if time.monotonic() > deadline:
                print(f"stopped after {i} rounds: --max-minutes {a.max_minutes} reached")
                break
            lp = start_replay(binary, a.clients, lockstep_cmd)
            jp = start_replay(binary, a.clients, jitter_cmd)
            lr, jr = reading(lp), reading(jp)
            lockstep.append(lr)
            jittered.append(jr)
            print(f"round {i + 1:>3}: lockstep curl: {fmt(lr)} | jittered reference: {fmt(jr)} "
                  f"| load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        for p in busy:
            p.kill()
            p.wait()

    false_pass = [r for r in lockstep if r["status"] == "pass"]
    false_fail = [r for r in jittered if r["status"] != "pass"]
    n = len(lockstep)
    print()
    print(f"false passes (lockstep fleet judged spread out): {len(false_pass)} of {n} = {len(false_pass) / max(n, 1):.3f}")
    print(f"false fails (jittered fleet not passed):          {len(false_fail)} of {n} = {len(false_fail) / max(n, 1):.3f}")
    for name, rs in (("lockstep", lockstep), ("jittered", jittered)):
        readings = {}
        for r in rs:
            readings[r["reading"]] = readings.get(r["reading"], 0) + 1
        print(f"{name}: readings {readings}, reruns {sum(1 for r in rs if r['rerun'])}; "
              f"concentration {quantiles(r['concentration'] for r in rs)}; "
              f"retries apart (ms) {quantiles(r['retry_pair_ms'] for r in rs)}; "
              f"noise baseline (ms) {quantiles(r['noise_pair_ms'] for r in rs)}")
    for r in false_pass + false_fail:
        print(f"  wrong: {r['message']}")
    # Machine-readable rows for scripts/figures.py.
    for name, wrong in (("false passes (lockstep fleet judged spread out)", false_pass),
                        ("false fails (jittered fleet not passed)", false_fail)):
        print("figure: " + json.dumps({
            "figure": f"{name}, {n} rounds of {a.clients} + {a.clients} clients, {a.busy} busy loops",
            "value": f"{len(wrong)} of {n}",
            "goal": "0",
        }))
    sys.exit(0 if not false_pass and not false_fail and n > 0 else 1)


if __name__ == "__main__":
    try:
        main()
    except (RuntimeError, OSError, json.JSONDecodeError, subprocess.TimeoutExpired) as e:
        print(f"bench-desync: {e}", file=sys.stderr)
        sys.exit(2)
