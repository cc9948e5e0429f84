//! Base against head, per operation: the decisions, as pure functions of
//! the two models and the lines the change wrote.
//!
//! - An operation the base ran once (or did not have) that the head
//!   retries is a retry raised from one attempt (said as a warning when
//!   the retry and what it covers are all in functions the base did not
//!   define: new code, not a changed call, or when the same retry was in
//!   the base and already re-sent writes): a write without an
//!   idempotency key is `retry-non-idempotent` (a warning when the retry
//!   fires only on failures after which nothing was written), a request of
//!   unknown method is the same as a warning, no bound is
//!   `retry-unbounded`, no jitter is `retry-without-jitter`; any other
//!   operation (a read, a model call, a request of unknown method) retried
//!   more than [`SMALL_NEW_RETRY`] times is `retry-count-raised` (from one
//!   attempt).
//! - An operation retried on both sides: conditions widened on a write
//!   are `retry-non-idempotent`; a bound removed is `retry-unbounded`; for
//!   hand-written retries (loops, recursion, helpers), whose settings no
//!   library file describes, a count raised is `retry-count-raised` and
//!   randomness gone from the delay is `jitter-removed`.

use std::collections::BTreeMap;

use serde_json::json;

use super::front::Model;
use super::model::{Attempts, Condition, Covered, Form, Method, Retry};
use crate::finding::{Finding, Kind, Severity};

/// Rule ids (their docs are in [`super::CHECKS`]).
pub(crate) const NEW_WRITE: &str = "op/new-retry-of-write";
pub(crate) const NEW_UNKNOWN: &str = "op/new-retry-of-unknown-method";
pub(crate) const NEW_UNBOUNDED: &str = "op/new-retry-unbounded";
pub(crate) const NEW_NO_JITTER: &str = "op/new-retry-without-jitter";
pub(crate) const NEW_RAISED: &str = "op/new-retry-raised-from-one";
pub(crate) const WIDENED: &str = "op/conditions-widened-on-write";
pub(crate) const BOUND_REMOVED: &str = "op/bound-removed";
pub(crate) const COUNT_RAISED: &str = "op/hand-retry-count-raised";
pub(crate) const JITTER_REMOVED: &str = "op/hand-retry-jitter-removed";
pub(crate) const TIMEOUT_LOWERED: &str = "op/retried-call-timeout-lowered";
pub(crate) const RETRY_AFTER: &str = "op/retry-after-dropped";

/// New files a change may add in the operation model's languages and still
/// be judged as its own code: past this, a new file's new retries are
/// warnings (code added in bulk).
pub(crate) const BULK_FILES: usize = 5;

/// The most attempts a new retry of a read may make and still pass (with
/// no jitter it is still `retry-without-jitter`, a warning): the "small bound" of a retry nobody needs to
/// review (three retries after the first try ride out a blip, and are the
/// default of most retry libraries; more multiply load during an outage). `limits.max_attempts` is the user's own, stricter ceiling.
pub(crate) const SMALL_NEW_RETRY: f64 = 4.0;

/// Whether head line `line` of `path` is one the change wrote.
pub(crate) type Added<'a> = dyn Fn(&str, u32) -> bool + 'a;

