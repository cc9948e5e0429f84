//! Blanks out comments and prose strings so that code rules match code only.
//!
//! Masking replaces every byte of a comment (and, in the `code` view, of a
//! string literal that reads like prose) with a space and keeps newlines, so
//! byte offsets and line numbers in the masked text are those of the file.
//!
//! A string literal is kept when its content is a single token: at most
//! [`MAX_TOKEN_STRING`] bytes with no whitespace and no `=`. That keeps what
//! configuration is made of (`"max_attempts"`, `'POST'`, `"5xx,reset"`,
//! `"true"`) and blanks what people write about it (`"retries=6 failed"`,
//! `"we retry 5 times"`).

use super::lang::Syntax;

/// Longest string literal that is still read as a token (a key, a method, a flag).
pub(crate) const MAX_TOKEN_STRING: usize = 64;

/// Which parts of a file a rule sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum View {
    /// Comments and prose strings blanked (the default for rules).
    Code,
    /// Only comments blanked: for rules whose configuration lives inside a
    /// string, such as a gRPC service config in a Go raw string.
    Text,
}

/// Returns the bytes of `text` with comments (and, for [`View::Code`], prose
/// strings) replaced by spaces. The result has the same length and line breaks.
pub fn mask(text: &str, syntax: &Syntax, view: View) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let n = b.len();
    let mut openers = Openers::new(syntax);
    let mut i = 0;
    while i < n {
        // Most bytes open nothing: jump to the next byte that might.
        i = openers.next(b, i);
        if i >= n {
            break;
        }
        let c = b[i];
        if let Some((open, close)) = syntax.block_comment {
            if b[i..].starts_with(open) {
                let end = find(b, i + open.len(), close).map_or(n, |e| e + close.len());
                blank(&mut out, i, end);
                i = end;
                continue;
            }
        }
        if syntax.line_comments.iter().any(|o| b[i..].starts_with(o))
            && (!syntax.comment_needs_space || i == 0 || b[i - 1].is_ascii_whitespace())
        {
            let end = line_end(b, i);
            blank(&mut out, i, end);
            i = end;
            continue;
        }
        if syntax.triple_quotes && (b[i..].starts_with(b"\"\"\"") || b[i..].starts_with(b"'''")) {
            let delim = &b[i..i + 3];
            let end = find(b, i + 3, delim).unwrap_or(n);
            if view == View::Code && !is_token(&b[i + 3..end]) {
                blank(&mut out, i + 3, end);
            }
            i = (end + 3).min(n);
            continue;
        }
        let opens_string = (syntax.quotes.contains(&c) || (c == b'`' && syntax.backtick_multiline))
            && (!syntax.quote_needs_separator || i == 0 || is_separator(b[i - 1]));
        if opens_string {
            let multiline = c == b'`';
            match string_end(b, i + 1, c, multiline) {
                Some(end) => {
                    if view == View::Code && !is_token(&b[i + 1..end]) {
                        blank(&mut out, i + 1, end);
                    }
                    i = end + 1;
                }
                // An unterminated quote on this line is an apostrophe, not a string.
                None => i += 1,
            }
            continue;
        }
        i += 1;
    }
    // Bytes, not a String: rules match byte-wise, and only whole
    // ASCII-delimited runs were replaced, so line breaks and offsets hold.
    out
}

/// Finds the next byte that may open a comment or a string, with memchr
/// over groups of up to three bytes (each group's next hit is cached).
struct Openers {
    groups: Vec<(Vec<u8>, Option<usize>, usize)>,
}

impl Openers {
    fn new(syntax: &Syntax) -> Openers {
        let mut bytes: Vec<u8> = syntax.line_comments.iter().filter_map(|o| o.first().copied()).collect();
        if let Some((open, _)) = syntax.block_comment {
            bytes.extend(open.first());
        }
        bytes.extend_from_slice(syntax.quotes);
        if syntax.backtick_multiline {
            bytes.push(b'`');
        }
        bytes.sort_unstable();
        bytes.dedup();
        // (bytes, cached next hit, position the cache was computed from)
        Openers { groups: bytes.chunks(3).map(|c| (c.to_vec(), None, usize::MAX)).collect() }
    }

