//! The Rust analyzer's checks, declared once: each check's id suffix, the
//! finding kinds it reports, what it applies to, and its documentation in
//! Clippy's shape (What it flags / Why it matters / Example / Use instead).
//!
//! A finding's rule id is `rust/<source>-<check>`: the source is the retry
//! library whose policy changed (its id in [`super::libs::LIBRARIES`]),
//! `loop` for a hand-written loop, `client` for a timeout, `builder` for a
//! dropped setter whose library cannot be told (`rust/backon-jitter`,
//! `rust/loop-attempts`, `rust/client-timeout`). The analyzer builds ids only
//! through [`Check::rule`]; [`all_ids`] lists every id it can emit, for
//! `retrygate rules list`, for `rules.disable` validation ([`check_id`]) and
//! for the README's table ([`markdown_table`]).

use crate::finding::{Kind, KindDoc, Severity};

use super::libs::LIBRARIES;
use super::policy::Lib;

/// The source of timeout findings: the client a retry uses.
pub(crate) const CLIENT: &str = "client";
/// The source of a dropped setter whose builder's library cannot be told.
pub(crate) const BUILDER: &str = "builder";

/// What a check's ids start with, after `rust/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Applies {
    /// Every retry policy: each library's id, and `loop`.
    Policies,
    /// Timeouts: `client` only.
    Clients,
    /// Dropped setters: each library with by-value setters, and `builder`.
    Builders,
}

macro_rules! declare_checks {
    ($(
        $(#[doc = $summary:literal])*
        $variant:ident = $suffix:literal, [$($kind:ident),+], $applies:ident {
            what: $what:literal,
            why: $why:literal,
            example: $example:literal,
            use_instead: $use_instead:literal $(,)?
        }
    )*) => {
        /// The checks of the Rust analyzer (README, "Rust checks").
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub(crate) enum Check {
            $( $(#[doc = $summary])* $variant, )*
        }

        impl Check {
            /// Every check, in the order of the README's table.
            pub(crate) const ALL: &'static [Check] = &[$(Check::$variant),*];

            /// The end of the rule id: `rust/<source>-<suffix>`.
            pub(crate) fn suffix(self) -> &'static str {
                match self { $(Check::$variant => $suffix,)* }
            }

            /// The finding kinds this check reports.
            pub(crate) fn kinds(self) -> &'static [Kind] {
                match self { $(Check::$variant => &[$(Kind::$kind),+],)* }
            }

            /// Which sources its ids start with.
            pub(crate) fn applies(self) -> Applies {
                match self { $(Check::$variant => Applies::$applies,)* }
            }

            pub(crate) fn doc(self) -> KindDoc {
                match self {
                    $(Check::$variant => KindDoc {
                        what: $what,
                        why: $why,
                        example: $example,
                        use_instead: $use_instead,
                    },)*
                }
            }
        }
    };
}

declare_checks! {
    /// The attempt count or time budget grew.
    Attempts = "attempts", [RetryCountRaised], Policies {
        what: "A retry policy may make more attempts (counts normalised to total attempts), or retry for longer (a time-bounded policy), in the head than in the base.",
        why: "Every extra attempt is extra load at the moment the dependency is failing; layered retries multiply (3 attempts at each of 5 layers is 243 calls at the bottom).",
        example: "ExponentialBuilder::default().with_max_times(2)  ->  .with_max_times(6)",
        use_instead: "Keep the attempt count (3 total or fewer) and bound the load with a retry budget instead.",
    }
    /// A retry budget grew.
    Budget = "budget", [RetryCountRaised], Policies {
        what: "A retry budget (tower's `TpsBudget`, reqwest's `max_extra_load`) allows a larger share of retries in the head, or was removed (`no_budget()`).",
        why: "A budget is what stops retries from multiplying load during an outage; raising it lets retries take more of the dependency's capacity.",
        example: "retry::for_host(host).max_extra_load(0.2)  ->  .no_budget()",
        use_instead: "Keep the budget at 10-20% of requests.",
    }
    /// A bound on attempts disappeared, or a new retry has none.
    Unbounded = "unbounded", [RetryUnbounded], Policies {
        what: "A retry policy that had a limit on attempts or time has none in the head (an error); a new retry has no limit (a warning; the gate's `limits.max_attempts` makes it block).",
        why: "An unbounded retry never gives up: during an outage every caller keeps a request in flight and the dependency never sees the load drop.",
        example: "FixedInterval::from_millis(100).take(3)  ->  FixedInterval::from_millis(100)",
        use_instead: "Bound it: `.take(3)`, `.with_max_times(3)`, or a total time limit.",
    }
    /// Jitter was lost, or a new retry has none.
    Jitter = "jitter", [JitterRemoved, RetryWithoutJitter], Policies {
        what: "The base policy jittered its delays and the head's does not (an error), or a new retry with more than one attempt has no jitter (a warning).",
        why: "Without jitter, clients that failed together retry together, in waves that keep an overloaded dependency down.",
        example: "backoff::ExponentialBackoff::default()  ->  backon::ExponentialBuilder::default()",
        use_instead: "backon::ExponentialBuilder::default().with_jitter()",
    }
    /// Retry-After was honoured and no longer is.
    RetryAfter = "retry-after", [RetryAfterIgnored], Policies {
        what: "The base read the server's Retry-After (`.adjust(..)`, `Error::retry_after`, a loop reading the header) and the head does not.",
        why: "Retry-After is the server saying when it can take traffic again; ignoring it retries into the rate limit.",
        example: "(|| fetch()).retry(b).adjust(|e, d| e.retry_after().or(d))  ->  (|| fetch()).retry(b)",
        use_instead: "Keep reading Retry-After and wait at least that long.",
    }
    /// A retry now covers a write with no Idempotency-Key.
    Methods = "methods", [RetryNonIdempotent], Policies {
        what: "A retry now covers a POST/PATCH request with no Idempotency-Key (an error), a request whose method cannot be told (a warning), or a write it retried only after a refusal (429/401) and now also after 5xx or timeouts.",
        why: "A timeout or 5xx does not say whether the server applied the write; repeating it can charge twice.",
        example: "RetryTransientMiddleware::new_with_policy(p) on a client that sends POST /orders",
        use_instead: "Retry only idempotent methods, or send the same Idempotency-Key on every attempt.",
    }
    /// A timeout went down in a file that retries.
    Timeout = "timeout", [TimeoutLowered], Clients {
        what: "A request or operation timeout (`.timeout(..)`, `connect_timeout`, `read_timeout`, `operation_timeout`, `tokio::time::timeout`, ...) went down in a file with retry code.",
        why: "A shorter timeout turns slow answers into failures, and failures into retries, when the dependency slows down.",
        example: ".timeout(Duration::from_millis(2500))  ->  .timeout(Duration::from_millis(800))",
        use_instead: "Keep the timeout above the dependency's p99 latency.",
    }
    /// A by-value setter's result is dropped.
    SetterDiscarded = "setter-discarded", [SettingDiscarded], Builders {
        what: "A builder setter that returns a new builder is called as a statement (`builder.with_jitter();`), so the setting never takes effect.",
        why: "The code reads as if the policy jitters (or is bounded) but it does not; reviewers trust what they read.",
        example: "let b = ExponentialBuilder::default(); b.with_jitter();",
        use_instead: "let b = ExponentialBuilder::default().with_jitter();",
    }
}

impl Check {
    /// The rule id of a finding of this check at a site of `source` (a
    /// library id, [`CLIENT`] or [`BUILDER`]). Debug builds assert that the
    /// id is one of [`all_ids`], so the analyzer cannot invent one.
    pub(crate) fn rule(self, source: &str) -> String {
        debug_assert!(
            self.sources().contains(&source),
            "rust/{source}-{} is not a declared check id",
            self.suffix()
        );
        format!("rust/{source}-{}", self.suffix())
    }

    /// The sources this check's ids start with, in the registry's order.
    pub(crate) fn sources(self) -> Vec<&'static str> {
        match self.applies() {
            Applies::Policies => policy_sources().chain([Lib::HAND_ROLLED.id()]).collect(),
            Applies::Clients => vec![CLIENT],
            Applies::Builders => LIBRARIES
                .iter()
                .filter(|l| !l.by_value_setters().is_empty())
                .flat_map(|l| l.libs().iter().map(|x| x.id()))
                .chain([BUILDER])
                .collect(),
        }
    }

    /// The id pattern of the README's table: `rust/<lib>-jitter`.
    pub(crate) fn pattern(self) -> String {
        let source = match self.applies() {
            Applies::Policies => "<lib>",
            Applies::Clients => CLIENT,
            Applies::Builders => "<lib>",
        };
        format!("rust/{source}-{}", self.suffix())
    }
}

