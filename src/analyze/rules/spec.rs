//! Rule files: the YAML format, its validation, and compilation into
//! [`Rule`]s whose regexes are built at most once per run.
//!
//! A rule file is `rules: [...]`; every rule is checked on its own, so an
//! error names the file, the rule id and the reason. Unknown fields are
//! errors, never ignored: a misspelt `insde:` must not silently widen a rule.
//! The format is documented in `docs/rules.md`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::OnceLock;

use anyhow::{anyhow, bail, Context as _};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use regex::bytes::{Regex, RegexBuilder};
use serde::Deserialize;

use super::lang::Language;
use super::mask::View;
use crate::finding::{Kind, Severity};

/// Regexes bigger than this (compiled) are refused; a rule is a few dozen bytes.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// How a rule compares the base with the head (see `docs/rules.md`, "Semantics").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum When {
    /// The captured number of the same setting went up.
    Raised,
    /// The captured number of the same setting went down.
    Lowered,
    /// The pattern occurs more often in the head than in the base.
    Added,
    /// The pattern occurs less often in the head, and the retry site is still there.
    Removed,
}

/// What a captured number counts, so that like is compared with like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Counts {
    /// Retries after the first attempt: total attempts = n + 1.
    Retries,
    /// Total attempts, the first one included.
    Attempts,
    /// A duration; `unit:` (or a captured `unit`) says in what.
    Seconds,
    /// A plain quantity such as a retry budget's ratio or percentage.
    Ratio,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    rules: Vec<serde_yaml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Patterns {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InsideSpec {
    pattern: String,
    #[serde(default)]
    before: u32,
    #[serde(default)]
    after: u32,
    /// The retry must have been there before: the change adds no line of
    /// the context pattern to the file (a setting of a new retry is the new
    /// retry's business, not a change to an old one).
    #[serde(default)]
    existing: bool,
}

/// The documentation every rule carries, in Clippy's shape.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Docs {
    pub what: String,
    pub why: String,
    pub example: String,
    pub use_instead: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    id: String,
    kind: String,
    severity: String,
    languages: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
    message: String,
    pattern: Patterns,
    when: When,
    #[serde(default)]
    counts: Option<Counts>,
    #[serde(default)]
    unit: Option<String>,
    #[serde(default)]
    unbounded: Vec<String>,
    #[serde(default)]
    view: Option<String>,
    #[serde(default)]
    inside: Option<InsideSpec>,
    #[serde(default)]
    not_inside: Option<InsideSpec>,
    #[serde(default)]
    values: BTreeMap<String, String>,
    #[serde(default)]
    new_files: Option<bool>,
    #[serde(default)]
    replaced_by: Option<String>,
    #[serde(default)]
    moved_to: Option<String>,
    #[serde(default)]
    default: Option<DefaultSpec>,
    #[serde(default)]
    version: Option<VersionSpec>,
    docs: Docs,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct VersionSpec {
    name: String,
    pattern: String,
    below: String,
    unknown: String,
}

/// A finding that holds only on versions of a program below `below`: the
/// version is read from the Dockerfiles in the finding's folder and the
/// folders above it (`analyze/rules/versions.rs`).
#[derive(Debug, Clone)]
pub(crate) struct VersionGate {
    /// The program, for messages (`nginx`).
    pub(crate) name: String,
    /// Finds the version in a Dockerfile; its `v` group is the version.
    pub(crate) pattern: Regex,
    /// The first version the finding no longer holds on, as numbers.
    pub(crate) below: Vec<u64>,
    pub(crate) below_text: String,
    /// The severity when no version is found.
    pub(crate) unknown: Severity,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DefaultSpec {
    value: String,
    source: String,
    #[serde(default)]
    requires: Option<String>,
}

/// `when: raised` only: the value a library uses where the setting is not
/// written, so that a setting added to an existing call or literal is
/// compared with what applied before it.
#[derive(Debug, Clone)]
pub(crate) struct LibraryDefault {
    /// The default as written (`2`), read like a captured number.
    pub(crate) value: String,
    /// Where the default is documented, quoted in the message.
    pub(crate) source: String,
    /// Index into [`RuleSet::contexts`] of a pattern the head file must
    /// match for the default to apply (the library it is the default of).
    pub(crate) requires: Option<usize>,
}

/// The context condition of a rule: a match counts only if a line within
/// `before` lines above or `after` lines below it (or its own line) matches
/// the context pattern.
#[derive(Debug, Clone)]
pub(crate) struct Inside {
    /// Index into [`RuleSet::contexts`].
    pub(crate) context: usize,
    pub(crate) before: u32,
    pub(crate) after: u32,
    /// `when: added` only: the base holds at least as many context
    /// matches as the head (the change adds no retry of that form).
    pub(crate) existing: bool,
}

/// One compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    pub id: String,
    pub(crate) kind: Kind,
    pub(crate) severity: Severity,
    pub languages: Vec<Language>,
    pub(crate) paths: Option<GlobSet>,
    pub message: String,
    pub patterns: Vec<LazyRegex>,
    /// The patterns as written in the rule file.
    pub pattern_sources: Vec<String>,
    /// The patterns as matched (compiled into `patterns`, and what the
    /// prefilter searches): for a compared number, the `n` group also
    /// admits a name or the start of an expression.
    pub(crate) match_sources: Vec<String>,
    pub(crate) when: When,
    /// A user's rule, compiled when it was loaded (the bundled packs'
    /// rules compile when a file first needs them).
    pub(crate) compiled_at_load: bool,
    pub(crate) counts: Option<Counts>,
    /// Seconds per unit for unit-less durations.
    pub(crate) default_unit: f64,
    pub(crate) unbounded: Vec<String>,
    pub(crate) view: View,
    pub(crate) inside: Option<Inside>,
    /// The opposite condition: a match does not count when the context
    /// pattern matches within the window (a method guard next to a retry
    /// condition).
    pub(crate) not_inside: Option<Inside>,
    /// `raised`/`lowered` only: words the `n` group captures and the numbers
    /// they stand for (`True` -> 1, `<=` -> 1); such a rule reads only
    /// numbers and these words, no names or expressions.
    pub(crate) values: BTreeMap<String, String>,
    /// `when: added` only: whether a file the change creates is read. A rule
    /// about behaviour that got narrower or wider (a cap on Retry-After, an
    /// error added to what a retry catches) has nothing to compare with in a
    /// new file: code copied into a build folder, or a library's first commit.
    pub(crate) new_files: bool,
    /// `when: removed` only: index into [`RuleSet::contexts`] of a pattern
    /// that, on the head lines replacing a removed occurrence, says the
    /// setting is still there in another form (a retry decorator swapped for
    /// one that carries its own stop).
    pub(crate) replaced_by: Option<usize>,
    /// `when: removed` only: index into [`RuleSet::contexts`] of a retry
    /// that works for every request (a retrying client); when the retry
    /// site went with the occurrence but the change adds a line matching
    /// it, the retry moved there without the removed setting.
    pub(crate) moved_to: Option<usize>,
    pub(crate) default: Option<LibraryDefault>,
    pub(crate) version: Option<VersionGate>,
    pub docs: Docs,
    /// The rule file it came from.
    pub(crate) source: String,
}

impl Rule {
    /// Whether the rule reads files at `path` written in `lang`.
    pub(crate) fn applies_to(&self, lang: Language, path: &str) -> bool {
        self.languages.contains(&lang) && self.paths.as_ref().is_none_or(|g| g.is_match(path))
    }
}

/// Every rule of a run, with the context regexes they share.
#[derive(Debug, Clone, Default)]
pub(crate) struct RuleSet {
    pub(crate) rules: Vec<Rule>,
    pub(crate) contexts: Vec<LazyRegex>,
    pub(crate) context_sources: Vec<String>,
}

/// A rule's regex, checked when its file is loaded and compiled the first
/// time a file needs it. A pull request touches a language or two, and
/// compiling every bundled rule of every language was most of a small
/// scan's time. A pattern that parses can still fail to compile (the size
/// limit): a user's rule file is therefore compiled as it is loaded, so the
/// error names its file and rule; the bundled packs are compiled whole by a
/// test.
#[derive(Debug)]
pub struct LazyRegex {
    source: String,
    compiled: OnceLock<Regex>,
}

impl LazyRegex {
    /// Checks `source` (syntax and the flags every rule regex is built
    /// with) without compiling it; with `now`, compiles it too.
    fn new(source: &str, now: bool) -> Result<LazyRegex, String> {
        let compiled = OnceLock::new();
        if now {
            let _ = compiled.set(build_regex(source).map_err(|e| e.to_string())?);
        } else {
            syntax_of(source)?;
        }
        Ok(LazyRegex { source: source.to_string(), compiled })
    }

    /// The compiled regex.
    pub fn get(&self) -> &Regex {
        self.compiled.get_or_init(|| match build_regex(&self.source) {
            Ok(re) => re,
            // Only a bundled pattern is compiled here, and a test compiles
            // each of them: reaching this is a bug in the packs, and the
            // exit boundary turns it into exit 2, never a pass.
            Err(e) => panic!("the bundled rule pattern {:?} does not compile: {e}", self.source),
        })
    }

    /// The names of the pattern's capture groups.
    fn capture_names(&self) -> Vec<String> {
        if let Some(re) = self.compiled.get() {
            return re.capture_names().flatten().map(str::to_owned).collect();
        }
        let mut names = Vec::new();
        if let Ok(hir) = syntax_of(&self.source) {
            collect_capture_names(&hir, &mut names);
        }
        names
    }
}

impl Clone for LazyRegex {
    fn clone(&self) -> Self {
        let compiled = OnceLock::new();
        if let Some(re) = self.compiled.get() {
            let _ = compiled.set(re.clone());
        }
        LazyRegex { source: self.source.clone(), compiled }
    }
}

/// `source` parsed as [`build_regex`] reads it.
fn syntax_of(source: &str) -> Result<regex_syntax::hir::Hir, String> {
    regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .multi_line(true)
        .build()
        .parse(source)
        .map_err(|e| e.to_string())
}

fn collect_capture_names(hir: &regex_syntax::hir::Hir, out: &mut Vec<String>) {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Capture(c) => {
            if let Some(n) = &c.name {
                out.push(n.to_string());
            }
            collect_capture_names(&c.sub, out);
        }
        HirKind::Repetition(r) => collect_capture_names(&r.sub, out),
        HirKind::Concat(hs) | HirKind::Alternation(hs) => {
            for h in hs {
                collect_capture_names(h, out);
            }
        }
        _ => {}
    }
}

