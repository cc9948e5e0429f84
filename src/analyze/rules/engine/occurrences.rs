//! A rule's occurrences on one side of a file: its matches on lines the
//! change touched that pass the rule's `inside` condition, each keyed by
//! what it sets (the match without its number) and with its number
//! normalised to attempts, seconds or a plain value.

use super::side::SideText;
use super::values;
use crate::analyze::rules::spec::{unit_seconds, Counts, Rule, RuleSet};
use serde_json::json;

/// Longest matched text quoted in a message.
const MAX_QUOTED: usize = 80;

/// A number a rule captured, normalised (attempts, seconds or a plain value).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Num {
    Finite(f64),
    Unbounded,
}

impl Num {
    pub(super) fn greater(self, other: Num) -> bool {
        match (self, other) {
            (Num::Unbounded, Num::Finite(_)) => true,
            (Num::Finite(a), Num::Finite(b)) => a > b,
            _ => false,
        }
    }

    /// An exact identity for pairing equal values (`Unbounded` is `u64::MAX`,
    /// which no finite `f64` has as its bits).
    pub(super) fn bits(self) -> u64 {
        match self {
            Num::Unbounded => u64::MAX,
            Num::Finite(v) => (v + 0.0).to_bits(),
        }
    }

    pub(super) fn to_json(self) -> serde_json::Value {
        match self {
            Num::Unbounded => json!("unbounded"),
            Num::Finite(v) if v.fract() == 0.0 && v.abs() < 1e15 => json!(v as i64),
            Num::Finite(v) => json!(v),
        }
    }

    pub(super) fn display(self) -> String {
        match self {
            Num::Unbounded => "unbounded".into(),
            Num::Finite(v) if v.fract() == 0.0 && v.abs() < 1e15 => format!("{}", v as i64),
            Num::Finite(v) => format!("{v}"),
        }
    }
}

/// One match of a rule on one side.
#[derive(Debug)]
pub(super) struct Occ {
    pub(super) line: u32,
    /// What the match sets: the matched text without the number and unit,
    /// whitespace removed, quotes unified.
    pub(super) key: String,
    /// The number as written (with its unit), for messages.
    pub(super) raw: String,
    pub(super) value: Option<Num>,
    pub(super) text: String,
    /// A value that could not be computed: the expression as written and
    /// what stopped it (`value` is then `None`).
    pub(super) unresolved: Option<(String, String)>,
}

/// The offset whose line an occurrence is reported on: the captured number
/// when there is one (a value may sit a line below its key), else the
/// match's first visible byte.
fn report_offset(caps: &regex::bytes::Captures) -> Option<usize> {
    let m = caps.get(0)?;
    Some(match caps.name("n") {
        Some(n) => n.start(),
        None => m.start() + m.as_bytes().iter().take_while(|c| c.is_ascii_whitespace()).count(),
    })
}

