//! One side (base or head) of a changed file: its raw text, its masked
//! views and its line index, each built the first time a step needs it, so
//! a file no rule can match is never masked.

use std::cell::OnceCell;

use crate::analyze::rules::lang::{Language, Syntax};
use crate::analyze::rules::mask::{mask, View};
use crate::analyze::rules::spec::RuleSet;

/// How far back [`SideText::enclosing_line`] looks for an open bracket, in bytes.
const ENCLOSING_LOOKBACK: usize = 16 * 1024;

/// One side of a file with its masked views and line index, built lazily.
pub(super) struct SideText<'a> {
    /// The text as it is in the repository (`None`: the side has no text).
    pub(super) raw: Option<&'a str>,
    syntax: Syntax,
    code: OnceCell<Vec<u8>>,
    text: OnceCell<Vec<u8>>,
    line_starts: OnceCell<Vec<usize>>,
    /// A programming language: names are bound to values, so a compared
    /// value written as a name or an expression is computed (values.rs).
    pub(super) binds_names: bool,
    /// Python: `**{"total": 10}` reads as `total = 10` in the code view.
    dict_spreads: bool,
}

impl<'a> SideText<'a> {
    pub(super) fn new(raw: Option<&'a str>, syntax: Syntax) -> Self {
        SideText {
            raw,
            syntax,
            code: OnceCell::new(),
            text: OnceCell::new(),
            line_starts: OnceCell::new(),
            binds_names: true,
            dict_spreads: false,
        }
    }

    /// One side of a file written in `lang`.
    pub(super) fn of_lang(raw: Option<&'a str>, lang: Language) -> Self {
        SideText {
            binds_names: lang.is_code(),
            dict_spreads: lang == Language::Python,
            ..SideText::new(raw, lang.syntax())
        }
    }

    /// Byte offsets where lines start, computed once.
    pub(super) fn starts(&self) -> &[usize] {
        self.line_starts.get_or_init(|| line_starts(self.raw.unwrap_or("")))
    }

    /// The side masked for `view` (`None` when the side has no text).
    pub(super) fn view(&self, view: View) -> Option<&[u8]> {
        let raw = self.raw?;
        let cell = match view {
            View::Code => &self.code,
            View::Text => &self.text,
        };
        Some(cell.get_or_init(|| {
            let mut masked = mask(raw, &self.syntax, view);
            if self.dict_spreads && view == View::Code {
                spread_as_keywords(&mut masked);
            }
            masked
        }))
    }

    /// The 1-based line holding byte `offset`.
    pub(super) fn line_of(&self, offset: usize) -> u32 {
        let starts = self.line_starts.get_or_init(|| line_starts(self.raw.unwrap_or("")));
        starts.partition_point(|&s| s <= offset) as u32
    }

    /// Whether head line `line` (1-based) has anything but blanks in the code view.
    pub(super) fn has_code(&self, line: u32) -> bool {
        let Some(text) = self.view(View::Code) else { return false };
        let starts = self.line_starts.get_or_init(|| line_starts(self.raw.unwrap_or("")));
        let Some(&from) = starts.get(line.saturating_sub(1) as usize) else { return false };
        let to = starts.get(line as usize).copied().unwrap_or(text.len());
        text[from..to].iter().any(|c| !c.is_ascii_whitespace())
    }

    /// Byte ranges covering the added line ranges widened by `margin` lines,
    /// merged where they overlap.
    pub(super) fn regions(&self, added: &[(u32, u32)], margin: u32) -> Vec<(usize, usize)> {
        let raw = self.raw.unwrap_or("");
        let starts = self.line_starts.get_or_init(|| line_starts(raw));
        let start_of = |line: u32| starts.get(line.saturating_sub(1) as usize).copied().unwrap_or(raw.len());
        let mut out: Vec<(usize, usize)> = Vec::new();
        for &(a, b) in added {
            let from = start_of(a.saturating_sub(margin).max(1));
            let to = start_of(b.saturating_add(margin).saturating_add(1));
            match out.last_mut() {
                Some(last) if last.1 >= from => last.1 = last.1.max(to),
                _ => out.push((from, to)),
            }
        }
        out
    }

    /// The line of the innermost bracket (`{`, `(`, `[`) left open before
    /// line `line` begins, in `view`, looked for at most
    /// [`ENCLOSING_LOOKBACK`] bytes back: the block a statement sits in.
    pub(super) fn enclosing_line(&self, view: View, line: u32) -> Option<u32> {
        let text = self.view(view)?;
        let start = *self.starts().get(line.saturating_sub(1) as usize)?;
        let floor = start.saturating_sub(ENCLOSING_LOOKBACK);
        let mut depth = 0u32;
        for i in (floor..start).rev() {
            match text[i] {
                b'}' | b')' | b']' => depth += 1,
                b'{' | b'(' | b'[' if depth == 0 => return Some(self.line_of(i)),
                b'{' | b'(' | b'[' => depth -= 1,
                _ => {}
            }
        }
        None
    }

