#!/usr/bin/env bash
# Installs the retrygate binary for action.yml, in two phases (two steps of
# the Action, with actions/cache/restore between them):
#
#   install-action.sh prebuilt   download the release archive for this runner,
#                                verify its SHA-256 against dist/sha256sums.txt
#                                in the action's own source, unpack it. A
#                                mismatch exits 1 and installs nothing. An
#                                archive that is not listed, or not served,
#                                leaves the work to the source phase. Always
#                                prints the source cache's key and directory.
#   install-action.sh source     when the prebuilt phase installed nothing:
#                                take the binary the cache restored, or build
#                                it with `cargo install --locked --path`.
#
# Both write `bin=<path of the binary>` to $GITHUB_OUTPUT (later steps run that
# exact path; nothing is added to PATH). The checksum is read only from the
# action's source at the ref a workflow pinned, never from the release next to
# the archive: a replaced archive cannot bring its own sum.
#
# Environment (set by action.yml):
#   ACTION_PATH           the action's source (default: this script's repository)
#   ACTION_REPOSITORY     owner/name, for the default download URL
#   ACTION_REF            the ref the workflow pinned (part of the cache key)
#   RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP, GITHUB_OUTPUT, GITHUB_SERVER_URL
#   PREBUILT_BIN          source phase: what the prebuilt phase installed, if anything
# Overrides, for tests (tests/it/install_action.rs) and mirrors:
#   RETRYGATE_DOWNLOAD_BASE  base URL of the release downloads; the archive is
#                            fetched from <base>/v<version>/<archive>. Default
#                            $GITHUB_SERVER_URL/$ACTION_REPOSITORY/releases/download.
#                            HTTPS only, except plain http://127.0.0.1 (a test server).
#   RETRYGATE_CARGO          the cargo the source phase runs (default: cargo).
set -euo pipefail

# How long one download may take, and how often curl retries a transient error.
readonly DOWNLOAD_MAX_SECONDS=120
readonly DOWNLOAD_RETRIES=3

phase="${1:-}"
ACTION_PATH="${ACTION_PATH:-$(cd "$(dirname "$0")/.." && pwd)}"
: "${RUNNER_TEMP:?RUNNER_TEMP is not set; run this from action.yml, or set it to a scratch directory}"
: "${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set; run this from action.yml, or set it to a file}"

error() {
  echo "::error title=retrygate install::$*" >&2
}

# Windows runners are refused before anything is downloaded or built: the
# replay's process handling and the ledger's file locks are written for Unix,
# and a half-working gate on Windows would be worse than a clear refusal. The
# gate reads the repository as data, so its jobs can run on Linux whatever
# platform the code under review targets.
if [ "${RUNNER_OS:-}" = "Windows" ]; then
  error "retrygate does not run on Windows runners; set 'runs-on: ubuntu-latest' (or macos-latest) for the retrygate jobs: the gate reads the repository as data and does not need the platform your code targets"
  exit 2
fi

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

bin_dir="$RUNNER_TEMP/retrygate-bin"
# The source build's root: actions/cache restores and saves this directory.
cargo_root="$RUNNER_TEMP/retrygate-cargo"

finish() { # <binary> <how>
  "$1" --version
  echo "bin=$1" >>"$GITHUB_OUTPUT"
  echo "retrygate installed ($2)"
}

