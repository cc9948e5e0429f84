//! The change under review: which files a pull request changed, both versions
//! of each, and which head lines it added.
//!
//! A [`ChangeSet`] is built from a local git repository exactly the way a
//! pull request's "three-dot" diff is: from `merge-base(BASE, HEAD)` to
//! `HEAD`. Every [`FileChange`] carries the whole base and head text, so
//! analyzers compare whole files and use [`FileChange::added`] only to decide
//! where a finding is reported.
//!
//! ```no_run
//! let cs = retrygate::changeset::ChangeSet::from_git(
//!     std::path::Path::new("."), "origin/main", "HEAD").unwrap();
//! for f in &cs.files {
//!     println!("{:?} {}", f.status, f.path);
//! }
//! ```

pub mod git;

use std::path::{Path, PathBuf};

use crate::finding::Note;
use git::Blob;
pub use git::Git;

/// Files larger than this are not read (docs/limits.md): they are skipped with a note.
pub const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// git's own rule for "binary": a NUL byte in the first 8000 bytes.
const BINARY_SNIFF_BYTES: usize = 8000;

/// Why a change set could not be built. Every variant is a usage or
/// environment problem (exit 2) and says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum ChangeSetError {
    #[error("{dir} is not a git repository ({detail}); run retrygate inside a clone, or pass --repo DIR")]
    /// `dir` is not inside a git work tree.
    NotARepository {
        /// The directory retrygate was pointed at.
        dir: PathBuf,
        /// What git said.
        detail: String,
    },
    #[error("unknown revision '{rev}': it is not a commit in this repository; check the name, or fetch it first ({})", fetch_command(.rev))]
    /// A revision that names no commit here (often: not fetched yet).
    UnknownRevision {
        /// The revision as the user gave it.
        rev: String,
    },
    #[error("no merge base between {base} and {head}: the clone is shallow; fetch full history (git fetch --unshallow, or actions/checkout with fetch-depth: 0)")]
    /// No merge base, and the clone is shallow: history is missing.
    ShallowClone {
        /// The base revision as given.
        base: String,
        /// The head revision as given.
        head: String,
    },
    #[error("no merge base between {base} and {head}: they share no history; compare a branch with the branch it was made from")]
    /// No merge base in a full clone: the two commits share no history.
    UnrelatedHistories {
        /// The base revision as given.
        base: String,
        /// The head revision as given.
        head: String,
    },
    #[error("could not run git ({detail}); install git and make sure it is on PATH")]
    /// The `git` program could not be started.
    GitMissing {
        /// The operating system's error.
        detail: String,
    },
    #[error("git {args} failed: {stderr}")]
    /// A git command failed for another reason.
    Git {
        /// The arguments it ran with.
        args: String,
        /// Its standard error, trimmed.
        stderr: String,
    },
}

/// The command that fetches `rev`: a remote-tracking name such as
/// `origin/main` is fetched as `git fetch origin main` (a shallow CI checkout
/// usually lacks the base branch), anything else from `origin` as named.
fn fetch_command(rev: &str) -> String {
    let short = rev.strip_prefix("refs/remotes/").unwrap_or(rev);
    match short.split_once('/') {
        Some((remote @ ("origin" | "upstream"), branch)) if !branch.is_empty() => {
            format!("git fetch {remote} {branch}")
        }
        _ => format!("git fetch origin {rev}"),
    }
}

/// How a file changed between the merge base and the head.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// New in the head.
    Added,
    /// On both sides under the same path, with different content.
    Modified,
    /// Gone from the head.
    Deleted,
    /// Renamed (possibly with edits); the base side is the origin's content.
    Renamed,
}

/// One side (base or head) of a changed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Side {
    /// The file does not exist on this side.
    Absent,
    /// The text, decoded as UTF-8 (lossily, with a note, when it was not).
    Text(String),
    /// Binary, too large, or otherwise not analysable; the reason is in the
    /// change set's notes.
    Skipped,
}

impl Side {
    /// The text of this side, when it has one to analyse.
    pub fn text(&self) -> Option<&str> {
        match self {
            Side::Text(t) => Some(t),
            _ => None,
        }
    }
}

/// A changed file with both versions and the head lines the change added.
#[derive(Debug, Clone)]
pub struct FileChange {
    /// Repository-relative path on the head side (the base path when deleted).
    pub path: String,
    /// The origin of a rename.
    pub old_path: Option<String>,
    /// How the file changed.
    pub status: Status,
    /// The file at the merge base.
    pub base: Side,
    /// The file at the head.
    pub head: Side,
    /// Head line numbers (1-based) that the change added or replaced, as
    /// sorted, non-overlapping inclusive ranges.
    pub added: Vec<(u32, u32)>,
}

