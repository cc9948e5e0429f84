//! The prefilter: which rules of a file's language can match at all in the
//! lines a change touched, so that only those are evaluated.
//!
//! Per language and view, one `RegexSet` holds every rule's patterns. A
//! `raised`/`lowered`/`added` finding needs a head occurrence on an added
//! line, so those rules are searched in the head's changed regions; a
//! `removed` finding needs a base occurrence on a deleted or replaced line,
//! so those rules are searched in the base's. Both searches sit behind a
//! raw-text [`LiteralGate`]: a region holding none of the literals every
//! match needs is dropped before the side is masked at all.

use std::collections::BTreeSet;

use aho_corasick::AhoCorasick;
use regex::bytes::{RegexSet, RegexSetBuilder};

use super::side::SideText;
use crate::analyze::rules::lang::Language;
use crate::analyze::rules::mask::View;
use crate::analyze::rules::spec::{Rule, RuleSet, When};

/// Rules of one language for one view, behind a `RegexSet` prefilter.
#[derive(Debug)]
pub(super) struct Prefilter {
    set: RegexSet,
    /// The rule each pattern of `set` belongs to.
    owners: Vec<usize>,
    view: View,
}

/// The prefilters of one language. A `raised`/`lowered`/`added` finding
/// needs a head occurrence on an added line, so those rules are prefiltered
/// on the head's changed regions only; a `removed` finding needs a base
/// occurrence on a deleted or replaced line, so those rules are prefiltered
/// on the base's changed regions.
#[derive(Debug, Default)]
pub(super) struct LangFilters {
    head: Vec<Prefilter>,
    base: Vec<Prefilter>,
    /// Literals every match of a `removed` rule must contain, searched in the
    /// raw base: when none occurs near a removed base line, the base is
    /// neither masked nor searched.
    removed_gate: Option<LiteralGate>,
    /// The same for the `raised`/`lowered`/`added` rules, on the head.
    head_gate: Option<LiteralGate>,
}

/// A sound raw-text gate: masking only turns bytes into spaces, so a
/// space-free literal in a masked match is in the raw text at the same place.
#[derive(Debug)]
pub(super) struct LiteralGate {
    literals: AhoCorasick,
    /// Set when some rule has no usable literal: the gate cannot say no.
    always: bool,
}

/// How many lines around each added head range the prefilter reads, so a
/// match that starts a few lines above its changed value (a key, then its
/// value on the next line) is still seen.
pub(crate) const PREFILTER_MARGIN_LINES: u32 = 3;

/// The languages some rule reads: those a prefilter can be built for.
pub(super) fn languages_read(set: &RuleSet) -> Vec<Language> {
    Language::ALL.iter().copied().filter(|l| set.rules.iter().any(|r| r.languages.contains(l))).collect()
}

/// The prefilters of one language, or `None` when no rule reads it. Built
/// the first time a file of that language is analyzed: a pull request
/// touches a language or two, and compiling every language's sets cost
/// most of a small scan's time.
pub(super) fn build(set: &RuleSet, lang: Language) -> anyhow::Result<Option<LangFilters>> {
    let mut filters = LangFilters::default();
    for view in [View::Code, View::Text] {
        for on_base in [false, true] {
            let mut sources = Vec::new();
            let mut owners = Vec::new();
            for (i, rule) in set.rules.iter().enumerate() {
                let wanted = rule.view == view
                    && rule.languages.contains(&lang)
                    && (rule.when == When::Removed) == on_base;
                if wanted {
                    for p in &rule.match_sources {
                        sources.push(p.as_str());
                        owners.push(i);
                    }
                }
            }
            if sources.is_empty() {
                continue;
            }
            let regex_set = RegexSetBuilder::new(&sources)
                .unicode(false)
                .multi_line(true)
                .size_limit(64 << 20)
                .dfa_size_limit(64 << 20)
                .build()
                .map_err(|e| anyhow::anyhow!("could not build the {} prefilter: {e}", lang.name()))?;
            let f = Prefilter { set: regex_set, owners, view };
            if on_base {
                filters.base.push(f);
            } else {
                filters.head.push(f);
            }
        }
    }
    if !filters.base.is_empty() {
        let removed: Vec<&Rule> =
            set.rules.iter().filter(|r| r.when == When::Removed && r.languages.contains(&lang)).collect();
        filters.removed_gate = literal_gate(&removed);
    }
    if !filters.head.is_empty() {
        let others: Vec<&Rule> =
            set.rules.iter().filter(|r| r.when != When::Removed && r.languages.contains(&lang)).collect();
        filters.head_gate = literal_gate(&others);
    }
    Ok((!filters.head.is_empty() || !filters.base.is_empty()).then_some(filters))
}

