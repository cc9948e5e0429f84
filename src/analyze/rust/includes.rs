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

/// Paths named by `#[path]`/`include!` in `text`, resolved against the
/// directory of `from` (rustc's rule for a module declared in a file) and
/// normalised; a path that climbs out of the repository is kept as written.
pub fn named_in(from: &str, text: &str) -> BTreeSet<String> {
    let dir = from.rsplit_once('/').map_or("", |(d, _)| d);
    pattern().captures_iter(text).filter_map(|c| c.get(1)).map(|m| resolve(dir, m.as_str())).collect()
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
pub fn included(cs: &ChangeSet) -> Extra {
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

#[cfg(test)]
mod tests {
    use super::*;

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
