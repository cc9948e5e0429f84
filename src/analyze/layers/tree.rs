//! The files of one revision the layer readers may need: found with one
//! `git grep` over the tree (words a retry, a route or a base URL is
//! written with), read with one `git cat-file`, and bounded in number and
//! size. Changed files come from the change set itself, so the model of a
//! change set built in memory (tests, rule cases) sees them too.

use crate::analyze::testcode::ScanPaths;
use crate::changeset::{ChangeSetError, FileChange, Git, MAX_FILE_BYTES};
use crate::finding::Note;

/// Most files of one revision the layer model reads (docs/limits.md); a
/// larger match is cut with a note.
pub(crate) const MAX_TREE_FILES: usize = 5_000;

/// Whether a path may declare a layer or a base URL, by its name.
pub(crate) fn is_candidate(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    matches!(
        ext,
        "yaml"
            | "yml"
            | "json"
            | "toml"
            | "conf"
            | "cfg"
            | "go"
            | "rb"
            | "rs"
            | "env"
            | "tmpl"
            | "template"
            | "py"
            | "js"
            | "ts"
    ) || name == ".env"
        || name.starts_with("dockerfile")
        || name.contains("nginx")
        || name.contains("haproxy")
}

/// What one side of the change declares: (path, text) pairs, and notes.
#[derive(Debug, Default)]
pub(crate) struct Side {
    pub(crate) files: Vec<(String, String)>,
    pub(crate) notes: Vec<Note>,
}

/// The words `git grep` looks for (case-insensitive): anything a layer or
/// a base URL is written with.
const GREP_WORDS: &[&str] = &[
    "retr",
    "next_upstream",
    "next-upstream",
    "redispatch",
    "_url",
    "_addr",
    "_host",
    "http://",
    "https://",
    "kind: service",
];

/// Both sides of a change: the candidate files of `base_rev` and of
/// `head_rev`, with the changed files of `changes` taken from the change
/// set. A file the two trees hold alike (a path `git diff-tree` does not
/// list) is read from git once and its text used for both sides.
pub(crate) fn read_both(
    git: &Git,
    base_rev: &str,
    head_rev: &str,
    changes: &[&FileChange],
    paths: &ScanPaths,
) -> Result<(Side, Side), ChangeSetError> {
    let base = read(git, base_rev, changes, true, paths, None)?;
    let out =
        git.run_bytes(&["diff-tree", "-r", "-z", "--name-only", "--no-renames", base_rev, head_rev, "--"])?;
    let differ: std::collections::HashSet<&[u8]> = out.split(|b| *b == 0).filter(|p| !p.is_empty()).collect();
    let same: std::collections::HashMap<&str, &str> = base
        .files
        .iter()
        .filter(|(p, _)| !differ.contains(p.as_bytes()))
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let head = read(git, head_rev, changes, false, paths, Some(&same))?;
    Ok((base, head))
}

/// The candidate files of `rev`, with the changed files of `changes` taken
/// from the change set (`base`: their base side). A path in `known` (the
/// same in another tree already read) takes its text from there instead of
/// from git.
pub(crate) fn read(
    git: &Git,
    rev: &str,
    changes: &[&FileChange],
    base: bool,
    paths: &ScanPaths,
    known: Option<&std::collections::HashMap<&str, &str>>,
) -> Result<Side, ChangeSetError> {
    let mut args: Vec<String> =
        vec!["grep".into(), "-l".into(), "-z".into(), "-I".into(), "-i".into(), "-F".into()];
    for w in GREP_WORDS {
        args.push("-e".into());
        args.push((*w).into());
    }
    args.push(rev.into());
    args.push("--".into());
    let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
    // `git grep` exits 1 when nothing matches: an empty list, not an error.
    let out = match git.run_bytes(&arg_refs) {
        Ok(o) => o,
        Err(ChangeSetError::Git { stderr, .. }) if stderr.is_empty() => Vec::new(),
        Err(e) => return Err(e),
    };
    let prefix = format!("{rev}:");
    let changed: std::collections::HashMap<&str, &FileChange> = changes
        .iter()
        .map(|f| (if base { f.old_path.as_deref().unwrap_or(&f.path) } else { f.path.as_str() }, *f))
        .collect();
    let mut side = Side::default();
    let mut wanted = Vec::new();
    for entry in out.split(|b| *b == 0) {
        let Ok(entry) = std::str::from_utf8(entry) else { continue };
        let Some(path) = entry.strip_prefix(&prefix) else { continue };
        if path.contains('\n')
            || !is_candidate(path)
            || paths.ignored(path).is_some()
            || paths.test_pattern(path).is_some()
        {
            continue;
        }
        if changed.contains_key(path) {
            continue;
        }
        wanted.push(path.to_string());
    }
    if wanted.len() > MAX_TREE_FILES {
        side.notes.push(Note::info(
            None,
            format!(
                "the layer model read {MAX_TREE_FILES} of the {} files at {} that may declare retries or base URLs (docs/limits.md); chains through the others are not shown",
                wanted.len(),
                crate::text::short_sha(rev)
            ),
        ));
        wanted.truncate(MAX_TREE_FILES);
    }
    let (reused, wanted): (Vec<String>, Vec<String>) =
        wanted.into_iter().partition(|p| known.is_some_and(|k| k.contains_key(p.as_str())));
    for path in reused {
        if let Some(text) = known.and_then(|k| k.get(path.as_str())) {
            side.files.push((path.clone(), (*text).to_string()));
        }
    }
    let ids: Vec<String> = wanted.iter().map(|p| format!("{rev}:{p}")).collect();
    let blobs = git.read_blobs(&ids, MAX_FILE_BYTES)?;
    for (path, blob) in wanted.into_iter().zip(blobs) {
        if let crate::changeset::git::Blob::Bytes(bytes) = blob {
            side.files.push((path, String::from_utf8_lossy(&bytes).into_owned()));
        }
    }
    for f in changes {
        let (path, text) = if base {
            (f.old_path.as_deref().unwrap_or(&f.path), f.base.text())
        } else {
            (f.path.as_str(), f.head.text())
        };
        if let Some(t) = text {
            if paths.test_pattern(path).is_none() {
                side.files.push((path.to_string(), t.to_string()));
            }
        }
    }
    side.files.sort();
    Ok(side)
}

/// Both sides from the changed files alone (a change set with no repository).
pub(crate) fn from_changes(changes: &[&FileChange], paths: &ScanPaths) -> (Side, Side) {
    let side = |base: bool| Side {
        files: changes
            .iter()
            .filter(|f| paths.test_pattern(&f.path).is_none())
            .filter_map(|f| {
                let t = if base { f.base.text() } else { f.head.text() };
                t.map(|t| (f.path.clone(), t.to_string()))
            })
            .collect(),
        notes: Vec::new(),
    };
    (side(true), side(false))
}
