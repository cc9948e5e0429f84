//! Values a rule compares that are not written as a plain number: a name
//! bound elsewhere in the file (`stop_after_attempt(MAX_ATTEMPTS)` with
//! `MAX_ATTEMPTS = 5` at module level, `maxRetries := uint64(10)`), a type
//! conversion, an environment read with a written default
//! (`int(os.environ.get("HTTP_RETRIES", "10"))`,
//! `parseInt(process.env.X || "10")`) or simple arithmetic.
//!
//! A value is computed from the masked text of the same side, so a change
//! of the constant is compared like a change of the literal, and reported on
//! the line that changed. A value that cannot be computed is
//! [`Value::Unknown`], with what stopped it: where the other side had a
//! number, the engine reports a blocking note rather than staying silent.
//!
//! This reads expressions, not a syntax tree: names are looked up by their
//! declarations in the file (`NAME = v`, `NAME := v`, `const NAME = v`,
//! `final int NAME = v`, `val NAME: Int = v`, `NAME Type = v` in a Go
//! `const (...)` block, a parameter default `name=v`), the nearest one above
//! the use first. Lookups are bounded in depth and length.

use super::side::SideText;

/// How many names deep a value is followed (`A = B`, `B = C`, ...).
const MAX_DEPTH: u32 = 4;
/// Longest expression read, in bytes.
const MAX_EXPR: usize = 240;
/// Most declarations of one name looked at in one file.
const MAX_DECLS: usize = 64;

/// A value computed from an expression.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    /// A number or a word (`None`, `nil`) as written, and the offset of the
    /// literal that decided it (its line is where a change of it shows).
    Known { text: String, at: usize },
    /// Cannot be computed; says what stopped it.
    Unknown(String),
}

/// The value of the expression starting at `start` in `text` (the side's
/// masked view), followed through declarations in the same text.
pub(super) fn value_at(text: &[u8], start: usize) -> (Value, String) {
    let end = expr_end(text, start);
    let written = String::from_utf8_lossy(&text[start..end.unwrap_or(start)]).trim().to_string();
    let Some(end) = end else {
        return (Value::Unknown("an expression too long to read".into()), written);
    };
    let mut ev = Eval { text, depth: 0, visiting: Vec::new() };
    let v = ev.expr_value(start, end);
    (v, written)
}

