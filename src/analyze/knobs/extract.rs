//! Settings out of one version of a file: every place a retry knob's name
//! is given a value, in the forms code and config use.
//!
//! Code (any language, one token stream, [`super::tokens`]):
//! - assignment, constant, default argument, keyword argument, field
//!   default: `NAME = v`, `NAME := v`, `NAME: T = v`, `f(NAME=v)`;
//! - map, object, struct literal or named-argument entry: `NAME: v`,
//!   `"NAME": v`, `'NAME' => v`, `cfg["NAME"] = v`;
//! - builder or option call with one argument: `.withMaxRetries(v)`,
//!   `WithMaxTries(v)`, `setMaxAttempts(v)`, `.max_retries(v)`;
//! - a placeholder with a written default anywhere in a string:
//!   `"${retry.max-attempts:5}"`.
//!
//! A name that says nothing alone is read with the name of what holds it:
//! `Retry(total=5)` is `retry total`, `retry: { max: 5 }` is `retry max`.
//!
//! Config (as data, line by line so each value keeps its line): YAML keys
//! under their parents, TOML and INI keys under their sections, Java
//! properties, `.env`/shell/Dockerfile `KEY=value`, nginx directives; JSON
//! and HCL are read as code (their entries are `"k": v` and `k = v`).
//!
//! What is not a setting: a runtime counter (`retries += 1`, `attempt++`),
//! a declaration whose "value" is a type (`max_retries: u32`), a
//! function's own definition (`def max_retries(self)`).

use std::collections::{HashMap, HashSet};

use super::libraries::{self, Library, LIBRARIES};
use super::names::{self, Reading};
use super::tokens::{tokenize, Tok, Token};
use super::value::{self, Bindings, Value};
use crate::analyze::rules::lang::Syntax;
use crate::analyze::rules::mask::{mask, View};

/// How a file is read.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Dialect {
    /// A programming language, or JSON/HCL, with its comment syntax and
    /// the language name library files use (`python`, `go`, `csharp`).
    Code(Syntax, &'static str),
    /// YAML.
    Yaml,
    /// TOML and INI: `[section]`, `key = value`.
    Sections,
    /// Java properties, `.env`, shell and Dockerfile `KEY=value`.
    Pairs,
    /// nginx: `directive value;`.
    Nginx,
}

/// One value given to a retry knob's name.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Setting {
    /// The name as written (`MAX_RETRIES`, `retry.max`).
    pub(crate) name: String,
    /// The words the knob was read from, joined: the identity across spellings.
    pub(crate) key: String,
    pub(crate) reading: Reading,
    /// What holds it (the call, the struct, the parent key), as words.
    pub(crate) context: String,
    pub(crate) line: u32,
    pub(crate) value: Value,
    /// What the library does when the setting is not given (library
    /// options only): what a newly given value is compared with.
    pub(crate) default: Option<Value>,
    /// The retry library that reads it, when a library file says so.
    pub(crate) library: Option<String>,
    /// Where the library's default comes from (library options only).
    pub(crate) default_source: Option<String>,
}

/// A constructor or name a library file says jitters (or does not).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JitterMark {
    pub(crate) library: String,
    pub(crate) name: String,
    pub(crate) line: u32,
    pub(crate) on: bool,
}

/// Everything the floor reads from one version of a file.
#[derive(Debug, Default, Clone)]
pub(crate) struct Extracted {
    pub(crate) settings: Vec<Setting>,
    /// Literal values of every name (knob or not), for looking names up.
    pub(crate) bindings: Bindings,
    /// Whether the code names a retry anywhere (a retry library, a
    /// `retry`-worded function): what ties an unqualified timeout to one.
    pub(crate) names_a_retry: bool,
    /// Jittering and non-jittering constructors of the libraries it uses.
    pub(crate) jitter_marks: Vec<JitterMark>,
}

/// Reads `text` as `dialect`; `global` resolves names the file does not bind.
pub(crate) fn extract(text: &str, dialect: Dialect, global: &Bindings) -> Extracted {
    match dialect {
        Dialect::Code(syntax, lang) => {
            let mut out = code(text, &syntax, lang, global);
            if lang != "json" {
                out.settings.extend(json_in_strings(text, &syntax, global));
            }
            out
        }
        Dialect::Yaml => yaml(text),
        Dialect::Sections => sections(text),
        Dialect::Pairs => pairs(text),
        Dialect::Nginx => nginx(text),
    }
}

/// The literal bindings of `text` alone (the first pass, for the change-wide lookup).
pub(crate) fn bindings_of(text: &str, dialect: Dialect) -> Bindings {
    match dialect {
        Dialect::Code(syntax, _) => {
            let toks = code_tokens(text, &syntax);
            literal_bindings(&toks, &Bindings::default())
        }
        _ => Bindings::default(),
    }
}

fn code_tokens(text: &str, syntax: &Syntax) -> Vec<Token> {
    let masked = mask(text, syntax, View::Code);
    tokenize(&masked)
}

const KEYWORDS_BEFORE_DEFINITION: &[&str] =
    &["def", "fn", "function", "func", "fun", "sub", "method", "async", "get", "set", "static"];

/// Where the value after `i` (the operator's index) ends: a separator or
/// closer at depth 0, or a line break that does not continue the expression.
fn value_end(t: &[Token], start: usize) -> usize {
    let mut depth = 0i32;
    let mut j = start;
    while j < t.len() && j - start < 64 {
        match &t[j].tok {
            Tok::Punct("(" | "[" | "{") => depth += 1,
            Tok::Punct(")" | "]" | "}") => {
                if depth == 0 {
                    return j;
                }
                depth -= 1;
            }
            Tok::Punct("," | ";") if depth == 0 => return j,
            Tok::Newline if depth == 0 => {
                let continues = j > start
                    && matches!(
                        t[j - 1].tok,
                        Tok::Punct("+" | "-" | "*" | "/" | "??" | "||" | "(" | "," | "=" | ":")
                    );
                if !continues {
                    return j;
                }
            }
            _ => {}
        }
        j += 1;
    }
    j
}

fn without_newlines(t: &[Token]) -> Vec<Token> {
    t.iter().filter(|x| x.tok != Tok::Newline).cloned().collect()
}

const TYPE_WORDS: &[&str] = &[
    "int",
    "str",
    "float",
    "bool",
    "number",
    "string",
    "boolean",
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "usize",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "isize",
    "f32",
    "f64",
    "Option",
    "Optional",
    "long",
    "double",
    "Integer",
    "Long",
    "Int",
    "uint",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "int8",
    "int16",
    "int32",
    "int64",
    "any",
    "Any",
    "Duration",
    "time.Duration",
    "Double",
    "Float",
    "Boolean",
    "String",
    "short",
    "byte",
    "char",
    "object",
    "Object",
    "unknown",
    "Number",
    "NonZeroU32",
    "NonZeroUsize",
    "timedelta",
];

