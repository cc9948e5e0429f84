//! Evaluates compiled rules on one changed file, comparing base with head.
//!
//! The engine is a pure function of a [`RuleSet`] and a [`FileChange`]:
//!
//! 1. the file's language is judged from its name (no language, no rules);
//! 2. each side is masked (comments and prose strings blanked) when, and
//!    only when, a step below needs it;
//! 3. `RegexSet`s built once per run say which rules can matter at all
//!    (the prefilter): `raised`/`lowered`/`added` rules are searched in the
//!    head's added lines, `removed` rules in the base's deleted or replaced
//!    lines (both widened by [`PREFILTER_MARGIN_LINES`], and both behind a
//!    raw-text literal gate that spares masking); only those are evaluated;
//! 4. each candidate rule collects its *occurrences* on both sides (matches
//!    on lines the change touched that pass the `inside` condition), keys
//!    them by what they set, and compares base with head as its `when:`
//!    says (`docs/rules.md`).
//!
//! Occurrences are paired by key and value, never by line number, so code
//! that moved within the file is not new and a setting that moved and changed
//! is still compared.
//!
//! # Modules
//!
//! - [`prefilter`]: which rules can match at all in the changed regions
//!   (per-language `RegexSet`s behind a raw-text literal gate);
//! - [`side`]: one side of the file, its masked views and line index;
//! - [`mod@occurrences`]: a rule's matches on lines the change touched, keyed by
//!   what they set, with their numbers normalised;
//! - [`judge`]: `raised`, `lowered` and `added` (base against head);
//! - [`removed`]: `removed`, where the retry site must survive;
//! - [`diff_map`]: which base lines the change deleted or replaced, and
//!   where each went in the head.

mod diff_map;
mod judge;
mod occurrences;
mod prefilter;
mod removed;
mod side;
mod values;

use std::cell::OnceCell;
use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;

use super::lang::Language;
use super::spec::{RuleSet, When};
use crate::analyze::FileResult;
use crate::changeset::FileChange;
use crate::finding::Note;
use diff_map::base_changed_lines;
use occurrences::occurrences;
use prefilter::LangFilters;
pub(crate) use prefilter::PREFILTER_MARGIN_LINES;
use side::SideText;

/// The base's changed regions (byte ranges, widened) and lines (1-based ranges).
type ChangedBase = (Vec<(usize, usize)>, Vec<(u32, u32)>);

/// A rule set ready to run: compiled rules plus per-language prefilters.
#[derive(Debug)]
pub(crate) struct Engine {
    pub(crate) set: RuleSet,
    /// Per language some rule reads, its prefilters once a file of it is
    /// analyzed (an error is kept as its message: every file of the
    /// language then gets it as a blocking note).
    by_lang: HashMap<Language, OnceLock<Result<Option<LangFilters>, String>>>,
}

impl Engine {
    /// A rule set ready to run; each language's prefilters are built on
    /// its first file.
    pub(crate) fn new(set: RuleSet) -> anyhow::Result<Engine> {
        let by_lang = prefilter::languages_read(&set).into_iter().map(|l| (l, OnceLock::new())).collect();
        Ok(Engine { set, by_lang })
    }

    /// Builds the prefilters of `langs` now, so that a rule file of a
    /// user's whose patterns cannot be combined is an error when it is
    /// loaded, not a note on each file later.
    pub(crate) fn build_now(&self, langs: &[Language]) -> anyhow::Result<()> {
        for lang in langs {
            if let Some(cell) = self.by_lang.get(lang) {
                if let Err(e) =
                    cell.get_or_init(|| prefilter::build(&self.set, *lang).map_err(|e| format!("{e:#}")))
                {
                    anyhow::bail!("{e}; make the rule file's patterns smaller");
                }
            }
        }
        Ok(())
    }

    /// Whether any rule reads the file at `path`.
    pub(crate) fn wants(&self, path: &str) -> bool {
        match Language::of_path(path) {
            Some(lang) => {
                self.by_lang.contains_key(&lang) && self.set.rules.iter().any(|r| r.applies_to(lang, path))
            }
            None => false,
        }
    }

