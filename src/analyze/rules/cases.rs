//! Rule tests: annotated base/head file pairs kept next to the rules, run
//! against the engine and judged like ast-grep's and Semgrep's tests.
//!
//! A test folder holds one folder per case, each with `base/` and `head/`
//! trees (a file only in `head/` is added, only in `base/` deleted). In the
//! head files, a comment on the line before a target says what must happen
//! there:
//!
//! ```text
//! # ruleid: python/retries-raised     <- this rule must report the next line
//! # ok: python/jitter-disabled        <- this rule must not report the next line
//! ```
//!
//! Any comment opener works (`#`, `//`, `/*`, `<!--`); JSON, which has no
//! comments, uses a member `"//": "ruleid: <id>",` on the line before.
//! Several ids may be listed, separated by commas; stacked annotation lines
//! all apply to the next non-annotation line. Every finding not announced by
//! a `ruleid:` is `Noisy`; every `ruleid:` without its finding is `Missing`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use regex::Regex;

use super::RulePackAnalyzer;
use crate::analyze::Analyzer;
use crate::changeset::FileChange;
use crate::finding::Severity;

/// How one expectation (or one unexpected finding) turned out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaseOutcome {
    /// `ruleid:` and the rule reported the line, or `ok:` and it did not.
    Validated,
    /// `ruleid:` but the rule did not report the line.
    Missing,
    /// The rule reported a line nobody announced (or one marked `ok:`).
    Noisy,
}

impl fmt::Display for CaseOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CaseOutcome::Validated => "Validated",
            CaseOutcome::Missing => "Missing",
            CaseOutcome::Noisy => "Noisy",
        })
    }
}

/// One checked (case, file, line, rule).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CaseResult {
    pub(crate) case: String,
    pub(crate) path: String,
    pub(crate) line: u32,
    /// The rule id the line is about.
    pub rule: String,
    /// `true` for a `ruleid:` expectation, `false` for `ok:` or an unannounced finding.
    pub positive: bool,
    /// Whether the rule did what the annotation says.
    pub outcome: CaseOutcome,
}

/// Everything `retrygate rules test` found.
#[derive(Debug, Default)]
pub struct TestReport {
    /// Every checked line, sorted.
    pub results: Vec<CaseResult>,
    /// Rules without a validated positive or negative case, with what is missing.
    pub(crate) untested: Vec<(String, String)>,
    /// Broken test files: unknown rule ids, annotations with no target line.
    pub(crate) errors: Vec<String>,
    /// How many case folders were run.
    pub cases: usize,
}

impl TestReport {
    /// No broken file, no untested rule, and every line as announced.
    pub fn passed(&self) -> bool {
        self.errors.is_empty()
            && self.untested.is_empty()
            && self.results.iter().all(|r| r.outcome == CaseOutcome::Validated)
    }

    /// A human summary: failures first, then one line per rule.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for e in &self.errors {
            out.push_str(&format!("ERROR {e}\n"));
        }
        for r in self.results.iter().filter(|r| r.outcome != CaseOutcome::Validated) {
            let what = if r.positive { "expected a finding" } else { "unexpected finding" };
            out.push_str(&format!(
                "{:<9} {} {}/{}:{} ({what})\n",
                r.outcome.to_string(),
                r.rule,
                r.case,
                r.path,
                r.line
            ));
        }
        for (rule, missing) in &self.untested {
            out.push_str(&format!("UNTESTED  {rule}: {missing}\n"));
        }
        let validated = self.results.iter().filter(|r| r.outcome == CaseOutcome::Validated).count();
        out.push_str(&format!(
            "{} cases, {} checks: {} validated, {} missing, {} noisy; {} rules untested, {} errors: {}\n",
            self.cases,
            self.results.len(),
            validated,
            self.results.iter().filter(|r| r.outcome == CaseOutcome::Missing).count(),
            self.results.iter().filter(|r| r.outcome == CaseOutcome::Noisy).count(),
            self.untested.len(),
            self.errors.len(),
            if self.passed() { "PASS" } else { "FAIL" }
        ));
        out
    }
}

