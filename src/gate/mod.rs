//! `retrygate check`: the whole gate for one change, the same on a laptop
//! as in the GitHub Action.
//!
//! [`check`] gathers every input and hands them to the pure
//! [`crate::decision::decide`]:
//!
//! 1. the config from the **base** commit ([`Config::at_base`]), and
//!    the rule packs its `rules.extra` names, also from the base;
//! 2. the change set and the scan (Rust analyzer + rule packs), plus the
//!    decision's own findings (gate edits, protected paths, `limits`);
//! 3. agent detection from the facts (login, branch, labels, trailers);
//! 4. for agent PRs, the evidence `require` demands: the ledger verified
//!    against the change set, and the 429 replay ([`replay`]) when retry or
//!    HTTP-client code changed;
//! 5. the sign-off, which counts for the head commit it names only.
//!
//! The result is a [`GateOutcome`]: the verdict, its JSON (a stable
//! interface, documented in docs/gate.md) and the Markdown sticky-comment
//! body. `Err` means no decision could be made; every caller treats it as
//! blocking (exit 2).
//!
//! ```no_run
//! use retrygate::gate::{check, CheckInput};
//! let input = CheckInput { author: Some("claude[bot]".into()), ..CheckInput::new(".", "origin/main", "HEAD") };
//! let outcome = check(&input)?;
//! println!("{}", outcome.markdown);
//! # anyhow::Ok(())
//! ```

pub(crate) mod facts;
pub(crate) mod ledger;
pub mod replay;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;

use crate::analyze::testcode::ScanPaths;
use crate::analyze::{self, Analyzer};
use crate::changeset::{ChangeSet, Git};
use crate::config::Config;
use crate::decision::agent::{self, PrFacts};
use crate::decision::{self, DecisionInput, ReplaySummary, SignOffRequest, Verdict};
use crate::finding::Kind;

/// How long `replay.command` may run when the caller sets no bound.
pub(crate) const DEFAULT_REPLAY_TIMEOUT: Duration = Duration::from_secs(120);

/// Everything one gate run needs; the GitHub layer fills it from the event,
/// the command line from flags and git.
#[derive(Debug, Clone)]
pub struct CheckInput {
    /// The repository (a working tree when `replay.command` is to run).
    pub repo: PathBuf,
    /// The branch or commit the pull request targets; the config is read here.
    pub base: String,
    /// The pull request's head commit.
    pub head: String,
    /// The author's login (`--author`).
    pub author: Option<String>,
    /// The pull request's labels (`--label`).
    pub labels: Vec<String>,
    /// The head branch name; `None` derives it from `head` when that names a branch.
    pub head_branch: Option<String>,
    /// `Some(true)` = `--agent`, `Some(false)` = `--human`.
    pub forced_agent: Option<bool>,
    /// The ledger file (`--ledger PATH`); `None` = look for it in the order
    /// [`ledger`] describes.
    pub ledger: Option<PathBuf>,
    /// A downloaded ledger artifact (`--ledger-artifact ZIP`), standing in
    /// for the Actions artifact lookup.
    pub ledger_artifact: Option<PathBuf>,
    /// Where Actions artifacts are looked up (the GitHub layer sets it);
    /// `None` = not looked up.
    pub artifacts: Option<std::sync::Arc<dyn crate::ledger::artifact::ArtifactSource>>,
    /// A report written by `retrygate replay --report PATH`.
    pub replay_report: Option<PathBuf>,
    /// Who ran the replay behind `replay_report` (see [`ReportOrigin`]).
    pub replay_report_origin: ReportOrigin,
    /// A maintainer's sign-off (`--sign-off SHA`, or a comment).
    pub sign_off: Option<SignOffRequest>,
    /// Bound on running `replay.command`; `None` = [`DEFAULT_REPLAY_TIMEOUT`].
    pub replay_timeout: Option<Duration>,
    /// Whether `replay.command` may run here. The GitHub layer sets `false`
    /// where running the PR's code is unsafe (a fork's read-only job that has
    /// no report); the replay then counts as not run, which blocks.
    pub allow_replay_command: bool,
    /// Prefix for line links in the Markdown, e.g.
    /// `https://github.com/OWNER/REPO/blob/{head}`, where `{head}` stands for
    /// the head commit id; `None` = no links.
    pub link_base: Option<String>,
    /// Links the comment offers: the docs, the run, the replay artifact.
    pub links: crate::printer::Links,
}

