//! The JSON rendering: the stable interface of docs/architecture.md and the README,
//! `{"verdict": .., "findings": [..], "notes": [..]}`.

use std::io::{self, Write};

use super::Report;

pub fn render(report: &Report, w: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, report)?;
    writeln!(w)
}
