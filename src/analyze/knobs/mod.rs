//! The settings floor: a change to a setting whose name says it is a retry
//! count, a jitter switch or a timeout is a finding when it moves the
//! dangerous way, in any language and any config format, whether or not a
//! model links it to a retry.
//!
//! The language analyzers (Rust's model, the rule packs) judge a retry by
//! what its library does with a value. This analyzer is the floor below
//! them: it reads only names and values, so a raised
//! `maxRetryTimesForForwarding`, a `retry.max-attempts` key, a
//! `WithMaxTries(10)` option or an env default is reported even where no
//! model follows it to its retry. A finding it makes at a place another
//! analyzer already judged for the same kind is dropped ([`drop_covered`]):
//! the model's finding says more.
//!
//! - [`names`]: what a name's words say it is;
//! - [`tokens`] and [`extract`]: the settings of one version of a file;
//! - [`value`]: what a setting's expression computes to;
//! - [`compare`]: pairing base and head settings, and the pure decisions.
//!
//! Not settings: runtime counters (`retries += 1`), declarations whose value
//! is a type, files that are no service's own configuration (CI workflows,
//! compose files, lock files, generated or minified files), and test code
//! (turned into notes by [`crate::analyze::testcode`] like every finding).

pub(crate) mod compare;
pub(crate) mod extract;
pub(crate) mod libraries;
pub(crate) mod names;
pub(crate) mod tokens;
pub(crate) mod value;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::LazyLock;

use serde_json::json;

use super::rules::lang::{Language, Syntax};
use super::{Analyzer, FileResult};
use crate::changeset::FileChange;
use crate::finding::{Finding, Kind, KindDoc, Note};
use compare::{Judgement, Worse};
use extract::{Dialect, Extracted, Setting};
use value::Bindings;

/// The settings floor as an analyzer.
#[derive(Debug, Default)]
pub struct KnobsAnalyzer;

/// Every shape the floor reports, with its documentation (`retrygate rules
/// list` and docs/rules.md show them).
pub const CHECKS: &[(&str, Kind, KindDoc)] = &[
    (
        "knob/retry-count-raised",
        Kind::RetryCountRaised,
        KindDoc {
            what: "A setting whose name says it counts retries or attempts (`MAX_RETRIES`, `maxRetryTimesForForwarding`, `retry.max-attempts`, `WithMaxTries(..)`, `Retry(total=..)`) got a higher value, in code or config. An error when the name (or what holds it) says retry, or the file names a retry; a warning for a bare `max_attempts` in a file that names none.",
            why: "Every extra attempt is another request from every client at the moment the dependency is failing; a count no model follows to its retry would otherwise pass in silence.",
            example: "RECONNECT_MAX_RETRIES = 3  ->  RECONNECT_MAX_RETRIES = 10",
            use_instead: "Keep the count at 3 attempts or fewer, and add a retry budget instead of attempts.",
        },
    ),
    (
        "knob/retry-unbounded",
        Kind::RetryUnbounded,
        KindDoc {
            what: "A retry-count setting went from a number to no limit: infinity, the largest integer, or -1.",
            why: "An unbounded retry never stops adding load to a dependency that is down.",
            example: "max_retries: 5  ->  max_retries: -1",
            use_instead: "Keep a finite count, and a deadline over all attempts.",
        },
    ),
    (
        "knob/jitter-removed",
        Kind::JitterRemoved,
        KindDoc {
            what: "A setting named for jitter or randomisation (`jitter`, `randomization_factor`, `RandomizationFactor`) went from on (true, above 0, a jitter mode) to off (false, 0, none).",
            why: "Without jitter, clients that failed together retry together, in waves that keep an overloaded dependency down.",
            example: "jitter: true  ->  jitter: false",
            use_instead: "Keep jitter on (full jitter, or a randomisation factor of 0.5).",
        },
    ),
    (
        "knob/timeout-lowered",
        Kind::TimeoutLowered,
        KindDoc {
            what: "A setting named as a timeout (`read_timeout`, `per_try_timeout`, `requestTimeoutMs`) got a lower value, in the same unit. An error when the name says retry or attempt, or the code of the file names a retry; a warning otherwise (idle, session and shutdown timeouts are not read).",
            why: "A shorter timeout turns slow answers into failures, and failures into retries, at the moment the dependency slows down.",
            example: "read_timeout = 30  ->  read_timeout = 5   (in a file that retries)",
            use_instead: "Keep the timeout above the dependency's p99 latency, or lower it only with fewer attempts.",
        },
    ),
];

/// Whether a path is a YAML file by its extension.
pub(crate) fn is_yaml_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".yml") || lower.ends_with(".yaml")
}