impl CheckInput {
    /// An input for `base..head` in `repo` with every other field unset.
    pub fn new(repo: impl Into<PathBuf>, base: &str, head: &str) -> CheckInput {
        CheckInput {
            repo: repo.into(),
            base: base.to_string(),
            head: head.to_string(),
            author: None,
            labels: Vec::new(),
            head_branch: None,
            forced_agent: None,
            ledger: None,
            ledger_artifact: None,
            artifacts: None,
            replay_report: None,
            replay_report_origin: ReportOrigin::Caller,
            sign_off: None,
            replay_timeout: None,
            allow_replay_command: true,
            link_base: None,
            links: crate::printer::Links::default(),
        }
    }
}

/// Who produced a replay report, which decides how far it is believed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReportOrigin {
    /// The caller ran it (`retrygate check --replay-report` on a laptop, or
    /// the same job as the gate): checked against the head and scenario, then
    /// believed.
    #[default]
    Caller,
    /// The pull request's own workflow run made it, with the pull request's
    /// code: labelled as such. For a fork (`fork: true`) it cannot make the
    /// pull request pass unless the base config sets
    /// `replay.trust_fork_reports: true`.
    PullRequestRun {
        /// The pull request comes from a fork.
        fork: bool,
    },
}

// The verdict and what it holds are decision types: the printer renders them
// without depending on the gate.
pub(crate) use crate::decision::{Evidence, GateFacts, GateVerdict};

/// What [`check`] returns.
#[derive(Debug, Clone)]
pub struct GateOutcome {
    /// Pass or block ("could not decide" is an `Err` of [`check`], never a verdict).
    pub verdict: Verdict,
    /// Everything the decision rests on, as the printer renders it.
    pub gate: GateVerdict,
    /// `gate` as JSON, the stable interface.
    pub json: serde_json::Value,
    /// The sticky-comment body.
    pub markdown: String,
}

/// Runs the gate. `Err` = could not decide (bad config, git failure,
/// unreadable ledger, or a bug); callers report it as blocking.
pub fn check(input: &CheckInput) -> anyhow::Result<GateOutcome> {
    // A panic is a bug, and a bug must not look like anything but "could
    // not decide" to the Action (exit 2), never a crash code it might misread.
    crate::text::catch_panic(|| check_inner(input)).unwrap_or_else(|panicked| Err(panicked.into()))
}

