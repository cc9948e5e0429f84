//! What gets published: a [`Publication`] (a verdict and its texts, as the
//! printer rendered them) and, for the fork-safe split, the [`VerdictFile`]
//! the read-only job uploads and the publishing job reads back.
//!
//! The GitHub layer never decides anything: the gate decides a
//! [`GateVerdict`], [`Publication::from_verdict`] takes its verdict, title
//! and Markdown as they are, and [`super::publish`] puts them on the pull
//! request.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::decision::{GateVerdict, ReasonCode, Verdict};
use crate::finding::Finding;

/// Largest verdict file read back from an artifact. The file is untrusted
/// (it came out of a job that ran the PR's code); 16 MiB is far above any
/// real verdict.
pub(crate) const MAX_VERDICT_FILE_BYTES: u64 = 16 << 20;

/// The verdict file's format version.
pub(crate) const VERDICT_FILE_VERSION: u32 = 1;

/// A verdict ready to publish.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Publication {
    /// The commit the verdict is about: the check run and status go there.
    pub(crate) head_sha: String,
    /// The base it was judged against; the check run records it, so a
    /// verdict for one base branch is never taken for another's.
    #[serde(default)]
    pub(crate) base: Option<BaseBinding>,
    /// Pass or block: the check run's conclusion.
    pub verdict: Verdict,
    /// One line: the check run's title.
    pub title: String,
    /// The check run's summary and the job summary (Markdown).
    pub summary_markdown: String,
    /// The sticky comment's body, without the marker (Markdown).
    pub comment_markdown: String,
    /// Annotated on the diff through the check run.
    pub findings: Vec<Finding>,
    /// The gate could not decide (an error, a panic): blocking, and never
    /// lifted by anything, a sign-off or a merge queue's rule included.
    #[serde(default)]
    pub(crate) undecided: bool,
    /// Why it blocks (or, under an accepted sign-off, what would have).
    #[serde(default)]
    pub(crate) reasons: Vec<ReasonCode>,
    /// Who signed off this head, when an accepted sign-off made it pass.
    #[serde(default)]
    pub signed_off_by: Option<String>,
}

impl Publication {
    /// The publication of a decided verdict: its verdict and findings as
    /// they are, the printer's check-run title, and `markdown` (the
    /// printer's comment for it) as the summary and the comment.
    pub fn from_verdict(
        head_sha: &str,
        base: Option<BaseBinding>,
        v: &GateVerdict,
        markdown: String,
    ) -> Publication {
        Publication {
            head_sha: head_sha.to_string(),
            base,
            verdict: v.verdict,
            title: crate::printer::check_title(v),
            summary_markdown: markdown.clone(),
            comment_markdown: markdown,
            findings: v.findings.clone(),
            undecided: false,
            reasons: v.reasons.iter().map(|r| r.code).collect(),
            signed_off_by: v
                .accepted_sign_off()
                .map(|s| s.by.clone().unwrap_or_else(|| "a maintainer".to_string())),
        }
    }

    /// The fail-closed publication when the verdict could not be computed:
    /// blocking, with the reason and what to do.
    pub fn could_not_decide(head_sha: &str, error: &anyhow::Error) -> Publication {
        let text = crate::printer::markdown::could_not_decide(&format!("{error:#}"), head_sha);
        Publication {
            head_sha: head_sha.to_string(),
            base: None,
            verdict: Verdict::Block,
            title: crate::printer::COULD_NOT_DECIDE_TITLE.to_string(),
            summary_markdown: text.clone(),
            comment_markdown: text,
            findings: Vec::new(),
            undecided: true,
            reasons: Vec::new(),
            signed_off_by: None,
        }
    }
}

/// The base branch and commit a verdict was computed against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseBinding {
    /// The branch name (`main`).
    pub branch: String,
    /// The commit.
    pub sha: String,
}

