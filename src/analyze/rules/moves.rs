//! Code moved between files is not new. The engine reads one file at a time
//! and pairs a file's base and head occurrences by value, so a setting that
//! moved within a file is not reported; one that moved to another file of
//! the same change (a class moved from `client.py` to `core.py`) would be
//! "added" in its new file. This pass looks at the `when: added` findings
//! of the whole change: a finding whose head line, whitespace aside, is a
//! line that another changed file of the change lost (its base holds it
//! more often than its head), moved with the code, unchanged.

use std::collections::HashMap;

use super::spec::{RuleSet, When};
use crate::changeset::FileChange;
use crate::finding::Finding;

/// A line without its whitespace, with one kind of quote: what stays when
/// code is re-indented or re-formatted on the way.
fn normalized(line: &str) -> String {
    line.chars().filter(|c| !c.is_whitespace()).map(|c| if c == '\'' { '"' } else { c }).collect()
}

/// Drops the `when: added` findings that only moved from another file of
/// the change.
pub(super) fn drop_moved(set: &RuleSet, files: &[&FileChange], findings: &mut Vec<Finding>) {
    let added_rule = |id: &str| set.rules.iter().any(|r| r.id == id && r.when == When::Added);
    let text_of = |f: &Finding| -> Option<String> {
        let file = files.iter().find(|x| x.path == f.path)?;
        let line = file.head.text()?.lines().nth((f.line as usize).checked_sub(1)?)?;
        Some(normalized(line)).filter(|t| !t.is_empty())
    };
    let key = |f: &Finding| (f.path.clone(), f.rule.clone(), f.line);
    let wanted: HashMap<(String, String, u32), String> =
        findings.iter().filter(|f| added_rule(&f.rule)).filter_map(|f| Some((key(f), text_of(f)?))).collect();
    if wanted.is_empty() {
        return;
    }
    // Per file, how many more times its base holds each wanted line than
    // its head: a positive count is a line the file lost.
    let texts: std::collections::HashSet<&str> = wanted.values().map(String::as_str).collect();
    let mut lost: HashMap<&str, HashMap<&str, i64>> = HashMap::new();
    for file in files {
        let mut counts: HashMap<&str, i64> = HashMap::new();
        for (side, sign) in [(file.base.text(), 1), (file.head.text(), -1)] {
            for line in side.unwrap_or("").lines() {
                if let Some(w) = texts.get(normalized(line).as_str()) {
                    *counts.entry(w).or_default() += sign;
                }
            }
        }
        counts.retain(|_, n| *n > 0);
        if !counts.is_empty() {
            lost.insert(file.path.as_str(), counts);
        }
    }
    findings.retain(|f| {
        let Some(text) = wanted.get(&key(f)) else { return true };
        !lost.iter().any(|(path, counts)| *path != f.path && counts.contains_key(text.as_str()))
    });
}

#[cfg(test)]
mod tests {
    use super::normalized;

    #[test]
    fn whitespace_and_quotes_do_not_make_a_line_new() {
        assert_eq!(
            normalized("    r = Retry(total=6, method_whitelist={'POST'})"),
            normalized("r = Retry(total=6,  method_whitelist={\"POST\"})")
        );
        assert_ne!(normalized("Retry(total=6)"), normalized("Retry(total=7)"));
    }
}
