//! Unchanged files that read what the change redefines: a constant edited
//! in `settings.py` raises the retries of an `@retry` in `client.py`,
//! which the change does not touch. Files of the head tree in the changed
//! files' languages that use a retry library and name one of the changed
//! modules are read (within a byte budget) and join both revisions, so
//! their sites are compared with the redefined values.

use std::collections::HashSet;

use super::grammar::Grammar;
use crate::analyze::knobs::libraries::LIBRARIES;
use crate::analyze::rules::helpers::RepoHead;
use crate::changeset::git::{Blob, TreeBlob};
use crate::changeset::FileChange;

/// The most bytes read, and the most files kept, per scan.
const MAX_BYTES: u64 = 32 * 1024 * 1024;
const MAX_FILE_BYTES: u64 = 1024 * 1024;
const MAX_FILES: usize = 64;

/// An unchanged file of the head tree: path, grammar, text.
pub(crate) struct Dependent {
    pub(crate) path: String,
    pub(crate) grammar: Grammar,
    pub(crate) text: String,
}

/// The module names a changed file is imported by: its stem (`settings`
/// for `app/settings.py`, `limits` for `src/limits.ts`, the class for
/// Java), and its directory for Go (a package is imported by its folder).
fn module_names(path: &str, g: Grammar) -> Vec<String> {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file).to_string();
    let dir = path.rsplit_once('/').map(|(d, _)| d.rsplit('/').next().unwrap_or(d).to_string());
    match (g, dir) {
        (Grammar::Go, Some(d)) => vec![d],
        (Grammar::Python, Some(d)) if stem == "__init__" => vec![d],
        (_, _) if stem == "index" => Vec::new(),
        // Ruby names the module of `limits.rb` `Limits`.
        (Grammar::Ruby, _) => {
            let camel: String = stem
                .split('_')
                .map(|w| {
                    let mut c = w.chars();
                    c.next().map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
                })
                .collect();
            vec![stem, camel]
        }
        _ => vec![stem],
    }
}

/// What of the head tree reads `files` (the changed files whose
/// file-level constants changed), other than the files of the change
/// (`changed`: they are in both revisions already, each with its own
/// text); `Err` when the tree could not be searched or read (the caller
/// says so in a note). The flag says some files were left out for the
/// budget.
pub(crate) fn read(
    tree: &RepoHead,
    files: &[&FileChange],
    changed: &HashSet<&str>,
) -> Result<(Vec<Dependent>, bool), String> {
    read_kept(tree, files, changed, Grammar::of_library_path, &|g, text| {
        let lang = g.library_language();
        LIBRARIES.0.iter().any(|l| l.used_by(lang, text))
    })
}

/// [`read`] with the reader's own test of which importing files are worth
/// parsing (`keep`: the grammar and the text).
pub(crate) fn read_kept(
    tree: &RepoHead,
    files: &[&FileChange],
    changed: &HashSet<&str>,
    grammar_of: fn(&str) -> Option<Grammar>,
    keep: &dyn Fn(Grammar, &str) -> bool,
) -> Result<(Vec<Dependent>, bool), String> {
    let mut names: HashSet<(Grammar, String)> = HashSet::new();
    for f in files {
        if let Some(g) = grammar_of(&f.path) {
            for n in module_names(&f.path, g) {
                names.insert((g, n));
            }
        }
    }
    if names.is_empty() {
        return Ok((Vec::new(), false));
    }
    // `git grep` finds the files that name a changed module; only those
    // are read.
    let mut words: Vec<&str> = names.iter().map(|(_, n)| n.as_str()).collect();
    words.sort_unstable();
    words.dedup();
    let listed = grep_files(tree, &words)?;
    let prefix = format!("{}:", tree.rev);
    let candidates: HashSet<&str> = listed
        .lines()
        .filter_map(|l| l.strip_prefix(prefix.as_str()))
        .filter(|p| !changed.contains(p))
        .collect();
    if candidates.is_empty() {
        return Ok((Vec::new(), false));
    }
    let listing = tree.git.tree_blobs(&tree.rev).map_err(|e| e.to_string())?;
    let mut budget = MAX_BYTES;
    let mut partial = false;
    let mut wanted: Vec<(String, Grammar, String)> = Vec::new();
    for TreeBlob { path, id, size } in listing {
        if !candidates.contains(path.as_str()) {
            continue;
        }
        let Some(g) = grammar_of(&path) else { continue };
        if !names.iter().any(|(ng, _)| same_family(*ng, g)) {
            continue;
        }
        if size > MAX_FILE_BYTES || size > budget {
            partial = true;
            continue;
        }
        budget -= size;
        wanted.push((path, g, id));
    }
    let ids: Vec<String> = wanted.iter().map(|w| w.2.clone()).collect();
    let blobs = tree.git.read_blobs(&ids, MAX_FILE_BYTES).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for ((path, g, _), blob) in wanted.into_iter().zip(blobs) {
        // A listed file whose object cannot be read is an error (the
        // caller blocks on it), not a file to pass over in silence.
        let Blob::Bytes(bytes) = blob else {
            return Err(format!("{path} is listed in the head tree but could not be read"));
        };
        let Ok(text) = String::from_utf8(bytes) else {
            partial = true;
            continue;
        };
        if !keep(g, &text) {
            continue;
        }
        if out.len() == MAX_FILES {
            partial = true;
            break;
        }
        out.push(Dependent { path, grammar: g, text });
    }
    Ok((out, partial))
}

fn same_family(a: Grammar, b: Grammar) -> bool {
    let js = |g| matches!(g, Grammar::JavaScript | Grammar::TypeScript | Grammar::Tsx);
    a == b || (js(a) && js(b))
}

/// The files of the head tree, in the languages a tree-sitter grammar reads,
/// that name one of `words` as a whole word, as `git grep -l` lists them
/// (`REV:path` lines); none is an empty listing, not an error.
pub(crate) fn grep_files(tree: &RepoHead, words: &[&str]) -> Result<String, String> {
    let mut args: Vec<String> = vec!["grep".into(), "-l".into(), "-w".into(), "-I".into()];
    for w in words {
        args.push("-e".into());
        args.push((*w).to_string());
    }
    args.push(tree.rev.clone());
    args.push("--".into());
    for ext in [
        "*.py", "*.js", "*.mjs", "*.cjs", "*.jsx", "*.ts", "*.mts", "*.cts", "*.tsx", "*.go", "*.java",
        "*.rb", "*.php", "*.cs", "*.kt", "*.kts",
    ] {
        args.push(ext.into());
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    match tree.git.run(&argv) {
        Ok(out) => Ok(out),
        // No file matched: git grep exits 1 and says nothing.
        Err(crate::changeset::ChangeSetError::Git { stderr, .. }) if stderr.is_empty() => Ok(String::new()),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_file_is_named_by_its_module() {
        assert_eq!(module_names("app/settings.py", Grammar::Python), ["settings"]);
        assert_eq!(module_names("app/conf/__init__.py", Grammar::Python), ["conf"]);
        assert_eq!(module_names("pkg/retry/config.go", Grammar::Go), ["retry"]);
        assert_eq!(module_names("src/limits.ts", Grammar::TypeScript), ["limits"]);
        assert!(module_names("src/index.ts", Grammar::TypeScript).is_empty());
    }
}
