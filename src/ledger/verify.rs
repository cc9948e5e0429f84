//! Verifies a ledger: every line a record, every digest and chain link
//! intact, time moving forward, paths inside the repository, and (given the
//! pull request's change) every changed file explained by a record.
//!
//! The result is a [`LedgerReport`], a plain value the gate's policy reads
//! and `--format json` prints; [`super::render`] shows it to people, and
//! nothing here formats for a terminal. Problems never stop verification early (the
//! maintainer sees all of them, up to [`MAX_PROBLEMS`]); only the size limits
//! in [`ReadLimits`] do.

use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::lines::{LineReader, Next, ReadLimits};
use super::pyjson;
use super::record::{normalize_repo_path, Record};
use crate::changeset::git::Blob;
use crate::changeset::{ChangeSet, ChangeSetError, Git, Status};

/// Problems listed in a report; the rest are counted in `problems_omitted`.
pub(crate) const MAX_PROBLEMS: usize = 100;

/// Head files larger than this are not hashed (their records cannot be
/// checked, which is a problem, not a pass).
const MAX_HASH_BYTES: u64 = 64 << 20;

/// One reason the ledger does not hold, with the line it is on and what to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Problem {
    /// 1-based line number, or `None` for the ledger as a whole.
    pub line: Option<u64>,
    /// What is wrong, in one line.
    pub message: String,
    /// What to do about it.
    pub fix: String,
}

/// How the ledger accounts for the pull request's change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    pub(crate) base: String,
    pub(crate) head: String,
    /// Files the pull request changed.
    pub changed: usize,
    /// Changed files whose last edit record accounts for the head content.
    pub explained: usize,
    /// Changed files no record explains (or whose last v2 record names other
    /// content than the head has).
    pub unexplained: Vec<String>,
    /// Files the ledger records edits of that the pull request does not
    /// change (edited, then reverted; or edits that never landed).
    pub not_landed: Vec<String>,
}

/// The verifier's answer, the value the gate's policy uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LedgerReport {
    /// Where the ledger was read from.
    pub(crate) ledger: String,
    /// Whether a ledger was there at all.
    pub present: bool,
    /// `true` only when there is no problem at all.
    pub valid: bool,
    /// `"v1"`, `"v2"`, `"mixed"`, or `null` when no record was read.
    pub format: Option<String>,
    /// Records that parsed.
    pub records: u64,
    /// Lines read.
    pub lines: u64,
    /// What does not hold, in ledger order, at most [`MAX_PROBLEMS`].
    pub problems: Vec<Problem>,
    /// Problems beyond [`MAX_PROBLEMS`], counted but not listed.
    pub problems_omitted: u64,
    /// Present when verified against a change.
    pub coverage: Option<Coverage>,
    /// Where the gate found the ledger: committed at the head, an Actions
    /// artifact (with its run and link), a zip or a file given locally.
    /// Absent from `retrygate ledger verify`, which is told the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) origin: Option<super::artifact::LedgerOrigin>,
    /// The places the gate looked, in order, and what each held; filled
    /// when no ledger was found (or an artifact could not be used).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) looked: Vec<String>,
}

impl LedgerReport {
    /// The report for "no ledger anywhere": `present: false`, one problem
    /// listing `looked` in order, and the coverage a ledger would have had
    /// to give (every changed file unexplained).
    pub fn missing(looked: Vec<String>, artifact_name: &str, target: Option<&ChangeTarget>) -> LedgerReport {
        let mut v = Verifier::new("(none)");
        let places: Vec<String> =
            looked.iter().enumerate().map(|(i, l)| format!("({}) {l}", i + 1)).collect();
        v.problem(
            None,
            format!("no tool-call ledger found; looked, in order: {}", places.join("; ")),
            &format!("an agent's pull request must carry its tool-call ledger: install the agent hook (`retrygate ledger hook claude|codex|cursor`, see docs/ledger.md), then commit the ledger or upload it from the agent's workflow run as the artifact `{artifact_name}`"),
        );
        let mut report = v.finish(target);
        report.present = false;
        report.looked = looked;
        report
    }
}

