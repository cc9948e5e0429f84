//! The SARIF 2.1.0 rendering, for GitHub code scanning and any other SARIF
//! viewer.
//!
//! One run, tool `retrygate`. Each finding kind present becomes one
//! `reportingDescriptor` whose id is the kind's id and whose descriptions
//! and help are the kind's documentation ([`Kind::doc`]): one SARIF rule per
//! kind, so a code-scanning alert's rule always says what the alert is. The
//! check that found it (`rust/backon-jitter`, a rule pack's id) is in the
//! result's properties as `rule`, and its descriptor's tags name the check
//! families. Each finding becomes a `result` with
//! a repository-relative location (`uriBaseId: %SRCROOT%`) and a
//! `partialFingerprints` entry that does not contain the line, so an alert
//! survives code moving up or down. Notes go in the run's invocation as tool
//! execution notifications; a blocking note (something could not be
//! analysed) also sets `executionSuccessful: false`.
//!
//! GitHub's requirements (docs "SARIF support for code scanning"): `ruleId`,
//! `message.text`, a location with `artifactLocation.uri` and
//! `region.startLine` on every result; `shortDescription`, `fullDescription`
//! and `help` on every rule; `results` present even when empty; the same
//! `ruleId` and path across runs, so fingerprints stay stable.
//!
//! The types below are the subset of the 2.1.0 object model retrygate writes,
//! named as in the specification; `tests/it/report.rs` (module `sarif`) checks the output
//! against the official JSON schema.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::GateVerdict;
use crate::finding::{Finding, Kind, Note, Severity};
/// A repository-relative path as a relative URI reference (one encoder for
/// every format, in [`crate::text`]).
pub use crate::http::encode_path as path_to_uri;

/// The schema the output conforms to (OASIS, errata 01).
pub(crate) const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The base id results' paths are relative to: the repository root.
pub(crate) const SRCROOT: &str = "%SRCROOT%";

/// The key under which the line-independent fingerprint is published.
pub(crate) const FINGERPRINT_KEY: &str = "retrygate/v1";

/// Where to read about the tool: the package's repository when Cargo.toml
/// names one.
pub(crate) fn information_uri() -> &'static str {
    match env!("CARGO_PKG_REPOSITORY") {
        "" => "https://github.com/retrygate/retrygate",
        uri => uri,
    }
}

/// The whole file: `sarifLog`.
#[derive(Debug, Serialize)]
pub struct SarifLog {
    #[serde(rename = "$schema")]
    pub(crate) schema: &'static str,
    pub(crate) version: &'static str,
    pub(crate) runs: Vec<Run>,
}

/// One analysis run; retrygate writes exactly one.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Run {
    pub(crate) tool: Tool,
    pub(crate) invocations: Vec<Invocation>,
    pub(crate) original_uri_base_ids: BTreeMap<&'static str, ArtifactLocationBase>,
    pub(crate) results: Vec<SarifResult>,
}

/// The tool that produced the run.
#[derive(Debug, Serialize)]
pub(crate) struct Tool {
    pub(crate) driver: ToolComponent,
}

/// `tool.driver`: retrygate itself and its rules.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolComponent {
    pub(crate) name: &'static str,
    pub(crate) version: &'static str,
    pub(crate) semantic_version: &'static str,
    pub(crate) information_uri: &'static str,
    pub(crate) rules: Vec<ReportingDescriptor>,
}

/// Rule metadata: what GitHub shows at the top of an alert.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReportingDescriptor {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) short_description: Text,
    pub(crate) full_description: Text,
    pub(crate) help: Help,
    pub(crate) default_configuration: Configuration,
    pub(crate) properties: RuleProperties,
}

/// A `message` or `multiformatMessageString` with plain text only.
#[derive(Debug, Serialize)]
pub(crate) struct Text {
    pub(crate) text: String,
}

/// A rule's help, as plain text and as Markdown.
#[derive(Debug, Serialize)]
pub(crate) struct Help {
    pub(crate) text: String,
    pub(crate) markdown: String,
}

/// `defaultConfiguration`: the level a rule reports at unless configured.
#[derive(Debug, Serialize)]
pub(crate) struct Configuration {
    pub(crate) level: &'static str,
}

/// The rule's property bag.
#[derive(Debug, Serialize)]
pub(crate) struct RuleProperties {
    pub(crate) tags: Vec<String>,
    /// GitHub sorts and filters non-security alerts by this.
    #[serde(rename = "problem.severity")]
    pub(crate) problem_severity: &'static str,
}

/// How the run went: notes become notifications here.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Invocation {
    pub(crate) execution_successful: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) tool_execution_notifications: Vec<Notification>,
}

/// A tool execution notification: one retrygate note.
#[derive(Debug, Serialize)]
pub(crate) struct Notification {
    pub(crate) level: &'static str,
    pub(crate) message: Text,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) locations: Vec<Location>,
}