/// The findings of a change, from the base's and the head's models.
pub(crate) fn judge(
    base: &Model,
    head: &Model,
    added: &Added<'_>,
    new_file: &dyn Fn(&str) -> bool,
) -> Vec<Finding> {
    // New coverage, grouped by the retry that brings it.
    let mut new_by_retry: BTreeMap<(String, u32), (Retry, Vec<&Covered>)> = BTreeMap::new();
    let mut out = Vec::new();
    for h in &head.covered {
        let Some(hr) = strongest(&h.retries) else { continue };
        match base_retries(base, head, h) {
            None => {
                if touched(hr, h, added) {
                    new_by_retry
                        .entry((hr.path.clone(), hr.line))
                        .or_insert_with(|| (hr.clone(), Vec::new()))
                        .1
                        .push(h);
                }
            }
            Some(brs) => {
                let Some(br) = strongest(&brs) else { continue };
                if touched(hr, h, added) {
                    out.extend(changed(br, hr, h));
                }
            }
        }
        out.extend(timeout_lowered(base, h, hr, added));
    }
    for ((_, _), (r, ops)) in new_by_retry {
        let mut found = new_retry(&r, &ops);
        under_a_retry_the_base_had(base, &r, &mut found);
        // A file new in a change that adds many holds code brought in bulk
        // (a vendored SDK, a fork, a generated client): its retries are said,
        // not blocked on. One new module among a few is the change's own
        // code, judged like any other.
        // A retry and the writes it covers all in functions the base did not
        // have, in a file it had: new code, not a call that ran once now
        // sent again (unless a write among them moved there from a function the
        // base had, [`moved_out_of_old_code`]). Its
        // writes are said, for the reviewer reading the new code, and not
        // blocked on.
        // Only in a file the base had: a new file's retrying client is a new
        // design for sending writes, and blocks like a changed one.
        let new_code = base.files.contains(&r.path)
            && !existed(base, &r.function)
            && ops.iter().all(|c| !existed(base, &c.op.function) && !moved_out_of_old_code(base, head, c));
        if new_code {
            // A new unbounded retry still blocks: it often replaces a bounded
            // one the base had elsewhere (a sender moved into a new worker).
            for f in &mut found {
                if f.severity == Severity::Error
                    && matches!(f.kind, Kind::RetryNonIdempotent | Kind::RetryCountRaised)
                {
                    f.severity = Severity::Warning;
                    f.message.push_str(&format!(
                        " (in `{}`, a function the base did not have: new code, so a warning; review what it retries)",
                        r.function
                    ));
                }
            }
        } else if new_file(&r.path) {
            for f in &mut found {
                if f.severity == Severity::Error {
                    f.severity = Severity::Warning;
                    f.message.push_str(&format!(
                        " (in a file this change adds, among more than {BULK_FILES} it adds: a warning, since code added in bulk may come from elsewhere)"
                    ));
                }
            }
        }
        // A loop the base had that the change made go round (a new
        // `except` arm that no longer raises): the finding points at the
        // lines that did it, where the reviewer reads the change.
        if r.form == Form::Loop && !added(&r.path, r.line) {
            if let Some(at) = (r.line..=r.end_line.min(r.line + 2000)).find(|l| added(&r.path, *l)) {
                for f in found.iter_mut().filter(|f| f.path == r.path && f.line == r.line) {
                    f.line = at;
                    f.end_line = at;
                    f.message.push_str(&format!(
                        " (the loop at line {} was in the base; lines this change added from line {at} make it go round)",
                        r.line
                    ));
                }
            }
        }
        out.extend(found);
    }
    out
}

/// The same retry in the base: written in the same function of the same
/// file, in the same form. Its operations there, and its bound.
fn the_same_retry_in_base<'b>(base: &'b Model, r: &Retry) -> (Vec<&'b Covered>, Vec<&'b Retry>) {
    let same = |b: &Retry| b.path == r.path && b.function == r.function && b.form == r.form;
    let covered: Vec<&Covered> = base.covered.iter().filter(|c| c.retries.iter().any(same)).collect();
    let retries = covered.iter().flat_map(|c| c.retries.iter().filter(|b| same(b))).collect();
    (covered, retries)
}

