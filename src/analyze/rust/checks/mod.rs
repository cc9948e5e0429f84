//! The Rust analyzer's checks: one file per check, each holding the check's
//! declaration (its id suffix, the finding kinds it reports, what it applies
//! to, and its documentation in Clippy's shape: What it flags / Why it
//! matters / Example / Use instead), the pure decision that compares a base
//! fact with a head fact, and that decision's unit tests.
//!
//! | check | file | decides |
//! |---|---|---|
//! | `attempts` | [`attempts`] | the attempt count or time budget grew |
//! | `budget` | [`budget`] | a retry budget (share of requests) grew |
//! | `unbounded` | [`unbounded`] | a bound disappeared, or a new retry has none |
//! | `jitter` | [`jitter`] | jitter was lost, or a new retry has none |
//! | `retry-after` | [`retry_after`] | Retry-After was honoured and no longer is |
//! | `methods` | [`methods`] | a retry now covers a write with no key |
//! | `timeout` | [`timeout`] | a timeout went down in code that retries |
//! | `setter-discarded` | [`setter_discarded`] | a by-value setter's result is dropped |
//! | `count-unlinked` | [`count_unlinked`] | a retry-count-named value went up and no modelled retry reads it |
//! | `count-argument` | [`count_argument`] | a literal passed to a retry-count-named parameter went up |
//!
//! What a library's policy *is* (backon does not jitter unless asked) is a
//! fact of its file in [`super::libs`]; whether losing it is a finding is
//! decided here (`jitter.rs`). Where a decided [`Change`] is reported (the
//! retry site, the changed definition, the client that is built) is the
//! model's business ([`super`], [`super::program`]).
//!
//! Adding a check is one new file and two lines here: its `mod` and its
//! entry in [`ALL`]; a check of policies is also called from
//! [`compare_sites`].
//!
//! A finding's rule id is `rust/<source>-<check>`: the source is the retry
//! library whose policy changed (its id in [`super::libs::LIBRARIES`]),
//! `loop` for a hand-written loop, `client` for a timeout, `builder` for a
//! dropped setter whose library cannot be told (`rust/backon-jitter`,
//! `rust/loop-attempts`, `rust/client-timeout`), `value` for a named count
//! no modelled retry reads (`rust/value-count-unlinked`). The analyzer builds ids only
//! through [`RustCheck::rule`]; [`all_ids`] lists every id it can emit, for
//! `retrygate rules list`, for `rules.disable` validation ([`check_id`]) and
//! for the README's table ([`markdown_table`]).

pub(crate) mod attempts;
pub(crate) mod budget;
pub(crate) mod count_argument;
pub(crate) mod count_default;
pub(crate) mod count_unlinked;
pub(crate) mod jitter;
pub(crate) mod methods;
pub(crate) mod retry_after;
pub(crate) mod setter_discarded;
pub(crate) mod timeout;
pub(crate) mod unbounded;

use crate::finding::{Kind, KindDoc, Severity};

use super::libs::LIBRARIES;
use super::policy::{Lib, Policy};

/// The source of timeout findings: the client a retry uses.
pub(crate) const CLIENT: &str = "client";
/// The source of a dropped setter whose builder's library cannot be told.
pub(crate) const BUILDER: &str = "builder";
/// The source of a named value (a `const`, a field's value) that no
/// modelled retry reads.
pub(crate) const VALUE: &str = "value";

/// What a check's ids start with, after `rust/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Applies {
    /// Every retry policy: each library's id, and `loop`.
    Policies,
    /// Timeouts: `client` only.
    Clients,
    /// Dropped setters: each library with by-value setters, and `builder`.
    Builders,
    /// Named values no retry site is linked to: `value` only.
    Values,
}

/// One check of the Rust analyzer (README, "Rust checks"), declared as a
/// `CHECK` constant in its own file.
#[derive(Debug)]
pub(crate) struct RustCheck {
    /// The end of the rule id: `rust/<source>-<name>`.
    pub(crate) name: &'static str,
    /// The finding kinds this check reports.
    pub(crate) kinds: &'static [Kind],
    /// Which sources its ids start with.
    pub(crate) applies: Applies,
    pub(crate) doc: KindDoc,
}

/// Checks are told apart by name (names are unique, see the tests).
impl PartialEq for RustCheck {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for RustCheck {}

/// Every check, in the order of the README's table.
pub(crate) static ALL: &[&RustCheck] = &[
    &attempts::CHECK,
    &budget::CHECK,
    &unbounded::CHECK,
    &jitter::CHECK,
    &retry_after::CHECK,
    &methods::CHECK,
    &timeout::CHECK,
    &setter_discarded::CHECK,
    &count_unlinked::CHECK,
    &count_argument::CHECK,
];

/// One decided change, before it is placed in a file as a finding.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Change {
    pub(crate) kind: Kind,
    pub(crate) severity: Severity,
    /// The check that decided it; the finding's rule is `check.rule(<lib>)`.
    pub(crate) check: &'static RustCheck,
    pub(crate) message: String,
    pub(crate) base: Option<serde_json::Value>,
    pub(crate) head: Option<serde_json::Value>,
}

