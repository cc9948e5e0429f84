//! One-click fixes: for a finding that only undid something the base had,
//! the edit of the head that puts it back, as a [`Fix`] (whole head lines and
//! their replacement).
//!
//! Four findings qualify: a retry count that was raised, a timeout that was
//! lowered, a `.with_jitter()` dropped from a builder chain and an
//! `.adjust(..)` (backon's Retry-After hook) dropped from one. The rule is
//! the same for all: the base and head versions of the file are diffed by
//! lines, and a fix is offered only when one changed block (a "hunk") at the
//! finding's place differs from the base in that one thing and nothing else
//! (the rest of its lines are byte for byte the base's). The fix is then the
//! base's text of that block. Anything less certain gets no fix: a line that
//! also changed otherwise, a site that moved (its base lines are not where
//! the base site was), two hunks that could each be the change, a count
//! whose literal moved by a different amount than the attempts did.
//!
//! Every fix covers changed head lines, or, for a pure deletion, the one
//! unchanged line above it, which is context in any diff: so a GitHub
//! suggestion on those lines lies in the pull request's diff.

use std::cell::OnceCell;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use crate::changeset::FileChange;
use crate::finding::{Finding, Fix, Kind};

/// Files larger than this (either side, in lines) get no fixes: the line
/// diff runs per file and must stay cheap next to the parse.
pub(crate) const MAX_LINES: usize = 50_000;

/// A block of lines that differs: 0-based, half-open line ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hunk {
    base: Range<usize>,
    head: Range<usize>,
}

/// The lines of both sides (borrowed from the file's texts) and the hunks
/// between them.
struct Sides<'f> {
    base: Vec<&'f str>,
    head: Vec<&'f str>,
    /// Sorted by head start, so that the hunks near a line are found by
    /// binary search (a file may hold a hundred thousand findings).
    hunks: Vec<Hunk>,
    /// Head lines that declare a `const`, `static` or `let`, by name.
    bindings: HashMap<String, Vec<usize>>,
}

impl Sides<'_> {
    /// The hunks whose head range starts at a line in `lo..=hi` (0-based).
    fn starting_in(&self, lo: usize, hi: usize) -> &[Hunk] {
        let a = self.hunks.partition_point(|h| h.head.start < lo);
        let b = self.hunks.partition_point(|h| h.head.start <= hi);
        &self.hunks[a..b.max(a)]
    }
}

/// The lines of a text without their `\n` (a final empty line is not one).
fn lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', text.as_bytes()) {
        out.push(&text[start..nl]);
        start = nl + 1;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// Whether a line may declare a binding, before the regex is asked: most
/// lines start with something else, and the regex on every line of every
/// file with a fix was a tenth of the rule packs' time.
fn may_bind(line: &str) -> bool {
    let t = line.trim_start().as_bytes();
    [b"pub".as_slice(), b"const", b"static", b"let"].iter().any(|k| t.starts_with(k))
}

fn sides<'f>(base: &'f str, head: &'f str) -> Option<Sides<'f>> {
    use similar::{Algorithm, DiffOp};
    let (b, h) = (lines(base), lines(head));
    if b.len() > MAX_LINES || h.len() > MAX_LINES {
        return None;
    }
    // The lines are already split: diffing the slices spares similar a
    // second tokenization of both texts (a tenth of the rule packs' time).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    let ops = similar::capture_diff_slices_deadline(Algorithm::Myers, &b, &h, Some(deadline));
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut open: Option<Hunk> = None;
    for op in &ops {
        if let DiffOp::Equal { .. } = op {
            hunks.extend(open.take());
            continue;
        }
        let (br, hr) = (op.old_range(), op.new_range());
        match open.as_mut() {
            Some(o) => {
                o.base.end = br.end;
                o.head.end = hr.end;
            }
            None => open = Some(Hunk { base: br, head: hr }),
        }
    }
    hunks.extend(open);
    // A block of N changed lines against N: each line against its
    // counterpart, too (two `const`s edited side by side are two changes).
    let pairs: Vec<Hunk> = hunks
        .iter()
        .filter(|x| x.base.len() == x.head.len() && x.base.len() > 1)
        .flat_map(|x| x.base.clone().zip(x.head.clone()))
        .map(|(bi, hi)| Hunk { base: bi..bi + 1, head: hi..hi + 1 })
        .collect();
    hunks.extend(pairs);
    hunks.sort_by_key(|x| (x.head.start, x.head.end));
    let mut bindings: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, l) in h.iter().enumerate().filter(|(_, l)| may_bind(l)) {
        if let Some(name) = binding_name(l) {
            bindings.entry(name.to_string()).or_default().push(i);
        }
    }
    Some(Sides { base: b, head: h, hunks, bindings })
}