/// Where the expression starting at `start` ends: the first `,`, `;`, an
/// unopened closing bracket or a line break outside brackets and strings.
/// `None` when it runs longer than [`MAX_EXPR`].
fn expr_end(text: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0u32;
    let mut i = start;
    while i < text.len() {
        if i - start > MAX_EXPR {
            return None;
        }
        match text[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth == 0 => return Some(i),
            b')' | b']' | b'}' => depth -= 1,
            b',' | b';' | b'\n' if depth == 0 => return Some(i),
            q @ (b'"' | b'\'' | b'`') => {
                let close = text[i + 1..].iter().position(|&c| c == q || c == b'\n')?;
                i += close + 1;
            }
            _ => {}
        }
        i += 1;
    }
    Some(text.len())
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(usize, usize),
    Str(usize, usize),
    Name(usize, usize),
    Punct(&'static str),
}

fn tokens(text: &[u8], from: usize, to: usize) -> Option<Vec<Tok>> {
    let mut out = Vec::new();
    let mut i = from;
    const PUNCT: &[&str] = &["||", "??", "(", ")", "[", "]", ",", "*", "/", "+", "-", "="];
    while i < to {
        let c = text[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || (c == b'.' && text.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let s = i;
            while i < to && (text[i].is_ascii_alphanumeric() || text[i] == b'.' || text[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Num(s, i));
        } else if matches!(c, b'"' | b'\'' | b'`') {
            let close = text[i + 1..to].iter().position(|&q| q == c)?;
            out.push(Tok::Str(i + 1, i + 1 + close));
            i += close + 2;
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            let s = i;
            while i < to && (text[i].is_ascii_alphanumeric() || matches!(text[i], b'_' | b'$' | b'.')) {
                i += 1;
            }
            let name = &text[s..i];
            match name {
                b"or" => out.push(Tok::Punct("||")),
                _ => out.push(Tok::Name(s, i)),
            }
        } else {
            let p = PUNCT.iter().find(|p| text[i..to].starts_with(p.as_bytes()))?;
            out.push(Tok::Punct(p));
            i += p.len();
        }
    }
    Some(out)
}

/// Calls that convert their first argument without changing its value.
const CONVERSIONS: &[&str] = &[
    "int",
    "float",
    "Decimal",
    "uint",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "int8",
    "int16",
    "int32",
    "int64",
    "float32",
    "float64",
    "Duration",
    "Number",
    "parseInt",
    "parseFloat",
    "BigInt",
    "parseLong",
    "parseDouble",
    "valueOf",
    "toInt",
    "toLong",
    "Int",
    "Long",
    "Integer",
    "atoi",
    "to_i",
    "to_f",
];

/// Calls that read a setting and take a default as their last argument
/// (`os.environ.get("X", "10")`, `os.getenv`, `ENV.fetch`,
/// `System.getProperty`, `Integer.getInteger`, `getOrDefault`).
const GETTERS: &[&str] = &[
    "get",
    "getenv",
    "getEnv",
    "fetch",
    "getOrDefault",
    "getInteger",
    "getLong",
    "getProperty",
    "env",
    "getint",
    "getfloat",
    "LookupEnv",
    "Getenv",
];

/// A partial value while evaluating.
#[derive(Debug, Clone)]
enum V {
    Num {
        v: f64,
        text: String,
        at: usize,
    },
    Word {
        text: String,
        at: usize,
    },
    Str {
        text: String,
        at: usize,
    },
    /// Read from the environment or a settings store with no written default.
    External(String),
    Unknown(String),
}

struct Eval<'t> {
    text: &'t [u8],
    depth: u32,
    visiting: Vec<Vec<u8>>,
}

impl Eval<'_> {
    fn expr_value(&mut self, from: usize, to: usize) -> Value {
        match self.expr_v(from, to) {
            V::Num { text, at, .. } | V::Word { text, at } => Value::Known { text, at },
            V::Str { text, at } => match number_of(&text) {
                Some(_) => Value::Known { text, at },
                None => Value::Unknown(format!("the string \"{text}\"")),
            },
            V::External(what) => Value::Unknown(format!("{what}, with no written default")),
            V::Unknown(what) => Value::Unknown(what),
        }
    }

    fn expr_v(&mut self, from: usize, to: usize) -> V {
        let Some(toks) = tokens(self.text, from, to) else {
            return V::Unknown("an expression retrygate cannot read".into());
        };
        let mut p = 0;
        let v = self.or(&toks, &mut p);
        if p != toks.len() {
            return V::Unknown(format!("`{}`", String::from_utf8_lossy(&self.text[from..to]).trim()));
        }
        v
    }

    fn or(&mut self, t: &[Tok], p: &mut usize) -> V {
        let mut left = self.sum(t, p);
        while matches!(t.get(*p), Some(Tok::Punct("||" | "??"))) {
            *p += 1;
            let right = self.sum(t, p);
            // `env || "10"`, `os.getenv("X") or 10`: the written default
            // is what runs wherever the setting is not set.
            let unset = match &left {
                V::External(_) => true,
                V::Word { text, .. } => matches!(text.as_str(), "None" | "nil" | "null" | "undefined"),
                V::Num { v, .. } => *v == 0.0,
                _ => false,
            };
            if unset {
                left = right;
            }
        }
        left
    }

    fn sum(&mut self, t: &[Tok], p: &mut usize) -> V {
        let mut left = self.product(t, p);
        while let Some(Tok::Punct(op @ ("+" | "-"))) = t.get(*p) {
            *p += 1;
            let right = self.product(t, p);
            left = arith(left, right, op);
        }
        left
    }

    fn product(&mut self, t: &[Tok], p: &mut usize) -> V {
        let mut left = self.unary(t, p);
        while let Some(Tok::Punct(op @ ("*" | "/"))) = t.get(*p) {
            *p += 1;
            let right = self.unary(t, p);
            left = arith(left, right, op);
        }
        left
    }

    fn unary(&mut self, t: &[Tok], p: &mut usize) -> V {
        if matches!(t.get(*p), Some(Tok::Punct("-"))) {
            *p += 1;
            return arith(V::Num { v: 0.0, text: "0".into(), at: 0 }, self.unary(t, p), "-");
        }
        self.postfix(t, p)
    }

    fn args(&mut self, t: &[Tok], p: &mut usize, close: &str) -> Option<Vec<V>> {
        let mut out = Vec::new();
        if matches!(t.get(*p), Some(Tok::Punct(c)) if *c == close) {
            *p += 1;
            return Some(out);
        }
        loop {
            // A keyword argument (`fallback=3`) is read by its value.
            if let (Some(Tok::Name(..)), Some(Tok::Punct("="))) = (t.get(*p), t.get(*p + 1)) {
                *p += 2;
            }
            out.push(self.or(t, p));
            match t.get(*p) {
                Some(Tok::Punct(",")) => *p += 1,
                Some(Tok::Punct(c)) if *c == close => {
                    *p += 1;
                    return Some(out);
                }
                _ => return None,
            }
        }
    }

    fn postfix(&mut self, t: &[Tok], p: &mut usize) -> V {
        let Some(tok) = t.get(*p).cloned() else { return V::Unknown("an empty expression".into()) };
        *p += 1;
        match tok {
            Tok::Num(s, e) => {
                let text = String::from_utf8_lossy(&self.text[s..e]).into_owned();
                match number_of(&text) {
                    Some(v) => V::Num { v, text, at: s },
                    None => V::Unknown(format!("`{text}`")),
                }
            }
            Tok::Str(s, e) => V::Str { text: String::from_utf8_lossy(&self.text[s..e]).into_owned(), at: s },
            Tok::Punct("(") => {
                let Some(mut inner) = self.args(t, p, ")") else { return V::Unknown("a bracket".into()) };
                if inner.len() == 1 {
                    inner.remove(0)
                } else {
                    V::Unknown("a tuple".into())
                }
            }
            Tok::Punct(other) => V::Unknown(format!("`{other}`")),
            Tok::Name(s, e) => {
                let name = &self.text[s..e];
                let name_text = String::from_utf8_lossy(name).into_owned();
                let last = name.rsplit(|&c| c == b'.').next().unwrap_or(name);
                match t.get(*p) {
                    Some(Tok::Punct("(")) => {
                        *p += 1;
                        let Some(args) = self.args(t, p, ")") else {
                            return V::Unknown(format!("a call of `{name_text}`"));
                        };
                        self.call(&name_text, last, args)
                    }
                    Some(Tok::Punct("[")) => {
                        *p += 1;
                        let _ = self.args(t, p, "]");
                        if is_environment(&name_text) {
                            V::External(format!("`{name_text}[...]` (the environment)"))
                        } else {
                            V::Unknown(format!("an element of `{name_text}`"))
                        }
                    }
                    _ => self.name(&name_text, last, s),
                }
            }
        }
    }

    fn call(&mut self, name: &str, last: &[u8], mut args: Vec<V>) -> V {
        let last_text = String::from_utf8_lossy(last);
        if CONVERSIONS.contains(&last_text.as_ref()) && !args.is_empty() {
            return match args.remove(0) {
                V::Str { text, at } => match number_of(&text) {
                    Some(v) => V::Num { v, text, at },
                    None => V::Unknown(format!("`{name}(\"{text}\")`")),
                },
                v => v,
            };
        }
        if GETTERS.contains(&last_text.as_ref()) {
            if args.len() >= 2 {
                return args.pop().unwrap_or(V::Unknown(String::new()));
            }
            return V::External(format!("`{name}(...)`"));
        }
        V::Unknown(format!("the result of `{name}(...)`"))
    }

    fn name(&mut self, name: &str, last: &[u8], at: usize) -> V {
        if matches!(
            name,
            "None"
                | "nil"
                | "null"
                | "undefined"
                | "Infinity"
                | "math.inf"
                | "True"
                | "False"
                | "true"
                | "false"
        ) {
            return V::Word { text: name.to_string(), at };
        }
        if is_environment(name) && name.contains('.') && !name.ends_with("env") {
            return V::External(format!("`{name}` (the environment)"));
        }
        if self.depth >= MAX_DEPTH || self.visiting.iter().any(|v| v == last) {
            return V::Unknown(format!("`{name}`"));
        }
        let Some(value_at) = declaration(self.text, last, at) else {
            return V::Unknown(format!("`{name}`, whose value is not set in this file"));
        };
        // The nearest declaration decides, readable or not: an older one
        // further away is not what runs.
        let Some(to) = expr_end(self.text, value_at) else {
            return V::Unknown(format!("`{name}`, set to an expression too long to read"));
        };
        let from = value_at;
        self.depth += 1;
        self.visiting.push(last.to_vec());
        let v = self.expr_v(from, to);
        self.visiting.pop();
        self.depth -= 1;
        v
    }
}

fn arith(a: V, b: V, op: &str) -> V {
    match (a, b) {
        (V::Num { v: x, at, text: tx }, V::Num { v: y, text: ty, .. }) => {
            let v = match op {
                "+" => x + y,
                "-" => x - y,
                "*" => x * y,
                _ if y != 0.0 => x / y,
                _ => return V::Unknown("a division by zero".into()),
            };
            let text = if tx == "0" && op == "-" { format!("-{ty}") } else { format_num(v) };
            V::Num { v, text, at }
        }
        (V::Unknown(w), _) | (_, V::Unknown(w)) => V::Unknown(w),
        (V::External(w), _) | (_, V::External(w)) => V::External(w),
        _ => V::Unknown(format!("arithmetic with `{op}` on a non-number")),
    }
}

fn format_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// A number as written in code: digits with `_` separators, a decimal
/// point, an optional type suffix (`10L`, `2.5f`, `10u`).
pub(super) fn number_of(text: &str) -> Option<f64> {
    let t = text.trim().replace('_', "");
    let t = t.trim_end_matches(['L', 'l', 'f', 'F', 'd', 'D', 'u', 'U']);
    if t.is_empty() || !t.bytes().all(|c| c.is_ascii_digit() || c == b'.') {
        return None;
    }
    t.parse().ok()
}

fn is_environment(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with("process.env")
        || lower.starts_with("os.environ")
        || lower.starts_with("import.meta.env")
        || lower == "env"
        || lower == "environ"
}

/// Where the value of the declaration of `name` nearest above `use_at`
/// (else the first below it) starts: `name` as a whole word, not after `.`,
/// then an optional type (`: int`, ` uint64`), then `=` or `:=` (not `==`).
/// The declaration whose value holds the use itself (`n = n + 1`) is not it.
fn declaration(text: &[u8], name: &[u8], use_at: usize) -> Option<usize> {
    let finder = memchr::memmem::Finder::new(name);
    let mut best: Option<(usize, usize)> = None;
    let mut seen = 0;
    for at in finder.find_iter(text) {
        seen += 1;
        if seen > MAX_DECLS * 8 {
            break;
        }
        let before = at.checked_sub(1).map(|i| text[i]);
        // `self.retries = 3` (`this.`, `cls.`) sets the attribute a method reads.
        let own_attribute = before == Some(b'.')
            && [&b"self"[..], b"this", b"cls"].iter().any(|o| {
                text[..at - 1].ends_with(o)
                    && !text[..at - 1 - o.len()]
                        .last()
                        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'.')
            });
        if !own_attribute
            && before.is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.'))
        {
            continue;
        }
        let end = at + name.len();
        if text.get(end).is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$') {
            continue;
        }
        let Some(value_at) = assignment_value(text, end) else { continue };
        let holds_use = use_at >= value_at
            && match expr_end(text, value_at) {
                Some(e) => use_at < e,
                None => use_at - value_at <= MAX_EXPR,
            };
        if holds_use {
            continue;
        }
        let key = if at <= use_at { use_at - at } else { usize::MAX / 2 + (at - use_at) };
        if best.is_none_or(|(k, _)| key < k) {
            best = Some((key, value_at));
        }
    }
    best.map(|(_, a)| a)
}