/// A "value" that is a type: the entry is a declaration, not a setting.
fn is_type(t: &[Token]) -> bool {
    match t.first().map(|x| &x.tok) {
        // `float("inf")` is a call, not a type.
        Some(Tok::Name(_)) if matches!(t.get(1).map(|x| &x.tok), Some(Tok::Punct("("))) => false,
        Some(Tok::Name(n)) => {
            TYPE_WORDS.contains(&n.as_str())
                || (t.len() > 1 && matches!(t[1].tok, Tok::Punct("<" | "|" | "[")))
                || (t.len() == 1
                    && n.chars().next().is_some_and(char::is_uppercase)
                    && !n.contains('.')
                    && !n.chars().all(|c| c.is_uppercase() || c == '_' || c.is_ascii_digit()))
        }
        _ => false,
    }
}

/// After `NAME :` at `i`: a type then `=` (an annotated assignment)?
/// Returns the index just past the `=`.
fn annotated_value(t: &[Token], colon: usize) -> Option<usize> {
    let mut j = colon + 1;
    let mut depth = 0i32;
    while j < t.len() && j - colon < 12 {
        match &t[j].tok {
            Tok::Punct("=") if depth == 0 => return Some(j + 1),
            Tok::Punct("<" | "[" | "(") => depth += 1,
            Tok::Punct(">" | "]" | ")") => depth -= 1,
            Tok::Name(_) | Tok::Punct("|" | "." | "?" | "&" | "," | "::") => {}
            _ => return None,
        }
        if depth < 0 {
            return None;
        }
        j += 1;
    }
    None
}

/// `NAME (=|:=|: T =|:|=>) VALUE` at `i`: the value's token range.
fn entry_value(t: &[Token], i: usize) -> Option<(usize, usize)> {
    let op = t.get(i + 1)?;
    let start = match &op.tok {
        Tok::Punct("=" | ":=" | "=>") => i + 2,
        Tok::Punct(":") => match annotated_value(t, i + 1) {
            Some(s) => s,
            None => {
                let rest = &t[i + 2..value_end(t, i + 2)];
                if is_type(rest) {
                    return None;
                }
                i + 2
            }
        },
        // Go: `var MaxRetries int = 3`
        Tok::Name(ty) if TYPE_WORDS.contains(&ty.as_str()) => match t.get(i + 2).map(|x| &x.tok) {
            Some(Tok::Punct("=")) => i + 3,
            _ => return None,
        },
        _ => return None,
    };
    let end = value_end(t, start);
    (end > start).then_some((start, end))
}

/// `setMaxRetries`, `withMaxRetries`, `WithMaxTries`, `set_max_retries` -> the knob's own name.
fn setter_name(last: &str) -> &str {
    for p in ["set_", "with_", "Set", "With", "set", "with"] {
        if let Some(rest) = last.strip_prefix(p) {
            let upper_next = rest.chars().next().is_some_and(|c| c.is_uppercase());
            if p.ends_with('_') || upper_next {
                return rest;
            }
        }
    }
    last
}

fn last_part(p: &str) -> &str {
    p.rsplit('.').next().unwrap_or(p)
}

/// The knob `name` is, read alone or with what holds it.
fn qualify(name: &str, owner: &str) -> Option<(String, Reading)> {
    let own = names::words(name);
    if let Some(mut r) = names::read_words(&own) {
        // `[client.retry] max_attempts`: the holder says it is a retry.
        if !r.says_retry && names::words(owner).iter().any(|w| names::is_retry_word(w)) {
            r.says_retry = true;
        }
        return Some((own.join("_"), r));
    }
    if owner.is_empty() {
        return None;
    }
    let mut w = names::words(last_part(owner));
    // `RetryConfig(max=..)`, `retryPolicy: {maxAttempts}`: the holder's
    // retry word qualifies a bare `max`/`total`/`attempts`.
    w.extend(own.iter().cloned());
    if let Some(r) = names::read_words(&w) {
        return Some((w.join("_"), r));
    }
    // `retry.Config{Maximum: 5}`: the package names the retry.
    let mut w = names::words(owner);
    if w.len() > 4 {
        return None;
    }
    w.extend(own);
    let r = names::read_words(&w)?;
    Some((w.join("_"), r))
}

