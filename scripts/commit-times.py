#!/usr/bin/env python3
"""Time per commit on real history: a baseline build against a candidate,
in the same run, with their ratio; optionally, whether their findings are
identical.

Every listed commit is scanned as `commit^..commit` (`retrygate scan
--format json`) once with each binary, in turns (the order alternates from
one commit to the next), so that a neighbour's load falls on both alike. On
a busy machine the absolute times move; the ratio is the figure to read.

  scripts/commit-times.py --clones DIR [--list FILE ...] [--every N]
                          [--diff] BASELINE CANDIDATE [MORE ...]

  --clones DIR  one git repository per project, named owner+name (a bare
                repository or a clone with history, or owner+name/repo)
  --list FILE   commits to scan, one per line: `owner/name<TAB>commit[...]`
                (eval/commits/*.tsv) or `owner+name commit`; `#` lines are
                comments. Default: every eval/commits/*.tsv except holdout-*.
  --every N     keep every Nth commit of the list (default 1)
  --diff        also compare each binary's findings and notes with the
                baseline's (the whole JSON report, commit by commit) and
                list the commits where they differ; exits 1 if any does
  --slowest K   how many of the slowest commits to print per binary (5)

It prints, per binary, the median, the p95 (the value at 95% of the sorted
times) and the slowest commits, then each candidate's median and p95 as a
ratio of the baseline's. A scan that exits 2 (could not decide) is listed:
it is a failure to read, not a speed figure.
"""
import argparse, glob, json, os, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))


def read_list(paths):
    rows = []
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            for line in fh:
                if not line.strip() or line.startswith("#"):
                    continue
                cols = line.split()
                rows.append((cols[0].replace("/", "+"), cols[1]))
    return rows


def repo_dir(clones, repo):
    d = os.path.join(clones, repo)
    return os.path.join(d, "repo") if os.path.isdir(os.path.join(d, "repo")) else d


def p95(ts):
    s = sorted(ts)
    return s[int(0.95 * (len(s) - 1))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clones", required=True)
    ap.add_argument("--list", action="append", default=[])
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--diff", action="store_true")
    ap.add_argument("--slowest", type=int, default=5)
    ap.add_argument("bins", nargs="+")
    a = ap.parse_args()
    lists = a.list or sorted(
        f for f in glob.glob(os.path.join(HERE, "..", "eval", "commits", "*.tsv"))
        if not os.path.basename(f).startswith(("holdout-", "README"))
    )
    rows = read_list(lists)[:: max(1, a.every)]
    bins = [os.path.abspath(b) for b in a.bins]
    times = {b: [] for b in bins}
    failed = {b: [] for b in bins}
    differ = []
    for i, (repo, sha) in enumerate(rows):
        path = repo_dir(a.clones, repo)
        order = bins if i % 2 == 0 else bins[::-1]
        out = {}
        for b in order:
            t = time.perf_counter()
            p = subprocess.run(
                [b, "scan", "--repo", path, "--base", sha + "^", "--head", sha, "--format", "json"],
                capture_output=True, text=True,
            )
            times[b].append((time.perf_counter() - t, repo, sha[:10]))
            if p.returncode == 2:
                failed[b].append((repo, sha[:10], p.stderr.strip().splitlines()[-1:]))
            out[b] = (p.returncode, p.stdout)
        if a.diff:
            base_rc, base_out = out[bins[0]]
            for b in bins[1:]:
                if out[b] != (base_rc, base_out):
                    differ.append((repo, sha[:10], b, base_out, out[b][1]))
        print(f"\r{i + 1}/{len(rows)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    print(f"{len(rows)} commits, each binary in turn")
    for b in bins:
        ts = [t for t, _, _ in times[b]]
        slow = ", ".join(f"{r} {s} {t:.2f}s" for t, r, s in sorted(times[b])[-a.slowest:][::-1])
        print(f"{b}: median {statistics.median(ts):.2f}s  p95 {p95(ts):.2f}s  max {max(ts):.2f}s")
        print(f"  slowest: {slow}")
        for f in failed[b]:
            print(f"  exit 2: {f}")
    base = [t for t, _, _ in times[bins[0]]]
    for b in bins[1:]:
        ts = [t for t, _, _ in times[b]]
        print(
            f"{os.path.basename(b)} / {os.path.basename(bins[0])}: median {statistics.median(ts) / statistics.median(base):.2f}"
            f"  p95 {p95(ts) / p95(base):.2f}"
        )
    # Machine-readable rows for scripts/figures.py (the last binary is the
    # candidate, the first the baseline).
    ts = [t for t, _, _ in times[bins[-1]]]
    for name, fn, goal in (("median", statistics.median, ""), ("p95", p95, "under 1 s")):
        print("figure: " + json.dumps({
            "figure": f"{name} of {len(rows)} commits",
            "value": f"{fn(ts):.2f} s",
            "baseline": f"{fn(base):.2f} s",
            "ratio": f"{fn(ts) / fn(base):.2f}",
            "goal": goal,
        }))
    slowest = max(times[bins[-1]])
    print("figure: " + json.dumps({
        "figure": "slowest commit",
        "value": f"{slowest[0]:.2f} s ({slowest[1]} {slowest[2]})",
        "baseline": f"{max(base):.2f} s",
    }))
    if a.diff:
        print(f"reports that differ from the baseline's: {len(differ)} of {len(rows) * (len(bins) - 1)}")
        for repo, sha, b, x, y in differ:
            print(f"--- {repo} {sha} ({os.path.basename(b)})")
            try:
                xs, ys = json.loads(x), json.loads(y)
                for key in ("findings", "notes"):
                    gone = [f for f in xs.get(key, []) if f not in ys.get(key, [])]
                    new = [f for f in ys.get(key, []) if f not in xs.get(key, [])]
                    for f in gone:
                        print(f"  - {key}: {json.dumps(f)[:300]}")
                    for f in new:
                        print(f"  + {key}: {json.dumps(f)[:300]}")
                if xs.get("verdict") != ys.get("verdict"):
                    print(f"  verdict {xs.get('verdict')} -> {ys.get('verdict')}")
            except ValueError:
                print(f"  output not JSON: {x[:200]!r} / {y[:200]!r}")
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