/// Operations new under a retry the base already had (a transport swapped
/// under it, a call renamed, a sender reached through a changed callee):
/// the retry's own decision did not change. When that retry already
/// re-sent writes in the base, a write now under it is said as a warning
/// naming them, not blocked on: the change replaced what a write retry
/// covers, it did not make a retry of a write. When it already had no
/// bound, nothing became unbounded. A retry of reads only that now covers
/// a write still blocks: that is a write put under a retry.
fn under_a_retry_the_base_had(base: &Model, r: &Retry, found: &mut Vec<Finding>) {
    let (covered, retries) = the_same_retry_in_base(base, r);
    if retries.is_empty() {
        return;
    }
    if retries.iter().any(|b| b.attempts == Attempts::Unbounded) {
        found.retain(|f| f.rule != NEW_UNBOUNDED);
    }
    // The retry's count is the base's: what it covers changed, not how
    // often it tries.
    found.retain(|f| f.rule != NEW_RAISED);
    let base_writes: Vec<&Covered> = covered
        .iter()
        .copied()
        .filter(|c| (c.op.method.writes() || c.op.method == Method::Unknown) && !c.op.keyed)
        .collect();
    if base_writes.is_empty() {
        return;
    }
    for f in found.iter_mut().filter(|f| f.kind == Kind::RetryNonIdempotent && f.severity == Severity::Error)
    {
        f.severity = Severity::Warning;
        f.message.push_str(&format!(
            " (the same retry was in the base and already re-sent {}: the change replaced what it covers, so a warning; review that the new call is as safe to repeat)",
            list(&base_writes)
        ));
    }
}

/// A call the base made, unretried, in a function the head still has and
/// that now calls the new function the call is made in, under a retry: the
/// call was moved into a new helper (`client.post(..)` ->
/// `self._post_with_retry(..)`; the same callee, or a request of the same
/// method sent through another client: `http.Get(u)` -> a helper's
/// `rm.HTTPClient.Get(u)`), so the code around it is not new and the
/// operation that ran once is now sent again.
fn moved_out_of_old_code(base: &Model, head: &Model, c: &Covered) -> bool {
    let helper = c.op.function.rsplit(['.', ':']).next().unwrap_or(&c.op.function);
    base.covered.iter().any(|b| {
        b.op.path == c.op.path
            && (b.op.callee == c.op.callee || (b.op.method == c.op.method && b.op.method != Method::Unknown))
            && b.op.function != c.op.function
            && b.retries.is_empty()
            && head.functions.contains(&b.op.function)
            && head.calls.contains(&(b.op.function.clone(), helper.to_string()))
    })
}

/// Whether the base defined a function of this name (module-level code
/// always existed).
fn existed(base: &Model, function: &str) -> bool {
    function == "<module>" || function.is_empty() || base.functions.contains(function)
}

/// Whether this model compares a library form's count and jitter: the
/// forms no library file describes (the library analyzers compare the
/// others), said so in `rules/operations/model.yml` (`compare_settings`),
/// and the reactive retry operators.
fn settings_here(f: &Form) -> bool {
    match f {
        Form::Library(name) => {
            name == super::front::REACTIVE
                || super::data::DATA
                    .as_ref()
                    .is_ok_and(|d| d.wrappers.iter().any(|w| w.compare_settings && &w.library == name))
        }
        _ => false,
    }
}

/// The retry that re-runs an operation most.
fn strongest(rs: &[Retry]) -> Option<&Retry> {
    rs.iter().max_by(|a, b| rank(a.attempts).total_cmp(&rank(b.attempts)))
}

fn rank(a: Attempts) -> f64 {
    match a {
        Attempts::Count(n) => n,
        Attempts::Bounded | Attempts::Unknown => 1.5,
        Attempts::Unbounded => f64::INFINITY,
    }
}

/// The retries that covered the same operation in the base: `None` when
/// it ran once there or did not exist. The same operation is the same
/// callee in the same function; failing that (a function renamed or
/// moved), the same callee and method retried in a base function the head
/// no longer performs it in (in another file: a file that no longer makes
/// the call): a retried call the head still makes where it was is another
/// operation, not this one moved.
fn base_retries(base: &Model, head: &Model, h: &Covered) -> Option<Vec<Retry>> {
    let same: Vec<&Covered> =
        base.covered.iter().filter(|b| b.op.key() == h.op.key() && b.op.path == h.op.path).collect();
    if let Some(b) = same.iter().find(|b| !b.retries.is_empty()) {
        return Some(b.retries.clone());
    }
    if !same.is_empty() {
        return None;
    }
    base.covered
        .iter()
        .find(|b| {
            b.op.callee == h.op.callee
                && b.op.method == h.op.method
                && !b.retries.is_empty()
                && !head.covered.iter().any(|x| {
                    // Moved within its file: its function is gone there.
                    // Moved from another file: that file no longer makes
                    // the call at all.
                    x.op.path == b.op.path
                        && (x.op.key() == b.op.key()
                            || (b.op.path != h.op.path && x.op.callee == b.op.callee))
                })
        })
        .map(|b| b.retries.clone())
}

