//! A language-neutral token stream over masked code: names (dotted paths
//! joined into one token), numbers, the string literals the masker kept,
//! punctuation, and line breaks, each with its line.
//!
//! The settings floor reads assignments, keyword arguments, object entries
//! and setter calls the same way in every C-like, Python-like or Ruby-like
//! language, so one tokenizer serves them all. `a.b.c`, `a::b`, `a->b`,
//! `$a`, `@a` and `self.a` all become one [`Tok::Name`] with `.` between
//! parts.

/// One token.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// An identifier or a dotted path of identifiers (`time.Second`).
    Name(String),
    /// A numeric literal, with any letters that followed it (`3u32`, `10L`,
    /// `5s` in a language that has duration literals).
    Num(f64, String),
    /// A string literal's content (only those the masker kept: tokens, not prose).
    Str(String),
    /// Punctuation: one to three characters (`=`, `==`, `=>`, `:=`, `??`, `...`).
    Punct(&'static str),
    /// A line break outside brackets matters to Python, Go, Ruby, Kotlin.
    Newline,
}

/// A token and the 1-based line it starts on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub(crate) tok: Tok,
    pub(crate) line: u32,
}

const PUNCTS: &[&str] = &[
    "...", "**=", "===", "!==", "<<=", ">>=", "=>", "==", "!=", "<=", ">=", ":=", "??", "||", "&&", "+=",
    "-=", "*=", "/=", "++", "--", "**", "//", "::", "->", "?.", "=", ":", ";", ",", "(", ")", "[", "]", "{",
    "}", "+", "-", "*", "/", "%", "<", ">", "!", "?", "|", "&", "^", "~", ".", "#",
];

/// Tokens of `masked` (comments and prose strings already blanked).
pub(crate) fn tokenize(masked: &[u8]) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::new();
    let mut line: u32 = 1;
    let mut i = 0;
    let n = masked.len();
    while i < n {
        let c = masked[i];
        if c == b'\n' {
            out.push(Token { tok: Tok::Newline, line });
            line += 1;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && masked.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let start = i;
            let hex = c == b'0' && matches!(masked.get(i + 1), Some(b'x' | b'X'));
            if hex {
                i += 2;
                while i < n && (masked[i].is_ascii_hexdigit() || masked[i] == b'_') {
                    i += 1;
                }
                let digits: String =
                    String::from_utf8_lossy(&masked[start + 2..i]).chars().filter(|c| *c != '_').collect();
                let v = u64::from_str_radix(&digits, 16).map(|v| v as f64).unwrap_or(f64::NAN);
                out.push(Token { tok: Tok::Num(v, String::new()), line });
                continue;
            }
            while i < n && (masked[i].is_ascii_digit() || masked[i] == b'_') {
                i += 1;
            }
            if i + 1 < n && masked[i] == b'.' && masked[i + 1].is_ascii_digit() {
                i += 1;
                while i < n && (masked[i].is_ascii_digit() || masked[i] == b'_') {
                    i += 1;
                }
            }
            if i + 1 < n
                && matches!(masked[i], b'e' | b'E')
                && (masked[i + 1].is_ascii_digit()
                    || (matches!(masked[i + 1], b'+' | b'-')
                        && masked.get(i + 2).is_some_and(u8::is_ascii_digit)))
            {
                i += 2;
                while i < n && masked[i].is_ascii_digit() {
                    i += 1;
                }
            }
            let digits: String =
                String::from_utf8_lossy(&masked[start..i]).chars().filter(|c| *c != '_').collect();
            let suffix_start = i;
            while i < n && (masked[i].is_ascii_alphanumeric() || masked[i] == b'_') {
                i += 1;
            }
            let suffix = String::from_utf8_lossy(&masked[suffix_start..i]).into_owned();
            let v = digits.parse::<f64>().unwrap_or(f64::NAN);
            out.push(Token { tok: Tok::Num(v, suffix), line });
            continue;
        }
        if is_name_start(c) {
            let (name, end) = read_path(masked, i);
            i = end;
            out.push(Token { tok: Tok::Name(name), line });
            continue;
        }
        if matches!(c, b'"' | b'\'' | b'`') {
            // The masker left this literal in place, so it is a token; a
            // blanked one is all spaces and reads as an empty string. A
            // triple quote runs to its closing triple, across lines.
            let triple = masked[i..].starts_with(&[c, c, c]);
            let open = if triple { 3 } else { 1 };
            let mut j = i + open;
            let start_line = line;
            let mut closed = false;
            while j < n {
                if triple && masked[j..].starts_with(&[c, c, c]) {
                    closed = true;
                    break;
                }
                if !triple && masked[j] == c {
                    closed = true;
                    break;
                }
                if masked[j] == b'\\' {
                    j += 1;
                } else if masked[j] == b'\n' {
                    if !triple && c != b'`' {
                        break;
                    }
                    line += 1;
                }
                j += 1;
            }
            let content = String::from_utf8_lossy(&masked[i + open..j.min(n)]).trim().to_string();
            out.push(Token { tok: Tok::Str(content), line: start_line });
            // An unclosed one-line string ends before its line break, which
            // is counted by the loop.
            i = if closed { (j + open).min(n) } else { j };
            continue;
        }
        let rest = &masked[i..];
        match PUNCTS.iter().find(|p| rest.starts_with(p.as_bytes())) {
            Some(p) => {
                out.push(Token { tok: Tok::Punct(p), line });
                i += p.len();
            }
            None => i += 1,
        }
    }
    out
}

fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c == b'@' || c >= 0x80
}

fn is_name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// Reads `a.b::c->d` from `from`, returns it as `a.b.c.d` and where it ends.
/// Sigils (`$x`, `@x`, `@@x`) are dropped: `@max_retries` is `max_retries`.
fn read_path(b: &[u8], from: usize) -> (String, usize) {
    let mut out = String::new();
    let mut i = from;
    loop {
        while i < b.len() && matches!(b[i], b'$' | b'@') {
            i += 1;
        }
        let start = i;
        while i < b.len() && is_name_byte(b[i]) {
            i += 1;
        }
        out.push_str(&String::from_utf8_lossy(&b[start..i]));
        let sep = if b[i..].starts_with(b"::") || b[i..].starts_with(b"->") || b[i..].starts_with(b"?.") {
            2
        } else if b[i..].starts_with(b".") {
            1
        } else {
            0
        };
        let after = i + sep;
        if sep > 0 && after < b.len() && (b[after].is_ascii_alphabetic() || b[after] == b'_') {
            out.push('.');
            i = after;
        } else {
            return (out, i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        tokenize(s.as_bytes()).into_iter().map(|t| t.tok).filter(|t| *t != Tok::Newline).collect()
    }

    #[test]
    fn paths_join_and_sigils_drop() {
        assert_eq!(
            toks("self.max_retries = $x::y->z"),
            [Tok::Name("self.max_retries".into()), Tok::Punct("="), Tok::Name("x.y.z".into())]
        );
        assert_eq!(toks("@retries"), [Tok::Name("retries".into())]);
    }

    #[test]
    fn numbers_keep_their_suffix_and_underscores_vanish() {
        assert_eq!(toks("10_000u32"), [Tok::Num(10000.0, "u32".into())]);
        assert_eq!(toks("1.5e3"), [Tok::Num(1500.0, String::new())]);
        assert_eq!(toks("0x10"), [Tok::Num(16.0, String::new())]);
        assert_eq!(
            toks("5.seconds"),
            [Tok::Num(5.0, String::new()), Tok::Punct("."), Tok::Name("seconds".into())]
        );
    }

    #[test]
    fn docstrings_and_unclosed_quotes_keep_line_numbers() {
        let t = tokenize(b"\"\"\"\n   \n\"\"\"\nx = 1\ny = 'it\nz = 2\n");
        let line_of = |name: &str| t.iter().find(|x| x.tok == Tok::Name(name.into())).map(|x| x.line);
        assert_eq!(line_of("x"), Some(4));
        assert_eq!(line_of("z"), Some(6));
    }

    #[test]
    fn strings_and_lines() {
        let t = tokenize(b"a = \"30s\"\nb ?? 3");
        assert_eq!(t[2].tok, Tok::Str("30s".into()));
        assert_eq!(t[4].line, 2);
        assert_eq!(t[5].tok, Tok::Punct("??"));
    }
}
