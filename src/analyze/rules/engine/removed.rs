//! The judgement of `when: removed`: a setting the base had is gone from
//! the head while the retry site it belonged to (the rule's `inside`
//! context) is still there. A removed retry is not a weaker one, so a
//! setting deleted together with its retry site is not reported.
//!
//! Each removed base occurrence first looks for its counterpart in the head
//! (the same setting in the lines that replaced it, another form of it, or
//! the same setting moved elsewhere); only those left over are findings,
//! reported at the line that reads most like the removed one.

use std::cell::OnceCell;
use std::collections::HashMap;

use serde_json::json;
use similar::DiffOp;

use super::diff_map::{diff_ops, Spot, Spots};
use super::judge::by_key;
use super::occurrences::Occ;
use super::side::SideText;
use crate::analyze::rules::spec::{Rule, RuleSet};
use crate::changeset::FileChange;
use crate::finding::Finding;

/// `when: removed`: the base has more occurrences than the head, and the
/// retry site (the `inside` context) is still there next to where they were.
pub(super) fn removed(
    set: &RuleSet,
    rule: &Rule,
    file: &FileChange,
    base: &[Occ],
    head: &[Occ],
    (base_side, head_side): (&SideText, &SideText),
    diff: &OnceCell<Vec<DiffOp>>,
) -> Vec<Finding> {
    let Some(inside) = &rule.inside else { return Vec::new() };
    if file.head.text().is_none() || base.is_empty() {
        return Vec::new();
    }
    // Nothing can be gone unless some setting occurs less often in the head:
    // this saves the line diff for the common case.
    let head_counts = by_key(head);
    let base_counts = by_key(base);
    let as_often = base_counts.iter().all(|(k, b)| head_counts.get(k).map_or(0, Vec::len) >= b.len());
    // ... or some occurrence was written anew (moved code, which may have
    // moved where it no longer acts).
    if as_often && !head.iter().any(|h| file.is_added(h.line) && base_counts.contains_key(h.key.as_str())) {
        return Vec::new();
    }
    // Head occurrences that moved into a new function which decides
    // nothing (it only logs): they are not the removed setting's counterpart.
    let inert =
        crate::analyze::rules::moves::inert_new_functions(&file.path, file.base.text(), file.head.text());
    let ops = diff.get_or_init(|| diff_ops(file));
    // A base occurrence is not gone when its line is unchanged; when the
    // head lines that replaced it hold the same setting, or another form of
    // it (one jittered wait exchanged for another); or when the same setting
    // appears on an added line elsewhere (moved code). Pairing is in that order.
    let mut used = vec![false; head.len()];
    let mut pending = Vec::new();
    let spots = Spots::new(ops);
    for o in base {
        if let Some(spot) = spots.head_spot(o.line) {
            pending.push((o, spot));
        }
    }
    // Each pass gives every pending base occurrence the first unused head
    // occurrence (in head order, which is line order) that it accepts.
    // Head occurrences are indexed per pass so that a pass is a binary
    // search per occurrence, not a scan of the head.
    for pass in [Pass::SameKeyInReplacement, Pass::AnyInReplacement, Pass::SameKeyAdded] {
        let mut pools: HashMap<&str, Pool> = HashMap::new();
        for (j, h) in head.iter().enumerate() {
            if used[j]
                || (pass == Pass::SameKeyAdded
                    && (!file.is_added(h.line) || inert.iter().any(|&(a, b)| a <= h.line && h.line <= b)))
            {
                continue;
            }
            let key = if pass == Pass::AnyInReplacement { "" } else { h.key.as_str() };
            pools.entry(key).or_default().push(j, h.line);
        }
        pending.retain(|&(o, spot)| {
            let key = if pass == Pass::AnyInReplacement { "" } else { o.key.as_str() };
            let Some(pool) = pools.get_mut(key) else { return true };
            let (lo, hi) = match (pass, spot) {
                (Pass::SameKeyAdded, _) => (0, u32::MAX),
                (_, Spot::Replaced(a, b)) => (a, b),
                (_, Spot::Gap(_)) => return true,
            };
            match pool.take_first(lo, hi) {
                Some(j) => {
                    used[j] = true;
                    false
                }
                None => true,
            }
        });
    }
    // Still there in another form the rule names (`replaced_by`): a retry
    // decorator swapped for one that carries its own stop.
    if let Some(other) = rule.replaced_by {
        pending.retain(|&(_, spot)| match spot {
            Spot::Replaced(a, b) => head_side.context_in(set, other, rule.view, a, b).is_empty(),
            Spot::Gap(_) => true,
        });
    }
    let mut out = Vec::new();
    let mut moved_site: Option<Option<u32>> = None;
    // Many removed occurrences can share one replaced block; the context
    // lines of a head range are searched once per range, not once per
    // occurrence (that was quadratic in the size of the block).
    let mut head_sites: HashMap<(u32, u32), Vec<u32>> = HashMap::new();
    let mut sites_in = |lo: u32, hi: u32| -> Vec<u32> {
        head_sites
            .entry((lo, hi))
            .or_insert_with(|| head_side.context_in(set, inside.context, rule.view, lo, hi))
            .clone()
    };
    for (o, spot) in pending {
        // The retry site that made this a match in the base (the nearest
        // context line) must still be there, unchanged or edited, not
        // deleted along with it.
        let base_sites = base_side.context_in(
            set,
            inside.context,
            rule.view,
            o.line.saturating_sub(inside.before),
            o.line + inside.after,
        );
        // The occurrence's own line may name the retry too
        // (`retry = !verb.equals("POST")`) and go with it; then the site is
        // the block it was written in, when that block opens on a context
        // line (`if (retry) {`). A deleted function's block went with it.
        let nearest = base_sites.iter().copied().min_by_key(|&l| (l.abs_diff(o.line), l > o.line));
        let nearest = match nearest {
            Some(l) if l == o.line => base_side
                .enclosing_line(rule.view, o.line)
                .filter(|&e| !base_side.context_in(set, inside.context, rule.view, e, e).is_empty())
                .or(nearest),
            other => other,
        };
        let survived = match nearest.map(|l| (l, spots.head_spot(l))) {
            // Unchanged.
            Some((l, None)) => spots.survives(l),
            // Edited: the edited lines must still look like a retry site.
            Some((_, Some(Spot::Replaced(a, b)))) => !sites_in(a, b).is_empty(),
            _ => false,
        };
        if !survived {
            // The retry site went with it; if it was a retry in the base and
            // the change adds one that covers every request (`moved_to`),
            // the retry moved there
            // without this setting, reported at the first such line.
            let moved = rule.moved_to.filter(|_| nearest.is_some()).and_then(|to| {
                *moved_site.get_or_insert_with(|| {
                    head_side
                        .context_in(set, to, rule.view, 1, u32::MAX)
                        .into_iter()
                        .find(|&l| file.is_added(l))
                })
            });
            if let Some(line) = moved {
                out.push(
                    Finding::new(rule.kind, &rule.id, &file.path, line)
                        .severity(rule.severity)
                        .message(rule.message.replace("{match}", &o.text))
                        .base(json!({ "match": o.text, "line": o.line })),
                );
            }
            continue;
        }
        let (lo, hi) = match spot {
            Spot::Replaced(a, b) => (a.saturating_sub(inside.before).max(1), b + inside.after),
            Spot::Gap(after) => ((after + 1).saturating_sub(inside.before).max(1), after + inside.after),
        };
        let sites = sites_in(lo, hi);
        if sites.is_empty() {
            // The retry site went with it: a removed retry is not a weaker one.
            continue;
        }
        let line = match spot {
            Spot::Replaced(a, b) => {
                // The counterpart is looked for near the line's place in the
                // block, so a large replaced block is not read once per line.
                let offset = match spots.op(o.line) {
                    Some(&DiffOp::Replace { old_index, .. }) => (o.line - 1).saturating_sub(old_index as u32),
                    _ => 0,
                };
                let at = a.saturating_add(offset).min(b);
                let (wa, wb) = (
                    at.saturating_sub(COUNTERPART_WINDOW).max(a),
                    at.saturating_add(COUNTERPART_WINDOW).min(b),
                );
                let first_site = sites.get(sites.partition_point(|&l| l < wa)).copied().filter(|&l| l <= wb);
                best_counterpart(base_side.line_text(o.line), head_side, wa, wb)
                    .or(first_site)
                    .or_else(|| (wa..=wb).find(|&l| head_side.has_code(l)))
                    // Replaced by comments or blank lines only: report at
                    // the retry site, as for a deletion.
                    .or_else(|| sites.iter().copied().min_by_key(|&l| l.abs_diff(wa)))
                    .unwrap_or(wa)
            }
            Spot::Gap(after) => sites.iter().copied().min_by_key(|&l| l.abs_diff(after)).unwrap_or(after),
        };
        out.push(
            Finding::new(rule.kind, &rule.id, &file.path, line)
                .severity(rule.severity)
                .message(rule.message.replace("{match}", &o.text))
                .base(json!({ "match": o.text, "line": o.line })),
        );
    }
    out
}

