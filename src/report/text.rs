//! The plain-text rendering for terminals: one line per finding, in the
//! `path:line: severity[kind]: message` shape compilers use.

use std::io::{self, Write};

use super::{Report, Verdict};

pub fn render(report: &Report, w: &mut dyn Write) -> io::Result<()> {
    for f in &report.findings {
        writeln!(w, "{}:{}: {}[{}]: {} ({})", f.path, f.line, f.severity, f.kind, f.message, f.rule)?;
    }
    for n in &report.notes {
        let tag = if n.blocking { "blocking note" } else { "note" };
        writeln!(w, "{tag}: {n}")?;
    }
    let errors = report.findings.iter().filter(|f| f.is_blocking()).count();
    let blocking_notes = report.notes.iter().filter(|n| n.blocking).count();
    match report.verdict {
        Verdict::Block => writeln!(
            w,
            "retrygate: BLOCK ({} finding(s), {} blocking, {} file(s) not analysed)",
            report.findings.len(),
            errors,
            blocking_notes
        ),
        Verdict::Pass => writeln!(w, "retrygate: PASS ({} finding(s), none blocking)", report.findings.len()),
    }
}