    /// Runs every applicable rule on one file.
    pub(crate) fn analyze(&self, file: &FileChange) -> FileResult {
        let mut out = FileResult::default();
        let Some(lang) = Language::of_path(&file.path) else { return out };
        let Some(filters) = self.by_lang.get(&lang) else { return out };
        let filters =
            match filters.get_or_init(|| prefilter::build(&self.set, lang).map_err(|e| format!("{e:#}"))) {
                Ok(Some(f)) => f,
                Ok(None) => return out,
                Err(e) => {
                    out.notes.push(Note::blocking(
                        Some(&file.path),
                        format!(
                            "{e}; the rule packs were not run on this file: make the pack's patterns smaller"
                        ),
                    ));
                    return out;
                }
            };
        let base = SideText::of_lang(file.base.text(), lang);
        let head = SideText::of_lang(file.head.text(), lang);
        let mut candidates = BTreeSet::new();
        // Only lines the change touched can hold an occurrence that matters:
        // the head's added lines and the base's deleted or replaced ones,
        // each widened so that a match may start a little above its line.
        // A changed constant changes every site that uses it: the uses of
        // names declared on changed lines are searched too (values.rs).
        let mut names = Vec::new();
        if lang.is_code() && head.raw.is_some() {
            values::changed_declarations(&head, &file.added, &mut names);
        }
        let head_uses = if names.is_empty() { Vec::new() } else { values::use_lines(&head, &names) };
        let head_regions = if head_uses.is_empty() {
            head.regions(&file.added, PREFILTER_MARGIN_LINES)
        } else {
            head.regions(&values::merge_lines(&file.added, &head_uses), PREFILTER_MARGIN_LINES)
        };
        let base_changed: OnceCell<ChangedBase> = OnceCell::new();
        let changed_base = || {
            base_changed.get_or_init(|| {
                let lines = base_changed_lines(&base, &head, &file.added);
                let mut base_names = names.clone();
                if lang.is_code() {
                    values::changed_declarations(&base, &lines, &mut base_names);
                }
                let uses =
                    if base_names.is_empty() { Vec::new() } else { values::use_lines(&base, &base_names) };
                (base.regions(&values::merge_lines(&lines, &uses), PREFILTER_MARGIN_LINES), lines)
            })
        };
        if !file.added.is_empty() {
            filters.head_candidates(&head, &head_regions, &mut candidates);
        }
        if head.raw.is_some() {
            filters.base_candidates(&base, || &changed_base().0, &mut candidates);
        }
        let diff = OnceCell::new();
        for i in candidates {
            let rule = &self.set.rules[i];
            if !rule.applies_to(lang, &file.path) || (!rule.new_files && base.raw.is_none()) {
                continue;
            }
            // A raise or an addition is reported on an added head line; a
            // rule with no occurrence there is done before the base is read.
            let h = occurrences(&self.set, rule, &head, &head_regions, &|l| file.is_added(l));
            if rule.when != When::Removed && h.is_empty() {
                continue;
            }
            // `inside: {existing: true}`: the change adds no retry of that
            // form to the file (the base holds as many as the head), so the
            // setting lands on a retry that was there before; a new retry's
            // settings are the new retry's, judged as one.
            if let Some(inside) = rule.inside.as_ref().filter(|i| i.existing) {
                let count = |side: &SideText| {
                    side.context_in(&self.set, inside.context, rule.view, 1, u32::MAX).len()
                };
                if count(&base) < count(&head) {
                    continue;
                }
            }
            let (base_regions, base_lines) = changed_base();
            let in_base_change = |l: u32| {
                let i = base_lines.partition_point(|&(_, b)| b < l);
                base_lines.get(i).is_some_and(|&(a, _)| a <= l)
            };
            let b = occurrences(&self.set, rule, &base, base_regions, &in_base_change);
            match rule.when {
                When::Raised | When::Lowered => out.findings.extend(judge::compare(
                    (&self.set, rule),
                    file,
                    &b,
                    (&h, &head),
                    &mut out.notes,
                )),
                When::Added => out.findings.extend(judge::added(rule, file, &b, &h)),
                When::Removed => out.findings.extend(removed::removed(
                    &self.set,
                    rule,
                    file,
                    &b,
                    &h,
                    (&base, &head),
                    &diff,
                )),
            }
        }
        // One finding per kind and line: when two rules say the same thing
        // about a line (`jitter=True` -> `jitter=False` is both a disabling
        // flag added and a jitter flag removed), the most severe one speaks.
        crate::finding::keep_most_severe(&mut out.findings);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Finding, Kind};
    use serde_json::json;

