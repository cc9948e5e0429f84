//! The decisions of the settings floor, as pure functions: which base
//! setting a head setting is the new version of ([`pair`]), whether the
//! change moved it the dangerous way ([`judge`]), and how much it weighs
//! ([`severity`]).

use super::extract::Setting;
use super::names::Knob;
use super::value::Value;
use crate::finding::{Kind, Severity};

/// How a setting got worse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Worse {
    /// A count went up.
    CountRaised,
    /// A count became unlimited (infinity, the largest integer, `-1`).
    Unbounded,
    /// Jitter was on and is off.
    JitterOff,
    /// A timeout went down (and is still a timeout, not 0 for "none").
    TimeoutLowered,
}

impl Worse {
    pub(crate) fn kind(self) -> Kind {
        match self {
            Worse::CountRaised => Kind::RetryCountRaised,
            Worse::Unbounded => Kind::RetryUnbounded,
            Worse::JitterOff => Kind::JitterRemoved,
            Worse::TimeoutLowered => Kind::TimeoutLowered,
        }
    }

    /// The rule id findings of this shape carry (`rules.disable` names it).
    pub(crate) fn rule(self) -> &'static str {
        match self {
            Worse::CountRaised => "knob/retry-count-raised",
            Worse::Unbounded => "knob/retry-unbounded",
            Worse::JitterOff => "knob/jitter-removed",
            Worse::TimeoutLowered => "knob/timeout-lowered",
        }
    }
}

/// What judging a pair says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Judgement {
    /// Moved the dangerous way.
    Worse(Worse),
    /// The base had a value and the head's cannot be computed.
    Unknown,
    /// Equal, safer, or not comparable (another unit, a string).
    Fine,
}

/// Compares one setting's base value with its head value.
pub(crate) fn judge(knob: Knob, base: &Value, head: &Value) -> Judgement {
    // `cfg.retries ?? 0` -> `cfg.retries ?? 1`: an expression not computed
    // whose only change is one number is that number changed (a fallback,
    // a floor, a default branch).
    if let (Value::Unknown(a), Value::Unknown(b)) = (base, head) {
        if let Some((x, y)) = one_number_changed(a, b) {
            let num = |v| Value::Num { v, seconds: false };
            return judge(knob, &num(x), &num(y));
        }
    }
    if base.is_known() && !head.is_known() {
        return match base {
            // A switch or a count that was a number and is now an expression.
            Value::Num { .. } | Value::Bool(_) => Judgement::Unknown,
            _ => Judgement::Fine,
        };
    }
    match knob {
        Knob::Count => match (base, head) {
            (Value::Num { v: a, seconds: false }, Value::Num { v: b, seconds: false }) => {
                if *a >= 0.0 && *b < 0.0 && (*b + 1.0).abs() < f64::EPSILON {
                    Judgement::Worse(Worse::Unbounded)
                } else if *a >= 0.0 && b > a {
                    Judgement::Worse(Worse::CountRaised)
                } else {
                    Judgement::Fine
                }
            }
            (Value::Num { seconds: false, .. }, Value::Unlimited) => Judgement::Worse(Worse::Unbounded),
            _ => Judgement::Fine,
        },
        Knob::Jitter => {
            if jitter_on(base) == Some(true) && jitter_on(head) == Some(false) {
                Judgement::Worse(Worse::JitterOff)
            } else {
                Judgement::Fine
            }
        }
        Knob::Timeout => match (base, head) {
            (Value::Num { v: a, seconds: sa }, Value::Num { v: b, seconds: sb })
                if sa == sb && *b > 0.0 && b < a =>
            {
                Judgement::Worse(Worse::TimeoutLowered)
            }
            _ => Judgement::Fine,
        },
    }
}

