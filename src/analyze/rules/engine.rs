//! Evaluates compiled rules on one changed file, comparing base with head.
//!
//! The engine is a pure function of a [`RuleSet`] and a [`FileChange`]:
//!
//! 1. the file's language is judged from its name (no language, no rules);
//! 2. each side is masked (comments and prose strings blanked) when, and
//!    only when, a step below needs it;
//! 3. [`RegexSet`]s built once per run say which rules can matter at all
//!    (the prefilter): `raised`/`lowered`/`added` rules are searched in the
//!    head's added lines, `removed` rules in the base's deleted or replaced
//!    lines (both widened by [`PREFILTER_MARGIN_LINES`], and both behind a
//!    raw-text literal gate that spares masking); only those are evaluated;
//! 4. each candidate rule collects its *occurrences* on both sides (matches
//!    on lines the change touched that pass the `inside` condition), keys
//!    them by what they set, and compares base with head as its `when:`
//!    says (`docs/rules.md`).
//!
//! Occurrences are paired by key and value, never by line number, so code
//! that moved within the file is not new and a setting that moved and changed
//! is still compared.

use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use aho_corasick::AhoCorasick;
use regex::bytes::{RegexSet, RegexSetBuilder};
use serde_json::json;
use similar::{Algorithm, DiffOp};

use super::lang::{Language, Syntax};
use super::mask::{mask, View};
use super::spec::{unit_seconds, Counts, Rule, RuleSet, When};
use crate::analyze::FileResult;
use crate::changeset::FileChange;
use crate::finding::{Finding, Kind};

/// The base's changed regions (byte ranges, widened) and lines (1-based ranges).
type ChangedBase = (Vec<(usize, usize)>, Vec<(u32, u32)>);

/// Longest matched text quoted in a message.
const MAX_QUOTED: usize = 80;

/// Rules of one language for one view, behind a `RegexSet` prefilter.
#[derive(Debug)]
struct Prefilter {
    set: RegexSet,
    /// The rule each pattern of `set` belongs to.
    owners: Vec<usize>,
    view: View,
}

/// A rule set ready to run: compiled rules plus per-language prefilters.
#[derive(Debug)]
pub struct Engine {
    pub set: RuleSet,
    by_lang: HashMap<Language, LangFilters>,
}

/// The prefilters of one language. A `raised`/`lowered`/`added` finding
/// needs a head occurrence on an added line, so those rules are prefiltered
/// on the head's changed regions only; a `removed` finding needs a base
/// occurrence on a deleted or replaced line, so those rules are prefiltered
/// on the base's changed regions.
#[derive(Debug, Default)]
struct LangFilters {
    head: Vec<Prefilter>,
    base: Vec<Prefilter>,
    /// Literals every match of a `removed` rule must contain, searched in the
    /// raw base: when none occurs near a removed base line, the base is
    /// neither masked nor searched.
    removed_gate: Option<LiteralGate>,
    /// The same for the `raised`/`lowered`/`added` rules, on the head.
    head_gate: Option<LiteralGate>,
}

/// A sound raw-text gate: masking only turns bytes into spaces, so a
/// space-free literal in a masked match is in the raw text at the same place.
#[derive(Debug)]
struct LiteralGate {
    literals: AhoCorasick,
    /// Set when some rule has no usable literal: the gate cannot say no.
    always: bool,
}

/// How many lines around each added head range the prefilter reads, so a
/// match that starts a few lines above its changed value (a key, then its
/// value on the next line) is still seen.
pub const PREFILTER_MARGIN_LINES: u32 = 3;

impl Engine {
    /// Builds the prefilters. Called once per run.
    pub fn new(set: RuleSet) -> anyhow::Result<Engine> {
        let mut by_lang = HashMap::new();
        for &lang in Language::ALL {
            let mut filters = LangFilters::default();
            for view in [View::Code, View::Text] {
                for on_base in [false, true] {
                    let mut sources = Vec::new();
                    let mut owners = Vec::new();
                    for (i, rule) in set.rules.iter().enumerate() {
                        let wanted = rule.view == view
                            && rule.languages.contains(&lang)
                            && (rule.when == When::Removed) == on_base;
                        if wanted {
                            for p in &rule.pattern_sources {
                                sources.push(p.as_str());
                                owners.push(i);
                            }
                        }
                    }
                    if sources.is_empty() {
                        continue;
                    }
                    let regex_set = RegexSetBuilder::new(&sources)
                        .unicode(false)
                        .multi_line(true)
                        .size_limit(64 << 20)
                        .dfa_size_limit(64 << 20)
                        .build()
                        .map_err(|e| anyhow::anyhow!("could not build the {} prefilter: {e}", lang.name()))?;
                    let f = Prefilter { set: regex_set, owners, view };
                    if on_base {
                        filters.base.push(f);
                    } else {
                        filters.head.push(f);
                    }
                }
            }
            if !filters.base.is_empty() {
                let removed: Vec<&Rule> = set
                    .rules
                    .iter()
                    .filter(|r| r.when == When::Removed && r.languages.contains(&lang))
                    .collect();
                filters.removed_gate = literal_gate(&removed);
            }
            if !filters.head.is_empty() {
                let others: Vec<&Rule> = set
                    .rules
                    .iter()
                    .filter(|r| r.when != When::Removed && r.languages.contains(&lang))
                    .collect();
                filters.head_gate = literal_gate(&others);
            }
            if !filters.head.is_empty() || !filters.base.is_empty() {
                by_lang.insert(lang, filters);
            }
        }
        Ok(Engine { set, by_lang })
    }

    /// Whether any rule reads the file at `path`.
    pub fn wants(&self, path: &str) -> bool {
        match Language::of_path(path) {
            Some(lang) => {
                self.by_lang.contains_key(&lang) && self.set.rules.iter().any(|r| r.applies_to(lang, path))
            }
            None => false,
        }
    }

