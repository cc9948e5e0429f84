//! The one currency of the pipeline: [`Finding`], its [`Kind`] and [`Severity`],
//! and the [`Note`]s that say what could not be analysed.
//!
//! Every analyzer (the syn-based Rust analyzer, the YAML rule packs) and every
//! policy step produces `Finding`s; every reporter consumes them. The set of
//! kinds is fixed (README, "Finding kinds") and each kind carries its own documentation
//! (What it flags / Why it matters / Example / Use instead), from which the
//! README table and `retrygate explain` are checked and rendered.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How much a finding weighs in the verdict. Only `Error` blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Information only.
    Note,
    /// Worth a look; never blocks.
    Warning,
    /// Blocks the merge unless the evidence or a sign-off covers it.
    Error,
}

impl Severity {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Severity> {
        match s {
            "note" => Some(Severity::Note),
            "warning" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            _ => None,
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The documentation every finding kind carries, in Clippy's shape.
#[derive(Debug, Clone, Copy)]
pub struct KindDoc {
    /// What the kind reports.
    pub what: &'static str,
    /// Why it matters under load.
    pub why: &'static str,
    /// A change that it reports.
    pub example: &'static str,
    /// What to write instead.
    pub use_instead: &'static str,
}

macro_rules! declare_kinds {
    ($(
        $(#[doc = $summary:literal])*
        $variant:ident = $id:literal, $default:ident {
            what: $what:literal,
            why: $why:literal,
            example: $example:literal,
            use_instead: $use_instead:literal $(,)?
        }
    )*) => {
        /// The fixed set of finding kinds (README, "Finding kinds").
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub enum Kind {
            $( $(#[doc = $summary])* #[serde(rename = $id)] $variant, )*
        }

        impl Kind {
            /// Every kind, in the order of the README's table.
            pub const ALL: &'static [Kind] = &[$(Kind::$variant),*];

            /// The stable id used in JSON, SARIF and rule files.
            pub fn id(self) -> &'static str {
                match self { $(Kind::$variant => $id,)* }
            }

            /// The severity a finding of this kind has unless a rule says otherwise.
            pub fn default_severity(self) -> Severity {
                match self { $(Kind::$variant => Severity::$default,)* }
            }

            /// The kind's What/Why/Example/Use-instead text.
            pub fn doc(self) -> KindDoc {
                match self {
                    $(Kind::$variant => KindDoc {
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

declare_kinds! {
    /// The base had jitter and the head has none.
    JitterRemoved = "jitter-removed", Error {
        what: "A retry policy that had jitter in the base (set explicitly, or by the library's default) has none in the head.",
        why: "Without jitter every client that failed together retries together: the retries arrive in synchronised waves that keep an overloaded dependency down. With 100 contending clients, full jitter cuts the calls made by more than half (Brooker, AWS Architecture Blog, 2015).",
        example: "backoff::ExponentialBackoff::default()  ->  backon::ExponentialBuilder::default()   (backon does not jitter unless asked)",
        use_instead: "backon::ExponentialBuilder::default().with_jitter()",
    }
    /// The attempt budget grew.
    RetryCountRaised = "retry-count-raised", Error {
        what: "The number of attempts a retry policy may make grew between base and head (counts normalised to total attempts).",
        why: "Retries multiply load exactly when the dependency is least able to take it: five layers of 3 attempts turn one request into 3^5 = 243 at the bottom (AWS Builders' Library). Google SRE recommends at most 3 attempts per request.",
        example: "const MAX_RETRIES: u32 = 2;  ->  const MAX_RETRIES: u32 = 6;   (3 -> 7 attempts)",
        use_instead: "Keep the attempt budget at 3 or fewer and add a retry budget (e.g. tower's TpsBudget) instead of more attempts.",
    }
    /// A retry now covers a non-idempotent request.
    RetryNonIdempotent = "retry-non-idempotent", Error {
        what: "A retry now covers a request whose method is not idempotent (POST, PATCH, or a method the analyzer cannot see) and that sends no Idempotency-Key, or a configuration now allows retrying such methods.",
        why: "A 429 or a timeout does not say whether the server acted. Re-sending a POST can charge a card twice. RFC 9110 9.2.2: a client SHOULD NOT automatically retry a non-idempotent request.",
        example: "for _ in 0..=3 { match client.post(\"/checkout\").json(&order).send() { .. } }",
        use_instead: "Retry only GET/HEAD/PUT/DELETE, or send the same Idempotency-Key header on every attempt of the POST.",
    }
    /// A timeout on a retried call went down.
    TimeoutLowered = "timeout-lowered", Error {
        what: "A per-attempt or total timeout on a retried call, or on the client a retry uses, went down.",
        why: "A shorter timeout turns slow answers into failures, and failures into retries: the load on a struggling dependency rises at the moment it slows down.",
        example: ".timeout(Duration::from_millis(2500))  ->  .timeout(Duration::from_millis(800))",
        use_instead: "Keep the timeout above the dependency's p99 latency; shorten it only together with a lower attempt budget.",
    }
    /// Retry-After handling was removed or disabled.
    RetryAfterIgnored = "retry-after-ignored", Error {
        what: "Code that honoured the server's Retry-After header was removed or disabled.",
        why: "Retry-After is the server telling clients when it can take traffic again. A client that ignores it retries into the rate limit and extends the outage (RFC 9110 10.2.3, RFC 6585 4).",
        example: "(|| fetch()).retry(b).adjust(|e, d| e.retry_after().or(d))  ->  (|| fetch()).retry(b)",
        use_instead: "Keep reading Retry-After and wait at least that long, with jitter on top.",
    }
    /// A bounded retry became unbounded.
    RetryUnbounded = "retry-unbounded", Error {
        what: "A retry policy that had a limit on attempts or time has none in the head.",
        why: "An unbounded retry never gives up: during an outage every caller keeps a request in flight forever and the dependency never sees the load drop.",
        example: "ExponentialBuilder::default().with_max_times(3)  ->  ExponentialBuilder::default().without_max_times()",
        use_instead: "Bound the retry by attempts (with_max_times) or by total time (with_total_delay).",
    }
    /// Retries across layers multiply past the limit.
    RetryAmplified = "retry-amplified", Error {
        what: "The worst-case attempts one inbound request can cause at a dependency, multiplied across the layers the repository declares (client, SDK, mesh route, proxy), grew past limits.max_amplification (default 3) through two or more retrying layers.",
        why: "Retries at several layers multiply: a client making 4 attempts through a mesh route of 3 and a proxy of 2 sends 24 requests to a struggling dependency for one user request. Google's SRE book and the AWS Builders' Library both advise retrying at one layer only.",
        example: "mesh/payments.yaml adds  retries: { attempts: 2 }  under a client making 3 attempts  (3 -> 9 attempts per request)",
        use_instead: "Retry at one layer only, or bound the other layers with a retry budget (tower's TpsBudget, Envoy's retry_budget, Linkerd's retryBudget).",
    }
    /// A retry allows more attempts than the base config's ceiling.
    RetryOverLimit = "retry-over-limit", Error {
        what: "A retry policy in the head allows more attempts than limits.max_attempts in the base config, whether the pull request raised it or wrote it new.",
        why: "The ceiling is the attempt budget the maintainers chose for every retry in the repository; a new loop over it multiplies load on a failing dependency as much as a raised one does.",
        example: "limits: { max_attempts: 3 }  with a new  for attempt in 0..=6 { .. }   (7 attempts)",
        use_instead: "Keep the retry within the ceiling, or change limits.max_attempts in its own reviewed pull request.",
    }
    /// A retry builder's setter result is dropped.
    SettingDiscarded = "setting-discarded", Error {
        what: "A by-value retry builder setter is called as a statement and its result dropped, so the setting never takes effect.",
        why: "backon's and retry-policies' builders are Copy and not #[must_use]: `builder.with_jitter();` compiles and does nothing (kube-rs/kube#1896).",
        example: "let b = ExponentialBuilder::default(); b.with_jitter(); Retryable::retry(op, b)",
        use_instead: "let b = ExponentialBuilder::default().with_jitter();",
    }
    /// New retry code with no jitter.
    RetryWithoutJitter = "retry-without-jitter", Warning {
        what: "A retry site that is new in the head and retries without jitter.",
        why: "Fixed or purely exponential delays synchronise clients that failed together; jitter spreads them out.",
        example: "for _ in 0..3 { if let Ok(r) = get() { return Ok(r) } sleep(Duration::from_millis(100)) }",
        use_instead: "Add full jitter: sleep(rand(0, min(cap, base * 2^n))), or the library's jitter setting.",
    }
    /// The PR edits retrygate's own config, rules or workflow.
    GateConfigChanged = "gate-config-changed", Error {
        what: "The pull request edits retrygate's configuration, its rule folders, a workflow that runs retrygate, or a workflow whose token may write check runs or statuses (it could forge the gate's check).",
        why: "A PR must not be able to weaken its own gate; the policy is read from the base and changes to it need a maintainer's sign-off.",
        example: ".github/retrygate.yml: mode: enforce  ->  mode: advisory",
        use_instead: "Change the gate in a separate, human-reviewed pull request.",
    }
    /// An agent PR touches a protected path.
    ProtectedPath = "protected-path", Error {
        what: "A pull request written by a coding agent changes a file under one of the configured protected paths.",
        why: "Protected paths hold code whose mistakes reach customers (payment, infrastructure, shared clients); a person has to look before it merges.",
        example: "an agent PR that edits clients/retry_policy.py while protected_paths lists clients/",
        use_instead: "Ask a maintainer to review and sign off on the head commit (/retrygate sign-off <full head SHA>).",
    }
}

impl Kind {
    /// The kind whose id is `id` (`retry-count-raised`), if any.
    pub fn parse(id: &str) -> Option<Kind> {
        Kind::ALL.iter().copied().find(|k| k.id() == id)
    }
}

/// The README's finding-kind table, generated from the kinds' own docs (a
/// test checks the README holds exactly this text between its markers).
pub fn kinds_markdown_table() -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = String::from(
        "| kind | default | What it flags | Why it matters | Example | Use instead |\n|---|---|---|---|---|---|\n",
    );
    for k in Kind::ALL {
        let d = k.doc();
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | `{}` | {} |\n",
            k.id(),
            k.default_severity(),
            cell(d.what),
            cell(d.why),
            cell(d.example),
            cell(d.use_instead)
        ));
    }
    out
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// One problem found in the change. The JSON form is a stable interface
/// (see the README, "JSON output").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// What kind of regression it is.
    pub kind: Kind,
    /// Which check produced it: `rust/<crate>-<what>` for the Rust analyzer,
    /// the rule id for rule packs, `policy/<what>` for the gate.
    pub rule: String,
    /// Whether it blocks (`error`) or informs.
    pub severity: Severity,
    /// Repository-relative path with `/` separators (the head path; the base
    /// path for a deleted file).
    pub path: String,
    /// First head line it is about (1-based).
    pub line: u32,
    /// Last head line it is about (inclusive; equal to `line` for one line).
    pub end_line: u32,
    /// What changed and what it does, in one line.
    pub message: String,
    /// What the base had, when there was something to compare.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) base: Option<serde_json::Value>,
    /// What the head has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) head: Option<serde_json::Value>,
    /// An edit of the head that puts back what the base had, when the
    /// analyzer is sure of it (README, "One-click fixes").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<Fix>,
}

/// A machine-applicable edit: head lines `line..=end_line`, whole, are
/// replaced by `replacement`. The same edit becomes a SARIF `fix` and a
/// GitHub `suggestion` block, so it is expressed in whole lines, the unit
/// both of those replace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fix {
    /// What the edit does, in a few words ("put back the base's count").
    pub description: String,
    /// First head line replaced (1-based).
    pub line: u32,
    /// Last head line replaced (inclusive).
    pub end_line: u32,
    /// The new text of those lines, without the newline that ends the last.
    pub replacement: String,
}

impl Finding {
    /// A finding of `kind` at one line, with the kind's default severity
    /// and no message yet; the builder methods below fill in the rest.
    pub fn new(kind: Kind, rule: impl Into<String>, path: impl Into<String>, line: u32) -> Self {
        Finding {
            kind,
            rule: rule.into(),
            severity: kind.default_severity(),
            path: path.into(),
            line,
            end_line: line,
            message: String::new(),
            base: None,
            head: None,
            fix: None,
        }
    }

    /// Sets the one-line message.
    pub fn message(mut self, m: impl Into<String>) -> Self {
        self.message = m.into();
        self
    }

    /// Sets the line range (an `end_line` before `line` becomes `line`).
    pub fn lines(mut self, line: u32, end_line: u32) -> Self {
        self.line = line;
        self.end_line = end_line.max(line);
        self
    }

    /// Overrides the kind's default severity.
    pub fn severity(mut self, s: Severity) -> Self {
        self.severity = s;
        self
    }

    /// Records what the base had (shown as `base` in the JSON).
    pub fn base(mut self, v: serde_json::Value) -> Self {
        self.base = Some(v);
        self
    }

    /// Records what the head has (shown as `head` in the JSON).
    pub fn head(mut self, v: serde_json::Value) -> Self {
        self.head = Some(v);
        self
    }

    /// Attaches a one-click fix.
    pub fn fix(mut self, fix: Fix) -> Self {
        self.fix = Some(fix);
        self
    }

    pub(crate) fn is_blocking(&self) -> bool {
        self.severity == Severity::Error
    }

    /// `path:line` or `path:line-end` for people; line 0 means the whole file.
    pub(crate) fn location(&self) -> String {
        if self.line == 0 {
            self.path.clone()
        } else if self.end_line > self.line {
            format!("{}:{}-{}", self.path, self.line, self.end_line)
        } else {
            format!("{}:{}", self.path, self.line)
        }
    }

    /// A blocking finding about retry behaviour, as opposed to one of the
    /// policy's own (the gate's config changed, a protected path touched):
    /// what the comment, the reasons and `scan` count as "retry regressions".
    pub(crate) fn is_retry_regression(&self) -> bool {
        self.is_blocking() && !matches!(self.kind, Kind::GateConfigChanged | Kind::ProtectedPath)
    }

    /// Ordering used by every reporter: by path, line, then kind.
    pub(crate) fn sort_key(&self) -> (&str, u32, Kind, &str) {
        (&self.path, self.line, self.kind, &self.rule)
    }
}

/// Keeps one finding per path, line and kind: the most severe, and among
/// equally severe ones the first in the input (the sort is stable). Two rules that say the same thing about a line must not
/// lose the blocking one because the other was loaded first. The result is
/// in [`Finding::sort_key`] order.
pub(crate) fn keep_most_severe(findings: &mut Vec<Finding>) {
    findings.sort_by(|a, b| {
        (a.path.as_str(), a.line, a.kind)
            .cmp(&(b.path.as_str(), b.line, b.kind))
            .then(b.severity.cmp(&a.severity))
    });
    findings.dedup_by(|later, first| {
        later.path == first.path && later.line == first.line && later.kind == first.kind
    });
    findings.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
}

/// Something the scan could not do, or chose not to do, said out loud.
///
/// A `blocking` note means findings may be missing (a source file that could
/// not be parsed, or was too large to read): it blocks like an error finding,
/// because a gate that cannot see must not pass (fail closed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    /// The file it is about, or `None` for the change as a whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// What was not done, and what to do about it.
    pub message: String,
    /// Whether it blocks like an error finding.
    pub blocking: bool,
}

impl Note {
    /// A note that only informs.
    pub fn info(path: Option<&str>, message: impl Into<String>) -> Self {
        Note { path: path.map(str::to_owned), message: message.into(), blocking: false }
    }

    /// A note that blocks: something that could change the verdict was not seen.
    pub fn blocking(path: Option<&str>, message: impl Into<String>) -> Self {
        Note { path: path.map(str::to_owned), message: message.into(), blocking: true }
    }
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(p) => write!(f, "{p}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_kind_same_line_keeps_the_most_severe() {
        let warn = Finding::new(Kind::RetryUnbounded, "a/first", "src/x.rs", 7).severity(Severity::Warning);
        let err = Finding::new(Kind::RetryUnbounded, "b/second", "src/x.rs", 7);
        let other_line =
            Finding::new(Kind::RetryUnbounded, "a/first", "src/x.rs", 8).severity(Severity::Warning);
        let other_kind = Finding::new(Kind::JitterRemoved, "a/first", "src/x.rs", 7);
        let mut v = vec![warn.clone(), err.clone(), other_line.clone(), other_kind.clone()];
        keep_most_severe(&mut v);
        assert_eq!(v.len(), 3, "{v:?}");
        assert!(v
            .iter()
            .any(|f| f.kind == Kind::RetryUnbounded && f.line == 7 && f.severity == Severity::Error));
        assert!(v.contains(&other_line) && v.contains(&other_kind));
        // The order the rules came in does not matter.
        let mut w = vec![err, warn];
        keep_most_severe(&mut w);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].severity, Severity::Error);
    }

    #[test]
    fn kind_ids_round_trip_and_match_serde() {
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.id()), Some(*k));
            let json = serde_json::to_string(k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.id()));
        }
        assert_eq!(Kind::ALL.len(), 12);
        assert_eq!(Kind::parse("no-such-kind"), None);
    }

    #[test]
    fn every_kind_is_documented() {
        for k in Kind::ALL {
            let d = k.doc();
            for (field, text) in
                [("what", d.what), ("why", d.why), ("example", d.example), ("use_instead", d.use_instead)]
            {
                assert!(text.len() > 20, "{k}: {field} too short");
            }
        }
    }

    #[test]
    fn only_warning_by_default_is_retry_without_jitter() {
        let warnings: Vec<_> = Kind::ALL.iter().filter(|k| k.default_severity() != Severity::Error).collect();
        assert_eq!(warnings, vec![&Kind::RetryWithoutJitter]);
    }
}
