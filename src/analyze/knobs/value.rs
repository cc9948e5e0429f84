//! The value a setting is given, computed from the tokens of its expression.
//!
//! What is computed: number literals (with type suffixes), booleans, nulls,
//! infinities and "largest integer" constants; strings that hold a number,
//! a duration (`"30s"`, `"1m30s"`, `"500ms"`, `PT5S`) or a placeholder's
//! written default (`${retry.max:5}`); durations built by the usual
//! constructors (`Duration::from_secs`, `Duration.ofMillis`, `timedelta`,
//! `TimeSpan.FromSeconds`, `5 * time.Second`, `5.seconds`); arithmetic,
//! `min`/`max`, conversions (`int(..)`, `Number(..)`); a lookup with a
//! written default (`os.environ.get("X", "5")`, `process.env.X ?? 5`,
//! `opts.retries || 3`, `getOrDefault(k, 5)`, `Field(default=5)`); and
//! names bound to one of those elsewhere in the file or the change
//! ([`Bindings`]). Anything else is [`Value::Unknown`], with its text, so a
//! note can name it.

use std::collections::HashMap;

use super::tokens::{Tok, Token};

/// What a setting's expression computes to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// A number; `seconds` is true when it is a duration in seconds.
    Num { v: f64, seconds: bool },
    /// `true` / `false`.
    Bool(bool),
    /// No limit: infinity, the largest integer.
    Unlimited,
    /// `None`, `null`, `nil`, `undefined`.
    Null,
    /// A string that is no number (`"full"`, `"none"`).
    Text(String),
    /// Not computed; the expression's text.
    Unknown(String),
}

impl Value {
    /// A short rendering for messages.
    pub(crate) fn show(&self) -> String {
        match self {
            Value::Num { v, seconds: true } => format_seconds(*v),
            Value::Num { v, .. } => format_num(*v),
            Value::Bool(b) => b.to_string(),
            Value::Unlimited => "unlimited".to_string(),
            Value::Null => "none".to_string(),
            Value::Text(t) => format!("\"{t}\""),
            Value::Unknown(t) => format!("`{t}`"),
        }
    }

    pub(crate) fn is_known(&self) -> bool {
        !matches!(self, Value::Unknown(_))
    }
}

fn format_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn format_seconds(v: f64) -> String {
    if v < 1.0 && v > 0.0 {
        format!("{}ms", format_num((v * 1000.0 * 1000.0).round() / 1000.0))
    } else {
        format!("{}s", format_num(v))
    }
}

/// Names bound to values: the file's own (and the change's other files')
/// literal assignments, looked up by full path, then by last part where the
/// qualifier says whose binding it is ([`qualifier_binds_the_last_part`]).
#[derive(Debug, Default, Clone)]
pub(crate) struct Bindings {
    pub(crate) by_name: HashMap<String, Value>,
}

impl Bindings {
    fn get(&self, name: &str) -> Option<&Value> {
        if let Some(v) = self.by_name.get(name) {
            return Some(v);
        }
        let (qualifier, last) = name.rsplit_once('.')?;
        qualifier_binds_the_last_part(qualifier, last).then(|| self.by_name.get(last)).flatten()
    }
}

/// Whether `qualifier.last` is the binding the file calls `last`: the
/// object's own field (`self.`, `this.`, `cls.`), a type's or a module's
/// member (`RetryConfig.MAX`, `Defaults.retries`), or a constant
/// (`settings.MAX_RETRIES`: constants are module-level). A field of some
/// other value (`tool.max_retries`, `self.config.retries`) is that value's,
/// not whatever the file assigns to a name of the same word, so it stays
/// unknown instead of borrowing an unrelated binding.
/// Qualifiers that name the object or type the code is in.
const OWN_QUALIFIERS: &[&str] = &["self", "this", "cls", "Self", "static", "@"];