    /// Runs every applicable rule on one file.
    pub fn analyze(&self, file: &FileChange) -> FileResult {
        let mut out = FileResult::default();
        let Some(lang) = Language::of_path(&file.path) else { return out };
        let Some(filters) = self.by_lang.get(&lang) else { return out };
        let syntax = lang.syntax();
        let base = SideText::new(file.base.text(), syntax);
        let head = SideText::new(file.head.text(), syntax);
        let mut candidates = BTreeSet::new();
        // Only lines the change touched can hold an occurrence that matters:
        // the head's added lines and the base's deleted or replaced ones,
        // each widened so that a match may start a little above its line.
        let head_regions = head.regions(&file.added, PREFILTER_MARGIN_LINES);
        let base_changed: OnceCell<ChangedBase> = OnceCell::new();
        if let Some(raw) = head.raw.filter(|_| !file.added.is_empty()) {
            // Regions with none of the literals the rules' matches start with
            // are dropped before the head is masked at all.
            let regions: Vec<(usize, usize)> = head_regions
                .iter()
                .copied()
                .filter(|&(from, to)| {
                    filters
                        .head_gate
                        .as_ref()
                        .is_none_or(|g| g.always || g.literals.is_match(&raw.as_bytes()[from..to]))
                })
                .collect();
            for f in &filters.head {
                if regions.is_empty() {
                    break;
                }
                let Some(text) = head.view(f.view) else { continue };
                for &(from, to) in &regions {
                    for p in f.set.matches(&text[from..to]).iter() {
                        candidates.insert(f.owners[p]);
                    }
                }
            }
        }
        let diff = OnceCell::new();
        if head.raw.is_some() && !filters.base.is_empty() {
            // A removed occurrence sits on a base line the change deleted or
            // replaced: search those lines (widened like the head's), and
            // only when a literal the rules need is there at all.
            let raw = base.raw.unwrap_or("").as_bytes();
            let gate_open = |from: usize, to: usize| {
                filters.removed_gate.as_ref().is_none_or(|g| g.always || g.literals.is_match(&raw[from..to]))
            };
            if gate_open(0, raw.len()) {
                let (base_regions, _) = base_changed.get_or_init(|| {
                    let lines = base_changed_lines(&base, &head, &file.added);
                    (base.regions(&lines, PREFILTER_MARGIN_LINES), lines)
                });
                let regions: Vec<(usize, usize)> =
                    base_regions.iter().copied().filter(|&(from, to)| gate_open(from, to)).collect();
                for f in &filters.base {
                    if regions.is_empty() {
                        break;
                    }
                    let Some(text) = base.view(f.view) else { continue };
                    for &(from, to) in &regions {
                        for p in f.set.matches(&text[from..to]).iter() {
                            candidates.insert(f.owners[p]);
                        }
                    }
                }
            }
        }
        for i in candidates {
            let rule = &self.set.rules[i];
            if !rule.applies_to(lang, &file.path) {
                continue;
            }
            // A raise or an addition is reported on an added head line; a
            // rule with no match there is done before the base is read.
            if rule.when != When::Removed && !matches_added_line(&self.set, rule, &head, file) {
                continue;
            }
            let (base_regions, base_lines) = base_changed.get_or_init(|| {
                let lines = base_changed_lines(&base, &head, &file.added);
                (base.regions(&lines, PREFILTER_MARGIN_LINES), lines)
            });
            let in_base_change = |l: u32| {
                let i = base_lines.partition_point(|&(_, b)| b < l);
                base_lines.get(i).is_some_and(|&(a, _)| a <= l)
            };
            let b = occurrences(&self.set, rule, &base, base_regions, &in_base_change);
            let h = occurrences(&self.set, rule, &head, &head_regions, &|l| file.is_added(l));
            match rule.when {
                When::Raised | When::Lowered => out.findings.extend(compare(rule, file, &b, &h)),
                When::Added => out.findings.extend(added(rule, file, &b, &h)),
                When::Removed => {
                    out.findings.extend(removed(&self.set, rule, file, &b, &h, (&base, &head), &diff))
                }
            }
        }
        // One finding per kind and line: when two rules say the same thing
        // about a line (`jitter=True` -> `jitter=False` is both a disabling
        // flag added and a jitter flag removed), the most severe one speaks.
        crate::finding::keep_most_severe(&mut out.findings);
        out
    }
}

/// A number a rule captured, normalised (attempts, seconds or a plain value).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Num {
    Finite(f64),
    Unbounded,
}

impl Num {
    fn greater(self, other: Num) -> bool {
        match (self, other) {
            (Num::Unbounded, Num::Finite(_)) => true,
            (Num::Finite(a), Num::Finite(b)) => a > b,
            _ => false,
        }
    }

    /// An exact identity for pairing equal values (`Unbounded` is `u64::MAX`,
    /// which no finite `f64` has as its bits).
    fn bits(self) -> u64 {
        match self {
            Num::Unbounded => u64::MAX,
            Num::Finite(v) => (v + 0.0).to_bits(),
        }
    }

    fn to_json(self) -> serde_json::Value {
        match self {
            Num::Unbounded => json!("unbounded"),
            Num::Finite(v) if v.fract() == 0.0 && v.abs() < 1e15 => json!(v as i64),
            Num::Finite(v) => json!(v),
        }
    }

    fn display(self) -> String {
        match self {
            Num::Unbounded => "unbounded".into(),
            Num::Finite(v) if v.fract() == 0.0 && v.abs() < 1e15 => format!("{}", v as i64),
            Num::Finite(v) => format!("{v}"),
        }
    }
}