impl FileChange {
    /// Builds a file change from two texts, computing the added lines. Used by
    /// the git loader and by tests and rule-pack cases that have no repository.
    pub fn from_texts(path: &str, base: Option<&str>, head: Option<&str>) -> FileChange {
        let status = match (base, head) {
            (None, _) => Status::Added,
            (_, None) => Status::Deleted,
            _ => Status::Modified,
        };
        let base_side = base.map_or(Side::Absent, |t| Side::Text(t.to_string()));
        let head_side = head.map_or(Side::Absent, |t| Side::Text(t.to_string()));
        let mut fc = FileChange {
            path: path.to_string(),
            old_path: None,
            status,
            base: base_side,
            head: head_side,
            added: Vec::new(),
        };
        fc.added = added_lines(base.unwrap_or(""), head.unwrap_or(""));
        fc
    }

    /// Whether head line `line` was added or changed by this change.
    /// A binary search: `added` is sorted and non-overlapping, and callers
    /// ask once per match, so a linear scan made them quadratic.
    pub fn is_added(&self, line: u32) -> bool {
        self.touches(line, line)
    }

    /// Whether any head line in `start..=end` was added or changed.
    pub fn touches(&self, start: u32, end: u32) -> bool {
        // The first range that ends at or after `start` is the only candidate.
        let i = self.added.partition_point(|&(_, b)| b < start);
        self.added.get(i).is_some_and(|&(a, _)| a <= end)
    }

    /// The file's extension, lower-cased, without the dot.
    pub(crate) fn extension(&self) -> Option<String> {
        Path::new(&self.path).extension().map(|e| e.to_string_lossy().to_ascii_lowercase())
    }
}

/// Head lines that differ from the base, as inclusive 1-based ranges.
/// The head lines next to which base lines were deleted with nothing put
/// in their place (the line before and after each such deletion): what a
/// pure deletion touched, for the analyzers that judge a span of code.
pub(crate) fn deletion_points(base: &str, head: &str) -> Vec<u32> {
    use similar::{Algorithm, DiffOp};
    if base.is_empty() || base == head {
        return Vec::new();
    }
    let diff = similar::TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(std::time::Duration::from_secs(2))
        .diff_lines(base, head);
    let mut out = Vec::new();
    for op in diff.ops() {
        if let DiffOp::Delete { new_index, .. } = *op {
            let at = new_index as u32;
            out.extend([at.max(1), at + 1]);
        }
    }
    out
}

pub(crate) fn added_lines(base: &str, head: &str) -> Vec<(u32, u32)> {
    use similar::{Algorithm, DiffOp};
    // A new file (most of a large pull request) is added whole, and an
    // unchanged one adds nothing: no diff is needed to say so.
    if base.is_empty() || base == head {
        let n = diff_line_count(head);
        return if n == 0 || base == head { Vec::new() } else { vec![(1, n)] };
    }
    let diff = similar::TextDiff::configure()
        .algorithm(Algorithm::Myers)
        // Pathological inputs must not stall the gate: past the deadline
        // similar falls back to a coarser (still correct) diff.
        .timeout(std::time::Duration::from_secs(2))
        .diff_lines(base, head);
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for op in diff.ops() {
        let (start, len) = match *op {
            DiffOp::Insert { new_index, new_len, .. } => (new_index, new_len),
            DiffOp::Replace { new_index, new_len, .. } => (new_index, new_len),
            _ => continue,
        };
        if len == 0 {
            continue;
        }
        let a = start as u32 + 1;
        let b = (start + len) as u32;
        match ranges.last_mut() {
            Some(last) if last.1 + 1 >= a => last.1 = last.1.max(b),
            _ => ranges.push((a, b)),
        }
    }
    ranges
}

/// How many lines `similar` splits `text` into: `\n`, `\r\n` and a lone `\r`
/// each end one, and text after the last end is one more.
fn diff_line_count(text: &str) -> u32 {
    let bytes = text.as_bytes();
    let mut lines = 0u32;
    let mut ends = memchr::memchr2_iter(b'\r', b'\n', bytes).peekable();
    while let Some(i) = ends.next() {
        if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
            // `\r\n` ends one line: skip its `\n`.
            ends.next();
        }
        lines += 1;
    }
    if !matches!(bytes.last(), None | Some(b'\n' | b'\r')) {
        lines += 1;
    }
    lines
}

