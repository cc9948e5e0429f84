//! Placeholder: the YAML rule-pack engine is being built (see the open issue).

pub mod cli;

use super::{Analyzer, FileResult};
use crate::changeset::FileChange;

/// Analyzer that runs the YAML rule packs.
pub struct RulePackAnalyzer {}

impl RulePackAnalyzer {
    /// The packs shipped with retrygate.
    pub fn bundled() -> anyhow::Result<RulePackAnalyzer> {
        Ok(RulePackAnalyzer {})
    }
}

impl Analyzer for RulePackAnalyzer {
    fn name(&self) -> &str {
        "rule packs"
    }
    fn wants(&self, _path: &str) -> bool {
        false
    }
    fn analyze(&self, _file: &FileChange) -> FileResult {
        FileResult::default()
    }
}
