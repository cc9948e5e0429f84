//! The job's own outputs: the job summary (`$GITHUB_STEP_SUMMARY`), the step
//! outputs `verdict` and `findings` (`$GITHUB_OUTPUT`), the optional SARIF
//! file, and workflow-command annotations, which are all a job with a
//! read-only token can still show.

use std::io::Write;
use std::path::Path;

use super::publication::Publication;
use super::text::cut;
use crate::printer::{self, GateVerdict};

/// The runner accepts at most 1 MiB of job summary per step.
pub(crate) const MAX_STEP_SUMMARY_BYTES: usize = 1 << 20;

fn append(path: &Path, text: &str, what: &str) -> anyhow::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| anyhow::anyhow!("cannot open {what} {}: {e}", path.display()))?;
    f.write_all(text.as_bytes()).map_err(|e| anyhow::anyhow!("cannot write {what} {}: {e}", path.display()))
}

/// Appends `markdown` to the job summary file when the runner provides one.
pub(crate) fn write_step_summary(path: Option<&Path>, markdown: &str) -> anyhow::Result<()> {
    match path {
        Some(p) => append(
            p,
            &cut(markdown, MAX_STEP_SUMMARY_BYTES, "\n\n…cut to the runner's 1 MiB job-summary limit.\n"),
            "the job summary ($GITHUB_STEP_SUMMARY)",
        ),
        None => Ok(()),
    }
}

/// Writes the step outputs: `verdict` (`pass`, `block`, or `none` when the
/// event needed no verdict) and `findings` (how many).
pub(crate) fn write_outputs(path: Option<&Path>, verdict: &str, findings: usize) -> anyhow::Result<()> {
    match path {
        Some(p) => append(
            p,
            &format!("verdict={verdict}\nfindings={findings}\n"),
            "the step outputs ($GITHUB_OUTPUT)",
        ),
        None => Ok(()),
    }
}

/// The publication's verdict with its findings, for the printer.
pub(crate) fn as_report(p: &Publication) -> GateVerdict {
    GateVerdict::findings_only(p.verdict, p.findings.clone())
}

/// Writes the SARIF 2.1.0 rendering of the findings to `path`.
pub(crate) fn write_sarif(path: &Path, p: &Publication) -> anyhow::Result<()> {
    let mut out = Vec::new();
    printer::render(&as_report(p), printer::Format::Sarif, &mut out)?;
    std::fs::write(path, out)
        .map_err(|e| anyhow::anyhow!("cannot write the SARIF file {}: {e}", path.display()))
}

/// Workflow commands for every finding plus one `::error` saying why the
/// verdict is only here: the degraded path when nothing could be written.
pub(crate) fn workflow_commands(p: &Publication, why: &str) -> String {
    let mut out = Vec::new();
    let _ = printer::github::render(&as_report(p), &mut out);
    let mut s = String::from_utf8_lossy(&out).into_owned();
    s.push_str(&format!(
        "::error title=retrygate verdict not published::{}\n",
        printer::github::escape_data(&format!("{} ({}); {why}", p.title, p.verdict.as_str()))
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Finding, Kind};
    use crate::printer::Verdict;

    fn publication() -> Publication {
        Publication {
            head_sha: "a".repeat(40),
            base: None,
            verdict: Verdict::Block,
            title: "blocked: 1 blocking finding".into(),
            summary_markdown: "### blocked\n".into(),
            comment_markdown: "### blocked\n".into(),
            findings: vec![
                Finding::new(Kind::JitterRemoved, "rust/x", "src/a.rs", 3).message("jitter removed")
            ],
            undecided: false,
            reasons: vec![],
            signed_off_by: None,
        }
    }

    #[test]
    fn outputs_and_summary_are_appended() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::write(&out, "earlier=1\n").unwrap();
        write_outputs(Some(&out), "block", 3).unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "earlier=1\nverdict=block\nfindings=3\n");
        let sum = dir.path().join("summary.md");
        write_step_summary(Some(&sum), &"x".repeat(MAX_STEP_SUMMARY_BYTES + 10)).unwrap();
        assert!(std::fs::metadata(&sum).unwrap().len() as usize <= MAX_STEP_SUMMARY_BYTES);
        let e = write_outputs(Some(&dir.path().join("no/such/dir")), "pass", 0).unwrap_err();
        assert!(e.to_string().contains("cannot open the step outputs ($GITHUB_OUTPUT)"), "{e}");
    }

    #[test]
    fn degraded_output_has_every_annotation_and_a_failing_line() {
        let s = workflow_commands(&publication(), "the token is read-only");
        assert!(s.contains("::error file=src/a.rs,line=3"), "{s}");
        assert!(s.ends_with("::error title=retrygate verdict not published::blocked: 1 blocking finding (block); the token is read-only\n"), "{s}");
    }
}
