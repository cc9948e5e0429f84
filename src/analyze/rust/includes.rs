//! Rust source that does not end in `.rs`: files a module pulls in with
//! `#[path = "client_impl.txt"] mod imp;` or `include!("gen/retry.in")`.
//! rustc compiles them as Rust, so the analyzer must read them too, or say
//! that it cannot.
//!
//! The attribute is found in the text of every changed Rust file (a regular
//! expression over both versions, before anything is parsed), so a file
//! that fails to parse still routes what it includes. Mentions in comments
//! or strings over-include, which only means a file is read as Rust and,
//! when it is not Rust, a blocking parse note.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use regex::Regex;

use crate::analyze::Extra;
use crate::changeset::ChangeSet;
use crate::finding::Note;

/// `#[path = "x"]`, `#![path = "x"]`, `#[cfg_attr(cond, path = "x")]` and
/// `include!("x")`, with plain or raw string literals.
fn pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r##"(?:#\s*!?\s*\[[^\]]*?\bpath\s*=\s*|\binclude\s*!\s*[(\[{]\s*)r?#*"([^"]*)""##)
            .unwrap_or_else(|e| panic!("the include pattern is constant and valid: {e}"))
    })
}

/// `include!(concat!(env!("CARGO_MANIFEST_DIR"), "/x"))`: a path from the
/// crate's root folder, wherever the including file sits.
fn manifest_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r##"\binclude\s*!\s*[(\[{]\s*concat\s*!\s*[(\[{]\s*env\s*!\s*[(\[{]\s*"CARGO_MANIFEST_DIR"\s*[)\]}]\s*,\s*r?#*"([^"]*)""##)
            .unwrap_or_else(|e| panic!("the manifest include pattern is constant and valid: {e}"))
    })
}

/// Paths named by `#[path]`/`include!` in `text`, resolved against the
/// directory of `from` (rustc's rule for a module declared in a file) and
/// normalised; a path that climbs out of the repository is kept as written.
/// A path from `CARGO_MANIFEST_DIR` is resolved against every folder above
/// `from` (the crate root is one of them; the others name files that do
/// not exist, or over-include, which only means a file is read as Rust).
pub(crate) fn named_in(from: &str, text: &str) -> BTreeSet<String> {
    let dir = from.rsplit_once('/').map_or("", |(d, _)| d);
    let mut out: BTreeSet<String> =
        pattern().captures_iter(text).filter_map(|c| c.get(1)).map(|m| resolve(dir, m.as_str())).collect();
    if text.contains("CARGO_MANIFEST_DIR") {
        for m in manifest_pattern().captures_iter(text).filter_map(|c| c.get(1)) {
            let rel = m.as_str().trim_start_matches('/');
            let mut d = dir;
            loop {
                out.insert(resolve(d, rel));
                match d.rsplit_once('/') {
                    Some((up, _)) => d = up,
                    None if !d.is_empty() => d = "",
                    None => break,
                }
            }
        }
    }
    out
}

fn resolve(dir: &str, rel: &str) -> String {
    let mut parts: Vec<&str> =
        if rel.starts_with('/') { Vec::new() } else { dir.split('/').filter(|p| !p.is_empty()).collect() };
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return rel.to_string();
                }
            }
            s => parts.push(s),
        }
    }
    parts.join("/")
}

/// The includes of every changed Rust file in `cs`: changed files they name
/// are read as Rust; an include new in the head whose target this change
/// does not touch is a blocking note (the module's source moved to a file the
/// diff hides).
pub(crate) fn included(cs: &ChangeSet) -> Extra {
    let changed: BTreeSet<&str> = cs.files.iter().map(|f| f.path.as_str()).collect();
    let mut out = Extra::default();
    for f in cs.files.iter().filter(|f| super::is_rust_path(&f.path)) {
        let head = f.head.text().map(|t| named_in(&f.path, t)).unwrap_or_default();
        let base_from = f.old_path.as_deref().unwrap_or(&f.path);
        let base = f.base.text().map(|t| named_in(base_from, t)).unwrap_or_default();
        for target in head.iter().chain(base.iter()) {
            if changed.contains(target.as_str()) && !super::is_rust_path(target) {
                out.paths.insert(target.clone());
            }
        }
        for target in head.difference(&base) {
            if !changed.contains(target.as_str()) {
                out.notes.push(Note::blocking(
                    Some(&f.path),
                    format!(
                        "now compiles `{target}` as Rust source (`#[path]` or `include!`), a file this change does not show; a maintainer reads its retry, timeout and request code before signing off"
                    ),
                ));
            }
        }
    }
    out
}