/// The fixes of one changed file: its line diff, computed once, on first
/// use, for all its findings.
pub(crate) struct Fixes<'f> {
    file: &'f FileChange,
    sides: OnceCell<Option<Sides<'f>>>,
}

impl<'f> Fixes<'f> {
    pub(crate) fn new(file: &'f FileChange) -> Fixes<'f> {
        Fixes { file, sides: OnceCell::new() }
    }

    fn sides(&self) -> Option<&Sides<'f>> {
        self.sides.get_or_init(|| sides(self.file.base.text()?, self.file.head.text()?)).as_ref()
    }

    /// The fix for `finding`, made at a retry site whose head lines are
    /// `finding.line..=end_line` and whose base lines are `base`.
    pub(crate) fn for_site(&self, finding: &Finding, base: (u32, u32)) -> Option<Fix> {
        let (what, description): (What, &str) = match finding.kind {
            Kind::RetryCountRaised => {
                let delta =
                    number_delta(finding, "attempts").or_else(|| number_delta(finding, "budget_percent"))?;
                (What::Number { delta }, "put back the base's count")
            }
            Kind::JitterRemoved => (What::Removed(is_jitter_call), "put back the jitter the base had"),
            Kind::RetryAfterIgnored => {
                (What::Removed(is_adjust_call), "put back the `.adjust(..)` that read Retry-After")
            }
            _ => return None,
        };
        let sides = self.sides()?;
        let head = (finding.line.max(1), finding.end_line.max(finding.line.max(1)));
        let site_text = line_slice(&sides.head, head.0, head.1).join("\n");
        let named = named_bindings(sides, &site_text);
        // Where the change may be: the site itself, or the rest of a
        // statement that starts at the site or at a `let` the site names (a
        // builder bound to `policy` and passed to `.retry(policy)`).
        let mut anchors = vec![head.0 as usize - 1];
        anchors.extend(named.iter().copied().take(MAX_ANCHORS));
        let mut found: Vec<&Hunk> = sides
            .starting_in(head.0 as usize - 1, head.1 as usize)
            .iter()
            .filter(|h| at_site(h, head, base))
            .chain(anchors.iter().flat_map(|&at| {
                sides
                    .starting_in(at + 1, at + MAX_STATEMENT_LINES)
                    .iter()
                    .filter(move |h| in_statement(sides, h, at, None))
            }))
            .filter(|h| matches(sides, h, &what))
            .collect();
        if found.is_empty() && matches!(what, What::Number { .. }) {
            // The count is often a `const` or `let` the site names.
            found = in_bindings(sides, &named, &what);
        }
        found.sort_by_key(|h| (h.head.start, h.head.end, h.base.start));
        found.dedup();
        match found.as_slice() {
            [one] => Some(make_fix(sides, one, description)),
            _ => None,
        }
    }

    /// The fix for a lowered timeout set on head line `head_line`, which was
    /// on base line `base_line` and went from `base_ms` to `head_ms`.
    pub(crate) fn for_timeout(
        &self,
        base_line: u32,
        head_line: u32,
        base_ms: f64,
        head_ms: f64,
    ) -> Option<Fix> {
        if base_line == 0 || head_line == 0 || head_ms <= 0.0 {
            return None;
        }
        let sides = self.sides()?;
        let what = What::Duration { ratio: base_ms / head_ms };
        let at = head_line as usize - 1;
        let mut found: Vec<&Hunk> = sides
            .starting_in(at.saturating_sub(MAX_STATEMENT_LINES), at + MAX_STATEMENT_LINES)
            .iter()
            .filter(|h| {
                (contains(&h.head, head_line) && contains(&h.base, base_line))
                    || in_statement(sides, h, at, Some(base_line as usize - 1))
            })
            .filter(|h| matches(sides, h, &what))
            .collect();
        if found.is_empty() {
            let named = named_bindings(sides, &line_slice(&sides.head, head_line, head_line).join("\n"));
            found = in_bindings(sides, &named, &what);
        }
        match found.as_slice() {
            [one] => Some(make_fix(sides, one, "put back the base's timeout")),
            _ => None,
        }
    }