/// A rule's occurrences on one side, searched in `regions` (byte ranges)
/// and kept when `changed` says their line is one the change touched.
pub(super) fn occurrences(
    set: &RuleSet,
    rule: &Rule,
    side: &SideText,
    regions: &[(usize, usize)],
    changed: &dyn Fn(u32) -> bool,
) -> Vec<Occ> {
    let Some(view) = side.view(rule.view) else { return Vec::new() };
    let raw = side.raw.unwrap_or("").as_bytes();
    let mut found: Vec<(usize, Occ)> = Vec::new();
    for re in rule.patterns.iter().map(|p| p.get()) {
        for &(from, to) in regions {
            for caps in re.captures_iter(&view[from..to]) {
                let (Some(m), Some(at)) = (caps.get(0), report_offset(&caps)) else { continue };
                let use_line = side.line_of(from + at);
                let n = caps.name("n");
                let unit = caps.name("unit");
                let raw_unit = unit.map(|g| String::from_utf8_lossy(g.as_bytes()).into_owned());
                // A number that is not written as one is computed (a name
                // bound elsewhere, a conversion, a default); its occurrence
                // is on the use when that changed, else on the literal's line.
                let mut resolved = None;
                if let (Some(counts), Some(g), true) = (rule.counts, n, side.binds_names) {
                    let written = String::from_utf8_lossy(g.as_bytes());
                    let plain = number(rule, counts, &written, raw_unit.as_deref()).is_some();
                    if !plain
                        && written.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '$')
                    {
                        resolved = Some(values::value_at(view, from + g.start()));
                    }
                }
                let line = match &resolved {
                    Some((v, _)) if !changed(use_line) => match values::literal_line(side, v) {
                        Some(l) if changed(l) => l,
                        _ => continue,
                    },
                    _ if !changed(use_line) => continue,
                    _ => use_line,
                };
                if let Some(inside) = &rule.inside {
                    let lo = use_line.saturating_sub(inside.before);
                    if side.context_in(set, inside.context, rule.view, lo, use_line + inside.after).is_empty()
                    {
                        continue;
                    }
                }
                if let Some(not) = &rule.not_inside {
                    let lo = use_line.saturating_sub(not.before);
                    if !side.context_in(set, not.context, rule.view, lo, use_line + not.after).is_empty() {
                        continue;
                    }
                }
                let key = match caps.name("key") {
                    Some(k) => normalise_key(k.as_bytes()),
                    None => {
                        let mut bytes = Vec::with_capacity(m.len());
                        for (i, &c) in m.as_bytes().iter().enumerate() {
                            let at = m.start() + i;
                            let in_group =
                                |g: Option<regex::bytes::Match>| g.is_some_and(|g| g.range().contains(&at));
                            if !in_group(n) && !in_group(unit) {
                                bytes.push(c);
                            }
                        }
                        normalise_key(&bytes)
                    }
                };
                let mut raw_n =
                    n.map(|g| String::from_utf8_lossy(g.as_bytes()).into_owned()).unwrap_or_default();
                let mut unresolved = None;
                match resolved {
                    Some((values::Value::Known { text, .. }, _)) => raw_n = text,
                    Some((values::Value::Unknown(why), expr)) => unresolved = Some((expr, why)),
                    None => {}
                }
                let value = match (rule.counts, &unresolved) {
                    (Some(_), Some(_)) => None,
                    (Some(counts), None) => match number(rule, counts, &raw_n, raw_unit.as_deref()) {
                        Some(v) => Some(v),
                        // A word that is no number and no "unbounded"
                        // (`True`) cannot be compared; it is not an occurrence.
                        None => continue,
                    },
                    (None, _) => None,
                };
                let written = format!("{}{}", shorten_number(&raw_n), raw_unit.as_deref().unwrap_or(""));
                let text = quote(&String::from_utf8_lossy(&raw[from + m.start()..from + m.end()]));
                found.push((from + m.start(), Occ { line, key, raw: written, value, text, unresolved }));
            }
        }
    }
    found.sort_by_key(|(start, _)| *start);
    found.into_iter().map(|(_, o)| o).collect()
}

/// A number as written, shortened for messages when it is too long to read
/// (`1000...000 (309 digits)`).
fn shorten_number(raw: &str) -> String {
    const KEEP: usize = 6;
    if raw.len() <= 3 * KEEP || !raw.is_ascii() {
        return raw.to_string();
    }
    format!("{}...{} ({} digits)", &raw[..KEEP], &raw[raw.len() - KEEP..], raw.len())
}

fn normalise_key(bytes: &[u8]) -> String {
    bytes
        .iter()
        .filter(|c| !c.is_ascii_whitespace())
        .map(|&c| if c == b'\'' || c == b'`' { '"' } else { c as char })
        .collect()
}

/// Collapses whitespace and shortens matched text for messages. Trailing
/// separators a pattern matched only to end a value (`jitter=False)`) go.
fn quote(s: &str) -> String {
    let collapsed = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let collapsed = collapsed.trim_end_matches([',', ')', ';', '}', ' ']).to_string();
    if collapsed.chars().count() > MAX_QUOTED {
        let short: String = collapsed.chars().take(MAX_QUOTED).collect();
        format!("{short}...")
    } else {
        collapsed
    }
}

