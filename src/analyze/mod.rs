//! Analyzers: turn a [`ChangeSet`] into [`Finding`]s.
//!
//! The analyzers: [`rust::RustAnalyzer`] (syn-based, knows the Rust retry
//! crates and their defaults), [`trees::TreesAnalyzer`] (tree-sitter trees
//! of Python, JavaScript/TypeScript, Go and Java, read with each retry
//! library's data file), [`operations::OperationsAnalyzer`] (every
//! operation outside Rust and the retry that covers it, base against head,
//! in every tree-sitter grammar), [`rules::RulePackAnalyzer`] (YAML rule packs for
//! project helpers, other languages and config files),
//! [`layers::LayersAnalyzer`] (retries stacked across proxies, meshes and
//! clients) and [`knobs::KnobsAnalyzer`] (the settings floor: knobs by
//! name). All implement [`Analyzer`];
//! [`scan`] runs them over every changed file, one file per task on a rayon
//! pool, and collects what they say. [`scan_with`] leaves out the files
//! `paths.ignore` names and then, for every analyzer at once, turns findings
//! in test code into notes ([`testcode`]).
//!
//! The [`ScanOutcome`] also carries what the gate needs besides findings, so
//! that the gate never parses code itself: every retry policy of the head
//! ([`HeadPolicy`], for `limits.max_attempts`) and which changed files hold
//! retry or HTTP-client code ([`retry_code`], for whether a replay is due).

pub(crate) mod generated;
pub mod knobs;
pub mod layers;
pub mod operations;
pub(crate) mod reads;
pub(crate) mod retry_code;
pub mod rules;
pub mod rust;
pub(crate) mod ships;
pub(crate) mod testcode;
pub mod trees;

use rayon::prelude::*;

use crate::changeset::{ChangeSet, FileChange, Side};
use crate::finding::{Finding, Kind, Note, Severity};
use testcode::ScanPaths;

/// Stack size for analysis threads: syn parses recursively, and
/// [`rust::bounds`] bounds the depth of what it parses to what this stack
/// holds.
use rust::bounds::ANALYSIS_STACK_BYTES;

/// A matcher for any of `words`, ignoring ASCII case: the analyzers'
/// prefilters (a file without any of them is not worth a parse).
pub(crate) fn any_word<'w>(words: impl IntoIterator<Item = &'w &'w str>) -> aho_corasick::AhoCorasick {
    aho_corasick::AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(words)
        .unwrap_or_else(|e| panic!("prefilter words are constant and valid: {e}"))
}

/// What an analyzer says about one file.
#[derive(Debug, Default, Clone)]
pub struct FileResult {
    /// What the file's change makes worse.
    pub findings: Vec<Finding>,
    /// What could not be decided about the file, said out loud.
    pub notes: Vec<Note>,
    /// The retry policies of the head version whose attempts are a count
    /// or unbounded; an analyzer that models no policies leaves it empty.
    pub(crate) head_policies: Vec<HeadPolicy>,
}

/// One retry policy found in the head version of a changed file, as the
/// analyzer modelled it: what `limits.max_attempts` is checked against.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HeadPolicy {
    pub(crate) path: String,
    pub(crate) line: u32,
    pub(crate) end_line: u32,
    /// Total attempts (first call included); `None` for unbounded.
    pub(crate) attempts: Option<f64>,
    /// The retry library (`backon`, `loop`, ...).
    pub(crate) lib: String,
}

/// Changed files an analyzer reads beyond what [`Analyzer::wants`] names,
/// and notes about what it cannot read.
#[derive(Debug, Default)]
pub struct Extra {
    pub(crate) paths: std::collections::BTreeSet<String>,
    pub(crate) notes: Vec<Note>,
}

/// One way of finding retry regressions in changed files.
pub trait Analyzer: Send + Sync {
    /// A short name for logs and notes.
    fn name(&self) -> &str;
    /// Whether this analyzer reads files at `path`.
    fn wants(&self, path: &str) -> bool;
    /// Files of `cs` this analyzer also reads although `wants` does not name
    /// them (Rust pulled in by `#[path]`); none by default.
    fn extra(&self, _cs: &ChangeSet) -> Extra {
        Extra::default()
    }
    /// Compares the base and head versions of one file.
    fn analyze(&self, file: &FileChange) -> FileResult;
    /// Analyses all wanted files of a change set together. The default runs
    /// [`Analyzer::analyze`] per file in parallel; an analyzer that matches
    /// code across files (a function moved to another module) overrides it.
    fn analyze_set(&self, files: &[&FileChange]) -> FileResult {
        let per_file: Vec<FileResult> = files.par_iter().map(|f| self.analyze(f)).collect();
        let mut out = FileResult::default();
        for r in per_file {
            out.findings.extend(r.findings);
            out.notes.extend(r.notes);
            out.head_policies.extend(r.head_policies);
        }
        out
    }
}