/// The 1-based lines of a YAML file that sit in a service's
/// `healthcheck:` block: how often the stack polls its own container, not
/// how a client retries a dependency.
pub(crate) fn healthcheck_lines(text: &str) -> std::collections::HashSet<u32> {
    let mut out = std::collections::HashSet::new();
    let mut open: Option<usize> = None;
    for (n, raw) in text.lines().enumerate() {
        let trimmed = raw.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = raw.len() - trimmed.len();
        if open.is_some_and(|i| indent <= i) {
            open = None;
        }
        if open.is_some() {
            out.insert(n as u32 + 1);
        } else if trimmed.trim_end().eq_ignore_ascii_case("healthcheck:") {
            open = Some(indent);
        }
    }
    out
}

/// Files whose settings are no service's retry policy: CI and compose
/// files (a build's or a local stack's), lock files, and built output.
fn not_a_settings_file(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    let ci = lower.starts_with(".github/")
        || lower.contains("/.github/")
        || lower.starts_with(".circleci/")
        || lower.starts_with(".buildkite/")
        || name == ".gitlab-ci.yml"
        || name == "azure-pipelines.yml"
        || name == ".travis.yml"
        || name == "jenkinsfile";
    let compose =
        name.starts_with("docker-compose") || name.starts_with("compose.") || name.contains(".compose.");
    let lock = name.ends_with(".lock")
        || matches!(name, "package-lock.json" | "pnpm-lock.yaml" | "go.sum" | "npm-shrinkwrap.json");
    let built = name.contains(".min.")
        || name.ends_with(".map")
        || name.contains(".bundle.")
        || name.ends_with(".snap");
    ci || compose || lock || built
}

const RUST: Syntax = Syntax {
    line_comments: &[b"//"],
    comment_needs_space: false,
    block_comment: Some((b"/*", b"*/")),
    // Not `'`: lifetimes (`'a`) would open strings.
    quotes: b"\"",
    triple_quotes: false,
    backtick_multiline: false,
    quote_needs_separator: false,
};

const C_LIKE: Syntax = Syntax {
    line_comments: &[b"//"],
    comment_needs_space: false,
    block_comment: Some((b"/*", b"*/")),
    quotes: b"\"'",
    triple_quotes: true,
    backtick_multiline: false,
    quote_needs_separator: false,
};

const HCL: Syntax = Syntax { line_comments: &[b"#", b"//"], comment_needs_space: false, ..C_LIKE };

const PHP: Syntax = Syntax { line_comments: &[b"//", b"#"], comment_needs_space: false, ..C_LIKE };

pub(crate) fn dialect_of_language(lang: Language) -> Dialect {
    match lang {
        Language::Yaml => Dialect::Yaml,
        Language::Toml | Language::Ini => Dialect::Sections,
        Language::Properties | Language::Env | Language::Dockerfile | Language::Shell => Dialect::Pairs,
        Language::Nginx => Dialect::Nginx,
        other => Dialect::Code(other.syntax(), other.name()),
    }
}

/// How the floor reads `path`, or `None` when it does not.
fn dialect_of(path: &str) -> Option<Dialect> {
    if not_a_settings_file(path) {
        return None;
    }
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match ext.as_str() {
        "rs" => return Some(Dialect::Code(RUST, "rust")),
        "cs" => return Some(Dialect::Code(C_LIKE, "csharp")),
        "scala" | "swift" | "groovy" | "gradle" | "c" | "cc" | "cpp" | "h" | "hpp" | "dart" => {
            return Some(Dialect::Code(C_LIKE, "other"))
        }
        "php" => return Some(Dialect::Code(PHP, "php")),
        "tf" | "hcl" | "tfvars" => return Some(Dialect::Code(HCL, "hcl")),
        _ => {}
    }
    Language::of_path(path).map(dialect_of_language)
}

/// Words without which a file holds no knob: the cheap first look.
static KNOB_WORDS: LazyLock<aho_corasick::AhoCorasick> = LazyLock::new(|| {
    super::any_word(&["retr", "attempt", "tries", "jitter", "random", "timeout", "reconnect", "redeliver"])
});

/// Whether the floor reads this side. Generated files never get here
/// ([`crate::analyze::generated::of_change`] decides for every analyzer);
/// a side the change made look generated is read like any other.
fn readable(text: &str) -> bool {
    text.len() <= 4 << 20
}

struct Read {
    path: String,
    base: Option<Extracted>,
    head: Option<Extracted>,
    file: usize,
}

impl Analyzer for KnobsAnalyzer {
    fn name(&self) -> &str {
        "the settings floor"
    }

    fn wants(&self, path: &str) -> bool {
        dialect_of(path).is_some()
    }

    fn analyze(&self, file: &FileChange) -> FileResult {
        self.analyze_set(&[file])
    }

