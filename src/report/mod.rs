//! Renderings of a verdict: one [`Reporter`]-style function per format,
//! chosen in one place ([`render`]).
//!
//! All formats render the same [`Report`]; none of them decides anything.

pub mod github;
pub mod json;
pub mod markdown;
pub mod sarif;
pub mod text;

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use crate::finding::{Finding, Note};

/// The outcome the exit code and the check conclusion follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Block,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Block => "block",
        }
    }
}

/// What a scan (and later the full gate) concluded, ready to render.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub verdict: Verdict,
    pub findings: Vec<Finding>,
    pub notes: Vec<Note>,
}

impl Report {
    /// The scan verdict: blocked by any `error` finding or any blocking note
    /// (something could not be analysed, so findings may be missing).
    pub fn from_scan(findings: Vec<Finding>, notes: Vec<Note>) -> Report {
        let blocked = findings.iter().any(Finding::is_blocking) || notes.iter().any(|n| n.blocking);
        Report { verdict: if blocked { Verdict::Block } else { Verdict::Pass }, findings, notes }
    }
}

/// Output formats of `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Markdown,
    Sarif,
    Github,
}

/// Writes `report` to `w` in `format`.
pub fn render(report: &Report, format: Format, w: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Text => text::render(report, w),
        Format::Json => json::render(report, w),
        Format::Markdown => markdown::render(report, w),
        Format::Sarif => sarif::render(report, w),
        Format::Github => github::render(report, w),
    }
}