/// How far from a removed line's own place in a replaced block its
/// counterpart is looked for, in lines (blocks up to twice this size are
/// read whole).
const COUNTERPART_WINDOW: u32 = 50;

/// The replacing head line that reads most like the removed base line (the
/// longest common prefix, indentation ignored), so `retryDelay: exponentialDelay`
/// -> `retryDelay: () => 1000` is reported on the `retryDelay` line.
fn best_counterpart(removed: &str, head: &SideText, a: u32, b: u32) -> Option<u32> {
    let removed = removed.trim_start().as_bytes();
    let mut best: Option<(usize, u32)> = None;
    for l in a..=b {
        if !head.has_code(l) {
            continue;
        }
        let line = head.line_text(l).trim_start().as_bytes();
        let common = removed.iter().zip(line).take_while(|(x, y)| x == y).count();
        if common > 0 && best.is_none_or(|(c, _)| common > c) {
            best = Some((common, l));
        }
    }
    best.map(|(_, l)| l)
}

/// The ways a removed base occurrence can find its head counterpart, tried
/// in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// The head lines that replaced it hold the same setting.
    SameKeyInReplacement,
    /// They hold another occurrence of the rule (one jittered wait exchanged for another).
    AnyInReplacement,
    /// The same setting is on an added line elsewhere (moved code).
    SameKeyAdded,
}

