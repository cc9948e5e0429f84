//! The YAML rule packs: retry regressions in Python, JavaScript/TypeScript,
//! Go, Java/Kotlin and infrastructure configuration, found by comparing the
//! base and head of each changed file.
//!
//! # Overview
//!
//! - [`RulePackAnalyzer`] is the [`Analyzer`] the scan runs. [`RulePackAnalyzer::bundled`]
//!   loads the packs compiled into the binary (`rules/*.yml`);
//!   [`RulePackAnalyzer::with_extra`] adds a repository's own rule files
//!   (read by the gate from the base commit).
//! - [`spec`] is the rule file format and its validation; [`engine`] the
//!   diff-aware matching; [`mask`] blanks comments and prose strings;
//!   [`lang`] tells languages apart by file name; [`cases`] runs the
//!   annotated rule tests; [`docs`] renders the rule table.
//!
//! The format and the exact matching semantics are documented in `docs/rules.md`.
//!
//! ```
//! use retrygate::analyze::Analyzer;
//! use retrygate::analyze::rules::RulePackAnalyzer;
//! use retrygate::changeset::FileChange;
//!
//! let packs = RulePackAnalyzer::bundled().unwrap();
//! let file = FileChange::from_texts(
//!     "checkout/client.py",
//!     Some("c = naive_client(timeout_s=2.5, retries=2, jitter=True)\n"),
//!     Some("c = naive_client(timeout_s=0.8, retries=6, jitter=False)\n"),
//! );
//! let kinds: Vec<_> = packs.analyze(&file).findings.iter().map(|f| f.kind.id()).collect();
//! assert!(kinds.contains(&"retry-count-raised"));
//! assert!(kinds.contains(&"jitter-removed"));
//! assert!(kinds.contains(&"timeout-lowered"));
//! ```

pub mod cases;
pub mod docs;
pub(crate) mod engine;
pub(crate) mod helpers;
pub(crate) mod lang;
pub(crate) mod mask;
mod moves;
pub(crate) mod spec;
pub(crate) mod versions;

use super::{Analyzer, FileResult};
use crate::changeset::FileChange;
use engine::Engine;
use lang::Language;
use spec::{Rule, RuleSet};

/// The packs shipped in the binary, as `(file name, YAML text)`, in file
/// name order (the order `retrygate rules test rules/` loads them, so that
/// "the first rule speaks" means the same in both).
pub const BUNDLED: &[(&str, &str)] = &[
    ("rules/go.yml", include_str!("../../../rules/go.yml")),
    ("rules/infra.yml", include_str!("../../../rules/infra.yml")),
    ("rules/java.yml", include_str!("../../../rules/java.yml")),
    ("rules/javascript.yml", include_str!("../../../rules/javascript.yml")),
    ("rules/python.yml", include_str!("../../../rules/python.yml")),
    ("rules/ruby.yml", include_str!("../../../rules/ruby.yml")),
];

/// Analyzer that runs the YAML rule packs.
#[derive(Debug)]
pub struct RulePackAnalyzer {
    engine: Engine,
    /// The head tree, where a project's own retry helpers are looked up;
    /// without it they are resolved in the changed files only.
    head_tree: Option<helpers::RepoHead>,
}

impl RulePackAnalyzer {
    /// The packs shipped with retrygate (embedded in the binary, so the
    /// binary alone works).
    pub fn bundled() -> anyhow::Result<RulePackAnalyzer> {
        Self::with_extra(Vec::new())
    }

    /// The bundled packs plus extra rule files, given as `(file name, YAML
    /// text)` so the gate can pass files read from the base commit. A file
    /// that fails to load is an error naming the file, the rule and the reason.
    pub fn with_extra(sources: Vec<(String, String)>) -> anyhow::Result<RulePackAnalyzer> {
        let bundled: Vec<(String, String)> =
            BUNDLED.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect();
        let set = RuleSet::load_after_checked(&bundled, &sources)?;
        // The languages a user's rules read: their prefilters are built
        // now, so that a problem is an error before anything is scanned.
        let user: Vec<Language> = Language::ALL
            .iter()
            .copied()
            .filter(|l| set.rules.iter().any(|r| r.compiled_at_load && r.languages.contains(l)))
            .collect();
        let engine = Engine::new(set)?;
        engine.build_now(&user)?;
        Ok(RulePackAnalyzer { engine, head_tree: None })
    }

    /// Only the given rule files, without the bundled packs (rule tests of a
    /// rule folder, `retrygate rules test DIR`).
    pub(crate) fn from_sources(sources: Vec<(String, String)>) -> anyhow::Result<RulePackAnalyzer> {
        let set = RuleSet::load(&sources)?;
        Ok(RulePackAnalyzer { engine: Engine::new(set)?, head_tree: None })
    }

    /// The same analyzer, reading the head tree of `cs` (when it came from
    /// git) to resolve a project's own retry helpers.
    pub(crate) fn with_head(mut self, cs: &crate::changeset::ChangeSet) -> RulePackAnalyzer {
        let is_commit = cs.head.len() >= 40 && cs.head.bytes().any(|b| b != b'0');
        self.head_tree = if is_commit {
            crate::changeset::Git::open(&cs.repo)
                .ok()
                .map(|git| helpers::RepoHead { git, rev: cs.head.clone() })
        } else {
            None
        };
        self
    }

    /// The rules loaded, in file order.
    pub fn rules(&self) -> &[Rule] {
        &self.engine.set.rules
    }

    /// The distinct `inside` context patterns of the loaded rules.
    pub fn context_sources(&self) -> &[String] {
        &self.engine.set.context_sources
    }
}