/// Whether the change wrote the retry or the operation.
fn touched(r: &Retry, h: &Covered, added: &Added<'_>) -> bool {
    let span = |p: &str, a: u32, b: u32| (a..=b.min(a + 2000)).any(|l| added(p, l));
    span(&r.path, r.line, r.end_line)
        || span(&r.path, r.scope.0, r.scope.1)
        || r.origin.as_ref().is_some_and(|(p, a, b)| span(p, *a, *b))
        || added(&h.op.path, h.op.line)
        || r.count_at.as_ref().is_some_and(|(p, l)| added(p, *l))
}

fn attempts_json(a: Attempts) -> serde_json::Value {
    match a {
        Attempts::Count(n) => json!(n as u64),
        Attempts::Unbounded => json!("unbounded"),
        Attempts::Bounded => json!("bounded"),
        Attempts::Unknown => json!("unknown"),
    }
}

fn list(ops: &[&Covered]) -> String {
    let mut names: Vec<String> = ops.iter().map(|c| c.op.show()).collect();
    names.dedup();
    let more = names.len().saturating_sub(3);
    names.truncate(3);
    let mut s = names.join(", ");
    if more > 0 {
        s.push_str(&format!(" and {more} more"));
    }
    s
}

fn where_(r: &Retry) -> String {
    format!("{} at {}:{}", r.form.show(), r.path, r.line)
}

