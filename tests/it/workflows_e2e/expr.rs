//! The `${{ }}` expressions the workflows and `action.yml` use, evaluated as
//! GitHub does: contexts as JSON (a missing property is `null`), string
//! literals in single quotes, `==`/`!=` (strings compared without case, mixed
//! types as numbers), `&&`/`||` returning an operand, `!`, parentheses, and
//! the functions `always()`, `success()`, `failure()`, `contains()`.
//! Anything else is an error naming the expression, so a workflow that starts
//! using more fails the test instead of being read wrongly.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Str(String),
    Num(f64),
    Ident(String),
    Dot,
    LParen,
    RParen,
    Comma,
    Op(&'static str),
}

fn tokens(src: &str) -> Result<Vec<Tok>, String> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if ch == '\'' {
            let mut s = String::new();
            i += 1;
            loop {
                match c.get(i) {
                    None => return Err(format!("unterminated string in `{src}`")),
                    Some('\'') if c.get(i + 1) == Some(&'\'') => {
                        s.push('\'');
                        i += 2;
                    }
                    Some('\'') => {
                        i += 1;
                        break;
                    }
                    Some(x) => {
                        s.push(*x);
                        i += 1;
                    }
                }
            }
            out.push(Tok::Str(s));
        } else if ch.is_ascii_digit() {
            let start = i;
            while i < c.len() && (c[i].is_ascii_digit() || c[i] == '.') {
                i += 1;
            }
            let s: String = c[start..i].iter().collect();
            out.push(Tok::Num(s.parse().map_err(|e| format!("{s} in `{src}`: {e}"))?));
        } else if ch.is_ascii_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_ascii_alphanumeric() || c[i] == '_' || c[i] == '-') {
                i += 1;
            }
            out.push(Tok::Ident(c[start..i].iter().collect()));
        } else {
            let two: String = c[i..(i + 2).min(c.len())].iter().collect();
            let op = match two.as_str() {
                "==" => Some("=="),
                "!=" => Some("!="),
                "&&" => Some("&&"),
                "||" => Some("||"),
                _ => None,
            };
            if let Some(op) = op {
                out.push(Tok::Op(op));
                i += 2;
                continue;
            }
            out.push(match ch {
                '.' => Tok::Dot,
                '(' => Tok::LParen,
                ')' => Tok::RParen,
                ',' => Tok::Comma,
                '!' => Tok::Op("!"),
                _ => return Err(format!("unsupported character `{ch}` in `{src}`")),
            });
            i += 1;
        }
    }
    Ok(out)
}

