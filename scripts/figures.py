#!/usr/bin/env python3
"""Measured figures: taken by the benchmarks, kept as records, written into
the docs by one renderer, and checked by a test.

  scripts/figures.py measure ID [ID ...] [options]   run benchmarks, record,
                                                      render
  scripts/figures.py render                           write the docs' tables
  scripts/figures.py check                            exit 1 if a doc differs
                                                      or holds a figure
                                                      outside a generated block
  scripts/figures.py lint                             only the hand-written figures
  scripts/figures.py list                             the benchmarks and records

Why records: a benchmark takes minutes and its numbers depend on the
machine, so the docs cannot be rewritten by the test run. Each benchmark
prints `figure: {json}` lines (or, for the shared evaluation's scoring
script, its summary line); `measure` runs it, stamps the rows with the date,
the machine and the commit, and stores them in benches/figures.json. `render`
turns that file into the tables between `<!-- figures:start -->` and
`<!-- figures:end -->` (docs/benchmarks.md), `<!-- costs:... -->` (README.md)
and `<!-- eval-figures:... -->` (docs/evaluation.md). `check` renders into
memory and compares, so a hand-edited figure table fails the test suite
(tests/it/readme.rs), and it looks for measured figures written by hand
anywhere else in README.md and docs/*.md.

Options of `measure`:
  --clones DIR        eval clones, one owner+name repository each (per-commit,
                      eval-* benchmarks)
  --baseline-bin BIN  the build to compare against (per-commit, hostile); its
                      commit is recorded as given by --baseline-ref
  --baseline-ref REF  what BIN was built from (recorded, default "unknown")
  --corpus DIR        the repository benches/real-corpus.sh built (corpus)
  --shared DIR        the shared evaluation sets (default ../shared/eval)
"""
import argparse
import datetime
import json
import os
import re
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORDS = os.path.join(ROOT, "benches", "figures.json")

# The benchmarks `measure` knows. `cmd` is run from the repository root with
# the options substituted; `parse` turns its output into rows. Each row is
# {"figure", "value", "baseline", "ratio", "goal"} (strings; empty when
# there is nothing to say).
BENCHES = {
    "per-commit": {
        "title": "time per real commit (shared sets' commit lists, every 4th)",
        "cmd": "scripts/commit-times.py --clones {clones} --list {shared}/real/commits.txt --list {shared}/real3/commits.txt --list {shared}/real4/commits.txt --every 4 {baseline_bin} target/release/retrygate",
        "build": True,
        "summary": True,
    },
    "corpus": {
        "title": "whole-corpus scan against ast-grep (benches/real-corpus.sh: 4,264 real .rs files)",
        "cmd": "cargo bench --quiet --bench scan -- --real {corpus} --rounds 5",
        "summary": True,
    },
    "synthetic": {
        "title": "synthetic pull request, 2,000 Rust files per side",
        "cmd": "cargo bench --quiet --bench scan -- --rounds 3",
    },
    "rules": {
        "title": "rule packs through `scan` against grep",
        "cmd": "cargo bench --quiet --bench rules",
    },
    "replay": {
        "title": "the replay server's added latency",
        "cmd": "cargo bench --quiet --bench replay",
        "summary": True,
    },
    "desync": {
        "title": "the `desynchronized` check on real clients",
        "cmd": "scripts/bench-desync.py --rounds 20",
    },
    "fleet": {
        "title": "one client, 4 and 12 clients: the same verdict",
        "cmd": "scripts/bench-fleet-size.py --runs 10",
    },
    "hostile": {
        "title": "hostile input: a change of 20 Rust files with 40,000 new retry sites each",
        "cmd": "scripts/bench-hostile.py --bin target/release/retrygate --baseline-bin {baseline_bin} --baseline-ref {baseline_ref}",
        "build": True,
        "summary": True,
    },
    "build": {
        "title": "release build, binary size, the grammars' share",
        "cmd": "scripts/bench-build.sh",
        "summary": True,
    },
    "ci": {
        "title": "`.ci/run` on a fresh clone, empty target directory",
        "cmd": "scripts/bench-ci.sh",
        "summary": True,
    },
    "eval-shared": {
        "title": "shared evaluation sets (real, real3, real4)",
        "cmd": None,
        "build": True,
        "summary": True,
    },
    "eval-own": {
        "title": "own holdouts (holdout3, agents3)",
        "cmd": None,
        "build": True,
        "summary": True,
    },
}