/// After a name ending at `i`: skips a type annotation and returns where the
/// assigned value starts, or `None` when no assignment follows.
fn assignment_value(text: &[u8], mut i: usize) -> Option<usize> {
    let skip_ws = |text: &[u8], mut i: usize| {
        while i < text.len() && (text[i] == b' ' || text[i] == b'\t') {
            i += 1;
        }
        i
    };
    i = skip_ws(text, i);
    // `: int =` (Python, Kotlin, TypeScript) or ` uint64 =` (Go).
    if text.get(i) == Some(&b':') && text.get(i + 1) != Some(&b'=') {
        i = skip_ws(text, i + 1);
        let t = i;
        while i < text.len()
            && (text[i].is_ascii_alphanumeric() || matches!(text[i], b'_' | b'.' | b'[' | b']' | b'|' | b' '))
        {
            if text[i] == b' ' && text.get(skip_ws(text, i)).is_some_and(|&c| c == b'=') {
                break;
            }
            i += 1;
        }
        if i == t {
            return None;
        }
        i = skip_ws(text, i);
    } else if text.get(i).is_some_and(|c| c.is_ascii_alphabetic()) {
        let t = i;
        while i < text.len() && (text[i].is_ascii_alphanumeric() || matches!(text[i], b'_' | b'.')) {
            i += 1;
        }
        if i == t {
            return None;
        }
        i = skip_ws(text, i);
    }
    let eq = match (text.get(i), text.get(i + 1)) {
        (Some(b':'), Some(b'=')) => i + 2,
        (Some(b'='), Some(b'=')) => return None,
        (Some(b'='), _) => i + 1,
        _ => return None,
    };
    Some(skip_ws(text, eq))
}