    fn analyze_set(&self, files: &[&FileChange]) -> FileResult {
        let sides: Vec<(Dialect, Option<&str>, Option<&str>)> = files
            .iter()
            .filter_map(|f| {
                let d = dialect_of(&f.path)?;
                // Both sides are read when either names a knob: a setting
                // added to a file is compared with the file's base.
                let named =
                    [f.base.text(), f.head.text()].into_iter().flatten().any(|t| KNOB_WORDS.is_match(t));
                let b = f.base.text().filter(|t| named && readable(t));
                let h = f.head.text().filter(|t| named && readable(t));
                Some((d, b, h))
            })
            .collect();
        let wanted: Vec<&FileChange> =
            files.iter().copied().filter(|f| dialect_of(&f.path).is_some()).collect();
        // Names one file binds that another uses: one change-wide table per side.
        let base_globals = globals(sides.iter().map(|(d, b, _)| (*d, *b)));
        let head_globals = globals(sides.iter().map(|(d, _, h)| (*d, *h)));
        let reads: Vec<Read> = wanted
            .iter()
            .zip(&sides)
            .enumerate()
            .map(|(i, (f, (d, b, h)))| Read {
                path: f.path.clone(),
                base: b.map(|t| extract::extract(t, *d, &base_globals)),
                head: h.map(|t| extract::extract(t, *d, &head_globals)),
                file: i,
            })
            .collect();
        let mut out = judge_all(&reads, &wanted);
        // A container's health check polls the container itself, in a
        // stack file of any name (compose-named ones are not read at all).
        let health: HashMap<&str, std::collections::HashSet<u32>> = wanted
            .iter()
            .filter(|f| is_yaml_path(&f.path))
            .filter_map(|f| Some((f.path.as_str(), healthcheck_lines(f.head.text()?))))
            .filter(|(_, lines)| !lines.is_empty())
            .collect();
        out.findings.retain(|x| !health.get(x.path.as_str()).is_some_and(|lines| lines.contains(&x.line)));
        out
    }
}

fn globals<'a>(sides: impl Iterator<Item = (Dialect, Option<&'a str>)>) -> Bindings {
    let mut seen: HashMap<String, Option<value::Value>> = HashMap::new();
    for (d, text) in sides {
        let Some(text) = text else { continue };
        for (k, v) in extract::bindings_of(text, d).by_name {
            if !value::referable_across_files(&k) {
                continue;
            }
            // A name bound to different values in two files is no one value.
            seen.entry(k)
                .and_modify(|old| {
                    if old.as_ref() != Some(&v) {
                        *old = None;
                    }
                })
                .or_insert(Some(v));
        }
    }
    Bindings { by_name: seen.into_iter().filter_map(|(k, v)| Some((k, v?))).collect() }
}

/// One worse setting, before it becomes a finding.
struct Worsened<'a> {
    read: &'a Read,
    head: Setting,
    base: Setting,
    worse: Worse,
    names_a_retry: bool,
    /// Another file where the same change makes timeouts retried, for a
    /// timeout whose own file names no retry.
    retry_edited_in: Option<String>,
    /// Where the base setting was, when it moved; or which default it
    /// was compared with; or which constructor it replaced.
    origin: Origin,
}

enum Origin {
    Same,
    Moved(String),
    Default,
    Replaced,
}

/// The non-test files of the change that make timeouts retried, by file
/// index: an added line names a timeout (`'UND_ERR_HEADERS_TIMEOUT'`,
/// `TimeoutError`, `retry_on_timeout=True`) and says retry in code, itself
/// or in what it sits in (`RETRYABLE_CODES = [`). A timeout cut shipped
/// with that turns slow answers into more attempts; other retry edits (a
/// counter of retried messages, a moved import) do not relate the two.
fn retry_edits(reads: &[Read], files: &[&FileChange]) -> Vec<(usize, String)> {
    let tests = crate::analyze::testcode::ScanPaths::defaults();
    reads
        .iter()
        .filter(|r| tests.test_pattern(&r.path).is_none())
        .filter_map(|r| {
            let Some(Dialect::Code(syntax, _)) = dialect_of(&r.path) else { return None };
            let f = files.get(r.file)?;
            let text = f.head.text()?;
            let masked =
                crate::analyze::rules::mask::mask(text, &syntax, crate::analyze::rules::mask::View::Code);
            let masked = String::from_utf8_lossy(&masked);
            let lines: Vec<&str> = masked.lines().collect();
            let raw: Vec<&str> = text.lines().collect();
            let moved = moved_lines(f, &syntax, &lines);
            let says = |line: &str| {
                line.split(|c: char| !c.is_alphanumeric() && c != '_').any(extract::says_retry_in_code)
            };
            // An added line that names a timeout makes it retried when it says
            // retry, or when what it sits in does: the nearest line above with
            // less indentation (`'UND_ERR_HEADERS_TIMEOUT',` added to
            // `RETRYABLE_NETWORK_CODES = [`).
            let edits = (0..lines.len()).any(|i| {
                f.is_added(i as u32 + 1)
                    && !moved.contains(&i)
                    && raw.get(i).is_some_and(|l| names_a_timeout(l))
                    && (says(lines[i]) || opener(&lines, i).is_some_and(&says))
            });
            edits.then(|| (r.file, r.path.clone()))
        })
        .collect()
}