fn code(text: &str, syntax: &Syntax, lang: &str, global: &Bindings) -> Extracted {
    let t = code_tokens(text, syntax);
    let libs: Vec<&Library> = LIBRARIES.0.iter().filter(|l| l.used_by(lang, text)).collect();
    let mut local = literal_bindings(&t, global);
    // Names the file does not bind come from the change's other files.
    for (k, v) in &global.by_name {
        local.by_name.entry(k.clone()).or_insert_with(|| v.clone());
    }
    let counters = counters(&t);
    let copies = field_copies(&t);
    let mut out = Extracted { names_a_retry: names_a_retry(&t), ..Default::default() };
    out.settings.extend(counter_bounds(&t, &counters));
    let mut owners: Vec<String> = Vec::new();
    // Outside brackets, what holds a keyword argument is the line's command
    // or symbol: Ruby's `f.request :retry, max: 2`, `sidekiq_options retry: 5`.
    let mut line_owner = String::new();
    let mut line_start = true;
    // An import names a constructor without using it.
    let mut in_import = false;
    for i in 0..t.len() {
        match &t[i].tok {
            Tok::Punct("(" | "[" | "{") => {
                owners.push(owner_before(&t, i));
                continue;
            }
            Tok::Punct(")" | "]" | "}") => {
                owners.pop();
                continue;
            }
            Tok::Newline | Tok::Punct(";") => {
                if owners.is_empty() {
                    line_owner.clear();
                    line_start = true;
                    in_import = false;
                }
                continue;
            }
            _ => {}
        }
        if owners.is_empty() {
            if line_start {
                in_import = matches!(&t[i].tok, Tok::Name(n) if matches!(n.as_str(), "import" | "from" | "use" | "using" | "require" | "require_relative" | "include"));
            }
            let next = t.get(i + 1).map(|x| &x.tok);
            match (&t[i].tok, i.checked_sub(1).map(|p| &t[p].tok)) {
                // `:retry` after a command or a comma.
                (Tok::Name(n), Some(Tok::Punct(":")))
                    if i >= 2 && matches!(t[i - 2].tok, Tok::Name(_) | Tok::Punct(",")) =>
                {
                    line_owner = n.clone();
                }
                (Tok::Name(n), _)
                    if line_start && matches!(next, Some(Tok::Name(_)) | Some(Tok::Punct(":"))) =>
                {
                    if matches!(next, Some(Tok::Name(_))) {
                        line_owner = n.clone();
                    }
                }
                _ => {}
            }
            line_start = false;
        }
        let owner =
            owners.iter().rev().find(|o| !o.is_empty()).cloned().unwrap_or_else(|| line_owner.clone());
        let prev = i.checked_sub(1).map(|p| &t[p].tok);
        if matches!(prev, Some(Tok::Punct("?"))) || matches!(prev, Some(Tok::Name(k)) if k == "case") {
            continue;
        }
        match &t[i].tok {
            Tok::Str(s) => {
                placeholders(s, t[i].line, &mut out.settings);

                // `"NAME": v`, `'NAME' => v`, `cfg["NAME"] = v`.
                let bracketed = matches!(prev, Some(Tok::Punct("[")))
                    && matches!(t.get(i + 1).map(|x| &x.tok), Some(Tok::Punct("]")));
                let at = if bracketed { i + 1 } else { i };
                if bracketed && !matches!(t.get(i + 2).map(|x| &x.tok), Some(Tok::Punct("="))) {
                    continue;
                }
                if let Some((a, b)) = entry_value(&t, at) {
                    push(&mut out.settings, s, &owner, t[i].line, &t[a..b], &local, &counters);
                }
            }
            Tok::Name(p) => {
                let defines =
                    matches!(prev, Some(Tok::Name(k)) if KEYWORDS_BEFORE_DEFINITION.contains(&k.as_str()));
                if !libs.is_empty() {
                    if !in_import {
                        mark_jitter(&libs, p, t[i].line, &mut out.jitter_marks);
                    }
                    if !defines && library_setting(&libs, &t, i, &owner, &local, &mut out.settings) {
                        continue;
                    }
                }
                if let Some((a, b)) = entry_value(&t, i) {
                    // What the name stands for: `cfg.health.timeout = ..`, or a
                    // local copied from such a field (`timeout := cfg.Health.Timeout`).
                    let holder = match p.rsplit_once('.') {
                        Some((q, _)) => q,
                        None => copies.get(&names::key(p)).map_or("", String::as_str),
                    };
                    let a_timeout = names::read(last_part(p)).is_some_and(|r| r.knob == names::Knob::Timeout);
                    if !(a_timeout && names::holds_no_retried_timeout(holder)) {
                        push(&mut out.settings, last_part(p), &owner, t[i].line, &t[a..b], &local, &counters);
                    }
                    continue;
                }
                // A builder or option call with one argument.
                if !defines && matches!(t.get(i + 1).map(|x| &x.tok), Some(Tok::Punct("("))) {
                    let end = value_end(&t, i + 2);
                    let one_arg = matches!(t.get(end).map(|x| &x.tok), Some(Tok::Punct(")"))) && end > i + 2;
                    let keyword = matches!(t.get(i + 3).map(|x| &x.tok), Some(Tok::Punct("=" | ":")));
                    if one_arg && !keyword {
                        let name = setter_name(last_part(p));
                        let owner = retry_chain_head(&t, i).unwrap_or_default();
                        push(&mut out.settings, name, &owner, t[i].line, &t[i + 2..end], &local, &counters);
                    }
                }
            }
            _ => {}
        }
    }
    out.bindings = local;
    out
}

/// The head of the builder chain the call at `i` is a link of, when a
/// name in it says retry: `ExponentialBackoffRetryPolicy::new(d)
/// .with_max_attempts(3)`, `RetryPolicy.builder().withMaxAttempts(3)`. A
/// setter's bare `max_attempts` (also a login's or a lock's) is a retry
/// count on a retry policy's builder. Names inside the chain's arguments do
/// not count; the chain ends at an assignment, a comma, an opening bracket
/// or a line that does not continue it.
fn retry_chain_head(t: &[Token], i: usize) -> Option<String> {
    const LOOK_BACK: usize = 80;
    let mut depth = 0i32;
    let mut found = None;
    let mut j = i;
    while j > 0 && i - j < LOOK_BACK {
        j -= 1;
        match &t[j].tok {
            Tok::Punct(")" | "]" | "}") => depth += 1,
            Tok::Punct("(" | "[" | "{") => {
                if depth == 0 {
                    break;
                }
                depth -= 1;
            }
            Tok::Punct(";" | "=" | ":=" | "," | "=>" | "->") if depth == 0 => break,
            Tok::Newline if depth == 0 => {
                let continues = match t.get(j + 1).map(|x| &x.tok) {
                    Some(Tok::Punct(p)) => p.starts_with('.') || *p == "?.",
                    Some(Tok::Name(n)) => n.starts_with('.'),
                    _ => false,
                };
                if !continues {
                    break;
                }
            }
            Tok::Name(n) if depth == 0 && names::words(n).iter().any(|w| names::is_retry_word(w)) => {
                found = Some(n.clone());
            }
            _ => {}
        }
    }
    found
}

/// The settings of JSON documents written as strings in code (a gRPC
/// service config's `retryPolicy` in a Go raw string), at their lines. The
/// code view blanks such strings as prose, so they are read from the text
/// view.
fn json_in_strings(text: &str, syntax: &Syntax, global: &Bindings) -> Vec<Setting> {
    if !text.contains("\":") {
        return Vec::new();
    }
    let json = crate::analyze::rules::lang::Language::Json.syntax();
    let mut out = Vec::new();
    for tok in tokenize(&mask(text, syntax, View::Text)) {
        let Tok::Str(s) = &tok.tok else { continue };
        if !is_json_object(s) {
            continue;
        }
        for mut inner in code(s, &json, "json", global).settings {
            inner.line += tok.line.saturating_sub(1);
            out.push(inner);
        }
    }
    out
}

/// Whether a string's content is a JSON object with entries.
fn is_json_object(s: &str) -> bool {
    s.starts_with('{') && s.ends_with('}') && s.contains("\":")
}

/// The name that owns the bracket at `i`: the callee or type before it, or
/// the key it is assigned to (`retry = {`, `retry: {`).
fn owner_before(t: &[Token], i: usize) -> String {
    let Some(p) = i.checked_sub(1) else { return String::new() };
    match &t[p].tok {
        Tok::Name(n) => n.clone(),
        Tok::Punct("=" | ":" | "=>" | ":=") => match p.checked_sub(1).map(|q| &t[q].tok) {
            Some(Tok::Name(n)) => n.clone(),
            Some(Tok::Str(s)) => s.clone(),
            _ => String::new(),
        },
        _ => String::new(),
    }
}