/// One match of a rule on one side.
#[derive(Debug)]
struct Occ {
    line: u32,
    /// What the match sets: the matched text without the number and unit,
    /// whitespace removed, quotes unified.
    key: String,
    /// The number as written (with its unit), for messages.
    raw: String,
    value: Option<Num>,
    text: String,
}

/// One side of a file with its masked views and line index, built lazily.
struct SideText<'a> {
    raw: Option<&'a str>,
    syntax: Syntax,
    code: OnceCell<Vec<u8>>,
    text: OnceCell<Vec<u8>>,
    line_starts: OnceCell<Vec<usize>>,
}

impl<'a> SideText<'a> {
    fn new(raw: Option<&'a str>, syntax: Syntax) -> Self {
        SideText { raw, syntax, code: OnceCell::new(), text: OnceCell::new(), line_starts: OnceCell::new() }
    }

    fn view(&self, view: View) -> Option<&[u8]> {
        let raw = self.raw?;
        let cell = match view {
            View::Code => &self.code,
            View::Text => &self.text,
        };
        Some(cell.get_or_init(|| mask(raw, &self.syntax, view)))
    }

    fn line_of(&self, offset: usize) -> u32 {
        let starts = self.line_starts.get_or_init(|| line_starts(self.raw.unwrap_or("")));
        starts.partition_point(|&s| s <= offset) as u32
    }

    /// Whether head line `line` (1-based) has anything but blanks in the code view.
    fn has_code(&self, line: u32) -> bool {
        let Some(text) = self.view(View::Code) else { return false };
        let starts = self.line_starts.get_or_init(|| line_starts(self.raw.unwrap_or("")));
        let Some(&from) = starts.get(line.saturating_sub(1) as usize) else { return false };
        let to = starts.get(line as usize).copied().unwrap_or(text.len());
        text[from..to].iter().any(|c| !c.is_ascii_whitespace())
    }

    /// Byte ranges covering the added line ranges widened by `margin` lines,
    /// merged where they overlap.
    fn regions(&self, added: &[(u32, u32)], margin: u32) -> Vec<(usize, usize)> {
        let raw = self.raw.unwrap_or("");
        let starts = self.line_starts.get_or_init(|| line_starts(raw));
        let start_of = |line: u32| starts.get(line.saturating_sub(1) as usize).copied().unwrap_or(raw.len());
        let mut out: Vec<(usize, usize)> = Vec::new();
        for &(a, b) in added {
            let from = start_of(a.saturating_sub(margin).max(1));
            let to = start_of(b.saturating_add(margin).saturating_add(1));
            match out.last_mut() {
                Some(last) if last.1 >= from => last.1 = last.1.max(to),
                _ => out.push((from, to)),
            }
        }
        out
    }

    /// The raw text of line `line` (1-based), without its line break.
    fn line_text(&self, line: u32) -> &str {
        let raw = self.raw.unwrap_or("");
        let starts = self.line_starts.get_or_init(|| line_starts(raw));
        let Some(&from) = starts.get(line.saturating_sub(1) as usize) else { return "" };
        let to = starts.get(line as usize).copied().unwrap_or(raw.len());
        raw[from..to].trim_end_matches(['\n', '\r'])
    }

    /// The lines in `lo..=hi` on which context `ctx` matches in `view`. The
    /// context pattern is matched within those lines only.
    fn context_in(&self, set: &RuleSet, ctx: usize, view: View, lo: u32, hi: u32) -> Vec<u32> {
        let Some(text) = self.view(view) else { return Vec::new() };
        let starts = self.line_starts.get_or_init(|| line_starts(self.raw.unwrap_or("")));
        let start_of = |line: u32| starts.get(line.saturating_sub(1) as usize).copied().unwrap_or(text.len());
        let (from, to) = (start_of(lo.max(1)), start_of(hi.saturating_add(1)));
        if from >= to {
            return Vec::new();
        }
        let mut lines: Vec<u32> =
            set.contexts[ctx].find_iter(&text[from..to]).map(|m| self.line_of(from + m.start())).collect();
        lines.dedup();
        lines
    }
}

/// Byte offsets where lines start (masking keeps them, so any view will do).
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0).chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|p| p + 1)).collect()
}