    /// For the rule packs (any language): the fix that puts back a value a
    /// `when: raised`/`when: lowered` rule compared, when head line
    /// `head_line` is base line `base_line` with only that value changed,
    /// written `base_raw` there and `head_raw` here.
    pub(crate) fn restore_value(
        &self,
        base_line: u32,
        head_line: u32,
        base_raw: &str,
        head_raw: &str,
        description: &str,
    ) -> Option<Fix> {
        if base_line == 0 || head_line == 0 {
            return None;
        }
        let sides = self.sides()?;
        let at = head_line as usize - 1;
        let found: Vec<&Hunk> = sides
            .starting_in(at, at)
            .iter()
            .filter(|h| h.base.len() == 1 && h.head.len() == 1 && contains(&h.base, base_line))
            .filter(|h| {
                let (b, hd) = (&sides.base[h.base.start], &sides.head[h.head.start]);
                let (p, bs, hs) = window(b, hd);
                b[p..bs].trim() == base_raw.trim() && hd[p..hs].trim() == head_raw.trim()
            })
            .collect();
        match found.as_slice() {
            [one] => Some(make_fix(sides, one, description)),
            _ => None,
        }
    }
}

/// Head lines of the bindings whose names the site uses as words.
fn named_bindings(sides: &Sides, site: &str) -> Vec<usize> {
    let mut words: Vec<&str> =
        site.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect();
    words.sort_unstable();
    words.dedup();
    let mut out: Vec<usize> =
        words.iter().filter_map(|w| sides.bindings.get(*w)).flatten().copied().collect();
    out.sort_unstable();
    out
}

/// Bindings looked at per site, at most (a name used all over a file).
const MAX_ANCHORS: usize = 8;

/// Lines a builder chain may run past its first line and still be followed.
const MAX_STATEMENT_LINES: usize = 30;

/// Whether `hunk` falls inside the statement that starts at head line `at`
/// (0-based): later in it, with no `;` ending it before the hunk, and with
/// the statement's first line unchanged at the same distance in the base
/// (at base line `base_at` when given), so that nothing moved in between.
fn in_statement(sides: &Sides, hunk: &Hunk, at: usize, base_at: Option<usize>) -> bool {
    let hs = hunk.head.start;
    // A pure deletion sits after the line above the gap.
    let last_before = if hunk.head.is_empty() { hs.saturating_sub(1) } else { hs };
    if hs <= at || hs - at > MAX_STATEMENT_LINES || hunk.base.start < hs - at {
        return false;
    }
    let j = hunk.base.start - (hs - at);
    if base_at.is_some_and(|b| b != j) || sides.base.get(j) != sides.head.get(at) {
        return false;
    }
    !sides.head[at..last_before].iter().any(|l| l.trim_end().ends_with(';'))
}

/// One-line changes of the bindings on head lines `lines`.
fn in_bindings<'s>(sides: &'s Sides, lines: &[usize], what: &What) -> Vec<&'s Hunk> {
    lines
        .iter()
        .flat_map(|&l| sides.starting_in(l, l))
        .filter(|h| h.base.len() == 1 && h.head.len() == 1)
        .filter(|h| matches(sides, h, what))
        .collect()
}

/// What the one difference in a hunk must be.
enum What {
    /// A number literal, raised by `delta` (the attempts' difference).
    Number { delta: f64 },
    /// A duration (a number, or `from_secs(2)` to `from_millis(800)`) whose
    /// base value is `ratio` times the head's.
    Duration { ratio: f64 },
    /// Text present in the base and gone from the head, of one shape.
    Removed(fn(&str) -> bool),
}

