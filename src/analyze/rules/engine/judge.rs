//! The judgement of `when: raised`, `when: lowered` and `when: added`:
//! occurrences are grouped by key and paired between base and head by
//! value, never by line number, so code that moved is not new and a setting
//! that moved and changed is still compared.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use serde_json::json;

use super::occurrences::{number, Num, Occ};
use super::side::SideText;
use crate::analyze::rules::mask::View;
use crate::analyze::rules::spec::{Counts, Rule, RuleSet, When};
use crate::changeset::FileChange;
use crate::finding::{Finding, Kind, Note};

fn value_json(counts: Option<Counts>, v: Num) -> serde_json::Value {
    match counts {
        Some(Counts::Seconds) => json!({ "seconds": v.to_json() }),
        Some(Counts::Ratio) => json!({ "value": v.to_json() }),
        _ => json!({ "attempts": v.to_json() }),
    }
}

/// Groups occurrences by key, keeping order within a key.
pub(super) fn by_key(occs: &[Occ]) -> BTreeMap<&str, Vec<&Occ>> {
    let mut m: BTreeMap<&str, Vec<&Occ>> = BTreeMap::new();
    for o in occs {
        m.entry(o.key.as_str()).or_default().push(o);
    }
    m
}

/// `when: raised` / `when: lowered`. A setting whose base value was known
/// and whose head value cannot be computed gives a blocking note (in `notes`).
pub(super) fn compare(
    (set, rule): (&RuleSet, &Rule),
    file: &FileChange,
    base: &[Occ],
    (head, head_side): (&[Occ], &SideText),
    notes: &mut Vec<Note>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let fixes = crate::analyze::rust::fix::Fixes::new(file);
    let base_by = by_key(base);
    for (key, heads) in by_key(head) {
        let bases = base_by.get(key).cloned().unwrap_or_default();
        // Settings whose value did not change pair off first; what is left
        // pairs in order: those are the settings that changed (or moved and changed).
        // Each head takes the first unused base of its value, from a queue
        // per value: scanning all bases per head was quadratic.
        let mut by_value: HashMap<Option<u64>, VecDeque<usize>> = HashMap::new();
        for (j, b) in bases.iter().enumerate() {
            by_value.entry(b.value.map(Num::bits)).or_default().push_back(j);
        }
        let mut used = vec![false; bases.len()];
        let mut changed_heads = Vec::new();
        for h in heads {
            match by_value.get_mut(&h.value.map(Num::bits)).and_then(VecDeque::pop_front) {
                Some(j) => used[j] = true,
                None => changed_heads.push(h),
            }
        }
        let changed_bases: Vec<&Occ> =
            bases.iter().enumerate().filter(|(j, _)| !used[*j]).map(|(_, b)| *b).collect();
        // A setting with no counterpart that was written into a call or a
        // literal the base already had replaces the library's default.
        for h in changed_heads.iter().skip(changed_bases.len()) {
            if let Some(f) = over_default(set, rule, file, h, head_side) {
                out.push(f);
            }
        }
        for (b, h) in changed_bases.into_iter().zip(changed_heads) {
            if let (Some(bv), Some((expr, why))) = (b.value, &h.unresolved) {
                if file.is_added(h.line) {
                    notes.push(Note::blocking(
                        Some(&file.path),
                        format!(
                            "line {}: {} was {} and is now `{expr}`, which retrygate cannot compute ({why}); \
                             write the value as a number or a constant in this file, or have a maintainer sign off \
                             after checking it does not exceed {} ({})",
                            h.line,
                            h.text,
                            b.raw,
                            bv.display(),
                            rule.id
                        ),
                    ));
                }
                continue;
            }
            let (Some(bv), Some(hv)) = (b.value, h.value) else { continue };
            let worse = match rule.when {
                When::Raised => hv.greater(bv),
                _ => bv.greater(hv),
            };
            if !worse || !file.is_added(h.line) {
                continue;
            }
            let kind = if rule.kind == Kind::RetryCountRaised && hv == Num::Unbounded {
                Kind::RetryUnbounded
            } else {
                rule.kind
            };
            let mut message = rule.message.replace("{base}", &b.raw).replace("{head}", &h.raw);
            match rule.counts {
                Some(Counts::Retries) => {
                    message.push_str(&format!(" ({} -> {} attempts)", bv.display(), hv.display()))
                }
                Some(Counts::Seconds) if b.raw != bv.display() || h.raw != hv.display() => {
                    message.push_str(&format!(" ({}s -> {}s)", bv.display(), hv.display()))
                }
                _ => {}
            }
            let mut f = Finding::new(kind, &rule.id, &file.path, h.line)
                .severity(rule.severity)
                .message(message)
                .base(value_json(rule.counts, bv))
                .head(value_json(rule.counts, hv));
            // The base's value, when it is the line's only change (a one-click fix).
            f.fix = fixes.restore_value(b.line, h.line, &b.raw, &h.raw, "put back the base's value");
            out.push(f);
        }
    }
    out
}

