#!/usr/bin/env python3
"""Compares two retrygate binaries' scans of real commits, for a refactor that
must not change behaviour.

usage: scan-diff.py BIN_BEFORE BIN_AFTER REPOS_DIR COMMITS [--ext rs] [--all]

COMMITS lists `owner+name SHA` per line (a `#` line is a comment; a TSV whose
first two columns are repository and commit works too). REPOS_DIR holds clones
named `owner+name` (no checkout needed). Each commit is scanned as
`retrygate scan --repo R --base SHA^ --head SHA --format json` by both
binaries; by default only commits that change a file ending in `.EXT` (`rs`
unless `--ext` says otherwise; `--all` takes every commit). The exit code and
the whole JSON output must be equal. Prints every difference, then one line:

    scan-diff: N commits compared, D differ, F findings, S skipped

and exits 1 when any differ, 2 when a scan could not run.
"""
import json
import os
import subprocess
import sys


def commits(path):
    seen = set()
    for line in open(path, encoding="utf-8"):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.replace("\t", " ").split()
        if len(parts) < 2 or len(parts[1]) < 7 or parts[0] == "repo":
            continue
        key = (parts[0], parts[1])
        if key not in seen:
            seen.add(key)
            yield key


def touches(repo, sha, ext):
    r = subprocess.run(["git", "-C", repo, "diff-tree", "--no-commit-id", "--name-only", "-r", sha + "^", sha],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None
    return any(p.endswith("." + ext) for p in r.stdout.splitlines())


def scan(binary, repo, sha):
    r = subprocess.run([binary, "scan", "--repo", repo, "--base", sha + "^", "--head", sha, "--format", "json"],
                       capture_output=True, text=True, timeout=600)
    try:
        out = json.loads(r.stdout) if r.returncode in (0, 1) else None
    except ValueError:
        out = None
    return r.returncode, out, r.stderr.strip()[-300:]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) < 4:
        sys.exit(__doc__)
    before, after, repos, listing = os.path.abspath(args[0]), os.path.abspath(args[1]), args[2], args[3]
    ext = "rs"
    if "--ext" in sys.argv:
        ext = sys.argv[sys.argv.index("--ext") + 1]
    every = "--all" in sys.argv
    compared = differ = findings = skipped = 0
    for name, sha in commits(listing):
        repo = os.path.join(repos, name)
        if not os.path.isdir(repo):
            print(f"scan-diff: {name} is not cloned under {repos}; clone it or drop it from {listing}")
            sys.exit(2)
        if not every:
            t = touches(repo, sha, ext)
            if t is None:
                print(f"scan-diff: git cannot diff {name} {sha[:10]}; fetch the commit and its parent")
                sys.exit(2)
            if not t:
                skipped += 1
                continue
        a, b = scan(before, repo, sha), scan(after, repo, sha)
        compared += 1
        if a[1] is None or b[1] is None:
            print(f"ERROR {name} {sha[:10]}: before exit {a[0]} {a[2]!r}; after exit {b[0]} {b[2]!r}")
            if a[:2] != b[:2]:
                differ += 1
            continue
        findings += len(a[1].get("findings", []))
        if a[:2] != b[:2]:
            differ += 1
            print(f"DIFF {name} {sha[:10]}: exit {a[0]} -> {b[0]}")
            for key in sorted(set(a[1]) | set(b[1])):
                if a[1].get(key) != b[1].get(key):
                    print(f"  {key}:\n    before: {json.dumps(a[1].get(key))[:2000]}\n    after:  {json.dumps(b[1].get(key))[:2000]}")
    print(f"scan-diff: {compared} commits compared, {differ} differ, {findings} findings, {skipped} skipped")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