/// Everything the analyzers found in a change set.
#[derive(Debug, Default, Clone)]
pub struct ScanOutcome {
    /// Every finding, sorted by path and line.
    pub findings: Vec<Finding>,
    /// Every note: the change set's, the analyzers' and the scan's own.
    pub notes: Vec<Note>,
    /// Files at least one analyzer read.
    pub(crate) files_analyzed: usize,
    /// Every retry policy with a count (or none) in the head version of the
    /// changed files the analyzers read; a file that could not be parsed has
    /// none here and a blocking note instead.
    pub(crate) head_policies: Vec<HeadPolicy>,
    /// The changed files (`paths.ignore` or not) that hold retry or
    /// HTTP-client code on either side ([`retry_code::holds_retry_code`]).
    pub(crate) retry_code: Vec<String>,
}

/// Runs every analyzer over every changed file of `cs`, with the default
/// test patterns and nothing ignored (what a repository without config gets).
pub fn scan(cs: &ChangeSet, analyzers: &[&dyn Analyzer]) -> ScanOutcome {
    scan_with(cs, analyzers, &ScanPaths::defaults(), &[])
}

/// Retry words ([`rust::RETRY_TOKENS`]: `retry`, `backoff`, `sleep`,
/// `.send(`, ...) that the changed Rust files of one change may hold, both
/// sides together, before the rest of the change is left unanalysed
/// (docs/limits.md, "Every change").
///
/// Why a budget: the Rust analyzer keeps a model of every retry site of
/// every changed file at once (sites are matched across files), and each
/// site yields findings; a change of 20 files with 40,000 new retry sites
/// each reached 3.2 GB and two minutes on two busy cores. Words are the
/// unit because they are counted without parsing, and a retry site names
/// at least one. The largest real repositories read for the evaluation
/// hold about 4,000 in all their Rust files; one file of the hostile
/// benchmark holds 40,000, and two such files are scanned within 1 GB.
pub(crate) const MAX_RUST_RETRY_WORDS: usize = 100_000;

/// Runs every analyzer over every changed file of `cs` that `paths` does not
/// ignore, then demotes findings in test code to notes.
pub(crate) fn scan_with(
    cs: &ChangeSet,
    analyzers: &[&dyn Analyzer],
    paths: &ScanPaths,
    disabled: &[String],
) -> ScanOutcome {
    scan_within(cs, analyzers, paths, disabled, MAX_RUST_RETRY_WORDS)
}

/// [`scan_with`] under a budget of `max_rust_words` retry words in the
/// changed Rust files (the tests give a small one).
pub(crate) fn scan_within(
    cs: &ChangeSet,
    analyzers: &[&dyn Analyzer],
    paths: &ScanPaths,
    disabled: &[String],
    max_rust_words: usize,
) -> ScanOutcome {
    let pool = rayon::ThreadPoolBuilder::new().stack_size(ANALYSIS_STACK_BYTES).build();
    let work = || analyze_all(cs, analyzers, paths, max_rust_words);
    let mut out = match pool {
        Ok(pool) => pool.install(work),
        // Without threads of our own, parsing would run on stacks too small for
        // what the depth limit admits: nothing is analysed, and the gate is
        // told it is blind.
        Err(e) => ScanOutcome {
            notes: vec![Note::blocking(
                None,
                format!("could not start the analysis threads ({e}); no file was analysed; run again, or review the change by hand and sign off"),
            )],
            ..Default::default()
        },
    };
    // Disabled rules go first: a finding a disabled rule would have
    // covered is then kept, not dropped with it.
    out.findings.retain(|f| !disabled.contains(&f.rule));
    testcode::demote(&mut out.findings, &mut out.notes, cs, paths);
    knobs::drop_covered(&mut out.findings);
    knobs::drop_counters(&mut out.findings, cs);
    crate::finding::keep_most_severe(&mut out.findings);
    // Ignoring a file hides its findings, not the need to replay the client
    // it changes.
    out.retry_code =
        cs.files.iter().filter(|f| retry_code::holds_retry_code(f)).map(|f| f.path.clone()).collect();
    out
}