/// Most changed declarations whose uses are searched in one file.
const MAX_CHANGED_NAMES: usize = 32;
/// Most uses of one name searched.
const MAX_USES: usize = 256;

/// The names declared with a value on the lines in `changed` (1-based
/// inclusive ranges) of `side`: `NAME = v`, `const NAME = v`,
/// `maxRetries := v`, `final int NAME = v`, `NAME uint64 = v`.
pub(super) fn changed_declarations(side: &SideText, changed: &[(u32, u32)], out: &mut Vec<Vec<u8>>) {
    use std::sync::OnceLock;
    static DECL: OnceLock<regex::bytes::Regex> = OnceLock::new();
    #[allow(clippy::expect_used, reason = "a constant pattern, compiled by the unit tests below")]
    let re = DECL.get_or_init(|| {
        regex::bytes::Regex::new(
            r"(?m)^[ \t]*(?:(?:export|const|let|var|val|final|static|private|public|protected|readonly|internal)[ \t]+)*(?:[A-Za-z_][\w<>\[\].]*[ \t]+)?([A-Za-z_][\w]*)[ \t]*(?::[ \t]*[\w.\[\]| ]+?)?[ \t]*:?=[^=]",
        )
        .expect("a constant pattern")
    });
    let Some(text) = side.view(super::super::mask::View::Code) else { return };
    let starts = side.starts();
    for &(a, b) in changed {
        let from = starts.get(a.saturating_sub(1) as usize).copied().unwrap_or(text.len());
        let to = starts.get(b as usize).copied().unwrap_or(text.len());
        for caps in re.captures_iter(&text[from..to]) {
            let Some(name) = caps.get(1) else { continue };
            let name = name.as_bytes();
            const WORDS: &[&[u8]] = &[b"if", b"for", b"while", b"return", b"self", b"this", b"else"];
            if out.len() >= MAX_CHANGED_NAMES || WORDS.contains(&name) {
                continue;
            }
            if !out.iter().any(|n| n == name) {
                out.push(name.to_vec());
            }
        }
    }
}

