//! Reading the rest of the head tree for helper resolution: files of the
//! languages being resolved, outside test code, that mention one of the
//! names, read with one `git cat-file` process and within a byte budget.

use std::collections::{HashMap, HashSet};

use aho_corasick::AhoCorasick;

use super::syntax::Family;
use crate::analyze::rules::lang::Language;
use crate::analyze::rules::mask::{mask, View};
use crate::changeset::git::{Blob, Git, TreeBlob};

/// The most bytes of unchanged files read from the head tree per scan, and
/// the largest file read; past these the resolution says it is partial.
pub(crate) const MAX_TREE_BYTES: u64 = 64 * 1024 * 1024;
pub(crate) const MAX_TREE_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// The repository and the head commit whose unchanged files the rule packs
/// read (helper definitions, Dockerfiles), when the change came from git.
#[derive(Debug, Clone)]
pub(crate) struct RepoHead {
    pub(crate) git: Git,
    pub(crate) rev: String,
}

/// One unchanged file of the head tree that mentions a wanted name.
pub(crate) struct TreeFile {
    pub(crate) family: Family,
    pub(crate) path: String,
    pub(crate) masked: Vec<u8>,
    /// Its import lines, as written ([`imports_of`]).
    pub(crate) imports: String,
}

pub(crate) struct Read {
    pub(crate) files: Vec<TreeFile>,
    pub(crate) partial: bool,
}

/// Reads the files of `names`' families that mention one of the names.
pub(crate) fn read(
    tree: &RepoHead,
    names: &HashMap<Family, Vec<String>>,
    changed: &HashSet<&str>,
    is_test: &dyn Fn(&str) -> bool,
) -> Result<Read, String> {
    let listing = tree.git.tree_blobs(&tree.rev).map_err(|e| e.to_string())?;
    let mut wanted: Vec<(Family, Language, String, String)> = Vec::new();
    let mut budget = MAX_TREE_BYTES;
    let mut partial = false;
    for TreeBlob { path, id, size } in listing {
        let path = path.as_str();
        let Some(lang) = Language::of_path(path) else { continue };
        let Some(family) = Family::of(lang) else { continue };
        if !names.contains_key(&family) || changed.contains(path) || is_test(path) {
            continue;
        }
        if size > MAX_TREE_FILE_BYTES || size > budget {
            partial = true;
            continue;
        }
        budget -= size;
        wanted.push((family, lang, path.to_string(), id));
    }
    let ids: Vec<String> = wanted.iter().map(|w| w.3.clone()).collect();
    let blobs = tree.git.read_blobs(&ids, MAX_TREE_FILE_BYTES).map_err(|e| e.to_string())?;
    let finders: HashMap<Family, AhoCorasick> =
        names.iter().filter_map(|(f, n)| AhoCorasick::new(n).ok().map(|a| (*f, a))).collect();
    let mut files = Vec::new();
    for ((family, lang, path, _), blob) in wanted.into_iter().zip(blobs) {
        let Blob::Bytes(bytes) = blob else {
            partial = true;
            continue;
        };
        if !finders.get(&family).is_some_and(|a| a.is_match(&bytes)) {
            continue;
        }
        let Ok(text) = String::from_utf8(bytes) else { continue };
        files.push(TreeFile {
            family,
            masked: mask(&text, &lang.syntax(), View::Code),
            imports: imports_of(&text),
            path,
        });
    }
    Ok(Read { files, partial })
}

/// The lines of `text` that import (`import`, `from .. import`,
/// `require(..)`, `use`, `include`, a Go import block), joined: what a
/// caller file can reach is named there. String literals are kept, since
/// module paths are strings.
pub(crate) fn imports_of(text: &str) -> String {
    let mut out = String::new();
    let mut in_go_block = false;
    for line in text.lines() {
        let t = line.trim_start();
        if in_go_block {
            out.push_str(t);
            out.push('\n');
            if t.starts_with(')') {
                in_go_block = false;
            }
            continue;
        }
        if t.starts_with("import (") {
            in_go_block = true;
        }
        if t.starts_with("import ")
            || t.starts_with("from ")
            || t.starts_with("use ")
            || t.starts_with("using ")
            || t.starts_with("require ")
            || t.starts_with("require_relative ")
            || t.starts_with("include")
            || t.contains("require(")
            || t.contains("import(")
            || (t.starts_with("export ") && t.contains(" from "))
        {
            out.push_str(t);
            out.push('\n');
        }
    }
    out
}
