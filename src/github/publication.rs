//! What gets published: a [`Publication`] (the verdict and its texts, from
//! whatever computed it) and, for the fork-safe split, the [`VerdictFile`]
//! the read-only job uploads and the publishing job reads back.
//!
//! The GitHub layer never decides anything: the gate (or, until it is
//! wired in, the scan) fills a `Publication`, and [`super::publish`] puts it
//! on the pull request.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::finding::Finding;
use crate::report::{markdown, Report, Verdict};

use super::signoff::SignOff;
use crate::text::short_sha as short;

/// Largest verdict file read back from an artifact. The file is untrusted
/// (it came out of a job that ran the PR's code); 16 MiB is far above any
/// real verdict.
pub const MAX_VERDICT_FILE_BYTES: u64 = 16 << 20;

/// The verdict file's format version.
pub const VERDICT_FILE_VERSION: u32 = 1;

/// A verdict ready to publish.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Publication {
    /// The commit the verdict is about: the check run and status go there.
    pub head_sha: String,
    /// The base it was judged against; the check run records it, so a
    /// verdict for one base branch is never taken for another's.
    #[serde(default)]
    pub base: Option<BaseBinding>,
    pub verdict: Verdict,
    /// One line: the check run's title.
    pub title: String,
    /// The check run's summary and the job summary (Markdown).
    pub summary_markdown: String,
    /// The sticky comment's body, without the marker (Markdown).
    pub comment_markdown: String,
    /// Annotated on the diff through the check run.
    pub findings: Vec<Finding>,
}

impl Publication {
    /// Builds a publication from a scan [`Report`] alone (no ledger or
    /// replay evidence), recording the sign-off it was given: for callers
    /// that judge the scan only, and for tests of the publishing side.
    pub fn from_report(head_sha: &str, report: &Report, sign_off: Option<&SignOff>) -> Publication {
        let mut md = Vec::new();
        // Writing into a Vec cannot fail.
        let _ = markdown::render(report, &mut md);
        let mut summary = String::from_utf8_lossy(&md).into_owned();
        let mut verdict = report.verdict;
        if let Some(s) = sign_off.filter(|s| s.sha == head_sha) {
            if verdict == Verdict::Block {
                verdict = Verdict::Pass;
            }
            summary.push_str(&format!(
                "\n#### Sign-off\n\n{} signed off commit `{}`; a new push voids it.\n",
                markdown::escape_text(&s.by),
                short(&s.sha)
            ));
        }
        let title = title(verdict, report.findings.iter().filter(|f| f.is_blocking()).count(), sign_off);
        Publication {
            head_sha: head_sha.to_string(),
            base: None,
            verdict,
            title,
            comment_markdown: summary.clone(),
            summary_markdown: summary,
            findings: report.findings.clone(),
        }
    }

    /// The fail-closed publication when the verdict could not be computed:
    /// blocking, with the reason and what to do.
    pub fn could_not_decide(head_sha: &str, error: &anyhow::Error) -> Publication {
        let text = format!(
            "### ❌ retrygate: could not decide\n\nThe gate failed before reaching a verdict, so this pull request is blocked until it runs cleanly:\n\n```text\n{}\n```\n\nFix the cause above and re-run the job; a maintainer can also sign off this commit with `/retrygate sign-off {}`.\n",
            format!("{error:#}").replace("```", "'''"),
            short(head_sha)
        );
        Publication {
            head_sha: head_sha.to_string(),
            base: None,
            verdict: Verdict::Block,
            title: "retrygate could not decide (blocked until it can)".to_string(),
            summary_markdown: text.clone(),
            comment_markdown: text,
            findings: Vec::new(),
        }
    }
}

/// The base branch and commit a verdict was computed against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseBinding {
    /// The branch name (`main`).
    pub branch: String,
    pub sha: String,
}

/// The check run's title for a verdict.
pub fn title(verdict: Verdict, blocking: usize, sign_off: Option<&SignOff>) -> String {
    match (verdict, sign_off) {
        (Verdict::Pass, Some(s)) => format!("passing (signed off): by {} for {}", s.by, short(&s.sha)),
        (Verdict::Pass, None) => "passing: no blocking retry regressions".to_string(),
        (Verdict::Block, _) => {
            format!("blocked: {}", crate::report::plural(blocking, "blocking finding", "blocking findings"))
        }
    }
}

/// What the read-only job hands to the publishing job, as an artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerdictFile {
    pub version: u32,
    /// `owner/name` of the base repository.
    pub repository: String,
    pub pr_number: u64,
    pub head_sha: String,
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

    fn blocked() -> Report {
        Report::from_scan(
            vec![Finding::new(Kind::JitterRemoved, "rust/backon-jitter", "src/a.rs", 3)],
            vec![],
        )
    }

    #[test]
    fn a_sign_off_on_the_head_passes_and_is_recorded() {
        let p = Publication::from_report(HEAD, &blocked(), None);
        assert_eq!(p.verdict, Verdict::Block);
        assert_eq!(p.title, "blocked: 1 blocking finding");
        let s = SignOff { sha: HEAD.into(), by: "maintainer".into() };
        let p = Publication::from_report(HEAD, &blocked(), Some(&s));
        assert_eq!(p.verdict, Verdict::Pass);
        assert!(
            p.comment_markdown.contains("maintainer signed off commit `ec26c3e`"),
            "{}",
            p.comment_markdown
        );
        // A sign-off for another commit lifts nothing.
        let old = SignOff { sha: "f95f852bd8fca8fcc58a9a2d6c842781e32a215e".into(), by: "maintainer".into() };
        assert_eq!(Publication::from_report(HEAD, &blocked(), Some(&old)).verdict, Verdict::Block);
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
            publication: Publication::from_report(HEAD, &blocked(), None),
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