/// The whole change: resolved revisions, the changed files, and notes about
/// anything that was skipped.
#[derive(Debug, Clone)]
pub struct ChangeSet {
    pub(crate) repo: PathBuf,
    /// The base revision as the user named it.
    pub base_rev: String,
    /// The merge base the diff starts from.
    pub merge_base: String,
    /// The head commit id.
    pub head: String,
    /// Every changed file, sorted by path.
    pub files: Vec<FileChange>,
    /// What could not be read or decoded, said once per file.
    pub notes: Vec<Note>,
}

impl ChangeSet {
    /// Builds the change from `merge-base(base, head)` to `head` in `repo`.
    pub fn from_git(repo: &Path, base: &str, head: &str) -> Result<ChangeSet, ChangeSetError> {
        let git = Git::open(repo)?;
        let base_sha = git.resolve_commit(base)?;
        let head_sha = git.resolve_commit(head)?;
        let merge_base = match git.merge_base(&base_sha, &head_sha)? {
            Some(mb) => mb,
            None if git.is_shallow() => {
                return Err(ChangeSetError::ShallowClone { base: base.into(), head: head.into() })
            }
            None => return Err(ChangeSetError::UnrelatedHistories { base: base.into(), head: head.into() }),
        };
        let raw = git.run_bytes(&[
            "diff",
            "--raw",
            "-z",
            "--no-abbrev",
            "--find-renames",
            // The user's `diff.relative` would limit the diff to the directory
            // git runs in and shorten the paths: files would go missing.
            "--no-relative",
            "--no-ext-diff",
            "--no-textconv",
            &merge_base,
            &head_sha,
            "--",
        ])?;
        let entries = parse_raw_diff(&raw)?;
        let mut notes = Vec::new();
        let mut blob_ids: Vec<String> = Vec::new();
        for e in &entries {
            for (id, mode) in [(&e.old_id, &e.old_mode), (&e.new_id, &e.new_mode)] {
                // A submodule's id names a commit of another repository.
                if !is_null_id(id) && mode != SUBMODULE_MODE {
                    blob_ids.push(id.clone());
                }
            }
        }
        blob_ids.sort();
        blob_ids.dedup();
        let blobs = git.read_blobs(&blob_ids, MAX_FILE_BYTES)?;
        let mut store = BlobStore::new(blob_ids, blobs, &entries);

        let mut files = Vec::with_capacity(entries.len());
        for e in entries {
            if e.old_mode == SUBMODULE_MODE || e.new_mode == SUBMODULE_MODE {
                notes.push(submodule_note(&e));
                continue;
            }
            let status = match e.status {
                'A' => Status::Added,
                'D' => Status::Deleted,
                'R' => Status::Renamed,
                _ => Status::Modified,
            };
            let [base_id, head_id] = side_ids(&e);
            let mut side = |id: Option<&str>, mode: &str, which: &str, notes: &mut Vec<Note>| -> Side {
                let Some(id) = id else { return Side::Absent };
                let blob = store.take(id);
                if mode == SYMLINK_MODE {
                    // A link's blob is its target. Links are not followed (the
                    // target may be outside the change, or outside the
                    // repository); an analyzer that wants this path turns the
                    // skipped side into a blocking note.
                    notes.push(symlink_note(&e.path, which, blob.as_ref()));
                    return Side::Skipped;
                }
                decode_side(&e.path, blob, notes)
            };
            let base = side(base_id, &e.old_mode, "base", &mut notes);
            let head = side(head_id, &e.new_mode, "head", &mut notes);
            files.push(FileChange {
                path: e.path,
                old_path: e.old_path,
                status,
                base,
                head,
                added: Vec::new(),
            });
        }
        // Line diffs are independent per file: spread them over the cores.
        use rayon::prelude::*;
        files.par_iter_mut().for_each(|f| {
            if let Side::Text(h) = &f.head {
                f.added = added_lines(f.base.text().unwrap_or(""), h);
            }
        });
        notes.dedup();
        Ok(ChangeSet {
            repo: repo.to_path_buf(),
            base_rev: base.to_string(),
            merge_base,
            head: head_sha,
            files,
            notes,
        })
    }

    /// A change set built from in-memory files (tests, rule cases).
    pub fn from_files(files: Vec<FileChange>) -> ChangeSet {
        ChangeSet {
            repo: PathBuf::from("."),
            base_rev: "base".into(),
            merge_base: "0".repeat(40),
            head: "0".repeat(40),
            files,
            notes: Vec::new(),
        }
    }
}

