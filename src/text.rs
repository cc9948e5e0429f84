//! Small text helpers every renderer shares: a commit's short form, a string
//! cut to a length, a string forced onto one line. They
//! live once, here, so that a SHA reads the same in the terminal, the PR
//! comment and the check run, and so that every renderer makes the same
//! characters visible.

use std::fmt::Write as _;

/// A panic caught at a boundary ([`catch_panic`]): a bug, which every
/// boundary reports the same way, as "could not decide", never as a pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Panicked {
    /// What the panic was raised with (`panic!("...")`).
    pub(crate) message: String,
}

impl std::fmt::Display for Panicked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "internal error ({}); this is a bug in retrygate, please report it; the change is treated as blocked",
            self.message
        )
    }
}

impl std::error::Error for Panicked {}

/// Runs `f`; a panic on this thread becomes [`Panicked`] with its message.
/// The gate (`gate::check`) and the binary's exit boundary both use it, so
/// a bug reads the same wherever it is caught.
pub fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, Panicked> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("unknown panic");
        Panicked { message: message.to_string() }
    })
}

/// How many hex digits of a commit are shown: GitHub's own short form, so a
/// maintainer can match it by eye against the PR's commit list.
pub(crate) const SHORT_SHA_CHARS: usize = 7;

/// The first [`SHORT_SHA_CHARS`] characters of a commit id (the whole string
/// when it is shorter).
pub(crate) fn short_sha(sha: &str) -> &str {
    sha.get(..SHORT_SHA_CHARS).unwrap_or(sha)
}

/// `1 finding`, `2 findings`: counts read as English in every output, never
/// as `finding(s)`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `s` cut to at most `max_chars` characters, with `…` when something was
/// cut. The cut falls at the last space before the limit when there is one in
/// its second half, so a reader never sees half a word ("artif…").
pub(crate) fn truncate(s: &str, max_chars: usize) -> String {
    match s.char_indices().nth(max_chars) {
        Some((i, _)) => {
            let head = &s[..i];
            let at_word = head.rfind(' ').filter(|&sp| sp >= head.len() / 2).unwrap_or(head.len());
            format!("{}…", head[..at_word].trim_end())
        }
        None => s.to_string(),
    }
}

/// `s` on one line: `\n`, `\r`, `\t`, `\\`, every other control character
/// and the bidirectional-override characters ("Trojan Source", which make a
/// line read differently from what it says) are written as escapes, the way
/// Rust's `{:?}` would, without the quotes.
pub(crate) fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() || is_bidi_control(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// Unicode's explicit direction marks, embeddings, overrides and isolates.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Whether every bracket in a piece of text closes, in order.
pub(crate) fn brackets_balanced(text: &str) -> bool {
    let mut depth = 0i32;
    for ch in text.chars() {
        match ch {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_one_error_with_its_message() {
        let caught = catch_panic(|| -> u8 { panic!("boom {}", 1) }).unwrap_err();
        assert_eq!(
            caught.to_string(),
            "internal error (boom 1); this is a bug in retrygate, please report it; the change is treated as blocked"
        );
        assert_eq!(
            catch_panic(|| -> u8 { std::panic::panic_any(7u8) }).unwrap_err().message,
            "unknown panic"
        );
        assert_eq!(catch_panic(|| 3), Ok(3), "no panic, the value");
    }

    #[test]
    fn truncate_cuts_between_words_and_plural_reads_as_english() {
        assert_eq!(truncate("the Actions artifact tool-ledger", 23), "the Actions artifact…");
        assert_eq!(truncate("short", 23), "short");
        // One long word: cut inside it rather than lose most of the text.
        assert_eq!(truncate("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 10), "aaaaaaaaaa…");
        assert_eq!(truncate("ééé ééééééé", 6), "ééé…");
        assert_eq!(
            (plural(1, "retry", "retries"), plural(3, "retry", "retries")),
            ("1 retry".into(), "3 retries".into())
        );
    }

    #[test]
    fn short_sha_keeps_githubs_seven_digits_and_short_input_whole() {
        assert_eq!(short_sha("0123456789abcdef"), "0123456");
        assert_eq!(short_sha("abc"), "abc");
        // Not a char boundary at 7: the whole string, never a panic.
        assert_eq!(short_sha("ééééé"), "ééééé");
    }

    #[test]
    fn truncate_marks_a_cut_and_counts_characters_not_bytes() {
        assert_eq!(truncate("héllo", 5), "héllo");
        assert_eq!(truncate("héllo world", 5), "héllo…");
    }

    #[test]
    fn one_line_makes_controls_and_bidi_overrides_visible() {
        assert_eq!(one_line("a\nb\tc\\"), "a\\nb\\tc\\\\");
        assert_eq!(one_line("x\u{202e}y\u{7}"), "x\\u{202e}y\\u{7}");
        assert_eq!(one_line("plain"), "plain");
    }
}