impl RuleSet {
    /// Loads and compiles rule files given as `(file name, YAML text)`.
    /// The first problem is an error naming the file, the rule and the reason.
    pub(crate) fn load(sources: &[(String, String)]) -> anyhow::Result<RuleSet> {
        Self::load_after_checked(&[], sources)
    }

    /// [`RuleSet::load`] of `checked` then `sources`, where the regexes of
    /// `checked` (the bundled packs, which a test compiles whole) are
    /// compiled when a file first needs them.
    pub(crate) fn load_after_checked(
        checked: &[(String, String)],
        sources: &[(String, String)],
    ) -> anyhow::Result<RuleSet> {
        let mut set = RuleSet::default();
        let mut seen: HashMap<String, String> = HashMap::new();
        let mut context_ids: HashMap<String, usize> = HashMap::new();
        let all = checked.iter().map(|s| (s, false)).chain(sources.iter().map(|s| (s, true)));
        for ((file, text), now) in all {
            crate::yaml::check(text).map_err(|r| anyhow!("{file}: {r}"))?;
            let spec: FileSpec = serde_yaml::from_str(text).map_err(|e| {
                anyhow!("{file}: not a valid rule file: {e}; a rule file is a YAML mapping with one key, `rules:`, holding a list of rules (docs/rules.md)")
            })?;
            for (i, value) in spec.rules.into_iter().enumerate() {
                let id = value.get("id").and_then(|v| v.as_str()).map(str::to_owned);
                let name = id.clone().unwrap_or_else(|| format!("#{} (no id)", i + 1));
                let rule: RuleSpec = serde_yaml::from_value(value).map_err(|e| {
                    anyhow!("{file}: rule '{name}': {e}; see docs/rules.md for the fields a rule has")
                })?;
                let compiled = compile(rule, file, now, &mut set, &mut context_ids)
                    .with_context(|| format!("{file}: rule '{name}'"))?;
                if let Some(other) = seen.insert(compiled.id.clone(), file.clone()) {
                    bail!(
                        "{file}: rule '{name}': the id is already used in {other}; rule ids must be unique"
                    );
                }
                set.rules.push(compiled);
            }
        }
        Ok(set)
    }
}