pub(super) fn number(rule: &Rule, counts: Counts, raw: &str, unit: Option<&str>) -> Option<Num> {
    let trimmed = raw.trim().trim_matches(|c| c == '"' || c == '\'');
    let trimmed = rule.values.get(trimmed).map_or(trimmed, |v| v.as_str());
    if rule.unbounded.iter().any(|u| u == trimmed) {
        return Some(Num::Unbounded);
    }
    let digits = trimmed.replace('_', "");
    let v: f64 = digits.parse().ok()?;
    if !v.is_finite() {
        // A literal too large for an f64 (`retries=` and 309 digits) is a
        // count no budget can hold: it compares as unbounded rather than
        // being dropped, so raising a count to it is still reported.
        return digits.bytes().all(|c| c.is_ascii_digit() || c == b'.').then_some(Num::Unbounded);
    }
    Some(Num::Finite(match counts {
        Counts::Retries => v + 1.0,
        Counts::Attempts | Counts::Ratio => v,
        Counts::Seconds => {
            let per = match unit {
                Some(u) => unit_seconds(u)?,
                None => rule.default_unit,
            };
            v * per
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::rules::lang::Language;

    fn rules(yaml: &str) -> RuleSet {
        RuleSet::load(&[("t.yml".into(), yaml.into())]).unwrap()
    }

    const TIMEOUT: &str = r#"
rules:
  - id: t/timeout
    kind: retry-count-raised
    severity: error
    languages: [python]
    message: "timeout {base} -> {head}"
    pattern: '\btimeout\s*=\s*(?P<n>[\d_.]+|None)(?P<unit>ms)?'
    when: raised
    counts: seconds
    unbounded: ["None"]
    inside: { pattern: '\bretry\(', before: 1 }
    docs: { what: w, why: y, example: e, use_instead: u }
"#;

    #[test]
    fn occurrences_are_keyed_without_their_number_and_kept_on_changed_lines_inside_context() {
        let set = rules(TIMEOUT);
        let text = "retry(\n  timeout = 1_500ms)\nget(timeout=2)\nretry(timeout=x)\n";
        let side = SideText::new(Some(text), Language::Python.syntax());
        let all = [(0, text.len())];
        let occs = occurrences(&set, &set.rules[0], &side, &all, &|_| true);
        // Line 3 is outside the context; line 4's value is a name this
        // file never sets: an occurrence with no value, saying why.
        assert_eq!(occs.len(), 2, "{occs:?}");
        assert_eq!((occs[1].line, occs[1].value), (4, None));
        assert!(occs[1].unresolved.as_ref().is_some_and(|(e, why)| e == "x" && why.contains("not set")));
        let o = &occs[0];
        assert_eq!(
            (o.line, o.key.as_str(), o.raw.as_str(), o.text.as_str()),
            (2, "timeout=", "1_500ms", "timeout = 1_500ms")
        );
        assert_eq!(o.value, Some(Num::Finite(1.5)));
        // The same match on a line the change did not touch is no occurrence.
        assert!(occurrences(&set, &set.rules[0], &side, &all, &|l| l == 3).is_empty());
    }

    #[test]
    fn a_value_set_elsewhere_is_reported_where_it_changed() {
        let set = rules(TIMEOUT);
        let text = "T = 1_500ms_is_no_literal
LIMIT = 3
retry(
  timeout=LIMIT)
";
        let side = SideText::new(Some(text), Language::Python.syntax());
        let all = [(0, text.len())];
        // The use is unchanged, the constant's line changed: reported there.
        let occs = occurrences(&set, &set.rules[0], &side, &all, &|l| l == 2);
        assert_eq!(
            occs.iter().map(|o| (o.line, o.value)).collect::<Vec<_>>(),
            vec![(2, Some(Num::Finite(3.0)))]
        );
        assert_eq!(occs[0].raw, "3");
        // Neither changed: no occurrence.
        assert!(occurrences(&set, &set.rules[0], &side, &all, &|l| l == 1).is_empty());
    }

    #[test]
    fn numbers_normalise_to_attempts_seconds_or_unbounded() {
        let set = rules(TIMEOUT);
        let rule = &set.rules[0];
        assert_eq!(number(rule, Counts::Retries, "2", None), Some(Num::Finite(3.0)));
        assert_eq!(number(rule, Counts::Attempts, "'4'", None), Some(Num::Finite(4.0)));
        assert_eq!(number(rule, Counts::Seconds, "250", Some("ms")), Some(Num::Finite(0.25)));
        assert_eq!(number(rule, Counts::Seconds, "None", None), Some(Num::Unbounded));
        assert_eq!(number(rule, Counts::Retries, "n", None), None, "a name is not a number");
        assert_eq!(number(rule, Counts::Seconds, "1", Some("fortnights")), None, "an unknown unit");
        assert!(Num::Unbounded.greater(Num::Finite(1e300)) && !Num::Finite(1.0).greater(Num::Unbounded));
        assert_eq!(Num::Finite(-0.0).bits(), Num::Finite(0.0).bits(), "zero pairs with zero");
    }

    #[test]
    fn messages_quote_matches_short_and_keys_ignore_spacing_and_quotes() {
        assert_eq!(quote("retry(jitter =\n  False),"), "retry(jitter = False");
        assert_eq!(quote(&"x".repeat(100)).chars().count(), MAX_QUOTED + 3);
        assert_eq!(normalise_key(b"max_retries : 'a'"), "max_retries:\"a\"");
        assert_eq!(shorten_number("12345"), "12345");
        assert_eq!(shorten_number(&"7".repeat(30)), "777777...777777 (30 digits)");
    }
}