/// What the read-only job hands to the publishing job, as an artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerdictFile {
    /// The format version ([`VERDICT_FILE_VERSION`]); others are refused.
    pub version: u32,
    /// `owner/name` of the base repository.
    pub repository: String,
    /// The pull request's number.
    pub pr_number: u64,
    /// The head commit that was judged.
    pub head_sha: String,
    /// What to publish.
    pub publication: Publication,
}

impl VerdictFile {
    /// Writes the file (creating its directory).
    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                anyhow::anyhow!("cannot create {}: {e}; check the verdict-file path", dir.display())
            })?;
        }
        let json = serde_json::to_string_pretty(self)?;
        std::fs::write(path, json)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}; check the verdict-file path", path.display()))
    }

    /// Reads and checks a verdict file: size, shape, version, and that the
    /// publication is about the head the file names.
    pub fn read(path: &Path) -> anyhow::Result<VerdictFile> {
        let shown = path.display();
        let text = match crate::bounded::read_regular_string(path, MAX_VERDICT_FILE_BYTES) {
            Ok(t) => t,
            Err(e) if e.is_not_found() => anyhow::bail!("{e}; download the verdict artifact of the pull_request run before publishing (examples/workflows/retrygate-publish.yml)"),
            Err(e @ crate::bounded::BoundedReadError::TooLarge { .. }) => anyhow::bail!("{e}; a verdict file this large was not written by retrygate"),
            Err(e) => anyhow::bail!("{e}"),
        };
        let file: VerdictFile = serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!("{shown}:{}: not a retrygate verdict file ({e}); it must come from `retrygate github --mode compute`", e.line())
        })?;
        if file.version != VERDICT_FILE_VERSION {
            anyhow::bail!(
                "{shown}: verdict file version {} is not {VERDICT_FILE_VERSION}; use the same retrygate version in both jobs",
                file.version
            );
        }
        if file.publication.head_sha != file.head_sha {
            anyhow::bail!(
                "{shown}: the verdict is about {} but the file names head {}; it was altered, refusing to publish it",
                file.publication.head_sha,
                file.head_sha
            );
        }
        Ok(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Finding, Kind};

    const HEAD: &str = "ec26c3e57ca3a959ca5aad62de7213c562f8c821";

    /// A scan's verdict on one blocking finding, as the printer publishes it.
    fn blocked() -> Publication {
        let v = GateVerdict::from_scan(
            vec![Finding::new(Kind::JitterRemoved, "rust/backon-jitter", "src/a.rs", 3)],
            vec![],
        );
        let md = crate::printer::markdown::render_comment(&v, &Default::default());
        Publication::from_verdict(HEAD, None, &v, md)
    }

    #[test]
    fn a_publication_carries_the_verdict_and_the_printers_title_unchanged() {
        let p = blocked();
        assert_eq!(p.verdict, Verdict::Block);
        assert_eq!(p.title, "blocked: blocking-findings");
        assert!(p.comment_markdown.starts_with("### ❌ retrygate: blocked\n"), "{}", p.comment_markdown);
        assert_eq!(p.summary_markdown, p.comment_markdown);
        assert_eq!(p.findings.len(), 1);
    }

    #[test]
    fn verdict_files_round_trip_and_bad_ones_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out/verdict.json");
        let file = VerdictFile {
            version: VERDICT_FILE_VERSION,
            repository: "o/r".into(),
            pr_number: 2,
            head_sha: HEAD.into(),
            publication: blocked(),
        };
        file.write(&path).unwrap();
        assert_eq!(VerdictFile::read(&path).unwrap(), file);

        let mut altered = file.clone();
        altered.head_sha = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e".into();
        altered.write(&path).unwrap();
        let e = VerdictFile::read(&path).unwrap_err();
        assert!(e.to_string().contains("it was altered, refusing to publish it"), "{e}");

        std::fs::write(&path, "{\"version\": 1}").unwrap();
        let e = VerdictFile::read(&path).unwrap_err();
        assert!(e.to_string().contains(":1: not a retrygate verdict file (missing field"), "{e}");

        let e = VerdictFile::read(&dir.path().join("absent.json")).unwrap_err();
        assert!(e.to_string().contains("download the verdict artifact"), "{e}");
    }
}
