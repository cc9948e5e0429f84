//! JSON exactly as Python sees it: a parser that keeps what Python's
//! `json.loads` keeps (integers of any size as integers, floats as floats,
//! `NaN`/`Infinity`), and a serializer that writes what
//! `json.dumps(value, sort_keys=True)` writes, byte for byte.
//!
//! The ledger digest is defined over Python's serialization (the existing
//! tool layers that write v1 ledgers are Python), so a general-purpose JSON
//! library will not do: `serde_json` turns `1.0` into `1.0` but `1e16` into
//! `1e16` (Python: `1e+16`), escapes nothing outside ASCII (Python escapes
//! everything), and loses integers beyond 64 bits. Everything here follows
//! CPython's `json` module and `float.__repr__`:
//!
//! - separators `", "` and `": "`; keys sorted by code point; for duplicate
//!   keys the last value wins (a `dict` keeps the last assignment);
//! - strings: `"` and `\` escaped, `\b \f \n \r \t` short escapes, every
//!   other character outside printable ASCII (`' '..='~'`) as `\uXXXX` in
//!   lower-case hex, characters above U+FFFF as a surrogate pair;
//! - integers in decimal (`-0` is `0`); floats in the shortest form that
//!   round-trips, in exponent form (`1e+16`, `1.5e-05`) when the decimal
//!   exponent is below -4 or at least 16, otherwise with a fractional part
//!   (`3.0`); non-finite floats as `NaN`, `Infinity`, `-Infinity`.
//!
//! Parsing is bounded: nesting deeper than [`MAX_DEPTH`] is an error, not a
//! stack overflow.

use std::fmt::Write as _;

use sha2::{Digest, Sha256};

/// Deepest nesting the parser accepts. Python's own limit is about 1000
/// frames; tool payloads are a few levels deep.
pub(crate) const MAX_DEPTH: usize = 128;

/// CPython refuses to convert integers longer than this to or from text
/// (`sys.int_info.default_max_str_digits`), so no Python writer can have
/// produced a longer one.
const MAX_INT_DIGITS: usize = 4300;

/// A JSON value as Python holds it after `json.loads`.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null` (Python's `None`).
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An integer, as canonical decimal text (no leading zeros, no `-0`).
    Int(String),
    /// A number with a fraction or an exponent.
    Float(f64),
    /// A string.
    Str(String),
    /// An array, in order.
    Array(Vec<Value>),
    /// Members in document order; duplicates are resolved when serialized.
    Object(Vec<(String, Value)>),
}