fn analyze_all(
    cs: &ChangeSet,
    analyzers: &[&dyn Analyzer],
    paths: &ScanPaths,
    max_rust_words: usize,
) -> ScanOutcome {
    let mut out = ScanOutcome { notes: cs.notes.clone(), ..Default::default() };
    let mut analyzed = vec![false; cs.files.len()];
    let mut ignored: Vec<bool> = cs.files.iter().map(|f| paths.ignored(&f.path).is_some()).collect();
    // Generated and bundled files are nobody's writing: said, not read. A
    // file the change adds is read whatever it says, unless it is a bundle
    // in place of one the change deletes (the bundler ran again).
    let deleted: Vec<(&str, &str)> = cs
        .files
        .iter()
        .filter(|f| matches!(f.head, Side::Absent))
        .filter_map(|f| f.base.text().map(|t| (f.path.as_str(), t)))
        .collect();
    for (i, f) in cs.files.iter().enumerate() {
        if ignored[i] {
            continue;
        }
        let why = generated::of_change(&f.path, f.base.text(), f.head.text())
            .map(|why| format!("not analysed: {why}; review the generator's input or the bundled dependency instead"))
            .or_else(|| {
                let added = matches!(f.base, Side::Absent) && !f.path.to_ascii_lowercase().ends_with(".rs");
                let old = f.head.text().filter(|_| added).and_then(|h| generated::replaced_bundle(&f.path, h, &deleted))?;
                Some(format!("not analysed: a minified bundle that replaces {old}, which the change deletes (the bundler's output, built again); review the bundled sources instead"))
            });
        if let Some(why) = why {
            ignored[i] = true;
            out.notes.push(Note::info(Some(&f.path), why));
        }
    }
    // Files past the budget are handed to the analyzers as stand-ins with
    // nothing in them, not left out: an analyzer that reads unchanged files
    // of the head tree for context (the Rust analyzer's program pass) skips
    // the paths it is given as changed, and would otherwise parse the very
    // files the budget left out, up to its own limit of 64.
    let stand_ins: Vec<Option<FileChange>> = over_budget(cs, max_rust_words, &ignored, &mut out.notes)
        .into_iter()
        .zip(&cs.files)
        .map(|(over, f)| over.then(|| FileChange::from_texts(&f.path, Some(""), Some(""))))
        .collect();
    let ignored_count = cs.files.iter().filter(|f| paths.ignored(&f.path).is_some()).count();
    if ignored_count > 0 {
        out.notes.push(Note::info(
            None,
            format!(
                "{} matched {} and {} not scanned",
                crate::text::plural(ignored_count, "changed file", "changed files"),
                paths.ignore_source(),
                if ignored_count == 1 { "was" } else { "were" }
            ),
        ));
    }
    // What each analyzer reads, and what it cannot: decided for all of them
    // first, in order.
    let mut plan: Vec<(Vec<Note>, Vec<&FileChange>)> = Vec::with_capacity(analyzers.len());
    for a in analyzers {
        let extra = a.extra(cs);
        let mut notes = extra.notes;
        let mut readable = Vec::new();
        for (i, file) in cs.files.iter().enumerate() {
            if ignored[i] || (!a.wants(&file.path) && !extra.paths.contains(&file.path)) {
                continue;
            }
            if let Some(stand_in) = &stand_ins[i] {
                readable.push(stand_in);
                continue;
            }
            analyzed[i] = true;
            if matches!(file.head, Side::Skipped) || matches!(file.base, Side::Skipped) {
                // The reason (binary, too large, missing object) is already a
                // note; this one says the gate is blind here, so it must not pass.
                notes.push(Note::blocking(
                    Some(&file.path),
                    format!(
                        "{} could not read this file (see the note above); review it by hand and sign off",
                        a.name()
                    ),
                ));
            } else {
                readable.push(file);
            }
        }
        plan.push((notes, readable));
    }
    // Then the analyzers run side by side: one waiting on git (the layer
    // model reads the trees) leaves its core to another's parsing. What
    // they say is gathered in analyzer order, as if they had run in turn.
    let results: Vec<FileResult> =
        analyzers.par_iter().zip(&plan).map(|(a, (_, readable))| a.analyze_set(readable)).collect();
    for ((notes, _), r) in plan.into_iter().zip(results) {
        out.notes.extend(notes);
        out.findings.extend(r.findings);
        out.notes.extend(r.notes);
        out.head_policies.extend(r.head_policies);
    }
    out.files_analyzed = analyzed.iter().filter(|a| **a).count();
    removed_from_new_files(cs, &mut out.findings);
    helper_writes_read_by_the_model(&mut out.findings);
    in_new_built_output(cs, &mut out.findings);
    still_long_timeouts(&mut out.findings);
    out
}

