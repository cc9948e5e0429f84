//! Replay scenarios: what the loopback server answers each client, the attempt
//! budget, and how much each check weighs.
//!
//! A scenario is a YAML file (format in `docs/replay.md`). The bundled ones
//! live in `scenarios/` and are compiled into the binary, so
//! `retrygate replay --scenario default` works from the binary alone; any
//! other value of `--scenario` is read as a file path. Unknown keys are an
//! error that names the key (`deny_unknown_fields`), because a misspelt
//! `retry_afer` silently ignored would test something else than intended.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub(crate) use super::journal::Loss;

/// The bundled scenarios, by name, as (name, YAML text).
pub const BUNDLED: &[(&str, &str)] = &[
    ("default", include_str!("../../scenarios/default.yml")),
    ("http-date", include_str!("../../scenarios/http-date.yml")),
    ("no-retry-after", include_str!("../../scenarios/no-retry-after.yml")),
    ("503", include_str!("../../scenarios/503.yml")),
    ("post", include_str!("../../scenarios/post.yml")),
    ("lost-response", include_str!("../../scenarios/lost-response.yml")),
    ("reset-after-write", include_str!("../../scenarios/reset-after-write.yml")),
    ("502-after-write", include_str!("../../scenarios/502-after-write.yml")),
    ("refused", include_str!("../../scenarios/refused.yml")),
    ("slow-response", include_str!("../../scenarios/slow-response.yml")),
    ("long-outage", include_str!("../../scenarios/long-outage.yml")),
    ("long-retry-after", include_str!("../../scenarios/long-retry-after.yml")),
];

/// The bundled scenarios' names, comma-separated, for messages and help:
/// `default, http-date, ...` (the one list is [`BUNDLED`]).
pub fn bundled_names() -> String {
    BUNDLED.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// The longest wait a scenario may ask for (`retry_after`, `ahead_s`) and the
/// longest it may hold an answer: an hour is far past any replay's timeout,
/// and keeps every sum and date of the server and the judge finite.
pub(crate) const MAX_WAIT_S: u64 = 3600;
/// The most answers a scenario may list, and the most `repeat` of one.
pub(crate) const MAX_RESPONSES: usize = 1000;
/// The largest `budget`.
pub(crate) const MAX_BUDGET: usize = 100_000;
/// The largest `body` of one answer.
pub(crate) const MAX_BODY_BYTES: usize = 64 * 1024;
/// The most extra `headers` of one answer.
pub(crate) const MAX_HEADERS: usize = 32;
/// Headers the server sets itself: a scenario says them with its own keys.
const RESERVED_HEADERS: &[&str] =
    &["content-length", "transfer-encoding", "connection", "content-type", "retry-after", "upgrade"];

/// A parsed scenario file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// One line for people; shown in the report.
    #[serde(default)]
    pub(crate) description: String,
    /// The answers each client gets, in order; the last one repeats forever.
    pub(crate) responses: Vec<ResponseSpec>,
    /// The most attempts a client may make (`attempt-budget`).
    pub(crate) budget: usize,
    /// How much each check weighs; unset checks keep their defaults.
    #[serde(default)]
    pub(crate) checks: CheckLevels,
}

/// One answer of the sequence, possibly repeated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResponseSpec {
    /// The HTTP status code, e.g. 429.
    pub(crate) status: u16,
    /// `Retry-After` in delta-seconds form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) retry_after: Option<u64>,
    /// `Retry-After` in HTTP-date form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) retry_after_date: Option<RetryAfterDate>,
    /// How many consecutive requests get this answer (default 1).
    #[serde(default = "one")]
    pub(crate) repeat: usize,
    /// Hold the answer this long, so a client with a shorter timeout gives up
    /// on it (default 0). A request sent again while the previous one is still
    /// held counts as a retry after a timeout.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) delay_ms: u64,
    /// The answer's body (default: a small JSON object for a 2xx, a line of
    /// text otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) body: Option<String>,
    /// The body's `Content-Type` (default: `application/json` for the
    /// default 2xx body, `text/plain; charset=utf-8` otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) content_type: Option<String>,
    /// Extra response headers, e.g. `{Location: /orders/1}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) headers: BTreeMap<String, String>,
    /// Whether a POST or PATCH that gets this answer is applied by the
    /// server (default: yes for a 2xx, no otherwise). `apply: true` on a
    /// 502 or a dropped answer is a write the client never learns about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) apply: Option<bool>,
    /// Never deliver the answer: after `delay_ms`, `close` the connection or
    /// `reset` it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) drop: Option<Loss>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn one() -> usize {
    1
}