/// Whether a pattern of `rule` matches in the head's changed regions with its
/// reporting line (see [`report_offset`]) on an added line and inside the
/// rule's context.
fn matches_added_line(set: &RuleSet, rule: &Rule, head: &SideText, file: &FileChange) -> bool {
    let Some(text) = head.view(rule.view) else { return false };
    let regions = head.regions(&file.added, PREFILTER_MARGIN_LINES);
    // The same test `occurrences` makes: on an added line, and inside.
    let counts = |line: u32| {
        file.is_added(line)
            && rule.inside.as_ref().is_none_or(|i| {
                !head
                    .context_in(set, i.context, rule.view, line.saturating_sub(i.before), line + i.after)
                    .is_empty()
            })
    };
    rule.patterns.iter().any(|re| {
        regions.iter().any(|&(from, to)| {
            re.captures_iter(&text[from..to])
                .any(|caps| report_offset(&caps).is_some_and(|at| counts(head.line_of(from + at))))
        })
    })
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
fn occurrences(
    set: &RuleSet,
    rule: &Rule,
    side: &SideText,
    regions: &[(usize, usize)],
    changed: &dyn Fn(u32) -> bool,
) -> Vec<Occ> {
    let Some(view) = side.view(rule.view) else { return Vec::new() };
    let raw = side.raw.unwrap_or("").as_bytes();
    let mut found: Vec<(usize, Occ)> = Vec::new();
    for re in &rule.patterns {
        for &(from, to) in regions {
            for caps in re.captures_iter(&view[from..to]) {
                let (Some(m), Some(at)) = (caps.get(0), report_offset(&caps)) else { continue };
                let line = side.line_of(from + at);
                if !changed(line) {
                    continue;
                }
                if let Some(inside) = &rule.inside {
                    let lo = line.saturating_sub(inside.before);
                    if side.context_in(set, inside.context, rule.view, lo, line + inside.after).is_empty() {
                        continue;
                    }
                }
                let n = caps.name("n");
                let unit = caps.name("unit");
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
                let raw_n = n.map(|g| String::from_utf8_lossy(g.as_bytes()).into_owned()).unwrap_or_default();
                let raw_unit = unit.map(|g| String::from_utf8_lossy(g.as_bytes()).into_owned());
                let value = match rule.counts {
                    Some(counts) => match number(rule, counts, &raw_n, raw_unit.as_deref()) {
                        Some(v) => Some(v),
                        // A capture that is not a number (a variable, an expression)
                        // cannot be compared; it is not an occurrence.
                        None => continue,
                    },
                    None => None,
                };
                let written = format!("{}{}", shorten_number(&raw_n), raw_unit.as_deref().unwrap_or(""));
                let text = quote(&String::from_utf8_lossy(&raw[from + m.start()..from + m.end()]));
                found.push((from + m.start(), Occ { line, key, raw: written, value, text }));
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

fn number(rule: &Rule, counts: Counts, raw: &str, unit: Option<&str>) -> Option<Num> {
    let trimmed = raw.trim().trim_matches(|c| c == '"' || c == '\'');
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

fn value_json(counts: Option<Counts>, v: Num) -> serde_json::Value {
    match counts {
        Some(Counts::Seconds) => json!({ "seconds": v.to_json() }),
        Some(Counts::Ratio) => json!({ "value": v.to_json() }),
        _ => json!({ "attempts": v.to_json() }),
    }
}

/// Groups occurrences by key, keeping order within a key.
fn by_key(occs: &[Occ]) -> BTreeMap<&str, Vec<&Occ>> {
    let mut m: BTreeMap<&str, Vec<&Occ>> = BTreeMap::new();
    for o in occs {
        m.entry(o.key.as_str()).or_default().push(o);
    }
    m
}

/// `when: raised` / `when: lowered`.
fn compare(rule: &Rule, file: &FileChange, base: &[Occ], head: &[Occ]) -> Vec<Finding> {
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
        let changed_bases = bases.iter().enumerate().filter(|(j, _)| !used[*j]).map(|(_, b)| *b);
        for (b, h) in changed_bases.zip(changed_heads) {
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
fn added(rule: &Rule, file: &FileChange, base: &[Occ], head: &[Occ]) -> Vec<Finding> {
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

/// `when: removed`: the base has more occurrences than the head, and the
/// retry site (the `inside` context) is still there next to where they were.
fn removed(
    set: &RuleSet,
    rule: &Rule,
    file: &FileChange,
    base: &[Occ],
    head: &[Occ],
    (base_side, head_side): (&SideText, &SideText),
    diff: &OnceCell<Vec<DiffOp>>,
) -> Vec<Finding> {
    let Some(inside) = &rule.inside else { return Vec::new() };
    if file.head.text().is_none() || base.is_empty() {
        return Vec::new();
    }
    // Nothing can be gone unless some setting occurs less often in the head:
    // this saves the line diff for the common case.
    let head_counts = by_key(head);
    if by_key(base).iter().all(|(k, b)| head_counts.get(k).map_or(0, Vec::len) >= b.len()) {
        return Vec::new();
    }
    let ops = diff.get_or_init(|| diff_ops(file));
    // A base occurrence is not gone when its line is unchanged; when the
    // head lines that replaced it hold the same setting, or another form of
    // it (one jittered wait exchanged for another); or when the same setting
    // appears on an added line elsewhere (moved code). Pairing is in that order.
    let mut used = vec![false; head.len()];
    let mut pending = Vec::new();
    let spots = Spots::new(ops);
    for o in base {
        if let Some(spot) = spots.head_spot(o.line) {
            pending.push((o, spot));
        }
    }
    // Each pass gives every pending base occurrence the first unused head
    // occurrence (in head order, which is line order) that it accepts.
    // Head occurrences are indexed per pass so that a pass is a binary
    // search per occurrence, not a scan of the head.
    for pass in [Pass::SameKeyInReplacement, Pass::AnyInReplacement, Pass::SameKeyAdded] {
        let mut pools: HashMap<&str, Pool> = HashMap::new();
        for (j, h) in head.iter().enumerate() {
            if used[j] || (pass == Pass::SameKeyAdded && !file.is_added(h.line)) {
                continue;
            }
            let key = if pass == Pass::AnyInReplacement { "" } else { h.key.as_str() };
            pools.entry(key).or_default().push(j, h.line);
        }
        pending.retain(|&(o, spot)| {
            let key = if pass == Pass::AnyInReplacement { "" } else { o.key.as_str() };
            let Some(pool) = pools.get_mut(key) else { return true };
            let (lo, hi) = match (pass, spot) {
                (Pass::SameKeyAdded, _) => (0, u32::MAX),
                (_, Spot::Replaced(a, b)) => (a, b),
                (_, Spot::Gap(_)) => return true,
            };
            match pool.take_first(lo, hi) {
                Some(j) => {
                    used[j] = true;
                    false
                }
                None => true,
            }
        });
    }
    let mut out = Vec::new();
    // Many removed occurrences can share one replaced block; the context
    // lines of a head range are searched once per range, not once per
    // occurrence (that was quadratic in the size of the block).
    let mut head_sites: HashMap<(u32, u32), Vec<u32>> = HashMap::new();
    let mut sites_in = |lo: u32, hi: u32| -> Vec<u32> {
        head_sites
            .entry((lo, hi))
            .or_insert_with(|| head_side.context_in(set, inside.context, rule.view, lo, hi))
            .clone()
    };
    for (o, spot) in pending {
        // The retry site that made this a match in the base (the nearest
        // context line) must still be there, unchanged or edited, not
        // deleted along with it.
        let base_sites = base_side.context_in(
            set,
            inside.context,
            rule.view,
            o.line.saturating_sub(inside.before),
            o.line + inside.after,
        );
        let nearest = base_sites.iter().copied().min_by_key(|&l| (l.abs_diff(o.line), l > o.line));
        let survived = match nearest.map(|l| (l, spots.head_spot(l))) {
            // Unchanged.
            Some((l, None)) => spots.survives(l),
            // Edited: the edited lines must still look like a retry site.
            Some((_, Some(Spot::Replaced(a, b)))) => !sites_in(a, b).is_empty(),
            _ => false,
        };
        if !survived {
            continue;
        }
        let (lo, hi) = match spot {
            Spot::Replaced(a, b) => (a.saturating_sub(inside.before).max(1), b + inside.after),
            Spot::Gap(after) => ((after + 1).saturating_sub(inside.before).max(1), after + inside.after),
        };
        let sites = sites_in(lo, hi);
        if sites.is_empty() {
            // The retry site went with it: a removed retry is not a weaker one.
            continue;
        }
        let line = match spot {
            Spot::Replaced(a, b) => {
                // The counterpart is looked for near the line's place in the
                // block, so a large replaced block is not read once per line.
                let offset = match spots.op(o.line) {
                    Some(&DiffOp::Replace { old_index, .. }) => (o.line - 1).saturating_sub(old_index as u32),
                    _ => 0,
                };
                let at = a.saturating_add(offset).min(b);
                let (wa, wb) = (
                    at.saturating_sub(COUNTERPART_WINDOW).max(a),
                    at.saturating_add(COUNTERPART_WINDOW).min(b),
                );
                let first_site = sites.get(sites.partition_point(|&l| l < wa)).copied().filter(|&l| l <= wb);
                best_counterpart(base_side.line_text(o.line), head_side, wa, wb)
                    .or(first_site)
                    .or_else(|| (wa..=wb).find(|&l| head_side.has_code(l)))
                    // Replaced by comments or blank lines only: report at
                    // the retry site, as for a deletion.
                    .or_else(|| sites.iter().copied().min_by_key(|&l| l.abs_diff(wa)))
                    .unwrap_or(wa)
            }
            Spot::Gap(after) => sites.iter().copied().min_by_key(|&l| l.abs_diff(after)).unwrap_or(after),
        };
        out.push(
            Finding::new(rule.kind, &rule.id, &file.path, line)
                .severity(rule.severity)
                .message(rule.message.replace("{match}", &o.text))
                .base(json!({ "match": o.text, "line": o.line })),
        );
    }
    out
}

/// How far from a removed line's own place in a replaced block its
/// counterpart is looked for, in lines (blocks up to twice this size are
/// read whole).
const COUNTERPART_WINDOW: u32 = 50;

/// The replacing head line that reads most like the removed base line (the
/// longest common prefix, indentation ignored), so `retryDelay: exponentialDelay`
/// -> `retryDelay: () => 1000` is reported on the `retryDelay` line.
fn best_counterpart(removed: &str, head: &SideText, a: u32, b: u32) -> Option<u32> {
    let removed = removed.trim_start().as_bytes();
    let mut best: Option<(usize, u32)> = None;
    for l in a..=b {
        if !head.has_code(l) {
            continue;
        }
        let line = head.line_text(l).trim_start().as_bytes();
        let common = removed.iter().zip(line).take_while(|(x, y)| x == y).count();
        if common > 0 && best.is_none_or(|(c, _)| common > c) {
            best = Some((common, l));
        }
    }
    best.map(|(_, l)| l)
}

/// The ways a removed base occurrence can find its head counterpart, tried
/// in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// The head lines that replaced it hold the same setting.
    SameKeyInReplacement,
    /// They hold another occurrence of the rule (one jittered wait exchanged for another).
    AnyInReplacement,
    /// The same setting is on an added line elsewhere (moved code).
    SameKeyAdded,
}

/// Head occurrences (indices into the head's list, in line order) not yet
/// taken, with "the next untaken one" kept as a path-compressed forest so
/// that taking the first untaken occurrence at or after a line is
/// near-constant time however many were taken before it.
#[derive(Debug, Default)]
struct Pool {
    lines: Vec<u32>,
    heads: Vec<usize>,
    /// `next[i]` leads to the first untaken slot at or after `i` (`len` = none).
    next: Vec<usize>,
}

impl Pool {
    fn push(&mut self, head: usize, line: u32) {
        self.next.push(self.heads.len());
        self.lines.push(line);
        self.heads.push(head);
    }

    fn find(&mut self, mut i: usize) -> usize {
        let mut root = i;
        while root < self.next.len() && self.next[root] != root {
            root = self.next[root];
        }
        while i < self.next.len() && self.next[i] != i {
            let up = self.next[i];
            self.next[i] = root;
            i = up;
        }
        root
    }

    /// Takes the first untaken occurrence on a line in `lo..=hi`.
    fn take_first(&mut self, lo: u32, hi: u32) -> Option<usize> {
        let start = self.lines.partition_point(|&l| l < lo);
        let i = self.find(start);
        if i >= self.lines.len() || self.lines[i] > hi {
            return None;
        }
        self.next[i] = i + 1;
        Some(self.heads[i])
    }
}

/// Where a removed base line went in the head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spot {
    /// The base line was replaced by head lines `a..=b`.
    Replaced(u32, u32),
    /// The base line was deleted; the gap lies after head line `n` (0 = top).
    Gap(u32),
}

/// Base lines (1-based, inclusive ranges) the change may have deleted or
/// replaced, without a second diff: the head lines outside `added` are the
/// unchanged ones, in order, so each is matched to the first base line with
/// the same text at or after the previous match, and the base lines skipped
/// over are the changed ones. Where a line repeats, this may pick an earlier
/// twin than the diff did, and then marks the later twin, with the same text
/// and so the same matches, as changed instead: for deciding which rules to
/// run, that is as good. Linear: both cursors only move forward.
fn base_changed_lines(base: &SideText, head: &SideText, added: &[(u32, u32)]) -> Vec<(u32, u32)> {
    fn line<'t>(raw: &'t str, starts: &[usize], n: usize) -> Option<&'t [u8]> {
        let from = *starts.get(n)?;
        let to = starts.get(n + 1).map_or(raw.len(), |&e| e.saturating_sub(1));
        (from <= to).then(|| &raw.as_bytes()[from..to])
    }
    let (Some(b_raw), Some(h_raw)) = (base.raw, head.raw) else { return Vec::new() };
    let b_starts = base.line_starts.get_or_init(|| line_starts(b_raw));
    let h_starts = head.line_starts.get_or_init(|| line_starts(h_raw));
    let b_lines = if b_raw.ends_with('\n') { b_starts.len() - 1 } else { b_starts.len() };
    let h_lines = if h_raw.ends_with('\n') { h_starts.len() - 1 } else { h_starts.len() };
    let mut out: Vec<(u32, u32)> = Vec::new();
    let mut push = |from: usize, to: usize| {
        // 0-based half-open base line range -> 1-based inclusive.
        if from < to {
            out.push((from as u32 + 1, to as u32));
        }
    };
    let mut b = 0;
    let mut added_iter = added.iter().peekable();
    for h in 0..h_lines {
        let h1 = h as u32 + 1;
        while added_iter.peek().is_some_and(|&&(_, end)| end < h1) {
            added_iter.next();
        }
        if added_iter.peek().is_some_and(|&&(start, _)| start <= h1) {
            continue; // an added head line
        }
        let Some(text) = line(h_raw, h_starts, h) else { break };
        match (b..b_lines).find(|&k| line(b_raw, b_starts, k) == Some(text)) {
            Some(k) => {
                push(b, k);
                b = k + 1;
            }
            // Not in the base at all (it should be): treat the rest as changed.
            None => break,
        }
    }
    push(b, b_lines);
    out
}

/// The literal gate of a group of rules, or `None` when the literals cannot
/// be built (the caller then searches without a gate).
fn literal_gate(rules: &[&Rule]) -> Option<LiteralGate> {
    let mut literals: Vec<Vec<u8>> = Vec::new();
    let mut always = false;
    for r in rules {
        for p in &r.pattern_sources {
            match required_literals(p) {
                Some(lits) => literals.extend(lits),
                None => always = true,
            }
        }
    }
    // A literal that extends a shorter one adds nothing to "is any there".
    literals.sort_by_key(|l| (l.len(), l.clone()));
    let mut kept: Vec<Vec<u8>> = Vec::new();
    for l in literals {
        if !kept.iter().any(|k| l.starts_with(k)) {
            kept.push(l);
        }
    }
    let literals = AhoCorasick::new(&kept).ok()?;
    Some(LiteralGate { literals, always })
}

/// Whitespace-free literals one of which every match of `pattern` contains:
/// the first whitespace-free piece of each of the pattern's prefix literals.
/// `None` when the pattern has no finite, non-empty prefix set.
fn required_literals(pattern: &str) -> Option<Vec<Vec<u8>>> {
    let hir = regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .multi_line(true)
        .build()
        .parse(pattern)
        .ok()?;
    let seq = regex_syntax::hir::literal::Extractor::new().extract(&hir);
    let mut out = Vec::new();
    for lit in seq.literals()? {
        // The first whitespace-free piece: it cannot hold a masked byte, and
        // cutting at whitespace folds the `\s*` variants into one literal.
        let piece = lit.as_bytes().split(|c| c.is_ascii_whitespace()).find(|p| !p.is_empty())?;
        out.push(piece.to_vec());
    }
    (!out.is_empty()).then_some(out)
}

fn diff_ops(file: &FileChange) -> Vec<DiffOp> {
    let base = file.base.text().unwrap_or("");
    let head = file.head.text().unwrap_or("");
    similar::TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(std::time::Duration::from_secs(2))
        .diff_lines(base, head)
        .ops()
        .to_vec()
}

/// The line diff's operations that cover base lines, indexed by base line
/// for binary search (each removed occurrence asks where its line went; a
/// scan of the operations per question was quadratic).
struct Spots<'d> {
    /// `(first base line index, end, op)`, in base order, without insertions.
    ops: Vec<(usize, usize, &'d DiffOp)>,
}

impl<'d> Spots<'d> {
    fn new(ops: &'d [DiffOp]) -> Self {
        let ops = ops
            .iter()
            .filter_map(|op| {
                let (from, len) = match *op {
                    DiffOp::Equal { old_index, len, .. } => (old_index, len),
                    DiffOp::Delete { old_index, old_len, .. } => (old_index, old_len),
                    DiffOp::Replace { old_index, old_len, .. } => (old_index, old_len),
                    DiffOp::Insert { .. } => return None,
                };
                (len > 0).then_some((from, from + len, op))
            })
            .collect();
        Spots { ops }
    }

    /// The operation covering base line `base_line` (1-based).
    fn op(&self, base_line: u32) -> Option<&'d DiffOp> {
        let idx = base_line.checked_sub(1)? as usize;
        let i = self.ops.partition_point(|&(_, end, _)| end <= idx);
        self.ops.get(i).filter(|&&(from, _, _)| from <= idx).map(|&(_, _, op)| op)
    }

    /// Whether base line `base_line` is still in the head, unchanged or edited.
    fn survives(&self, base_line: u32) -> bool {
        matches!(self.op(base_line), Some(DiffOp::Equal { .. } | DiffOp::Replace { .. }))
    }

    /// Where a deleted or replaced base line went; `None` for an unchanged
    /// line (the text is there, only its masking changed) or no line at all.
    fn head_spot(&self, base_line: u32) -> Option<Spot> {
        match *self.op(base_line)? {
            DiffOp::Delete { new_index, .. } => Some(Spot::Gap(new_index as u32)),
            DiffOp::Replace { new_index, new_len, .. } => {
                Some(Spot::Replaced(new_index as u32 + 1, (new_index + new_len) as u32))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(yaml: &str) -> Engine {
        Engine::new(RuleSet::load(&[("t.yml".into(), yaml.into())]).unwrap()).unwrap()
    }

    fn run(e: &Engine, path: &str, base: Option<&str>, head: Option<&str>) -> Vec<Finding> {
        e.analyze(&FileChange::from_texts(path, base, head)).findings
    }

    const RAISED: &str = r#"
rules:
  - id: t/retries
    kind: retry-count-raised
    severity: error
    languages: [python]
    message: "retries raised from {base} to {head}"
    pattern: '\bretries\s*=\s*(?P<n>\d+|None)'
    when: raised
    counts: retries
    unbounded: ["None"]
    docs: { what: w, why: y, example: e, use_instead: u }
"#;

    #[test]
    fn raised_reports_the_head_line_with_normalised_attempts() {
        let e = engine(RAISED);
        let f = run(&e, "a.py", Some("x = 1\nc(retries=2)\n"), Some("x = 1\nc(retries=6)\n"));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].line, 2);
        assert_eq!(f[0].message, "retries raised from 2 to 6 (3 -> 7 attempts)");
        assert_eq!(f[0].base, Some(json!({"attempts": 3})));
        assert_eq!(f[0].head, Some(json!({"attempts": 7})));
    }

    #[test]
    fn lowered_count_unchanged_or_present_in_both_is_not_a_finding() {
        let e = engine(RAISED);
        assert!(run(&e, "a.py", Some("c(retries=6)\n"), Some("c(retries=2)\n")).is_empty());
        assert!(run(&e, "a.py", Some("c(retries=6)\ny=1\n"), Some("c(retries=6)\ny=2\n")).is_empty());
        assert!(run(&e, "a.py", None, Some("c(retries=6)\n")).is_empty(), "a new setting is not a raise");
    }

    #[test]
    fn a_setting_that_moved_and_changed_is_compared_and_one_that_only_moved_is_not() {
        let e = engine(RAISED);
        let base = "c(retries=2)\na\nb\nc\n";
        let moved = "a\nb\nc\nc(retries=2)\n";
        assert!(run(&e, "a.py", Some(base), Some(moved)).is_empty());
        let f = run(&e, "a.py", Some(base), Some("a\nb\nc\nc(retries=5)\n"));
        assert_eq!(f.iter().map(|f| f.line).collect::<Vec<_>>(), vec![4]);
    }

    #[test]
    fn a_raise_to_the_value_of_an_unchanged_neighbour_is_still_a_raise() {
        let e = engine(RAISED);
        let f = run(&e, "a.py", Some("a(retries=2)\nb(retries=6)\n"), Some("a(retries=6)\nb(retries=6)\n"));
        assert_eq!(f.iter().map(|f| f.line).collect::<Vec<_>>(), vec![1]);
    }

    #[test]
    fn a_count_too_large_for_a_float_is_unbounded_not_dropped() {
        let e = engine(RAISED);
        let big = "9".repeat(309);
        assert_eq!(big.len(), 309);
        let f = run(&e, "a.py", Some("c(retries=2)\n"), Some(&format!("c(retries={big})\n")));
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].kind, Kind::RetryUnbounded);
        assert_eq!(f[0].head, Some(json!({"attempts": "unbounded"})));
        assert_eq!(
            f[0].message,
            "retries raised from 2 to 999999...999999 (309 digits) (3 -> unbounded attempts)"
        );
        // 308 digits is a finite (if absurd) count, reported as a raise.
        let f = run(&e, "a.py", Some("c(retries=2)\n"), Some(&format!("c(retries={})\n", &big[1..])));
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].kind, Kind::RetryCountRaised);
        // Lowering from it is not a raise.
        assert!(run(&e, "a.py", Some(&format!("c(retries={big})\n")), Some("c(retries=2)\n")).is_empty());
    }

    #[test]
    fn unbounded_head_is_retry_unbounded() {
        let e = engine(RAISED);
        let f = run(&e, "a.py", Some("c(retries=2)\n"), Some("c(retries=None)\n"));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].kind, Kind::RetryUnbounded);
        assert_eq!(f[0].head, Some(json!({"attempts": "unbounded"})));
    }

    #[test]
    fn comments_strings_and_prose_files_do_not_match() {
        let e = engine(RAISED);
        assert!(run(&e, "a.py", Some("c(retries=2)\n"), Some("c(retries=2)  # retries=9\n")).is_empty());
        assert!(run(&e, "a.py", Some("log('retries=2 ok')\n"), Some("log('retries=9 ok')\n")).is_empty());
        assert!(run(&e, "README.md", Some("retries=2\n"), Some("retries=9\n")).is_empty());
        assert!(!e.wants("README.md") && e.wants("src/x.py") && !e.wants("src/x.go"));
    }

    const ADDED: &str = r#"
