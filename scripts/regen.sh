#!/usr/bin/env bash
# Regenerates every generated table and document from the code, in one go:
#   - README.md, "Finding kinds": the kinds' own docs (`retrygate explain --markdown`);
#   - docs/rust.md, the Rust check table (src/analyze/rust/checks/*.rs);
#   - docs/getting-started.md, the demo's first comment as `retrygate demo`
#     prints it, and README.md, that comment's summary;
#   - docs/rules.md, the rule table (`retrygate rules list --update-docs`);
#   - docs/conformance.md, the conformance matrix (tests/conformance/*.yml);
#   - schemas/retrygate.schema.json, the config's JSON Schema (src/config.rs);
#   - the measured figures (README.md "What it costs", docs/benchmarks.md,
#     docs/evaluation.md) from benches/figures.json (`scripts/figures.py
#     render`; `scripts/figures.py measure ID` re-measures one benchmark).
# The tests that guard each of these (tests/it/readme.rs, gate_demo.rs,
# rules.rs, gate_schema.rs; readme.rs for the figures) fail with a pointer here when one is stale.
# Run it after changing a kind, a check, a rule, the config or the comment;
# review the diff like code.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --quiet
bin=target/debug/retrygate

# Replaces the text between `<!-- NAME:start -->` and `<!-- NAME:end -->`
# in FILE with stdin.
replace_between() { # FILE NAME
  python3 -c '
import sys
path, name = sys.argv[1], sys.argv[2]
new = sys.stdin.read()
text = open(path, encoding="utf-8").read()
start, end = f"<!-- {name}:start -->\n", f"<!-- {name}:end -->"
a, b = text.find(start), text.find(end)
if a < 0 or b < a:
    sys.exit(f"regen: {path} lacks the markers {start.strip()} ... {end}")
a += len(start)
if not new.endswith("\n"):
    new += "\n"
open(path, "w", encoding="utf-8").write(text[:a] + new + text[b:])
' "$1" "$2"
}

"$bin" explain --markdown | replace_between README.md kinds

# The first comment of the demo: what follows `$ retrygate check ...` and a
# blank line, up to the exit code line.
tmp_comment=$(mktemp)
"$bin" demo 2>/dev/null | python3 -c '
import sys
out = sys.stdin.read()
part = out.split("$ retrygate check ", 2)[1]
body = part[part.index("\n\n") + 2:]
sys.stdout.write(body[:body.index("\n(exit code")].rstrip() + "\n")
' > "$tmp_comment"
replace_between docs/getting-started.md demo-comment < "$tmp_comment"
# The README shows its summary: up to the first section of the comment.
python3 -c 'import sys; print(open(sys.argv[1]).read().split("\n#### ")[0].rstrip())' "$tmp_comment" \
  | replace_between README.md demo-summary
rm -f "$tmp_comment"

"$bin" rules list --update-docs docs/rules.md >/dev/null

python3 scripts/figures.py render

RETRYGATE_UPDATE_README=1 RETRYGATE_BLESS=1 cargo test --quiet --test it -- readme:: gate_schema:: >/dev/null

# docs/conformance.md: the matrix, from tests/conformance/*.yml.
RETRYGATE_REGEN=1 cargo test --quiet --test it -- conformance::docs_conformance_md >/dev/null

echo "regenerated: README.md (kinds, demo summary), docs/rust.md (Rust checks), docs/getting-started.md (demo comment), docs/rules.md, docs/conformance.md, schemas/retrygate.schema.json, the figures' tables"
git --no-pager diff --stat -- README.md docs/ schemas/ || true