/// A `Retry-After` HTTP-date: `ahead_s` seconds from the moment of the
/// answer, rounded up to a whole second (dates have 1 s resolution).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RetryAfterDate {
    pub(crate) ahead_s: u64,
    #[serde(default)]
    pub(crate) format: DateFormat,
}

/// The three HTTP-date formats a recipient must accept (RFC 9110 §5.6.7).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum DateFormat {
    /// `Sun, 06 Nov 1994 08:49:37 GMT`, the preferred format.
    #[default]
    ImfFixdate,
    /// `Sunday, 06-Nov-94 08:49:37 GMT`, obsolete.
    Rfc850,
    /// `Sun Nov  6 08:49:37 1994`, C's asctime(), obsolete.
    Asctime,
}

/// How a failed check counts: `error` fails the replay, `warning` is
/// reported only, `off` skips the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// A failure fails the replay.
    Error,
    /// A failure is reported only.
    Warning,
    /// The check is not run.
    Off,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Off => "off",
        })
    }
}

/// The weight of each check. Defaults follow docs/replay.md: giving up is a
/// warning, lockstep after an honoured Retry-After is a warning (RFC-compliant
/// clients do it), everything else is an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CheckLevels {
    #[serde(default = "warning")]
    pub(crate) recovered: Level,
    #[serde(default = "error")]
    pub(crate) attempt_budget: Level,
    #[serde(default = "error")]
    pub(crate) retry_after_honored: Level,
    /// Lockstep when the clients chose their own waits (no Retry-After, or
    /// they ignored it).
    #[serde(default = "error")]
    pub(crate) desynchronized: Level,
    /// Lockstep when every client was told a wait and honoured it.
    #[serde(default = "warning")]
    pub(crate) desynchronized_after_retry_after: Level,
    #[serde(default = "error")]
    pub(crate) no_unsafe_replay: Level,
    /// One write operation applied more than once by the server.
    #[serde(default = "error")]
    pub(crate) no_duplicate_write: Level,
    /// A request sent again after a 4xx that refused it (not 408/425/429).
    #[serde(default = "error")]
    pub(crate) no_retry_on_refusal: Level,
}

fn warning() -> Level {
    Level::Warning
}
fn error() -> Level {
    Level::Error
}

impl Default for CheckLevels {
    fn default() -> Self {
        CheckLevels {
            recovered: Level::Warning,
            attempt_budget: Level::Error,
            retry_after_honored: Level::Error,
            desynchronized: Level::Error,
            desynchronized_after_retry_after: Level::Warning,
            no_unsafe_replay: Level::Error,
            no_duplicate_write: Level::Error,
            no_retry_on_refusal: Level::Error,
        }
    }
}

/// The answer for one request, before a date is filled in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PlannedResponse<'a> {
    pub(crate) status: u16,
    pub(crate) retry_after: Option<u64>,
    pub(crate) retry_after_date: Option<&'a RetryAfterDate>,
    pub(crate) delay_ms: u64,
    pub(crate) body: Option<&'a str>,
    pub(crate) content_type: Option<&'a str>,
    pub(crate) headers: Option<&'a BTreeMap<String, String>>,
    /// A POST/PATCH that gets this answer is applied.
    pub(crate) apply: bool,
    pub(crate) drop: Option<Loss>,
}