struct Parser<'a> {
    toks: Vec<Tok>,
    pos: usize,
    ctx: &'a Value,
    /// Whether the job has failed so far (for `success()`/`failure()`).
    failed: bool,
    src: &'a str,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn or(&mut self) -> Result<Value, String> {
        let mut left = self.and()?;
        while self.peek() == Some(&Tok::Op("||")) {
            self.pos += 1;
            let right = self.and()?;
            left = if truthy(&left) { left } else { right };
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Value, String> {
        let mut left = self.cmp()?;
        while self.peek() == Some(&Tok::Op("&&")) {
            self.pos += 1;
            let right = self.cmp()?;
            left = if truthy(&left) { right } else { left };
        }
        Ok(left)
    }

    fn cmp(&mut self) -> Result<Value, String> {
        let left = self.unary()?;
        match self.peek() {
            Some(Tok::Op("==")) => {
                self.pos += 1;
                let right = self.unary()?;
                Ok(Value::Bool(equal(&left, &right)))
            }
            Some(Tok::Op("!=")) => {
                self.pos += 1;
                let right = self.unary()?;
                Ok(Value::Bool(!equal(&left, &right)))
            }
            _ => Ok(left),
        }
    }

    fn unary(&mut self) -> Result<Value, String> {
        if self.peek() == Some(&Tok::Op("!")) {
            self.pos += 1;
            return Ok(Value::Bool(!truthy(&self.unary()?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Value, String> {
        match self.next() {
            Some(Tok::Str(s)) => Ok(Value::String(s)),
            Some(Tok::Num(n)) => Ok(serde_json::json!(n)),
            Some(Tok::LParen) => {
                let v = self.or()?;
                match self.next() {
                    Some(Tok::RParen) => Ok(v),
                    _ => Err(format!("missing `)` in `{}`", self.src)),
                }
            }
            Some(Tok::Ident(name)) if self.peek() == Some(&Tok::LParen) => {
                self.pos += 1;
                let mut args = Vec::new();
                if self.peek() != Some(&Tok::RParen) {
                    loop {
                        args.push(self.or()?);
                        match self.next() {
                            Some(Tok::Comma) => continue,
                            Some(Tok::RParen) => break,
                            _ => return Err(format!("bad arguments to {name}() in `{}`", self.src)),
                        }
                    }
                } else {
                    self.pos += 1;
                }
                call(&name, &args, self.failed).map_err(|e| format!("{e} in `{}`", self.src))
            }
            Some(Tok::Ident(name)) => match name.as_str() {
                "true" => Ok(Value::Bool(true)),
                "false" => Ok(Value::Bool(false)),
                "null" => Ok(Value::Null),
                _ => {
                    let mut v = self.ctx.get(&name).cloned().unwrap_or(Value::Null);
                    while self.peek() == Some(&Tok::Dot) {
                        self.pos += 1;
                        match self.next() {
                            Some(Tok::Ident(p)) => v = v.get(&p).cloned().unwrap_or(Value::Null),
                            _ => return Err(format!("a property name must follow `.` in `{}`", self.src)),
                        }
                    }
                    Ok(v)
                }
            },
            t => Err(format!("unexpected {t:?} in `{}`", self.src)),
        }
    }
}

fn call(name: &str, args: &[Value], failed: bool) -> Result<Value, String> {
    match (name, args) {
        ("always", []) => Ok(Value::Bool(true)),
        ("success", []) => Ok(Value::Bool(!failed)),
        ("failure", []) => Ok(Value::Bool(failed)),
        ("contains", [hay, needle]) => Ok(Value::Bool(match hay {
            Value::Array(items) => items.iter().any(|i| equal(i, needle)),
            _ => to_string(hay).to_lowercase().contains(&to_string(needle).to_lowercase()),
        })),
        _ => Err(format!("unsupported function {name}() with {} arguments", args.len())),
    }
}

/// GitHub's truthiness: `null`, `false`, `0`, `''` are false.
pub(super) fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

fn number(v: &Value) -> f64 {
    match v {
        Value::Null => 0.0,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        Value::String(s) if s.trim().is_empty() => 0.0,
        Value::String(s) => s.trim().parse().unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}

fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => x.eq_ignore_ascii_case(y),
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => a == b,
        _ => number(a) == number(b),
    }
}

/// A value as it is spliced into a string.
pub(super) fn to_string(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(0.0);
            if f.fract() == 0.0 {
                format!("{}", f as i64)
            } else {
                n.to_string()
            }
        }
        other => other.to_string(),
    }
}

/// Evaluates one expression (without `${{ }}`).
pub(super) fn eval(src: &str, ctx: &Value, failed: bool) -> Result<Value, String> {
    let mut p = Parser { toks: tokens(src)?, pos: 0, ctx, failed, src };
    let v = p.or()?;
    if p.pos != p.toks.len() {
        return Err(format!("trailing tokens in `{src}`"));
    }
    Ok(v)
}

/// Replaces every `${{ … }}` in `s` by its value.
pub(super) fn interpolate(s: &str, ctx: &Value) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("}}").ok_or_else(|| format!("unterminated `${{{{` in `{s}`"))?;
        out.push_str(&to_string(&eval(&rest[start + 3..start + end], ctx, false)?));
        rest = &rest[start + end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// An `if:` condition: with or without `${{ }}`; without a status function
/// it holds only while the job has not failed, as on GitHub.
pub(super) fn condition(src: Option<&str>, ctx: &Value, failed: bool) -> Result<bool, String> {
    let Some(src) = src else { return Ok(!failed) };
    let trimmed = src.trim();
    let inner = trimmed.strip_prefix("${{").and_then(|t| t.strip_suffix("}}")).unwrap_or(trimmed);
    let status = ["always()", "success()", "failure()", "cancelled()"].iter().any(|f| inner.contains(f));
    let v = truthy(&eval(inner, ctx, failed)?);
    Ok(if status { v } else { v && !failed })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn operators_return_operands_and_compare_as_github_does() {
        let ctx = json!({"github": {"event_name": "issue_comment", "event": {"issue": {"number": 7}, "comment": {"body": "/RetryGate sign-off abc", "id": 9}}}});
        assert_eq!(
            eval("github.event.pull_request.number || github.event.issue.number", &ctx, false),
            Ok(json!(7))
        );
        assert_eq!(
            eval("(github.event_name == 'issue_comment' && !contains(github.event.comment.body, '/retrygate sign-off')) && github.event.comment.id || 'gate'", &ctx, false),
            Ok(json!("gate"))
        );
        assert_eq!(eval("github.event_name == 'ISSUE_COMMENT'", &ctx, false), Ok(json!(true)));
        assert_eq!(interpolate("a-${{ github.event.issue.number }}-b", &ctx), Ok("a-7-b".into()));
        assert!(!condition(Some("github.event_name == 'pull_request'"), &ctx, false).unwrap());
        assert!(!condition(Some("github.event_name == 'issue_comment'"), &ctx, true).unwrap());
        assert!(condition(Some("always() && github.event_name == 'issue_comment'"), &ctx, true).unwrap());
    }

    #[test]
    fn what_it_does_not_know_is_an_error_naming_the_expression() {
        let ctx = json!({});
        assert_eq!(
            eval("format('{0}', 1)", &ctx, false),
            Err("unsupported function format() with 2 arguments in `format('{0}', 1)`".into())
        );
        assert_eq!(eval("a[0]", &ctx, false), Err("unsupported character `[` in `a[0]`".into()));
        assert_eq!(interpolate("${{ a", &ctx), Err("unterminated `${{` in `${{ a`".into()));
    }
}