impl LangFilters {
    /// Adds to `out` the `raised`/`lowered`/`added` rules with a match in the
    /// head's changed `regions` (byte ranges).
    pub(super) fn head_candidates(
        &self,
        head: &SideText,
        regions: &[(usize, usize)],
        out: &mut BTreeSet<usize>,
    ) {
        let Some(raw) = head.raw else { return };
        // Regions with none of the literals the rules' matches start with
        // are dropped before the head is masked at all.
        let regions: Vec<(usize, usize)> = regions
            .iter()
            .copied()
            .filter(|&(from, to)| admits(&self.head_gate, &raw.as_bytes()[from..to]))
            .collect();
        search(&self.head, head, &regions, out);
    }

    /// Adds to `out` the `removed` rules with a match in the base's changed
    /// regions. `regions` computes them (a line walk over both sides), and
    /// is called only when a literal the rules need is in the base at all.
    pub(super) fn base_candidates<'r>(
        &self,
        base: &SideText,
        regions: impl FnOnce() -> &'r [(usize, usize)],
        out: &mut BTreeSet<usize>,
    ) {
        if self.base.is_empty() {
            return;
        }
        let raw = base.raw.unwrap_or("").as_bytes();
        if !admits(&self.removed_gate, raw) {
            return;
        }
        let regions: Vec<(usize, usize)> = regions()
            .iter()
            .copied()
            .filter(|&(from, to)| admits(&self.removed_gate, &raw[from..to]))
            .collect();
        search(&self.base, base, &regions, out);
    }
}

/// Whether `gate` lets `bytes` through (no gate lets everything through).
fn admits(gate: &Option<LiteralGate>, bytes: &[u8]) -> bool {
    gate.as_ref().is_none_or(|g| g.always || g.literals.is_match(bytes))
}

/// Adds the owners of every pattern of `filters` that matches in `regions`.
fn search(filters: &[Prefilter], side: &SideText, regions: &[(usize, usize)], out: &mut BTreeSet<usize>) {
    if regions.is_empty() {
        return;
    }
    for f in filters {
        let Some(text) = side.view(f.view) else { continue };
        for &(from, to) in regions {
            for p in f.set.matches(&text[from..to]).iter() {
                out.insert(f.owners[p]);
            }
        }
    }
}

/// The literal gate of a group of rules, or `None` when the literals cannot
/// be built (the caller then searches without a gate).
fn literal_gate(rules: &[&Rule]) -> Option<LiteralGate> {
    let mut literals: Vec<Vec<u8>> = Vec::new();
    let mut always = false;
    for r in rules {
        for p in &r.match_sources {
            match required_literals(p) {
                Some(lits) => literals.extend(lits),
                None => always = true,
            }
        }
    }
    // A literal that extends a shorter one adds nothing to "is any there".
    literals.sort_by_key(|l| (l.len(), l.clone()));
    let mut kept: Vec<Vec<u8>> = Vec::new();
    for l in literals {
        if !kept.iter().any(|k| l.starts_with(k)) {
            kept.push(l);
        }
    }
    let literals = AhoCorasick::new(&kept).ok()?;
    Some(LiteralGate { literals, always })
}