/// An entry of `originalUriBaseIds`: says what `%SRCROOT%` stands for.
#[derive(Debug, Serialize)]
pub(crate) struct ArtifactLocationBase {
    pub(crate) description: Text,
}

/// One finding.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SarifResult {
    pub(crate) rule_id: String,
    pub(crate) rule_index: usize,
    pub(crate) level: &'static str,
    pub(crate) message: Text,
    pub(crate) locations: Vec<Location>,
    pub(crate) partial_fingerprints: BTreeMap<&'static str, String>,
    pub(crate) properties: ResultProperties,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) fixes: Vec<SarifFix>,
}

/// A proposed fix (SARIF 2.1.0 §3.55): one change to the finding's file.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SarifFix {
    pub(crate) description: Text,
    pub(crate) artifact_changes: Vec<ArtifactChange>,
}

/// `artifactChange`: the file and its replacements.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ArtifactChange {
    pub(crate) artifact_location: ArtifactLocation,
    pub(crate) replacements: Vec<Replacement>,
}

/// `replacement`: a region without columns spans whole lines, the last one
/// up to (not including) its newline (§3.30.5), which is what
/// [`crate::finding::Fix`] replaces.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Replacement {
    pub(crate) deleted_region: Region,
    pub(crate) inserted_content: Text,
}

/// The result's property bag: the finding kind, the check that found it,
/// and what base and head had.
#[derive(Debug, Serialize)]
pub(crate) struct ResultProperties {
    pub(crate) kind: Kind,
    /// The check or rule that reported it (`rust/backon-jitter`).
    pub(crate) rule: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) base: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) head: Option<serde_json::Value>,
}

/// A place in the repository.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Location {
    pub(crate) physical_location: PhysicalLocation,
}

/// A file and, for results, a line range.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PhysicalLocation {
    pub(crate) artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) region: Option<Region>,
}

/// A repository-relative URI.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ArtifactLocation {
    pub(crate) uri: String,
    pub(crate) uri_base_id: &'static str,
}

/// 1-based, inclusive line range.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Region {
    pub(crate) start_line: u32,
    pub(crate) end_line: u32,
}

/// Writes `report` as a SARIF 2.1.0 log (pretty-printed JSON).
pub(crate) fn render(report: &GateVerdict, w: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, &to_sarif(report))?;
    writeln!(w)
}

/// GitHub rejects an upload whose run holds more results than this (docs,
/// "SARIF support for code scanning", upload limits).
pub(crate) const MAX_RESULTS: usize = 25_000;

/// Builds the SARIF log for `report`.
pub(crate) fn to_sarif(report: &GateVerdict) -> SarifLog {
    to_sarif_with_limit(report, MAX_RESULTS)
}

/// Builds the SARIF log with at most `max_results` results. When there are
/// more, the most severe are kept and a notification says how many were left
/// out and where to find them: an upload that is rejected whole would hide
/// every finding.
pub fn to_sarif_with_limit(report: &GateVerdict, max_results: usize) -> SarifLog {
    let mut findings = super::sorted_findings(&report.findings);
    let omitted = findings.len().saturating_sub(max_results);
    if omitted > 0 {
        // Stable: within a severity the reporting order is kept.
        findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
        findings.truncate(max_results);
        findings.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    }
    let mut rules: Vec<ReportingDescriptor> = Vec::new();
    let mut rule_index: BTreeMap<Kind, usize> = BTreeMap::new();
    let mut seen: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    let mut results = Vec::with_capacity(findings.len());
    for f in findings {
        let index = *rule_index.entry(f.kind).or_insert_with(|| {
            rules.push(descriptor(f.kind));
            rules.len() - 1
        });
        if let Some((family, _)) = f.rule.split_once('/') {
            let tags = &mut rules[index].properties.tags;
            if !tags.iter().any(|t| t == family) {
                tags.push(family.to_string());
                tags.sort();
            }
        }
        // Identical findings in one file are told apart by their order, which
        // moving code does not change.
        let occurrence = seen.entry((f.rule.clone(), f.path.clone(), f.message.clone())).or_insert(0);
        *occurrence += 1;
        results.push(result(f, index, *occurrence));
    }
    let mut notifications: Vec<Notification> = report.notes.iter().map(notification).collect();
    if omitted > 0 {
        notifications.push(Notification {
            level: "warning",
            message: Text {
                text: format!(
                    "{omitted} less severe findings were left out: a SARIF upload holds at most {max_results} results; `retrygate scan --format json` lists them all"
                ),
            },
            locations: Vec::new(),
        });
    }
    let invocation = Invocation {
        execution_successful: !report.notes.iter().any(|n| n.blocking),
        tool_execution_notifications: notifications,
    };
    let mut bases = BTreeMap::new();
    bases.insert(
        SRCROOT,
        ArtifactLocationBase {
            description: Text { text: "The root of the repository that was scanned".into() },
        },
    );
    SarifLog {
        schema: SCHEMA_URI,
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool {
                driver: ToolComponent {
                    name: "retrygate",
                    version: env!("CARGO_PKG_VERSION"),
                    semantic_version: env!("CARGO_PKG_VERSION"),
                    information_uri: information_uri(),
                    rules,
                },
            },
            invocations: vec![invocation],
            original_uri_base_ids: bases,
            results,
        }],
    }
}

