#!/usr/bin/env bash
# The release steps of .github/workflows/release.yml, as one script, so the
# workflow and the tests (tests/it/install_action.rs) run the same commands:
#
#   release.sh check-tag TAG                 the tag names Cargo.toml's version (vX.Y.Z)
#   release.sh pack TARGET TAG BINARY OUTDIR  retrygate-TAG-TARGET.tar.gz holding
#                                             only `retrygate`; a Linux musl binary
#                                             must be statically linked
#   release.sh sums DIR                       `sha256sum` lines of DIR's archives, in
#                                             the format of dist/sha256sums.txt
#   release.sh pin SHA LABEL                  name the Action in every example by
#                                             the full commit SHA (`uses:
#                                             retrygate/retrygate@SHA # LABEL`), and
#                                             install the agents' retrygate from it
#
# Exit 0 on success; 1 when a check fails (the message says what to do);
# 2 on a usage error.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  echo "::error title=retrygate release::$*" >&2
  exit 1
}

version() {
  sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1
}

case "${1:-}" in
  check-tag)
    tag="${2:?usage: release.sh check-tag TAG}"
    v="$(version)"
    # The Action picks its archive by the version in Cargo.toml at the pinned
    # ref; a tag that disagrees would publish archives no one finds.
    [ "v$v" = "$tag" ] || fail "tag $tag but Cargo.toml says version $v; bump Cargo.toml first (docs/release.md)"
    echo "tag $tag matches Cargo.toml"
    ;;
  pack)
    target="${2:?usage: release.sh pack TARGET TAG BINARY OUTDIR}"
    tag="${3:?usage: release.sh pack TARGET TAG BINARY OUTDIR}"
    binary="${4:?usage: release.sh pack TARGET TAG BINARY OUTDIR}"
    out="${5:?usage: release.sh pack TARGET TAG BINARY OUTDIR}"
    [ -f "$binary" ] || fail "no binary at $binary; build it first"
    # A Linux binary must be static: it runs on any distribution's runner.
    case "$target" in
      *-linux-musl)
        file -L "$binary" | grep -Eq 'statically linked|static-pie linked' \
          || fail "$binary is not statically linked, but $target archives must be; build with the musl target (cargo zigbuild --target $target)"
        ;;
    esac
    mkdir -p "$out"
    stage="$(mktemp -d)"
    trap 'rm -rf "$stage"' EXIT
    cp "$binary" "$stage/retrygate"
    chmod 0755 "$stage/retrygate"
    archive="$out/retrygate-${tag}-${target}.tar.gz"
    # Owner, mode and order fixed, so the archive depends only on the binary.
    if tar --version 2>/dev/null | grep -q GNU; then
      tar -czf "$archive" --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$stage" retrygate
    else
      tar -czf "$archive" --uid 0 --gid 0 -C "$stage" retrygate
    fi
    echo "$archive"
    ;;
  sums)
    dir="${2:?usage: release.sh sums DIR}"
    shopt -s nullglob
    archives=("$dir"/retrygate-v*.tar.gz)
    [ "${#archives[@]}" -gt 0 ] || fail "no retrygate-v*.tar.gz archives in $dir"
    (cd "$dir" && sha256sum -- retrygate-v*.tar.gz)
    ;;
  pin)
    sha="${2:?usage: release.sh pin SHA LABEL}"
    label="${3:?usage: release.sh pin SHA LABEL}"
    # A tag or a short SHA can be moved or ground to another commit; only a
    # full SHA names one commit (docs/github.md, "Which retrygate to pin").
    [[ "$sha" =~ ^[0-9a-f]{40}$ ]] || fail "pin needs a full 40-hex commit SHA, got '$sha'; copy it from \`git rev-parse <release commit>\`"
    [[ "$label" =~ ^[A-Za-z0-9.,:/\ _-]+$ ]] || fail "the label '$label' may hold letters, digits, spaces and . , : / _ - only (it becomes a YAML comment)"
    shopt -s nullglob
    workflows=(examples/workflows/*.yml)
    [ "${#workflows[@]}" -gt 0 ] || fail "no workflows in examples/workflows"
    agents=()
    while IFS= read -r f; do agents+=("$f"); done < <(grep -rl 'RETRYGATE_REV:' examples/agents | sort)
    PIN_SHA="$sha" PIN_LABEL="$label" perl -pi -e \
      's{^(\s*(?:-\s+)?uses:\s+retrygate/retrygate\@)\S+(?:\s+#.*)?$}{$1$ENV{PIN_SHA} # $ENV{PIN_LABEL}}' \
      "${workflows[@]}"
    if [ "${#agents[@]}" -gt 0 ]; then
      PIN_SHA="$sha" perl -pi -e 's{^(\s*RETRYGATE_REV:\s+)\S+}{$1$ENV{PIN_SHA}}' "${agents[@]}"
    fi
    echo "pinned retrygate/retrygate@$sha ($label) in ${#workflows[@]} workflows and ${#agents[@]} agent examples"
    ;;
  *)
    echo "usage: release.sh check-tag TAG | pack TARGET TAG BINARY OUTDIR | sums DIR | pin SHA LABEL" >&2
    exit 2
    ;;
esac