/// A library's count, unbounded, jitter or timeout call or option at `i`;
/// whether one was read.
fn library_setting(
    libs: &[&Library],
    t: &[Token],
    i: usize,
    owner: &str,
    b: &Bindings,
    out: &mut Vec<Setting>,
) -> bool {
    let Tok::Name(p) = &t[i].tok else { return false };
    let last = last_part(p);
    let is_call = matches!(t.get(i + 1).map(|x| &x.tok), Some(Tok::Punct("(")));
    for lib in libs {
        for (knob, e) in lib.entries() {
            let unbounded = lib.unbounded.iter().any(|u| std::ptr::eq(u, e));
            // `stop=stop_never` names the unbounded strategy without calling it.
            let toks: Option<Vec<Token>> = if e.call.as_deref() == Some(last) && (is_call || unbounded) {
                if unbounded {
                    Some(Vec::new())
                } else {
                    nth_arg(t, i + 2, e.arg).map(|(a, z)| without_newlines(&t[a..z]))
                }
            } else if let Some(opt) = e.option.as_deref() {
                let within = e.within.is_empty() || e.within.iter().any(|w| w == last_part(owner));
                if !within {
                    None
                } else if last == opt {
                    entry_value(t, i).map(|(a, z)| without_newlines(&t[a..z]))
                } else if is_call && setter_name(last) == opt {
                    nth_arg(t, i + 2, 0).map(|(a, z)| without_newlines(&t[a..z]))
                } else {
                    None
                }
            } else {
                None
            };
            let Some(toks) = toks else { continue };
            let value = if unbounded {
                Value::Unlimited
            } else {
                e.meaning(unit_from_name(value::eval(&toks, b), last))
            };
            out.push(Setting {
                name: last.to_string(),
                key: lib.key(knob, e),
                reading: Reading { knob, says_retry: true },
                context: names::key(owner),
                line: t[i].line,
                value,
                default: libraries::default_value(e),
                library: Some(lib.library.clone()),
                default_source: e.default.as_ref().map(|_| lib.default_source(e)),
            });
            return true;
        }
    }
    false
}

/// The token range of argument `n` (0-based) of the call whose `(` is just before `start`.
fn nth_arg(t: &[Token], start: usize, n: usize) -> Option<(usize, usize)> {
    let mut a = start;
    for k in 0..=n {
        let z = value_end(t, a);
        if k == n {
            return (z > a).then_some((a, z));
        }
        match t.get(z).map(|x| &x.tok) {
            Some(Tok::Punct(",")) => a = z + 1,
            _ => return None,
        }
    }
    None
}

/// Records `p` when a used library says it jitters or does not.
fn mark_jitter(libs: &[&Library], p: &str, line: u32, out: &mut Vec<JitterMark>) {
    let last = last_part(p);
    for lib in libs {
        let Some(j) = &lib.jitter else { continue };
        let on = j.on.iter().any(|x| x == last || x == p);
        let off = j.off.iter().any(|x| x == last || x == p);
        if on || off {
            out.push(JitterMark { library: lib.library.clone(), name: last.to_string(), line, on });
        }
    }
}

fn push(
    out: &mut Vec<Setting>,
    name: &str,
    owner: &str,
    line: u32,
    value_toks: &[Token],
    b: &Bindings,
    counters: &HashSet<String>,
) {
    let Some((key, reading)) = qualify(name, owner) else { return };
    if reading.knob == names::Knob::Timeout && names::holds_no_retried_timeout(owner) {
        return;
    }
    if counters.contains(&names::key(name)) {
        return;
    }
    let toks = without_newlines(value_toks);
    if is_type(&toks) {
        return;
    }
    let value = unit_from_name(value::eval(&toks, b), name);
    out.push(Setting {
        name: name.to_string(),
        key,
        reading,
        context: names::key(owner),
        line,
        value,
        default: None,
        library: None,
        default_source: None,
    });
}

/// A bare number under a name that says its unit (`timeout_ms`, `TimeoutSeconds`).
fn unit_from_name(v: Value, name: &str) -> Value {
    let Value::Num { v: n, seconds: false } = v else { return v };
    let w = names::words(name);
    let unit = match w.last().map(String::as_str) {
        Some("ms" | "millis" | "milliseconds" | "msec" | "msecs") => 1e-3,
        Some("s" | "sec" | "secs" | "seconds") => 1.0,
        Some("minutes" | "mins") => 60.0,
        Some("us" | "micros") => 1e-6,
        _ => return Value::Num { v: n, seconds: false },
    };
    Value::Num { v: n * unit, seconds: true }
}

/// `${retry.max-attempts:5}` inside a string: a setting named by its key.
fn placeholders(s: &str, line: u32, out: &mut Vec<Setting>) {
    let mut rest = s;
    while let Some(open) = rest.find("${") {
        let after = &rest[open + 2..];
        let Some(close) = after.find('}') else { return };
        let inner = &after[..close];
        if let Some((k, default)) = inner.split_once(':') {
            let default = default.strip_prefix('-').unwrap_or(default);
            if let Some(r) = names::read(k) {
                out.push(Setting {
                    name: k.to_string(),
                    key: names::key(k),
                    reading: r,
                    context: String::new(),
                    line,
                    value: value::from_text(default),
                    default: None,
                    library: None,
                    default_source: None,
                });
            }
        }
        rest = &after[close..];
    }
}

/// The keys of the names `text` increments or decrements ([`counters`]).
pub(crate) fn counters_in(text: &str, syntax: &Syntax) -> HashSet<String> {
    counters(&code_tokens(text, syntax))
}

/// The name a line of code assigns to (`retries = 0`, `let mut retries = 0`,
/// `self.retries: int = 0`), by its last part.
pub(crate) fn assigned_name(line: &str) -> Option<String> {
    let t: Vec<Token> = tokenize(line.as_bytes());
    let skip = t.iter().take_while(|x| matches!(&x.tok, Tok::Name(n) if matches!(n.as_str(), "let" | "mut" | "var" | "const" | "val" | "local" | "my"))).count();
    match (t.get(skip).map(|x| &x.tok), t.get(skip + 1).map(|x| &x.tok)) {
        (Some(Tok::Name(n)), Some(Tok::Punct("=" | ":=" | ":"))) => Some(last_part(n).to_string()),
        _ => None,
    }
}