    fn next(&mut self, b: &[u8], from: usize) -> usize {
        let mut best = b.len();
        for (set, hit, at) in &mut self.groups {
            let stale = *at == usize::MAX || hit.is_some_and(|h| h < from) || from < *at;
            if stale {
                let hay = &b[from..];
                let found = match set.as_slice() {
                    [x] => memchr::memchr(*x, hay),
                    [x, y] => memchr::memchr2(*x, *y, hay),
                    [x, y, z] => memchr::memchr3(*x, *y, *z, hay),
                    _ => None,
                };
                *hit = found.map(|p| from + p);
                *at = from;
            }
            if let Some(h) = *hit {
                best = best.min(h);
            }
        }
        best
    }
}

fn is_separator(c: u8) -> bool {
    c.is_ascii_whitespace() || matches!(c, b':' | b'=' | b'[' | b'{' | b',' | b'(' | b'-')
}

fn is_token(content: &[u8]) -> bool {
    content.len() <= MAX_TOKEN_STRING && !content.iter().any(|&c| c.is_ascii_whitespace() || c == b'=')
}

fn blank(out: &mut [u8], start: usize, end: usize) {
    for c in &mut out[start..end] {
        if *c != b'\n' {
            *c = b' ';
        }
    }
}

fn line_end(b: &[u8], from: usize) -> usize {
    memchr::memchr(b'\n', &b[from..]).map_or(b.len(), |p| from + p)
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if from > b.len() {
        return None;
    }
    memchr::memmem::find(&b[from..], needle).map(|p| from + p)
}

/// The index of the closing quote, honouring backslash escapes.
fn string_end(b: &[u8], from: usize, quote: u8, multiline: bool) -> Option<usize> {
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'\n' if !multiline => return None,
            c if c == quote => return Some(i),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::lang::Language;
    use super::*;

    fn code(lang: Language, text: &str) -> String {
        let m = String::from_utf8(mask(text, &lang.syntax(), View::Code)).unwrap();
        assert_eq!(m.len(), text.len(), "masking must keep offsets");
        assert_eq!(m.lines().count(), text.lines().count(), "masking must keep lines");
        m
    }

    #[test]
    fn python_comments_and_prose_strings_are_blanked_tokens_kept() {
        let m = code(
            Language::Python,
            "x = f(retries=2)  # retries=6\nlog(\"retries=6 now\")\ncfg = {\"max_attempts\": 3}\n",
        );
        assert!(m.contains("retries=2"));
        assert!(!m.contains("retries=6"), "{m}");
        assert!(m.contains("\"max_attempts\": 3"));
    }

    #[test]
    fn python_docstrings_are_blanked_across_lines() {
        let m = code(
            Language::Python,
            "def f():\n    \"\"\"Retry(total=9)\n    jitter=False\n    \"\"\"\n    pass\n",
        );
        assert!(!m.contains("total=9") && !m.contains("jitter"), "{m}");
    }

    #[test]
    fn c_like_line_and_block_comments() {
        let m =
            code(Language::TypeScript, "a({ retries: 3 }) // retries: 9\n/* retries: 8\n retries: 7 */ b\n");
        assert!(m.contains("retries: 3"));
        assert!(!m.contains('9') && !m.contains('8') && !m.contains('7'), "{m}");
        assert!(m.ends_with(" b\n"));
    }

    #[test]
    fn go_raw_strings_are_blanked_in_code_view_and_kept_in_text_view() {
        let src = "const cfg = `{\"retryPolicy\": {\"maxAttempts\": 4}}`\n";
        assert!(!code(Language::Go, src).contains("maxAttempts"));
        let t = String::from_utf8(mask(src, &Language::Go.syntax(), View::Text)).unwrap();
        assert!(t.contains("\"maxAttempts\": 4"));
    }

    #[test]
    fn yaml_hash_needs_space_and_apostrophes_in_plain_scalars_are_text() {
        let m = code(Language::Yaml, "url: http://h/#frag\ndesc: don't stop\nattempts: 3 # attempts: 9\n");
        assert!(m.contains("http://h/#frag"));
        assert!(m.contains("don't stop"));
        assert!(m.contains("attempts: 3") && !m.contains('9'), "{m}");
    }

    #[test]
    fn unterminated_quote_and_non_ascii_are_safe() {
        let m = code(Language::Python, "s = 'héllo wörld\nretries=3 # ünïcode\n");
        assert!(m.contains("retries=3"));
        let m = code(Language::Python, "s = \"naïve retry text\"\n");
        assert!(!m.contains("retry"));
    }
}
