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

/// The other direction: unchanged files that a changed file imports by a
/// relative path (`import { RETRY_DEFAULTS } from "./retry"`, `from .limits
/// import MAX_TRIES`), read from the head tree. They are the same in both
/// revisions, so a value the change now overrides (`{ ...RETRY_DEFAULTS,
/// retries: 10 }`) is compared with the one it had through the import. Only
/// JavaScript/TypeScript and Python relative imports: their path names the
/// file. A path that names no file of the tree is left alone.
pub(crate) fn imported(
    tree: &RepoHead,
    files: &[&FileChange],
    changed: &HashSet<&str>,
) -> Result<Vec<Dependent>, String> {
    let mut wanted: Vec<(String, Grammar)> = Vec::new();
    for f in files {
        let Some(g) = Grammar::of_library_path(&f.path) else { continue };
        let Some(text) = f.head.text() else { continue };
        let dir = f.path.rsplit_once('/').map_or("", |(d, _)| d);
        for spec in relative_imports(g, text) {
            for candidate in candidates(g, dir, &spec) {
                if !changed.contains(candidate.as_str()) && !wanted.iter().any(|(p, _)| *p == candidate) {
                    wanted.push((candidate, g));
                }
            }
        }
    }
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let blobs: Vec<TreeBlob> = tree.git.tree_blobs(&tree.rev).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let mut budget = MAX_BYTES;
    for (path, g) in wanted {
        if out.len() >= MAX_FILES {
            break;
        }
        let Some(b) = blobs.iter().find(|b| b.path == path) else { continue };
        if b.size > MAX_FILE_BYTES || b.size > budget {
            continue;
        }
        let read: Vec<Blob> =
            tree.git.read_blobs(std::slice::from_ref(&b.id), MAX_FILE_BYTES).map_err(|e| e.to_string())?;
        let Some(Blob::Bytes(bytes)) = read.into_iter().next() else { continue };
        let Ok(text) = String::from_utf8(bytes) else { continue };
        budget = budget.saturating_sub(b.size);
        let grammar = Grammar::of_library_path(&path).unwrap_or(g);
        out.push(Dependent { path, grammar, text });
    }
    Ok(out)
}

/// The relative module specifiers a file imports: `./retry`, `../config`
/// (JS/TS `from`/`require`/`import(..)`), `.limits`, `..conf.retry`
/// (Python `from .x import`).
fn relative_imports(g: Grammar, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    match g {
        Grammar::Python => {
            for line in text.lines() {
                let t = line.trim_start();
                if let Some(rest) = t.strip_prefix("from ") {
                    let module = rest.split_whitespace().next().unwrap_or("");
                    if module.starts_with('.') {
                        out.push(module.to_string());
                    }
                }
            }
        }
        Grammar::JavaScript | Grammar::TypeScript | Grammar::Tsx => {
            for quote in ['"', '\''] {
                for (i, _) in text.match_indices(quote) {
                    let rest = &text[i + 1..];
                    if !rest.starts_with("./") && !rest.starts_with("../") {
                        continue;
                    }
                    let Some(end) = rest.find(quote) else { continue };
                    let before = text[..i].trim_end();
                    if before.ends_with("from") || before.ends_with("require(") || before.ends_with("import(")
                    {
                        out.push(rest[..end].to_string());
                    }
                }
            }
        }
        _ => {}
    }
    out.sort();
    out.dedup();
    out
}

/// The files a relative specifier may name, from the importing file's folder.
fn candidates(g: Grammar, dir: &str, spec: &str) -> Vec<String> {
    match g {
        Grammar::Python => {
            let dots = spec.chars().take_while(|c| *c == '.').count();
            let mut base: Vec<&str> = if dir.is_empty() { Vec::new() } else { dir.split('/').collect() };
            for _ in 1..dots {
                base.pop();
            }
            let rest = &spec[dots..];
            if rest.is_empty() {
                return Vec::new();
            }
            let mut parts = base.clone();
            parts.extend(rest.split('.'));
            let stem = parts.join("/");
            vec![format!("{stem}.py"), format!("{stem}/__init__.py")]
        }
        _ => {
            let joined = super::eval::normalize(&if dir.is_empty() {
                spec.to_string()
            } else {
                format!("{dir}/{spec}")
            });
            let known = [".ts", ".tsx", ".js", ".mjs", ".cjs", ".jsx", ".mts", ".cts"];
            if known.iter().any(|e| joined.ends_with(e)) {
                return vec![joined];
            }
            let mut c: Vec<String> = known.iter().map(|e| format!("{joined}{e}")).collect();
            c.extend(["/index.ts", "/index.js"].iter().map(|e| format!("{joined}{e}")));
            c
        }
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

    #[test]
    fn relative_imports_name_the_files_they_may_be() {
        let ts = "import pRetry from \"p-retry\";\nimport { RETRY_DEFAULTS } from \"./retry\";\nconst c = require('../conf/limits');\n";
        assert_eq!(relative_imports(Grammar::TypeScript, ts), ["../conf/limits", "./retry"]);
        let c = candidates(Grammar::TypeScript, "web", "./retry");
        assert!(c.contains(&"web/retry.ts".to_string()) && c.contains(&"web/retry/index.ts".to_string()));
        assert_eq!(candidates(Grammar::TypeScript, "web/api", "../conf/limits.js"), ["web/conf/limits.js"]);
        let py =
            "from .limits import MAX_TRIES\nfrom ..conf.retry import POLICY\nfrom tenacity import retry\n";
        assert_eq!(relative_imports(Grammar::Python, py), ["..conf.retry", ".limits"]);
        assert_eq!(
            candidates(Grammar::Python, "app/api", ".limits"),
            ["app/api/limits.py", "app/api/limits/__init__.py"]
        );
        assert_eq!(
            candidates(Grammar::Python, "app/api", "..conf.retry"),
            ["app/conf/retry.py", "app/conf/retry/__init__.py"]
        );
        assert!(candidates(Grammar::Python, "app", ".").is_empty());
    }
}