FIGURE_LINE = re.compile(r"^figure: (\{.*\})\s*$")


def sh(cmd):
    return subprocess.run(cmd, shell=True, cwd=ROOT, capture_output=True, text=True).stdout.strip()


def machine():
    cores = os.cpu_count() or 0
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            kib = int(fh.readline().split()[1])
            mem = f", {round(kib / 1024 / 1024)} GiB"
    except (OSError, ValueError, IndexError):
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return f"{cores} cores{', ' + model if model else ''}{mem}; load {load:.1f} at start"


def stamp():
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        # The figures' own files (records and the docs they render into)
        # change between runs; only other uncommitted changes make the
        # measured tree "-dirty".
        "commit": (sh("git rev-parse --short=7 HEAD") or "unknown")
        + ("-dirty" if sh("git status --porcelain -- . ':!benches/figures.json' ':!README.md' ':!docs'") else ""),
    }


def run_stream(cmd, scored=False):
    """Runs CMD, echoing its output, and returns the output."""
    print(f"$ {cmd}", flush=True)
    proc = subprocess.Popen(cmd, shell=True, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = []
    assert proc.stdout is not None
    for line in proc.stdout:
        sys.stdout.write(line)
        out.append(line)
    text = "".join(out)
    if proc.wait() != 0:
        # A benchmark that measured and reports a missed goal (bench-desync
        # exits 1 on any false verdict) still printed its rows; one that
        # crashed printed none, and then nothing is recorded.
        # The evaluation scripts exit 1 on an unjudged finding, which their
        # summary counts (`scored`).
        if not figure_rows(text) and not scored:
            sys.exit(f"figures: `{cmd}` exited {proc.returncode}; nothing recorded")
        print(f"figures: `{cmd}` exited {proc.returncode}; recording the figures it printed")
    return text


def figure_rows(output):
    rows = []
    for line in output.splitlines():
        m = FIGURE_LINE.match(line.strip())
        if m:
            row = json.loads(m.group(1))
            rows.append({k: str(row.get(k, "")) for k in ("figure", "value", "baseline", "ratio", "goal")})
    return rows


SCORE_LINE = re.compile(
    r"^(\w+): precision=(\S+) unjudged=(\d+) recall=(\d+)/(\d+) errors=(\d+) commits=(\d+) debatable=(\d+)"
)


def eval_shared_rows(args):
    rows = []
    for name in ("real", "real3", "real4"):
        out = run_stream(f"python3 {shlex.quote(os.path.join(args.shared, name, 'score.py'))} target/release/retrygate {shlex.quote(args.clones)}", scored=True)
        summary = [SCORE_LINE.match(l) for l in out.splitlines()]
        summary = [m for m in summary if m]
        if not summary:
            sys.exit(f"figures: {name}/score.py printed no summary line; nothing recorded")
        m = summary[-1]
        langs = [l for l in out.splitlines() if l.startswith("by-language: ")]
        fps = sum(1 for l in out.splitlines() if l.startswith("FP "))
        debatable, unjudged = int(m.group(8)), int(m.group(3))
        # `precision=TP/(TP+FP)`; its `errors=` counts scans that failed.
        judged = re.match(r"^(\d+)/(\d+)$", m.group(2))
        tps = int(judged.group(1)) if judged else 0
        if judged and int(judged.group(2)) - tps != fps:
            sys.exit(f"figures: {name}/score.py printed {fps} FP lines but precision={m.group(2)}; nothing recorded")
        # Findings the set's own judgments lack, judged by this project in
        # eval/judgments/shared-*.tsv (same columns).
        ours = own_shared_judgments()
        for line in out.splitlines():
            u = re.match(r"^UNJUDGED (\S+) (\S+) (\S+) (\S+) ", line)
            key = (u.group(1).replace("/", "+"),) + u.groups()[1:] if u else None
            verdict = ours.get(key) if key else None
            if verdict:
                unjudged -= 1
                if verdict == "tp":
                    tps += 1
                elif verdict == "fp":
                    fps += 1
                else:
                    debatable += 1
        prec = f"{100 * tps / (tps + fps):.0f}%" if tps + fps else "-"
        tp_note = (f"error findings {tps} true / {fps} false / {debatable} debatable (precision {prec}), "
                   f"{unjudged} unjudged, {m.group(6)} failed scans")
        rows.append({
            "figure": f"`{name}` ({m.group(7)} commits): recall",
            "value": f"{m.group(4)} / {m.group(5)}",
            "baseline": "",
            "ratio": "",
            "goal": langs[-1][len("by-language: "):] + "; " + tp_note if langs else tp_note,
        })
    return rows


def own_shared_judgments():
    judged = {}
    folder = os.path.join(ROOT, "eval", "judgments")
    for name in sorted(os.listdir(folder)):
        if not (name.startswith("shared-") and name.endswith(".tsv")):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as fh:
            for line in fh:
                cols = line.rstrip("\n").split("\t")
                if len(cols) >= 5 and not line.startswith(("#", "repo\t")):
                    judged[(cols[0].replace("/", "+"), cols[1][:10], cols[2], cols[3])] = cols[4].strip().lower()
    return judged


EVAL_LINE = re.compile(r"^(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\S+)\s*$")


def eval_own_rows(args):
    rows = []
    for name in ("holdout3", "agents3"):
        # A set is every eval/commits/NAME.tsv or NAME-LANGUAGE.tsv.
        sets = sorted(
            f[: -len(".tsv")] for f in os.listdir(os.path.join(ROOT, "eval", "commits"))
            if f.endswith(".tsv") and (f == f"{name}.tsv" or f.startswith(f"{name}-"))
        )
        if not sets:
            sys.exit(f"figures: no eval/commits/{name}*.tsv; nothing recorded")
        flags = " ".join(f"--set {s}" for s in sets)
        out = run_stream(f"python3 eval/run.py --clones {shlex.quote(args.clones)} --bin target/release/retrygate {flags}", scored=True)
        total = [EVAL_LINE.match(l) for l in out.splitlines()]
        total = [m for m in total if m and m.group(1) in ("all", "total")]
        if not total:
            sys.exit(f"figures: eval/run.py --set {name} printed no total line; nothing recorded")
        m = total[-1]
        recall = f"{m.group(9)} / {m.group(8)}" if int(m.group(8)) else "no regression list"
        rows.append({
            "figure": f"`{name}`: recall; error findings true / false / debatable",
            "value": f"{recall}; {m.group(3)} / {m.group(4)} / {m.group(5)}",
            "baseline": "",
            "ratio": "",
            "goal": f"{m.group(6)} unjudged",
        })
    return rows


def load():
    if not os.path.exists(RECORDS):
        return {}
    with open(RECORDS, encoding="utf-8") as fh:
        return json.load(fh)


def save(records):
    tmp = RECORDS + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(records, fh, indent=1, sort_keys=True)
        fh.write("\n")
    os.replace(tmp, RECORDS)


def measure(args):
    unknown = [i for i in args.ids if i not in BENCHES]
    if unknown:
        sys.exit(f"figures: unknown benchmark {', '.join(unknown)}; `scripts/figures.py list` shows them")
    records = load()
    for bid in args.ids:
        bench = BENCHES[bid]
        started = stamp()
        t0 = time.time()
        if bench.get("build"):
            run_stream("cargo build --release --quiet")
        if bid == "eval-shared":
            need(args.clones, "--clones")
            rows = eval_shared_rows(args)
        elif bid == "eval-own":
            need(args.clones, "--clones")
            rows = eval_own_rows(args)
        else:
            if "{clones}" in bench["cmd"]:
                need(args.clones, "--clones")
            if "{baseline_bin}" in bench["cmd"]:
                need(args.baseline_bin, "--baseline-bin")
            if "{corpus}" in bench["cmd"]:
                need(args.corpus, "--corpus")
            cmd = bench["cmd"].format(
                clones=shlex.quote(args.clones or ""),
                baseline_bin=shlex.quote(args.baseline_bin or ""),
                corpus=shlex.quote(args.corpus or ""),
                baseline_ref=shlex.quote(args.baseline_ref),
                shared=shlex.quote(args.shared),
            )
            rows = figure_rows(run_stream(cmd))
        if not rows:
            sys.exit(f"figures: {bid} printed no `figure:` line; nothing recorded")
        if bid == "per-commit":
            for r in rows:
                r["baseline"] += f" (build {args.baseline_ref})"
        records[bid] = {"measured": started, "minutes": round((time.time() - t0) / 60, 1), "rows": rows}
        save(records)
        print(f"figures: recorded {len(rows)} row(s) for {bid}")
        # The docs follow the records at once, so that the tree is never
        # left with tables that the check would call stale.
        render(args)


def need(value, flag):
    if not value:
        sys.exit(f"figures: this benchmark needs {flag}")


def cell(s):
    return s.replace("|", "\\|") if s else "-"


def bench_table(records):
    out = ["| benchmark | figure | this build | baseline, same run | ratio | goal or detail |", "|---|---|---|---|---|---|"]
    for bid, bench in BENCHES.items():
        rec = records.get(bid)
        if not rec:
            out.append(f"| {bench['title']} | not measured yet | - | - | - | `scripts/figures.py measure {bid}` |")
            continue
        for r in rec["rows"]:
            out.append(f"| {bench['title']} | {cell(r['figure'])} | {cell(r['value'])} | {cell(r['baseline'])} | {cell(r['ratio'])} | {cell(r['goal'])} |")
    out.append("")
    out.append("When and where each was measured:")
    out.append("")
    out.extend(provenance(records, BENCHES))
    return "\n".join(out) + "\n"


def provenance(records, ids):
    """One line per recorded benchmark: when, at which commit, on what."""
    out = []
    for bid in ids:
        rec = records.get(bid)
        if rec:
            m = rec["measured"]
            out.append(f"- `{bid}`: {m['date']}, commit {m['commit']}, {m['machine']} ({rec['minutes']} min)")
    return out


def costs_list(records):
    """README: the summary rows of the benchmarks marked `summary`."""
    out = []
    for bid, bench in BENCHES.items():
        if not bench.get("summary") or bid.startswith("eval"):
            continue
        rec = records.get(bid)
        if not rec:
            out.append(f"- {bench['title']}: not measured yet")
            continue
        parts = []
        for r in rec["rows"]:
            extra = f" (baseline {r['baseline']}, ratio {r['ratio']})" if r["baseline"] and r["ratio"] else ""
            parts.append(f"{r['figure']}: {r['value']}{extra}")
        out.append(f"- {bench['title']}: " + "; ".join(parts) + f" ({rec['measured']['date'][:10]}, {rec['measured']['commit']})")
    out.append("")
    out.append("Every figure, its baseline and its machine: [docs/benchmarks.md](docs/benchmarks.md).")
    return "\n".join(out) + "\n"


def eval_table(records):
    out = ["| set | figure | value | detail |", "|---|---|---|---|"]
    for bid in ("eval-shared", "eval-own"):
        rec = records.get(bid)
        if not rec:
            out.append(f"| {BENCHES[bid]['title']} | not measured yet | - | `scripts/figures.py measure {bid} --clones DIR` |")
            continue
        for r in rec["rows"]:
            out.append(f"| {BENCHES[bid]['title']} | {cell(r['figure'])} | {cell(r['value'])} | {cell(r['goal'])} |")
    out.append("")
    out.extend(provenance(records, ("eval-shared", "eval-own")))
    return "\n".join(out) + "\n"


TARGETS = [
    ("docs/benchmarks.md", "figures", bench_table),
    ("README.md", "costs", costs_list),
    ("docs/evaluation.md", "eval-figures", eval_table),
]


def rendered(path, name, body):
    with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
        text = fh.read()
    start, end = f"<!-- {name}:start -->\n", f"<!-- {name}:end -->"
    a, b = text.find(start), text.find(end)
    if a < 0 or b < a:
        sys.exit(f"figures: {path} lacks the markers {start.strip()} ... {end}")
    a += len(start)
    return text, text[:a] + body + text[b:]


def render(_args):
    records = load()
    for path, name, fn in TARGETS:
        old, new = rendered(path, name, fn(records))
        if old != new:
            with open(os.path.join(ROOT, path), "w", encoding="utf-8") as fh:
                fh.write(new)
            print(f"figures: wrote {path} ({name})")


# A measured figure written by hand: a number with a unit of time, size,
# throughput or a percentage (or a fraction such as 14/35), in a paragraph,
# list item or table row that also says it was measured. Code blocks, inline
# code and generated blocks are left out: they are the program's own output.
NUM = r"\d[\d,]*(?:\.\d+)?"
FIGURE = re.compile(NUM + r"\s?(?:s|ms|µs|min|MB|MiB|GB|GiB|KB|kB|MB/s|%|x)(?![\w/])|\b\d+ ?/ ?\d+\b(?![/\w])")
MEASURED = re.compile(
    r"\b(measured|measures|took|median|p95|p99|recall|precision|throughput|wall time|CPU time|peak RSS)\b",
    re.I,
)
# A statistic given as a bare number: "median 40", "p95 of 3", "measured on
# 5,843 files".
STATISTIC = re.compile(r"\b(?:median|p95|p99|percentile|measured on|measured over)\b\W{0,3}(?:of\s)?\d", re.I)

GOAL = re.compile(r"\bgoals? (?:is|are|of)\b[^.;]*", re.I)


def blocks(text):
    """Yields (line number, text) per paragraph, list item and table row,
    with code, inline code and generated blocks blanked out."""
    text = re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"<!-- ([\w-]+):start -->.*?<!-- \1:end -->", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    cur, start = [], 0
    for i, line in enumerate(text.split("\n"), 1):
        s = line.strip()
        new_unit = not s or s.startswith(("|", "- ", "* ", "#")) or re.match(r"\d+\. ", s)
        if new_unit and cur:
            yield start, " ".join(cur)
            cur = []
        if s:
            if not cur:
                start = i
            cur.append(re.sub(r"`[^`]*`", "", s))
            if s.startswith(("|", "#")):
                yield start, " ".join(cur)
                cur = []
    if cur:
        yield start, " ".join(cur)


def lint():
    paths = ["README.md"] + sorted(os.path.join("docs", f) for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))
    found = []
    for path in paths:
        with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
            for line, unit in blocks(fh.read()):
                # A goal is specified, not measured ("the goal is a p95
                # under 1 s"): its clause is left out.
                unit = GOAL.sub("", unit)
                if (FIGURE.search(unit) and MEASURED.search(unit)) or STATISTIC.search(unit):
                    found.append(f"{path}:{line}: {unit[:140]}")
    return found