impl PlannedResponse<'_> {
    /// What a healthy server answers.
    const OK: PlannedResponse<'static> = PlannedResponse {
        status: 200,
        retry_after: None,
        retry_after_date: None,
        delay_ms: 0,
        body: None,
        content_type: None,
        headers: None,
        apply: true,
        drop: None,
    };
}

impl Scenario {
    /// Parses and validates scenario text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<Scenario> {
        crate::yaml::check(text).map_err(|r| anyhow::anyhow!("scenario {origin}: {r}"))?;
        let scenario: Scenario = serde_yaml::from_str(text).map_err(|e| {
            anyhow::anyhow!(
                "scenario {origin}: {e}; fix the key or value (format: docs/replay.md, \"Scenario files\")"
            )
        })?;
        scenario.validate(origin)?;
        Ok(scenario)
    }

    fn validate(&self, origin: &str) -> anyhow::Result<()> {
        if self.responses.is_empty() {
            bail!("scenario {origin}: `responses` is empty; list at least one answer, e.g. `- status: 200`");
        }
        if self.responses.len() > MAX_RESPONSES {
            bail!(
                "scenario {origin}: `responses` lists {} answers, more than {MAX_RESPONSES}; use `repeat`",
                self.responses.len()
            );
        }
        if self.budget == 0 {
            bail!("scenario {origin}: `budget` is 0; a client needs at least one attempt");
        }
        if self.budget > MAX_BUDGET {
            bail!(
                "scenario {origin}: `budget` {} is over {MAX_BUDGET}; no replay needs that many attempts",
                self.budget
            );
        }
        let too_long = |field: String, value: u64, unit: &str, max: u64| {
            anyhow::anyhow!(
                "scenario {origin}: {field} is {value} {unit}, over the {max} {unit} (one hour) a replay can wait; \
                 use a smaller value"
            )
        };
        for (i, r) in self.responses.iter().enumerate() {
            if let Some(s) = r.retry_after.filter(|s| *s > MAX_WAIT_S) {
                return Err(too_long(format!("responses[{i}].retry_after"), s, "s", MAX_WAIT_S));
            }
            if let Some(d) = r.retry_after_date.as_ref().filter(|d| d.ahead_s > MAX_WAIT_S) {
                return Err(too_long(
                    format!("responses[{i}].retry_after_date.ahead_s"),
                    d.ahead_s,
                    "s",
                    MAX_WAIT_S,
                ));
            }
            if r.delay_ms > MAX_WAIT_S * 1000 {
                return Err(too_long(
                    format!("responses[{i}].delay_ms"),
                    r.delay_ms,
                    "ms",
                    MAX_WAIT_S * 1000,
                ));
            }
            if r.repeat > MAX_RESPONSES {
                bail!("scenario {origin}: responses[{i}].repeat {} is over {MAX_RESPONSES}; the last answer repeats forever anyway", r.repeat);
            }
            if let Some(b) = r.body.as_ref().filter(|b| b.len() > MAX_BODY_BYTES) {
                bail!(
                    "scenario {origin}: responses[{i}].body is {} bytes, over {MAX_BODY_BYTES}; a client's parser needs only the shape",
                    b.len()
                );
            }
            if let Some(ct) = &r.content_type {
                if hyper::header::HeaderValue::from_str(ct).is_err() {
                    bail!(
                        "scenario {origin}: responses[{i}].content_type {ct:?} is not a valid header value"
                    );
                }
            }
            if r.headers.len() > MAX_HEADERS {
                bail!(
                    "scenario {origin}: responses[{i}].headers has {} entries, more than {MAX_HEADERS}",
                    r.headers.len()
                );
            }
            for (name, value) in &r.headers {
                if hyper::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
                    bail!("scenario {origin}: responses[{i}].headers: {name:?} is not a valid header name");
                }
                if RESERVED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
                    bail!(
                        "scenario {origin}: responses[{i}].headers sets {name}, which the server sets itself; \
                         use `content_type`, `retry_after` or `body` instead"
                    );
                }
                if hyper::header::HeaderValue::from_str(value).is_err() {
                    bail!("scenario {origin}: responses[{i}].headers.{name}: {value:?} is not a valid header value");
                }
            }
            if r.drop.is_some() && (r.body.is_some() || r.content_type.is_some() || !r.headers.is_empty()) {
                bail!("scenario {origin}: responses[{i}] sets `drop` and an answer to send; a dropped answer is never sent");
            }
            if !(100..=599).contains(&r.status) {
                bail!(
                    "scenario {origin}: responses[{i}].status {} is not an HTTP status (100-599)",
                    r.status
                );
            }
            if r.retry_after.is_some() && r.retry_after_date.is_some() {
                bail!(
                    "scenario {origin}: responses[{i}] sets both `retry_after` and `retry_after_date`; keep one"
                );
            }
            if r.repeat == 0 {
                bail!("scenario {origin}: responses[{i}].repeat is 0; use 1 or more, or remove the entry");
            }
        }
        Ok(())
    }

    /// The answer to a client's `attempt`-th request (0-based): the sequence
    /// in order, then its last entry forever.
    pub(crate) fn response_for(&self, attempt: usize) -> PlannedResponse<'_> {
        let mut left = attempt;
        let mut chosen = self.responses.last();
        for r in &self.responses {
            if left < r.repeat {
                chosen = Some(r);
                break;
            }
            left -= r.repeat;
        }
        match chosen {
            Some(r) => PlannedResponse {
                status: r.status,
                retry_after: r.retry_after,
                retry_after_date: r.retry_after_date.as_ref(),
                delay_ms: r.delay_ms,
                body: r.body.as_deref(),
                content_type: r.content_type.as_deref(),
                headers: Some(&r.headers),
                apply: r.apply.unwrap_or((200..300).contains(&r.status)),
                drop: r.drop,
            },
            // validate() rejects an empty sequence; answer as a healthy server would.
            None => PlannedResponse::OK,
        }
    }

    /// The least time a perfect client must spend waiting before its first
    /// 2xx, as planned: the sum of the waits the sequence demands (dates
    /// count `ahead_s`; the report gives what the served dates asked).
    /// Saturates instead of wrapping.
    pub(crate) fn demanded_wait_ms(&self) -> u64 {
        let mut total: u64 = 0;
        for r in &self.responses {
            if (200..300).contains(&r.status) {
                break;
            }
            let each = r.retry_after.or(r.retry_after_date.as_ref().map(|d| d.ahead_s)).unwrap_or(0);
            total = total.saturating_add(each.saturating_mul(1000).saturating_mul(r.repeat as u64));
        }
        total
    }
}