/// Changed files that are not `.rs` and that an unchanged Rust file of the
/// head tree compiles (`include!`, `#[path]`): the includer is found with
/// one `git grep` for the file's name, then read to confirm.
pub(crate) fn included_by_unchanged(
    cs: &ChangeSet,
    tree: &super::crate_index::HeadCommit,
    extra: &mut Extra,
) {
    let changed: BTreeSet<&str> = cs.files.iter().map(|f| f.path.as_str()).collect();
    let candidates: Vec<&str> = cs
        .files
        .iter()
        .filter(|f| !super::is_rust_path(&f.path) && !extra.paths.contains(&f.path))
        .filter(|f| super::is_change_relevant(f.base.text(), f.head.text()))
        .map(|f| f.path.as_str())
        .collect();
    if candidates.is_empty() {
        return;
    }
    let mut args: Vec<&str> = vec!["grep", "-l", "-I", "-F", "--full-name"];
    let names: Vec<&str> = candidates.iter().map(|p| p.rsplit('/').next().unwrap_or(p)).collect();
    for n in &names {
        args.push("-e");
        args.push(n);
    }
    args.extend_from_slice(&[tree.rev.as_str(), "--", "*.rs", "*.RS"]);
    let out = match tree.git.run_bytes(&args) {
        Ok(o) => o,
        Err(crate::changeset::ChangeSetError::Git { stderr, .. }) if stderr.is_empty() => return,
        Err(e) => {
            extra.notes.push(Note::blocking(
                None,
                format!("could not search the head tree for Rust files that include the changed files ({e}); a maintainer checks whether a changed non-Rust file is compiled with `include!`"),
            ));
            return;
        }
    };
    let prefix = format!("{}:", tree.rev);
    for line in String::from_utf8_lossy(&out).lines() {
        let path = line.strip_prefix(&prefix).unwrap_or(line);
        if changed.contains(path) {
            continue;
        }
        let text = match tree.git.read_blob_at(&tree.rev, path, super::crate_index::MAX_INDEX_FILE_BYTES) {
            Ok(Some(crate::changeset::git::Blob::Bytes(b))) => String::from_utf8_lossy(&b).into_owned(),
            _ => continue,
        };
        let named = named_in(path, &text);
        for c in &candidates {
            if named.contains(*c) {
                extra.paths.insert(c.to_string());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_dir_include_names_the_file_from_every_folder_above() {
        let text = "let p = include!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/policy/std.in\"));";
        let got: Vec<String> = named_in("crates/api/src/client.rs", text).into_iter().collect();
        assert_eq!(
            got,
            [
                "crates/api/policy/std.in",
                "crates/api/src/policy/std.in",
                "crates/policy/std.in",
                "policy/std.in"
            ]
        );
        assert!(named_in("src/a.rs", "env!(\"CARGO_MANIFEST_DIR\")").is_empty());
    }

    #[test]
    fn path_attributes_and_includes_are_found_and_resolved() {
        let text = "#[path = \"client_impl.txt\"]\nmod imp;\n#[cfg_attr(unix, path = \"../unix/x.in\")] mod x;\ninclude!(r\"gen/retry.in\");\n#![path=\"./y.txt\"]";
        let got: Vec<String> = named_in("src/net/client.rs", text).into_iter().collect();
        assert_eq!(
            got,
            ["src/net/client_impl.txt", "src/net/gen/retry.in", "src/net/y.txt", "src/unix/x.in"]
        );
        assert!(named_in("src/a.rs", "let path = \"x.txt\"; include_str!(\"y.txt\");").is_empty());
        assert_eq!(
            named_in("a.rs", "#[path = \"../../etc/x\"] mod m;").into_iter().collect::<Vec<_>>(),
            ["../../etc/x"]
        );
    }
}