/// Whether another file can refer to the binding `name`: a plain name (a
/// module member, imported by name), a type's or a module's member, or a
/// constant. `toolset.max_retries = 1` in one file sets a field of that
/// file's local `toolset`; no other file's `toolset.max_retries` is it.
pub(crate) fn referable_across_files(name: &str) -> bool {
    match name.rsplit_once('.') {
        None => true,
        Some((qualifier, last)) => {
            !OWN_QUALIFIERS.contains(&qualifier) && qualifier_binds_the_last_part(qualifier, last)
        }
    }
}

pub(crate) fn qualifier_binds_the_last_part(qualifier: &str, last: &str) -> bool {
    let own = OWN_QUALIFIERS.contains(&qualifier);
    let owner = qualifier.rsplit('.').next().unwrap_or(qualifier);
    let type_or_module = owner.chars().next().is_some_and(char::is_uppercase);
    let constant =
        last.chars().any(|c| c.is_ascii_uppercase()) && !last.chars().any(|c| c.is_ascii_lowercase());
    own || type_or_module || constant
}

/// Seconds in one unit named by a duration constructor or a unit word.
fn unit_seconds(word: &str) -> Option<f64> {
    let w = word.to_ascii_lowercase();
    let w = w.trim_start_matches("from_").trim_start_matches("from").trim_start_matches("of");
    let w = w.trim_start_matches('_');
    Some(match w {
        "nanos" | "nanosecond" | "nanoseconds" | "ns" => 1e-9,
        "micros" | "microsecond" | "microseconds" | "us" => 1e-6,
        "millis" | "millisecond" | "milliseconds" | "ms" => 1e-3,
        "secs" | "sec" | "second" | "seconds" | "s" | "secs_f64" | "secs_f32" => 1.0,
        "mins" | "min" | "minute" | "minutes" | "m" => 60.0,
        "hours" | "hour" | "h" => 3600.0,
        "days" | "day" | "d" => 86400.0,
        _ => return None,
    })
}

/// `"30s"`, `"1m30s"`, `"500ms"`, `"1.5"`, `PT5S`, `"${k:5}"`, `"true"`.
pub(crate) fn from_text(s: &str) -> Value {
    let t = s.trim();
    if let Some(inner) = t.strip_prefix("${").and_then(|r| r.strip_suffix('}')) {
        return match inner.split_once(':') {
            Some((_, default)) => from_text(default),
            None => Value::Unknown(t.to_string()),
        };
    }
    match t.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" => return Value::Bool(true),
        "false" | "no" | "off" => return Value::Bool(false),
        "inf" | "infinity" | "unlimited" => return Value::Unlimited,
        "" | "null" | "none" | "nil" | "~" => return Value::Null,
        _ => {}
    }
    if let Ok(v) = t.replace('_', "").parse::<f64>() {
        return Value::Num { v, seconds: false };
    }
    if let Some(v) = duration_text(t) {
        return Value::Num { v, seconds: true };
    }
    Value::Text(t.to_string())
}

/// `1m30s`, `500ms`, `2h`, `PT1M30S` as seconds.
fn duration_text(t: &str) -> Option<f64> {
    let lower = t.to_ascii_lowercase();
    let body = lower.strip_prefix("pt").unwrap_or(&lower);
    let mut total = 0.0;
    let mut rest = body;
    let mut any = false;
    while !rest.is_empty() {
        let num_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        if num_end == 0 {
            return None;
        }
        let n: f64 = rest[..num_end].parse().ok()?;
        rest = &rest[num_end..];
        let unit_end = rest.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(rest.len());
        let unit = &rest[..unit_end];
        total += n * unit_seconds(unit)?;
        rest = &rest[unit_end..];
        any = true;
    }
    any.then_some(total)
}

const UNLIMITED_NAMES: &[&str] = &[
    "inf",
    "infinity",
    "math.inf",
    "numpy.inf",
    "np.inf",
    "Infinity",
    "Number.POSITIVE_INFINITY",
    "Number.MAX_SAFE_INTEGER",
    "Number.MAX_VALUE",
    "sys.maxsize",
    "Integer.MAX_VALUE",
    "Long.MAX_VALUE",
    "Int.MAX_VALUE",
    "int.MaxValue",
    "Int32.MaxValue",
    "math.MaxInt",
    "math.MaxInt32",
    "math.MaxInt64",
    "math.MaxUint32",
    "u32.MAX",
    "u64.MAX",
    "usize.MAX",
    "i32.MAX",
    "i64.MAX",
    "PHP_INT_MAX",
    "Float.INFINITY",
    "Double.POSITIVE_INFINITY",
];