fn policy_sources() -> impl Iterator<Item = &'static str> {
    LIBRARIES.iter().flat_map(|l| l.libs().iter().map(|x| x.id()))
}

/// One rule id the Rust analyzer can emit, with its check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckId {
    pub(crate) id: String,
    pub(crate) check: Check,
}

impl CheckId {
    /// One line of `retrygate rules list`, in the rule packs' columns: id,
    /// finding kinds, severity (the most severe a finding of it can have),
    /// language.
    pub fn list_line(&self) -> String {
        let kinds: Vec<&str> = self.check.kinds().iter().map(|k| k.id()).collect();
        let severity =
            self.check.kinds().iter().map(|k| k.default_severity()).max().unwrap_or(Severity::Error);
        format!("{:<44} {:<22} {:<8} rust", self.id, kinds.join(","), severity.as_str())
    }
}

/// Every rule id the Rust analyzer can emit, check by check.
pub fn all_ids() -> Vec<CheckId> {
    Check::ALL
        .iter()
        .flat_map(|c| c.sources().into_iter().map(move |s| CheckId { id: c.rule(s), check: *c }))
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
    let d = c.doc();
    let kinds: Vec<&str> = c.kinds().iter().map(|k| k.id()).collect();
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
    for c in Check::ALL {
        let d = c.doc();
        let kinds: Vec<String> = c.kinds().iter().map(|k| format!("`{}`", k.id())).collect();
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

#[cfg(test)]
mod tests {
    use super::*;

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
        for c in Check::ALL {
            let d = c.doc();
            assert!(![d.what, d.why, d.example, d.use_instead].iter().any(|s| s.is_empty()), "{c:?}");
            assert!(!c.kinds().is_empty());
            assert!(table.contains(&format!("`{}`", c.pattern())), "{c:?}");
        }
        assert_eq!(table.lines().count(), Check::ALL.len() + 2);
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