/// Whether a line names a timeout in any of its words, strings included
/// (`ETIMEDOUT`, `ReadTimeout`, `retry_on_timeout`).
fn names_a_timeout(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    lower.contains("timeout") || lower.contains("timedout") || lower.contains("timed_out")
}

/// The added head lines (0-based) that only moved: their text, trimmed, is
/// written no more often in the head than in the base (an import moved
/// up two lines). They edit nothing, so they do not make a file's retry
/// code "edited".
fn moved_lines(f: &FileChange, syntax: &Syntax, head_lines: &[&str]) -> HashSet<usize> {
    let Some(base) = f.base.text() else { return HashSet::new() };
    let base = crate::analyze::rules::mask::mask(base, syntax, crate::analyze::rules::mask::View::Code);
    let base = String::from_utf8_lossy(&base);
    let mut in_base: HashMap<&str, usize> = HashMap::new();
    for l in base.lines() {
        *in_base.entry(l.trim()).or_default() += 1;
    }
    let mut in_head: HashMap<&str, usize> = HashMap::new();
    for l in head_lines {
        *in_head.entry(l.trim()).or_default() += 1;
    }
    (0..head_lines.len())
        .filter(|&i| {
            let t = head_lines[i].trim();
            f.is_added(i as u32 + 1)
                && in_head.get(t).copied().unwrap_or(0) <= in_base.get(t).copied().unwrap_or(0)
        })
        .collect()
}

/// Whether the head of `f` names `library` (by its `uses:` words) more
/// often than its base: the change wrote a new use of it.
fn adds_a_holder(f: &FileChange, library: Option<&str>) -> bool {
    let Some(lib) = library.and_then(|n| libraries::LIBRARIES.0.iter().find(|l| l.library == n)) else {
        return false;
    };
    let count = |t: Option<&str>| {
        t.map_or(0, |t| lib.uses.iter().map(|u| t.matches(u.as_str()).count()).sum::<usize>())
    };
    count(f.head.text()) > count(f.base.text())
}

/// The nearest non-blank line above `i` indented less than it, within a
/// few dozen lines: the statement or block line `i` belongs to.
fn opener<'l>(lines: &[&'l str], i: usize) -> Option<&'l str> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let own = indent(lines.get(i)?);
    lines[i.saturating_sub(50)..i].iter().rev().find(|l| !l.trim().is_empty() && indent(l) < own).copied()
}