/// The one number that differs between two expressions that are
/// otherwise the same text, as `(base, head)`.
fn one_number_changed(a: &str, b: &str) -> Option<(f64, f64)> {
    static NUM: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\b\d[\d_]*(?:\.\d+)?\b").unwrap_or_else(|e| panic!("constant pattern: {e}"))
    });
    let shape = |t: &str| NUM.replace_all(t, "#").chars().filter(|c| !c.is_whitespace()).collect::<String>();
    if shape(a) != shape(b) {
        return None;
    }
    let nums = |t: &str| -> Vec<f64> {
        NUM.find_iter(t).filter_map(|m| m.as_str().replace('_', "").parse().ok()).collect()
    };
    let (x, y) = (nums(a), nums(b));
    if x.len() != y.len() {
        return None;
    }
    let mut diff = x.iter().enumerate().zip(&y).filter(|((_, p), q)| p != q);
    let ((at, one), other) = diff.next()?;
    if diff.next().is_some() || *one == 0.0 {
        // Two numbers changed; or 0, which means "unlimited" as often as
        // "none" (`Attempts: pointer.Of(0) // unlimited`).
        return None;
    }
    // The number must be the setting's own value, not another option's
    // inside it (`requests.get(u, timeout = 30)`, `Retry(backoff_jitter = 0.5)`).
    let start = NUM.find_iter(b).nth(at)?.start();
    let before = b[..start].trim_end();
    let named = match before.chars().next_back() {
        Some('=') => !matches!(before[..before.len() - 1].chars().next_back(), Some('=' | '<' | '>' | '!')),
        Some(':') => !before.ends_with("::") && !before.contains('?'),
        _ => false,
    };
    let keyed = named
        && before[..before.len() - 1]
            .trim_end()
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '"' || c == '\'');
    (!keyed).then_some((*one, *other))
}

/// Whether a jitter setting's value turns jitter on; `None` when it does not say.
fn jitter_on(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Num { v, .. } => Some(*v > 0.0),
        Value::Null => Some(false),
        Value::Text(t) => Some(!matches!(
            t.to_ascii_lowercase().as_str(),
            "none" | "off" | "no" | "disabled" | "false" | "0"
        )),
        Value::Unlimited | Value::Unknown(_) => None,
    }
}

/// How much a worse setting weighs: an error when its name says retry (or
/// it is a jitter switch), or when the code around it names a retry; a
/// warning for a bare `max_attempts` or `timeout` in a file that names
/// none (logins, locks and polls have attempts and timeouts too).
pub(crate) fn severity(worse: Worse, says_retry: bool, file_names_a_retry: bool) -> Severity {
    match worse {
        Worse::JitterOff => Severity::Error,
        _ if says_retry || file_names_a_retry => Severity::Error,
        _ => Severity::Warning,
    }
}