impl Value {
    /// The member `key` of an object (the last one, as Python keeps it).
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(members) => members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The number as `f64` (integers converted), or `None` when not a number.
    pub(crate) fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(s) => s.parse().ok(),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// An integer that fits in `u64`.
    pub(crate) fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Int(s) => s.parse().ok(),
            _ => None,
        }
    }

    /// A short name of the JSON type, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a float",
            Value::Str(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

/// Why a text is not JSON Python would accept, with the byte offset.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message} at column {column}")]
pub struct ParseError {
    pub(crate) message: String,
    /// 1-based character column (what an editor shows).
    pub(crate) column: usize,
}

/// Parses one JSON document the way `json.loads` does (strict mode).
pub fn parse(text: &str) -> Result<Value, ParseError> {
    let mut p = Parser { text, bytes: text.as_bytes(), pos: 0 };
    p.skip_ws();
    let v = p.value(0)?;
    p.skip_ws();
    if p.pos != p.bytes.len() {
        return Err(p.error("unexpected text after the JSON value"));
    }
    Ok(v)
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, message: &str) -> ParseError {
        let upto = self.pos.min(self.bytes.len());
        // Count characters, not bytes; `pos` may sit inside a multi-byte
        // character after an error, so clamp to a boundary first.
        let mut boundary = upto;
        while boundary > 0 && !self.text.is_char_boundary(boundary) {
            boundary -= 1;
        }
        ParseError { message: message.to_string(), column: self.text[..boundary].chars().count() + 1 }
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, literal: &str) -> bool {
        if self.bytes[self.pos..].starts_with(literal.as_bytes()) {
            self.pos += literal.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.error(&format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        match self.bytes.get(self.pos) {
            None => Err(self.error("the line ends where a value was expected (truncated record?)")),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Value::Str(self.string()?)),
            Some(b't') if self.eat("true") => Ok(Value::Bool(true)),
            Some(b'f') if self.eat("false") => Ok(Value::Bool(false)),
            Some(b'n') if self.eat("null") => Ok(Value::Null),
            Some(b'N') if self.eat("NaN") => Ok(Value::Float(f64::NAN)),
            Some(b'I') if self.eat("Infinity") => Ok(Value::Float(f64::INFINITY)),
            Some(b'-') if self.eat("-Infinity") => Ok(Value::Float(f64::NEG_INFINITY)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("expected a JSON value")),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, ParseError> {
        self.pos += 1;
        let mut members = Vec::new();
        self.skip_ws();
        if self.eat("}") {
            return Ok(Value::Object(members));
        }
        loop {
            self.skip_ws();
            if self.bytes.get(self.pos) != Some(&b'"') {
                return Err(self.error("expected a property name in double quotes"));
            }
            let key = self.string()?;
            self.skip_ws();
            if !self.eat(":") {
                return Err(self.error("expected ':' after a property name"));
            }
            self.skip_ws();
            let v = self.value(depth + 1)?;
            members.push((key, v));
            self.skip_ws();
            if self.eat(",") {
                continue;
            }
            if self.eat("}") {
                return Ok(Value::Object(members));
            }
            return Err(self.error("expected ',' or '}' in an object"));
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, ParseError> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.eat("]") {
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value(depth + 1)?);
            self.skip_ws();
            if self.eat(",") {
                continue;
            }
            if self.eat("]") {
                return Ok(Value::Array(items));
            }
            return Err(self.error("expected ',' or ']' in an array"));
        }
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let digits =
            self.bytes.get(self.pos..self.pos + 4).ok_or_else(|| self.error("truncated \\u escape"))?;
        let text = std::str::from_utf8(digits).map_err(|_| self.error("invalid \\u escape"))?;
        let v = u32::from_str_radix(text, 16).map_err(|_| self.error("invalid \\u escape"))?;
        self.pos += 4;
        Ok(v)
    }

    fn string(&mut self) -> Result<String, ParseError> {
        self.pos += 1; // opening quote
        let mut out = String::new();
        loop {
            let start = self.pos;
            while let Some(&b) = self.bytes.get(self.pos) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            // The input is a &str and we only stopped at ASCII bytes, so this
            // slice is on character boundaries.
            out.push_str(&self.text[start..self.pos]);
            match self.bytes.get(self.pos) {
                None => return Err(self.error("unterminated string (truncated record?)")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let esc = *self.bytes.get(self.pos).ok_or_else(|| self.error("unterminated string"))?;
                    self.pos += 1;
                    match esc {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let first = self.hex4()?;
                            let cp = if (0xD800..0xDC00).contains(&first) && self.eat("\\u") {
                                let second = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&second) {
                                    return Err(self.error(
                                        "lone UTF-16 surrogate in a string (retrygate cannot verify it)",
                                    ));
                                }
                                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                            } else {
                                first
                            };
                            let c = char::from_u32(cp).ok_or_else(|| {
                                self.error("lone UTF-16 surrogate in a string (retrygate cannot verify it)")
                            })?;
                            out.push(c);
                        }
                        _ => return Err(self.error("invalid escape in a string")),
                    }
                }
                Some(_) => return Err(self.error("control character inside a string")),
            }
        }
    }

    fn number(&mut self) -> Result<Value, ParseError> {
        let start = self.pos;
        let digits = |p: &mut Self| {
            let s = p.pos;
            while let Some(b'0'..=b'9') = p.bytes.get(p.pos) {
                p.pos += 1;
            }
            p.pos - s
        };
        self.eat("-");
        match self.bytes.get(self.pos) {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return Err(self.error("expected a digit")),
        }
        let int_end = self.pos;
        let mut is_float = false;
        if self.bytes.get(self.pos) == Some(&b'.')
            && matches!(self.bytes.get(self.pos + 1), Some(b'0'..=b'9'))
        {
            self.pos += 1;
            digits(self);
            is_float = true;
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.pos) {
            let save = self.pos;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.pos) {
                self.pos += 1;
            }
            if digits(self) == 0 {
                // Python's scanner stops before a bare 'e'; the caller then
                // finds the 'e' where a separator belongs.
                self.pos = save;
            } else {
                is_float = true;
            }
        }
        let text = &self.text[start..self.pos];
        if is_float {
            // Rust's parser is correctly rounded, like CPython's; overflow
            // gives infinity, as `float('1e400')` does.
            let f: f64 = text.parse().map_err(|_| self.error("invalid number"))?;
            return Ok(Value::Float(f));
        }
        let int_text = &self.text[start..int_end];
        let (negative, magnitude) = match int_text.strip_prefix('-') {
            Some(m) => (true, m),
            None => (false, int_text),
        };
        if magnitude.len() > MAX_INT_DIGITS {
            return Err(self.error(&format!(
                "integer longer than {MAX_INT_DIGITS} digits (Python refuses to read or write it)"
            )));
        }
        if negative && magnitude != "0" {
            Ok(Value::Int(format!("-{magnitude}")))
        } else {
            Ok(Value::Int(magnitude.to_string()))
        }
    }
}