fn judge_all(reads: &[Read], files: &[&FileChange]) -> FileResult {
    let mut out = FileResult::default();
    let ctx = Ctx { files, retry_edits: std::cell::OnceCell::new(), reads };
    let mut worse: Vec<Worsened> = Vec::new();
    // Head settings no base setting of their file pairs with, and base
    // settings no head setting took: a moved setting is one of each.
    let mut lone_heads: Vec<(usize, usize)> = Vec::new();
    let mut lone_bases: Vec<(usize, usize)> = Vec::new();
    for (ri, r) in reads.iter().enumerate() {
        let base: &[Setting] = r.base.as_ref().map_or(&[], |e| &e.settings);
        let head: &[Setting] = r.head.as_ref().map_or(&[], |e| &e.settings);
        let pairs = compare::pair(base, head);
        let mut taken = vec![false; base.len()];
        for (hi, p) in pairs.iter().enumerate() {
            match p {
                Some(bi) => {
                    taken[*bi] = true;
                    consider(&ctx, r, &head[hi], &base[*bi], Origin::Same, &mut worse, &mut out.notes);
                }
                None => lone_heads.push((ri, hi)),
            }
        }
        lone_bases.extend(taken.iter().enumerate().filter(|(_, t)| !**t).map(|(bi, _)| (ri, bi)));
    }
    let mut lone_by_name: HashMap<(&str, &str), Vec<(usize, usize)>> = HashMap::new();
    for &(rj, bj) in &lone_bases {
        if let Some(b) = reads[rj].base.as_ref().map(|e| &e.settings[bj]) {
            lone_by_name.entry((b.key.as_str(), b.context.as_str())).or_default().push((rj, bj));
        }
    }
    // Failing its holder, a setting moved under another holder (an inline
    // `retries={'max_attempts': 3}` that becomes a module constant
    // `CLIENT_RETRIES = {'max_attempts': 5}`): the one lone base setting of
    // its key in another file, when the head has one lone setting of it.
    let mut lone_by_key: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
    for &(rj, bj) in &lone_bases {
        if let Some(b) = reads[rj].base.as_ref().map(|e| &e.settings[bj]) {
            lone_by_key.entry(b.key.as_str()).or_default().push((rj, bj));
        }
    }
    let mut heads_by_key: HashMap<&str, usize> = HashMap::new();
    for &(ri, hi) in &lone_heads {
        if let Some(h) = reads[ri].head.as_ref().map(|e| &e.settings[hi]) {
            *heads_by_key.entry(h.key.as_str()).or_default() += 1;
        }
    }
    for (ri, hi) in lone_heads {
        let Some(h) = reads[ri].head.as_ref().map(|e| &e.settings[hi]) else { continue };
        let mut from: Vec<&(usize, usize)> = lone_by_name
            .get(&(h.key.as_str(), h.context.as_str()))
            .map(|v| v.iter().filter(|(rj, _)| *rj != ri).take(2).collect())
            .unwrap_or_default();
        if from.is_empty() && heads_by_key.get(h.key.as_str()) == Some(&1) {
            from = lone_by_key
                .get(h.key.as_str())
                .map(|v| v.iter().filter(|(rj, _)| *rj != ri).take(2).collect())
                .unwrap_or_default();
            if lone_by_key.get(h.key.as_str()).is_some_and(|v| v.len() != 1) {
                from.clear();
            }
        }
        if let [(rj, bj)] = from.as_slice() {
            if let Some(b) = reads[*rj].base.as_ref().map(|e| &e.settings[*bj]) {
                let origin = Origin::Moved(format!("{}:{}", reads[*rj].path, b.line));
                consider(&ctx, &reads[ri], h, b, origin, &mut worse, &mut out.notes);
            }
            continue;
        }
        // A library option newly given in a file that was there before: its
        // old value was the library's default. Not when the change adds a
        // holder of that library (a new retry): the operation model judges
        // a new retry against one attempt, not against the default.
        if let (Some(d), Some(_)) = (&h.default, &reads[ri].base) {
            if adds_a_holder(files[reads[ri].file], h.library.as_deref()) {
                continue;
            }
            let b = Setting { value: d.clone(), ..h.clone() };
            consider(&ctx, &reads[ri], h, &b, Origin::Default, &mut worse, &mut out.notes);
        }
    }
    for r in reads {
        if let Some(w) = jitter_replaced(r, files) {
            worse.push(w);
        }
    }
    out.findings = findings(worse);
    out
}

/// A library's jittering constructor gone from a file, and one of its
/// non-jittering ones on a line the change added.
fn jitter_replaced<'a>(r: &'a Read, files: &[&FileChange]) -> Option<Worsened<'a>> {
    let (base, head) = (r.base.as_ref()?, r.head.as_ref()?);
    let on_before = base.jitter_marks.iter().find(|m| m.on)?;
    if head.jitter_marks.iter().any(|m| m.on && m.library == on_before.library) {
        return None;
    }
    let off = head
        .jitter_marks
        .iter()
        .find(|m| !m.on && m.library == on_before.library && files[r.file].is_added(m.line))?;
    let setting = |name: &str, line: u32| Setting {
        name: name.to_string(),
        key: format!("{}.jitter", off.library),
        reading: names::Reading { knob: names::Knob::Jitter, says_retry: true },
        context: String::new(),
        line,
        value: value::Value::Text(name.to_string()),
        default: None,
        library: Some(off.library.clone()),
        default_source: None,
    };
    Some(Worsened {
        read: r,
        head: setting(&off.name, off.line),
        base: setting(&on_before.name, on_before.line),
        worse: Worse::JitterOff,
        names_a_retry: true,
        retry_edited_in: None,
        origin: Origin::Replaced,
    })
}

/// What every setting of one change is judged against.
struct Ctx<'c> {
    files: &'c [&'c FileChange],
    /// The files where the change makes timeouts retried, read the first
    /// time a timeout needs it.
    retry_edits: std::cell::OnceCell<Vec<(usize, String)>>,
    reads: &'c [Read],
}

impl Ctx<'_> {
    /// A file other than `except` where the change makes timeouts retried.
    fn retry_edited_elsewhere(&self, except: usize) -> Option<String> {
        let all = self.retry_edits.get_or_init(|| retry_edits(self.reads, self.files));
        all.iter().find(|(f, _)| *f != except).map(|(_, p)| p.clone())
    }
}

