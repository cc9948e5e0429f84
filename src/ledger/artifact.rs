//! The ledger inside a GitHub Actions artifact: where a ledger came from,
//! and reading it out of the artifact's zip without extracting anything.
//!
//! Agents that run inside Actions (the Claude Code Action, the Copilot
//! coding agent, a team's own agent job) upload their ledger as an artifact
//! instead of committing it. The gate gets the zip's bytes (downloaded by
//! `src/github/artifact.rs`, or `--ledger-artifact ZIP` locally) and calls
//! [`verify_zip`], which:
//!
//! - refuses a zip with more than [`MAX_ENTRIES`] entries (counted from the
//!   end-of-central-directory record, before the archive is parsed);
//! - refuses the whole artifact when any entry is absolute, climbs out with
//!   `..`, or is a symbolic link: nothing is ever written to disk, but an
//!   artifact built that way is not one an agent's upload step makes;
//! - picks the entry named `ledger.path` (else the only `*.jsonl` entry);
//! - streams that one entry, inflated in memory, into the same verifier a
//!   committed ledger goes through, whose own size limit bounds a zip bomb.
//!
//! A refusal is an [`ArtifactRefusal`]: one line that says what is wrong and
//! what to do, which the gate turns into a blocking reason.

use std::io::{BufReader, Cursor};

use serde::{Deserialize, Serialize};

use super::lines::ReadLimits;
use super::verify::{verify_reader, ChangeTarget, LedgerReport};

/// Largest artifact zip read. A real ledger is a few MB of JSON, which
/// deflate shrinks several times; the ledger itself is bounded again when
/// read ([`ReadLimits::max_ledger_bytes`]).
pub(crate) const MAX_ZIP_BYTES: u64 = 16 << 20;

/// Most entries an artifact may hold. An upload of the ledger holds one;
/// a few logs beside it are fine; thousands are not a ledger artifact.
pub(crate) const MAX_ENTRIES: usize = 100;

/// Where the gate found the ledger it verified (`origin` in the JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub(crate) enum LedgerOrigin {
    /// `ledger.path` committed at the head commit.
    FileAtHead { commit: String, path: String },
    /// An Actions artifact of a workflow run on the head commit.
    Artifact {
        #[serde(flatten)]
        artifact: ArtifactRef,
        /// The zip entry the ledger was read from (`null` when the zip was refused).
        entry: Option<String>,
    },
    /// A zip given with `--ledger-artifact ZIP`.
    ArtifactFile { zip: String, entry: Option<String> },
    /// A file: `--ledger PATH`, or `ledger.path` in the working tree.
    File { path: String },
}

impl LedgerOrigin {
    /// One line for people: where the ledger came from, with a link when
    /// there is one.
    pub(crate) fn describe(&self) -> String {
        match self {
            LedgerOrigin::FileAtHead { commit, path } => {
                format!("`{path}` committed at {}", crate::text::short_sha(commit))
            }
            LedgerOrigin::Artifact { artifact, entry } => match entry {
                Some(e) => format!("`{e}` in {}", artifact.describe()),
                None => artifact.describe(),
            },
            LedgerOrigin::ArtifactFile { zip, entry } => match entry {
                Some(e) => format!("`{e}` in the artifact zip {zip}"),
                None => format!("the artifact zip {zip}"),
            },
            LedgerOrigin::File { path } => format!("the file {path}"),
        }
    }
}

/// One Actions artifact, as the artifacts API describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ArtifactRef {
    /// The artifact's id.
    pub(crate) artifact_id: u64,
    /// Its name (`ledger.artifact`).
    pub(crate) name: String,
    /// The workflow run that uploaded it.
    pub(crate) run_id: u64,
    /// The commit that run ran on.
    pub(crate) head_sha: String,
    pub(crate) created_at: Option<String>,
    pub(crate) expires_at: Option<String>,
    /// The run's page on GitHub (`{server}/{owner}/{repo}/actions/runs/{run_id}`).
    pub(crate) run_url: Option<String>,
}

