//! Code moved between files is not new. The engine reads one file at a time
//! and pairs a file's base and head occurrences by value, so a setting that
//! moved within a file is not reported; one that moved to another file of
//! the same change (a class moved from `client.py` to `core.py`) would be
//! "added" in its new file. This pass looks at the `when: added` findings
//! of the whole change: a finding whose head line, whitespace aside, is a
//! line that another changed file of the change lost (its base holds it
//! more often than its head), moved with the code, unchanged. And a
//! `when: removed` finding whose replacing lines call a function that now
//! holds what was removed moved into that function: it is a note naming it.

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

/// Turns into notes the `when: removed` findings whose occurrence moved into
/// a function that the head lines replacing it call: a definition of that
/// name, in the head of a file of the change, whose body still matches the
/// rule (`retry_after = get_retry_after(error)` in place of the lines that
/// read the header, with `def get_retry_after` reading it in a new module).
/// The note names the function and where it is, so a maintainer can check
/// that it is the same behaviour.
pub(super) fn note_moved_into_calls(set: &RuleSet, files: &[&FileChange], findings: &mut [Finding]) {
    use super::helpers::syntax::{definitions, is_candidate_name, Code, Family};
    use super::lang::Language;
    for f in findings.iter_mut() {
        if f.severity == crate::finding::Severity::Note {
            continue;
        }
        let Some(rule) = set.rules.iter().find(|r| r.id == f.rule && r.when == When::Removed) else {
            continue;
        };
        let Some(family) = Language::of_path(&f.path).and_then(Family::of) else { continue };
        let Some(head) = files.iter().find(|x| x.path == f.path).and_then(|x| x.head.text()) else {
            continue;
        };
        let calls = called_names(head, f.line, f.end_line);
        if calls.is_empty() {
            continue;
        }
        let wanted = |n: &str| is_candidate_name(n) && calls.iter().any(|c| c == n);
        let found =
            files.iter().filter_map(|x| Some((x.path.as_str(), x.head.text()?))).find_map(|(path, text)| {
                if Language::of_path(path).and_then(Family::of) != Some(family) {
                    return None;
                }
                let code = Code::new(text.as_bytes());
                definitions(family, &code, &wanted).into_iter().find_map(|d| {
                    let body = text.as_bytes().get(d.body.0..d.body.1)?;
                    let matches = rule.patterns.iter().any(|p| p.get().is_match(body));
                    // Moved code holds only if it still acts: the replacing
                    // lines use what the function returns, or the function
                    // can stop the caller. A helper called for its side
                    // effect that only logs decides nothing.
                    let acts = result_used(head, f.line, f.end_line, &d.name) || can_stop_caller(body);
                    (matches && acts).then(|| (d.name.clone(), path.to_string(), code.lines.of(d.at)))
                })
            });
        if let Some((name, path, line)) = found {
            f.severity = crate::finding::Severity::Note;
            f.message = format!(
                "{}; moved, not removed: the lines that replace it call `{name}` ({path}:{line}), whose body still matches",
                f.message
            );
        }
    }
}

/// The head line spans of functions the change adds (no definition of that
/// name in the base) that decide nothing where they are called: no call of
/// them in the head uses what they return, and they cannot stop their
/// caller. A guard moved into such a function (`logMethod(req)`, which
/// only logs when the method is not GET) no longer guards anything.
pub(crate) fn inert_new_functions(path: &str, base: Option<&str>, head: Option<&str>) -> Vec<(u32, u32)> {
    use super::helpers::syntax::{definitions, is_candidate_name, Code, Family};
    use super::lang::Language;
    let (Some(family), Some(head)) = (Language::of_path(path).and_then(Family::of), head) else {
        return Vec::new();
    };
    let base_code = Code::new(base.unwrap_or("").as_bytes());
    let in_base: std::collections::HashSet<String> =
        definitions(family, &base_code, &|n| is_candidate_name(n)).into_iter().map(|d| d.name).collect();
    let code = Code::new(head.as_bytes());
    definitions(family, &code, &|n| is_candidate_name(n) && !in_base.contains(n))
        .into_iter()
        .filter(|d| {
            let body = head.as_bytes().get(d.body.0..d.body.1).unwrap_or(&[]);
            let def_line = code.lines.of(d.at) as usize;
            let used =
                head.lines().enumerate().any(|(i, l)| i + 1 != def_line && call_result_used(l, &d.name));
            !used && !can_stop_caller(body)
        })
        .map(|d| (code.lines.of(d.at), code.lines.of(d.body.1.saturating_sub(1))))
        .collect()
}

