#!/usr/bin/env python3
"""Re-runs retrygate's real-history evaluation.

The evaluation is data under eval/ (no third-party code is kept here):

  eval/commits/<set>.tsv      repo<TAB>commit[<TAB>note]
      every commit scanned as `commit^..commit` (repo is owner/name);
  eval/judgments/<set>.tsv    repo<TAB>commit<TAB>path:line<TAB>kind<TAB>verdict<TAB>reason
      one row per error finding retrygate raised, judged by reading the diff:
      verdict is tp, fp or debatable;
  eval/regressions/<set>.tsv  repo<TAB>commit<TAB>path:line<TAB>kind<TAB>reason
      real retry regressions confirmed by reading the diff (recall is measured
      on these; a regression counts as found when an error finding of that kind
      is within 15 lines of path:line in that commit).

Lines starting with # are comments. Usage:

  eval/run.py --clones DIR [--bin target/release/retrygate] [--set NAME ...]

DIR holds one git repository per evaluated project, named owner+name (a bare
repository or a clone, with full history). The script prints, per set and per
language, precision over judged error findings and recall over the confirmed
regressions, and lists every error finding that has no judgment yet. It exits
1 when a scan crashes or exits 2, or when an error finding is unjudged, so the
list stays complete as the analyzers change.
"""
import argparse, collections, glob, json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
LANG = {".rs": "rust", ".py": "python", ".go": "go", ".js": "js/ts", ".ts": "js/ts",
        ".mjs": "js/ts", ".cjs": "js/ts", ".tsx": "js/ts", ".jsx": "js/ts",
        ".java": "java", ".kt": "java", ".kts": "java", ".rb": "ruby", ".php": "php", ".cs": "csharp"}


def lang_of(path):
    return LANG.get(os.path.splitext(path)[1].lower(), "config")


def rows(kind, sets):
    out = []
    for f in sorted(glob.glob(os.path.join(HERE, kind, "*.tsv"))):
        name = os.path.splitext(os.path.basename(f))[0]
        if sets and name not in sets:
            continue
        with open(f, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                line = line.rstrip("\n")
                if not line.strip() or line.startswith("#"):
                    continue
                cols = line.split("\t")
                out.append((name, f"{os.path.relpath(f, HERE)}:{n}", cols))
    return out


def repo_dir(clones, repo):
    d = os.path.join(clones, repo.replace("/", "+"))
    return os.path.join(d, "repo") if os.path.isdir(os.path.join(d, "repo")) else d


def scan(binary, clones, repo, commit):
    cmd = [binary, "scan", "--repo", repo_dir(clones, repo), "--base", commit + "^", "--head", commit, "--format", "json"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode not in (0, 1):
        return None, p.stderr.strip().splitlines()[-1:] or [f"exit {p.returncode}"]
    return json.loads(p.stdout), None


def places(f):
    """Where a finding is: its own path and line, and the copies it lists
    ("the same change in N more places: a.py:3, b.py:9"), since one finding
    stands for a change repeated in several files."""
    out = [(f["path"], f["line"])]
    msg = f.get("message", "")
    marker = msg.find("more places: ")
    if marker >= 0:
        for loc in msg[marker + len("more places: "):].split(","):
            p, _, l = loc.strip().rpartition(":")
            if p and l.isdigit():
                out.append((p, int(l)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clones", required=True)
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "target", "release", "retrygate"))
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--jobs", type=int, default=2, help="scans run at once")
    ap.add_argument("--dump", help="write every error finding, one JSON line each, to this file")
    args = ap.parse_args()

    commits = rows("commits", args.set)
    judged = {}
    for _, where, c in rows("judgments", args.set):
        judged[(c[0], c[1][:12], c[2], c[3])] = (c[4], where)
    regressions = rows("regressions", args.set)

    errors, findings_by_commit, failures, unjudged = [], {}, [], []
    seen = set()
    todo = []
    for set_name, where, c in commits:
        if (c[0], c[1]) not in seen:
            seen.add((c[0], c[1]))
            todo.append((set_name, c[0], c[1]))
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda t: scan(args.bin, args.clones, t[1], t[2]), todo))
    dump = open(args.dump, "w", encoding="utf-8") if args.dump else None
    for (set_name, repo, commit), (out, err) in zip(todo, results):
        if out is None:
            failures.append(f"{repo} {commit}: {err[0]}")
            continue
        errs = [f for f in out["findings"] if f["severity"] == "error"]
        findings_by_commit[(repo, commit[:12])] = errs
        if dump:
            for f in errs:
                dump.write(json.dumps({"repo": repo, "commit": commit, **f}) + "\n")
        for f in errs:
            key = (repo, commit[:12], f"{f['path']}:{f['line']}", f["kind"])
            verdict = judged.get(key, (None, None))[0]
            errors.append((set_name, lang_of(f["path"]), key, verdict, f["message"]))
            if verdict is None:
                unjudged.append(f"{repo}\t{commit}\t{f['path']}:{f['line']}\t{f['kind']}\t?\t{f['message']}")

    by_lang = collections.defaultdict(collections.Counter)
    for _, lang, _, verdict, _ in errors:
        by_lang[lang][verdict or "unjudged"] += 1
        by_lang["all"][verdict or "unjudged"] += 1

    found = collections.defaultdict(collections.Counter)
    missed = []
    for set_name, where, c in regressions:
        repo, commit, loc, kind = c[0], c[1][:12], c[2], c[3]
        path, _, line = loc.rpartition(":")
        hit = any(f["kind"] == kind and any(p == path and abs(l - int(line)) <= 15 for p, l in places(f))
                  for f in findings_by_commit.get((repo, commit), []))
        lang = lang_of(path)
        for l in (lang, "all"):
            found[l]["found" if hit else "missed"] += 1
        if not hit:
            missed.append(f"{repo} {commit} {loc} {kind} ({where})")

    print(f"commits scanned: {len(seen)} in {len({r for r, _ in seen})} repositories")
    print(f"{'language':<10} {'errors':>6} {'tp':>4} {'fp':>4} {'debat':>5} {'unjudged':>8} {'precision':>9} {'regress':>7} {'found':>5} {'recall':>6}")
    for lang in sorted(set(by_lang) | set(found), key=lambda l: (l == "all", l)):
        c, r = by_lang[lang], found[lang]
        judged_n = c["tp"] + c["fp"]
        prec = f"{100 * c['tp'] / judged_n:.0f}%" if judged_n else "-"
        total_r = r["found"] + r["missed"]
        rec = f"{100 * r['found'] / total_r:.0f}%" if total_r else "-"
        print(f"{lang:<10} {sum(c.values()):>6} {c['tp']:>4} {c['fp']:>4} {c['debatable']:>5} {c['unjudged']:>8} {prec:>9} {total_r:>7} {r['found']:>5} {rec:>6}")
    for m in missed:
        print(f"missed: {m}")
    for f in failures:
        print(f"FAILED: {f}")
    for u in unjudged:
        print(f"unjudged: {u}")
    return 1 if failures or unjudged else 0


if __name__ == "__main__":
    sys.exit(main())