impl ArtifactRef {
    /// `artifact 42 "tool-ledger" of workflow run 7 (https://…/runs/7)`.
    pub(crate) fn describe(&self) -> String {
        let link = self.run_url.as_deref().map(|u| format!(" ({u})")).unwrap_or_default();
        format!("artifact {} `{}` of workflow run {}{link}", self.artifact_id, self.name, self.run_id)
    }
}

/// One artifact of the list the gate chooses from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedArtifact {
    pub(crate) artifact: ArtifactRef,
    pub(crate) expired: bool,
    pub(crate) size_in_bytes: u64,
}

/// The repository's Actions artifacts, as the gate sees them;
/// `src/github/artifact.rs` implements it against the GitHub API. The gate
/// owns no network code, and decides itself which artifact to take.
pub trait ArtifactSource: Send + Sync + std::fmt::Debug {
    /// Where it looks, for the list of places looked (e.g. "the Actions
    /// artifacts of Codertocat/Hello-World").
    fn describe(&self) -> String;
    /// Every artifact named `name`, newest first (`created_at`, then id).
    /// `Ok(Err(why))`: the list cannot be read here (the token may not), a
    /// place looked in vain; `Err`: the API could not be asked (could not
    /// decide).
    fn list(&self, name: &str) -> anyhow::Result<Result<Vec<ListedArtifact>, String>>;
    /// Downloads the artifact's zip, bounded by [`MAX_ZIP_BYTES`].
    /// `Ok(Err(why))`: refused (expired, too large), one line.
    fn download(&self, artifact: &ListedArtifact) -> anyhow::Result<Result<Vec<u8>, String>>;
}

/// Why an artifact zip was refused before or while its ledger was read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub(crate) struct ArtifactRefusal {
    pub(crate) message: String,
    pub(crate) fix: String,
}

impl ArtifactRefusal {
    fn new(message: impl Into<String>, fix: &str) -> ArtifactRefusal {
        ArtifactRefusal { message: message.into(), fix: fix.to_string() }
    }
}

const FIX_UPLOAD: &str = "upload the ledger file alone with actions/upload-artifact (`path: .tool_ledger.jsonl`, see docs/ledger.md); an artifact is evidence only when it holds the ledger and nothing odd";