    fn engine(yaml: &str) -> Engine {
        Engine::new(RuleSet::load(&[("t.yml".into(), yaml.into())]).unwrap()).unwrap()
    }

    fn run(e: &Engine, path: &str, base: Option<&str>, head: Option<&str>) -> Vec<Finding> {
        e.analyze(&FileChange::from_texts(path, base, head)).findings
    }

    const RAISED: &str = r#"
rules:
  - id: t/retries
    kind: retry-count-raised
    severity: error
    languages: [python]
    message: "retries raised from {base} to {head}"
    pattern: '\bretries\s*=\s*(?P<n>\d+|None)'
    when: raised
    counts: retries
    unbounded: ["None"]
    docs: { what: w, why: y, example: e, use_instead: u }
"#;

    #[test]
    fn raised_reports_the_head_line_with_normalised_attempts() {
        let e = engine(RAISED);
        let f = run(&e, "a.py", Some("x = 1\nc(retries=2)\n"), Some("x = 1\nc(retries=6)\n"));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].line, 2);
        assert_eq!(f[0].message, "retries raised from 2 to 6 (3 -> 7 attempts)");
        assert_eq!(f[0].base, Some(json!({"attempts": 3})));
        assert_eq!(f[0].head, Some(json!({"attempts": 7})));
    }

    #[test]
    fn lowered_count_unchanged_or_present_in_both_is_not_a_finding() {
        let e = engine(RAISED);
        assert!(run(&e, "a.py", Some("c(retries=6)\n"), Some("c(retries=2)\n")).is_empty());
        assert!(run(&e, "a.py", Some("c(retries=6)\ny=1\n"), Some("c(retries=6)\ny=2\n")).is_empty());
        assert!(run(&e, "a.py", None, Some("c(retries=6)\n")).is_empty(), "a new setting is not a raise");
    }

    #[test]
    fn a_setting_that_moved_and_changed_is_compared_and_one_that_only_moved_is_not() {
        let e = engine(RAISED);
        let base = "c(retries=2)\na\nb\nc\n";
        let moved = "a\nb\nc\nc(retries=2)\n";
        assert!(run(&e, "a.py", Some(base), Some(moved)).is_empty());
        let f = run(&e, "a.py", Some(base), Some("a\nb\nc\nc(retries=5)\n"));
        assert_eq!(f.iter().map(|f| f.line).collect::<Vec<_>>(), vec![4]);
    }

    #[test]
    fn a_raise_to_the_value_of_an_unchanged_neighbour_is_still_a_raise() {
        let e = engine(RAISED);
        let f = run(&e, "a.py", Some("a(retries=2)\nb(retries=6)\n"), Some("a(retries=6)\nb(retries=6)\n"));
        assert_eq!(f.iter().map(|f| f.line).collect::<Vec<_>>(), vec![1]);
    }

    #[test]
    fn a_count_too_large_for_a_float_is_unbounded_not_dropped() {
        let e = engine(RAISED);
        let big = "9".repeat(309);
        assert_eq!(big.len(), 309);
        let f = run(&e, "a.py", Some("c(retries=2)\n"), Some(&format!("c(retries={big})\n")));
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].kind, Kind::RetryUnbounded);
        assert_eq!(f[0].head, Some(json!({"attempts": "unbounded"})));
        assert_eq!(
            f[0].message,
            "retries raised from 2 to 999999...999999 (309 digits) (3 -> unbounded attempts)"
        );
        // 308 digits is a finite (if absurd) count, reported as a raise.
        let f = run(&e, "a.py", Some("c(retries=2)\n"), Some(&format!("c(retries={})\n", &big[1..])));
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].kind, Kind::RetryCountRaised);
        // Lowering from it is not a raise.
        assert!(run(&e, "a.py", Some(&format!("c(retries={big})\n")), Some("c(retries=2)\n")).is_empty());
    }

    #[test]
    fn unbounded_head_is_retry_unbounded() {
        let e = engine(RAISED);
        let f = run(&e, "a.py", Some("c(retries=2)\n"), Some("c(retries=None)\n"));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].kind, Kind::RetryUnbounded);
        assert_eq!(f[0].head, Some(json!({"attempts": "unbounded"})));
    }

    #[test]
    fn comments_strings_and_prose_files_do_not_match() {
        let e = engine(RAISED);
        assert!(run(&e, "a.py", Some("c(retries=2)\n"), Some("c(retries=2)  # retries=9\n")).is_empty());
        assert!(run(&e, "a.py", Some("log('retries=2 ok')\n"), Some("log('retries=9 ok')\n")).is_empty());
        assert!(run(&e, "README.md", Some("retries=2\n"), Some("retries=9\n")).is_empty());
        assert!(!e.wants("README.md") && e.wants("src/x.py") && !e.wants("src/x.go"));
    }

    const ADDED: &str = r#"
