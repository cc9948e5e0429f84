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

/// Most changed paths the head's `git grep` is narrowed to (see
/// [`read_both`]); a larger change greps the whole head tree.
const MAX_NARROWED_PATHS: usize = 2_000;

/// Both sides of a change: the candidate files of `base_rev` and of
/// `head_rev`, with the changed files of `changes` taken from the change
/// set. A file the two trees hold alike (a path `git diff-tree` does not
/// list) is read from git once and its text used for both sides, and the
/// head tree is searched only at the paths that differ: the base's search
/// already answered for the rest (the two whole-tree searches were most of
/// a scan's time in a large repository).
pub(crate) fn read_both(
    git: &Git,
    base_rev: &str,
    head_rev: &str,
    changes: &[&FileChange],
    paths: &ScanPaths,
) -> Result<(Side, Side), ChangeSetError> {
    let base_hits = grep_hits(git, base_rev, None)?;
    let base = read_hits(git, base_rev, &base_hits, changes, true, paths, None)?;
    let out =
        git.run_bytes(&["diff-tree", "-r", "-z", "--name-only", "--no-renames", base_rev, head_rev, "--"])?;
    let differ: std::collections::HashSet<&[u8]> = out.split(|b| *b == 0).filter(|p| !p.is_empty()).collect();
    let same: std::collections::HashMap<&str, &str> = base
        .files
        .iter()
        .filter(|(p, _)| !differ.contains(p.as_bytes()))
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let differing: Vec<&str> = differ.iter().filter_map(|p| std::str::from_utf8(p).ok()).collect();
    let narrow = differing.len() == differ.len() && differing.len() <= MAX_NARROWED_PATHS;
    let head_hits = if narrow {
        let mut hits: Vec<String> =
            base_hits.into_iter().filter(|p| !differ.contains(p.as_bytes())).collect();
        if !differing.is_empty() {
            hits.extend(grep_hits(git, head_rev, Some(&differing))?);
        }
        // The order a whole-tree search gives (git's tree order is the
        // byte order of full paths), so that a cut at the file limit keeps
        // the same files.
        hits.sort();
        hits.dedup();
        hits
    } else {
        grep_hits(git, head_rev, None)?
    };
    let head = read_hits(git, head_rev, &head_hits, changes, false, paths, Some(&same))?;
    Ok((base, head))
}

/// The paths of `rev` (at `only`, else anywhere in the tree) whose text
/// holds one of [`GREP_WORDS`], in tree order.
fn grep_hits(git: &Git, rev: &str, only: Option<&[&str]>) -> Result<Vec<String>, ChangeSetError> {
    let mut args: Vec<String> =
        vec!["grep".into(), "-l".into(), "-z".into(), "-I".into(), "-i".into(), "-F".into()];
    for w in GREP_WORDS {
        args.push("-e".into());
        args.push((*w).into());
    }
    args.push(rev.into());
    args.push("--".into());
    // Literal: a changed path may hold `*`, `?` or `[`.
    args.extend(only.unwrap_or_default().iter().map(|p| format!(":(literal){p}")));
    let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
    // `git grep` exits 1 when nothing matches: an empty list, not an error.
    let out = match git.run_bytes(&arg_refs) {
        Ok(o) => o,
        Err(ChangeSetError::Git { stderr, .. }) if stderr.is_empty() => Vec::new(),
        Err(e) => return Err(e),
    };
    let prefix = format!("{rev}:");
    Ok(out
        .split(|b| *b == 0)
        .filter_map(|entry| std::str::from_utf8(entry).ok())
        .filter_map(|entry| entry.strip_prefix(&prefix))
        .map(str::to_string)
        .collect())
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
    let hits = grep_hits(git, rev, None)?;
    read_hits(git, rev, &hits, changes, base, paths, known)
}

/// [`read`] over the paths a search of `rev` found.
fn read_hits(
    git: &Git,
    rev: &str,
    hits: &[String],
    changes: &[&FileChange],
    base: bool,
    paths: &ScanPaths,
    known: Option<&std::collections::HashMap<&str, &str>>,
) -> Result<Side, ChangeSetError> {
    let changed: std::collections::HashMap<&str, &FileChange> = changes
        .iter()
        .map(|f| (if base { f.old_path.as_deref().unwrap_or(&f.path) } else { f.path.as_str() }, *f))
        .collect();
    let mut side = Side::default();
    let mut wanted = Vec::new();
    for path in hits {
        if path.contains('\n')
            || !is_candidate(path)
            || paths.ignored(path).is_some()
            || paths.test_pattern(path).is_some()
        {
            continue;
        }
        if changed.contains_key(path.as_str()) {
            continue;
        }
        wanted.push(path.clone());
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git").arg("-C").arg(dir).args(args).output().unwrap().status.success();
        assert!(ok, "git {args:?}");
    }

    fn commit(dir: &Path, files: &[(&str, Option<&str>)]) -> String {
        for (path, text) in files {
            match text {
                Some(t) => std::fs::write(dir.join(path), t).unwrap(),
                None => std::fs::remove_file(dir.join(path)).unwrap(),
            }
        }
        git(dir, &["add", "-A"]);
        git(dir, &["-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "x"]);
        let out = Command::new("git").arg("-C").arg(dir).args(["rev-parse", "HEAD"]).output().unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    fn names(side: &Side) -> Vec<(&str, &str)> {
        side.files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect()
    }

    #[test]
    fn the_head_is_searched_only_where_it_differs_and_finds_what_a_whole_tree_search_finds() {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q", "-b", "main"]);
        let base = commit(
            dir.path(),
            &[
                ("kept.yaml", Some("retries: 3\n")),
                ("plain.yaml", Some("name: x\n")),
                ("gone.yaml", Some("retries: 2\n")),
                ("x[1].yaml", Some("name: y\n")),
            ],
        );
        // No change set is given: every differing path must come from the
        // head's own search, a path with pattern characters included.
        let head = commit(
            dir.path(),
            &[
                ("plain.yaml", Some("name: x\nretries: 5\n")),
                ("gone.yaml", None),
                ("x[1].yaml", Some("base_url: http://api\n")),
                ("new.yaml", Some("retries: 1\n")),
            ],
        );
        let g = Git::open(dir.path()).unwrap();
        let paths = ScanPaths::defaults();
        let (b, h) = read_both(&g, &base, &head, &[], &paths).unwrap();
        assert_eq!(names(&b), [("gone.yaml", "retries: 2\n"), ("kept.yaml", "retries: 3\n")]);
        let whole = read(&g, &head, &[], false, &paths, None).unwrap();
        assert_eq!(names(&h), names(&whole));
        assert_eq!(
            names(&h),
            [
                ("kept.yaml", "retries: 3\n"),
                ("new.yaml", "retries: 1\n"),
                ("plain.yaml", "name: x\nretries: 5\n"),
                ("x[1].yaml", "base_url: http://api\n"),
            ]
        );
    }
}
