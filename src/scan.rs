//! `retrygate scan` as a library call: the findings of a change with no
//! evidence and no policy, as a [`GateVerdict`].
//!
//! [`scan_report`] reads a revision range the way `retrygate check` does (the
//! `paths` and `rules` of the config at the base, the defaults without one);
//! [`scan_changeset`] runs the bundled analyzers with the default config over
//! a change set already in memory (the benchmarks and rule tests use it).

use std::path::Path;

use crate::analyze::{self, Analyzer};
use crate::changeset::{ChangeSet, Git};
use crate::printer::GateVerdict;

/// The scan of `merge-base(base, head)..head` in `repo`: the config from the
/// base commit (as `check` reads it; the defaults when the base has none),
/// the change set, then every analyzer as that config shapes them.
pub fn scan_report(repo: &Path, base: &str, head: &str) -> anyhow::Result<GateVerdict> {
    // The rule packs compile while the change set is read (mostly a wait
    // on git). A failure to read the change is still the one reported
    // first, as when the two ran in turn.
    let (cs, packs) = std::thread::scope(|s| {
        let packs = s.spawn(|| -> anyhow::Result<_> {
            let git = Git::open(repo)?;
            let base_sha = git.resolve_commit(base)?;
            let base = crate::config::Config::at_base(&git, &base_sha)?;
            let packs = crate::gate::rule_packs(&git, &base_sha, &base.config)?;
            Ok((base, packs))
        });
        let cs = ChangeSet::from_git(repo, base, head);
        let packs = packs.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        (cs, packs)
    });
    let cs = cs?;
    let (base, packs) = packs?;
    let outcome = crate::gate::scan_with_packs(&base.config, &cs, packs)?;
    Ok(GateVerdict::from_scan(outcome.findings, outcome.notes))
}

/// Runs the bundled analyzers over a change set with the default config.
pub fn scan_changeset(cs: &ChangeSet) -> anyhow::Result<GateVerdict> {
    let rust = analyze::rust::RustAnalyzer::for_changeset(cs);
    let packs = analyze::rules::RulePackAnalyzer::bundled()?.with_head(cs);
    let layers = analyze::layers::LayersAnalyzer::for_changeset(
        cs,
        crate::config::DEFAULT_MAX_AMPLIFICATION,
        analyze::testcode::ScanPaths::defaults(),
    );
    let knobs = analyze::knobs::KnobsAnalyzer;
    let trees = analyze::trees::TreesAnalyzer::for_changeset(cs);
    let ops = analyze::operations::OperationsAnalyzer::for_changeset(cs);
    let analyzers: [&dyn Analyzer; 6] = [&rust, &packs, &layers, &trees, &ops, &knobs];
    let outcome = analyze::scan(cs, &analyzers);
    Ok(GateVerdict::from_scan(outcome.findings, outcome.notes))
}