/// `json.dumps(value, sort_keys=True)`.
pub fn dumps_sorted(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, true, &mut out);
    out
}

/// `json.dumps(value)`: members in the order given (used to write records in
/// a fixed, readable field order).
pub fn dumps(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, false, &mut out);
    out
}

/// The v1 digest: the first 16 hex characters of SHA-256 over
/// `json.dumps(payload, sort_keys=True)` encoded as UTF-8 (all ASCII).
pub fn digest(payload: &Value) -> String {
    let hash = Sha256::digest(dumps_sorted(payload).as_bytes());
    hex::encode(&hash[..8])
}

fn write_value(value: &Value, sort_keys: bool, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Int(s) => out.push_str(s),
        Value::Float(f) => out.push_str(&float_repr(*f)),
        Value::Str(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(item, sort_keys, out);
            }
            out.push(']');
        }
        Value::Object(members) => {
            out.push('{');
            let order = member_order(members, sort_keys);
            for (i, &idx) in order.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let (k, v) = &members[idx];
                write_string(k, out);
                out.push_str(": ");
                write_value(v, sort_keys, out);
            }
            out.push('}');
        }
    }
}

/// The members a Python `dict` built from `members` would hold, in the order
/// `json.dumps` writes them: one per key, holding the last value, placed
/// where the key first appeared (or sorted by code point).
fn member_order(members: &[(String, Value)], sort_keys: bool) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..members.len()).collect();
    // Stable sort by key: among duplicates the last index comes last.
    idx.sort_by(|&a, &b| members[a].0.cmp(&members[b].0));
    let mut kept: Vec<(usize, usize)> = Vec::with_capacity(idx.len()); // (first index, last index)
    for i in idx {
        match kept.last_mut() {
            Some((_, last)) if members[*last].0 == members[i].0 => *last = i,
            _ => kept.push((i, i)),
        }
    }
    if !sort_keys {
        kept.sort_by_key(|&(first, _)| first);
    }
    kept.into_iter().map(|(_, last)| last).collect()
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