impl Change {
    /// A change of `kind` at its default severity, with no facts attached.
    pub(crate) fn new(kind: Kind, check: &'static RustCheck, message: String) -> Change {
        Change { kind, severity: kind.default_severity(), check, message, base: None, head: None }
    }
}

/// Compares a head retry site's policy with its base counterpart (`None`:
/// the site is new), check by check, in the order findings are listed.
pub(crate) fn compare_sites(base: Option<&Policy>, head: &Policy) -> Vec<Change> {
    let mut out = Vec::new();
    out.extend(attempts::decide(base, head));
    out.extend(unbounded::decide(base, head));
    out.extend(budget::decide(base, head));
    out.extend(jitter::decide(base, head));
    out.extend(retry_after::decide(base, head));
    out.extend(methods::decide(base, head));
    out
}

impl RustCheck {
    /// The rule id of a finding of this check at a site of `source` (a
    /// library id, [`CLIENT`] or [`BUILDER`]). Debug builds assert that the
    /// id is one of [`all_ids`], so the analyzer cannot invent one.
    pub(crate) fn rule(&self, source: &str) -> String {
        debug_assert!(
            self.sources().contains(&source),
            "rust/{source}-{} is not a declared check id",
            self.name
        );
        format!("rust/{source}-{}", self.name)
    }

    /// The sources this check's ids start with, in the registry's order.
    pub(crate) fn sources(&self) -> Vec<&'static str> {
        match self.applies {
            Applies::Policies => policy_sources().chain([Lib::HAND_ROLLED.id()]).collect(),
            Applies::Clients => vec![CLIENT],
            Applies::Values => vec![VALUE],
            Applies::Builders => LIBRARIES
                .iter()
                .filter(|l| !l.by_value_setters().is_empty())
                .flat_map(|l| l.libs().iter().map(|x| x.id()))
                .chain([BUILDER])
                .collect(),
        }
    }

    /// The id pattern of the README's table: `rust/<lib>-jitter`.
    pub(crate) fn pattern(&self) -> String {
        let source = match self.applies {
            Applies::Policies => "<lib>",
            Applies::Clients => CLIENT,
            Applies::Values => VALUE,
            Applies::Builders => "<lib>",
        };
        format!("rust/{source}-{}", self.name)
    }
}

fn policy_sources() -> impl Iterator<Item = &'static str> {
    LIBRARIES.iter().flat_map(|l| l.libs().iter().map(|x| x.id()))
}

/// One rule id the Rust analyzer can emit, with its check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RustCheckId {
    pub(crate) id: String,
    pub(crate) check: &'static RustCheck,
}

impl RustCheckId {
    /// One line of `retrygate rules list`, in the rule packs' columns: id,
    /// finding kinds, severity (the most severe a finding of it can have),
    /// language.
    pub fn list_line(&self) -> String {
        let kinds: Vec<&str> = self.check.kinds.iter().map(|k| k.id()).collect();
        let severity = self.check.kinds.iter().map(|k| k.default_severity()).max().unwrap_or(Severity::Error);
        format!("{:<44} {:<22} {:<8} rust", self.id, kinds.join(","), severity.as_str())
    }
}

/// Every rule id the Rust analyzer can emit, check by check.
pub fn all_ids() -> Vec<RustCheckId> {
    ALL.iter()
        .flat_map(|c| c.sources().into_iter().map(move |s| RustCheckId { id: c.rule(s), check: c }))
        .collect()
}

/// Whether `id` is a Rust check id; for an unknown `rust/...` id, the
/// nearest known one (for "did you mean"). Ids outside `rust/` are not the
/// Rust analyzer's and pass.
pub(crate) fn check_id(id: &str) -> Result<(), String> {
    if !id.starts_with("rust/") {
        return Ok(());
    }
    let all = all_ids();
    if all.iter().any(|c| c.id == id) {
        return Ok(());
    }
    let nearest =
        all.iter().min_by_key(|c| edit_distance(&c.id, id)).map(|c| c.id.clone()).unwrap_or_default();
    Err(nearest)
}

/// The `retrygate explain` text of a Rust check id, or `None` when `id` is
/// not one.
pub fn explain(id: &str) -> Option<String> {
    let c = all_ids().into_iter().find(|c| c.id == id)?.check;
    let d = c.doc;
    let kinds: Vec<&str> = c.kinds.iter().map(|k| k.id()).collect();
    Some(format!(
        "{id} (finding kinds: {})\n  What it flags: {}\n  Why it matters: {}\n  Example: {}\n  Use instead: {}\n\n",
        kinds.join(", "),
        d.what,
        d.why,
        d.example,
        d.use_instead
    ))
}