/// The head content of one changed file, as the v2 check needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HeadContent {
    /// The change deleted the file.
    Absent,
    /// Hex SHA-256 of the head bytes.
    Sha256(String),
    /// The content could not be hashed; the reason.
    Unknown(String),
}

/// One file the pull request changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedFile {
    pub(crate) path: String,
    /// The origin of a rename: a record of it is not an edit that "did not land".
    pub(crate) old_path: Option<String>,
    pub(crate) head: HeadContent,
}

/// The change a ledger must explain: changed paths and their head content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeTarget {
    pub(crate) base: String,
    pub(crate) head: String,
    /// The changed files, with their head content's hash.
    pub files: Vec<ChangedFile>,
}

impl ChangeTarget {
    /// Builds the target from a change set, hashing each head file's raw
    /// bytes from git (the change set's text is decoded and may be lossy).
    pub(crate) fn from_changeset(cs: &ChangeSet) -> Result<ChangeTarget, ChangeSetError> {
        let git = Git::open(&cs.repo)?;
        let mut files: Vec<ChangedFile> = cs
            .files
            .iter()
            .map(|f| ChangedFile {
                path: f.path.clone(),
                old_path: f.old_path.clone(),
                head: HeadContent::Absent,
            })
            .collect();
        // Files the change set read as text are small (its own size limit):
        // fetch them all with one `git cat-file --batch`, which takes
        // `REV:PATH` names. Others (large, binary, names with a newline,
        // which the batch protocol cannot carry) are read one at a time.
        let mut batched: Vec<usize> = Vec::new();
        let mut single: Vec<usize> = Vec::new();
        for (i, f) in cs.files.iter().enumerate() {
            if f.status == Status::Deleted {
                continue;
            }
            if f.head.text().is_some() && !f.path.contains('\n') {
                batched.push(i);
            } else {
                single.push(i);
            }
        }
        let specs: Vec<String> =
            batched.iter().map(|&i| format!("{}:{}", cs.head, cs.files[i].path)).collect();
        for (&i, blob) in batched.iter().zip(git.read_blobs(&specs, MAX_HASH_BYTES)?) {
            files[i].head = head_content(Some(blob));
        }
        for i in single {
            files[i].head = head_content(git.read_blob_at(&cs.head, &cs.files[i].path, MAX_HASH_BYTES)?);
        }
        Ok(ChangeTarget { base: cs.base_rev.clone(), head: cs.head.clone(), files })
    }

    /// Leaves `path` (repository-relative) out: the ledger file itself, when
    /// it is committed with the change, is not an edit a record must explain.
    pub fn exclude(&mut self, path: &str) {
        self.files.retain(|f| f.path != path);
    }

    /// Builds the target for `merge-base(base, head)..head` in `repo`.
    pub fn from_git(repo: &Path, base: &str, head: &str) -> Result<ChangeTarget, ChangeSetError> {
        ChangeTarget::from_changeset(&ChangeSet::from_git(repo, base, head)?)
    }
}

fn head_content(blob: Option<Blob>) -> HeadContent {
    match blob {
        Some(Blob::Bytes(bytes)) => HeadContent::Sha256(hex::encode(Sha256::digest(&bytes))),
        Some(Blob::TooLarge(size)) => HeadContent::Unknown(format!(
            "{size} bytes is over the {} MiB hashing limit",
            MAX_HASH_BYTES >> 20
        )),
        Some(Blob::Missing) | None => {
            HeadContent::Unknown("the head object is missing (partial clone?); fetch it".into())
        }
    }
}

/// Why verification could not decide (exit 2), as opposed to "invalid".
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("cannot read the ledger {path}: {source}; check the path and its permissions")]
    /// The ledger file exists but could not be read.
    Unreadable {
        /// The ledger file.
        path: String,
        /// What the operating system said.
        source: io::Error,
    },
}

/// Verifies the ledger at `path` with the default [`ReadLimits`].
pub fn verify(path: &Path, target: Option<&ChangeTarget>) -> Result<LedgerReport, VerifyError> {
    verify_file(path, target, ReadLimits::default())
}

