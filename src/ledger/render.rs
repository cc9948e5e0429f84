//! A verified ledger for people: the terminal text `retrygate ledger verify`
//! prints and the gate's text verdict indents under its ledger line.
//!
//! Verification ([`super::verify()`]) only produces the [`LedgerReport`]; this
//! module only reads it, so how a report looks can change without touching
//! what it says.

use std::fmt::Write as _;

use super::verify::LedgerReport;

/// Renders a report for a terminal: a state line (absent, valid, invalid,
/// with the record count and format), where the ledger came from, every
/// listed problem with its place and fix, how many more were left out, and
/// the coverage of the change when there is one.
pub fn render_text(r: &LedgerReport) -> String {
    let mut out = String::new();
    let state = if !r.present {
        "absent"
    } else if r.valid {
        "valid"
    } else {
        "invalid"
    };
    let counts = match r.format.as_deref() {
        Some(format) => format!("{}, {format}", crate::text::plural(r.records as usize, "record", "records")),
        None => "no records".to_string(),
    };
    let _ = writeln!(out, "ledger {}: {state} ({counts})", r.ledger);
    if let Some(o) = &r.origin {
        let _ = writeln!(out, "  from {}", o.describe());
    }
    for p in &r.problems {
        let place = p.line.map_or_else(|| r.ledger.clone(), |l| format!("{}:{l}", r.ledger));
        let _ = writeln!(out, "  {place}: {}\n    fix: {}", p.message, p.fix);
    }
    if r.problems_omitted > 0 {
        let _ = writeln!(out, "  ... and {} more problems", r.problems_omitted);
    }
    if let Some(c) = &r.coverage {
        let _ = writeln!(
            out,
            "coverage of {}..{}: {} changed, {} explained",
            c.base,
            crate::text::short_sha(&c.head),
            c.changed,
            c.explained
        );
        if !c.unexplained.is_empty() {
            let _ = writeln!(out, "  unexplained: {}", c.unexplained.join(", "));
        }
        if !c.not_landed.is_empty() {
            let _ = writeln!(out, "  recorded but not in the change: {}", c.not_landed.join(", "));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::artifact::LedgerOrigin;
    use crate::ledger::lines::ReadLimits;
    use crate::ledger::verify::{verify_reader, Coverage, Problem, MAX_PROBLEMS};

    fn report() -> LedgerReport {
        LedgerReport {
            ledger: ".tool_ledger.jsonl".into(),
            present: true,
            valid: true,
            format: Some("v2".into()),
            records: 3,
            lines: 3,
            problems: Vec::new(),
            problems_omitted: 0,
            coverage: None,
            origin: None,
            looked: Vec::new(),
        }
    }

    fn coverage(head: &str, unexplained: &[&str], not_landed: &[&str]) -> Option<Coverage> {
        let list = |l: &[&str]| l.iter().map(|p| p.to_string()).collect();
        Some(Coverage {
            base: "main".into(),
            head: head.into(),
            changed: 3,
            explained: 1,
            unexplained: list(unexplained),
            not_landed: list(not_landed),
        })
    }

    #[test]
    fn a_valid_ledger_is_one_line_with_its_count_and_format() {
        assert_eq!(render_text(&report()), "ledger .tool_ledger.jsonl: valid (3 records, v2)\n");
    }

    #[test]
    fn an_absent_ledger_says_absent_and_no_records() {
        let r = LedgerReport { present: false, valid: false, format: None, records: 0, ..report() };
        assert!(render_text(&r).starts_with("ledger .tool_ledger.jsonl: absent (no records)\n"));
    }

    #[test]
    fn problems_show_their_line_or_the_file_and_their_fix() {
        let r = LedgerReport {
            valid: false,
            problems: vec![
                Problem { line: Some(4), message: "digest mismatch".into(), fix: "restore it".into() },
                Problem { line: None, message: "b.py unexplained".into(), fix: "record it".into() },
            ],
            problems_omitted: 2,
            ..report()
        };
        insta::assert_snapshot!(render_text(&r), @r"
        ledger .tool_ledger.jsonl: invalid (3 records, v2)
          .tool_ledger.jsonl:4: digest mismatch
            fix: restore it
          .tool_ledger.jsonl: b.py unexplained
            fix: record it
          ... and 2 more problems
        ");
    }

    #[test]
    fn the_problem_cap_of_a_real_verification_is_shown_as_a_count() {
        let text = "x\n".repeat(MAX_PROBLEMS + 7);
        let r = verify_reader("t.jsonl", text.as_bytes(), None, ReadLimits::default()).unwrap();
        let shown = render_text(&r);
        assert!(shown.contains("and 7 more problems"), "{shown}");
        assert_eq!(shown.matches("    fix: ").count(), MAX_PROBLEMS);
    }

    #[test]
    fn origin_and_coverage_are_shown_with_a_short_head() {
        let r = LedgerReport {
            origin: Some(LedgerOrigin::File { path: "ledger.jsonl".into() }),
            coverage: coverage("0123456789abcdef0123456789abcdef01234567", &["b.py", "c.py"], &["gone.py"]),
            ..report()
        };
        insta::assert_snapshot!(render_text(&r), @r"
        ledger .tool_ledger.jsonl: valid (3 records, v2)
          from the file ledger.jsonl
        coverage of main..0123456: 3 changed, 1 explained
          unexplained: b.py, c.py
          recorded but not in the change: gone.py
        ");
    }

    #[test]
    fn empty_coverage_lists_are_left_out() {
        let r = LedgerReport { coverage: coverage("abc", &[], &[]), ..report() };
        let text = render_text(&r);
        assert!(!text.contains("unexplained") && !text.contains("recorded but not"), "{text}");
    }
}
