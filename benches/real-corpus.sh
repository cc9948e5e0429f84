#!/bin/sh
# Builds the real-code corpus for `cargo bench --bench scan -- --real DIR`:
# a fresh git repository whose `pr` branch adds, in one commit over an empty
# `main`, the first 1,200 `.rs` files (in `git ls-tree` order) of the head of
# each of four real Rust repositories: opendal, cargo, qdrant and smithy-rs
# (4,264 files, 33 MB, when fewer than 1,200 exist all are taken), plus one
# file of our own, bench-client/client.rs, that builds a reqwest-middleware
# client with a retry on every method. The corpus has no Cargo.toml, so the
# whole repository is one crate to the scan: that policy makes it build the
# crate-wide index of write requests over all 4,265 files, and the index's
# cost is inside the benchmark's figures.
#
# Usage: benches/real-corpus.sh DIR [MIRRORS]
#   MIRRORS holds one git repository per project, named owner+name (a bare
#   repository or a clone, or owner+name/repo); default /work/.mirror.
set -eu
out=${1:?usage: benches/real-corpus.sh DIR [MIRRORS]}
mirrors=${2:-/work/.mirror}
rm -rf "$out"
mkdir -p "$out"
cd "$out"
git init -q -b main .
git -c user.name=bench -c user.email=bench@example.invalid commit -q --allow-empty -m base
git checkout -q -b pr
for r in apache+opendal rust-lang+cargo qdrant+qdrant smithy-lang+smithy-rs; do
    src=$mirrors/$r
    [ -d "$src/repo" ] && src=$src/repo
    name=${r#*+}
    git -C "$src" ls-tree -r --name-only HEAD | grep '\.rs$' | head -1200 | while IFS= read -r p; do
        mkdir -p "$name/$(dirname "$p")"
        git -C "$src" cat-file blob "HEAD:$p" >"$name/$p"
    done
done
mkdir -p bench-client
cat >bench-client/client.rs <<'RUST'
use reqwest_middleware::{ClientBuilder, ClientWithMiddleware};
use reqwest_retry::{policies::ExponentialBackoff, RetryTransientMiddleware};

pub fn client() -> ClientWithMiddleware {
    let policy = ExponentialBackoff::builder().build_with_max_retries(3);
    ClientBuilder::new(reqwest::Client::new())
        .with(RetryTransientMiddleware::new_with_policy(policy))
        .build()
}
RUST
git add -A
git -c user.name=bench -c user.email=bench@example.invalid commit -q -m head
echo "$(git ls-files | wc -l) files in $out"