fn consider<'a>(
    ctx: &Ctx<'_>,
    r: &'a Read,
    head: &Setting,
    base: &Setting,
    origin: Origin,
    worse: &mut Vec<Worsened<'a>>,
    notes: &mut Vec<Note>,
) {
    if !ctx.files[r.file].is_added(head.line) || rust_model_owns(&r.path, head) {
        return;
    }
    let names_a_retry = r.head.as_ref().is_some_and(|e| e.names_a_retry);
    match compare::judge(head.reading.knob, &base.value, &head.value) {
        Judgement::Worse(w) => worse.push(Worsened {
            read: r,
            head: head.clone(),
            base: base.clone(),
            worse: w,
            names_a_retry,
            retry_edited_in: (w == Worse::TimeoutLowered && !names_a_retry && !head.reading.says_retry)
                .then(|| ctx.retry_edited_elsewhere(r.file))
                .flatten(),
            origin,
        }),
        Judgement::Unknown if head.reading.says_retry => notes.push(Note::info(
            Some(&r.path),
            format!(
                "{}:{}: `{}` was {} and is now {}, which retrygate cannot compute: check the value it takes",
                r.path,
                head.line,
                head.name,
                base.value.show(),
                head.value.show()
            ),
        )),
        _ => {}
    }
}

/// Whether the Rust analyzer, not the floor, judges this setting. It
/// follows timeouts, jitter and struct fields to the retries they reach
/// (and reports what it cannot follow); the floor adds only what that model
/// has no site for: a top-level constant whose name says retry count, and a
/// count set on a builder or struct whose name says retry (a retry policy
/// of a crate it does not know: `ExponentialBackoffRetryPolicy::new(..)
/// .with_max_attempts(10)`); where the model reports the same place, its
/// finding is kept ([`drop_covered`]).
fn rust_model_owns(path: &str, s: &Setting) -> bool {
    path.to_ascii_lowercase().ends_with(".rs")
        && !(s.reading.knob == names::Knob::Count
            && s.reading.says_retry
            && (s.context.is_empty() || names::words(&s.context).iter().any(|w| names::is_retry_word(w))))
}

/// The same change repeated in many files (presets generated from one
/// default) is one finding that lists the copies.
const COPIES_IN_ONE_FINDING: usize = 3;

fn findings(worse: Vec<Worsened>) -> Vec<Finding> {
    let mut groups: BTreeMap<(Worse, String, String, String), Vec<Worsened>> = BTreeMap::new();
    for w in worse {
        let key = (w.worse, w.head.key.clone(), w.base.value.show(), w.head.value.show());
        // Jitter replacements are per file: each is its own change.
        let key = if matches!(w.origin, Origin::Replaced) {
            (key.0, format!("{}:{}", w.read.path, key.1), key.2, key.3)
        } else {
            key
        };
        groups.entry(key).or_default().push(w);
    }
    let mut out = Vec::new();
    for (_, mut ws) in groups {
        ws.sort_by(|a, b| (a.read.path.as_str(), a.head.line).cmp(&(b.read.path.as_str(), b.head.line)));
        if ws.len() >= COPIES_IN_ONE_FINDING {
            let first = &ws[0];
            let copies: Vec<String> =
                ws[1..].iter().map(|w| format!("{}:{}", w.read.path, w.head.line)).collect();
            let mut f = finding(first);
            f.message = format!(
                "{}; the same change in {} more places: {}",
                f.message,
                copies.len(),
                copies.iter().take(10).cloned().collect::<Vec<_>>().join(", ")
                    + if copies.len() > 10 { ", …" } else { "" }
            );
            out.push(f);
        } else {
            out.extend(ws.iter().map(finding));
        }
    }
    out
}

fn finding(w: &Worsened) -> Finding {
    let name = &w.head.name;
    let (b, h) = (w.base.value.show(), w.head.value.show());
    let lib = w.head.library.as_deref().map(|l| format!("{l}'s ")).unwrap_or_default();
    let what = match (&w.origin, w.worse) {
        (Origin::Replaced, _) => {
            format!("`{}` ({lib}jittered wait) replaced by `{name}`, which does not jitter", w.base.name)
        }
        (Origin::Default, _) => format!(
            "`{name}` set to {h} where {lib}default was {b} ({})",
            w.head.default_source.as_deref().unwrap_or("the library's documentation")
        ),
        // A counter compared with a number ([`extract`]'s counter bounds).
        (_, Worse::CountRaised) if w.head.key.ends_with("_bound") => {
            format!("the limit in `{name}` raised from {b} to {h} attempts")
        }
        (_, Worse::CountRaised) => format!("`{name}` raised from {b} to {h}"),
        (_, Worse::Unbounded) => format!("`{name}` went from {b} to {h}: no limit on retries"),
        (_, Worse::JitterOff) => format!("`{name}` turned jitter off ({b} -> {h})"),
        (_, Worse::TimeoutLowered) => format!("`{name}` lowered from {b} to {h}"),
    };
    let elsewhere;
    let why = match (w.head.reading.says_retry, w.names_a_retry, &w.retry_edited_in) {
        _ if w.head.library.is_some() => "the library's own setting",
        (true, _, _) if w.head.key.ends_with("_bound") => "a counter whose name says it counts retries",
        (true, _, _) => "its name says it is a retry setting",
        (false, true, _) => "the file names a retry",
        (false, false, Some(path)) => {
            elsewhere = format!("the same change makes timeouts retried in {path}");
            elsewhere.as_str()
        }
        (false, false, None) => "a warning: neither its name nor the file says retry",
    };
    let moved = match &w.origin {
        Origin::Moved(m) => format!(", moved from {m}"),
        _ => String::new(),
    };
    let how = if w.head.library.is_some() {
        "read from the library's data"
    } else {
        "read by name, not followed to the retry it drives"
    };
    let severity =
        compare::severity(w.worse, w.head.reading.says_retry, w.names_a_retry || w.retry_edited_in.is_some());
    Finding {
        kind: w.worse.kind(),
        rule: w.worse.rule().to_string(),
        severity,
        path: w.read.path.clone(),
        line: w.head.line,
        end_line: w.head.line,
        message: format!("{what} ({why}{moved}; {how})"),
        base: Some(json!({ "name": w.base.name, "value": b })),
        head: Some(json!({ "name": name, "value": h })),
        fix: None,
    }
}