/// SARIF's `level` for a severity.
pub(crate) fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

fn descriptor(kind: Kind) -> ReportingDescriptor {
    let d = kind.doc();
    let text = format!(
        "What it flags: {}\nWhy it matters: {}\nExample: {}\nUse instead: {}",
        d.what, d.why, d.example, d.use_instead
    );
    let markdown = format!(
        "## {}\n\n**What it flags.** {}\n\n**Why it matters.** {}\n\n**Example**\n\n```\n{}\n```\n\n**Use instead.** {}\n",
        kind.id(),
        d.what,
        d.why,
        d.example,
        d.use_instead
    );
    let mut tags = vec!["reliability".to_string(), "retry".to_string(), kind.id().to_string()];
    tags.sort();
    tags.dedup();
    ReportingDescriptor {
        id: kind.id().to_string(),
        name: pascal_case(kind.id()),
        short_description: Text { text: first_sentence(d.what).to_string() },
        full_description: Text { text: format!("{} {}", d.what, d.why) },
        help: Help { text, markdown },
        default_configuration: Configuration { level: level(kind.default_severity()) },
        properties: RuleProperties {
            tags,
            problem_severity: match kind.default_severity() {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Note => "recommendation",
            },
        },
    }
}

fn result(f: &Finding, rule_index: usize, occurrence: usize) -> SarifResult {
    let mut fingerprints = BTreeMap::new();
    fingerprints.insert(FINGERPRINT_KEY, fingerprint(&f.rule, &f.path, &f.message, occurrence));
    // SARIF lines start at 1; a finding about a whole file says line 0.
    let start = f.line.max(1);
    SarifResult {
        rule_id: f.kind.id().to_string(),
        rule_index,
        level: level(f.severity),
        message: Text {
            text: if f.message.is_empty() { f.kind.doc().what.to_string() } else { f.message.clone() },
        },
        locations: vec![Location {
            physical_location: PhysicalLocation {
                artifact_location: artifact(&f.path),
                region: Some(Region { start_line: start, end_line: f.end_line.max(start) }),
            },
        }],
        partial_fingerprints: fingerprints,
        properties: ResultProperties {
            kind: f.kind,
            rule: f.rule.clone(),
            base: f.base.clone(),
            head: f.head.clone(),
        },
        fixes: fixes(f),
    }
}

/// The finding's [`crate::finding::Fix`] as SARIF `fixes`.
fn fixes(f: &Finding) -> Vec<SarifFix> {
    let Some(fix) = &f.fix else { return Vec::new() };
    vec![SarifFix {
        description: Text { text: fix.description.clone() },
        artifact_changes: vec![ArtifactChange {
            artifact_location: artifact(&f.path),
            replacements: vec![Replacement {
                deleted_region: Region { start_line: fix.line, end_line: fix.end_line.max(fix.line) },
                inserted_content: Text { text: fix.replacement.clone() },
            }],
        }],
    }]
}

fn notification(n: &Note) -> Notification {
    let locations = match &n.path {
        Some(p) => vec![Location {
            physical_location: PhysicalLocation { artifact_location: artifact(p), region: None },
        }],
        None => Vec::new(),
    };
    Notification {
        level: if n.blocking { "error" } else { "note" },
        message: Text { text: n.message.clone() },
        locations,
    }
}

fn artifact(path: &str) -> ArtifactLocation {
    ArtifactLocation { uri: path_to_uri(path), uri_base_id: SRCROOT }
}

/// A line-independent identity for a result: SHA-256 over rule, path,
/// message and the occurrence number, hex, first 32 digits.
pub fn fingerprint(rule: &str, path: &str, message: &str, occurrence: usize) -> String {
    let mut h = Sha256::new();
    for part in [rule, path, message, &occurrence.to_string()] {
        h.update(part.as_bytes());
        // A separator that cannot occur in the parts keeps ("a", "bc") and
        // ("ab", "c") apart.
        h.update([0u8]);
    }
    hex::encode(&h.finalize()[..16])
}

/// `jitter-removed` -> `JitterRemoved`: SARIF's `name` is an identifier a
/// person can read.
fn pascal_case(id: &str) -> String {
    id.split('-')
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(first) => first.to_uppercase().chain(c).collect::<String>(),
                None => String::new(),
            }
        })
        .collect()
}

fn first_sentence(s: &str) -> &str {
    match s.find(". ") {
        Some(i) => &s[..=i],
        None => s,
    }
}