/// git's file mode of a submodule (a "gitlink").
const SUBMODULE_MODE: &str = "160000";
/// git's file mode of a symbolic link.
const SYMLINK_MODE: &str = "120000";

/// A submodule added or moved is code the gate cannot see: blocking, with
/// the command that shows what changed inside it.
fn submodule_note(e: &RawEntry) -> Note {
    let short = |id: &str| id.chars().take(12).collect::<String>();
    if e.new_mode != SUBMODULE_MODE {
        return Note::info(Some(&e.path), "submodule removed; nothing inside it is analysed");
    }
    let what = if e.old_mode == SUBMODULE_MODE {
        format!("submodule moved from {} to {}", short(&e.old_id), short(&e.new_id))
    } else {
        format!("submodule added at {}", short(&e.new_id))
    };
    let range = if e.old_mode == SUBMODULE_MODE {
        format!("{}..{}", short(&e.old_id), short(&e.new_id))
    } else {
        short(&e.new_id)
    };
    Note::blocking(
        Some(&e.path),
        format!(
            "{what}; retrygate does not analyse code inside submodules: a maintainer reviews `git -C {} log -p {range}` for retry, timeout and HTTP-client changes, then signs off",
            e.path
        ),
    )
}

/// What a symbolic link on one side points to, for the note that explains
/// why the file is not analysed.
fn symlink_note(path: &str, which: &str, blob: Option<&Blob>) -> Note {
    let target = match blob {
        Some(Blob::Bytes(b)) => format!("`{}`", String::from_utf8_lossy(b)),
        _ => "a target that could not be read".into(),
    };
    Note::info(
        Some(path),
        format!(
            "the {which} version is a symbolic link to {target}; links are not followed, so the file it points to must keep the retry settings of the file it replaces"
        ),
    )
}

/// The blob ids the base and head sides of an entry read: none for a side
/// the file does not have, none at all for a submodule entry.
fn side_ids(e: &RawEntry) -> [Option<&str>; 2] {
    if e.old_mode == SUBMODULE_MODE || e.new_mode == SUBMODULE_MODE {
        return [None, None];
    }
    let base = (e.status != 'A' && !is_null_id(&e.old_id)).then_some(e.old_id.as_str());
    let head = (e.status != 'D' && !is_null_id(&e.new_id)).then_some(e.new_id.as_str());
    [base, head]
}

/// The blobs read for a change, each handed out by value at its last use:
/// a large pull request's text is then never copied once more (files with
/// the same content share a blob, and all but the last get a copy).
struct BlobStore {
    ids: Vec<String>,
    blobs: Vec<Blob>,
    uses: Vec<u32>,
}

impl BlobStore {
    fn new(ids: Vec<String>, blobs: Vec<Blob>, entries: &[RawEntry]) -> BlobStore {
        let mut store = BlobStore { uses: vec![0; ids.len()], ids, blobs };
        for id in entries.iter().flat_map(side_ids).flatten() {
            if let Some(i) = store.index(id) {
                store.uses[i] += 1;
            }
        }
        store
    }

    fn index(&self, id: &str) -> Option<usize> {
        self.ids.binary_search_by(|x| x.as_str().cmp(id)).ok()
    }

    fn take(&mut self, id: &str) -> Option<Blob> {
        let i = self.index(id)?;
        let blob = self.blobs.get_mut(i)?;
        self.uses[i] = self.uses[i].saturating_sub(1);
        Some(if self.uses[i] == 0 { std::mem::replace(blob, Blob::Missing) } else { blob.clone() })
    }
}

fn is_null_id(id: &str) -> bool {
    id.bytes().all(|b| b == b'0')
}

fn decode_side(path: &str, blob: Option<Blob>, notes: &mut Vec<Note>) -> Side {
    match blob {
        None | Some(Blob::Missing) => {
            notes.push(Note::blocking(
                Some(path),
                "an object of this file is missing from the repository (partial clone?); fetch it and scan again",
            ));
            Side::Skipped
        }
        Some(Blob::TooLarge(size)) => {
            notes.push(Note::info(
                Some(path),
                format!("skipped: {} bytes is over the {} MiB limit", size, MAX_FILE_BYTES / (1024 * 1024)),
            ));
            Side::Skipped
        }
        Some(Blob::Bytes(bytes)) => {
            let sniff = &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)];
            if sniff.contains(&0) {
                notes.push(Note::info(Some(path), "skipped: binary file"));
                return Side::Skipped;
            }
            match String::from_utf8(bytes) {
                Ok(s) => Side::Text(s),
                Err(e) => {
                    notes.push(Note::info(
                        Some(path),
                        format!(
                            "not valid UTF-8 (first bad byte at offset {}); analysed with replacement characters",
                            e.utf8_error().valid_up_to()
                        ),
                    ));
                    Side::Text(String::from_utf8_lossy(e.as_bytes()).into_owned())
                }
            }
        }
    }
}