/// One annotation: which rules, and whether they must or must not report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Annotation {
    pub(crate) target_line: u32,
    pub(crate) rule: String,
    pub(crate) positive: bool,
}

#[allow(clippy::expect_used, reason = "a constant pattern, compiled by every rule test")]
fn annotation_regex() -> Regex {
    // A fixed pattern, not input: it compiles, or every test fails at once.
    Regex::new(
        r#"^\s*(?:#|//|/\*|<!--|"//"\s*:\s*")\s*(ruleid|ok)\s*:\s*([A-Za-z0-9/_,\s-]+?)\s*(?:\*/|-->|"\s*,?)?\s*$"#,
    )
    .expect("annotation regex")
}

/// Reads the annotations of a head file. Errors name the line.
pub(crate) fn annotations(text: &str) -> Result<Vec<Annotation>, String> {
    let re = annotation_regex();
    let mut pending: Vec<(u32, String, bool)> = Vec::new();
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i as u32 + 1;
        if let Some(c) = re.captures(line) {
            let positive = &c[1] == "ruleid";
            for id in c[2].split(',').map(str::trim).filter(|s| !s.is_empty()) {
                pending.push((n, id.to_string(), positive));
            }
            continue;
        }
        for (_, rule, positive) in pending.drain(..) {
            out.push(Annotation { target_line: n, rule, positive });
        }
    }
    if let Some((line, rule, _)) = pending.first() {
        return Err(format!("line {line}: annotation for {rule} has no line after it to apply to"));
    }
    Ok(out)
}