/// The changed Rust files left out by the budget, each with a blocking
/// note: from the one whose retry words pass `max_words` (counted in the
/// change's path order, both sides, ignored files not counted) to the
/// last. None of them is analysed, so the gate cannot pass the change.
fn over_budget(cs: &ChangeSet, max_words: usize, ignored: &[bool], notes: &mut Vec<Note>) -> Vec<bool> {
    let mut over = vec![false; cs.files.len()];
    static WORDS: std::sync::OnceLock<aho_corasick::AhoCorasick> = std::sync::OnceLock::new();
    let words = WORDS.get_or_init(|| any_word(rust::RETRY_TOKENS));
    let mut total = 0usize;
    // The file at which the count passed the budget.
    let mut passed_at: Option<&str> = None;
    for (i, f) in cs.files.iter().enumerate() {
        if ignored[i] || !rust::is_rust_path(&f.path) {
            continue;
        }
        let at = match passed_at {
            Some(path) => format!("at {path}, before this file"),
            None => {
                let n: usize = [f.base.text(), f.head.text()]
                    .into_iter()
                    .flatten()
                    .map(|t| words.find_iter(t).count())
                    .sum();
                total = total.saturating_add(n);
                if total <= max_words {
                    continue;
                }
                passed_at = Some(&f.path);
                format!("at this file ({n} of them here)")
            }
        };
        over[i] = true;
        notes.push(Note::blocking(
            Some(&f.path),
            format!(
                "not analysed: this change's Rust files name a retry (retry, backoff, sleep, .send(, ...) more than {} times, the most retrygate analyses in one change, and the count passes it {at}; this file and the Rust files after it were not analysed, so a retry in them was not compared: split the change into smaller pull requests, or review these files by hand and sign off",
                thousands(max_words)
            ),
        ));
    }
    over
}

/// `n` with a comma every three digits (`100,000`), as the docs write it.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A per-attempt timeout at or above this many seconds after a lowering is
/// still longer than the calls it bounds take, so few attempts end on it
/// and few retries follow: said as a warning (docs/limits.md).
pub(crate) const LONG_TIMEOUT_SECS: f64 = 600.0;

/// A timeout lowered to a value that stays long (ten hours to one): a
/// warning that says so, since it makes no call fail that did not before
/// in any way a retry storm follows from.
fn still_long_timeouts(findings: &mut [Finding]) {
    for f in findings.iter_mut().filter(|f| f.kind == Kind::TimeoutLowered && f.severity == Severity::Error) {
        let Some(secs) = f.head.as_ref().and_then(seconds_of) else { continue };
        if secs >= LONG_TIMEOUT_SECS {
            f.severity = Severity::Warning;
            f.message.push_str(&format!(
                " (the head's timeout is still {} minutes: longer than a call takes, so it makes few attempts fail; a warning)",
                (secs / 60.0).round()
            ));
        }
    }
}

/// Seconds in a finding's `head` value, when it says its unit: `seconds`,
/// `timeout_ms`, or a `value` written with one (`30s`, `5m`, `1h`,
/// `250ms`), read by the settings floor's one duration reader.
fn seconds_of(v: &serde_json::Value) -> Option<f64> {
    if let Some(s) = v.get("seconds").and_then(serde_json::Value::as_f64) {
        return Some(s);
    }
    if let Some(ms) = v.get("timeout_ms").and_then(serde_json::Value::as_f64) {
        return Some(ms / 1000.0);
    }
    match knobs::value::from_text(v.get("value")?.as_str()?) {
        knobs::value::Value::Num { v, seconds: true } => Some(v),
        _ => None,
    }
}

