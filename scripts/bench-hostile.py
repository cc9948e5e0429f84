#!/usr/bin/env python3
"""Hostile input stays bounded: a pull request of 20 Rust files, each with
40,000 new retry sites (about 1.8 MB a file), scanned by the release build.

The goal (issue 51) is that such a change finishes within 60 s and 1 GB, or
ends in a blocking note that says why. Prints `figure:` rows for
scripts/figures.py: the wall time and peak memory of `retrygate scan`, the
verdict, and whether a blocking note said the scan stopped. The baseline in
the same run is the same scan by `--baseline-bin` (an earlier build, so the
ratio says what a change to the scan bought) when given, else the scan of
one such file (so the ratio says how the cost grows with the change); the
one-file scan is printed either way.

usage: scripts/bench-hostile.py [--bin target/release/retrygate] [--baseline-bin BIN
                                [--baseline-ref REF]] [--files 20] [--sites 40000]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def git(repo, *args):
    subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True)


def build_repo(root, files, sites):
    os.makedirs(os.path.join(root, "src"))
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "bench@retrygate.invalid")
    git(root, "config", "user.name", "bench")
    with open(os.path.join(root, "Cargo.toml"), "w") as f:
        f.write('[package]\nname = "hostile"\nversion = "0.1.0"\nedition = "2021"\n')
    with open(os.path.join(root, "src", "lib.rs"), "w") as f:
        f.write("fn unrelated() {}\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "head")
    for n in range(files):
        # About 45 bytes a site, as in the case (40,000 sites in 1.9 MB):
        # each a backon retry of a POST through the file's policy helper.
        lines = [
            "use backon::{ExponentialBuilder as B, Retryable};\n",
            "fn b() -> B { B::default().with_max_times(3) }\n",
            "async fn s() -> R { C.post(U).send().await }\n",
        ]
        for i in range(sites):
            lines.append(f"async fn f{i}(){{(||s()).retry(b()).await;}}\n")
        with open(os.path.join(root, "src", f"m{n}.rs"), "w") as f:
            f.write("".join(lines))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "head")


def scan(binary, repo, timeout):
    """(wall s, peak RSS MB, verdict, blocking notes, exit code)."""
    tfile = os.path.join(repo, "..", os.path.basename(repo) + ".time")
    cmd = ["/usr/bin/time", "-f", "%e %M", "-o", tfile, binary, "scan", "--repo", repo,
           "--base", "main", "--head", "head", "--format", "json"]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        code = out.returncode
        stdout = out.stdout
    except subprocess.TimeoutExpired:
        return (float(timeout), None, "timed out", [], None)
    wall, rss_kb = open(tfile).read().split()[-2:]
    try:
        verdict = json.loads(stdout)
    except ValueError:
        verdict = {}
    notes = [n["message"] for n in verdict.get("notes", []) if n.get("blocking")]
    return (float(wall), int(rss_kb) / 1024, verdict.get("verdict", f"exit {code}"), notes, code)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/retrygate")
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--sites", type=int, default=40000)
    ap.add_argument("--baseline-bin", help="an earlier build, run on the same change as the baseline")
    ap.add_argument("--baseline-ref", default="unknown", help="what --baseline-bin was built from")
    ap.add_argument("--timeout", type=int, default=600)
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    with tempfile.TemporaryDirectory() as tmp:
        one = os.path.join(tmp, "one")
        many = os.path.join(tmp, "many")
        build_repo(one, 1, a.sites)
        build_repo(many, a.files, a.sites)
        single = scan(binary, one, a.timeout)
        big = scan(binary, many, a.timeout)
        # In turn, not side by side: the two share the machine's cores.
        before = scan(os.path.abspath(a.baseline_bin), many, a.timeout) if a.baseline_bin else None
    runs = [("one file", single), (f"{a.files} files", big)]
    if before:
        runs.append((f"{a.files} files, baseline build", before))
    for label, r in runs:
        wall, rss, verdict, notes, _ = r
        print(f"{label}: {wall:.1f} s, {rss if rss is None else round(rss)} MB, verdict {verdict}, "
              f"{len(notes)} blocking note(s){': ' + notes[0][:160] if notes else ''}", file=sys.stderr)
    wall, rss, _, _, _ = big

    def said(r):
        w, m, v, ns, _ = r
        within = m is not None and w <= 60 and m <= 1024
        return f"{v}; " + ("within both bounds" if within else
                           ("a blocking note says why it stopped" if any(
                               "stopped" in n or "limit" in n or "more than" in n for n in ns)
                            else "OVER THE BOUNDS, no note"))

    def mb(x):
        return "not measured (timed out)" if x is None else f"{x:.0f} MB"

    # The baseline column: the baseline build on the same change, else one file.
    ref = before if before else single
    who = f"build {a.baseline_ref}: " if before else "one such file "
    one_file = f"; one such file {single[0]:.1f} s, {mb(single[1])}"
    rows = [
        {
            "figure": f"hostile change: {a.files} Rust files x {a.sites:,} new retry sites, `scan` wall time",
            "value": f"{wall:.1f} s",
            "baseline": f"{who}{ref[0]:.1f} s" + (" (timed out)" if ref[1] is None else ""),
            "ratio": f"{wall / ref[0]:.2f}" if ref[0] else "",
            "goal": "within 60 s, or a blocking note" + (one_file if before else ""),
        },
        {
            "figure": f"hostile change: {a.files} Rust files x {a.sites:,} new retry sites, `scan` peak memory",
            "value": mb(rss),
            "baseline": "" if ref[1] is None else f"{who}{ref[1]:.0f} MB",
            "ratio": "" if rss is None or not ref[1] else f"{rss / ref[1]:.2f}",
            "goal": "within 1 GB, or a blocking note",
        },
        {
            "figure": "hostile change: verdict",
            "value": said(big),
            "baseline": f"{who}{said(before)}" if before else "",
            "ratio": "",
            "goal": "never a pass; bounded or said",
        },
    ]
    for r in rows:
        print("figure: " + json.dumps(r))


if __name__ == "__main__":
    main()