/// Drops count findings of the rule packs whose line gives a value to a
/// runtime counter (a name the file increments: `retries = 0` before
/// `retries += 1`): a counter's start is no setting.
pub(crate) fn drop_counters(findings: &mut Vec<Finding>, cs: &crate::changeset::ChangeSet) {
    // Per file, read once: its lines and the names it increments.
    type Lines<'t> = (Vec<&'t str>, std::collections::HashSet<String>);
    let mut files: HashMap<String, Option<Lines>> = HashMap::new();
    findings.retain(|f| {
        if f.kind != Kind::RetryCountRaised || f.rule.starts_with("knob/") || f.rule.starts_with("rust/") {
            return true;
        }
        let read = files.entry(f.path.clone()).or_insert_with(|| {
            let file = cs.files.iter().find(|c| c.path == f.path)?;
            let text = file.head.text()?;
            let Some(Dialect::Code(syntax, _)) = dialect_of(&f.path) else { return None };
            Some((text.lines().collect(), extract::counters_in(text, &syntax)))
        });
        let Some((lines, counters)) = read else { return true };
        let line = lines.get(f.line.saturating_sub(1) as usize).copied().unwrap_or("");
        let Some(name) = extract::assigned_name(line) else { return true };
        !counters.contains(&names::key(&name))
    });
}

/// Drops the findings of the layers below the models that a finding of
/// the same kind above them already covers: at the same place (within two
/// lines), or naming the same setting. The floor (`knob/`) is below
/// everything; the syntax-tree analyzer (`tree/`) is below the Rust model
/// and the rule packs, whose findings say more about their own shapes.
pub(crate) fn drop_covered(findings: &mut Vec<Finding>) {
    drop_covered_by(findings, "tree/", &|r| !r.starts_with("knob/") && !r.starts_with("tree/"));
    drop_covered_by(findings, "knob/", &|r| !r.starts_with("knob/"));
}

/// Rules of a layer that judge a whole file, not a line.
const FILE_WIDE: &[&str] = &[crate::analyze::trees::retry_after::RULE];