fn contains(r: &Range<usize>, line: u32) -> bool {
    line >= 1 && r.contains(&(line as usize - 1))
}

fn line_slice<'a, 'f>(lines: &'a [&'f str], first: u32, last: u32) -> &'a [&'f str] {
    let a = (first.max(1) as usize - 1).min(lines.len());
    let b = (last as usize).min(lines.len()).max(a);
    &lines[a..b]
}

/// Whether `hunk` lies at the site: its head lines within the head site (a
/// pure deletion: right after one of its lines) and its base lines within
/// the base site (else the code moved, and its base text belongs elsewhere).
fn at_site(hunk: &Hunk, head: (u32, u32), base: (u32, u32)) -> bool {
    let within = |r: &Range<usize>, (a, b): (u32, u32)| {
        if r.is_empty() {
            // Lines before the gap: the deletion follows line `r.start` (1-based).
            r.start >= a as usize && r.start <= b as usize
        } else {
            r.start + 1 >= a as usize && r.end <= b as usize
        }
    };
    within(&hunk.head, head) && !hunk.base.is_empty() && within(&hunk.base, base)
}

/// The hunk's text on each side, with the unchanged line above a pure
/// deletion added to both (a suggestion needs a head line to sit on), and
/// the head lines it covers.
fn texts(sides: &Sides, hunk: &Hunk) -> Option<(String, String, Range<usize>)> {
    let (mut b, mut h) = (hunk.base.clone(), hunk.head.clone());
    if h.is_empty() {
        if h.start == 0 || b.start == 0 {
            return None;
        }
        h.start -= 1;
        b.start -= 1;
    }
    let base = sides.base.get(b)?.join("\n");
    let head = sides.head.get(h.clone())?.join("\n");
    Some((base, head, h))
}

fn matches(sides: &Sides, hunk: &Hunk, what: &What) -> bool {
    let Some((base, head, _)) = texts(sides, hunk) else { return false };
    let (p, bs, hs) = window(&base, &head);
    let (bw, hw) = (&base[p..bs], &head[p..hs]);
    match what {
        What::Number { delta } => match (number(bw), number(hw)) {
            (Some(x), Some(y)) => (y - x - delta).abs() < 1e-9,
            _ => false,
        },
        What::Duration { ratio } => match (duration(bw), duration(hw)) {
            (Some(x), Some(y)) if y > 0.0 => ((x / y) / ratio - 1.0).abs() < 1e-9,
            _ => false,
        },
        What::Removed(shape) => hw.is_empty() && removed_somewhere(&base, p, bs - p, *shape),
    }
}

/// A deletion of `len` bytes at `at` can be placed anywhere the text
/// repeats (`a.b.c` minus `.b` is also minus `b.`): tries each place.
fn removed_somewhere(base: &str, mut at: usize, len: usize, shape: fn(&str) -> bool) -> bool {
    let b = base.as_bytes();
    if len == 0 {
        return false;
    }
    loop {
        if let Some(cut) = base.get(at..at + len) {
            if shape(cut.trim()) {
                return true;
            }
        }
        if at == 0 || b[at - 1] != b[at + len - 1] {
            return false;
        }
        at -= 1;
    }
}

/// The one differing stretch: the common prefix's length, and where the
/// stretch ends in `base` and in `head`, widened to whole words so that `2`
/// against `12` compares the numbers, not their last digits.
fn window(base: &str, head: &str) -> (usize, usize, usize) {
    let (b, h) = (base.as_bytes(), head.as_bytes());
    let mut p = b.iter().zip(h).take_while(|(x, y)| x == y).count();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    // Widen while the boundary cuts through a word on either side.
    let cuts_at = |x: &[u8], i: usize| i > 0 && i < x.len() && word(x[i - 1]) && word(x[i]);
    while p > 0 && (cuts_at(b, p) || cuts_at(h, p) || !base.is_char_boundary(p)) {
        p -= 1;
    }
    // The suffix may not reach into the prefix.
    let max_s = b.len().min(h.len()) - p;
    let mut s = b.iter().rev().zip(h.iter().rev()).take(max_s).take_while(|(x, y)| x == y).count();
    while s > 0
        && (cuts_at(b, b.len() - s)
            || cuts_at(h, h.len() - s)
            || !base.is_char_boundary(b.len() - s)
            || !head.is_char_boundary(h.len() - s))
    {
        s -= 1;
    }
    (p, b.len() - s, h.len() - s)
}