/// Findings in a minified or bundled file the change adds (a demo's built
/// assets committed beside its source): the file is still read, since the
/// change could have minified anything, but what it holds is a bundler's
/// output, so its findings are warnings that say why.
fn in_new_built_output(cs: &ChangeSet, findings: &mut [Finding]) {
    for f in findings.iter_mut().filter(|f| f.severity == Severity::Error) {
        let Some(c) = cs.files.iter().find(|c| c.path == f.path && matches!(c.base, Side::Absent)) else {
            continue;
        };
        if f.path.to_ascii_lowercase().ends_with(".rs") {
            continue;
        }
        if let Some(why) = c.head.text().and_then(generated::built_output) {
            f.severity = Severity::Warning;
            f.message.push_str(&format!(
                " (in a file this change adds that reads as built output: {why}; a warning, review the sources it was built from)"
            ));
        }
    }
}

/// A write sent through a project's retry helper blocks by the rule packs'
/// reading of the helper, which names the failures anywhere in its body.
/// The operation model reads the same helper's retry arm by arm (the
/// `except`/`catch` that goes round again, the guard before a `continue`):
/// where it found, inside every definition the helper finding names, a
/// new retry of the write that fires only on failures after which nothing
/// was written (a refused connection, 429), that reading is the finer one,
/// and the helper finding is lowered to a warning that says so. The
/// model's own finding stays, a warning, naming the conditions.
pub(crate) fn helper_writes_read_by_the_model(findings: &mut [Finding]) {
    // The model's new retries of writes, by place and whether they fire
    // after a write may have happened.
    let model: Vec<(String, u32, bool)> = findings
        .iter()
        .filter(|f| f.rule == crate::analyze::operations::compare::NEW_WRITE)
        .filter_map(|f| {
            let after = f.head.as_ref()?.get("fires_after_write")?.as_bool()?;
            Some((f.path.clone(), f.line, after))
        })
        .collect();
    let refused_only: Vec<&(String, u32, bool)> = model.iter().filter(|(_, _, after)| !after).collect();
    if refused_only.is_empty() {
        return;
    }
    for f in findings.iter_mut() {
        if !f.rule.ends_with("/retry-helper-write") || f.severity != Severity::Error {
            continue;
        }
        let Some(head) = &f.head else { continue };
        // One write (or a helper made retrying) names its definition; a
        // group lists its writes, each with the definition it goes through.
        let writes: Vec<&serde_json::Value> = match head.get("writes").and_then(|w| w.as_array()) {
            Some(ws) if head.get("definition").is_none() => ws.iter().collect(),
            _ => vec![head],
        };
        let read = |w: &&serde_json::Value| {
            let path =
                w.get("definition").and_then(|d| d.as_str()).and_then(|d| d.rsplit_once(':')).map(|(p, _)| p);
            let lines = w
                .get("definition_lines")
                .and_then(|l| l.as_array())
                .and_then(|l| Some((l.first()?.as_u64()?, l.get(1)?.as_u64()?)));
            let inside = |p: &str, l: u32| {
                Some(p) == path && lines.is_some_and(|(a, b)| (a..=b).contains(&u64::from(l)))
            };
            // Some retry in the helper fires only on refusals, and none in
            // it fires after a write may have happened.
            model.iter().any(|(p, l, after)| !after && inside(p, *l))
                && !model.iter().any(|(p, l, after)| *after && inside(p, *l))
        };
        if !writes.is_empty() && writes.iter().all(read) {
            f.severity = Severity::Warning;
            f.message.push_str(" (the operation model read the helper's retry: it fires only on failures after which the server wrote nothing, such as a refused connection; a warning: check it never fires on timeouts or dropped connections)");
        }
    }
}