fn drop_covered_by(findings: &mut Vec<Finding>, layer: &str, above: &dyn Fn(&str) -> bool) {
    // The other analyzers' findings by file and kind: their lines (sorted)
    // and messages.
    let mut others: HashMap<(String, Kind), (Vec<u32>, Vec<String>)> = HashMap::new();
    for f in findings.iter().filter(|f| above(&f.rule)) {
        let e = others.entry((f.path.clone(), f.kind)).or_default();
        e.0.push(f.line);
        e.1.push(f.message.clone());
    }
    for (lines, _) in others.values_mut() {
        lines.sort_unstable();
    }
    findings.retain(|f| {
        if !f.rule.starts_with(layer) {
            return true;
        }
        let Some((lines, messages)) = others.get(&(f.path.clone(), f.kind)) else { return true };
        // A file-wide finding is covered by any finding of its kind in the file.
        if FILE_WIDE.contains(&f.rule.as_str()) {
            return false;
        }
        let i = lines.partition_point(|&l| l + 2 < f.line);
        let near = lines.get(i).is_some_and(|&l| l <= f.line + 2);
        let name = f.message.split('`').nth(1).unwrap_or("");
        !(near || (!name.is_empty() && messages.iter().any(|m| m.contains(name))))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(path: &str, base: &str, head: &str) -> Vec<(String, u32, String)> {
        let f = FileChange::from_texts(path, Some(base), Some(head));
        KnobsAnalyzer
            .analyze(&f)
            .findings
            .into_iter()
            .map(|f| (f.rule, f.line, f.severity.to_string()))
            .collect()
    }

    #[test]
    fn a_raised_count_under_a_long_qualified_name_is_an_error() {
        let got = scan(
            "svc/config.go",
            "const WorkflowTaskMaxRetryCount = 3\n",
            "const WorkflowTaskMaxRetryCount = 10\n",
        );
        assert_eq!(got, [("knob/retry-count-raised".to_string(), 1, "error".to_string())]);
        // Lowered: fine.
        assert!(scan(
            "svc/config.go",
            "const WorkflowTaskMaxRetryCount = 10\n",
            "const WorkflowTaskMaxRetryCount = 3\n"
        )
        .is_empty());
    }

    #[test]
    fn ci_compose_and_lock_files_are_not_read() {
        for p in [
            ".github/workflows/ci.yml",
            "docker-compose.yml",
            "deploy/compose.dev.yaml",
            "yarn.lock",
            "dist/app.min.js",
        ] {
            assert!(!KnobsAnalyzer.wants(p), "{p}");
        }
        // Generated files are skipped before any analyzer runs, for all of
        // them at once (`analyze::generated`, tested there).
    }

    #[test]
    fn many_copies_of_one_change_are_one_finding() {
        let files: Vec<FileChange> = (0..5)
            .map(|i| {
                FileChange::from_texts(
                    &format!("presets/p{i}.yaml"),
                    Some("retry:\n  max_attempts: 3\n"),
                    Some("retry:\n  max_attempts: 8\n"),
                )
            })
            .collect();
        let refs: Vec<&FileChange> = files.iter().collect();
        let got = KnobsAnalyzer.analyze_set(&refs).findings;
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].message.contains("the same change in 4 more places"), "{}", got[0].message);
    }

    #[test]
    fn a_setting_moved_to_another_file_is_compared_with_its_old_self() {
        let a =
            FileChange::from_texts("a.py", Some("MAX_RETRIES = 3\n"), Some("from b import MAX_RETRIES\n"));
        let b_same = FileChange::from_texts("b.py", Some(""), Some("MAX_RETRIES = 3\n"));
        assert!(KnobsAnalyzer.analyze_set(&[&a, &b_same]).findings.is_empty());
        let b_raised = FileChange::from_texts("b.py", Some(""), Some("MAX_RETRIES = 9\n"));
        let got = KnobsAnalyzer.analyze_set(&[&a, &b_raised]).findings;
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].message.contains("moved from a.py:1"), "{}", got[0].message);
    }

    /// An inline option moved into a module constant of another file is
    /// compared with its old self though its holder changed; with two
    /// candidates it is not guessed.
    #[test]
    fn a_setting_moved_under_another_holder_is_compared_with_its_old_self() {
        let client = |retries: &str| {
            format!("def client():\n    return boto3.client('s3', config=Config(retries={retries}))\n")
        };
        let a = FileChange::from_texts(
            "a.py",
            Some(&client("{'max_attempts': 3, 'mode': 'adaptive'}")),
            Some(&format!("from b import CLIENT_RETRIES\n{}", client("CLIENT_RETRIES"))),
        );
        let b = FileChange::from_texts(
            "b.py",
            Some(""),
            Some("CLIENT_RETRIES = {'max_attempts': 5, 'mode': 'adaptive'}\n"),
        );
        let got = KnobsAnalyzer.analyze_set(&[&a, &b]).findings;
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(
            got[0].message.contains("raised from 3 to 5") && got[0].message.contains("moved from a.py:2"),
            "{}",
            got[0].message
        );
        let two = FileChange::from_texts(
            "b.py",
            Some(""),
            Some("READ = {'max_attempts': 5}\nWRITE = {'max_attempts': 2}\n"),
        );
        assert!(KnobsAnalyzer.analyze_set(&[&a, &two]).findings.is_empty());
    }

    #[test]
    fn covered_findings_give_way_to_the_models() {
        let mk = |rule: &str, line: u32, msg: &str| Finding {
            kind: Kind::RetryCountRaised,
            rule: rule.into(),
            severity: crate::finding::Severity::Error,
            path: "a.py".into(),
            line,
            end_line: line,
            message: msg.into(),
            base: None,
            head: None,
            fix: None,
        };
        let mut fs = vec![
            mk("python/retries-raised", 10, "retries raised from 3 to 9"),
            mk("knob/retry-count-raised", 11, "`retries` raised from 3 to 9"),
            mk("knob/retry-count-raised", 40, "`OTHER_RETRIES` raised from 1 to 2"),
        ];
        drop_covered(&mut fs);
        let lines: Vec<u32> = fs.iter().map(|f| f.line).collect();
        assert_eq!(lines, [10, 40]);
    }
}