fn compile(
    spec: RuleSpec,
    file: &str,
    now: bool,
    set: &mut RuleSet,
    context_ids: &mut HashMap<String, usize>,
) -> anyhow::Result<Rule> {
    if !valid_id(&spec.id) {
        bail!("the id must look like `pack/name` in lower case letters, digits and `-`");
    }
    let kind = Kind::parse(&spec.kind).ok_or_else(|| {
        let known: Vec<&str> = Kind::ALL.iter().map(|k| k.id()).collect();
        anyhow!("unknown kind '{}'; use one of: {}", spec.kind, known.join(", "))
    })?;
    let severity = Severity::parse(&spec.severity)
        .ok_or_else(|| anyhow!("unknown severity '{}'; use error, warning or note", spec.severity))?;
    if spec.languages.is_empty() {
        bail!("`languages` is empty; name at least one language");
    }
    let mut languages = Vec::new();
    for l in &spec.languages {
        languages.push(Language::parse(l).ok_or_else(|| {
            let known: Vec<&str> = Language::ALL.iter().map(|l| l.name()).collect();
            anyhow!("unknown language '{l}'; use one of: {}", known.join(", "))
        })?);
    }
    let paths = if spec.paths.is_empty() {
        None
    } else {
        let mut b = GlobSetBuilder::new();
        for g in &spec.paths {
            let glob = GlobBuilder::new(g)
                .literal_separator(true)
                .build()
                .map_err(|e| anyhow!("bad glob '{g}' in `paths`: {e}"))?;
            b.add(glob);
        }
        Some(b.build().map_err(|e| anyhow!("bad `paths`: {e}"))?)
    };
    for (field, text) in [
        ("message", &spec.message),
        ("docs.what", &spec.docs.what),
        ("docs.why", &spec.docs.why),
        ("docs.example", &spec.docs.example),
        ("docs.use_instead", &spec.docs.use_instead),
    ] {
        if text.trim().is_empty() {
            bail!(
                "`{field}` is empty; every rule says what it flags, why, an example and what to use instead"
            );
        }
    }
    let pattern_sources = match spec.pattern {
        Patterns::One(p) => vec![p],
        Patterns::Many(ps) => ps,
    };
    if pattern_sources.is_empty() {
        bail!("`pattern` is empty; give a regex or a list of regexes");
    }
    let compares = matches!(spec.when, When::Raised | When::Lowered);
    let mut patterns = Vec::new();
    let mut match_sources = Vec::new();
    for written in &pattern_sources {
        LazyRegex::new(written, false).map_err(|e| anyhow!("bad `pattern` {written:?}: {e}"))?;
        // A compared number may also be written as a name or an expression
        // (`stop_after_attempt(MAX_ATTEMPTS)`, `uint64(10)`): the engine
        // resolves it (engine/values.rs), so the pattern admits it too.
        let p = if compares && spec.values.is_empty() { admit_expressions(written) } else { written.clone() };
        let re = LazyRegex::new(&p, now).map_err(|e| anyhow!("bad `pattern` {written:?}: {e}"))?;
        let names = re.capture_names();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        if compares && !names.contains(&"n") {
            bail!(
                "pattern {p:?} has no `(?P<n>...)` group; `when: {}` compares the number it captures",
                spec.when.as_str()
            );
        }
        if let Some(bad) = names.iter().find(|n| !matches!(**n, "n" | "unit" | "key")) {
            bail!("pattern {p:?} has a group named `{bad}`; only `n`, `unit` and `key` mean something");
        }
        patterns.push(re);
        match_sources.push(p);
    }
    match (compares, spec.counts) {
        (true, None) => bail!(
            "`when: {}` needs `counts:` (retries, attempts, seconds or ratio) so that like is compared with like",
            spec.when.as_str()
        ),
        (false, Some(_)) => bail!("`counts:` only applies to `when: raised` or `when: lowered`"),
        _ => {}
    }
    if !spec.unbounded.is_empty() && spec.when != When::Raised {
        bail!("`unbounded:` only applies to `when: raised`");
    }
    let default_unit = match &spec.unit {
        None => 1.0,
        Some(u) if spec.counts == Some(Counts::Seconds) => {
            unit_seconds(u).ok_or_else(|| anyhow!("unknown unit '{u}'; use ms, s, m or h"))?
        }
        Some(_) => bail!("`unit:` only applies to `counts: seconds`"),
    };
    let view = match spec.view.as_deref() {
        None | Some("code") => View::Code,
        Some("text") => View::Text,
        Some(v) => bail!("unknown view '{v}'; use code (comments and prose strings blanked) or text (only comments blanked)"),
    };
    let mut context_index = |pattern: &str, field: &str| -> anyhow::Result<usize> {
        if let Some(&c) = context_ids.get(pattern) {
            return Ok(c);
        }
        let re = LazyRegex::new(pattern, now).map_err(|e| anyhow!("bad `{field}` {pattern:?}: {e}"))?;
        set.contexts.push(re);
        set.context_sources.push(pattern.to_string());
        context_ids.insert(pattern.to_string(), set.contexts.len() - 1);
        Ok(set.contexts.len() - 1)
    };
    let replaced_by = match spec.replaced_by {
        Some(_) if spec.when != When::Removed => bail!("`replaced_by:` only applies to `when: removed`"),
        Some(p) => Some(context_index(&p, "replaced_by")?),
        None => None,
    };
    let moved_to = match spec.moved_to {
        Some(_) if spec.when != When::Removed => bail!("`moved_to:` only applies to `when: removed`"),
        Some(p) => Some(context_index(&p, "moved_to")?),
        None => None,
    };
    let default = match spec.default {
        Some(_) if spec.when != When::Raised => bail!("`default:` only applies to `when: raised`"),
        Some(d) => {
            let digits = d.value.trim().replace('_', "");
            if !digits.parse::<f64>().is_ok_and(f64::is_finite) {
                bail!(
                    "`default.value` {:?} is not a number; write the library's default as a number",
                    d.value
                );
            }
            if d.source.trim().is_empty() {
                bail!("`default.source` is empty; say where the library documents its default");
            }
            let requires = match &d.requires {
                Some(p) => Some(context_index(p, "default.requires")?),
                None => None,
            };
            Some(LibraryDefault { value: digits, source: d.source, requires })
        }
        None => None,
    };
    let version = match spec.version {
        Some(v) => {
            let pattern =
                build_regex(&v.pattern).map_err(|e| anyhow!("bad `version.pattern` {:?}: {e}", v.pattern))?;
            if !pattern.capture_names().flatten().any(|n| n == "v") {
                bail!("`version.pattern` {:?} has no `(?P<v>...)` group, the version it reads", v.pattern);
            }
            let below = parse_version(&v.below).ok_or_else(|| {
                anyhow!(
                    "`version.below` {:?} is not a version; write it as numbers and dots (1.9.13)",
                    v.below
                )
            })?;
            let unknown = Severity::parse(&v.unknown).ok_or_else(|| {
                anyhow!("unknown `version.unknown` severity '{}'; use error, warning or note", v.unknown)
            })?;
            Some(VersionGate { name: v.name, pattern, below, below_text: v.below, unknown })
        }
        None => None,
    };
    let inside = match spec.inside {
        None if spec.when == When::Removed => bail!(
            "`when: removed` needs `inside:`, the retry site that must still exist in the head (otherwise deleting a whole client would be reported)"
        ),
        None => None,
        Some(i) => {
            let context = context_index(&i.pattern, "inside.pattern")?;
            Some(Inside { context, before: i.before, after: i.after, existing: i.existing })
        }
    };
    let not_inside = match spec.not_inside {
        None => None,
        Some(i) => {
            let context = context_index(&i.pattern, "not_inside.pattern")?;
            Some(Inside { context, before: i.before, after: i.after, existing: i.existing })
        }
    };
    if !spec.values.is_empty() && !compares {
        bail!("`values:` only applies to `when: raised` or `when: lowered`");
    }
    for (word, number) in &spec.values {
        if !number.trim().parse::<f64>().is_ok_and(f64::is_finite) {
            bail!(
                "`values` maps {word:?} to {number:?}, which is not a number; write the number it stands for"
            );
        }
    }
    if spec.new_files.is_some() && spec.when != When::Added {
        bail!("`new_files:` only applies to `when: added`");
    }
    check_placeholders(&spec.message, spec.when)?;
    Ok(Rule {
        id: spec.id,
        kind,
        severity,
        languages,
        paths,
        message: spec.message,
        patterns,
        compiled_at_load: now,
        pattern_sources,
        match_sources,
        when: spec.when,
        counts: spec.counts,
        default_unit,
        unbounded: spec.unbounded,
        view,
        inside,
        not_inside,
        values: spec.values,
        new_files: spec.new_files.unwrap_or(true),
        replaced_by,
        moved_to,
        default,
        version,
        docs: spec.docs,
        source: file.to_string(),
    })
}