/// The lines (as 1-based ranges, sorted) where `names` are used on `side`:
/// the sites whose value a changed declaration decides.
pub(super) fn use_lines(side: &SideText, names: &[Vec<u8>]) -> Vec<(u32, u32)> {
    let Some(text) = side.view(super::super::mask::View::Code) else { return Vec::new() };
    let mut lines = Vec::new();
    for name in names {
        let finder = memchr::memmem::Finder::new(name);
        for at in finder.find_iter(text).take(MAX_USES) {
            let before = at.checked_sub(1).map(|i| text[i]);
            let after = text.get(at + name.len()).copied();
            let word = |c: Option<u8>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$');
            if !word(before) && !word(after) {
                let l = side.line_of(at);
                lines.push((l, l));
            }
        }
    }
    lines.sort_unstable();
    lines.dedup();
    lines
}

/// Two sorted lists of 1-based line ranges as one sorted list.
pub(super) fn merge_lines(a: &[(u32, u32)], b: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut all: Vec<(u32, u32)> = a.iter().chain(b).copied().collect();
    all.sort_unstable();
    all
}

/// The line a [`Value::Known`] was decided on, when that literal sits on
/// another line than the use (a constant declared elsewhere).
pub(super) fn literal_line(side: &SideText, v: &Value) -> Option<u32> {
    match v {
        Value::Known { at, .. } => Some(side.line_of(*at)),
        Value::Unknown(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn val(src: &str) -> Value {
        let at = src.find("@").unwrap();
        let text = src.replacen('@', " ", 1);
        value_at(text.as_bytes(), at + 1).0
    }

    fn known(src: &str) -> String {
        match val(src) {
            Value::Known { text, .. } => text,
            other => panic!("{src}: {other:?}"),
        }
    }

    #[test]
    fn names_resolve_through_declarations_in_any_form() {
        assert_eq!(known("MAX_ATTEMPTS = 5\nx = stop_after_attempt(@MAX_ATTEMPTS)\n"), "5");
        assert_eq!(known("maxRetries := uint64(10)\nb := WithMaxRetries(p, @maxRetries)\n"), "10");
        assert_eq!(known("const (\n\tmaxRetries uint64 = 7\n)\nf(@maxRetries)\n"), "7");
        assert_eq!(known("private static final int MAX = 4;\nx.maxAttempts(@MAX);\n"), "4");
        assert_eq!(known("val retries: Int = 3\nf(@retries)\n"), "3");
        assert_eq!(known("A = B\nB = 6\nf(@A)\n"), "6");
        assert_eq!(known("def f(retries=3):\n    Retry(total=@retries)\n"), "3");
        assert_eq!(known("class C:\n    N = 2\n    def f(self): g(@self.N)\n"), "2");
        assert_eq!(
            known("def __init__(self, c):\n    self.n = int(c.get(\"n\", 5))\n    X(max_retries=@self.n)\n"),
            "5"
        );
        assert_eq!(known("this.limit = 4;\nf({ retries: @this.limit });\n"), "4");
        assert!(
            matches!(val("other.n = 4\nf(@n)\n"), Value::Unknown(_)),
            "another object's attribute is not the name"
        );
        assert_eq!(known("f(@uint64(10))\n"), "10");
        assert_eq!(known("f(@10 * 2)\n"), "20");
        assert_eq!(known("f(@None)\n"), "None");
    }

    #[test]
    fn written_defaults_are_used() {
        assert_eq!(known("Retry(total=@int(os.environ.get(\"HTTP_RETRIES\", \"10\")))\n"), "10");
        assert_eq!(known("x = @int(os.getenv(\"R\") or 4)\n"), "4");
        assert_eq!(known("{ retries: @parseInt(process.env.X || \"10\") }\n"), "10");
        assert_eq!(known("{ retries: @Number(process.env.X ?? 7) }\n"), "7");
        assert_eq!(known("N = int(os.environ.get(\"N\", \"3\"))\nf(@N)\n"), "3");
    }

    #[test]
    fn what_cannot_be_computed_is_unknown_with_a_reason() {
        let reason = |src: &str| match val(src) {
            Value::Unknown(w) => w,
            other => panic!("{src}: {other:?}"),
        };
        assert!(reason("f(@compute())\n").contains("compute"));
        assert!(reason("f(@int(os.environ[\"R\"]))\n").contains("no written default"));
        assert!(reason("f(@parseInt(process.env.X))\n").contains("no written default"));
        assert!(reason("f(@settings.retries)\n").contains("not set in this file"));
        assert!(reason("A = B\nB = A\nf(@A)\n").contains('`'), "a cycle ends");
        assert!(matches!(val("x == 3\nf(@x)\n"), Value::Unknown(_)), "a comparison is no declaration");
        // The nearest declaration decides even when it cannot be read: an
        // older default further up is not what runs.
        let long = format!(
            "def f(retries: int = 0):\n    retries = Retry(\n{}    )\n    A(max_retries=@retries)\n",
            "        x=1,\n".repeat(40)
        );
        assert!(reason(&long).contains("too long"), "{:?}", val(&long));
    }

    #[test]
    fn expressions_end_at_separators_outside_brackets_and_strings() {
        let t = b"f(a(1, 2), \"x,y\", z)\n";
        assert_eq!(expr_end(t, 2), Some(9));
        assert_eq!(expr_end(t, 11), Some(16));
        assert_eq!(expr_end(&[b'a'; 500], 0), None, "too long to read");
        assert_eq!(number_of("1_000"), Some(1000.0));
        assert_eq!(number_of("10L"), Some(10.0));
        assert_eq!(number_of("x1"), None);
    }
}