/// Whether a call of `name` on head lines `from..=to` (and the two lines
/// around them) uses what it returns: it is not a statement of its own
/// (`log_method(req)`, `await self.note(x);`), so its value reaches a
/// condition, an assignment, a return or another call.
fn result_used(head: &str, from: u32, to: u32, name: &str) -> bool {
    let (lo, hi) = (from.saturating_sub(2).max(1) as usize, to.saturating_add(2) as usize);
    head.lines().skip(lo - 1).take(hi + 1 - lo).any(|line| call_result_used(line, name))
}

/// Whether `line` calls `name` and uses what it returns (see [`result_used`]).
fn call_result_used(line: &str, name: &str) -> bool {
    line.match_indices(name).any(|(i, _)| {
        let after = line[i + name.len()..].trim_start();
        let before_ok = !line[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
        if !before_ok || !after.starts_with('(') {
            return false;
        }
        // What is written before the call, its receiver chain aside.
        let prefix = line[..i].trim_end().trim_end_matches(|c: char| {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | ':' | '>' | '-')
        });
        !matches!(prefix.trim(), "" | "await" | "go" | "defer" | "try" | "yield")
    })
}

/// Whether a function body can stop its caller on its own: it raises,
/// throws, panics or exits.
fn can_stop_caller(body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(body);
    let words: Vec<&str> =
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '!')).collect();
    words.iter().any(|w| matches!(*w, "raise" | "throw" | "panic" | "panic!" | "abort" | "exit" | "Exit"))
}

/// The names called (`name(`) on head lines `from..=to` and the two lines
/// around them, where a removed occurrence's replacement is reported.
fn called_names(head: &str, from: u32, to: u32) -> Vec<String> {
    let (lo, hi) = (from.saturating_sub(2).max(1) as usize, to.saturating_add(2) as usize);
    let mut out = Vec::new();
    for line in head.lines().skip(lo - 1).take(hi + 1 - lo) {
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i].is_ascii_alphabetic() || bytes[i] == b'_' {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                let preceded_by_word = start > 0 && bytes[start - 1].is_ascii_alphanumeric();
                if !preceded_by_word && line[i..].trim_start().starts_with('(') {
                    out.push(line[start..i].to_string());
                }
            } else {
                i += 1;
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::{called_names, can_stop_caller, normalized, result_used};

    #[test]
    fn a_moved_helper_acts_when_its_result_is_used_or_it_can_stop_the_caller() {
        let head = "for i := 0; i < 3; i++ {\n\tlogMethod(req)\n\tresp, err = c.Do(req)\n}\n";
        assert!(!result_used(head, 2, 2, "logMethod"), "a statement of its own");
        let head = "\tif !idempotent(req) {\n\t\treturn resp, err\n\t}\n";
        assert!(result_used(head, 1, 1, "idempotent"));
        assert!(result_used("wait = get_retry_after(error)\n", 1, 1, "get_retry_after"));
        assert!(result_used("    return self.backoff_for(resp)\n", 1, 1, "backoff_for"));
        assert!(!result_used("    await self.note(x);\n", 1, 1, "note"));
        assert!(can_stop_caller(b"if method != 'GET':\n    raise NotRetryable(method)\n"));
        assert!(can_stop_caller(b"if req.Method != http.MethodGet { panic(\"no\") }"));
        assert!(!can_stop_caller(b"if req.Method != http.MethodGet { log.Printf(\"%s\", req.Method) }"));
    }

    #[test]
    fn whitespace_and_quotes_do_not_make_a_line_new() {
        assert_eq!(
            normalized("    r = Retry(total=6, method_whitelist={'POST'})"),
            normalized("r = Retry(total=6,  method_whitelist={\"POST\"})")
        );
        assert_ne!(normalized("Retry(total=6)"), normalized("Retry(total=7)"));
    }

    #[test]
    fn called_names_are_the_calls_on_and_around_the_lines() {
        let head = "a = 1\nwait = get_retry_after(error)\nx.sleep(wait)\nif ok(y):\n    pass\nfar(1)\n";
        assert_eq!(called_names(head, 2, 2), ["get_retry_after", "ok", "sleep"]);
        assert!(called_names(head, 6, 6).contains(&"far".to_string()));
        assert!(called_names("", 1, 1).is_empty());
    }
}