/// The start of a value that is not a literal: a name, possibly dotted
/// (`MAX_ATTEMPTS`, `self.retries`, `uint64`, `os.environ.get`). Where it
/// continues (a call, an operator) the engine reads with a bracket scanner.
pub(crate) const EXPRESSION_START: &str =
    r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*(?:\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\))?";

/// `pattern` with the inside of its `(?P<n>...)` group widened to also
/// admit [`EXPRESSION_START`]; unchanged when the pattern has no such group
/// or cannot be parsed (the caller has already compiled it).
pub(crate) fn admit_expressions(pattern: &str) -> String {
    use regex_syntax::ast::{parse::Parser, Ast, GroupKind};
    fn find(ast: &Ast) -> Option<regex_syntax::ast::Span> {
        match ast {
            Ast::Group(g) => match &g.kind {
                GroupKind::CaptureName { name, .. } if name.name == "n" => Some(*g.ast.span()),
                _ => find(&g.ast),
            },
            Ast::Alternation(a) => a.asts.iter().find_map(find),
            Ast::Concat(c) => c.asts.iter().find_map(find),
            Ast::Repetition(r) => find(&r.ast),
            _ => None,
        }
    }
    let Ok(ast) = Parser::new().parse(pattern) else { return pattern.to_string() };
    let Some(span) = find(&ast) else { return pattern.to_string() };
    let (from, to) = (span.start.offset, span.end.offset);
    format!("{}(?:{}|{EXPRESSION_START}){}", &pattern[..from], &pattern[from..to], &pattern[to..])
}