/// An operation that ran once is now retried.
fn new_retry(r: &Retry, ops: &[&Covered]) -> Vec<Finding> {
    let mut out = Vec::new();
    if matches!(r.attempts, Attempts::Count(n) if n <= 1.0) {
        return Vec::new();
    }
    let writes: Vec<&Covered> = ops
        .iter()
        .copied()
        .filter(|c| c.op.method.writes() && !c.op.keyed && !c.op.computes && !c.op.named_only)
        .collect();
    // Writes judged by their verb alone, on receivers nothing shows to be
    // clients: said with that reason, for the reviewer, not blocked on.
    let named: Vec<&Covered> = ops
        .iter()
        .copied()
        .filter(|c| c.op.method.writes() && !c.op.keyed && !c.op.computes && c.op.named_only)
        .collect();
    let computes: Vec<&Covered> = ops.iter().copied().filter(|c| c.op.computes && !c.op.keyed).collect();
    let unknown: Vec<&Covered> =
        ops.iter().copied().filter(|c| c.op.method == Method::Unknown && !c.op.keyed).collect();
    let head = json!({"attempts": attempts_json(r.attempts), "retry": r.form.show()});
    if !writes.is_empty() {
        let after_write = r.fires_after_write();
        let f = Finding::new(Kind::RetryNonIdempotent, NEW_WRITE, &r.path, r.line)
            .lines(r.line, r.line)
            .message(if after_write {
                format!(
                    "{} ran once in the base and is now retried by {} ({}), with no idempotency key: a write whose answer was lost is sent again",
                    list(&writes),
                    where_(r),
                    r.attempts.show()
                )
            } else {
                format!(
                    "{} ran once in the base and is now retried by {} ({}), only on {}, after which the server has not applied it; check it never fires on timeouts or dropped connections",
                    list(&writes),
                    where_(r),
                    r.attempts.show(),
                    r.conditions.iter().map(|c| c.word()).collect::<Vec<_>>().join(" and ")
                )
            })
            .severity(if after_write { Severity::Error } else { Severity::Warning })
            .base(json!({"attempts": 1}))
            .head(json!({"attempts": attempts_json(r.attempts), "retry": r.form.show(), "fires_after_write": after_write}));
        out.push(f);
    }
    if !named.is_empty() && writes.is_empty() && r.fires_after_write() {
        out.push(
            Finding::new(Kind::RetryNonIdempotent, NEW_WRITE, &r.path, r.line)
                .message(format!(
                    "{} ran once in the base and is now retried by {} ({}); judged a write by the call's name alone: nothing shows its receiver is a client, a connection or a service's SDK; if it leaves the process, send an idempotency key or do not retry it",
                    list(&named),
                    where_(r),
                    r.attempts.show()
                ))
                .severity(Severity::Warning)
                .base(json!({"attempts": 1}))
                .head(head.clone()),
        );
    }
    if !computes.is_empty() && writes.is_empty() {
        out.push(
            Finding::new(Kind::RetryNonIdempotent, NEW_WRITE, &r.path, r.line)
                .message(format!(
                    "{} ran once in the base and is now retried by {} ({}); judged a model call by its receiver's name, which computes an answer and writes nothing: each attempt is billed; check no tool call or side effect runs inside it",
                    list(&computes),
                    where_(r),
                    r.attempts.show()
                ))
                .severity(Severity::Warning)
                .base(json!({"attempts": 1}))
                .head(head.clone()),
        );
    }
    if !unknown.is_empty() {
        out.push(
            Finding::new(Kind::RetryNonIdempotent, NEW_UNKNOWN, &r.path, r.line)
                .message(format!(
                    "{} ran once in the base and is now retried by {} ({}); retrygate could not tell its method: if it writes, send an idempotency key or do not retry it",
                    list(&unknown),
                    where_(r),
                    r.attempts.show()
                ))
                .severity(Severity::Warning)
                .base(json!({"attempts": 1}))
                .head(head.clone()),
        );
    }
    // What else the retry now re-runs: reads, model calls and requests of
    // unknown method that ran once. A raise from one attempt; it passes
    // while it is small and jittered, and blocks past that.
    let others: Vec<&Covered> = ops
        .iter()
        .copied()
        .filter(|c| !c.op.keyed && !c.op.named_only && (!c.op.method.writes() || c.op.computes))
        .collect();
    // A wait for a service to come up asks its health endpoint until it
    // answers: what it repeats is the cheapest read there is.
    let readiness = readiness_wait(ops);
    if let (false, Attempts::Count(n)) = (others.is_empty(), r.attempts) {
        if n > SMALL_NEW_RETRY {
            let jitter = if r.jitter == Some(false) { " and with no randomness in the delay" } else { "" };
            let f = Finding::new(Kind::RetryCountRaised, NEW_RAISED, &r.path, r.line)
                .message(format!(
                    "{} ran once in the base and is now retried by {}: attempts raised from 1 to {}, more than the {} attempts a new retry may make unreviewed{jitter}",
                    list(&others),
                    where_(r),
                    n as u64,
                    SMALL_NEW_RETRY as u64
                ))
                .base(json!({"attempts": 1}))
                .head(head.clone());
            out.push(as_readiness_wait(f, readiness.as_deref()));
        }
    }
    if r.attempts == Attempts::Unbounded {
        // Only calls judged writes by their names: nothing shows a
        // dependency is called at all.
        let named_only = ops.iter().all(|c| c.op.named_only);
        let f = Finding::new(Kind::RetryUnbounded, NEW_UNBOUNDED, &r.path, r.line)
                .message(format!(
                    "{} ran once in the base and is now retried by {} with no bound on attempts or time: while the dependency is down it is called again and again{}",
                    list(ops),
                    where_(r),
                    if named_only {
                        " (each judged a remote call by its name alone, so a warning: check it leaves the process)"
                    } else {
                        ""
                    }
                ))
                .severity(if named_only { Severity::Warning } else { Severity::Error })
                .base(json!({"attempts": 1}))
                .head(head.clone());
        out.push(as_readiness_wait(f, readiness.as_deref()));
    }
    if r.jitter == Some(false) {
        out.push(
            Finding::new(Kind::RetryWithoutJitter, NEW_NO_JITTER, &r.path, r.line)
                .message(format!("{} retries {} with no randomness in its delay: clients that failed together retry together", where_(r), list(ops)))
                .severity(Severity::Warning)
                .head(head),
        );
    }
    out
}