def check(_args):
    records = load()
    stale = []
    for path, name, fn in TARGETS:
        old, new = rendered(path, name, fn(records))
        if old != new:
            stale.append(f"{path} ({name})")
    bad = lint()
    for s in stale:
        print(f"figures: {s} differs from benches/figures.json; run `scripts/figures.py render`")
    for b in bad:
        print(f"figures: a measured figure outside a generated block: {b}")
    if bad:
        print("figures: measured figures live in benches/figures.json (scripts/figures.py measure) and their history in CHANGELOG.md")
    sys.exit(1 if stale or bad else 0)


def lint_(_args):
    bad = lint()
    for b in bad:
        print(f"{b}")
    sys.exit(1 if bad else 0)


def list_(_args):
    records = load()
    for bid, bench in BENCHES.items():
        rec = records.get(bid)
        when = f"{rec['measured']['date']} at {rec['measured']['commit']}" if rec else "not measured"
        print(f"{bid:<12} {when:<32} {bench['title']}")


def main():
    global ROOT, RECORDS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    # Another tree holding README.md, docs/ and benches/figures.json (the
    # tests check a tampered copy).
    ap.add_argument("--root", default=ROOT)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("ids", nargs="+")
    m.add_argument("--clones")
    m.add_argument("--baseline-bin")
    m.add_argument("--baseline-ref", default="unknown")
    m.add_argument("--corpus")
    m.add_argument("--shared", default=os.path.join(ROOT, "..", "shared", "eval"))
    m.set_defaults(fn=measure)
    for name, fn in (("render", render), ("check", check), ("lint", lint_), ("list", list_)):
        sub.add_parser(name).set_defaults(fn=fn)
    args = ap.parse_args()
    ROOT = os.path.abspath(args.root)
    RECORDS = os.path.join(ROOT, "benches", "figures.json")
    args.fn(args)


if __name__ == "__main__":
    main()