/// Compiles a rule pattern: byte-wise, ASCII classes, `^`/`$` at line ends.
pub(crate) fn build_regex(p: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(p).unicode(false).multi_line(true).size_limit(REGEX_SIZE_LIMIT).build()
}

impl When {
    /// The name used in rule files.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            When::Raised => "raised",
            When::Lowered => "lowered",
            When::Added => "added",
            When::Removed => "removed",
        }
    }
}

fn valid_id(id: &str) -> bool {
    let mut parts = id.splitn(2, '/');
    let ok = |s: &str| {
        !s.is_empty()
            && s.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
            && !s.starts_with('-')
    };
    matches!((parts.next(), parts.next()), (Some(a), Some(b)) if ok(a) && ok(b))
}

fn check_placeholders(message: &str, when: When) -> anyhow::Result<()> {
    let allowed: BTreeSet<&str> = match when {
        When::Raised | When::Lowered => ["base", "head"].into(),
        When::Added | When::Removed => ["match"].into(),
    };
    let mut rest = message;
    while let Some(start) = rest.find('{') {
        let after = &rest[start + 1..];
        let end = after.find('}').ok_or_else(|| anyhow!("`message` has an unclosed `{{`"))?;
        let name = &after[..end];
        if !allowed.contains(name) {
            let names: Vec<String> = allowed.iter().map(|a| format!("{{{a}}}")).collect();
            bail!(
                "`message` uses {{{name}}}; with `when: {}` it may use {}",
                when.as_str(),
                names.join(", ")
            );
        }
        rest = &after[end + 1..];
    }
    Ok(())
}