fn check_inner(input: &CheckInput) -> anyhow::Result<GateOutcome> {
    let git = Git::open(&input.repo)?;
    let base_sha = git.resolve_commit(&input.base)?;
    let base = Config::at_base(&git, &base_sha)?;
    let config = &base.config;
    // The scenario is part of the config: one that cannot be found is a bad
    // config (exit 2), whether or not this change needs a replay.
    let expected = replay::expected_scenario(&git, &base_sha, &config.replay.scenario).map_err(|e| {
        anyhow::anyhow!(
            "{}: replay.scenario: {e}; name bundled scenarios ({}) or scenario files committed at the base",
            base.source,
            crate::replay::scenario::bundled_names()
        )
    })?;
    let cs = ChangeSet::from_git(&input.repo, &input.base, &input.head)?;

    // Findings: the scan as the base config shapes it.
    let scanned = scan_with_config(&git, &base_sha, config, &cs)?;
    let mut findings = scanned.findings;
    let mut notes = scanned.notes;
    // The ledger file names retry words without being retry code, and an
    // edit of the gate's own config is not an edit of retry code.
    let touches_retry = findings.iter().any(|f| f.kind != Kind::GateConfigChanged)
        || scanned.retry_code.iter().any(|p| *p != config.ledger.path);

    // Facts and agent detection.
    let head_branch = input.head_branch.clone().or_else(|| facts::branch_name(&git, &input.head));
    let pr = PrFacts {
        author: input.author.clone(),
        head_branch: head_branch.clone(),
        labels: input.labels.clone(),
        co_authors: facts::co_authors(&git, &cs.merge_base, &cs.head)?,
        forced: input.forced_agent,
    };
    let agent = agent::detect(&config.agents, &pr);

    // The decision's own findings: edits of the gate, and protected paths for
    // an agent's PR. `scan` leaves these out (they are facts about the
    // repository's gate, not retry regressions); `limits` it reports too.
    findings.extend(decision::paths::gate_config_changes(config, &cs.files));
    if agent.is_agent {
        findings.extend(decision::paths::protected_path_changes(config, &cs.files)?);
    }
    crate::finding::keep_most_severe(&mut findings);
    notes.dedup();

    // Evidence, as `require` demands it of agent PRs.
    let ledger = if agent.is_agent && config.require.ledger {
        Some(ledger::find_and_verify(input, config, &cs, &git)?)
    } else {
        None
    };
    let mut replay_report = None;
    let replay = if agent.is_agent && config.require.replay {
        if !touches_retry {
            Some(ReplaySummary::not_required("the change touches no retry or HTTP-client code"))
        } else {
            let cap_failures = replay::cap_failures(&findings);
            let mut ev = replay_evidence(input, config, &git, (&base_sha, &cs.head), &expected, cap_failures);
            // Only a report the gate believes says what was called; a
            // rejected one's timelines are not evidence of anything.
            let judged = matches!(
                ev.summary.status,
                decision::ReplayStatus::Pass | decision::ReplayStatus::Fail | decision::ReplayStatus::NoRetry
            );
            if let Some(report) = ev.report.as_ref().filter(|_| judged) {
                let called = crate::replay::compare::exercised_operations(report)
                    .into_iter()
                    .map(|e| e.operation)
                    .collect();
                let head_text =
                    |path: &str| cs.files.iter().find(|f| f.path == path).and_then(|f| f.head.text());
                ev.summary.coverage = Some(decision::coverage::Coverage::of(
                    &findings,
                    &head_text,
                    called,
                    config.replay.require_coverage,
                ));
            }
            replay_report = ev.report;
            Some(ev.summary)
        }
    } else {
        None
    };
    let not_required = ReplaySummary::not_required("not demanded");

    let decision = decision::decide(&DecisionInput {
        mode: config.mode,
        head: &cs.head,
        findings: &findings,
        notes: &notes,
        agent: &agent,
        ledger: ledger.as_ref(),
        replay: replay.as_ref().unwrap_or(&not_required),
        sign_off: input.sign_off.as_ref(),
    });

    let gate = GateVerdict::new(
        decision,
        findings,
        notes,
        Evidence { ledger, replay },
        Some(GateFacts {
            base: input.base.clone(),
            base_sha,
            merge_base: cs.merge_base.clone(),
            head: cs.head.clone(),
            head_branch,
            author: input.author.clone(),
            labels: input.labels.clone(),
            agent,
            config_source: base.source.clone(),
            mode: config.mode,
        }),
    );
    let json = serde_json::to_value(&gate).context("serialising the verdict")?;
    let link_base = input.link_base.as_ref().map(|l| l.replace("{head}", &cs.head));
    let markdown = crate::printer::markdown::render_comment(
        &gate,
        &crate::printer::Context {
            replay: replay_report.as_ref(),
            sign_off: Some(&config.sign_off),
            link_base: link_base.as_deref(),
            links: Some(&input.links),
        },
    );
    Ok(GateOutcome { verdict: gate.verdict, gate, json, markdown })
}

/// The scan as the base config shapes it: the bundled rule packs plus the
/// base's `rules.extra`, without the rules `rules.disable` names, leaving out
/// the files `paths.ignore` names, and with findings in test code (the
/// default patterns, or `paths.tests`) turned into notes. `retrygate scan`
/// and `retrygate check` both call it, so their findings agree.
pub(crate) fn scan_with_config(
    git: &Git,
    base_sha: &str,
    config: &Config,
    cs: &ChangeSet,
) -> anyhow::Result<analyze::ScanOutcome> {
    let packs = rule_packs(git, base_sha, config)?;
    scan_with_packs(config, cs, packs)
}