fn number_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"^([0-9][0-9_]*(?:\.[0-9_]+)?)(?:[iuf](?:8|16|32|64|128|size))?$")
            .unwrap_or_else(|e| panic!("constant regex: {e}"))
    })
}

/// A Rust number literal's value (`3`, `1_000`, `5u32`, `2.5`).
fn number(s: &str) -> Option<f64> {
    let c = number_re().captures(s)?;
    c.get(1)?.as_str().replace('_', "").parse().ok()
}

/// A duration's value in milliseconds when it names its unit
/// (`from_secs(2` — the closing parenthesis is common to both sides), or a
/// bare number whose unit both sides share.
fn duration(s: &str) -> Option<f64> {
    if let Some(n) = number(s) {
        return Some(n);
    }
    let (ctor, n) = s.split_once('(')?;
    let unit = match ctor {
        "from_secs" | "from_secs_f64" | "from_secs_f32" => 1000.0,
        "from_millis" => 1.0,
        "from_micros" => 1e-3,
        "from_nanos" => 1e-6,
        "from_mins" => 60_000.0,
        _ => return None,
    };
    Some(number(n.trim())? * unit)
}

fn is_jitter_call(s: &str) -> bool {
    s == ".with_jitter()" || is_random_term(s)
}

/// A hand loop's random term, as it leaves a sleep: `+ jitter()`,
/// `* rng.gen_range(0.5..1.5)` or `rand::random::<u64>() % 100 +`, with its
/// operator and balanced brackets, naming randomness. Anything else removed
/// (a whole sleep, a term that is not random) gets no fix.
fn is_random_term(s: &str) -> bool {
    let t = s.trim();
    let operator = |c: char| c == '+' || c == '*';
    let lower = t.to_ascii_lowercase();
    crate::text::brackets_balanced(t)
        && (t.starts_with(operator) || t.ends_with(operator))
        && ["rand", "rng", "jitter"].iter().any(|w| lower.contains(w))
}

/// `.adjust(..)` with its parentheses balanced and closing at the end.
fn is_adjust_call(s: &str) -> bool {
    let Some(args) = s.strip_prefix(".adjust(") else { return false };
    let mut depth = 1i32;
    for (i, c) in args.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1 == args.len();
                }
            }
            _ => {}
        }
    }
    false
}

/// The name a line declares with `const`, `static` or `let`, if any.
fn binding_name(line: &str) -> Option<&str> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const|static|let)\s+(?:mut\s+)?([A-Za-z_][A-Za-z0-9_]*)")
            .unwrap_or_else(|e| panic!("constant regex: {e}"))
    });
    re.captures(line).and_then(|c| c.get(1)).map(|m| m.as_str())
}

/// How much `key` rose between the finding's base and head values.
fn number_delta(finding: &Finding, key: &str) -> Option<f64> {
    let get = |v: &Option<Value>| v.as_ref()?.get(key)?.as_f64();
    Some(get(&finding.head)? - get(&finding.base)?)
}