rules:
  - id: t/jitter-off
    kind: jitter-removed
    severity: error
    languages: [python]
    message: "jitter disabled: {match}"
    pattern: '\bjitter\s*=\s*(?:False|None)'
    when: added
    docs: { what: w, why: y, example: e, use_instead: u }
"#;

    #[test]
    fn added_reports_new_occurrences_only() {
        let e = engine(ADDED);
        let f = run(&e, "a.py", Some("c(jitter=True)\n"), Some("c(jitter=False)\n"));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].message, "jitter disabled: jitter=False");
        // Present in both, or moved: nothing new.
        assert!(run(&e, "a.py", Some("c(jitter=False)\nx\n"), Some("x\nc(jitter=False)\n")).is_empty());
        // Exchanging one disabling form for another: the base had no jitter either.
        assert!(run(&e, "a.py", Some("c(jitter=None)\n"), Some("c(jitter=False)\n")).is_empty());
    }

    const REMOVED: &str = r#"
rules:
  - id: t/random-wait-gone
    kind: jitter-removed
    severity: error
    languages: [python]
    message: "{match} removed"
    pattern: '\bwait_random_exponential\b'
    when: removed
    inside: { pattern: '@retry\b', before: 3 }
    docs: { what: w, why: y, example: e, use_instead: u }