rules:
  - id: t/jitter-off
    kind: jitter-removed
    severity: error
    languages: [python]
    message: "jitter disabled: {match}"
    pattern: '\bjitter\s*=\s*(?:False|None)'
    when: added
    docs: { what: w, why: y, example: e, use_instead: u }
"#;

    #[test]
    fn added_reports_new_occurrences_only() {
        let e = engine(ADDED);
        let f = run(&e, "a.py", Some("c(jitter=True)\n"), Some("c(jitter=False)\n"));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].message, "jitter disabled: jitter=False");
        // Present in both, or moved: nothing new.
        assert!(run(&e, "a.py", Some("c(jitter=False)\nx\n"), Some("x\nc(jitter=False)\n")).is_empty());
        // Exchanging one disabling form for another: the base had no jitter either.
        assert!(run(&e, "a.py", Some("c(jitter=None)\n"), Some("c(jitter=False)\n")).is_empty());
    }

    const REMOVED: &str = r#"
rules:
  - id: t/random-wait-gone
    kind: jitter-removed
    severity: error
    languages: [python]
    message: "{match} removed"
    pattern: '\bwait_random_exponential\b'
    when: removed
    inside: { pattern: '@retry\b', before: 3 }
    docs: { what: w, why: y, example: e, use_instead: u }
"#;

    #[test]
    fn removed_reports_at_the_replacement_while_the_retry_site_remains() {
        let e = engine(REMOVED);
        let base = "import x\n@retry(\n    wait=wait_random_exponential(1),\n)\ndef f(): pass\n";
        let head = "import x\n@retry(\n    wait=wait_fixed(2),\n)\ndef f(): pass\n";
        let f = run(&e, "a.py", Some(base), Some(head));
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].line, 3);
        assert_eq!(f[0].message, "wait_random_exponential removed");
        // The whole retry site deleted: not a jitter regression.
        assert!(run(&e, "a.py", Some(base), Some("import x\n")).is_empty());
        // A pure deletion of the line reports at the retry site.
        let f = run(&e, "a.py", Some(base), Some("import x\n@retry(\n)\ndef f(): pass\n"));
        assert_eq!(f.iter().map(|f| f.line).collect::<Vec<_>>(), vec![2]);
    }

    #[test]
    fn context_condition_limits_matches() {
        let yaml = r#"
rules:
  - id: t/limit
    kind: retry-count-raised
    severity: error
    languages: [yaml]
    message: "limit {base} -> {head}"
    pattern: '\blimit:\s*(?P<n>\d+)'
    when: raised
    counts: retries
    inside: { pattern: '^\s*retry:', before: 2 }
    docs: { what: w, why: y, example: e, use_instead: u }
"#;
        let e = engine(yaml);
        let f = run(&e, "c.yaml", Some("retry:\n  limit: 2\n"), Some("retry:\n  limit: 5\n"));
        assert_eq!(f.len(), 1);
        let page = "retry:\n  limit: 2\nother: 1\nx: 1\npage:\n  limit: 20\n";
        assert!(run(&e, "c.yaml", Some(page), Some(&page.replace("20", "50"))).is_empty());
    }
    #[test]
    fn seconds_compare_across_units() {
        let yaml = r#"
rules:
  - id: t/timeout
    kind: timeout-lowered
    severity: error
    languages: [yaml]
    message: "timeout {base} -> {head}"
    pattern: '\bperTryTimeout:\s*(?P<n>\d+(?:\.\d+)?)(?P<unit>ms|s)'
    when: lowered
    counts: seconds
    docs: { what: w, why: y, example: e, use_instead: u }
"#;
        let e = engine(yaml);
        let f = run(&e, "v.yaml", Some("perTryTimeout: 2s\n"), Some("perTryTimeout: 800ms\n"));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].message, "timeout 2s -> 800ms (2s -> 0.8s)");
        assert!(run(&e, "v.yaml", Some("perTryTimeout: 800ms\n"), Some("perTryTimeout: 2s\n")).is_empty());
    }
}