/// A head setting with no base counterpart, written on an added line into a
/// bracket opened on an unchanged line (an existing call, dict or object),
/// whose value is above the rule's library default: the default applied
/// there before. `None` when the rule has no default, the file does not use
/// the library it belongs to, or the setting is in new code.
fn over_default(set: &RuleSet, rule: &Rule, file: &FileChange, h: &Occ, head: &SideText) -> Option<Finding> {
    let default = rule.default.as_ref()?;
    let counts = rule.counts?;
    let hv = h.value?;
    let dv = number(rule, counts, &default.value, None)?;
    if rule.when != When::Raised || !hv.greater(dv) || !file.is_added(h.line) || file.base.text().is_none() {
        return None;
    }
    let opened = head.enclosing_line(View::Code, h.line)?;
    if file.is_added(opened) {
        return None;
    }
    if let Some(library) = default.requires {
        if head.context_in(set, library, View::Code, 1, u32::MAX).is_empty() {
            return None;
        }
    }
    let kind = if rule.kind == Kind::RetryCountRaised && hv == Num::Unbounded {
        Kind::RetryUnbounded
    } else {
        rule.kind
    };
    let base = format!("the library default {} ({})", default.value, default.source);
    let mut message = rule.message.replace("{base}", &base).replace("{head}", &h.raw);
    if counts == Counts::Retries {
        message.push_str(&format!(" ({} -> {} attempts)", dv.display(), hv.display()));
    }
    Some(
        Finding::new(kind, &rule.id, &file.path, h.line)
            .severity(rule.severity)
            .message(message)
            .base(value_json(Some(counts), dv))
            .head(value_json(Some(counts), hv)),
    )
}

/// Pairs equal keys between the sides; returns the unpaired occurrences of
/// `ours` and how many of `theirs` were left unpaired. Occurrences of `ours`
/// on unchanged lines are paired first: they are the same code as before.
fn unpaired<'o>(
    ours: &'o [Occ],
    theirs: &'o [Occ],
    unchanged: impl Fn(u32) -> bool,
) -> (Vec<&'o Occ>, usize) {
    let theirs_by = by_key(theirs);
    let mut left = Vec::new();
    let mut theirs_left = 0;
    let ours_by = by_key(ours);
    let our_keys: BTreeSet<&str> = ours_by.keys().copied().collect();
    for (key, mut mine) in ours_by {
        let count = theirs_by.get(key).map_or(0, Vec::len);
        mine.sort_by_key(|o| (!unchanged(o.line), o.line));
        let paired = count.min(mine.len());
        left.extend(mine.into_iter().skip(paired));
        theirs_left += count - paired;
    }
    for (key, t) in &theirs_by {
        if !our_keys.contains(key) {
            theirs_left += t.len();
        }
    }
    left.sort_by_key(|o| o.line);
    (left, theirs_left)
}