/// `repr(float)` in CPython 3: the shortest text that round-trips.
pub fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    // Rust's `{:e}` gives the shortest round-trip digits, e.g. "-1.2345e-7".
    let sci = format!("{x:e}");
    let (mantissa, exp) = match sci.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (sci.as_str(), 0),
    };
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.push_str(&"0".repeat(int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.push_str(&"0".repeat((-exp - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(text: &str) -> String {
        dumps_sorted(&parse(text).unwrap())
    }

    #[test]
    fn serializes_like_python_for_the_fixture_payloads() {
        assert_eq!(
            roundtrip(r#"{"path":"docs/notes/r\u00e9sum\u00e9.md","bytes":77}"#),
            r#"{"bytes": 77, "path": "docs/notes/r\u00e9sum\u00e9.md"}"#
        );
        assert_eq!(digest(&parse(r#"{"path": "clients/checkout.py"}"#).unwrap()), "b408f563a785e5af");
        assert_eq!(
            roundtrip(r#"{"title":"x","draft":false,"reviewers":null,"n":[1,2.5,true]}"#),
            r#"{"draft": false, "n": [1, 2.5, true], "reviewers": null, "title": "x"}"#
        );
    }

    #[test]
    fn floats_follow_python_repr() {
        let cases = [
            (1e16, "1e+16"),
            (1.5e-5, "1.5e-05"),
            (0.0001, "0.0001"),
            (1e-5, "1e-05"),
            (3.0, "3.0"),
            (-0.0, "-0.0"),
            (1234567890123456.0, "1234567890123456.0"),
            (123456789012345680.0, "1.2345678901234568e+17"),
            (1764410001.625, "1764410001.625"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (0.1, "0.1"),
        ];
        for (x, want) in cases {
            assert_eq!(float_repr(x), want, "{x:e}");
        }
        assert_eq!(
            roundtrip("[1e400, -1e400, NaN, 1E2, -0, 0.5e1]"),
            "[Infinity, -Infinity, NaN, 100.0, 0, 5.0]"
        );
    }

    #[test]
    fn strings_escape_like_ensure_ascii() {
        assert_eq!(
            roundtrip(r#""a\"b\\c\/d\u0001\u007f\b\f\n\r\t é 😀""#),
            r#""a\"b\\c/d\u0001\u007f\b\f\n\r\t \u00e9 \ud83d\ude00""#
        );
    }

    #[test]
    fn duplicate_keys_keep_the_last_value_like_a_dict() {
        assert_eq!(roundtrip(r#"{"b":1,"a":2,"b":3}"#), r#"{"a": 2, "b": 3}"#);
        assert_eq!(dumps(&parse(r#"{"b":1,"a":2,"b":3}"#).unwrap()), r#"{"b": 3, "a": 2}"#);
    }

    #[test]
    fn big_integers_stay_exact() {
        let big = "123456789012345678901234567890";
        assert_eq!(roundtrip(big), big);
        assert_eq!(roundtrip("-0"), "0");
    }

    #[test]
    fn rejects_what_python_rejects_with_a_column() {
        let cases = [
            (r#"{"ts": 1, "tool": "edit_file", "payload": "#, "ends where a value was expected"),
            ("{'a': 1}", "property name in double quotes"),
            ("[1, 2", "expected ',' or ']'"),
            ("\"a\u{1}\"", "control character"),
            ("01", "unexpected text after"),
            ("\"\\ud800\"", "lone UTF-16 surrogate"),
            ("[1,]", "expected a JSON value"),
            ("1 2", "unexpected text"),
        ];
        for (text, want) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.message.contains(want), "{text:?}: {err}");
        }
        let err = parse(r#"{"a": tru}"#).unwrap_err();
        assert_eq!(err.column, 7, "{err}");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = "[".repeat(100_000);
        let err = parse(&deep).unwrap_err();
        assert!(err.message.contains("nesting deeper"), "{err}");
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(&ok).is_ok());
    }

    #[test]
    fn overlong_integers_are_refused() {
        let err = parse(&"9".repeat(5000)).unwrap_err();
        assert!(err.message.contains("4300 digits"), "{err}");
    }
}