/// Reads the ledger out of the artifact zip `zip` (named `shown` in
/// messages) and verifies it against `target`, exactly as a committed
/// ledger is verified. `ledger_path` is `ledger.path` of the config.
///
/// Returns the report and the entry it was read from.
pub(crate) fn verify_zip(
    zip: &[u8],
    shown: &str,
    ledger_path: &str,
    target: Option<&ChangeTarget>,
    limits: ReadLimits,
) -> Result<(LedgerReport, String), ArtifactRefusal> {
    if zip.len() as u64 > MAX_ZIP_BYTES {
        return Err(ArtifactRefusal::new(
            format!(
                "{shown} is {} bytes, over the {} MiB an artifact zip may have",
                zip.len(),
                MAX_ZIP_BYTES >> 20
            ),
            FIX_UPLOAD,
        ));
    }
    let count =
        entry_count(zip).map_err(|why| ArtifactRefusal::new(format!("{shown}: {why}"), FIX_UPLOAD))?;
    if count > MAX_ENTRIES {
        return Err(ArtifactRefusal::new(
            format!("{shown} holds {count} entries, more than the {MAX_ENTRIES} a ledger artifact may hold"),
            FIX_UPLOAD,
        ));
    }
    let mut archive = zip::ZipArchive::new(Cursor::new(zip)).map_err(|e| {
        ArtifactRefusal::new(format!("{shown} is not a readable zip archive ({e})"), FIX_UPLOAD)
    })?;
    if archive.len() > MAX_ENTRIES {
        return Err(ArtifactRefusal::new(
            format!(
                "{shown} holds {} entries, more than the {MAX_ENTRIES} a ledger artifact may hold",
                archive.len()
            ),
            FIX_UPLOAD,
        ));
    }
    // Every entry is judged by its metadata alone (nothing is inflated).
    let mut files: Vec<(usize, String)> = Vec::new();
    for i in 0..archive.len() {
        let entry = archive.by_index_raw(i).map_err(|e| {
            ArtifactRefusal::new(format!("{shown}: entry {i} cannot be read ({e})"), FIX_UPLOAD)
        })?;
        let name = entry.name().to_string();
        if let Err(why) = safe_entry_name(&name) {
            return Err(ArtifactRefusal::new(
                format!("{shown}: entry `{}` {why}; the artifact is refused", printable(&name)),
                FIX_UPLOAD,
            ));
        }
        if entry.is_symlink() {
            return Err(ArtifactRefusal::new(
                format!("{shown}: entry `{}` is a symbolic link; the artifact is refused", printable(&name)),
                FIX_UPLOAD,
            ));
        }
        if entry.is_file() {
            files.push((i, name));
        }
    }
    let wanted = ledger_path.trim_start_matches("./");
    let chosen = match files.iter().find(|(_, n)| n.trim_start_matches("./") == wanted) {
        Some(hit) => hit.clone(),
        None => {
            let jsonl: Vec<&(usize, String)> = files.iter().filter(|(_, n)| n.ends_with(".jsonl")).collect();
            match jsonl.as_slice() {
                [one] => (*one).clone(),
                [] => {
                    let names: Vec<String> =
                        files.iter().take(10).map(|(_, n)| format!("`{}`", printable(n))).collect();
                    return Err(ArtifactRefusal::new(
                        format!(
                            "{shown} holds no `{wanted}` and no `*.jsonl` file (entries: {})",
                            if names.is_empty() { "none".to_string() } else { names.join(", ") }
                        ),
                        FIX_UPLOAD,
                    ));
                }
                many => {
                    let names: Vec<String> =
                        many.iter().take(10).map(|(_, n)| format!("`{}`", printable(n))).collect();
                    return Err(ArtifactRefusal::new(
                        format!(
                            "{shown} holds no `{wanted}` but {} `*.jsonl` files ({}); which one is the ledger is not clear",
                            many.len(),
                            names.join(", ")
                        ),
                        "name the ledger file as ledger.path says, or upload it alone",
                    ));
                }
            }
        }
    };
    let (index, entry_name) = chosen;
    let file = archive.by_index(index).map_err(|e| {
        ArtifactRefusal::new(
            format!("{shown}: entry `{}` cannot be read ({e})", printable(&entry_name)),
            "an artifact zip uses deflate or no compression (actions/upload-artifact does); re-upload it",
        )
    })?;
    let source = format!("{shown}!{entry_name}");
    // The line reader stops at the ledger size limit, so an entry that
    // inflates to gigabytes is cut short and reported, never held.
    let report = verify_reader(&source, BufReader::with_capacity(1 << 16, file), target, limits).map_err(|e| {
        ArtifactRefusal::new(
            format!("{shown}: entry `{}` is damaged ({e})", printable(&entry_name)),
            "download the artifact again; if it stays damaged, re-run the agent's workflow to upload a new one",
        )
    })?;
    Ok((report, entry_name))
}

/// Why `name` may not be an entry of a ledger artifact, if it may not.
fn safe_entry_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("has an empty name");
    }
    if name.contains('\0') {
        return Err("has a NUL byte in its name");
    }
    let unified = name.replace('\\', "/");
    let bytes = unified.as_bytes();
    let drive = bytes.len() >= 2 && bytes[1] == b':' && bytes[0].is_ascii_alphabetic();
    if unified.starts_with('/') || drive {
        return Err("has an absolute name");
    }
    if unified.split('/').any(|part| part == "..") {
        return Err("climbs out of the archive with `..` (zip-slip)");
    }
    Ok(())
}