/// A scenario together with where it came from and a digest of its text.
#[derive(Debug, Clone)]
pub struct LoadedScenario {
    /// The bundled name, or the file path as given.
    pub(crate) name: String,
    /// Hex SHA-256 of the exact text, so a report names what it ran.
    pub sha256: String,
    pub(crate) scenario: Scenario,
}

impl LoadedScenario {
    /// Resolves `--scenario`: a bundled name, else a path to a YAML file.
    pub(crate) fn resolve(spec: &str) -> anyhow::Result<LoadedScenario> {
        if let Some((name, text)) = BUNDLED.iter().find(|(n, _)| *n == spec) {
            return LoadedScenario::from_text(name, text);
        }
        let path = Path::new(spec);
        if !path.exists() {
            bail!(
                "unknown scenario '{spec}': not a bundled scenario ({}) and no such file; \
                 pass one of those names or a path to a YAML scenario",
                bundled_names()
            );
        }
        let text = crate::bounded::read_regular_string(path, crate::config::MAX_CONFIG_BYTES as u64)
            .context("cannot read the scenario file")?;
        LoadedScenario::from_text(spec, &text)
    }

    /// Resolves a `--scenario` list: `a,b,c` names several scenarios, run one
    /// after the other into one report. A value that is itself a bundled name
    /// or an existing file is one scenario, even with a comma in it.
    pub fn resolve_list(spec: &str) -> anyhow::Result<Vec<LoadedScenario>> {
        if BUNDLED.iter().any(|(n, _)| *n == spec) || Path::new(spec).is_file() {
            return Ok(vec![LoadedScenario::resolve(spec)?]);
        }
        let parts: Vec<&str> = spec.split(',').map(str::trim).collect();
        if parts.iter().any(|p| p.is_empty()) {
            bail!("--scenario '{spec}' has an empty name in its list; separate names with single commas, e.g. post,lost-response");
        }
        let mut out: Vec<LoadedScenario> = Vec::new();
        for p in parts {
            if out.iter().any(|l| l.name == p) {
                bail!("--scenario '{spec}' names '{p}' twice; name each scenario once");
            }
            out.push(LoadedScenario::resolve(p)?);
        }
        Ok(out)
    }