/// A version written as numbers and dots (`1.9.13`, `1.6`), as numbers.
pub(crate) fn parse_version(text: &str) -> Option<Vec<u64>> {
    let parts: Option<Vec<u64>> = text.trim().split('.').map(|p| p.parse().ok()).collect();
    parts.filter(|p| !p.is_empty())
}

/// Seconds per unit, for the unit names rules capture or declare.
pub(crate) fn unit_seconds(unit: &str) -> Option<f64> {
    Some(match unit.to_ascii_lowercase().as_str() {
        "ms" | "milli" | "millis" | "millisecond" | "milliseconds" => 0.001,
        "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
        "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
        "h" | "hour" | "hours" => 3600.0,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bundled packs' regexes are compiled when a file first needs
    /// them ([`LazyRegex`]); this is where each of them is compiled once,
    /// with the size limit, so that none can fail in a user's run.
    #[test]
    fn every_bundled_pattern_and_context_compiles() {
        let bundled: Vec<(String, String)> =
            crate::analyze::rules::BUNDLED.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect();
        let set = RuleSet::load_after_checked(&bundled, &[]).unwrap();
        assert!(
            set.rules.iter().all(|r| r.patterns.iter().all(|p| p.compiled.get().is_none())),
            "not compiled yet"
        );
        let mut n = 0;
        for p in set.rules.iter().flat_map(|r| &r.patterns).chain(&set.contexts) {
            build_regex(&p.source).unwrap_or_else(|e| panic!("{:?}: {e}", p.source));
            n += 1;
        }
        assert!(n > 100, "{n} patterns");
    }

    #[test]
    fn a_users_pattern_over_the_size_limit_is_refused_when_loaded() {
        let words = (0..3000).map(|i| format!("w{i}[a-z]{{1,50}}")).collect::<Vec<_>>().join("|");
        let file = GOOD.replacen(r"'\bretries\s*=\s*(?P<n>\d+)'", &format!(r"'(?:{words})(?P<n>\d+)'"), 1);
        assert_ne!(file, GOOD, "the fixture's pattern was replaced");
        let err = RuleSet::load(&[("team.yml".into(), file.clone())]).unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.contains("team.yml") && msg.contains("bad `pattern`") && msg.contains("size limit"),
            "{msg}"
        );
        // Checked without compiling (the bundled packs): the syntax still is.
        assert!(LazyRegex::new("(a", false).is_err());
        assert!(LazyRegex::new(&format!("(?:{words})"), false).is_ok());
    }

    const GOOD: &str = r#"
rules:
  - id: test/retries-raised
    kind: retry-count-raised
    severity: error
    languages: [python]
    message: "retries raised from {base} to {head}"
    pattern: '\bretries\s*=\s*(?P<n>\d+)'
    when: raised
    counts: retries
    docs: { what: w, why: y, example: e, use_instead: u }
"#;

    fn load_err(yaml: &str) -> String {
        match RuleSet::load(&[("bad.yml".to_string(), yaml.to_string())]) {
            Ok(_) => panic!("expected an error for {yaml}"),
            Err(e) => format!("{e:#}"),
        }
    }

    #[test]
    fn a_good_rule_loads() {
        let set = RuleSet::load(&[("good.yml".into(), GOOD.into())]).unwrap();
        assert_eq!(set.rules.len(), 1);
        assert_eq!(set.rules[0].kind, Kind::RetryCountRaised);
        assert_eq!(set.rules[0].source, "good.yml");
    }

    #[test]
    fn unknown_fields_are_errors_naming_file_rule_and_field() {
        let e = load_err(&GOOD.replace("when: raised", "when: raised\n    insde: {pattern: x}"));
        assert!(e.contains("bad.yml") && e.contains("test/retries-raised") && e.contains("insde"), "{e}");
        let e = load_err(&format!("{GOOD}extra: 1\n"));
        assert!(e.contains("bad.yml") && e.contains("extra"), "{e}");
    }

    #[test]
    fn bad_values_are_errors_with_the_reason() {
        let cases = [
            (GOOD.replace("retry-count-raised", "retry-count-up"), "unknown kind 'retry-count-up'"),
            (GOOD.replace("severity: error", "severity: fatal"), "unknown severity 'fatal'"),
            (GOOD.replace("[python]", "[cobol]"), "unknown language 'cobol'"),
            (GOOD.replace("(?P<n>\\d+)", "(\\d+"), "bad `pattern`"),
            (GOOD.replace("(?P<n>\\d+)", "(\\d+)"), "has no `(?P<n>...)` group"),
            (GOOD.replace("counts: retries", ""), "needs `counts:`"),
            (GOOD.replace("{head}", "{heads}"), "uses {heads}"),
            (GOOD.replace("test/retries-raised", "Retries"), "must look like `pack/name`"),
            (GOOD.replace("what: w", "what: ' '"), "`docs.what` is empty"),
            (GOOD.replace("when: raised", "when: removed").replace("counts: retries", ""), "needs `inside:`"),
            (GOOD.replace("when: raised", "when: sideways"), "unknown variant `sideways`"),
            (
                GOOD.replace("    docs: { what: w, why: y, example: e, use_instead: u }\n", ""),
                "missing field `docs`",
            ),
            (
                GOOD.replace("counts: retries", "counts: retries\n    unit: ms"),
                "`unit:` only applies to `counts: seconds`",
            ),
            (
                GOOD.replace("counts: retries", "counts: seconds\n    unit: fortnight"),
                "unknown unit 'fortnight'",
            ),
            (GOOD.replace("counts: retries", "counts: retries\n    view: html"), "unknown view 'html'"),
            (GOOD.replace("(?P<n>\\d+)", "(?P<n>\\d+)(?P<num>x)?"), "a group named `num`"),
            (GOOD.replace("when: raised", "when: added").replace("counts: retries", ""), "uses {base}"),
            (
                GOOD.replace("when: raised", "when: added").replace("counts: retries", "unbounded: [\"0\"]"),
                "`unbounded:` only applies to `when: raised`",
            ),
            (GOOD.replace("languages: [python]", "languages: []"), "`languages` is empty"),
            (
                GOOD.replace("counts: retries", "counts: retries\n    default: {value: two, source: s}"),
                "`default.value` \"two\" is not a number",
            ),
            (
                GOOD.replace("counts: retries", "counts: retries\n    default: {value: '2', source: ' '}"),
                "`default.source` is empty",
            ),
            (
                GOOD.replace("when: raised", "when: lowered")
                    .replace("counts: retries", "counts: retries\n    default: {value: '2', source: s}"),
                "`default:` only applies to `when: raised`",
            ),
            (
                GOOD.replace("counts: retries", "counts: retries\n    version: {name: n, pattern: 'x', below: '1', unknown: note}"),
                "has no `(?P<v>...)` group",
            ),
            (
                GOOD.replace(
                    "counts: retries",
                    "counts: retries\n    version: {name: n, pattern: '(?P<v>x)', below: 'one', unknown: note}",
                ),
                "`version.below` \"one\" is not a version",
            ),
            (
                GOOD.replace(
                    "counts: retries",
                    "counts: retries\n    version: {name: n, pattern: '(?P<v>x)', below: '1.2', unknown: loud}",
                ),
                "unknown `version.unknown` severity 'loud'",
            ),
            (
                GOOD.replace("counts: retries", "counts: retries\n    moved_to: 'x'"),
                "`moved_to:` only applies to `when: removed`",
            ),
            (
                GOOD.replace("counts: retries", "counts: retries\n    replaced_by: 'x'"),
                "`replaced_by:` only applies to `when: removed`",
            ),
            (
                GOOD.replace("when: raised", "when: removed\n    inside: {pattern: r}\n    replaced_by: '('")
                    .replace("counts: retries", ""),
                "bad `replaced_by` \"(\"",
            ),
            (
                GOOD.replace("languages: [python]", "languages: [python]\n    paths: [\"a/[\"]"),
                "bad glob 'a/['",
            ),
            (
                GOOD.replace("counts: retries", "counts: retries\n    values: {'True': one}"),
                "`values` maps \"True\" to \"one\", which is not a number",
            ),
            (
                GOOD.replace("when: raised", "when: added")
                    .replace("counts: retries", "values: {'True': '1'}")
                    .replace("{base} to {head}", "{match}"),
                "`values:` only applies to `when: raised` or `when: lowered`",
            ),
            (
                GOOD.replace("counts: retries", "counts: retries\n    new_files: false"),
                "`new_files:` only applies to `when: added`",
            ),
            (
                GOOD.replace("counts: retries", "counts: retries\n    not_inside: {pattern: '('}"),
                "bad `not_inside.pattern` \"(\"",
            ),
        ];
        for (yaml, want) in cases {
            let e = load_err(&yaml);
            assert!(e.contains(want), "wanted {want:?} in: {e}");
            assert!(e.starts_with("bad.yml: "), "{e}");
        }
    }

    #[test]
    fn a_rule_with_values_reads_its_words_and_no_expressions() {
        let yaml = GOOD
            .replace("(?P<n>\\d+)", "(?P<n>True|False|\\d+)")
            .replace("counts: retries", "counts: ratio\n    values: {'True': '1', 'False': '0'}");
        let set = RuleSet::load(&[("good.yml".into(), yaml)]).unwrap();
        let rule = &set.rules[0];
        assert_eq!(rule.values.get("True").map(String::as_str), Some("1"));
        assert_eq!(
            rule.match_sources, rule.pattern_sources,
            "no widening to names: {:?}",
            rule.match_sources
        );
        let widened = RuleSet::load(&[("good.yml".into(), GOOD.into())]).unwrap();
        assert_ne!(widened.rules[0].match_sources, widened.rules[0].pattern_sources);
    }

    #[test]
    fn duplicate_ids_across_files_are_errors() {
        let e = match RuleSet::load(&[("a.yml".into(), GOOD.into()), ("b.yml".into(), GOOD.into())]) {
            Ok(_) => panic!("duplicate accepted"),
            Err(e) => format!("{e:#}"),
        };
        assert!(e.contains("b.yml") && e.contains("already used in a.yml"), "{e}");
    }

    #[test]
    fn not_yaml_names_the_file() {
        let e = load_err("rules: [unclosed");
        assert!(e.starts_with("bad.yml: not a valid rule file"), "{e}");
        let e = load_err("- id: x\n");
        assert!(e.starts_with("bad.yml: not a valid rule file"), "{e}");
        let e = load_err("rules:\n  - kind: jitter-removed\n");
        assert!(e.starts_with("bad.yml: rule '#1 (no id)': missing field `id`"), "{e}");
    }

    #[test]
    fn units_convert_to_seconds() {
        assert_eq!(unit_seconds("ms"), Some(0.001));
        assert_eq!(unit_seconds("Seconds"), Some(1.0));
        assert_eq!(unit_seconds("MINUTES"), Some(60.0));
        assert_eq!(unit_seconds("fortnight"), None);
    }
}