/// Evaluates `toks` (one expression, no terminator) against `b`.
pub(crate) fn eval(toks: &[Token], b: &Bindings) -> Value {
    let text = render(toks);
    if toks.is_empty() {
        return Value::Unknown(text);
    }
    let mut p = Parser { t: toks, i: 0, b };
    match p.conditional() {
        Some(v) if p.i == toks.len() && v.is_known() => v,
        _ => Value::Unknown(text),
    }
}

/// The tokens as text, for notes.
pub(crate) fn render(toks: &[Token]) -> String {
    let mut s = String::new();
    for t in toks {
        let piece = match &t.tok {
            Tok::Name(n) => n.clone(),
            Tok::Num(v, suf) => format!("{}{suf}", format_num(*v)),
            Tok::Str(x) => format!("\"{x}\""),
            Tok::Punct(p) => p.to_string(),
            Tok::Newline => continue,
        };
        let glue = matches!(t.tok, Tok::Punct("(" | ")" | "." | "," | "[" | "]"))
            || s.ends_with('(')
            || s.ends_with('.')
            || s.ends_with('[');
        if !s.is_empty() && !glue {
            s.push(' ');
        }
        s.push_str(&piece);
        if s.len() > 80 {
            s.push('…');
            break;
        }
    }
    s
}