    /// The digest a report of several scenarios carries: SHA-256 over each
    /// scenario's name and text digest, one line each, in order. One
    /// scenario keeps its own text digest.
    pub fn combined_sha256(list: &[LoadedScenario]) -> String {
        match list {
            [one] => one.sha256.clone(),
            _ => {
                let mut h = Sha256::new();
                for l in list {
                    h.update(format!("{} {}\n", l.name, l.sha256).as_bytes());
                }
                hex::encode(h.finalize())
            }
        }
    }

    /// Parses `text` as the scenario called `name`.
    pub fn from_text(name: &str, text: &str) -> anyhow::Result<LoadedScenario> {
        let scenario = Scenario::parse(text, name)?;
        Ok(LoadedScenario {
            name: name.to_string(),
            sha256: hex::encode(Sha256::digest(text.as_bytes())),
            scenario,
        })
    }
}

/// The name of the scenario a differential replay adds so that both sides
/// reach their attempt caps ([`to_the_cap`]).
pub const TO_THE_CAP: &str = "to-the-cap";

/// The most failures [`to_the_cap`] sizes its outage to.
const MAX_CAP_FAILURES: usize = MAX_RESPONSES;

/// Whether the last answer of `s`, which repeats forever, is a failure: an
/// outage that never ends, so every client in it stops on its own cap.
fn ends_in_an_outage(s: &Scenario) -> bool {
    s.responses.last().is_some_and(|r| r.drop.is_some() || !(200..300).contains(&r.status))
}

/// An answer a retrying client retries: 408, 425, 429 or 5xx, delivered.
fn retried_answer(r: &ResponseSpec) -> bool {
    r.drop.is_none() && (matches!(r.status, 408 | 425 | 429) || (500..600).contains(&r.status))
}