/// Verifies the ledger at `path`. A missing file is a report with
/// `present: false` (the evidence is absent); an unreadable one is an error.
pub fn verify_file(
    path: &Path,
    target: Option<&ChangeTarget>,
    limits: ReadLimits,
) -> Result<LedgerReport, VerifyError> {
    let name = path.display().to_string();
    let unreadable = |source| VerifyError::Unreadable { path: name.clone(), source };
    // Opening a FIFO blocks until a writer comes, and a device never ends:
    // only regular files are read (the reader below bounds the size).
    match crate::bounded::ensure_regular(path) {
        Ok(_) => {}
        Err(e) if e.is_not_found() => return Ok(absent(&name, target)),
        Err(crate::bounded::BoundedReadError::NotRegular { what, .. }) => {
            return Err(unreadable(io::Error::other(format!(
                "it is a {what}, not a regular file (a {what} may block or never end)"
            ))))
        }
        Err(_) => {}
    }
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(absent(&name, target)),
        Err(e) => return Err(unreadable(e)),
    };
    let meta = file.metadata().map_err(unreadable)?;
    if meta.is_dir() {
        return Err(unreadable(io::Error::other("it is a directory")));
    }
    // Wait for an appender that is mid-write, so a half-written last line is
    // not mistaken for a crash. Locking is advisory and may be unsupported
    // (some network filesystems): then we read without it.
    let _ = fs4::fs_std::FileExt::lock_shared(&file);
    let reader = BufReader::with_capacity(1 << 16, file);
    verify_reader(&name, reader, target, limits).map_err(unreadable)
}

/// Verifies a ledger read from `reader`; `source` names it in the report.
pub fn verify_reader<R: BufRead>(
    source: &str,
    reader: R,
    target: Option<&ChangeTarget>,
    limits: ReadLimits,
) -> io::Result<LedgerReport> {
    let mut v = Verifier::new(source);
    let mut lines = LineReader::new(reader, limits);
    loop {
        match lines.next_line()? {
            Next::Line(line) => v.line(line, limits),
            Next::LimitReached { bytes_read } => {
                v.problem(
                    None,
                    format!("the ledger is larger than the {} MiB limit; verification stopped after {bytes_read} bytes (line {})", limits.max_ledger_bytes >> 20, v.lines + 1),
                    "a real tool-call ledger is a few MB; check that --ledger names the ledger and not another file, or split the session's ledger",
                );
                break;
            }
            Next::End => break,
        }
    }
    Ok(v.finish(target))
}

fn absent(source: &str, target: Option<&ChangeTarget>) -> LedgerReport {
    let mut v = Verifier::new(source);
    v.problem(
        None,
        format!("no ledger at {source}"),
        "an agent's pull request must carry its tool-call ledger: install the agent hook (`retrygate ledger hook claude|codex|cursor`, see docs/ledger.md) and commit or upload the ledger, or pass --ledger PATH",
    );
    let mut report = v.finish(target);
    report.present = false;
    report
}

struct LastEdit {
    line: u64,
    version: u8,
    sha256: Option<Option<String>>,
}

struct Verifier {
    source: String,
    problems: Vec<Problem>,
    omitted: u64,
    lines: u64,
    records: u64,
    saw_v1: bool,
    saw_v2: bool,
    prev_line_sha: Option<[u8; 32]>,
    last_ts: Option<(f64, u64)>,
    /// `seq` of the previous line when it was a v2 record: the next one
    /// continues from it, so one removed line is one problem, not a cascade.
    last_seq: Option<u64>,
    last_edit: HashMap<String, LastEdit>,
}

const FIX_REWRITE: &str = "ledger lines are written by tools, never by hand: restore the line from the agent's own log, or re-record the session with `retrygate ledger hook`";
const FIX_CHAIN: &str = "a v2 ledger is a hash chain: a line was removed, inserted, reordered or edited here; restore the original ledger (the CI artifact or the agent's copy) rather than repairing it by hand";

impl Verifier {
    fn new(source: &str) -> Verifier {
        Verifier {
            source: source.to_string(),
            problems: Vec::new(),
            omitted: 0,
            lines: 0,
            records: 0,
            saw_v1: false,
            saw_v2: false,
            prev_line_sha: None,
            last_seq: None,
            last_ts: None,
            last_edit: HashMap::new(),
        }
    }