struct RawEntry {
    old_mode: String,
    new_mode: String,
    old_id: String,
    new_id: String,
    status: char,
    path: String,
    old_path: Option<String>,
}

/// Parses `git diff --raw -z` output:
/// `:OLDMODE NEWMODE OLDID NEWID STATUS\0PATH\0` (two paths for renames/copies).
fn parse_raw_diff(raw: &[u8]) -> Result<Vec<RawEntry>, ChangeSetError> {
    let bad = |what: &str| ChangeSetError::Git {
        args: "diff --raw".into(),
        stderr: format!("unexpected output: {what}"),
    };
    let mut fields = raw.split(|&b| b == 0).filter(|f| !f.is_empty());
    let mut entries = Vec::new();
    while let Some(meta) = fields.next() {
        let meta = String::from_utf8_lossy(meta);
        let meta = meta.strip_prefix(':').ok_or_else(|| bad(&meta))?;
        let parts: Vec<&str> = meta.split(' ').collect();
        if parts.len() != 5 {
            return Err(bad(meta));
        }
        let status = parts[4].chars().next().ok_or_else(|| bad(meta))?;
        let first = fields.next().ok_or_else(|| bad("missing path"))?;
        let first = String::from_utf8_lossy(first).into_owned();
        let (path, old_path) = if matches!(status, 'R' | 'C') {
            let second = fields.next().ok_or_else(|| bad("missing rename target"))?;
            (String::from_utf8_lossy(second).into_owned(), Some(first))
        } else {
            (first, None)
        };
        // A copy keeps its origin: compare the new file with it as a rename.
        let status = if status == 'C' { 'R' } else { status };
        entries.push(RawEntry {
            old_mode: parts[0].to_string(),
            new_mode: parts[1].to_string(),
            old_id: parts[2].to_string(),
            new_id: parts[3].to_string(),
            status,
            path,
            old_path,
        });
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_lines_reports_inserted_and_replaced_head_lines() {
        let base = "a\nb\nc\n";
        let head = "a\nB\nc\nd\ne\n";
        assert_eq!(added_lines(base, head), vec![(2, 2), (4, 5)]);
        assert_eq!(added_lines("", "x\ny\n"), vec![(1, 2)]);
        assert!(added_lines("same\n", "same\n").is_empty());
        assert!(added_lines("a\nb\n", "a\n").is_empty(), "a pure deletion adds no head line");
    }

    #[test]
    fn whole_file_shortcuts_count_lines_as_the_diff_does() {
        // The shortcut for new and unchanged files must give what the line
        // diff gives, line endings and a missing final newline included.
        let texts = [
            "",
            "\n",
            "\n\n",
            "x",
            "x\n",
            "x\ny",
            "a\r\nb\r\n",
            "a\rb\rc",
            "a\r\r\nb",
            "\r",
            "\r\n",
            "a\n\r",
            "é\r\nü\n\r\r\n",
            "a\n\n\nb\r",
        ];
        // The same diff without the shortcut: a base that shares no line.
        let diffed = |head: &str| added_lines("\u{1}\n", head);
        for t in texts {
            assert_eq!(added_lines("", t), diffed(t), "new file {t:?}");
            assert!(added_lines(t, t).is_empty(), "unchanged file {t:?}");
        }
    }

    #[test]
    fn raw_diff_parsing_handles_renames_and_odd_names() {
        let raw = b":100644 100644 1111111111111111111111111111111111111111 2222222222222222222222222222222222222222 M\0src/a b.rs\0:100644 100644 3333333333333333333333333333333333333333 3333333333333333333333333333333333333333 R100\0old/x.rs\0new/x.rs\0";
        let e = parse_raw_diff(raw).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].path, "src/a b.rs");
        assert_eq!(e[0].status, 'M');
        assert_eq!(e[1].path, "new/x.rs");
        assert_eq!(e[1].old_path.as_deref(), Some("old/x.rs"));
        assert_eq!(e[1].status, 'R');
    }

    #[test]
    fn raw_diff_parsing_rejects_garbage_with_a_message() {
        let err = parse_raw_diff(b"not a raw line\0").err().unwrap();
        assert!(err.to_string().contains("unexpected output"), "{err}");
    }
}
