#!/usr/bin/env python3
"""Scan the history of the repositories in repos.tsv that touches retry
layers, and print every `retry-amplified` finding and every note of the
layer model, one TSV row each, for judging by reading the diff.

usage: history.py BINARY REPOS_DIR [--per-repo N]

Each repository is a no-checkout clone named OWNER+NAME in REPOS_DIR.
Commits are those `git log --no-merges -G` finds for the layer words below
(newest first, at most N per repository, spread over the history).
Output columns: repo, sha, kind (finding|note-blocking|note-info|error),
path:line, message. Commits that could not be scanned (a blob missing from
the clone) are printed as `error` rows.
"""
import json
import os
import subprocess
import sys

WORDS = (
    r"retries|attempts|retryOn|retry_on|next_upstream|next-upstream|retry_policy|num_retries|"
    r"redispatch|isRetryable|retryBudget|retry\.linkerd|retry\.attempts|HTTPRetry|NumRetries|"
    r"_URL|_URI|_ADDR|_HOST"
)
LAYER_NOTE = ("attempts per inbound request", "may declare retries", "mesh and proxy files", "layer model")


def commits(repo, n):
    out = subprocess.run(
        ["git", "-C", repo, "log", "--no-merges", "--format=%H", "-G", WORDS, "--",
         "*.yaml", "*.yml", "*.json", "*.toml", "*.conf", "*.cfg", "*.tmpl", "*.template", "*.env",
         "*nginx*", "*haproxy*", "Dockerfile*", "*.rs", "*.go"],
        capture_output=True, text=True,
    ).stdout.split()
    if len(out) <= n:
        return out
    step = len(out) / n
    return [out[int(i * step)] for i in range(n)]


def main():
    binary, repos_dir = sys.argv[1], sys.argv[2]
    per = int(sys.argv[sys.argv.index("--per-repo") + 1]) if "--per-repo" in sys.argv else 30
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "repos.tsv")) as f:
        rows = [l.rstrip("\n").split("\t") for l in f if l.strip() and not l.startswith("repo\t")]
    for row in rows:
        name = row[0]
        repo = os.path.join(repos_dir, name.replace("/", "+"))
        for sha in commits(repo, per):
            parents = subprocess.run(["git", "-C", repo, "rev-list", "--parents", "-n1", sha],
                                     capture_output=True, text=True).stdout.split()
            if len(parents) < 2:
                print(f"{name}\t{sha[:10]}\troot\t\ta root commit: no base to compare", flush=True)
                continue
            p = subprocess.run(
                [binary, "scan", "--repo", repo, "--base", sha + "^", "--head", sha, "--format", "json"],
                capture_output=True, text=True,
            )
            if p.returncode == 2 or not p.stdout.strip():
                err = (p.stderr.strip().splitlines() or ["no output"])[-1][:160]
                print(f"{name}\t{sha[:10]}\terror\t\t{err}", flush=True)
                continue
            j = json.loads(p.stdout)
            for f in j.get("findings", []):
                if f.get("kind") == "retry-amplified":
                    print(f"{name}\t{sha[:10]}\tfinding\t{f['path']}:{f['line']}\t{f['message']}", flush=True)
            for n in j.get("notes", []):
                msg = n.get("message", "")
                if any(w in msg for w in LAYER_NOTE):
                    sev = "note-blocking" if n.get("blocking") or n.get("severity") == "error" else "note-info"
                    print(f"{name}\t{sha[:10]}\t{sev}\t{n.get('path') or ''}\t{msg}", flush=True)
            print(f"{name}\t{sha[:10]}\tscanned\t\t", flush=True)


if __name__ == "__main__":
    main()