prebuilt() {
  local target version asset expected base url proto tmp actual
  case "${RUNNER_OS:-}-${RUNNER_ARCH:-}" in
    Linux-X64) target=x86_64-unknown-linux-musl ;;
    Linux-ARM64) target=aarch64-unknown-linux-musl ;;
    macOS-ARM64) target=aarch64-apple-darwin ;;
    macOS-X64) target=x86_64-apple-darwin ;;
    *) target="" ;;
  esac
  version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$ACTION_PATH/Cargo.toml" | head -n 1)"
  if [ -z "$version" ]; then
    error "no version line in $ACTION_PATH/Cargo.toml; is ACTION_PATH the retrygate source?"
    exit 2
  fi

  # The source phase's cache key: the pinned ref, Cargo.lock, and the source
  # itself, because a ref such as `main` moves while its name stays.
  local lock_sum src_sum
  lock_sum="$(sha256_of "$ACTION_PATH/Cargo.lock")"
  local inputs=() p
  for p in Cargo.toml Cargo.lock src rules; do
    [ -e "$ACTION_PATH/$p" ] && inputs+=("$p")
  done
  # One hashing process for all files (one per file takes a second on this tree).
  local hasher=(sha256sum)
  command -v sha256sum >/dev/null 2>&1 || hasher=(shasum -a 256)
  src_sum="$(cd "$ACTION_PATH" && find "${inputs[@]}" -type f -print0 | LC_ALL=C sort -z \
    | xargs -0 "${hasher[@]}" | sha256_of /dev/stdin)"
  {
    echo "cache-key=retrygate-source-${RUNNER_OS:-unknown}-${RUNNER_ARCH:-unknown}-${ACTION_REF:-local}-lock-${lock_sum:0:16}-src-${src_sum:0:16}"
    echo "cache-dir=$cargo_root"
  } >>"$GITHUB_OUTPUT"

  if [ -z "$target" ]; then
    echo "::notice title=retrygate install::no prebuilt binary for ${RUNNER_OS:-?}-${RUNNER_ARCH:-?}; building from source"
    return 0
  fi
  asset="retrygate-v${version}-${target}.tar.gz"
  expected=""
  if [ -f "$ACTION_PATH/dist/sha256sums.txt" ]; then
    expected="$(awk -v f="$asset" '$2 == f { print $1 }' "$ACTION_PATH/dist/sha256sums.txt")"
  fi
  if [ -z "$expected" ]; then
    echo "::notice title=retrygate install::$asset is not listed in dist/sha256sums.txt at this ref; building from source"
    return 0
  fi

  if [ -z "${RETRYGATE_DOWNLOAD_BASE:-}" ] && [ -z "${ACTION_REPOSITORY:-}" ]; then
    # A local action (`uses: ./`) has no release to download from.
    echo "::notice title=retrygate install::the action has no repository to download $asset from (a local action); building from source"
    return 0
  fi
  base="${RETRYGATE_DOWNLOAD_BASE:-${GITHUB_SERVER_URL:-https://github.com}/${ACTION_REPOSITORY:-}/releases/download}"
  case "$base" in
    https://*) proto='=https' ;;
    http://127.0.0.1:*|http://127.0.0.1/*) proto='=http' ;;
    *) error "download base '$base' must be an https:// URL (plain http only for http://127.0.0.1)"
       exit 2 ;;
  esac
  url="${base%/}/v${version}/${asset}"
  tmp="$(mktemp -d "$RUNNER_TEMP/retrygate-download.XXXXXX")"
  if ! curl --proto "$proto" -fsSL --retry "$DOWNLOAD_RETRIES" --max-time "$DOWNLOAD_MAX_SECONDS" \
      -o "$tmp/$asset" "$url"; then
    rm -rf "$tmp"
    echo "::notice title=retrygate install::could not download $url; building from source"
    return 0
  fi
  actual="$(sha256_of "$tmp/$asset")"
  if [ "$actual" != "$expected" ]; then
    rm -rf "$tmp"
    error "$asset has SHA-256 $actual, but dist/sha256sums.txt at this ref lists $expected; refusing to run it (the release asset was replaced or corrupted: report it to the retrygate maintainers)"
    exit 1
  fi
  # Only the one member, and only a regular file, reaches the bin directory.
  if ! tar -xzf "$tmp/$asset" -C "$tmp" retrygate || [ -L "$tmp/retrygate" ] || [ ! -f "$tmp/retrygate" ]; then
    rm -rf "$tmp"
    error "$asset matches its listed SHA-256 but holds no regular file named retrygate; the release is malformed"
    exit 1
  fi
  mkdir -p "$bin_dir"
  mv "$tmp/retrygate" "$bin_dir/retrygate"
  chmod 755 "$bin_dir/retrygate"
  rm -rf "$tmp"
  finish "$bin_dir/retrygate" "prebuilt $asset, SHA-256 verified"
}

source_build() {
  if [ -n "${PREBUILT_BIN:-}" ]; then
    # The prebuilt phase installed and verified it; hand its path on.
    echo "bin=$PREBUILT_BIN" >>"$GITHUB_OUTPUT"
    echo "built=false" >>"$GITHUB_OUTPUT"
    return 0
  fi
  if [ -x "$cargo_root/bin/retrygate" ] && [ ! -L "$cargo_root/bin/retrygate" ]; then
    echo "built=false" >>"$GITHUB_OUTPUT"
    finish "$cargo_root/bin/retrygate" "from the cache of an earlier source build"
    return 0
  fi
  "${RETRYGATE_CARGO:-cargo}" install --locked --quiet --root "$cargo_root" --path "$ACTION_PATH"
  if [ ! -x "$cargo_root/bin/retrygate" ]; then
    error "cargo install finished but $cargo_root/bin/retrygate is missing"
    exit 1
  fi
  echo "built=true" >>"$GITHUB_OUTPUT"
  finish "$cargo_root/bin/retrygate" "built from source"
}

case "$phase" in
  prebuilt) prebuilt ;;
  source) source_build ;;
  *) echo "usage: install-action.sh prebuilt|source (see the comment at the top)" >&2
     exit 2 ;;
esac