/// Runs every case under `tests_dir` through `analyzer`.
pub(crate) fn run(analyzer: &RulePackAnalyzer, tests_dir: &Path) -> anyhow::Result<TestReport> {
    let mut report = TestReport::default();
    let known: BTreeSet<&str> = analyzer.rules().iter().map(|r| r.id.as_str()).collect();
    let mut positives: BTreeMap<&str, usize> = BTreeMap::new();
    let mut negatives: BTreeMap<&str, usize> = BTreeMap::new();
    let mut case_dirs: Vec<PathBuf> = std::fs::read_dir(tests_dir)
        .with_context(|| {
            format!(
                "could not read the rule tests folder {}; pass the rules folder that holds tests/",
                tests_dir.display()
            )
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    case_dirs.sort();
    for dir in case_dirs {
        let case = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let base_files = list_files(&dir.join("base"))?;
        let head_files = list_files(&dir.join("head"))?;
        if base_files.is_empty() && head_files.is_empty() {
            report.errors.push(format!("{case}: no files under base/ or head/; a case needs at least one"));
            continue;
        }
        report.cases += 1;
        let paths: BTreeSet<&String> = base_files.keys().chain(head_files.keys()).collect();
        // The case is one change: its files are analysed together, so a
        // helper defined in one file resolves a call in another.
        let changes: Vec<FileChange> = paths
            .iter()
            .map(|p| {
                FileChange::from_texts(
                    p,
                    base_files.get(*p).map(String::as_str),
                    head_files.get(*p).map(String::as_str),
                )
            })
            .collect();
        let wanted: Vec<&FileChange> = changes.iter().filter(|f| analyzer.wants(&f.path)).collect();
        let mut found_in: BTreeMap<String, BTreeSet<(u32, String)>> = BTreeMap::new();
        // A note (a judgment written down: moved, judged a read) does not
        // block, so for a case it is not reported.
        for f in analyzer.analyze_set(&wanted).findings.into_iter().filter(|f| f.severity != Severity::Note) {
            found_in.entry(f.path).or_default().insert((f.line, f.rule));
        }
        for path in paths {
            let head = head_files.get(path).map(String::as_str);
            let found = found_in.remove(path.as_str()).unwrap_or_default();
            let notes = match head.map(annotations).transpose() {
                Ok(a) => a.unwrap_or_default(),
                Err(e) => {
                    report.errors.push(format!("{case}/head/{path}: {e}"));
                    continue;
                }
            };
            let mut announced = BTreeSet::new();
            for a in &notes {
                let Some(&rule) = known.get(a.rule.as_str()) else {
                    report.errors.push(format!(
                        "{case}/head/{path}:{}: annotation names unknown rule '{}'; check the id (retrygate rules list)",
                        a.target_line, a.rule
                    ));
                    continue;
                };
                let hit = found.contains(&(a.target_line, a.rule.clone()));
                let outcome = match (a.positive, hit) {
                    (true, true) | (false, false) => CaseOutcome::Validated,
                    (true, false) => CaseOutcome::Missing,
                    (false, true) => CaseOutcome::Noisy,
                };
                if outcome == CaseOutcome::Validated {
                    *if a.positive { positives.entry(rule) } else { negatives.entry(rule) }.or_default() += 1;
                }
                if a.positive {
                    announced.insert((a.target_line, a.rule.clone()));
                }
                report.results.push(CaseResult {
                    case: case.clone(),
                    path: path.clone(),
                    line: a.target_line,
                    rule: a.rule.clone(),
                    positive: a.positive,
                    outcome,
                });
            }
            let marked_ok: BTreeSet<(u32, &str)> =
                notes.iter().filter(|a| !a.positive).map(|a| (a.target_line, a.rule.as_str())).collect();
            for (line, rule) in found.difference(&announced) {
                if marked_ok.contains(&(*line, rule.as_str())) {
                    continue; // already counted as Noisy above
                }
                report.results.push(CaseResult {
                    case: case.clone(),
                    path: path.clone(),
                    line: *line,
                    rule: rule.clone(),
                    positive: false,
                    outcome: CaseOutcome::Noisy,
                });
            }
        }
    }
    for rule in &known {
        let p = positives.get(rule).copied().unwrap_or(0);
        let n = negatives.get(rule).copied().unwrap_or(0);
        let missing = match (p, n) {
            (0, 0) => Some("no validated `ruleid:` case and no validated `ok:` case"),
            (0, _) => Some("no validated `ruleid:` case"),
            (_, 0) => Some("no validated `ok:` case"),
            _ => None,
        };
        if let Some(m) = missing {
            report.untested.push((rule.to_string(), m.to_string()));
        }
    }
    report.results.sort();
    Ok(report)
}

/// Every file under `root`, keyed by its `/`-separated path relative to `root`.
fn list_files(root: &Path) -> anyhow::Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    if !root.is_dir() {
        return Ok(out);
    }
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).with_context(|| format!("could not read {}", dir.display()))? {
            let p = e.with_context(|| format!("could not list {}", dir.display()))?.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(root)
                    .with_context(|| format!("{} is outside {}", p.display(), root.display()))?;
                let rel: Vec<String> =
                    rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                let text = crate::bounded::read_regular_string(&p, crate::changeset::MAX_FILE_BYTES)
                    .map_err(|e| anyhow::anyhow!("could not read a rule-test case: {e}"))?;
                out.insert(rel.join("/"), text);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_in_every_comment_style_apply_to_the_next_code_line() {
        let text = "a\n# ruleid: p/a, p/b\n// ok: p/c\nx = 1\n<!-- ok: p/d -->\ny\n  \"//\": \"ruleid: p/e\",\n  \"k\": 1\n/* ruleid: p/f */\nz\n";
        let a = annotations(text).unwrap();
        let got: Vec<(u32, &str, bool)> =
            a.iter().map(|a| (a.target_line, a.rule.as_str(), a.positive)).collect();
        assert_eq!(
            got,
            vec![
                (4, "p/a", true),
                (4, "p/b", true),
                (4, "p/c", false),
                (6, "p/d", false),
                (8, "p/e", true),
                (10, "p/f", true)
            ]
        );
    }

    #[test]
    fn a_dangling_annotation_is_an_error_naming_the_line() {
        let e = annotations("x\n# ruleid: p/a\n").unwrap_err();
        assert_eq!(e, "line 2: annotation for p/a has no line after it to apply to");
    }

    #[test]
    fn ordinary_comments_mentioning_ruleid_are_not_annotations() {
        assert!(annotations("# see ruleid: docs for more\nx\n").unwrap().is_empty());
    }
}