/// Last path segments of the endpoints a service answers to say it is up
/// (Kubernetes' `/healthz`, `/readyz`, `/livez`, a `/health` or `/ping`).
const HEALTH_SEGMENTS: &[&str] = &[
    "health",
    "healthz",
    "healthcheck",
    "health-check",
    "health_check",
    "_health",
    "ready",
    "readyz",
    "readiness",
    "live",
    "livez",
    "liveness",
    "ping",
];

/// The endpoint, when every operation a retry covers is a GET or HEAD
/// whose request names a health endpoint: the retry waits for a service
/// to come up. `None` when any of them is anything else, or its target
/// cannot be read.
fn readiness_wait(ops: &[&Covered]) -> Option<String> {
    let mut found = None;
    for c in ops {
        let Method::Idempotent(m) = &c.op.method else { return None };
        if !matches!(m.as_str(), "GET" | "HEAD") {
            return None;
        }
        let target = c.op.target.as_deref()?;
        let path = target.split(['?', '#']).next().unwrap_or("");
        let last = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
        if !HEALTH_SEGMENTS.iter().any(|h| last.eq_ignore_ascii_case(h)) {
            return None;
        }
        found = Some(path.to_string());
    }
    found
}

/// A raise on a wait for readiness is said, not blocked on: judged by the
/// request's endpoint, which the maintainer sees named.
fn as_readiness_wait(f: Finding, endpoint: Option<&str>) -> Finding {
    match endpoint {
        Some(e) if f.severity == Severity::Error => {
            let message = format!(
                "{} (every request it repeats is a GET or HEAD of the health endpoint `{e}`: a wait for a service to come up, not a retry of work; a warning: check it runs only at startup)",
                f.message
            );
            f.severity(Severity::Warning).message(message)
        }
        _ => f,
    }
}

/// A retried call's own timeout went down.
fn timeout_lowered(base: &Model, h: &Covered, hr: &Retry, added: &Added<'_>) -> Option<Finding> {
    let ht = h.op.timeout?;
    let b = base.covered.iter().find(|b| b.op.key() == h.op.key())?;
    let bt = b.op.timeout?;
    let (path, line) = h.op.timeout_at.clone().unwrap_or_else(|| (h.op.path.clone(), h.op.line));
    if ht >= bt || !(added(&path, line) || added(&h.op.path, h.op.line)) {
        return None;
    }
    Some(
        Finding::new(Kind::TimeoutLowered, TIMEOUT_LOWERED, &path, line)
            .message(format!(
                "the timeout of {} goes from {} to {} while {} retries it: slow answers become more attempts",
                h.op.show(),
                bt,
                ht,
                where_(hr)
            ))
            .base(json!({"timeout": bt}))
            .head(json!({"timeout": ht})),
    )
}