fn make_fix(sides: &Sides, hunk: &Hunk, description: &str) -> Fix {
    // `matches` already built these texts for this hunk.
    let (base, _, head) = texts(sides, hunk).unwrap_or_default();
    Fix {
        description: description.to_string(),
        line: head.start as u32 + 1,
        end_line: head.end as u32,
        replacement: base,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_random_term_is_an_operator_and_randomness_with_balanced_brackets() {
        for t in
            [" + jitter()", "* rng.gen_range(0.5..1.5)", "rand::random::<u64>() % 100 + ", ".with_jitter()"]
        {
            assert!(is_jitter_call(t), "{t}");
        }
        for t in [" + delay", "jitter()", " + rand::random::<u64>(", "sleep(d + jitter())"] {
            assert!(!is_jitter_call(t), "{t}");
        }
    }

    #[test]
    fn lines_split_on_newlines_and_a_final_newline_ends_no_extra_line() {
        assert_eq!(lines("a\nb"), ["a", "b"]);
        assert_eq!(lines("a\n\nb\n"), ["a", "", "b"]);
        assert!(lines("").is_empty());
    }

    #[test]
    fn the_binding_prefilter_lets_through_every_line_the_regex_reads() {
        for line in [
            "    let policy = x;",
            "let mut n = 3;",
            "pub const MAX: u32 = 5;",
            "pub(crate) static LIMIT: u8 = 1;",
            "\tconst A: u8 = 1;",
        ] {
            assert!(binding_name(line).is_some(), "{line}");
            assert!(may_bind(line), "{line}");
        }
        for line in ["    client.retry(policy)", "}", "// let x = 1"] {
            assert!(!may_bind(line), "{line}");
        }
    }

    #[test]
    fn the_window_is_whole_words() {
        let (b, h) = ("x.with_max_times(2);", "x.with_max_times(12);");
        let (p, bs, hs) = window(b, h);
        assert_eq!((&b[p..bs], &h[p..hs]), ("2", "12"));
        let (b, h) = ("Duration::from_secs(2)", "Duration::from_millis(800)");
        let (p, bs, hs) = window(b, h);
        assert_eq!((&b[p..bs], &h[p..hs]), ("from_secs(2", "from_millis(800"));
    }

    #[test]
    fn durations_know_their_units_and_numbers_their_suffixes() {
        assert_eq!(duration("from_secs(2"), Some(2000.0));
        assert_eq!(duration("from_millis(800"), Some(800.0));
        assert_eq!(duration("from_hours(1"), None);
        assert_eq!(number("1_000u64"), Some(1000.0));
        assert_eq!(number("MAX"), None);
        assert_eq!(number("3).with_jitter("), None);
    }

    #[test]
    fn adjust_calls_must_close_at_the_end() {
        assert!(is_adjust_call(".adjust(|e, d| e.retry_after().or(d))"));
        assert!(!is_adjust_call(".adjust(|e, d| d).with_jitter()"));
        assert!(!is_adjust_call(".adjust(|e, d| d"));
    }

    #[test]
    fn a_deletion_is_found_wherever_the_text_repeats() {
        // `b.with_jitter().build()` minus `.with_jitter()` diffs as minus `with_jitter().`
        let base = "b.with_jitter().build()";
        let (p, bs, hs) = window(base, "b.build()");
        assert_eq!(hs, p, "nothing added");
        assert_eq!(&base[p..bs], "with_jitter().");
        assert!(removed_somewhere(base, p, bs - p, is_jitter_call));
        assert!(!removed_somewhere(base, p, bs - p, is_adjust_call));
    }

    #[test]
    fn rule_pack_values_are_restored_only_when_alone_on_their_line() {
        let base = "a: 1\nretries: 3\ntimeout: 30s\n";
        let head = "a: 1\nretries: 8\ntimeout: 5s # faster\n";
        let file = FileChange::from_texts("cfg.yml", Some(base), Some(head));
        let fixes = Fixes::new(&file);
        let fix = fixes.restore_value(2, 2, "3", "8", "put back").unwrap();
        assert_eq!((fix.line, fix.end_line, fix.replacement.as_str()), (2, 2, "retries: 3"));
        assert_eq!(
            fixes.restore_value(3, 3, "30s", "5s", "put back"),
            None,
            "the line also gained a comment"
        );
        assert_eq!(fixes.restore_value(2, 2, "2", "8", "put back"), None, "not the value compared");
    }

    #[test]
    fn bindings_count_only_when_the_site_names_them() {
        assert_eq!(binding_name("const MAX_RETRIES: u32 = 6;"), Some("MAX_RETRIES"));
        assert_eq!(binding_name("    let mut tries = 4;"), Some("tries"));
        assert_eq!(binding_name("x = 6;"), None);
        let s = sides("const MAX_RETRIES: u32 = 2;\n", "const MAX_RETRIES: u32 = 6;\n").unwrap();
        assert_eq!(named_bindings(&s, "for a in 0..=MAX_RETRIES {"), vec![0]);
        assert!(named_bindings(&s, "for a in 0..=MAX_RETRIES_2 {").is_empty());
    }
}