/// The README's table of Rust checks (between `<!-- rust-checks:start -->`
/// and `<!-- rust-checks:end -->`), generated from the declarations.
pub fn markdown_table() -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = String::from(
        "| check | kinds | applies to | What it flags | Why it matters | Example | Use instead |\n|---|---|---|---|---|---|---|\n",
    );
    for c in ALL {
        let d = c.doc;
        let kinds: Vec<String> = c.kinds.iter().map(|k| format!("`{}`", k.id())).collect();
        let applies = c.sources().join(", ");
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | `{}` | {} |\n",
            c.pattern(),
            kinds.join(", "),
            applies,
            cell(d.what),
            cell(d.why),
            cell(d.example),
            cell(d.use_instead)
        ));
    }
    out
}

/// Levenshtein distance over bytes (ids are ASCII).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, x) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, y) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(x != y)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// What the checks' unit tests share.
#[cfg(test)]
pub(crate) mod testing {
    use super::Change;
    use crate::analyze::rust::policy::{Attempts, Fact, Lib, Policy};
    use crate::finding::Kind;

    /// A policy of `lib` with these attempts and jitter, and the library's
    /// neutral values for everything else.
    pub(crate) fn policy(lib: Lib, attempts: Attempts, jitter: Option<bool>) -> Policy {
        Policy::new(lib, Fact::new(attempts, "test"), Fact::new(jitter, "test"))
    }

    pub(crate) fn kinds(c: &[Change]) -> Vec<Kind> {
        c.iter().map(|c| c.kind).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_names_are_unique_and_each_check_is_listed_once() {
        let mut names: Vec<&str> = ALL.iter().map(|c| c.name).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "two checks share a name");
    }

    #[test]
    fn the_documented_ids_are_known_and_unique() {
        let all = all_ids();
        for id in [
            "rust/backon-jitter",
            "rust/loop-attempts",
            "rust/client-timeout",
            "rust/builder-setter-discarded",
        ] {
            assert!(all.iter().any(|c| c.id == id), "{id}");
            assert_eq!(check_id(id), Ok(()));
        }
        let mut ids: Vec<&str> = all.iter().map(|c| c.id.as_str()).collect();
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n, "an id is declared twice");
        assert!(!ids.contains(&"rust/loop-timeout") && !ids.contains(&"rust/client-jitter"));
        assert!(!ids.contains(&"rust/octocrab-setter-discarded"), "octocrab has no by-value setters");
        assert!(ids.contains(&"rust/tower-budget-budget") && ids.contains(&"rust/tower-retry-attempts"));
    }

    #[test]
    fn unknown_rust_ids_get_the_nearest_known_one() {
        assert_eq!(check_id("rust/backon-jiter"), Err("rust/backon-jitter".into()));
        assert_eq!(check_id("rust/loop-attempt"), Err("rust/loop-attempts".into()));
        assert_eq!(check_id("rust/client-timeouts"), Err("rust/client-timeout".into()));
        assert!(check_id("rust/x").is_err());
        assert_eq!(check_id("python-retry-without-jitter"), Ok(()), "rule-pack ids are not checked here");
    }

    #[test]
    fn every_check_has_docs_kinds_and_a_readme_row() {
        let table = markdown_table();
        for c in ALL {
            let d = c.doc;
            assert!(![d.what, d.why, d.example, d.use_instead].iter().any(|s| s.is_empty()), "{c:?}");
            assert!(!c.kinds.is_empty());
            assert!(table.contains(&format!("`{}`", c.pattern())), "{c:?}");
        }
        assert_eq!(table.lines().count(), ALL.len() + 2);
    }

    #[test]
    fn explain_covers_rust_ids_only() {
        let text = explain("rust/backon-jitter").unwrap();
        assert!(
            text.starts_with("rust/backon-jitter (finding kinds: jitter-removed, retry-without-jitter)"),
            "{text}"
        );
        assert!(text.contains("Use instead: backon::ExponentialBuilder::default().with_jitter()"), "{text}");
        assert!(explain("rust/backon-jiter").is_none());
        assert!(explain("jitter-removed").is_none());
    }

    #[test]
    fn list_lines_name_the_id_kinds_and_worst_severity() {
        let jitter = all_ids().into_iter().find(|c| c.id == "rust/loop-jitter").unwrap();
        let line = jitter.list_line();
        assert!(line.starts_with("rust/loop-jitter "), "{line}");
        assert!(line.contains(" jitter-removed,retry-without-jitter error "), "{line}");
        assert!(line.ends_with(" rust"), "{line}");
    }

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