/// Whitespace-free literals one of which every match of `pattern` contains:
/// the first whitespace-free piece of each of the pattern's prefix literals.
/// `None` when the pattern has no finite, non-empty prefix set.
fn required_literals(pattern: &str) -> Option<Vec<Vec<u8>>> {
    let hir = regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .multi_line(true)
        .build()
        .parse(pattern)
        .ok()?;
    let seq = regex_syntax::hir::literal::Extractor::new().extract(&hir);
    let mut out = Vec::new();
    for lit in seq.literals()? {
        // The first whitespace-free piece: it cannot hold a masked byte, and
        // cutting at whitespace folds the `\s*` variants into one literal.
        let piece = lit.as_bytes().split(|c| c.is_ascii_whitespace()).find(|p| !p.is_empty())?;
        out.push(piece.to_vec());
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changeset::FileChange;

    const RULES: &str = r#"
rules:
  - id: t/retries
    kind: retry-count-raised
    severity: error
    languages: [python]
    message: "retries {base} -> {head}"
    pattern: '\bretries\s*=\s*(?P<n>\d+)'
    when: raised
    counts: retries
    docs: { what: w, why: y, example: e, use_instead: u }
  - id: t/jitter-gone
    kind: jitter-removed
    severity: error
    languages: [python]
    message: "{match} removed"
    pattern: '\bwait_random\b'
    when: removed
    inside: { pattern: '@retry\b', before: 3 }
    docs: { what: w, why: y, example: e, use_instead: u }
"#;

    fn filters() -> LangFilters {
        let set = RuleSet::load(&[("t.yml".into(), RULES.into())]).unwrap();
        assert!(build(&set, Language::Go).unwrap().is_none(), "no rule reads Go: no filters");
        assert_eq!(languages_read(&set), vec![Language::Python]);
        build(&set, Language::Python).unwrap().unwrap()
    }

    fn head(base: &str, head: &str) -> BTreeSet<usize> {
        let f = FileChange::from_texts("a.py", Some(base), Some(head));
        let side = SideText::new(Some(head), Language::Python.syntax());
        let mut out = BTreeSet::new();
        filters().head_candidates(&side, &side.regions(&f.added, PREFILTER_MARGIN_LINES), &mut out);
        out
    }

    #[test]
    fn head_candidates_are_the_rules_matching_near_an_added_line() {
        assert_eq!(head("x = 1\n", "c(retries=3)\n"), BTreeSet::from([0]));
        // Far from the added line: outside the margin.
        let far = format!("c(retries=3)\n{}", "pass\n".repeat(10));
        assert!(head(&far, &format!("{far}y = 2\n")).is_empty());
        // In a comment: the literal gate opens, the masked view has no match.
        assert!(head("x = 1\n", "# retries=3\n").is_empty());
        // A removed rule is never a head candidate.
        assert!(head("x = 1\n", "wait_random()\n").is_empty());
    }

    #[test]
    fn base_candidates_read_the_changed_base_regions_only_when_the_gate_opens() {
        let f = filters();
        let base = SideText::new(Some("@retry(wait=wait_random())\n"), Language::Python.syntax());
        let mut out = BTreeSet::new();
        let regions = [(0, 27)];
        f.base_candidates(&base, || &regions, &mut out);
        assert_eq!(out, BTreeSet::from([1]));
        // No literal in the base: the regions are never computed.
        let plain = SideText::new(Some("x = 1\n"), Language::Python.syntax());
        let mut out = BTreeSet::new();
        f.base_candidates(&plain, || unreachable!("the gate should have closed"), &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn literal_gate_keeps_the_shortest_prefix_and_says_always_without_literals() {
        let set = RuleSet::load(&[("t.yml".into(), RULES.into())]).unwrap();
        let rules: Vec<&Rule> = set.rules.iter().collect();
        let gate = literal_gate(&rules).unwrap();
        assert!(!gate.always);
        assert!(gate.literals.is_match(b"x(retries=1)") && gate.literals.is_match(b"wait_random"));
        assert!(!gate.literals.is_match(b"timeout=1"));
        assert!(admits(&None, b"anything"), "no gate admits everything");
    }

    #[test]
    fn required_literals_are_space_free_prefixes_or_none() {
        let lits = |p: &str| {
            required_literals(p)
                .map(|v| v.into_iter().map(|l| String::from_utf8(l).unwrap()).collect::<Vec<_>>())
        };
        let jitter = lits(r"\b(?:backoff_jitter|wait_jitter)\s*=\s*0").unwrap();
        assert!(
            jitter.iter().all(|l| l.starts_with("backoff_jitter") || l.starts_with("wait_jitter")),
            "{jitter:?}"
        );
        assert!(jitter.contains(&"wait_jitter".to_string()), "{jitter:?}");
        let attempts = lits(r"(?:^|[ \t{,])attempts\s*:").unwrap();
        assert!(attempts.iter().all(|l| l.contains("attempts") && !l.contains(' ')), "{attempts:?}");
        assert_eq!(lits(r".*retry"), None, "a match may start anywhere");
        assert_eq!(lits(r"\s*x"), None, "a piece of spaces only is no literal");
    }
}