/// `when: added`: the head has more occurrences than the base.
pub(super) fn added(rule: &Rule, file: &FileChange, base: &[Occ], head: &[Occ]) -> Vec<Finding> {
    let (new, base_left) = unpaired(head, base, |l| !file.is_added(l));
    let excess = new.len().saturating_sub(base_left);
    new.into_iter()
        .filter(|o| file.is_added(o.line))
        .take(excess)
        .map(|o| {
            Finding::new(rule.kind, &rule.id, &file.path, o.line)
                .severity(rule.severity)
                .message(rule.message.replace("{match}", &o.text))
                .head(json!({ "match": o.text }))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::rules::spec::RuleSet;

    fn rule(when: &str) -> Rule {
        let (message, counts) =
            if when == "added" { ("{match}", "") } else { ("{base} -> {head}", "counts: attempts") };
        let yaml = format!(
            r#"
rules:
  - id: t/r
    kind: retry-count-raised
    severity: error
    languages: [python]
    message: "{message}"
    pattern: '\bretries=(?P<n>\d+)'
    when: {when}
    {counts}
    docs: {{ what: w, why: y, example: e, use_instead: u }}
"#
        );
        RuleSet::load(&[("t.yml".into(), yaml)]).unwrap().rules.remove(0)
    }

    fn occ(line: u32, key: &str, value: f64) -> Occ {
        Occ {
            line,
            key: key.into(),
            raw: format!("{value}"),
            value: Some(Num::Finite(value)),
            text: format!("{key}{value}"),
            unresolved: None,
        }
    }

    #[test]
    fn compare_pairs_unchanged_values_first_and_reports_the_changed_one() {
        let file = FileChange::from_texts("a.py", Some("a\nb\n"), Some("a\nb\nc\n"));
        let r = rule("raised");
        // `a=` keeps 2 (moved to line 1) and another `a=` went 3 -> 5 on the added line 3.
        let base = [occ(1, "a=", 3.0), occ(2, "a=", 2.0)];
        let head = [occ(1, "a=", 2.0), occ(3, "a=", 5.0)];
        let side = SideText::new(None, crate::analyze::rules::lang::Language::Python.syntax());
        let set = RuleSet::default();
        let cmp =
            |base: &[Occ], head: &[Occ]| compare((&set, &r), &file, base, (head, &side), &mut Vec::new());
        let f = cmp(&base, &head);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!((f[0].line, f[0].message.as_str()), (3, "3 -> 5"));
        // A different key is a different setting: nothing to compare.
        assert!(cmp(&[occ(1, "b=", 1.0)], &[occ(3, "a=", 9.0)]).is_empty());
        // Lowered is not raised.
        assert!(cmp(&base, &[occ(1, "a=", 2.0), occ(3, "a=", 1.0)]).is_empty());
    }

    #[test]
    fn added_reports_only_the_excess_on_added_lines() {
        let file = FileChange::from_texts("a.py", Some("x\n"), Some("x\ny\nz\n"));
        let r = rule("added");
        let f =
            added(&r, &file, &[occ(1, "k", 1.0)], &[occ(1, "k", 1.0), occ(2, "k", 1.0), occ(3, "j", 1.0)]);
        assert_eq!(f.iter().map(|f| f.line).collect::<Vec<_>>(), vec![2, 3]);
        // Two gone and two new elsewhere: an exchange, not an addition.
        let swapped =
            added(&r, &file, &[occ(1, "a", 1.0), occ(1, "b", 1.0)], &[occ(2, "c", 1.0), occ(3, "d", 1.0)]);
        assert!(swapped.is_empty(), "{swapped:?}");
    }

    #[test]
    fn unpaired_prefers_occurrences_on_unchanged_lines_as_the_old_ones() {
        let ours = [occ(5, "k", 1.0), occ(2, "k", 1.0)];
        let theirs = [occ(9, "k", 1.0), occ(9, "z", 1.0)];
        let (left, theirs_left) = unpaired(&ours, &theirs, |l| l == 5);
        assert_eq!(left.iter().map(|o| o.line).collect::<Vec<_>>(), vec![2]);
        assert_eq!(theirs_left, 1);
        assert_eq!(value_json(Some(Counts::Seconds), Num::Finite(0.5)), json!({"seconds": 0.5}));
        assert_eq!(value_json(None, Num::Unbounded), json!({"attempts": "unbounded"}));
    }
}