    fn problem(&mut self, line: Option<u64>, message: impl Into<String>, fix: &str) {
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(Problem { line, message: message.into(), fix: fix.to_string() });
        } else {
            self.omitted += 1;
        }
    }

    fn line(&mut self, line: super::lines::Line, limits: ReadLimits) {
        self.lines = line.number;
        let n = line.number;
        let last_seq = self.last_seq.take();
        let prev_sha = self.prev_line_sha.replace(line.sha256);
        let Some(bytes) = line.bytes else {
            self.problem(
                Some(n),
                format!("line is {} bytes, over the {} KiB limit for one record", line.len, limits.max_line_bytes >> 10),
                "records hold paths and hashes, never file contents; find what wrote this line (a tool payload with a whole file in it?) and keep payloads small",
            );
            return;
        };
        let Ok(text) = std::str::from_utf8(&bytes) else {
            self.problem(Some(n), "line is not UTF-8 text (binary data in the ledger?)", FIX_REWRITE);
            return;
        };
        if text.trim().is_empty() {
            self.problem(
                Some(n),
                "empty line",
                "remove the empty line; every line of a ledger is one record",
            );
            return;
        }
        let record = match Record::parse(n, text) {
            Ok(r) => r,
            Err(e) if !line.terminated => {
                self.problem(
                    Some(n),
                    format!(
                        "the last line is incomplete ({}): a write was interrupted; the {} before it {} whole",
                        e.message,
                        crate::text::plural((n - 1) as usize, "line", "lines"),
                        if n - 1 == 1 { "is" } else { "are" }
                    ),
                    "the next `retrygate ledger append` removes an interrupted tail under its lock; or truncate the file after the last newline",
                );
                return;
            }
            Err(e) => {
                self.problem(Some(n), e.message, &e.fix);
                return;
            }
        };
        self.records += 1;
        self.check_record(&record, prev_sha, last_seq);
        self.last_seq = record.seq;
    }

    fn check_record(&mut self, r: &Record, prev_sha: Option<[u8; 32]>, last_seq: Option<u64>) {
        let n = r.line;
        let computed = pyjson::digest(&r.payload);
        if computed != r.digest {
            self.problem(
                Some(n),
                format!("digest {} does not match the payload (its digest is {computed}): the payload was changed after it was recorded", r.digest),
                FIX_REWRITE,
            );
        }
        match r.version {
            2 => {
                self.saw_v2 = true;
                // seq is the line number; after a gap, the next record is
                // judged against its predecessor rather than reported again.
                let expected_seq = last_seq.map_or(n, |s| s + 1);
                if r.seq != Some(expected_seq) {
                    self.problem(
                        Some(n),
                        format!(
                            "seq is {} where {expected_seq} was expected: a line was removed, inserted or reordered before this one",
                            r.seq.unwrap_or(0)
                        ),
                        FIX_CHAIN,
                    );
                }
                let expected = prev_sha.map(hex::encode);
                let recorded = r.prev.clone().flatten();
                if recorded != expected {
                    let message = match (&recorded, &expected) {
                        (None, Some(_)) => "prev is null, but only line 1 may start the chain".to_string(),
                        (Some(_), None) => {
                            "prev names a previous line, but this is line 1: lines before it were removed"
                                .to_string()
                        }
                        (Some(p), Some(e)) => {
                            format!(
                                "prev {} does not match line {}'s SHA-256 {}",
                                crate::text::short_sha(p),
                                n - 1,
                                crate::text::short_sha(e)
                            )
                        }
                        (None, None) => unreachable!("equal values"),
                    };
                    self.problem(Some(n), message, FIX_CHAIN);
                }
            }
            _ => {
                self.saw_v1 = true;
                if self.saw_v2 {
                    self.problem(
                        Some(n),
                        "a v1 record follows v2 records: the chain cannot cover it",
                        "once a ledger is v2, every later record must be v2; write with `retrygate ledger append` or the hook only",
                    );
                }
            }
        }
        if let Some((last, last_line)) = self.last_ts {
            if r.ts < last {
                self.problem(
                    Some(n),
                    format!(
                        "ts {} is earlier than line {last_line}'s ts {}: records are out of order",
                        pyjson::float_repr(r.ts),
                        pyjson::float_repr(last)
                    ),
                    FIX_CHAIN,
                );
            }
        }
        if self.last_ts.is_none_or(|(last, _)| r.ts >= last) {
            self.last_ts = Some((r.ts, n));
        }
        let named: Vec<String> = r.named_paths().into_iter().map(str::to_string).collect();
        for p in named {
            if let Err(why) = normalize_repo_path(&p) {
                self.problem(
                    Some(n),
                    format!("path \"{p}\": {why}"),
                    "record paths relative to the repository root (the hook does this); a path outside the repository is not part of the pull request",
                );
            }
        }
        if let Some(path) = r.edit_path() {
            if let Ok(norm) = normalize_repo_path(path) {
                if !norm.is_empty() {
                    self.last_edit
                        .insert(norm, LastEdit { line: n, version: r.version, sha256: r.sha256.clone() });
                }
            }
        }
    }

    fn finish(mut self, target: Option<&ChangeTarget>) -> LedgerReport {
        let coverage = target.map(|t| self.coverage(t));
        let format = match (self.saw_v1, self.saw_v2) {
            (true, true) => Some("mixed".to_string()),
            (true, false) => Some("v1".to_string()),
            (false, true) => Some("v2".to_string()),
            (false, false) => None,
        };
        LedgerReport {
            ledger: self.source,
            present: true,
            valid: self.problems.is_empty() && self.omitted == 0,
            format,
            records: self.records,
            lines: self.lines,
            problems: self.problems,
            problems_omitted: self.omitted,
            coverage,
            origin: None,
            looked: Vec::new(),
        }
    }

    fn coverage(&mut self, target: &ChangeTarget) -> Coverage {
        let mut unexplained = Vec::new();
        let mut explained = 0;
        let mut touched: BTreeSet<&str> = BTreeSet::new();
        let fix_unrecorded = "the ledger must record every edit the pull request contains: run the agent with the retrygate hook installed, or record a manual edit with `retrygate ledger append --tool edit --path PATH`";
        let mut found: Vec<(Option<u64>, String, &str)> = Vec::new();
        for f in &target.files {
            touched.insert(&f.path);
            if let Some(old) = &f.old_path {
                touched.insert(old);
            }
            let Some(last) = self.last_edit.get(&f.path) else {
                unexplained.push(f.path.clone());
                found.push((
                    None,
                    format!("{} changed in the pull request, but no ledger record explains it", f.path),
                    fix_unrecorded,
                ));
                continue;
            };
            let recorded = match (&last.version, &last.sha256) {
                (2, Some(s)) => s.clone(),
                _ => {
                    // v1 records carry no content hash: a record is all we can ask for.
                    explained += 1;
                    continue;
                }
            };
            let line = last.line;
            let ok = match (&f.head, &recorded) {
                (HeadContent::Absent, None) => true,
                (HeadContent::Sha256(h), Some(r)) => h == r,
                (HeadContent::Unknown(why), _) => {
                    unexplained.push(f.path.clone());
                    found.push((
                        Some(line),
                        format!("cannot check {} against its last record: {why}", f.path),
                        "make the head content readable (fetch the object) and verify again",
                    ));
                    continue;
                }
                _ => false,
            };
            if ok {
                explained += 1;
            } else {
                unexplained.push(f.path.clone());
                let head = match &f.head {
                    HeadContent::Absent => "deleted".to_string(),
                    HeadContent::Sha256(h) => format!("sha256 {}", crate::text::short_sha(h)),
                    HeadContent::Unknown(_) => unreachable!("handled above"),
                };
                let said = recorded
                    .as_deref()
                    .map_or("deleted".to_string(), |r| format!("sha256 {}", crate::text::short_sha(r)));
                found.push((
                    Some(line),
                    format!("{}: the last record of this file says {said}, but the head has {head}: the file changed after its last recorded edit", f.path),
                    fix_unrecorded,
                ));
            }
        }
        let mut not_landed: Vec<String> =
            self.last_edit.keys().filter(|p| !touched.contains(p.as_str())).cloned().collect();
        not_landed.sort();
        for (line, message, fix) in found {
            self.problem(line, message, fix);
        }
        Coverage {
            base: target.base.clone(),
            head: target.head.clone(),
            changed: target.files.len(),
            explained,
            unexplained,
            not_landed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, target: Option<&ChangeTarget>) -> LedgerReport {
        verify_reader("t.jsonl", text.as_bytes(), target, ReadLimits::default()).unwrap()
    }

    fn v1(ts: f64, tool: &str, payload: &str) -> String {
        let p = pyjson::parse(payload).unwrap();
        format!(
            "{{\"ts\": {}, \"tool\": \"{tool}\", \"payload\": {}, \"digest\": \"{}\"}}\n",
            pyjson::float_repr(ts),
            pyjson::dumps(&p),
            pyjson::digest(&p)
        )
    }

    #[test]
    fn backwards_time_names_both_lines() {
        let text = v1(5.0, "read", "{}") + &v1(4.0, "read", "{}");
        let r = run(&text, None);
        assert!(!r.valid);
        assert_eq!(r.problems[0].line, Some(2));
        assert!(r.problems[0].message.contains("earlier than line 1's ts 5.0"), "{:?}", r.problems);
    }

    #[test]
    fn escaping_paths_are_problems() {
        let text = v1(1.0, "edit_file", r#"{"path": "../outside.py"}"#)
            + &v1(2.0, "search", r#"{"paths": ["/etc"]}"#);
        let r = run(&text, None);
        let msgs: Vec<_> = r.problems.iter().map(|p| (p.line, p.message.as_str())).collect();
        assert!(msgs[0].0 == Some(1) && msgs[0].1.contains("escapes the repository"), "{msgs:?}");
        assert!(msgs[1].0 == Some(2) && msgs[1].1.contains("absolute"), "{msgs:?}");
    }

    #[test]
    fn empty_and_binary_lines_are_named() {
        let mut data = v1(1.0, "read", "{}").into_bytes();
        data.extend_from_slice(b"\n\xff\xfe\x00garbage\n");
        let r = verify_reader("t", &data[..], None, ReadLimits::default()).unwrap();
        assert_eq!(r.problems.len(), 2, "{:?}", r.problems);
        assert!(r.problems[0].message.contains("empty line") && r.problems[0].line == Some(2));
        assert!(r.problems[1].message.contains("not UTF-8") && r.problems[1].line == Some(3));
    }

    #[test]
    fn problems_are_capped_and_counted() {
        let text = "x\n".repeat(MAX_PROBLEMS + 7);
        let r = run(&text, None);
        assert_eq!(r.problems.len(), MAX_PROBLEMS);
        assert_eq!(r.problems_omitted, 7);
        assert!(!r.valid);
    }

    #[test]
    fn coverage_lists_unexplained_and_not_landed_separately() {
        let text =
            v1(1.0, "edit_file", r#"{"path": "a.py"}"#) + &v1(2.0, "edit_file", r#"{"path": "gone.py"}"#);
        let target = ChangeTarget {
            base: "main".into(),
            head: "h".into(),
            files: vec![
                ChangedFile {
                    path: "a.py".into(),
                    old_path: None,
                    head: HeadContent::Sha256("0".repeat(64)),
                },
                ChangedFile { path: "b.py".into(), old_path: None, head: HeadContent::Absent },
            ],
        };
        let r = run(&text, Some(&target));
        let c = r.coverage.as_ref().unwrap();
        assert_eq!(c.unexplained, vec!["b.py"]);
        assert_eq!(c.not_landed, vec!["gone.py"]);
        assert_eq!(c.explained, 1);
        assert!(!r.valid);
        assert!(r.problems[0]
            .message
            .contains("b.py changed in the pull request, but no ledger record explains it"));
    }

    #[test]
    fn an_empty_ledger_without_a_change_is_valid_and_says_so() {
        let r = run("", None);
        assert!(r.valid && r.present);
        assert_eq!((r.records, r.format.as_deref()), (0, None));
    }
}
