//! The JSON rendering, the stable interface of docs/gate.md and the README.
//! A gate's verdict is printed whole (`verdict`, `findings`, `notes`,
//! `reasons`, `evidence`, `facts`, `sign_off`); a scan's prints the three
//! fields it has always had, `{"verdict": .., "findings": [..], "notes": [..]}`.

use std::io::{self, Write};

use serde::Serialize;

use super::GateVerdict;
use crate::decision::Verdict;
use crate::finding::{Finding, Note};

/// A scan's JSON: the verdict's first three fields.
#[derive(Serialize)]
struct ScanJson<'a> {
    verdict: Verdict,
    findings: &'a [Finding],
    notes: &'a [Note],
}

pub(crate) fn render(v: &GateVerdict, w: &mut dyn Write) -> io::Result<()> {
    if v.is_scan() {
        let scan = ScanJson { verdict: v.verdict, findings: &v.findings, notes: &v.notes };
        serde_json::to_writer_pretty(&mut *w, &scan)?;
    } else {
        serde_json::to_writer_pretty(&mut *w, v)?;
    }
    writeln!(w)
}