    /// The raw text of line `line` (1-based), without its line break.
    pub(super) fn line_text(&self, line: u32) -> &str {
        let raw = self.raw.unwrap_or("");
        let starts = self.line_starts.get_or_init(|| line_starts(raw));
        let Some(&from) = starts.get(line.saturating_sub(1) as usize) else { return "" };
        let to = starts.get(line as usize).copied().unwrap_or(raw.len());
        raw[from..to].trim_end_matches(['\n', '\r'])
    }

    /// The lines in `lo..=hi` on which context `ctx` matches in `view`. The
    /// context pattern is matched within those lines only.
    pub(super) fn context_in(&self, set: &RuleSet, ctx: usize, view: View, lo: u32, hi: u32) -> Vec<u32> {
        let Some(text) = self.view(view) else { return Vec::new() };
        let starts = self.line_starts.get_or_init(|| line_starts(self.raw.unwrap_or("")));
        let start_of = |line: u32| starts.get(line.saturating_sub(1) as usize).copied().unwrap_or(text.len());
        let (from, to) = (start_of(lo.max(1)), start_of(hi.saturating_add(1)));
        if from >= to {
            return Vec::new();
        }
        let mut lines: Vec<u32> = set.contexts[ctx]
            .get()
            .find_iter(&text[from..to])
            .map(|m| self.line_of(from + m.start()))
            .collect();
        lines.dedup();
        lines
    }
}

/// Byte offsets where lines start (masking keeps them, so any view will do).
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0).chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|p| p + 1)).collect()
}

/// Rewrites each Python dict literal spread into a call, `**{"total": 10}`,
/// as the keyword arguments it passes, `    total = 10 `, in place (same
/// length, same lines): a rule about `total=` reads both the same way.
/// Only string keys followed by `:` are rewritten; anything else in the
/// braces is left as it is.
fn spread_as_keywords(text: &mut [u8]) {
    let finder = memchr::memmem::Finder::new(b"**{");
    let starts: Vec<usize> = finder.find_iter(text).collect();
    for at in starts {
        let open = at + 2;
        let mut depth = 0usize;
        let mut close = None;
        for (i, &c) in text.iter().enumerate().skip(open) {
            match c {
                b'{' | b'(' | b'[' => depth += 1,
                b'}' | b')' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else { continue };
        if text[close] != b'}' {
            continue;
        }
        // Keys at the top level of the braces: `"name"` then `:`.
        let mut i = open + 1;
        let mut depth = 0usize;
        while i < close {
            let c = text[i];
            match c {
                b'{' | b'(' | b'[' => depth += 1,
                b'}' | b')' | b']' => depth = depth.saturating_sub(1),
                b'"' | b'\'' if depth == 0 => {
                    let Some(len) = text[i + 1..close].iter().position(|&q| q == c) else { break };
                    let end = i + 1 + len;
                    let key_ok =
                        len > 0 && text[i + 1..end].iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_');
                    let mut colon = end + 1;
                    while colon < close && text[colon] == b' ' {
                        colon += 1;
                    }
                    if key_ok && text.get(colon) == Some(&b':') {
                        text[i] = b' ';
                        text[end] = b' ';
                        text[colon] = b'=';
                    }
                    i = end;
                }
                _ => {}
            }
            i += 1;
        }
        text[at] = b' ';
        text[at + 1] = b' ';
        text[open] = b' ';
        text[close] = b' ';
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::rules::lang::Language;

    fn side(text: &str) -> SideText<'_> {
        SideText::new(Some(text), Language::Python.syntax())
    }

    #[test]
    fn lines_are_found_by_offset_and_read_without_their_break() {
        let s = side("a = 1\r\nb = 2\nc");
        assert_eq!(s.starts(), &[0, 7, 13]);
        assert_eq!((s.line_of(0), s.line_of(6), s.line_of(7), s.line_of(13)), (1, 1, 2, 3));
        assert_eq!((s.line_text(1), s.line_text(3), s.line_text(9)), ("a = 1", "c", ""));
    }

    #[test]
    fn regions_widen_by_the_margin_and_merge_where_they_overlap() {
        let text = "x\n".repeat(20);
        let s = side(&text);
        // Lines 5 and 8 widened by 2 overlap: one region, lines 3..=10.
        assert_eq!(s.regions(&[(5, 5), (8, 8)], 2), vec![(4, 20)]);
        // Far apart: two regions; the first line clamps at the top.
        assert_eq!(s.regions(&[(1, 1), (15, 15)], 1), vec![(0, 4), (26, 32)]);
    }

    #[test]
    fn code_lines_and_context_ignore_comments() {
        let s = side("@retry\n# @retry\n\nx = 1\n");
        assert!(s.has_code(1) && !s.has_code(2) && !s.has_code(3) && s.has_code(4));
        assert!(!s.has_code(9), "past the end");
        assert!(SideText::new(None, Language::Python.syntax()).view(View::Code).is_none());
    }
}