/// Pairs the settings of one file's two versions: for each head setting,
/// the index of the base setting it is the new version of. Settings pair
/// by key; among several of one key, first those held by the same thing
/// (the same call, struct or parent key), then the rest in order when
/// both sides have as many.
pub(crate) fn pair(base: &[Setting], head: &[Setting]) -> Vec<Option<usize>> {
    use std::collections::{HashMap, VecDeque};
    let mut out = vec![None; head.len()];
    let mut used = vec![false; base.len()];
    // Indexes, not scans: a generated file holds thousands of one key.
    let mut by_key: HashMap<&str, (Vec<usize>, Vec<usize>)> = HashMap::new();
    for (i, s) in head.iter().enumerate() {
        by_key.entry(s.key.as_str()).or_default().0.push(i);
    }
    for (i, s) in base.iter().enumerate() {
        if let Some(e) = by_key.get_mut(s.key.as_str()) {
            e.1.push(i);
        }
    }
    let mut keys: Vec<&str> = by_key.keys().copied().collect();
    keys.sort_unstable();
    for key in keys {
        let (h, b) = &by_key[key];
        if h.len() == 1 && b.len() == 1 {
            out[h[0]] = Some(b[0]);
            used[b[0]] = true;
            continue;
        }
        // Same holder and same value first: an unchanged setting keeps its
        // partner, and a new one beside it is new, not a change of it.
        for same_value in [true, false] {
            let mut queues: HashMap<(&str, String), VecDeque<usize>> = HashMap::new();
            for &bi in b.iter().filter(|&&bi| !used[bi]) {
                let v = if same_value { base[bi].value.show() } else { String::new() };
                queues.entry((base[bi].context.as_str(), v)).or_default().push_back(bi);
            }
            // Then the same holder in order; for a holder that is a call,
            // only where as many are left on each side: with calls added
            // or removed, the n-th call of a holder in the head is not the
            // n-th of the base. A declaration with no holder (a constant,
            // shadowed further down) is one setting however often written.
            if !same_value {
                let mut left: HashMap<&str, usize> = HashMap::new();
                for &hi in h.iter().filter(|&&hi| out[hi].is_none()) {
                    *left.entry(head[hi].context.as_str()).or_default() += 1;
                }
                queues.retain(|(holder, _), q| holder.is_empty() || left.get(holder) == Some(&q.len()));
            }
            for &hi in h {
                if out[hi].is_some() {
                    continue;
                }
                let v = if same_value { head[hi].value.show() } else { String::new() };
                if let Some(bi) = queues.get_mut(&(head[hi].context.as_str(), v)).and_then(|q| q.pop_front())
                {
                    out[hi] = Some(bi);
                    used[bi] = true;
                }
            }
        }
        // The rest pair in order only between holders each side lacks (a
        // call renamed): a new `join(timeout=5)` beside an existing
        // `join(..)` is not the old `open(timeout=60)` lowered.
        let base_holders: std::collections::HashSet<&str> =
            b.iter().map(|&bi| base[bi].context.as_str()).collect();
        let head_holders: std::collections::HashSet<&str> =
            h.iter().map(|&hi| head[hi].context.as_str()).collect();
        let rest_h: Vec<usize> = h
            .iter()
            .copied()
            .filter(|&hi| out[hi].is_none() && !base_holders.contains(head[hi].context.as_str()))
            .collect();
        let rest_b: Vec<usize> = b
            .iter()
            .copied()
            .filter(|&bi| !used[bi] && !head_holders.contains(base[bi].context.as_str()))
            .collect();
        if rest_h.len() == rest_b.len() {
            for (hi, bi) in rest_h.into_iter().zip(rest_b) {
                out[hi] = Some(bi);
                used[bi] = true;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::names::Reading;
    use super::*;

    fn n(v: f64) -> Value {
        Value::Num { v, seconds: false }
    }

    fn s(v: f64) -> Value {
        Value::Num { v, seconds: true }
    }

    #[test]
    fn an_expression_whose_one_number_changed_is_that_number_changed() {
        let u = |t: &str| Value::Unknown(t.into());
        let raised = judge(
            Knob::Count,
            &u("Number.isFinite(cfg.retries) ? Math.max(0, cfg.retries) : 2"),
            &u("Number.isFinite(cfg.retries) ? Math.max(0, cfg.retries) : 5"),
        );
        assert_eq!(raised, Judgement::Worse(Worse::CountRaised));
        assert_eq!(judge(Knob::Count, &u("cfg.retries || 5"), &u("cfg.retries || 3")), Judgement::Fine);
        // Two numbers changed, or the shape changed: not read.
        assert_eq!(judge(Knob::Count, &u("min(a, 3) + 1"), &u("min(a, 5) + 2")), Judgement::Fine);
        assert_eq!(judge(Knob::Count, &u("cfg.retries || 3"), &u("opts.retries || 5")), Judgement::Fine);
        assert_eq!(
            judge(Knob::Timeout, &u("env('T', 30)"), &u("env('T', 5)")),
            Judgement::Worse(Worse::TimeoutLowered)
        );
        // Another option's number inside the value, or a base of 0: not read.
        assert_eq!(
            judge(Knob::Count, &u("get(u, timeout = 30)"), &u("get(u, timeout = 60)")),
            Judgement::Fine
        );
        assert_eq!(
            judge(Knob::Count, &u("Retry(total = 3, jitter = 0.5)"), &u("Retry(total = 3, jitter = 1)")),
            Judgement::Fine
        );
        assert_eq!(judge(Knob::Count, &u("pointer.Of(0)"), &u("pointer.Of(12)")), Judgement::Fine);
        assert_eq!(
            judge(Knob::Count, &u("conf.GetInt(3, \"k\")"), &u("conf.GetInt(5, \"k\")")),
            Judgement::Worse(Worse::CountRaised)
        );
        // `s3Client` holds no number.
        assert_eq!(judge(Knob::Count, &u("s3Client.retries"), &u("s4Client.retries")), Judgement::Fine);
    }

    #[test]
    fn counts_go_up_timeouts_go_down_jitter_goes_off() {
        assert_eq!(judge(Knob::Count, &n(3.0), &n(10.0)), Judgement::Worse(Worse::CountRaised));
        assert_eq!(judge(Knob::Count, &n(10.0), &n(3.0)), Judgement::Fine);
        assert_eq!(judge(Knob::Count, &n(3.0), &n(-1.0)), Judgement::Worse(Worse::Unbounded));
        assert_eq!(judge(Knob::Count, &n(3.0), &Value::Unlimited), Judgement::Worse(Worse::Unbounded));
        assert_eq!(judge(Knob::Count, &n(3.0), &Value::Unknown("x".into())), Judgement::Unknown);
        assert_eq!(judge(Knob::Timeout, &s(30.0), &s(5.0)), Judgement::Worse(Worse::TimeoutLowered));
        assert_eq!(judge(Knob::Timeout, &s(30.0), &s(0.0)), Judgement::Fine, "0 means no timeout");
        assert_eq!(judge(Knob::Timeout, &n(30.0), &s(5.0)), Judgement::Fine, "units differ");
        assert_eq!(judge(Knob::Timeout, &s(5.0), &s(30.0)), Judgement::Fine);
        assert_eq!(
            judge(Knob::Jitter, &Value::Bool(true), &Value::Bool(false)),
            Judgement::Worse(Worse::JitterOff)
        );
        assert_eq!(judge(Knob::Jitter, &n(0.5), &n(0.0)), Judgement::Worse(Worse::JitterOff));
        assert_eq!(
            judge(Knob::Jitter, &Value::Text("full".into()), &Value::Text("none".into())),
            Judgement::Worse(Worse::JitterOff)
        );
        assert_eq!(judge(Knob::Jitter, &n(0.5), &n(0.2)), Judgement::Fine, "less jitter is still jitter");
    }

    #[test]
    fn severity_follows_what_ties_the_name_to_a_retry() {
        assert_eq!(severity(Worse::CountRaised, true, false), Severity::Error);
        assert_eq!(severity(Worse::CountRaised, false, true), Severity::Error);
        assert_eq!(severity(Worse::CountRaised, false, false), Severity::Warning);
        assert_eq!(severity(Worse::TimeoutLowered, false, false), Severity::Warning);
        assert_eq!(severity(Worse::JitterOff, false, false), Severity::Error);
    }

    fn set(key: &str, context: &str, line: u32) -> Setting {
        Setting {
            name: key.into(),
            key: key.into(),
            reading: Reading { knob: Knob::Count, says_retry: true },
            context: context.into(),
            line,
            value: n(1.0),
            default: None,
            library: None,
            default_source: None,
        }
    }

    #[test]
    fn pairs_follow_key_then_holder_then_order() {
        let base = [set("retries", "a", 1), set("retries", "b", 2), set("max_retries", "", 3)];
        let head =
            [set("retries", "b", 5), set("retries", "a", 6), set("max_retries", "x", 9), set("new", "", 10)];
        assert_eq!(pair(&base, &head), [Some(1), Some(0), Some(2), None]);
        // A new setting beside an unchanged one of the same holder is new.
        let mut new_one = set("max_attempts", "p", 3);
        new_one.value = Value::Unlimited;
        let base = [set("max_attempts", "p", 9)];
        let head = [new_one, set("max_attempts", "p", 9)];
        assert_eq!(pair(&base, &head), [None, Some(0)]);
        // Three against two with no holder in common: no guess.
        let base = [set("retries", "a", 1), set("retries", "b", 2)];
        let head = [set("retries", "c", 1), set("retries", "d", 2), set("retries", "e", 3)];
        assert_eq!(pair(&base, &head), [None, None, None]);
        // Renamed holders pair in order; a holder both sides have keeps its
        // own, and its new namesake is not the leftover of another holder.
        let base = [set("timeout", "open", 1), set("timeout", "join", 2)];
        let head = [set("timeout", "join", 2), set("timeout", "join", 3)];
        let got = pair(&base, &head);
        assert_eq!(got.iter().filter(|p| **p == Some(0)).count(), 0, "{got:?}");
        let base = [set("timeout", "open", 1), set("timeout", "join", 2)];
        let head = [set("timeout", "open_session", 1), set("timeout", "join", 2)];
        assert_eq!(pair(&base, &head), [Some(0), Some(1)]);
        // One holder, two calls in the base and three in the head, values
        // all changed: the n-th is not the n-th; no guess.
        let valued = |ctx: &str, line: u32, v: f64| {
            let mut x = set("timeout", ctx, line);
            x.value = n(v);
            x
        };
        let base = [valued("req", 1, 60.0), valued("req", 2, 30.0)];
        let head = [valued("req", 1, 5.0), valued("req", 2, 10.0), valued("req", 3, 12.0)];
        assert_eq!(pair(&base, &head), [None, None, None]);
        // As many on each side: in order.
        let head = [valued("req", 1, 5.0), valued("req", 2, 10.0)];
        assert_eq!(pair(&base, &head), [Some(0), Some(1)]);
        // A constant with no holder, shadowed by an override below it: the
        // first is the base's constant.
        let base = [valued("", 106, 4.0)];
        let head = [valued("", 146, 14.0), valued("", 147, 2.0)];
        assert_eq!(pair(&base, &head), [Some(0), None]);
    }
}