/// Jitter or Retry-After handling "removed" in a file the change adds,
/// when the change deletes no file it could have moved from: nothing was
/// removed; the file's retry is new code without it. Said as a warning
/// (the operation model says a new retry without jitter the same way).
fn removed_from_new_files(cs: &ChangeSet, findings: &mut [Finding]) {
    let ext = |p: &str| p.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    let deleted: Vec<Option<String>> =
        cs.files.iter().filter(|f| matches!(f.head, Side::Absent)).map(|f| ext(&f.path)).collect();
    for f in findings.iter_mut() {
        if !matches!(f.kind, Kind::JitterRemoved | Kind::RetryAfterIgnored) || f.severity != Severity::Error {
            continue;
        }
        let added = cs.files.iter().any(|c| c.path == f.path && matches!(c.base, Side::Absent));
        if added && !deleted.contains(&ext(&f.path)) {
            f.severity = Severity::Warning;
            f.message.push_str(
                " (in a file this change adds, with no file of its language deleted to move it from: nothing was removed, the retry is new code; a warning)",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    const BACKON: &str = "use backon::{ExponentialBuilder, Retryable};\nasync fn f(c: &reqwest::Client) -> reqwest::Result<reqwest::Response> {\n    (|| async { c.get(\"https://x\").send().await })\n        .retry(ExponentialBuilder::default().with_jitter().with_max_times(4))\n        .await\n}\n";

    #[test]
    fn a_helper_write_is_lowered_only_when_every_model_retry_inside_the_helper_fires_on_refusals_alone() {
        let helper = || {
            Finding::new(Kind::RetryNonIdempotent, "python/retry-helper-write", "app/orders.py", 3)
                .severity(Severity::Error)
                .head(serde_json::json!({"helper": "send", "definition": "app/net.py:10", "definition_lines": [11, 30]}))
        };
        let model = |line: u32, after: bool| {
            Finding::new(
                Kind::RetryNonIdempotent,
                crate::analyze::operations::compare::NEW_WRITE,
                "app/net.py",
                line,
            )
            .severity(if after { Severity::Error } else { Severity::Warning })
            .head(serde_json::json!({"fires_after_write": after}))
        };
        let run = |mut fs: Vec<Finding>| {
            helper_writes_read_by_the_model(&mut fs);
            fs[0].severity
        };
        assert_eq!(run(vec![helper(), model(12, false)]), Severity::Warning);
        assert_eq!(
            run(vec![helper(), model(12, false), model(20, true)]),
            Severity::Error,
            "another retry in it fires after a write"
        );
        assert_eq!(
            run(vec![helper(), model(40, false)]),
            Severity::Error,
            "the refusal-only retry is outside the helper"
        );
        assert_eq!(run(vec![helper()]), Severity::Error);
    }

    #[test]
    fn a_bundle_added_in_place_of_a_deleted_one_is_said_and_not_read_and_another_new_file_is_read() {
        let bundle = |c: char| format!("var a=\"{}\";\n", c.to_string().repeat(6000));
        let paths = ScanPaths::from_config(&Config::from_yaml_str("{}", "t.yml").unwrap().paths).unwrap();
        let notes = |files: Vec<FileChange>| {
            let cs = ChangeSet::from_files(files);
            scan_with(&cs, &[], &paths, &[]).notes.into_iter().map(|n| n.message).collect::<Vec<_>>()
        };
        let replaced = notes(vec![
            FileChange::from_texts("web/index-D0.js", Some(&bundle('a')), None),
            FileChange::from_texts("web/index-C7.js", None, Some(&bundle('b'))),
        ]);
        assert!(replaced.iter().any(|m| m.contains("replaces web/index-D0.js")), "{replaced:?}");
        // The same bundle added with nothing deleted: the change's own file, read.
        let alone = notes(vec![FileChange::from_texts("web/index-C7.js", None, Some(&bundle('b')))]);
        assert!(!alone.iter().any(|m| m.contains("not analysed")), "{alone:?}");
    }

    #[test]
    fn findings_in_a_minified_file_the_change_adds_are_warnings_and_in_an_edited_one_errors() {
        let finding = || {
            crate::finding::Finding::new(
                crate::finding::Kind::RetryNonIdempotent,
                "op/new-retry-of-write",
                "site/assets/index-C7.js",
                1,
            )
        };
        let bundle = format!("var a=\"{}\";\nfetch(u,{{method:\"POST\"}});\n", "x".repeat(6000));
        let added = FileChange::from_texts("site/assets/index-C7.js", None, Some(&bundle));
        let mut fs = vec![finding()];
        in_new_built_output(&ChangeSet::from_files(vec![added]), &mut fs);
        assert_eq!(fs[0].severity, crate::finding::Severity::Warning);
        assert!(fs[0].message.contains("reads as built output"), "{}", fs[0].message);
        // A new file a person wrote, and a minified file the base had: errors.
        let written = FileChange::from_texts("site/assets/index-C7.js", None, Some("fetch(u)\n"));
        let mut fs = vec![finding()];
        in_new_built_output(&ChangeSet::from_files(vec![written]), &mut fs);
        assert_eq!(fs[0].severity, crate::finding::Severity::Error);
        let edited = FileChange::from_texts("site/assets/index-C7.js", Some(&bundle), Some(&bundle));
        let mut fs = vec![finding()];
        in_new_built_output(&ChangeSet::from_files(vec![edited]), &mut fs);
        assert_eq!(fs[0].severity, crate::finding::Severity::Error);
    }

    #[test]
    fn a_timeout_lowered_to_a_value_that_stays_long_is_a_warning() {
        let lowered = |head: serde_json::Value| {
            let mut f =
                crate::finding::Finding::new(Kind::TimeoutLowered, "python/timeout-lowered", "a.py", 3);
            f.head = Some(head);
            let mut fs = vec![f];
            still_long_timeouts(&mut fs);
            fs.remove(0)
        };
        let long = lowered(serde_json::json!({"seconds": 3600}));
        assert_eq!(long.severity, Severity::Warning);
        assert!(long.message.contains("still 60 minutes"), "{}", long.message);
        assert_eq!(lowered(serde_json::json!({"value": "15m"})).severity, Severity::Warning);
        assert_eq!(lowered(serde_json::json!({"timeout_ms": 4000.0})).severity, Severity::Error);
        assert_eq!(lowered(serde_json::json!({"value": "3s"})).severity, Severity::Error);
        // A value whose unit is unknown stays an error.
        assert_eq!(lowered(serde_json::json!({"value": "3600"})).severity, Severity::Error);
    }

    #[test]
    fn jitter_removed_in_a_file_the_change_adds_is_a_warning_unless_a_file_was_deleted() {
        let finding = || {
            crate::finding::Finding::new(
                crate::finding::Kind::JitterRemoved,
                "python/jitter-disabled",
                "app/new.py",
                3,
            )
        };
        let added = FileChange::from_texts("app/new.py", None, Some("x = 1\n"));
        let mut fs = vec![finding()];
        removed_from_new_files(&ChangeSet::from_files(vec![added.clone()]), &mut fs);
        assert_eq!(fs[0].severity, crate::finding::Severity::Warning);
        assert!(fs[0].message.contains("nothing was removed"), "{}", fs[0].message);
        // A Python file deleted beside it: the retry may have moved; it blocks.
        let gone = FileChange::from_texts("app/old.py", Some("x = 1\n"), None);
        let mut fs = vec![finding()];
        removed_from_new_files(&ChangeSet::from_files(vec![added, gone]), &mut fs);
        assert_eq!(fs[0].severity, crate::finding::Severity::Error);
        // A file that existed: it blocks.
        let changed = FileChange::from_texts("app/new.py", Some("x = 0\n"), Some("x = 1\n"));
        let mut fs = vec![finding()];
        removed_from_new_files(&ChangeSet::from_files(vec![changed]), &mut fs);
        assert_eq!(fs[0].severity, crate::finding::Severity::Error);
    }

    fn scan_files(files: Vec<FileChange>, config: &str) -> ScanOutcome {
        let config = Config::from_yaml_str(config, "t.yml").unwrap();
        let cs = ChangeSet::from_files(files);
        let rust = rust::RustAnalyzer::new();
        scan_with(&cs, &[&rust], &ScanPaths::from_config(&config.paths).unwrap(), &[])
    }

    /// Issue 51, "Hostile input stays bounded": past the budget of retry
    /// words, the rest of the change's Rust files is not analysed, and each
    /// says so in a blocking note.
    #[test]
    fn rust_files_past_the_retry_word_budget_are_not_analysed_and_each_blocks() {
        // A new retry of a POST, without jitter: it blocks where it is read.
        let post = BACKON.replace("c.get(", "c.post(").replace(".with_jitter()", "");
        let per_file = any_word(rust::RETRY_TOKENS).find_iter(&post).count();
        let cs = ChangeSet::from_files(vec![
            FileChange::from_texts("src/a.rs", None, Some(&post)),
            // Not Rust: not counted, and still read by its analyzers.
            FileChange::from_texts("tools/retry.py", None, Some(&"retry = 1\n".repeat(50))),
            FileChange::from_texts("src/b.rs", None, Some(&post)),
            FileChange::from_texts("src/c.rs", None, Some(&post)),
        ]);
        let rust = rust::RustAnalyzer::new();
        // The first file fits the budget exactly; the second passes it.
        let budget = per_file;
        let out = scan_within(&cs, &[&rust], &ScanPaths::defaults(), &[], budget);
        let notes: Vec<(Option<&str>, &str, bool)> =
            out.notes.iter().map(|n| (n.path.as_deref(), n.message.as_str(), n.blocking)).collect();
        let said = |at: &str| {
            format!(
                "not analysed: this change's Rust files name a retry (retry, backoff, sleep, .send(, ...) more than {budget} times, the most retrygate analyses in one change, and the count passes it {at}; this file and the Rust files after it were not analysed, so a retry in them was not compared: split the change into smaller pull requests, or review these files by hand and sign off"
            )
        };
        assert_eq!(
            notes,
            [
                (Some("src/b.rs"), said(&format!("at this file ({per_file} of them here)")).as_str(), true),
                (Some("src/c.rs"), said("at src/b.rs, before this file").as_str(), true),
            ]
        );
        // The file within the budget is analysed as before; those past it are not.
        assert!(out.findings.iter().any(|f| f.path == "src/a.rs"), "{:?}", out.findings);
        assert!(out.findings.iter().all(|f| f.path == "src/a.rs"), "{:?}", out.findings);
        // The same change under the default budget: every file analysed, no note.
        let whole = scan_with(&cs, &[&rust], &ScanPaths::defaults(), &[]);
        assert!(whole.notes.is_empty(), "{:?}", whole.notes);
        assert!(whole.findings.iter().any(|f| f.path == "src/c.rs"), "{:?}", whole.findings);
    }

    #[test]
    fn thousands_are_written_with_commas() {
        assert_eq!(thousands(100_000), "100,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(0), "0");
    }

    #[test]
    fn the_scan_carries_the_heads_counted_retry_policies() {
        let out = scan_files(
            vec![
                FileChange::from_texts("src/fetch.rs", None, Some(BACKON)),
                // Same policy in the base only: the head has none.
                FileChange::from_texts("src/gone.rs", Some(BACKON), Some("fn f() {}\n")),
            ],
            "",
        );
        let got: Vec<_> =
            out.head_policies.iter().map(|p| (p.path.as_str(), p.attempts, p.lib.as_str())).collect();
        assert_eq!(got, [("src/fetch.rs", Some(5.0), "backon")]);
        assert!(
            out.head_policies[0].line >= 3 && out.head_policies[0].end_line <= 5,
            "{:?}",
            out.head_policies
        );
    }

    #[test]
    fn unparsable_ignored_and_non_rust_files_give_no_policies() {
        let out = scan_files(
            vec![
                FileChange::from_texts("src/broken.rs", None, Some("fn f( { retry\n")),
                FileChange::from_texts("vendor/fetch.rs", None, Some(BACKON)),
                FileChange::from_texts("src/fetch.txt", None, Some(BACKON)),
            ],
            "paths: { ignore: [\"vendor/\"] }\n",
        );
        assert!(out.head_policies.is_empty(), "{:?}", out.head_policies);
        // The file that cannot be parsed blocks through the analyzer's own note.
        assert!(
            out.notes.iter().any(|n| n.blocking && n.path.as_deref() == Some("src/broken.rs")),
            "{:?}",
            out.notes
        );
    }

    #[test]
    fn retry_code_lists_changed_files_with_retry_or_http_words_ignored_or_not() {
        let out = scan_files(
            vec![
                FileChange::from_texts("vendor/fetch.rs", None, Some(BACKON)),
                FileChange::from_texts("web/api.ts", Some("await fetch(url)\n"), None),
                FileChange::from_texts("README.md", None, Some("retries with backoff\n")),
                FileChange::from_texts("src/lib.rs", None, Some("pub fn add(a: u8) -> u8 { a }\n")),
            ],
            "paths: { ignore: [\"vendor/\"] }\n",
        );
        assert_eq!(out.retry_code, ["vendor/fetch.rs", "web/api.ts"]);
    }
}
