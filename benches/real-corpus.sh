#!/bin/sh
# Builds the real-code corpus for `cargo bench --bench scan -- --real DIR`:
# a fresh git repository whose `pr` branch adds, in one commit over an empty
# `main`, the first 1,200 `.rs` files (in `git ls-tree` order) of the head of
# each of four real Rust repositories: opendal, cargo, qdrant and smithy-rs
# (4,264 files, 33 MB, when fewer than 1,200 exist all are taken).
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
git add -A
git -c user.name=bench -c user.email=bench@example.invalid commit -q -m head
echo "$(git ls-files | wc -l) files in $out"
