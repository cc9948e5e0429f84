//! The Rust analyzer (placeholder while it is built).

use super::{Analyzer, FileResult};
use crate::changeset::FileChange;

pub struct RustAnalyzer {}

impl RustAnalyzer {
    pub fn new() -> Self {
        RustAnalyzer {}
    }
}

impl Default for RustAnalyzer {
    fn default() -> Self {
        Self::new()
    }
}

impl Analyzer for RustAnalyzer {
    fn name(&self) -> &str {
        "rust analyzer"
    }
    fn wants(&self, path: &str) -> bool {
        path.ends_with(".rs")
    }
    fn analyze(&self, _file: &FileChange) -> FileResult {
        FileResult::default()
    }
}