struct Parser<'a> {
    t: &'a [Token],
    i: usize,
    b: &'a Bindings,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i).map(|t| &t.tok)
    }

    fn punct(&mut self, p: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Punct(q)) if *q == p) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn name_is(&self, n: &str) -> bool {
        matches!(self.peek(), Some(Tok::Name(x)) if x == n)
    }

    /// `c ? a : b`, `a if c else b`: the branch that is worse for a retry,
    /// the larger count or the shorter duration, since either may run; a
    /// change to the other branch alone is not seen.
    fn conditional(&mut self) -> Option<Value> {
        // `c ? a : b` whatever the condition is (`n > 2 ? 3 : 6`): a `?`
        // ahead at this depth starts the branches.
        let mut depth = 0i32;
        let mut question = None;
        for (j, t) in self.t.iter().enumerate().skip(self.i) {
            match &t.tok {
                Tok::Punct("(" | "[" | "{") => depth += 1,
                Tok::Punct(")" | "]" | "}") if depth == 0 => break,
                Tok::Punct(")" | "]" | "}") => depth -= 1,
                Tok::Punct("," | ";" | ":") if depth == 0 => break,
                Tok::Punct("?") if depth == 0 => {
                    question = Some(j);
                    break;
                }
                _ => {}
            }
        }
        if let Some(q) = question {
            self.i = q;
        }
        let first = if question.is_some() { None } else { self.fallback() };
        let (then, otherwise) = if self.punct("?") {
            let then = self.conditional();
            self.punct(":").then_some(())?;
            (then, self.conditional())
        } else if self.name_is("if") {
            // Skip the condition up to its `else`.
            let mut depth = 0i32;
            while let Some(t) = self.peek() {
                match t {
                    Tok::Punct("(" | "[" | "{") => depth += 1,
                    Tok::Punct(")" | "]" | "}") => depth -= 1,
                    Tok::Name(n) if n == "else" && depth == 0 => break,
                    _ => {}
                }
                self.i += 1;
            }
            self.name_is("else").then_some(())?;
            self.i += 1;
            (first, self.conditional())
        } else {
            return first;
        };
        match (then?, otherwise?) {
            (Value::Num { v: a, seconds: sa }, Value::Num { v: b, seconds: sb }) if sa == sb => {
                Some(Value::Num { v: if sa { a.min(b) } else { a.max(b) }, seconds: sa })
            }
            _ => Some(Value::Unknown("a conditional".to_string())),
        }
    }

    /// `a ?? b`, `a || b`, `a or b`: a written default behind a lookup.
    fn fallback(&mut self) -> Option<Value> {
        let first = self.sum();
        let mut left = first;
        loop {
            let is_or = self.punct("??") || self.punct("||") || {
                if self.name_is("or") {
                    self.i += 1;
                    true
                } else {
                    false
                }
            };
            if !is_or {
                return left;
            }
            let right = self.sum();
            left = match (left, right) {
                // The lookup's own value is not in the code: the written
                // default is what the code says.
                (None | Some(Value::Unknown(_)) | Some(Value::Null), r) => r,
                (l, _) => l,
            };
        }
    }

    fn sum(&mut self) -> Option<Value> {
        let mut left = self.product()?;
        loop {
            let op = if self.punct("+") {
                '+'
            } else if self.punct("-") {
                '-'
            } else {
                return Some(left);
            };
            let right = self.product()?;
            left = arith(left, right, op)?;
        }
    }

    fn product(&mut self) -> Option<Value> {
        let mut left = self.unary()?;
        loop {
            let op = if self.punct("*") {
                '*'
            } else if self.punct("/") || self.punct("//") {
                '/'
            } else if self.punct("**") {
                '^'
            } else {
                return Some(left);
            };
            let right = self.unary()?;
            left = arith(left, right, op)?;
        }
    }

    fn unary(&mut self) -> Option<Value> {
        if self.punct("-") {
            return match self.unary()? {
                Value::Num { v, seconds } => Some(Value::Num { v: -v, seconds }),
                _ => None,
            };
        }
        if self.punct("!") {
            return match self.unary()? {
                Value::Bool(b) => Some(Value::Bool(!b)),
                _ => None,
            };
        }
        self.postfix()
    }

    /// An atom and what follows it: `5.seconds`, `.getOrDefault(k, 5)`.
    fn postfix(&mut self) -> Option<Value> {
        let mut v = self.atom()?;
        while matches!(self.peek(), Some(Tok::Punct("."))) {
            let Some(Tok::Name(unit)) = self.t.get(self.i + 1).map(|t| &t.tok) else { break };
            if matches!(self.t.get(self.i + 2).map(|t| &t.tok), Some(Tok::Punct("("))) {
                // A method on the value: a lookup with a written default
                // gives it; a conversion keeps the value; others are unknown.
                let method = unit.clone();
                self.i += 3;
                let args = self.args()?;
                v = match call(&method, args) {
                    Some(r) if r.is_known() => r,
                    _ if matches!(
                        method.as_str(),
                        "toInt" | "intValue" | "to_i" | "to_f" | "unwrap" | "into"
                    ) =>
                    {
                        v
                    }
                    _ => Value::Unknown(method),
                };
                continue;
            }
            let Value::Num { v: n, seconds: false } = v else { break };
            let Some(s) = unit_seconds(unit) else { break };
            self.i += 2;
            v = Value::Num { v: n * s, seconds: true };
        }
        Some(v)
    }

    fn atom(&mut self) -> Option<Value> {
        let tok = self.peek()?.clone();
        self.i += 1;
        match tok {
            Tok::Num(v, suffix) => Some(match unit_seconds(&suffix) {
                // `5s`, `500ms` (Kotlin, Scala and config literals).
                Some(s)
                    if matches!(
                        suffix.as_str(),
                        "ms" | "s" | "sec" | "secs" | "min" | "mins" | "h" | "us" | "ns"
                    ) =>
                {
                    Value::Num { v: v * s, seconds: true }
                }
                _ => Value::Num { v, seconds: false },
            }),
            Tok::Str(s) => Some(from_text(&s)),
            Tok::Punct("(") => {
                let v = self.conditional();
                self.punct(")").then_some(())?;
                v
            }
            Tok::Name(name) => self.named(&name),
            _ => None,
        }
    }

    fn named(&mut self, name: &str) -> Option<Value> {
        match name {
            "true" | "True" | "TRUE" => return Some(Value::Bool(true)),
            "false" | "False" | "FALSE" => return Some(Value::Bool(false)),
            "None" | "null" | "nil" | "undefined" | "NULL" => return Some(Value::Null),
            _ => {}
        }
        if UNLIMITED_NAMES.contains(&name) {
            return Some(Value::Unlimited);
        }
        if matches!(self.peek(), Some(Tok::Punct("("))) {
            self.i += 1;
            let args = self.args()?;
            // An unknown call is an unknown value, so that what follows
            // (`.getOrDefault(k, 5)`, `?? 5`) can still be read.
            return Some(call(name, args).unwrap_or_else(|| Value::Unknown(name.to_string())));
        }
        let last = name.rsplit('.').next().unwrap_or(name);
        // `time.Second`, `time.Millisecond`, `TimeUnit`-free Go durations.
        if name.starts_with("time.") {
            if let Some(s) = unit_seconds(last) {
                return Some(Value::Num { v: s, seconds: true });
            }
        }
        self.b.get(name).cloned()
    }

    /// Call arguments after `(`, up to the matching `)`: positional values
    /// and `name=value` / `name: value` keyword values.
    fn args(&mut self) -> Option<Vec<(Option<String>, Value)>> {
        let mut out = Vec::new();
        if self.punct(")") {
            return Some(out);
        }
        loop {
            let kw = match (self.t.get(self.i).map(|t| &t.tok), self.t.get(self.i + 1).map(|t| &t.tok)) {
                (Some(Tok::Name(n)), Some(Tok::Punct("=" | ":"))) => Some(n.clone()),
                _ => None,
            };
            if kw.is_some() {
                self.i += 2;
            }
            let v = self.conditional().unwrap_or(Value::Unknown(String::new()));
            // Skip what this parser does not read up to the next argument.
            let mut depth = 0;
            while let Some(t) = self.peek() {
                match t {
                    Tok::Punct("(" | "[" | "{") => depth += 1,
                    Tok::Punct(")" | "]" | "}") if depth > 0 => depth -= 1,
                    Tok::Punct(")") | Tok::Punct(",") if depth == 0 => break,
                    _ => {}
                }
                self.i += 1;
            }
            out.push((kw, v));
            if self.punct(",") {
                if self.punct(")") {
                    return Some(out);
                }
                continue;
            }
            return self.punct(")").then_some(out);
        }
    }
}