/// The entry count of the end-of-central-directory record: read before the
/// archive is parsed, so a zip announcing a million entries costs nothing.
fn entry_count(zip: &[u8]) -> Result<usize, String> {
    const EOCD: &[u8] = b"PK\x05\x06";
    const EOCD_LEN: usize = 22;
    // The record sits at the end, after a comment of at most 65,535 bytes.
    let from = zip.len().saturating_sub(EOCD_LEN + u16::MAX as usize);
    let at = zip[from..]
        .windows(EOCD.len())
        .rposition(|w| w == EOCD)
        .map(|p| from + p)
        .filter(|&p| p + EOCD_LEN <= zip.len())
        .ok_or_else(|| "not a zip archive (no end-of-central-directory record)".to_string())?;
    let total = u16::from_le_bytes([zip[at + 10], zip[at + 11]]);
    if total == u16::MAX {
        // Zip64: the real count is elsewhere, and is far past any ledger artifact.
        return Err(format!("a Zip64 archive with 65,535 or more entries; a ledger artifact holds a handful (limit {MAX_ENTRIES})"));
    }
    Ok(usize::from(total))
}

/// `name` with control characters shown as `?`, for one-line messages.
fn printable(name: &str) -> String {
    name.chars().take(200).map(|c| if c.is_control() { '?' } else { c }).collect()
}

/// Reads a local artifact zip (`--ledger-artifact ZIP`), bounded: a file
/// over [`MAX_ZIP_BYTES`] is refused, not read.
pub(crate) fn read_zip_file(
    path: &std::path::Path,
) -> Result<Result<Vec<u8>, ArtifactRefusal>, crate::bounded::BoundedReadError> {
    match crate::bounded::read_regular(path, MAX_ZIP_BYTES) {
        Ok(bytes) => Ok(Ok(bytes)),
        Err(crate::bounded::BoundedReadError::TooLarge { .. }) => Ok(Err(ArtifactRefusal::new(
            format!(
                "the artifact zip {} is over the {} MiB an artifact zip may have",
                path.display(),
                MAX_ZIP_BYTES >> 20
            ),
            FIX_UPLOAD,
        ))),
        Err(e) => Err(e),
    }
}