impl Analyzer for RulePackAnalyzer {
    fn name(&self) -> &str {
        "rule packs"
    }

    fn wants(&self, path: &str) -> bool {
        self.engine.wants(path)
    }

    fn analyze(&self, file: &FileChange) -> FileResult {
        self.analyze_set(&[file])
    }

    /// Every file through the engine (in parallel), then the helpers the
    /// change sends writes through, resolved across the files and the tree.
    fn analyze_set(&self, files: &[&FileChange]) -> FileResult {
        use rayon::prelude::*;
        let per_file: Vec<FileResult> = files
            .par_iter()
            .map(|f| {
                let mut r = self.engine.analyze(f);
                // A container's health check (`healthcheck:` in a compose
                // file of any name, an ECS or Swarm stack) polls the
                // container itself: its `retries` are no service's retry
                // policy; what the file deploys (a proxy's labels, an image,
                // a service's settings) is still read.
                if let Some(text) = f.head.text().filter(|_| crate::analyze::knobs::is_yaml_path(&f.path)) {
                    let health = crate::analyze::knobs::healthcheck_lines(text);
                    r.findings.retain(|x| !health.contains(&x.line));
                }
                r
            })
            .collect();
        let resolution = helpers::resolve(&self.engine.set, files, self.head_tree.as_ref());
        let mut out = resolution.result;
        for r in per_file {
            // A name-based helper finding on code that was only moved or
            // copied is not new either.
            let moved = |f: &crate::finding::Finding| {
                f.rule.ends_with("/retry-helper-write")
                    && resolution.stale.contains(&(f.path.clone(), f.line))
            };
            out.findings.extend(r.findings.into_iter().filter(|f| !moved(f)));
            out.notes.extend(r.notes);
        }
        // A write sent with an idempotency key may be retried: the key is
        // read where the write is built (the lines around the finding).
        out.findings
            .retain(|f| !(f.rule.ends_with("/retry-helper-write") && keyed_near(files, &f.path, f.line)));
        moves::drop_moved(&self.engine.set, files, &mut out.findings);
        moves::note_moved_into_calls(&self.engine.set, files, &mut out.findings);
        versions::settle(&self.engine.set, &mut out.findings, files, self.head_tree.as_ref());
        crate::finding::keep_most_severe(&mut out.findings);
        out
    }
}

/// Whether head lines near `line` of `path` send an idempotency key (the
/// operation model's spellings, `rules/operations/model.yml`).
fn keyed_near(files: &[&FileChange], path: &str, line: u32) -> bool {
    let Some(text) = files.iter().find(|f| f.path == path).and_then(|f| f.head.text()) else { return false };
    let Ok(data) = crate::analyze::operations::data::DATA.as_ref() else { return false };
    let from = line.saturating_sub(12) as usize;
    let window: String = text
        .lines()
        .skip(from.saturating_sub(1))
        .take(25)
        .collect::<Vec<_>>()
        .join("\n")
        .to_ascii_lowercase();
    data.idempotency_key.iter().any(|k| window.contains(k.as_str()))
}

/// Reads every `*.yml`/`*.yaml` file directly in `dir` (not its subfolders),
/// sorted by name, as `(path, text)`.
pub fn read_rule_dir(dir: &std::path::Path) -> anyhow::Result<Vec<(String, String)>> {
    use anyhow::Context as _;
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("could not read the rule folder {}; check the path", dir.display()))?;
    let mut paths = Vec::new();
    for e in entries {
        let p = e.with_context(|| format!("could not list {}", dir.display()))?.path();
        let is_rule = p.is_file() && matches!(p.extension().and_then(|e| e.to_str()), Some("yml" | "yaml"));
        if is_rule {
            paths.push(p);
        }
    }
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let text = crate::bounded::read_regular_string(&p, crate::config::MAX_CONFIG_BYTES as u64)
            .map_err(|e| anyhow::anyhow!("could not read a rule pack: {e}"))?;
        out.push((p.display().to_string(), text));
    }
    Ok(out)
}

/// One line of `retrygate rules list`: a check's id and what it reports.
/// The binary prints these; the data stays here so that every kind of check
/// the scan runs can be listed from one place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedCheck {
    /// The rule id (`python/retries-raised`) or Rust check id.
    pub id: String,
    /// The finding kind it reports.
    pub kind: crate::finding::Kind,
    /// The severity of what it reports.
    pub severity: crate::finding::Severity,
    /// The languages whose files it reads.
    pub languages: Vec<&'static str>,
}

/// Every check `retrygate rules list` shows: the rules of `packs`, in file order.
pub fn list_checks(packs: &RulePackAnalyzer) -> Vec<ListedCheck> {
    packs
        .rules()
        .iter()
        .map(|r| ListedCheck {
            id: r.id.clone(),
            kind: r.kind,
            severity: r.severity,
            languages: r.languages.iter().map(|l| l.name()).collect(),
        })
        .collect()
}

/// `retrygate rules test DIR`: loads `dir/*.yml` (only those, not the bundled
/// packs) and runs the annotated cases in `dir/tests/`.
pub fn test_dir(dir: &std::path::Path) -> anyhow::Result<cases::TestReport> {
    let sources = read_rule_dir(dir)?;
    if sources.is_empty() {
        anyhow::bail!(
            "{} holds no *.yml rule files; pass the folder that holds the rule files",
            dir.display()
        );
    }
    let packs = RulePackAnalyzer::from_sources(sources)?;
    cases::run(&packs, &dir.join("tests"))
}