/// Locals first bound to a field of the same name (`timeout :=
/// time.Duration(h.HealthChecks.Active.Timeout)`, `let retries =
/// cfg.retries`), by the local's key: the field's holder
/// (`h.HealthChecks.Active`), which says what a later `timeout = 5s` sets.
fn field_copies(t: &[Token]) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for i in 0..t.len() {
        let Tok::Name(n) = &t[i].tok else { continue };
        if n.contains('.') {
            continue;
        }
        let Some((a, b)) = entry_value(t, i) else { continue };
        let key = names::key(n);
        let holder = t[a..b].iter().find_map(|x| match &x.tok {
            Tok::Name(p) => {
                p.rsplit_once('.').filter(|(_, l)| names::key(l) == key).map(|(q, _)| q.to_string())
            }
            _ => None,
        });
        if let Some(h) = holder {
            out.entry(key).or_insert(h);
        }
    }
    out
}

/// The limits written where a counter of attempts is compared with a
/// number: `if retry >= 5 { return Err(..) }`, `for tries < 3`, `while
/// attempt <= 4:`, `3 > retries`. Such a comparison is the retry's bound
/// when no setting names it, so it is a setting too, keyed by the counter
/// (`retry_bound`) and read as the attempts it allows: `< n` and `>= n`
/// allow n, `<= n` and `> n` allow n + 1, so `retries < 3` -> `retries <= 3`
/// is a raise by one. Only names the file counts with (`retry += 1`,
/// `tries++`, `tries+1`, `for retry in 0..`) whose words say attempts, and only a bare number on the other
/// side: `attempt < max_attempts` is the named setting's, read where it is
/// given.
fn counter_bounds(t: &[Token], counters: &HashSet<String>) -> Vec<Setting> {
    const ATTEMPT_WORDS: &[&str] =
        &["retry", "retries", "retried", "attempt", "attempts", "tries", "try", "reconnect", "reconnects"];
    let arithmetic = |x: Option<&Token>| {
        matches!(x.map(|x| &x.tok), Some(Tok::Punct("+" | "-" | "*" | "/" | "%" | "**" | "." | "<<" | ">>")))
    };
    // Counted also: a loop's own variable (`for retry in 0..`) and a name
    // passed on plus one (`commit(ctx, tries+1)`, recursion's count).
    let mut counted = counters.clone();
    for i in 0..t.len().saturating_sub(2) {
        match (&t[i].tok, &t[i + 1].tok, &t[i + 2].tok) {
            (Tok::Name(p), Tok::Punct("+"), Tok::Num(n, _)) if *n == 1.0 => {
                counted.insert(names::key(last_part(p)));
            }
            (Tok::Name(f), Tok::Name(p), Tok::Name(k)) if f == "for" && k == "in" => {
                counted.insert(names::key(last_part(p)));
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for i in 0..t.len().saturating_sub(2) {
        // `name op n` or `n op name`, the operator read as `name op n`.
        let (name, op, n) = match (&t[i].tok, &t[i + 1].tok, &t[i + 2].tok) {
            (Tok::Name(p), Tok::Punct(op @ ("<" | "<=" | ">" | ">=")), Tok::Num(n, _))
                if !arithmetic(t.get(i + 3)) =>
            {
                (p, *op, *n)
            }
            (Tok::Num(n, _), Tok::Punct(op), Tok::Name(p))
                if matches!(*op, "<" | "<=" | ">" | ">=")
                    && !arithmetic(i.checked_sub(1).map(|j| &t[j]))
                    && !matches!(t.get(i + 3).map(|x| &x.tok), Some(Tok::Punct("(" | "."))) =>
            {
                let mirrored = match *op {
                    "<" => ">",
                    "<=" => ">=",
                    ">" => "<",
                    _ => "<=",
                };
                (p, mirrored, *n)
            }
            _ => continue,
        };
        let last = last_part(name);
        let w = names::words(last);
        if !counted.contains(&names::key(last)) || !w.iter().any(|x| ATTEMPT_WORDS.contains(&x.as_str())) {
            continue;
        }
        // Against 0 or 1 a counter asks "is this a retry?", not "how many".
        if n <= 1.0 {
            continue;
        }
        if !bounds_the_retry(t, i, op, &names::key(last)) {
            continue;
        }
        let allowed = if matches!(op, "<=" | ">") { n + 1.0 } else { n };
        let says_retry = w
            .iter()
            .any(|x| matches!(x.as_str(), "retry" | "retries" | "retried" | "reconnect" | "reconnects"));
        out.push(Setting {
            name: format!("{last} {op} N"),
            key: format!("{}_bound", names::key(last)),
            reading: names::Reading { knob: names::Knob::Count, says_retry },
            context: String::new(),
            line: t[i].line,
            value: Value::Num { v: allowed, seconds: false },
            default: None,
            library: None,
            default_source: None,
        });
    }
    out
}

/// Whether the comparison at `i` is the retry's limit, not a threshold
/// for something else (`if retries >= 4 { wait longer }`): a loop's own
/// condition (`while attempt < 3`, `for tries := 0; tries < 3; tries++`),
/// or an `if` whose branch gives up (`>=`, `>`: `return`, `break`,
/// `raise`, `throw`, `Err`) or goes round again (`<`, `<=`: `continue`, a
/// wait, the counter counted on, `f(tries+1)`).
fn bounds_the_retry(t: &[Token], i: usize, op: &str, counter: &str) -> bool {
    // The statement's first word.
    let start = t[..i]
        .iter()
        .rposition(|x| matches!(x.tok, Tok::Newline | Tok::Punct(";" | "{")))
        .map_or(0, |p| p + 1);
    let first = t[start..i].iter().find_map(|x| match &x.tok {
        Tok::Name(n) if n != "else" && n != "}" => Some(n.as_str()),
        _ => None,
    });
    if matches!(first, Some("while" | "for" | "until" | "loop" | "do")) {
        return true;
    }
    if !matches!(first, Some("if" | "elif" | "unless" | "elsif")) {
        return false;
    }
    // The condition ends at `{` (or a line break) outside brackets.
    let mut depth = 0i32;
    let mut j = i;
    while j < t.len() {
        match &t[j].tok {
            Tok::Punct("(" | "[") => depth += 1,
            Tok::Punct(")" | "]") => depth -= 1,
            Tok::Punct("{") | Tok::Newline if depth <= 0 => break,
            _ => {}
        }
        j += 1;
    }
    // The branch: to its closing brace, or the next lines.
    let braced = matches!(t.get(j).map(|x| &x.tok), Some(Tok::Punct("{")));
    let mut depth = 0i32;
    let mut lines = 0;
    let mut body: Vec<&Token> = Vec::new();
    for x in t.iter().skip(j + 1).take(200) {
        match &x.tok {
            Tok::Punct("{") => depth += 1,
            Tok::Punct("}") if braced && depth == 0 => break,
            Tok::Punct("}") => depth -= 1,
            Tok::Newline if !braced => {
                lines += 1;
                if lines > 4 {
                    break;
                }
            }
            _ => {}
        }
        body.push(x);
    }
    let has_name =
        |pred: &dyn Fn(&str) -> bool| body.iter().any(|x| matches!(&x.tok, Tok::Name(n) if pred(n)));
    if matches!(op, ">=" | ">") {
        // Gives up: breaks out, raises, or returns a failure (`return
        // Err(..)`, `return err`, `return nil, fmt.Errorf(..)`, `return
        // False`); `return Ok(())` defers, it does not give up.
        let returns_failure = body.iter().enumerate().any(|(k, x)| {
            matches!(&x.tok, Tok::Name(n) if n == "return")
                && body[k + 1..].iter().take(4).any(|y| match &y.tok {
                    Tok::Name(m) => {
                        m.to_ascii_lowercase().contains("err")
                            || m.to_ascii_lowercase().contains("exception")
                            || matches!(m.as_str(), "false" | "False" | "nil" | "None" | "null" | "undefined")
                    }
                    _ => false,
                })
        });
        returns_failure
            || has_name(&|n| {
                matches!(
                    n,
                    "break" | "raise" | "throw" | "Err" | "bail" | "panic" | "fail" | "abort" | "exit"
                ) || n.starts_with("bail")
            })
    } else {
        has_name(&|n| {
            let w = names::words(n);
            n == "continue"
                || names::key(last_part(n)) == counter
                || w.iter().any(|x| {
                    matches!(x.as_str(), "sleep" | "wait" | "delay" | "backoff" | "retry" | "timeout")
                })
        })
    }
}

/// Names incremented or decremented anywhere in the file: counters of
/// attempts made, not settings.
fn counters(t: &[Token]) -> HashSet<String> {
    let mut out = HashSet::new();
    for (i, tok) in t.iter().enumerate() {
        let Tok::Name(n) = &tok.tok else { continue };
        let next = t.get(i + 1).map(|x| &x.tok);
        let prev = i.checked_sub(1).map(|p| &t[p].tok);
        if matches!(next, Some(Tok::Punct("+=" | "-=" | "++" | "--")))
            || matches!(prev, Some(Tok::Punct("++" | "--")))
        {
            out.insert(names::key(last_part(n)));
        }
        // `attempt = attempt + 1`
        if matches!(next, Some(Tok::Punct("="))) {
            if let (Some(Tok::Name(m)), Some(Tok::Punct("+" | "-"))) =
                (t.get(i + 2).map(|x| &x.tok), t.get(i + 3).map(|x| &x.tok))
            {
                if m == n {
                    out.insert(names::key(last_part(n)));
                } else if matches!(t.get(i + 4).map(|x| &x.tok), Some(Tok::Num(one, _)) if *one == 1.0) {
                    // `next_attempt = attempt + 1`, passed to the next
                    // call of a function that retries by calling itself:
                    // `attempt` counts.
                    out.insert(names::key(last_part(m)));
                }
            }
        }
    }
    out
}

const RETRY_CODE_WORDS: &[&str] = &[
    "retry",
    "retries",
    "retrying",
    "retryable",
    "backoff",
    "backon",
    "tenacity",
    "resilience4j",
    "polly",
    "retriable",
    "retrier",
    "failsafe",
];

/// Whether one identifier of code says retry ([`RETRY_CODE_WORDS`]).
pub(crate) fn says_retry_in_code(name: &str) -> bool {
    names::words(name).iter().any(|w| RETRY_CODE_WORDS.contains(&w.as_str()))
}

fn names_a_retry(t: &[Token]) -> bool {
    let says = |n: &str| names::words(n).iter().any(|w| RETRY_CODE_WORDS.contains(&w.as_str()));
    t.iter().enumerate().any(|(i, x)| match &x.tok {
        Tok::Name(n) => says(n),
        // A quoted key is a name too, in a settings dictionary written as
        // code (`"retry_params": {...}`, `{"retryPolicy": ...}`).
        Tok::Str(k) => matches!(t.get(i + 1).map(|y| &y.tok), Some(Tok::Punct(":"))) && says(k),
        _ => false,
    })
}

/// `NAME = literal` for every name: what other expressions refer to.
fn literal_bindings(t: &[Token], outer: &Bindings) -> Bindings {
    let mut b = Bindings::default();
    // What an expression sees: the file's own bindings so far, then the
    // change-wide ones. Kept as one table (a file's first binding of a name
    // wins over the outer one) instead of rebuilt per binding.
    let mut scope = outer.clone();
    for _round in 0..2 {
        for i in 0..t.len() {
            let Tok::Name(p) = &t[i].tok else { continue };
            let Some((a, c)) = entry_value(t, i) else { continue };
            let toks = without_newlines(&t[a..c]);
            let v = value::eval(&toks, &scope);
            if v.is_known() {
                // `other.retries = 3` binds the other value's field, not
                // the file's `retries`.
                let owned =
                    p.rsplit_once('.').is_none_or(|(q, l)| value::qualifier_binds_the_last_part(q, l));
                let names = if owned { vec![p.clone(), last_part(p).to_string()] } else { vec![p.clone()] };
                for name in names {
                    if !b.by_name.contains_key(&name) {
                        b.by_name.insert(name.clone(), v.clone());
                        scope.by_name.insert(name, v.clone());
                    }
                }
            }
        }
    }
    b
}

fn yaml(text: &str) -> Extracted {
    let masked = mask(text, &crate::analyze::rules::lang::Language::Yaml.syntax(), View::Text);
    let masked = String::from_utf8_lossy(&masked).into_owned();
    let mut out = Extracted::default();
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut block_scalar_indent: Option<usize> = None;
    for (n, raw) in masked.lines().enumerate() {
        let line = n as u32 + 1;
        let trimmed = raw.trim_start();
        if trimmed.is_empty() || trimmed.starts_with("---") {
            continue;
        }
        let mut indent = raw.len() - trimmed.len();
        if let Some(bi) = block_scalar_indent {
            if indent > bi {
                continue;
            }
            block_scalar_indent = None;
        }
        let mut content = trimmed;
        while let Some(rest) = content.strip_prefix("- ") {
            indent += 2;
            content = rest.trim_start();
        }
        let Some((k, v)) = split_yaml_pair(content) else { continue };
        while stack.last().is_some_and(|(i, _)| *i >= indent) {
            stack.pop();
        }
        let v = v.trim();
        if v.is_empty() || v.starts_with('&') {
            stack.push((indent, k.to_string()));
            continue;
        }
        if v.starts_with('|') || v.starts_with('>') {
            block_scalar_indent = Some(indent);
            continue;
        }
        let owner = stack.last().map(|(_, k)| k.clone()).unwrap_or_default();
        if v.starts_with('{') {
            // A flow map: its entries are read as code under this key.
            let toks = tokenize(v.as_bytes());
            let inner = code_entries(&toks, k, line);
            out.settings.extend(inner);
            continue;
        }
        let scalar = v.trim_matches(|c| c == '"' || c == '\'');
        placeholders(scalar, line, &mut out.settings);
        if let Some((key, reading)) = qualify(k, &owner) {
            let value = unit_from_name(value::from_text(scalar), k);
            out.settings.push(Setting {
                name: k.to_string(),
                key,
                reading,
                context: names::key(&owner),
                line,
                value,
                default: None,
                library: None,
                default_source: None,
            });
        }
    }
    out
}

/// `key: value` of one YAML line (key plain or quoted).
fn split_yaml_pair(s: &str) -> Option<(&str, &str)> {
    let (k, v) = if let Some(q) = s.strip_prefix('"').or_else(|| s.strip_prefix('\'')) {
        let end = q.find(['"', '\''])?;
        let rest = q[end + 1..].trim_start().strip_prefix(':')?;
        (&q[..end], rest)
    } else {
        let idx = s.find(": ").or_else(|| s.ends_with(':').then(|| s.len() - 1))?;
        (&s[..idx], &s[idx + 1..])
    };
    let k = k.trim();
    (!k.is_empty() && !k.contains(' ')).then_some((k, v))
}

/// `{ max: 5, jitter: true }` entries under `owner`.
fn code_entries(t: &[Token], owner: &str, line: u32) -> Vec<Setting> {
    let mut out = Vec::new();
    for i in 0..t.len() {
        let name = match &t[i].tok {
            Tok::Name(n) => last_part(n).to_string(),
            Tok::Str(s) => s.clone(),
            _ => continue,
        };
        if let Some((a, b)) = entry_value(t, i) {
            push(&mut out, &name, owner, line, &t[a..b], &Bindings::default(), &HashSet::new());
        }
    }
    out
}

fn sections(text: &str) -> Extracted {
    let mut out = Extracted::default();
    let mut section = String::new();
    for (n, raw) in text.lines().enumerate() {
        let line = n as u32 + 1;
        let s = raw.trim();
        if s.starts_with('#') || s.starts_with(';') || s.is_empty() {
            continue;
        }
        if s.starts_with('[') {
            section = s.trim_matches(|c| c == '[' || c == ']').trim().to_string();
            continue;
        }
        let Some(idx) = s.find(['=', ':']) else { continue };
        let k = s[..idx].trim().trim_matches('"');
        let v = strip_inline_comment(s[idx + 1..].trim());
        let owner = section.rsplit('.').next().unwrap_or(&section).to_string();
        let (name, owner) = match k.rsplit_once('.') {
            Some((holder, leaf)) => (leaf, holder.to_string()),
            None => (k, owner),
        };
        pair_setting(&mut out, name, &owner, line, v);
    }
    out
}

fn strip_inline_comment(v: &str) -> &str {
    if v.starts_with('"') || v.starts_with('\'') {
        return v;
    }
    v.split(" #").next().unwrap_or(v).split(" ;").next().unwrap_or(v).trim()
}

fn pair_setting(out: &mut Extracted, name: &str, owner: &str, line: u32, v: &str) {
    let scalar = v.trim().trim_matches(|c| c == '"' || c == '\'');
    placeholders(scalar, line, &mut out.settings);
    if let Some((key, reading)) = qualify(name, owner) {
        let value = unit_from_name(value::from_text(scalar), name);
        out.settings.push(Setting {
            name: name.to_string(),
            key,
            reading,
            context: names::key(owner),
            line,
            value,
            default: None,
            library: None,
            default_source: None,
        });
    }
}

fn pairs(text: &str) -> Extracted {
    let mut out = Extracted::default();
    for (n, raw) in text.lines().enumerate() {
        let line = n as u32 + 1;
        let mut s = raw.trim();
        if s.starts_with('#') || s.starts_with('!') || s.is_empty() {
            continue;
        }
        for prefix in ["export ", "ENV ", "ARG ", "set "] {
            if let Some(r) = s.strip_prefix(prefix) {
                s = r.trim();
            }
        }
        let idx = match s.find(['=', ':']) {
            Some(i) => i,
            // `ENV KEY value` / `key value` (properties).
            None => match s.find(' ') {
                Some(i) => i,
                None => continue,
            },
        };
        let k = s[..idx].trim();
        if k.contains(' ') {
            continue;
        }
        let v = strip_inline_comment(s[idx + 1..].trim());
        pair_setting(&mut out, k, "", line, v);
    }
    out
}

fn nginx(text: &str) -> Extracted {
    let mut out = Extracted::default();
    for (n, raw) in text.lines().enumerate() {
        let line = n as u32 + 1;
        let s = raw.split('#').next().unwrap_or("").trim();
        let Some(body) = s.strip_suffix(';') else { continue };
        let mut parts = body.split_whitespace();
        let (Some(k), Some(v)) = (parts.next(), parts.next()) else { continue };
        pair_setting(&mut out, k, "", line, v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::names::Knob;
    use super::*;
    use crate::analyze::rules::lang::Language;

    fn got(text: &str, lang: Language) -> Vec<(String, Knob, String, u32)> {
        let d = super::super::dialect_of_language(lang);
        extract(text, d, &Bindings::default())
            .settings
            .into_iter()
            .map(|s| (s.key, s.reading.knob, s.value.show(), s.line))
            .collect()
    }

    #[test]
    fn code_forms_in_several_languages() {
        let py = "MAX_RETRIES = 3\nclient = Client(max_retries=5)\nRetry(total=4)\n";
        assert_eq!(
            got(py, Language::Python),
            [
                ("max_retries".into(), Knob::Count, "3".into(), 1),
                ("max_retries".into(), Knob::Count, "5".into(), 2),
                ("urllib3 Retry.total".into(), Knob::Count, "4".into(), 3),
            ]
        );
        let ts = "const opts = { ...DEFAULTS, retries: 10 };\nclient.setMaxRetries(4)\n";
        assert_eq!(
            got(ts, Language::TypeScript),
            [
                ("retries".into(), Knob::Count, "10".into(), 1),
                ("max_retries".into(), Knob::Count, "4".into(), 2)
            ]
        );
        let go = "b := backoff.NewExponentialBackOff(backoff.WithMaxTries(10))\nconst MaxRetries = 3\n";
        assert_eq!(
            got(go, Language::Go),
            [
                ("max_tries".into(), Knob::Count, "10".into(), 1),
                ("max_retries".into(), Knob::Count, "3".into(), 2)
            ]
        );
        let java = "@Retryable(maxAttemptsExpression = \"${retry.max:10}\")\nprivate static final int MAX_RETRIES = 2;\n";
        let j = got(java, Language::Java);
        assert!(j.contains(&("retry_max".into(), Knob::Count, "10".into(), 1)), "{j:?}");
        assert!(j.contains(&("max_retries".into(), Knob::Count, "2".into(), 2)), "{j:?}");
    }

    /// A bare `Maximum` in a struct of a package named for retries
    /// (`retry.Config{Maximum: 5}`) is that retry's count; in a config of
    /// another package it says nothing.
    #[test]
    fn a_package_named_for_retries_qualifies_a_bare_field() {
        let go = "err := retry.Do(f, &retry.Config{Maximum: 5, Interval: 1 * time.Second})\n";
        assert_eq!(got(go, Language::Go), [("retry_config_maximum".into(), Knob::Count, "5".into(), 1)]);
        let other = "c := &pool.Config{Maximum: 5}\n";
        assert_eq!(got(other, Language::Go), []);
    }

    /// A counter of attempts compared with a number is the retry's limit,
    /// in every language and either way round; `<=` and `>` allow one more.
    #[test]
    fn a_counter_compared_with_a_number_is_a_limit() {
        let bounds = |text: &str, d: Dialect| -> Vec<(String, String)> {
            extract(text, d, &Bindings::default())
                .settings
                .into_iter()
                .filter(|s| s.key.ends_with("_bound"))
                .map(|s| (s.key, s.value.show()))
                .collect()
        };
        let code = |l: Language| super::super::dialect_of_language(l);
        let rust = Dialect::Code(super::super::RUST, "rust");
        let cases: &[(&str, Dialect, &str, &str)] = &[
            (
                "let mut retry = 0;\nloop {\n    if retry >= 5 { return Err(e); }\n    retry += 1;\n}\n",
                rust,
                "retry_bound",
                "5",
            ),
            ("for retry in 0.. {\n    if retry > 8 { break; }\n}\n", rust, "retry_bound", "9"),
            (
                "func f(tries int) {\n\tif tries < 3 {\n\t\tf(tries+1)\n\t}\n}\n",
                code(Language::Go),
                "tries_bound",
                "3",
            ),
            (
                "attempt = 0\nwhile attempt <= 4:\n    attempt += 1\n",
                code(Language::Python),
                "attempt_bound",
                "5",
            ),
            (
                "let attempts = 0;\nwhile (3 > attempts) { attempts++; }\n",
                code(Language::JavaScript),
                "attempts_bound",
                "3",
            ),
            (
                "int retries = 0;\nwhile (retries < 10) { retries++; }\n",
                code(Language::Java),
                "retries_bound",
                "10",
            ),
            // Counted by passing `attempt + 1` to the next call.
            (
                "void Migrate(int attempt = 0) {\n    try { Run(); }\n    catch (SqlException e) {\n        if (e.Message.Contains(\"upgrade mode\") && attempt < 3) {\n            var nextAttempt = attempt + 1;\n            Thread.Sleep(20000);\n            Migrate(nextAttempt);\n        }\n    }\n}\n",
                code(Language::Java),
                "attempt_bound",
                "3",
            ),
        ];
        for (text, d, key, v) in cases {
            assert_eq!(bounds(text, *d), vec![(key.to_string(), v.to_string())], "{text}");
        }
        let not_limits: &[(&str, Dialect)] = &[
            // Against 0 or 1: "is this a retry?".
            (
                "attempt = 0\nwhile True:\n    if attempt > 0:\n        sleep(1)\n    attempt += 1\n",
                code(Language::Python),
            ),
            // A named setting's: read where it is given.
            ("let mut n = 0;\nwhile retry < MAX { retry += 1; }\n", rust),
            // Not a counter: nothing counts with it.
            ("if (maxRetries > 10) { throw new Error('too many'); }\n", code(Language::TypeScript)),
            // Not attempts: a page counter.
            ("page = 0\nwhile page < 50:\n    page += 1\n", code(Language::Python)),
            // Part of a sum.
            ("retries += 1\nif retries < 3 * base:\n    pass\n", code(Language::Python)),
            // A threshold for waiting longer, not the limit.
            ("loop {\n    if msg.num_retries >= 4 {\n        let d = backoff_for(msg.num_retries);\n        if early(d) {\n            return Ok(());\n        }\n    }\n    msg.num_retries += 1;\n}\n", rust),
        ];
        for (text, d) in not_limits {
            assert_eq!(bounds(text, *d), vec![], "{text}");
        }
    }

    #[test]
    fn counters_types_and_definitions_are_not_settings() {
        let py = "retries = 0\nwhile True:\n    retries += 1\nmax_retries: int\ndef max_retries(self):\n    pass\n";
        assert_eq!(got(py, Language::Python), []);
    }

    #[test]
    fn config_formats_keep_their_keys_and_lines() {
        let yaml = "retry:\n  max: 5\n  jitter: true\nhttp:\n  read_timeout: 30s\n";
        assert_eq!(
            got(yaml, Language::Yaml),
            [
                ("retry_max".into(), Knob::Count, "5".into(), 2),
                ("jitter".into(), Knob::Jitter, "true".into(), 3),
                ("read_timeout".into(), Knob::Timeout, "30s".into(), 5),
            ]
        );
        let props = "spring.retry.max-attempts=4\n";
        assert_eq!(
            got(props, Language::Properties),
            [("spring_retry_max_attempts".into(), Knob::Count, "4".into(), 1)]
        );
        let toml = "[client.retry]\nmax_attempts = 6\n";
        assert_eq!(got(toml, Language::Toml), [("max_attempts".into(), Knob::Count, "6".into(), 2)]);
        let env = "export UPSTREAM_MAX_RETRIES=7\n";
        assert_eq!(got(env, Language::Env), [("upstream_max_retries".into(), Knob::Count, "7".into(), 1)]);
    }
}