/// The scenario a differential replay runs besides the configured ones, so
/// that each side stops on its own attempt cap (issue 53): the first
/// retried answer of the configured scenarios, its `Retry-After` (if any)
/// shortened to 1 s (429 with `Retry-After: 1` when none has one), to every
/// request, `failures` times and then a 200
/// when the scan knows both sides' attempts (an outage that outlasts the
/// larger budget), or forever otherwise (the replay's timeout ends it).
/// Only the comparison judges it: the checks a cap decides (`recovered`,
/// `attempt-budget`) and the fleet checks, which the configured scenarios
/// already judge, are off. `None` when a configured scenario already ends
/// in an outage that never ends: that one reaches every cap.
pub fn to_the_cap(
    list: &[LoadedScenario],
    failures: Option<usize>,
) -> anyhow::Result<Option<LoadedScenario>> {
    if list.iter().any(|l| ends_in_an_outage(&l.scenario)) {
        return Ok(None);
    }
    let source =
        list.iter().find_map(|l| l.scenario.responses.iter().find(|r| retried_answer(r)).map(|r| (l, r)));
    let mut answer = String::new();
    let from = match source {
        Some((l, r)) => {
            answer.push_str(&format!("  - status: {}\n", r.status));
            // The cap is what this run is for, not the wait: a told wait of
            // its own form, but the shortest one (1 s), so that a cap of ten
            // is reached in seconds.
            if r.retry_after.is_some() {
                answer.push_str("    retry_after: 1\n");
            }
            if let Some(d) = &r.retry_after_date {
                let format = match d.format {
                    DateFormat::ImfFixdate => "imf-fixdate",
                    DateFormat::Rfc850 => "rfc850",
                    DateFormat::Asctime => "asctime",
                };
                answer
                    .push_str(&format!("    retry_after_date:\n      ahead_s: 1\n      format: {format}\n"));
            }
            format!("the first retried answer of {}", l.name)
        }
        None => {
            answer.push_str("  - status: 429\n    retry_after: 1\n");
            "429 with Retry-After: 1, as no configured scenario has a retried answer".to_string()
        }
    };
    let (length, tail) = match failures {
        Some(n) => {
            let n = n.clamp(1, MAX_CAP_FAILURES);
            answer.push_str(&format!("    repeat: {n}\n  - status: 200\n"));
            (format!("{n} times, then 200 (sized from the scan's attempt figures)"), "")
        }
        None => ("to every request, forever".to_string(), " (the replay's timeout ends it)"),
    };
    let description = format!("{from}, {length}{tail}");
    let text = format!(
        "# Derived by the differential replay so that base and head both stop on their caps.\n\
         description: {description:?}\n\
         responses:\n{answer}\
         budget: {MAX_BUDGET}\n\
         checks:\n  recovered: off\n  attempt-budget: off\n  desynchronized: off\n  desynchronized-after-retry-after: off\n"
    );
    // Our own text: a failure to read it back is a bug, said as one.
    LoadedScenario::from_text(TO_THE_CAP, &text)
        .map(Some)
        .map_err(|e| anyhow::anyhow!("the derived scenario {TO_THE_CAP} does not parse (a bug): {e:#}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_to_the_caps_repeats_the_first_retried_answer_with_a_short_wait() {
        let list = LoadedScenario::resolve_list("refused,post").unwrap();
        let cap = to_the_cap(&list, None).unwrap().expect("neither ends in an outage");
        assert_eq!(cap.name, TO_THE_CAP);
        // post's 429 (Retry-After 2) shortened to 1 s, forever.
        let s = &cap.scenario;
        for i in [0, 1, 50, 5000] {
            assert_eq!((s.response_for(i).status, s.response_for(i).retry_after), (429, Some(1)));
        }
        assert_eq!((s.checks.recovered, s.checks.attempt_budget), (Level::Off, Level::Off));
        assert_eq!(s.checks.desynchronized, Level::Off);
        assert_eq!(s.checks.no_unsafe_replay, Level::Error);
        assert!(s.description.contains("first retried answer of post"), "{}", s.description);
        // Sized: eleven failures, then a 200.
        let sized = to_the_cap(&list, Some(11)).unwrap().unwrap().scenario;
        assert_eq!(sized.response_for(10).status, 429);
        assert_eq!(sized.response_for(11).status, 200);
        // The date form keeps its form.
        let date = to_the_cap(&LoadedScenario::resolve_list("http-date").unwrap(), None).unwrap().unwrap();
        let d = date.scenario.response_for(3).retry_after_date.unwrap();
        assert_eq!((d.ahead_s, d.format), (1, DateFormat::ImfFixdate));
        // No retried answer anywhere: 429 with Retry-After 1.
        let none =
            to_the_cap(&LoadedScenario::resolve_list("slow-response").unwrap(), None).unwrap().unwrap();
        assert_eq!(none.scenario.response_for(0).retry_after, Some(1));
        assert!(none.scenario.description.contains("no configured scenario has a retried answer"));
        // An outage that never ends already reaches every cap.
        let list = LoadedScenario::resolve_list("default,long-outage").unwrap();
        assert!(to_the_cap(&list, None).unwrap().is_none());
    }

    #[test]
    fn every_bundled_scenario_parses() {
        for (name, _) in BUNDLED {
            let s = LoadedScenario::resolve(name).unwrap();
            assert_eq!(s.name, *name);
            assert_eq!(s.sha256.len(), 64);
        }
    }

    #[test]
    fn default_is_three_429s_then_200() {
        let s = LoadedScenario::resolve("default").unwrap().scenario;
        let statuses: Vec<u16> = (0..6).map(|i| s.response_for(i).status).collect();
        assert_eq!(statuses, [429, 429, 429, 200, 200, 200]);
        assert_eq!(s.response_for(0).retry_after, Some(1));
        assert_eq!(s.response_for(3).retry_after, None);
        assert_eq!(s.budget, 5);
        assert_eq!(s.demanded_wait_ms(), 3000);
        assert_eq!(s.checks, CheckLevels::default());
    }

    #[test]
    fn http_date_scenario_uses_the_date_form() {
        let s = LoadedScenario::resolve("http-date").unwrap().scenario;
        let d = s.response_for(0).retry_after_date.unwrap();
        assert_eq!(d.format, DateFormat::ImfFixdate);
        assert_eq!(s.response_for(2).status, 200);
    }

    #[test]
    fn unknown_key_is_named() {
        let err = Scenario::parse("responses:\n  - status: 429\n    retry_afer: 1\nbudget: 3\n", "x.yml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("scenario x.yml"), "{err}");
        assert!(err.contains("unknown field `retry_afer`"), "{err}");
        assert!(err.contains("line 3"), "{err}");
    }

    #[test]
    fn unknown_check_and_bad_level_are_named() {
        let err = Scenario::parse("responses: [{status: 200}]\nbudget: 1\nchecks: {recoverd: off}\n", "y")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `recoverd`"), "{err}");
        let err = Scenario::parse("responses: [{status: 200}]\nbudget: 1\nchecks: {recovered: loud}\n", "y")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown variant `loud`"), "{err}");
    }

    #[test]
    fn invalid_values_are_rejected_with_a_reason() {
        let cases = [
            ("responses: []\nbudget: 1\n", "`responses` is empty"),
            ("responses: [{status: 200}]\nbudget: 0\n", "`budget` is 0"),
            ("responses: [{status: 42}]\nbudget: 1\n", "responses[0].status 42"),
            ("responses: [{status: 200, repeat: 0}]\nbudget: 1\n", "responses[0].repeat is 0"),
            (
                "responses: [{status: 429, retry_after: 1, retry_after_date: {ahead_s: 1}}]\nbudget: 1\n",
                "sets both",
            ),
            ("budget: 1\n", "missing field `responses`"),
        ];
        for (text, want) in cases {
            let err = Scenario::parse(text, "z").unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }

    #[test]
    fn absurd_values_are_refused_at_load_with_the_field_named() {
        let cases = [
            ("responses: [{status: 429, retry_after_date: {ahead_s: 9223372036854775807}}]\nbudget: 2\n",
             "scenario s.yml: responses[0].retry_after_date.ahead_s is 9223372036854775807 s, over the 3600 s (one hour) a replay can wait"),
            ("responses: [{status: 429, retry_after: 18446744073709552}]\nbudget: 2\n",
             "scenario s.yml: responses[0].retry_after is 18446744073709552 s, over the 3600 s"),
            ("responses: [{status: 200, delay_ms: 3600001}]\nbudget: 2\n", "responses[0].delay_ms is 3600001 ms"),
            ("responses: [{status: 429, repeat: 1001}]\nbudget: 2\n", "responses[0].repeat 1001 is over 1000"),
            ("responses: [{status: 200}]\nbudget: 100001\n", "`budget` 100001 is over 100000"),
            ("responses: [{status: 200, headers: {Content-Length: '3'}}]\nbudget: 1\n", "sets Content-Length, which the server sets itself"),
            ("responses: [{status: 200, headers: {'bad name': x}}]\nbudget: 1\n", "\"bad name\" is not a valid header name"),
            ("responses: [{status: 200, content_type: \"a\\nb\"}]\nbudget: 1\n", "content_type \"a\\nb\" is not a valid header value"),
            ("responses: [{status: 201, drop: reset, body: x}]\nbudget: 1\n", "sets `drop` and an answer to send"),
            ("responses: [{status: 201, drop: hang}]\nbudget: 1\n", "unknown variant `hang`"),
        ];
        for (text, want) in cases {
            let err = Scenario::parse(text, "s.yml").unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
        let big =
            format!("responses: [{{status: 200, body: '{}'}}]\nbudget: 1\n", "x".repeat(MAX_BODY_BYTES + 1));
        assert!(Scenario::parse(&big, "s.yml")
            .unwrap_err()
            .to_string()
            .contains("responses[0].body is 65537 bytes"));
    }

    #[test]
    fn the_planned_wait_saturates_instead_of_wrapping() {
        // Built without validate(), as a library caller could: never 384 ms.
        let mut s = Scenario::parse("responses: [{status: 429, retry_after: 1}]\nbudget: 2\n", "s").unwrap();
        s.responses[0].retry_after = Some(18_446_744_073_709_552);
        assert_eq!(s.demanded_wait_ms(), u64::MAX);
    }

    #[test]
    fn write_loss_scenarios_apply_then_lose_the_answer() {
        let lost = LoadedScenario::resolve("lost-response").unwrap().scenario;
        let first = lost.response_for(0);
        assert_eq!((first.apply, first.drop, first.delay_ms), (true, Some(Loss::Close), 10_000));
        assert_eq!(lost.response_for(1).drop, None);
        let reset = LoadedScenario::resolve("reset-after-write").unwrap().scenario;
        assert_eq!((reset.response_for(0).apply, reset.response_for(0).drop), (true, Some(Loss::Reset)));
        let bad_gateway = LoadedScenario::resolve("502-after-write").unwrap().scenario;
        assert_eq!((bad_gateway.response_for(0).status, bad_gateway.response_for(0).apply), (502, true));
        // A 429 is not applied unless it says so.
        let post = LoadedScenario::resolve("post").unwrap().scenario;
        assert!(!post.response_for(0).apply && post.response_for(1).apply);
    }

    #[test]
    fn a_list_resolves_each_and_digests_them_together() {
        let list = LoadedScenario::resolve_list("post,lost-response").unwrap();
        assert_eq!(list.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(), ["post", "lost-response"]);
        let combined = LoadedScenario::combined_sha256(&list);
        assert_eq!(combined.len(), 64);
        assert_ne!(combined, list[0].sha256);
        let swapped = LoadedScenario::resolve_list("lost-response,post").unwrap();
        assert_ne!(LoadedScenario::combined_sha256(&swapped), combined, "order is part of what ran");
        assert_eq!(LoadedScenario::combined_sha256(&list[..1]), list[0].sha256);
        let e = LoadedScenario::resolve_list("post,,default").unwrap_err().to_string();
        assert!(e.contains("has an empty name in its list"), "{e}");
        let e = LoadedScenario::resolve_list("post,post").unwrap_err().to_string();
        assert!(e.contains("names 'post' twice"), "{e}");
        let e = LoadedScenario::resolve_list("post,nope").unwrap_err().to_string();
        assert!(e.contains("unknown scenario 'nope'"), "{e}");
    }

    #[test]
    fn unknown_name_lists_the_bundled_ones() {
        let err = LoadedScenario::resolve("defualt").unwrap_err().to_string();
        assert!(err.contains("unknown scenario 'defualt'"), "{err}");
        assert!(
            err.contains("default, http-date, no-retry-after, 503, post, lost-response, reset-after-write, 502-after-write, refused"),
            "{err}"
        );
    }

    #[test]
    fn a_path_loads_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.yml");
        std::fs::write(
            &path,
            "responses: [{status: 503, retry_after: 2}, {status: 200, delay_ms: 5}]\nbudget: 2\n",
        )
        .unwrap();
        let s = LoadedScenario::resolve(path.to_str().unwrap()).unwrap();
        assert_eq!(s.scenario.response_for(0).status, 503);
        assert_eq!(s.scenario.demanded_wait_ms(), 2000);
        assert_eq!(s.scenario.checks.recovered, Level::Warning);
        assert_eq!((s.scenario.response_for(0).delay_ms, s.scenario.response_for(1).delay_ms), (0, 5));
    }
}
