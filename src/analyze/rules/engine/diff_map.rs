//! Diff mapping: which base lines a change deleted or replaced, and where
//! each of them went in the head.
//!
//! The prefilter needs the changed base lines cheaply, so
//! [`base_changed_lines`] walks both sides once, without a diff. The
//! `removed` judgement needs to know exactly where a base line went, so
//! [`Spots`] indexes a real line diff (Myers, with a time limit) by base line.

use similar::{Algorithm, DiffOp};

use super::side::SideText;
use crate::changeset::FileChange;

/// Where a removed base line went in the head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Spot {
    /// The base line was replaced by head lines `a..=b`.
    Replaced(u32, u32),
    /// The base line was deleted; the gap lies after head line `n` (0 = top).
    Gap(u32),
}

/// Base lines (1-based, inclusive ranges) the change may have deleted or
/// replaced, without a second diff: the head lines outside `added` are the
/// unchanged ones, in order, so each is matched to the first base line with
/// the same text at or after the previous match, and the base lines skipped
/// over are the changed ones. Where a line repeats, this may pick an earlier
/// twin than the diff did, and then marks the later twin, with the same text
/// and so the same matches, as changed instead: for deciding which rules to
/// run, that is as good. Linear: both cursors only move forward.
pub(super) fn base_changed_lines(base: &SideText, head: &SideText, added: &[(u32, u32)]) -> Vec<(u32, u32)> {
    fn line<'t>(raw: &'t str, starts: &[usize], n: usize) -> Option<&'t [u8]> {
        let from = *starts.get(n)?;
        let to = starts.get(n + 1).map_or(raw.len(), |&e| e.saturating_sub(1));
        (from <= to).then(|| &raw.as_bytes()[from..to])
    }
    let (Some(b_raw), Some(h_raw)) = (base.raw, head.raw) else { return Vec::new() };
    let (b_starts, h_starts) = (base.starts(), head.starts());
    let b_lines = if b_raw.ends_with('\n') { b_starts.len() - 1 } else { b_starts.len() };
    let h_lines = if h_raw.ends_with('\n') { h_starts.len() - 1 } else { h_starts.len() };
    let mut out: Vec<(u32, u32)> = Vec::new();
    let mut push = |from: usize, to: usize| {
        // 0-based half-open base line range -> 1-based inclusive.
        if from < to {
            out.push((from as u32 + 1, to as u32));
        }
    };
    let mut b = 0;
    let mut added_iter = added.iter().peekable();
    for h in 0..h_lines {
        let h1 = h as u32 + 1;
        while added_iter.peek().is_some_and(|&&(_, end)| end < h1) {
            added_iter.next();
        }
        if added_iter.peek().is_some_and(|&&(start, _)| start <= h1) {
            continue; // an added head line
        }
        let Some(text) = line(h_raw, h_starts, h) else { break };
        match (b..b_lines).find(|&k| line(b_raw, b_starts, k) == Some(text)) {
            Some(k) => {
                push(b, k);
                b = k + 1;
            }
            // Not in the base at all (it should be): treat the rest as changed.
            None => break,
        }
    }
    push(b, b_lines);
    out
}

pub(super) fn diff_ops(file: &FileChange) -> Vec<DiffOp> {
    let base = file.base.text().unwrap_or("");
    let head = file.head.text().unwrap_or("");
    similar::TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(std::time::Duration::from_secs(2))
        .diff_lines(base, head)
        .ops()
        .to_vec()
}

/// The line diff's operations that cover base lines, indexed by base line
/// for binary search (each removed occurrence asks where its line went; a
/// scan of the operations per question was quadratic).
pub(super) struct Spots<'d> {
    /// `(first base line index, end, op)`, in base order, without insertions.
    ops: Vec<(usize, usize, &'d DiffOp)>,
}

impl<'d> Spots<'d> {
    pub(super) fn new(ops: &'d [DiffOp]) -> Self {
        let ops = ops
            .iter()
            .filter_map(|op| {
                let (from, len) = match *op {
                    DiffOp::Equal { old_index, len, .. } => (old_index, len),
                    DiffOp::Delete { old_index, old_len, .. } => (old_index, old_len),
                    DiffOp::Replace { old_index, old_len, .. } => (old_index, old_len),
                    DiffOp::Insert { .. } => return None,
                };
                (len > 0).then_some((from, from + len, op))
            })
            .collect();
        Spots { ops }
    }

    /// The operation covering base line `base_line` (1-based).
    pub(super) fn op(&self, base_line: u32) -> Option<&'d DiffOp> {
        let idx = base_line.checked_sub(1)? as usize;
        let i = self.ops.partition_point(|&(_, end, _)| end <= idx);
        self.ops.get(i).filter(|&&(from, _, _)| from <= idx).map(|&(_, _, op)| op)
    }

    /// Whether base line `base_line` is still in the head, unchanged or edited.
    pub(super) fn survives(&self, base_line: u32) -> bool {
        matches!(self.op(base_line), Some(DiffOp::Equal { .. } | DiffOp::Replace { .. }))
    }

    /// Where a deleted or replaced base line went; `None` for an unchanged
    /// line (the text is there, only its masking changed) or no line at all.
    pub(super) fn head_spot(&self, base_line: u32) -> Option<Spot> {
        match *self.op(base_line)? {
            DiffOp::Delete { new_index, .. } => Some(Spot::Gap(new_index as u32)),
            DiffOp::Replace { new_index, new_len, .. } => {
                Some(Spot::Replaced(new_index as u32 + 1, (new_index + new_len) as u32))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::rules::lang::Language;

    #[test]
    fn base_changed_lines_cover_deletions_and_replacements() {
        let changed = |base: &str, head: &str| {
            let f = FileChange::from_texts("a.py", Some(base), Some(head));
            let syntax = Language::Python.syntax();
            let (b, h) = (SideText::new(Some(base), syntax), SideText::new(Some(head), syntax));
            base_changed_lines(&b, &h, &f.added)
        };
        assert_eq!(changed("a\nb\nc\n", "a\nc\n"), vec![(2, 2)], "pure deletion");
        assert_eq!(changed("a\nb\nc\n", "a\nB\nc\n"), vec![(2, 2)], "replacement");
        assert_eq!(changed("a\nb\n", "a\nb\nc\n"), Vec::<(u32, u32)>::new(), "pure insertion");
        assert_eq!(changed("a\nx\na\n", "a\n"), vec![(2, 3)], "repeated lines");
        assert_eq!(changed("a\nb", "b"), vec![(1, 1)], "no final newline");
    }

    #[test]
    fn spots_say_where_each_base_line_went() {
        let file = FileChange::from_texts("a.py", Some("a\nb\nc\nd\n"), Some("a\nB1\nB2\nd\n"));
        let ops = diff_ops(&file);
        let spots = Spots::new(&ops);
        assert_eq!(spots.head_spot(1), None, "unchanged");
        assert!(spots.survives(1) && spots.survives(2));
        assert_eq!(spots.head_spot(2), Some(Spot::Replaced(2, 3)));
        assert_eq!(spots.head_spot(3), Some(Spot::Replaced(2, 3)));
        let file = FileChange::from_texts("a.py", Some("a\nb\nc\n"), Some("a\nc\n"));
        let ops = diff_ops(&file);
        let spots = Spots::new(&ops);
        assert_eq!(spots.head_spot(2), Some(Spot::Gap(1)), "deleted after head line 1");
        assert!(!spots.survives(2));
        assert_eq!(spots.op(0), None, "lines are 1-based");
        assert_eq!(spots.op(9), None, "past the end");
    }
}