/// Head occurrences (indices into the head's list, in line order) not yet
/// taken, with "the next untaken one" kept as a path-compressed forest so
/// that taking the first untaken occurrence at or after a line is
/// near-constant time however many were taken before it.
#[derive(Debug, Default)]
struct Pool {
    lines: Vec<u32>,
    heads: Vec<usize>,
    /// `next[i]` leads to the first untaken slot at or after `i` (`len` = none).
    next: Vec<usize>,
}

impl Pool {
    fn push(&mut self, head: usize, line: u32) {
        self.next.push(self.heads.len());
        self.lines.push(line);
        self.heads.push(head);
    }

    fn find(&mut self, mut i: usize) -> usize {
        let mut root = i;
        while root < self.next.len() && self.next[root] != root {
            root = self.next[root];
        }
        while i < self.next.len() && self.next[i] != i {
            let up = self.next[i];
            self.next[i] = root;
            i = up;
        }
        root
    }

    /// Takes the first untaken occurrence on a line in `lo..=hi`.
    fn take_first(&mut self, lo: u32, hi: u32) -> Option<usize> {
        let start = self.lines.partition_point(|&l| l < lo);
        let i = self.find(start);
        if i >= self.lines.len() || self.lines[i] > hi {
            return None;
        }
        self.next[i] = i + 1;
        Some(self.heads[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::rules::lang::Language;

    #[test]
    fn pool_takes_the_first_untaken_occurrence_in_a_line_range() {
        let mut pool = Pool::default();
        for (j, line) in [(10, 3), (11, 5), (12, 5), (13, 9)] {
            pool.push(j, line);
        }
        assert_eq!(pool.take_first(4, 8), Some(11));
        assert_eq!(pool.take_first(4, 8), Some(12));
        assert_eq!(pool.take_first(4, 8), None, "both on line 5 taken");
        assert_eq!(pool.take_first(0, u32::MAX), Some(10));
        assert_eq!(pool.take_first(0, u32::MAX), Some(13));
        assert_eq!(pool.take_first(0, u32::MAX), None);
    }

    #[test]
    fn the_counterpart_is_the_replacing_line_with_the_longest_common_prefix() {
        let head = SideText::new(
            Some("retry(\n  // retryDelay was here\n  retries: 3,\n  retryDelay: () => 1000,\n)\n"),
            Language::JavaScript.syntax(),
        );
        assert_eq!(best_counterpart("    retryDelay: exponentialDelay,", &head, 2, 4), Some(4));
        assert_eq!(best_counterpart("zzz", &head, 2, 4), None, "nothing in common");
        assert_eq!(best_counterpart("  // retryDelay", &head, 2, 2), None, "a comment is no counterpart");
    }
}