fn arith(l: Value, r: Value, op: char) -> Option<Value> {
    let (Value::Num { v: a, seconds: sa }, Value::Num { v: b, seconds: sb }) = (&l, &r) else {
        return match (l, r) {
            (Value::Unlimited, _) | (_, Value::Unlimited) if op != '/' && op != '-' => Some(Value::Unlimited),
            _ => None,
        };
    };
    let seconds = *sa || *sb;
    let v = match op {
        '+' => a + b,
        '-' => a - b,
        '*' => a * b,
        '/' if *b != 0.0 => {
            // A duration divided by a duration is a plain ratio.
            return Some(Value::Num { v: a / b, seconds: *sa && !*sb });
        }
        '^' => a.powf(*b),
        _ => return None,
    };
    Some(Value::Num { v, seconds })
}

/// What a call computes, by its callee's last part.
fn call(name: &str, args: Vec<(Option<String>, Value)>) -> Option<Value> {
    let last = name.rsplit('.').next().unwrap_or(name);
    let lower = last.to_ascii_lowercase();
    let positional: Vec<&Value> = args.iter().filter(|(k, _)| k.is_none()).map(|(_, v)| v).collect();
    let keyword = |k: &str| args.iter().find(|(n, _)| n.as_deref() == Some(k)).map(|(_, v)| v.clone());
    let num = |v: &Value| match v {
        Value::Num { v, .. } => Some(*v),
        _ => None,
    };
    // Duration constructors: Duration::from_secs(5), Duration.ofMillis(5),
    // TimeSpan.FromSeconds(5), Duration.seconds(5).
    let ctor = lower.strip_prefix("from_").or(lower.strip_prefix("from")).or(lower.strip_prefix("of"));
    let duration_type = name.contains("Duration") || name.contains("TimeSpan") || name.contains("duration");
    if let Some(unit) =
        ctor.and_then(unit_seconds).or_else(|| duration_type.then(|| unit_seconds(&lower)).flatten())
    {
        let n = positional.first().and_then(|v| num(v))?;
        return Some(Value::Num { v: n * unit, seconds: true });
    }
    match lower.as_str() {
        // timedelta(seconds=5, milliseconds=500)
        "timedelta" => {
            let mut total = positional.first().and_then(|v| num(v)).map_or(0.0, |d| d * 86400.0);
            for (k, v) in &args {
                if let (Some(k), Some(n)) = (k, num(v)) {
                    total += n * unit_seconds(k)?;
                }
            }
            Some(Value::Num { v: total, seconds: true })
        }
        // Conversions and wrappers keep their argument's value.
        "int" | "float" | "number" | "parseint" | "parsefloat" | "str" | "string" | "some" | "ok"
        | "long" | "integer" | "valueof" | "parselong" | "parsedouble" | "atoi" | "atoll" | "to_i"
        | "to_f" | "uint" | "uint32" | "uint64" | "int32" | "int64" | "u32" | "u64" | "usize" | "from"
        | "duration" | "decimal" | "bigint" | "nonzero" | "new" | "nonzerou32" | "nonzerousize" => {
            positional.first().map(|v| (*v).clone())
        }
        // A lookup with a written default: the default is what the code says.
        "get" | "getenv" | "getordefault" | "fetch" | "env" | "getattr" | "getint" | "getfloat"
        | "getboolean" | "getinteger" | "getlong" | "lookupenv" | "or" | "default" | "unwrap_or"
        | "get_or" | "getvalue" | "optional" | "config" | "setting" | "value" => {
            if let Some(d) = keyword("default").or(keyword("fallback")) {
                return Some(d);
            }
            match positional.len() {
                0 => None,
                1 if matches!(lower.as_str(), "unwrap_or" | "or" | "default") => Some(positional[0].clone()),
                1 => None,
                _ => positional.last().map(|v| (*v).clone()),
            }
        }
        // Field(default=5), field(default=5), attr.ib(default=5)
        "field" | "ib" | "attrib" | "param" | "option" | "argument" => {
            keyword("default").or(keyword("default_value"))
        }
        "min" | "max" => {
            let ns: Option<Vec<f64>> = positional.iter().map(|v| num(v)).collect();
            let ns = ns?;
            let seconds = positional.iter().any(|v| matches!(v, Value::Num { seconds: true, .. }));
            let v = if lower == "min" {
                ns.iter().copied().fold(f64::INFINITY, f64::min)
            } else {
                ns.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            };
            v.is_finite().then_some(Value::Num { v, seconds })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::tokens::tokenize;
    use super::*;

    fn ev(s: &str) -> Value {
        let toks: Vec<Token> = tokenize(s.as_bytes()).into_iter().filter(|t| t.tok != Tok::Newline).collect();
        eval(&toks, &Bindings::default())
    }

    fn secs(v: f64) -> Value {
        Value::Num { v, seconds: true }
    }

    fn n(v: f64) -> Value {
        Value::Num { v, seconds: false }
    }

    #[test]
    fn literals_and_arithmetic() {
        assert_eq!(ev("3"), n(3.0));
        assert_eq!(ev("2 * 60 + 1"), n(121.0));
        assert_eq!(ev("-1"), n(-1.0));
        assert_eq!(ev("10u32"), n(10.0));
        assert_eq!(ev("True"), Value::Bool(true));
        assert_eq!(ev("float('inf')"), Value::Unlimited);
        assert_eq!(ev("math.inf"), Value::Unlimited);
        assert_eq!(ev("None"), Value::Null);
    }

    /// Either branch may run: the larger count, the shorter duration.
    #[test]
    fn a_conditional_is_its_worse_branch() {
        assert_eq!(ev("retryQueue ? 10 : 1"), n(10.0));
        assert_eq!(ev("4 if retry_queue else 1"), n(4.0));
        assert_eq!(ev("fast ? Duration.ofSeconds(5) : Duration.ofSeconds(30)"), secs(5.0));
        assert_eq!(ev("(a > 2 ? 3 : 6)"), n(6.0));
        assert!(matches!(ev("x ? 3 : y"), Value::Unknown(_)));
        assert!(matches!(ev("retryQueue ? 4"), Value::Unknown(_)));
    }

    #[test]
    fn durations_in_every_spelling_are_seconds() {
        assert_eq!(ev("Duration::from_millis(500)"), secs(0.5));
        assert_eq!(ev("Duration.ofSeconds(30)"), secs(30.0));
        assert_eq!(ev("TimeSpan.FromMinutes(2)"), secs(120.0));
        assert_eq!(ev("timedelta(seconds=5, milliseconds=500)"), secs(5.5));
        assert_eq!(ev("5 * time.Second"), secs(5.0));
        assert_eq!(ev("time.Millisecond * 250"), secs(0.25));
        assert_eq!(ev("5.seconds"), secs(5.0));
        assert_eq!(ev("\"1m30s\""), secs(90.0));
        assert_eq!(ev("'PT5S'"), secs(5.0));
        assert_eq!(ev("\"500ms\""), secs(0.5));
    }

    #[test]
    fn written_defaults_behind_lookups() {
        assert_eq!(ev("int(os.environ.get(\"MAX_RETRIES\", \"5\"))"), n(5.0));
        assert_eq!(ev("process.env.MAX_RETRIES ?? 7"), n(7.0));
        assert_eq!(ev("opts.retries || 3"), n(3.0));
        assert_eq!(ev("System.getenv().getOrDefault(\"R\", \"4\")"), n(4.0));
        assert_eq!(ev("Field(default=6, ge=0)"), n(6.0));
        assert_eq!(ev("\"${retry.max:10}\""), n(10.0));
        assert_eq!(ev("min(10, 3)"), n(3.0));
    }

    #[test]
    fn what_cannot_be_computed_says_what_it_was() {
        assert_eq!(ev("settings.max_retries"), Value::Unknown("settings.max_retries".into()));
        assert!(!ev("compute(a, b)").is_known());
    }

    #[test]
    fn names_resolve_through_bindings() {
        let mut b = Bindings::default();
        b.by_name.insert("DEFAULT_RETRIES".into(), n(4.0));
        let toks: Vec<Token> = tokenize(b"Defaults.DEFAULT_RETRIES + 1").into_iter().collect();
        assert_eq!(eval(&toks, &b), n(5.0));
    }

    /// A field is resolved through a file's binding of the same word only
    /// when the qualifier owns it: the object itself, a type, or a constant.
    #[test]
    fn a_field_of_another_value_is_not_the_files_binding() {
        let mut b = Bindings::default();
        b.by_name.insert("max_retries".into(), n(1.0));
        b.by_name.insert("MAX_RETRIES".into(), n(7.0));
        let eval_text = |s: &str| eval(&tokenize(s.as_bytes()).into_iter().collect::<Vec<_>>(), &b);
        assert_eq!(eval_text("self.max_retries"), n(1.0));
        assert_eq!(eval_text("this.max_retries"), n(1.0));
        assert_eq!(eval_text("RetryConfig.max_retries"), n(1.0));
        assert_eq!(eval_text("settings.MAX_RETRIES"), n(7.0));
        assert_eq!(eval_text("toolset.max_retries"), Value::Unknown("toolset.max_retries".into()));
        assert_eq!(eval_text("self.config.max_retries"), Value::Unknown("self.config.max_retries".into()));
    }

    #[test]
    fn only_module_level_names_are_shared_between_files() {
        assert!(referable_across_files("MAX_RETRIES"));
        assert!(referable_across_files("max_retries"));
        assert!(referable_across_files("RetryConfig.max_retries"));
        assert!(referable_across_files("settings.MAX_RETRIES"));
        assert!(!referable_across_files("toolset.max_retries"));
        assert!(!referable_across_files("self.max_retries"));
    }
}
