//! The github rendering.

use std::io::{self, Write};

use super::Report;

pub fn render(report: &Report, w: &mut dyn Write) -> io::Result<()> {
    super::json::render(report, w)
}