/// Builds a zip in memory from `(name, bytes)` entries, deflated; for
/// `retrygate demo` and tests, which play the agent's upload step.
pub fn zip_entries(entries: &[(&str, &[u8])]) -> zip::result::ZipResult<Vec<u8>> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in entries {
        w.start_file(*name, opts)?;
        std::io::Write::write_all(&mut w, bytes)?;
    }
    Ok(w.finish()?.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"ts": 1764410001.625, "tool": "read_file", "payload": {"path": "clients/checkout.py"}, "digest": "b408f563a785e5af"}"#;

    fn ledger() -> Vec<u8> {
        format!("{LINE}\n").into_bytes()
    }

    fn verify(zip: &[u8]) -> Result<(LedgerReport, String), ArtifactRefusal> {
        verify_zip(zip, "tool-ledger.zip", ".tool_ledger.jsonl", None, ReadLimits::default())
    }

    #[test]
    fn the_entry_named_ledger_path_is_read_and_verified() {
        let zip = zip_entries(&[("notes.jsonl", b"junk\n"), (".tool_ledger.jsonl", &ledger())]).unwrap();
        let (report, entry) = verify(&zip).unwrap();
        assert_eq!(entry, ".tool_ledger.jsonl");
        assert!(report.valid && report.records == 1, "{report:?}");
        assert_eq!(report.ledger, "tool-ledger.zip!.tool_ledger.jsonl");
    }

    #[test]
    fn the_single_jsonl_is_taken_when_ledger_path_is_absent() {
        let zip = zip_entries(&[("session.jsonl", &ledger()), ("README.txt", b"hi")]).unwrap();
        assert_eq!(verify(&zip).unwrap().1, "session.jsonl");
    }

    #[test]
    fn two_jsonl_files_and_none_are_refused_with_the_entries_named() {
        let two = zip_entries(&[("a.jsonl", &ledger()), ("b.jsonl", &ledger())]).unwrap();
        let e = verify(&two).unwrap_err();
        assert!(e.message.contains("2 `*.jsonl` files (`a.jsonl`, `b.jsonl`)"), "{e}");
        let none = zip_entries(&[("log.txt", b"x")]).unwrap();
        let e = verify(&none).unwrap_err();
        assert!(
            e.message.contains("no `.tool_ledger.jsonl` and no `*.jsonl` file (entries: `log.txt`)"),
            "{e}"
        );
    }

    #[test]
    fn a_damaged_ledger_inside_is_a_report_not_a_pass() {
        let zip = zip_entries(&[(".tool_ledger.jsonl", b"{not json}\n")]).unwrap();
        let (report, _) = verify(&zip).unwrap();
        assert!(!report.valid && report.problems[0].line == Some(1), "{report:?}");
    }

    #[test]
    fn zip_slip_absolute_and_backslash_names_are_refused() {
        for (name, why) in [
            ("../.tool_ledger.jsonl", "climbs out of the archive"),
            ("logs/../../x.jsonl", "climbs out of the archive"),
            ("..\\evil.jsonl", "climbs out of the archive"),
            ("/etc/cron.d/x", "has an absolute name"),
            ("C:/x.jsonl", "has an absolute name"),
        ] {
            let zip = zip_entries(&[(".tool_ledger.jsonl", &ledger()), (name, b"x")]).unwrap();
            let e = verify(&zip).unwrap_err();
            assert!(e.message.contains(why) && e.message.contains("the artifact is refused"), "{name}: {e}");
        }
    }

    #[test]
    fn a_symbolic_link_entry_is_refused() {
        let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default();
        w.add_symlink(".tool_ledger.jsonl", "/etc/passwd", opts).unwrap();
        let zip = w.finish().unwrap().into_inner();
        let e = verify(&zip).unwrap_err();
        assert!(e.message.contains("entry `.tool_ledger.jsonl` is a symbolic link"), "{e}");
    }

    #[test]
    fn too_many_entries_are_refused_before_parsing() {
        let names: Vec<String> = (0..=MAX_ENTRIES).map(|i| format!("f{i}.txt")).collect();
        let entries: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b""[..])).collect();
        let zip = zip_entries(&entries).unwrap();
        assert_eq!(entry_count(&zip).unwrap(), MAX_ENTRIES + 1);
        let e = verify(&zip).unwrap_err();
        assert!(e.message.contains("holds 101 entries, more than the 100"), "{e}");
    }

    #[test]
    fn not_a_zip_and_an_oversized_zip_are_refused() {
        let e = verify(b"this is not a zip").unwrap_err();
        assert!(e.message.contains("not a zip archive"), "{e}");
        let big = vec![0u8; MAX_ZIP_BYTES as usize + 1];
        let e = verify(&big).unwrap_err();
        assert!(e.message.contains("over the 16 MiB"), "{e}");
    }

    #[test]
    fn an_entry_that_inflates_past_the_ledger_limit_is_cut_short() {
        let huge = vec![b'a'; 3 << 20];
        let zip = zip_entries(&[(".tool_ledger.jsonl", &huge)]).unwrap();
        assert!(zip.len() < 64 << 10, "deflate shrinks a run of one byte");
        let limits = ReadLimits { max_line_bytes: 1 << 10, max_ledger_bytes: 1 << 20 };
        let (report, _) = verify_zip(&zip, "z", ".tool_ledger.jsonl", None, limits).unwrap();
        assert!(!report.valid);
        assert!(
            report.problems.iter().any(|p| p.message.contains("larger than the 1 MiB limit")),
            "{report:?}"
        );
    }

    #[test]
    fn a_corrupted_entry_is_refused_as_damaged() {
        let mut zip = zip_entries(&[(".tool_ledger.jsonl", &ledger().repeat(50))]).unwrap();
        // Flip a byte in the compressed data (after the 30-byte local header
        // and the 18-byte name).
        zip[60] ^= 0xff;
        let out = verify(&zip);
        let e = out.expect_err("a flipped byte never verifies");
        assert!(e.message.contains("is damaged"), "{e}");
    }
}