/// The rule packs the base config asks for: the bundled packs and the
/// base's `rules.extra`, compiled.
pub(crate) fn rule_packs(
    git: &Git,
    base_sha: &str,
    config: &Config,
) -> anyhow::Result<analyze::rules::RulePackAnalyzer> {
    let extra = facts::rules_at_base(git, base_sha, &config.rules.extra)?;
    analyze::rules::RulePackAnalyzer::with_extra(extra)
        .context("loading the rule packs (rules.extra at the base commit)")
}

/// [`scan_with_config`] with the rule packs already compiled
/// ([`rule_packs`]).
pub(crate) fn scan_with_packs(
    config: &Config,
    cs: &ChangeSet,
    packs: analyze::rules::RulePackAnalyzer,
) -> anyhow::Result<analyze::ScanOutcome> {
    let rust = analyze::rust::RustAnalyzer::for_changeset(cs);
    let packs = packs.with_head(cs);
    let paths = ScanPaths::from_config(&config.paths)?;
    let layers =
        analyze::layers::LayersAnalyzer::for_changeset(cs, config.limits.amplification(), paths.clone());
    let knobs = analyze::knobs::KnobsAnalyzer;
    let trees = analyze::trees::TreesAnalyzer::for_changeset(cs);
    let ops = analyze::operations::OperationsAnalyzer::for_changeset(cs);
    let analyzers: [&dyn Analyzer; 6] = [&rust, &packs, &layers, &trees, &ops, &knobs];
    let mut scanned = analyze::scan_with(cs, &analyzers, &paths, &config.rules.disable);
    scanned.findings.retain(|f| !config.rules.disable.contains(&f.rule));
    // The base config's ceiling on attempts is a retry finding like any
    // other, so `scan` and `check` count the same retry findings for a change.
    if let Some(max) = config.limits.max_attempts {
        let mut over = decision::limits_findings(max, &scanned.head_policies);
        // Test code does not block here either. A file that could not be
        // parsed has no policies here; the scan's blocking note covers it.
        analyze::testcode::demote(&mut over, &mut Vec::new(), cs, &paths);
        scanned.findings.extend(over);
    }
    crate::finding::keep_most_severe(&mut scanned.findings);
    Ok(scanned)
}

/// The replay evidence: `--replay-report` first, else `replay.command` (when
/// this job may run it), else missing.
fn replay_evidence(
    input: &CheckInput,
    config: &Config,
    git: &Git,
    (base_sha, head): (&str, &str),
    expected: &crate::replay::LoadedScenario,
    cap_failures: Option<usize>,
) -> replay::ReplayEvidence {
    if let Some(path) = &input.replay_report {
        let mut ev = replay::from_report_file(path, head, expected);
        if let ReportOrigin::PullRequestRun { fork } = input.replay_report_origin {
            let who = if fork { "the fork's" } else { "the pull request's" };
            ev.summary.source = Some(format!(
                "reported by {who} own run (its code wrote this report): {}",
                ev.summary.source.as_deref().unwrap_or("")
            ));
            if fork && !config.replay.trust_fork_reports && ev.summary.status == decision::ReplayStatus::Pass
            {
                ev.summary.status = decision::ReplayStatus::Rejected;
                ev.summary.problems.push(
                    "a fork's own run wrote this report, so the fork could have faked it; it cannot make a fork's pull request pass unless the base config sets replay.trust_fork_reports: true; a maintainer can review the replay and sign off".into(),
                );
            }
        }
        return ev;
    }
    let Some(cmd) = &config.replay.command else {
        return replay::ReplayEvidence {
            summary: ReplaySummary::with_status(
                decision::ReplayStatus::Missing,
                &format!(
                    "{}, no --replay-report was given and the base config sets no replay.command",
                    replay::DUE
                ),
            ),
            report: None,
        };
    };
    if !input.allow_replay_command {
        return replay::ReplayEvidence::without_report(
            decision::ReplayStatus::NotRun,
            format!("replay.command: {cmd}"),
            "running replay.command is not allowed in this job; run `retrygate replay --report PATH` in a job that may run the pull request's code and pass --replay-report".into(),
        );
    }
    let timeout = input.replay_timeout.unwrap_or(DEFAULT_REPLAY_TIMEOUT);
    let sides = replay::Sides { base: base_sha, head, cap_failures };
    replay::run_command(git, &config.replay, cmd, sides, timeout, expected)
}