"#;

    #[test]
    fn removed_reports_at_the_replacement_while_the_retry_site_remains() {
        let e = engine(REMOVED);
        let base = "import x\n@retry(\n    wait=wait_random_exponential(1),\n)\ndef f(): pass\n";
        let head = "import x\n@retry(\n    wait=wait_fixed(2),\n)\ndef f(): pass\n";
        let f = run(&e, "a.py", Some(base), Some(head));
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].line, 3);
        assert_eq!(f[0].message, "wait_random_exponential removed");
        // The whole retry site deleted: not a jitter regression.
        assert!(run(&e, "a.py", Some(base), Some("import x\n")).is_empty());
        // A pure deletion of the line reports at the retry site.
        let f = run(&e, "a.py", Some(base), Some("import x\n@retry(\n)\ndef f(): pass\n"));
        assert_eq!(f.iter().map(|f| f.line).collect::<Vec<_>>(), vec![2]);
    }

    #[test]
    fn context_condition_limits_matches() {
        let yaml = r#"
rules:
  - id: t/limit
    kind: retry-count-raised
    severity: error
    languages: [yaml]
    message: "limit {base} -> {head}"
    pattern: '\blimit:\s*(?P<n>\d+)'
    when: raised
    counts: retries
    inside: { pattern: '^\s*retry:', before: 2 }
    docs: { what: w, why: y, example: e, use_instead: u }
"#;
        let e = engine(yaml);
        let f = run(&e, "c.yaml", Some("retry:\n  limit: 2\n"), Some("retry:\n  limit: 5\n"));
        assert_eq!(f.len(), 1);
        let page = "retry:\n  limit: 2\nother: 1\nx: 1\npage:\n  limit: 20\n";
        assert!(run(&e, "c.yaml", Some(page), Some(&page.replace("20", "50"))).is_empty());
    }

    #[test]
    fn base_changed_lines_cover_deletions_and_replacements() {
        let changed = |base: &str, head: &str| {
            let f = FileChange::from_texts("a.py", Some(base), Some(head));
            let syntax = Language::Python.syntax();
            let (b, h) = (SideText::new(Some(base), syntax), SideText::new(Some(head), syntax));
            base_changed_lines(&b, &h, &f.added)
        };
        assert_eq!(changed("a\nb\nc\n", "a\nc\n"), vec![(2, 2)], "pure deletion");
        assert_eq!(changed("a\nb\nc\n", "a\nB\nc\n"), vec![(2, 2)], "replacement");
        assert_eq!(changed("a\nb\n", "a\nb\nc\n"), Vec::<(u32, u32)>::new(), "pure insertion");
        assert_eq!(changed("a\nx\na\n", "a\n"), vec![(2, 3)], "repeated lines");
        assert_eq!(changed("a\nb", "b"), vec![(1, 1)], "no final newline");
    }

    #[test]
    fn required_literals_are_space_free_prefixes_or_none() {
        let lits = |p: &str| {
            required_literals(p)
                .map(|v| v.into_iter().map(|l| String::from_utf8(l).unwrap()).collect::<Vec<_>>())
        };
        let jitter = lits(r"\b(?:backoff_jitter|wait_jitter)\s*=\s*0").unwrap();
        assert!(
            jitter.iter().all(|l| l.starts_with("backoff_jitter") || l.starts_with("wait_jitter")),
            "{jitter:?}"
        );
        assert!(jitter.contains(&"wait_jitter".to_string()), "{jitter:?}");
        let attempts = lits(r"(?:^|[ \t{,])attempts\s*:").unwrap();
        assert!(attempts.iter().all(|l| l.contains("attempts") && !l.contains(' ')), "{attempts:?}");
        assert_eq!(lits(r".*retry"), None, "a match may start anywhere");
        assert_eq!(lits(r"\s*x"), None, "a piece of spaces only is no literal");
    }

    #[test]
    fn seconds_compare_across_units() {
        let yaml = r#"
rules:
  - id: t/timeout
    kind: timeout-lowered
    severity: error
    languages: [yaml]
    message: "timeout {base} -> {head}"
    pattern: '\bperTryTimeout:\s*(?P<n>\d+(?:\.\d+)?)(?P<unit>ms|s)'
    when: lowered
    counts: seconds
    docs: { what: w, why: y, example: e, use_instead: u }
"#;
        let e = engine(yaml);
        let f = run(&e, "v.yaml", Some("perTryTimeout: 2s\n"), Some("perTryTimeout: 800ms\n"));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].message, "timeout 2s -> 800ms (2s -> 0.8s)");
        assert!(run(&e, "v.yaml", Some("perTryTimeout: 800ms\n"), Some("perTryTimeout: 2s\n")).is_empty());
    }
}