/// An operation retried on both sides whose retry got worse.
fn changed(b: &Retry, h: &Retry, c: &Covered) -> Vec<Finding> {
    let mut out = Vec::new();
    // Library settings are the library analyzers' to compare, where there
    // is one for the language; elsewhere this model compares them too.
    let no_library_reader =
        crate::analyze::trees::grammar::Grammar::of_path(&h.path).is_some_and(|g| !g.reads_library_sites());
    let hand = no_library_reader
        || !matches!(h.form, Form::Library(_)) && !matches!(b.form, Form::Library(_))
        || (settings_here(&h.form) && settings_here(&b.form));
    // Widened: the head fires after a write on failures the base did not
    // retry. A base that already retried some of them (timeouts) and now
    // also retries others (a reset after the request was written, any 5xx)
    // re-sends writes in cases it did not before: that is still a widening.
    let added_after_write: Vec<&str> = if b.conditions.contains(&Condition::Any) || b.conditions.is_empty() {
        Vec::new()
    } else {
        h.conditions
            .iter()
            .filter(|x| x.after_write() && !b.conditions.contains(x))
            .map(|x| x.word())
            .collect()
    };
    let widened = (!b.fires_after_write() && h.fires_after_write()) || !added_after_write.is_empty();
    if c.op.method.writes() && !c.op.keyed && widened {
        let new = if added_after_write.is_empty() { vec![Condition::Any.word()] } else { added_after_write };
        out.push(
            Finding::new(Kind::RetryNonIdempotent, WIDENED, &h.path, h.line)
                .message(format!(
                    "{} now also retries {} on {}, after which the write may already have happened; it has no idempotency key",
                    where_(h),
                    c.op.show(),
                    new.join(" and ")
                ))
                .severity(if c.op.named_only || c.op.computes { Severity::Warning } else { Severity::Error })
                .base(json!({"retries_on": b.conditions.iter().map(|x| x.word()).collect::<Vec<_>>()}))
                .head(json!({"retries_on": h.conditions.iter().map(|x| x.word()).collect::<Vec<_>>()})),
        );
    }
    if h.attempts == Attempts::Unbounded && matches!(b.attempts, Attempts::Count(_) | Attempts::Bounded) {
        out.push(
            Finding::new(Kind::RetryUnbounded, BOUND_REMOVED, &h.path, h.line)
                .message(format!(
                    "{} around {} had {} in the base and has no bound in the head",
                    where_(h),
                    c.op.show(),
                    b.attempts.show()
                ))
                .base(json!({"attempts": attempts_json(b.attempts)}))
                .head(json!({"attempts": "unbounded"})),
        );
    }
    if b.reads_retry_after && !h.reads_retry_after {
        out.push(
            Finding::new(Kind::RetryAfterIgnored, RETRY_AFTER, &h.path, h.line)
                .message(format!(
                    "{} around {} read the Retry-After header in the base and reads it nowhere in the head: it waits its own delay instead of the server's",
                    where_(h),
                    c.op.show()
                ))
                .base(json!({"retry_after": true}))
                .head(json!({"retry_after": false})),
        );
    }
    if hand {
        if let (Attempts::Count(x), Attempts::Count(y)) = (b.attempts, h.attempts) {
            if y > x {
                let (path, line) = h.count_at.clone().unwrap_or_else(|| (h.path.clone(), h.line));
                out.push(
                    Finding::new(Kind::RetryCountRaised, COUNT_RAISED, &path, line)
                        .message(format!(
                            "{} around {} goes from {} to {} attempts",
                            where_(h),
                            c.op.show(),
                            x as u64,
                            y as u64
                        ))
                        .base(json!({"attempts": x as u64}))
                        .head(json!({"attempts": y as u64})),
                );
            }
        } else if let (Some((bn, bk)), Some((hn, hk))) = (&b.bound_sym, &h.bound_sym) {
            // The same unread bound with more added to it: one more pass
            // for every request, whatever the name holds.
            if bn == hn && hk > bk {
                let show = |k: f64| match k {
                    k if k > 0.0 => format!("`{bn}` + {}", k as i64),
                    k if k < 0.0 => format!("`{bn}` - {}", -k as i64),
                    _ => format!("`{bn}`"),
                };
                out.push(
                    Finding::new(Kind::RetryCountRaised, COUNT_RAISED, &h.path, h.line)
                        .message(format!(
                            "{} around {} goes from {} to {} attempts: {} more for every failing call",
                            where_(h),
                            c.op.show(),
                            show(*bk),
                            show(*hk),
                            (hk - bk) as i64
                        ))
                        .base(json!({"attempts": show(*bk)}))
                        .head(json!({"attempts": show(*hk)})),
                );
            }
        }
        if b.jitter == Some(true) && h.jitter == Some(false) {
            out.push(
                Finding::new(Kind::JitterRemoved, JITTER_REMOVED, &h.path, h.line)
                    .message(format!(
                        "{} around {} drew a random delay in the base and waits a fixed one in the head",
                        where_(h),
                        c.op.show()
                    ))
                    .base(json!({"jitter": true}))
                    .head(json!({"jitter": false})),
            );
        }
    }
    out
}
