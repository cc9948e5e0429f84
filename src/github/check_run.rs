//! The required check: one check run named [`CHECK_NAME`] per head SHA, and
//! the commit status of the same name where check runs cannot be written.
//!
//! A check run is found before it is written (listed for the head SHA by
//! name), so re-running the job on the same commit updates the one run
//! instead of adding another. Annotations go [`MAX_ANNOTATIONS_PER_REQUEST`]
//! at a time (later updates append); the run's `annotations_count` says how
//! many already landed, so a re-run sends only the missing ones. The findings
//! of one head SHA never change, only the verdict (e.g. after a sign-off).

use octocrab::params::checks::{
    CheckRunConclusion, CheckRunOutput, CheckRunOutputAnnotation, CheckRunOutputAnnotationLevel,
    CheckRunStatus,
};
use serde_json::Value;

use super::client::{write_error, Api, ApiError, MAX_WRITE_ATTEMPTS};
use super::heads::{self, Combined};
use super::publication::Publication;
use super::text::cut;
use crate::finding::{Finding, Severity};
use crate::printer::{sorted_findings, Verdict};

/// The check run's and the status's name: what branch protection requires.
pub(crate) const CHECK_NAME: &str = "retrygate";

/// The `external_id` retrygate gives its check runs. A job named
/// `retrygate` also gets a check run of that name (from the same GitHub
/// Actions app); the id tells retrygate's own run from it.
pub const EXTERNAL_ID: &str = "retrygate-gate";

/// The `external_id` of the check run for `p`: [`EXTERNAL_ID`], then the
/// base it was judged against, `retrygate-gate base=main@<sha>`. The merge
/// queue reads it back ([`bound_base`]): a pass computed against another
/// base branch (before a retarget) does not count for this one.
pub(crate) fn external_id(p: &Publication) -> String {
    match &p.base {
        Some(b) => format!("{EXTERNAL_ID} base={}@{}", b.branch, b.sha),
        None => EXTERNAL_ID.to_string(),
    }
}

/// Whether an `external_id` is one of retrygate's own check runs.
pub(crate) fn is_own(external_id: &str) -> bool {
    external_id == EXTERNAL_ID || external_id.starts_with(&format!("{EXTERNAL_ID} "))
}

/// The base branch and commit an `external_id` from [`external_id`] names.
pub(crate) fn bound_base(external_id: &str) -> Option<(&str, &str)> {
    let rest = external_id.strip_prefix(EXTERNAL_ID)?.strip_prefix(" base=")?;
    rest.rsplit_once('@')
}

/// GitHub accepts at most 50 annotations per create or update request.
pub(crate) const MAX_ANNOTATIONS_PER_REQUEST: usize = 50;

/// `output.summary` and `output.text` may hold at most 65,535 characters.
pub(crate) const MAX_OUTPUT_CHARS: usize = 65_535;

/// An annotation's `title` may hold at most 255 characters.
pub(crate) const MAX_ANNOTATION_TITLE_CHARS: usize = 255;

/// An annotation's `message` may hold at most 64 KB.
pub(crate) const MAX_ANNOTATION_MESSAGE_BYTES: usize = 64 * 1024;

/// A commit status `description` may hold at most 140 characters.
pub(crate) const MAX_STATUS_DESCRIPTION_CHARS: usize = 140;

/// What happened to the check run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CheckOutcome {
    Created {
        id: u64,
        annotations: usize,
    },
    Updated {
        id: u64,
        annotations: usize,
    },
    /// Already showed this verdict with every annotation: nothing written.
    Unchanged {
        id: u64,
    },
    /// The run showing `success` refused the stricter verdict, so a new run
    /// of the same name carries it: branch protection reads the newest.
    Superseded {
        id: u64,
        stale_id: u64,
        annotations: usize,
    },
}

/// Maps a verdict onto a conclusion. Never `neutral` or `skipped`: both
/// count as passing for a required check.
pub(crate) fn conclusion(verdict: Verdict) -> CheckRunConclusion {
    match verdict {
        Verdict::Pass => CheckRunConclusion::Success,
        Verdict::Block => CheckRunConclusion::Failure,
    }
}

fn conclusion_str(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "success",
        Verdict::Block => "failure",
    }
}

/// The summary, cut to GitHub's limit with a pointer to where the rest is.
pub(crate) fn summary(publication: &Publication, details: Option<&str>) -> String {
    let pointer = match details {
        Some(url) => {
            format!("\n\n…cut to fit GitHub's limit; the full report is in the job summary of {url}")
        }
        None => "\n\n…cut to fit GitHub's limit; the full report is in the job summary of the workflow run"
            .to_string(),
    };
    cut(&publication.summary_markdown, MAX_OUTPUT_CHARS, &pointer)
}

/// One annotation as retrygate sends it (octocrab's parameter type is not
/// `Clone`, and batches are cut from one list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Annotation {
    pub(crate) path: String,
    pub(crate) start_line: u32,
    pub(crate) end_line: u32,
    pub(crate) severity: Severity,
    pub(crate) title: String,
    pub(crate) message: String,
}

impl Annotation {
    fn to_param(&self) -> CheckRunOutputAnnotation {
        CheckRunOutputAnnotation {
            path: self.path.clone(),
            start_line: self.start_line,
            end_line: self.end_line,
            start_column: None,
            end_column: None,
            annotation_level: match self.severity {
                Severity::Error => CheckRunOutputAnnotationLevel::Failure,
                Severity::Warning => CheckRunOutputAnnotationLevel::Warning,
                Severity::Note => CheckRunOutputAnnotationLevel::Notice,
            },
            message: self.message.clone(),
            title: Some(self.title.clone()),
            raw_details: None,
        }
    }
}

/// One annotation per finding, in the order every reporter uses, with lines
/// and lengths GitHub accepts.
pub(crate) fn annotations(findings: &[Finding]) -> Vec<Annotation> {
    sorted_findings(findings)
        .into_iter()
        .map(|f| {
            let start = f.line.max(1);
            Annotation {
                path: f.path.clone(),
                start_line: start,
                end_line: f.end_line.max(start),
                severity: f.severity,
                message: cut(
                    if f.message.is_empty() { f.kind.doc().what } else { &f.message },
                    MAX_ANNOTATION_MESSAGE_BYTES,
                    "…",
                ),
                title: cut(&format!("{} ({})", f.kind.id(), f.rule), MAX_ANNOTATION_TITLE_CHARS, "…"),
            }
        })
        .collect()
}

/// The `retrygate` check run on `head_sha`, if one exists.
pub(crate) async fn find(api: &Api, head_sha: &str) -> Result<Option<Value>, ApiError> {
    let route =
        api.repo_route(&format!("/commits/{head_sha}/check-runs?check_name={CHECK_NAME}&per_page=100"));
    let runs = api.get_all("listing check runs", &route, Some("check_runs")).await?;
    // Several runs of one name can exist (a job named `retrygate`, older
    // runs); only retrygate's own count, and the newest of those.
    Ok(runs
        .into_iter()
        .filter(|r| r.get("name").and_then(Value::as_str) == Some(CHECK_NAME))
        .filter(|r| r.get("external_id").and_then(Value::as_str).is_some_and(is_own))
        .max_by_key(|r| r.get("id").and_then(Value::as_u64).unwrap_or(0)))
}

/// The pull request a check run is published for, and the open pull
/// requests whose head the commit is ([`super::heads`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ForPr {
    pub(crate) number: u64,
    /// Open pull requests with this head, as GitHub lists them.
    pub(crate) open: Vec<u64>,
}

/// A check run left showing a kinder verdict than the one retrygate could
/// not write over it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stale {
    /// `None` when the run could not even be read.
    pub(crate) id: Option<u64>,
    /// What it shows (`success`), or `unknown`.
    pub(crate) conclusion: String,
}

/// What publishing the check run did.
#[derive(Debug, Clone)]
pub(crate) struct CheckReport {
    pub(crate) result: Result<CheckOutcome, ApiError>,
    /// What the check shows, or was to show: the strictest verdict of the
    /// pull requests with this head, this one's comment, the record.
    pub(crate) shown: Combined,
    /// A kinder verdict from an earlier run still stands on the check run.
    pub(crate) stale: Option<Stale>,
}

fn run_id(run: &Value) -> u64 {
    run.get("id").and_then(Value::as_u64).unwrap_or(0)
}

/// Adds to `pr.open` every pull request the run's record names that GitHub's
/// list left out but that is still open with this head, asked one by one
/// (`GET /pulls/{n}`). The list of a commit's pull requests has gaps (for a
/// commit already on the default branch it names only the pull request that
/// merged it), and a recorded block must not be dropped on the list's word.
/// One that cannot be read is kept (it may still be open); one GitHub does
/// not know (404) is not.
async fn confirm_recorded(
    api: &Api,
    pr: &mut ForPr,
    head_sha: &str,
    run: Option<&Value>,
    asked: &mut Vec<u64>,
) {
    let text = run.and_then(|r| r.pointer("/output/text")).and_then(Value::as_str);
    let Some(Ok(record)) = heads::decode(text) else { return };
    for e in record {
        if e.pr == 0 || pr.open.contains(&e.pr) || asked.contains(&e.pr) {
            continue;
        }
        asked.push(e.pr);
        let route = api.repo_route(&format!("/pulls/{}", e.pr));
        let still = match api.get(&format!("reading pull request #{}", e.pr), &route).await {
            Ok(page) => {
                page.body.get("state").and_then(Value::as_str) == Some("open")
                    && page.body.pointer("/head/sha").and_then(Value::as_str) == Some(head_sha)
            }
            // No such pull request: it cannot be open.
            Err(e) if e.status() == Some(404) => false,
            Err(_) => true,
        };
        if still {
            pr.open.push(e.pr);
        }
    }
}

fn combined_for(p: &Publication, pr: Option<&ForPr>, run: Option<&Value>) -> Combined {
    let text = run.and_then(|r| r.pointer("/output/text")).and_then(Value::as_str);
    match pr {
        // An unreadable record lists no verdicts: every other open pull
        // request then counts as not judged yet, which blocks.
        Some(pr) => {
            let record = heads::decode(text).and_then(Result::ok).unwrap_or_default();
            heads::combine(pr.number, p, &record, &pr.open)
        }
        None => heads::combine(0, p, &[], &[]),
    }
}

/// Creates or updates the check run so it shows `p` (for `pr`, combined
/// with the other open pull requests of the head), sending only the
/// annotations it does not have yet.
///
/// A write that fails in a way that may be retried (no answer, a 5xx, an
/// unreadable 200, a rate limit) is never re-sent blindly: the run is read
/// again first, after [`Api::settle`], and only what is still missing is
/// written, up to [`MAX_WRITE_ATTEMPTS`] times within the publish deadline.
/// A create that landed late is found then, not made twice. If the run
/// still shows an older, kinder verdict at the end, [`CheckReport::stale`]
/// says so.
pub(crate) async fn publish_check_run(
    api: &Api,
    p: &Publication,
    pr: Option<&ForPr>,
    details_url: Option<&str>,
) -> CheckReport {
    let report = update_or_create(api, p, pr, details_url).await;
    let Some(Stale { id: Some(stale_id), .. }) = report.stale else { return report };
    // A `success` that cannot be updated is superseded: a new run of the same
    // name with the stricter conclusion (a create is a different request from
    // the refused update, and GitHub's branch protection reads the newest run
    // of a name). Only when that fails too does the stale success remain.
    if api.publish_left().is_zero() {
        return report;
    }
    match write_once(api, &report.shown, None, details_url).await {
        Ok(WriteStep::Done { id, annotations }) => {
            tracing::warn!(
                "check run {stale_id} kept `success` after every update was refused; check run {id} supersedes it"
            );
            CheckReport {
                result: Ok(CheckOutcome::Superseded { id, stale_id, annotations }),
                shown: report.shown,
                stale: None,
            }
        }
        Ok(WriteStep::Unchanged { id }) => CheckReport {
            result: Ok(CheckOutcome::Superseded { id, stale_id, annotations: 0 }),
            shown: report.shown,
            stale: None,
        },
        Err(e) => {
            tracing::warn!("superseding the stale check run {stale_id} failed too: {e}");
            report
        }
    }
}

async fn update_or_create(
    api: &Api,
    p: &Publication,
    pr: Option<&ForPr>,
    details_url: Option<&str>,
) -> CheckReport {
    let mut shown = combined_for(p, pr, None);
    // The run as last read: `None` until a read succeeded.
    let mut last_seen: Option<Option<Value>> = None;
    // Whether a run was there before this publish: if not, the one that
    // stands at the end is the one this publish created.
    let mut existed: Option<bool> = None;
    let mut attempts = 0;
    let mut api = api.clone();
    let mut pr = pr.cloned();
    let mut asked = Vec::new();
    loop {
        let existing = match find(&api, &p.head_sha).await {
            Ok(r) => r,
            Err(e) => return failed(e, shown, last_seen.as_ref().map(Option::as_ref)),
        };
        if let Some(pr) = pr.as_mut() {
            confirm_recorded(&api, pr, &p.head_sha, existing.as_ref(), &mut asked).await;
        }
        let pr = pr.as_ref();
        shown = combined_for(p, pr, existing.as_ref());
        let existed = *existed.get_or_insert(existing.is_some());
        last_seen = Some(existing.clone());
        let wrote = write_once(&api, &shown, existing.as_ref(), details_url).await;
        let err = match wrote {
            Ok(WriteStep::Done { id, annotations }) => {
                let outcome = if existed {
                    CheckOutcome::Updated { id, annotations }
                } else {
                    CheckOutcome::Created { id, annotations }
                };
                return CheckReport { result: Ok(outcome), shown, stale: None };
            }
            Ok(WriteStep::Unchanged { id }) => {
                let annotations = annotations(&shown.check.findings).len();
                let outcome = match (existed, attempts) {
                    (false, _) => CheckOutcome::Created { id, annotations },
                    (true, 0) => CheckOutcome::Unchanged { id },
                    (true, _) => CheckOutcome::Updated { id, annotations },
                };
                return CheckReport { result: Ok(outcome), shown, stale: None };
            }
            Err(e) => e,
        };
        attempts += 1;
        let deadline_hit = matches!(err, ApiError::Deadline { which: super::client::Deadline::Publish, .. });
        if deadline_hit && err.outcome_unknown() {
            // One look at what landed, past the deadline, so the report is true.
            api = api.read_back();
            tokio::time::sleep(api.settle().min(api.publish_left())).await;
            match find(&api, &p.head_sha).await {
                Ok(run) => {
                    if let Some(run) = run.as_ref().filter(|r| shows(r, &shown)) {
                        let id = run_id(run);
                        let annotations = annotations(&shown.check.findings).len();
                        let outcome = if existed {
                            CheckOutcome::Updated { id, annotations }
                        } else {
                            CheckOutcome::Created { id, annotations }
                        };
                        return CheckReport { result: Ok(outcome), shown, stale: None };
                    }
                    return failed(err, shown, Some(run.as_ref()));
                }
                Err(_) => return failed(err, shown, last_seen.as_ref().map(Option::as_ref)),
            }
        }
        let wait = api.settle().saturating_mul(1 << (attempts - 1).min(4));
        if !err.write_retryable() || attempts >= MAX_WRITE_ATTEMPTS || wait >= api.publish_left() {
            return failed(err, shown, last_seen.as_ref().map(Option::as_ref));
        }
        tracing::warn!("{err}; reading the check run again in {wait:?} before writing again");
        tokio::time::sleep(wait).await;
    }
}

/// Whether `run` already shows what `shown` publishes (annotations and
/// the summary's cut pointer aside).
fn shows(run: &Value, shown: &Combined) -> bool {
    let p = &shown.check;
    run.get("conclusion").and_then(Value::as_str) == Some(conclusion_str(p.verdict))
        && run.pointer("/output/title").and_then(Value::as_str) == Some(p.title.as_str())
        && run.pointer("/output/text").and_then(Value::as_str) == Some(heads::encode(&shown.entries).as_str())
        && run.get("external_id").and_then(Value::as_str) == Some(external_id(p).as_str())
}

/// The failure report: the error, and whether an older, kinder verdict
/// stands on the run (`run`, as last read: `None` when it never could be
/// read, `Some(None)` when there was none).
fn failed(err: ApiError, shown: Combined, run: Option<Option<&Value>>) -> CheckReport {
    let wanted = conclusion_str(shown.check.verdict);
    let stale = match run {
        Some(None) => None,
        Some(Some(run)) => {
            let has = run.get("conclusion").and_then(Value::as_str).unwrap_or("none");
            (has == "success" && wanted != "success")
                .then(|| Stale { id: Some(run_id(run)), conclusion: has.to_string() })
        }
        // Never read: a blocking verdict cannot know what stands there.
        None if shown.check.verdict == Verdict::Block && !err.is_forbidden() => {
            Some(Stale { id: None, conclusion: "unknown".into() })
        }
        None => None,
    };
    CheckReport { result: Err(err), shown, stale }
}

enum WriteStep {
    Done { id: u64, annotations: usize },
    Unchanged { id: u64 },
}

/// One pass: create the run, or bring `existing` up to date, sending the
/// annotations it does not have yet (50 per request).
async fn write_once(
    api: &Api,
    shown: &Combined,
    existing: Option<&Value>,
    details_url: Option<&str>,
) -> Result<WriteStep, ApiError> {
    let p = &shown.check;
    let summary = summary(p, details_url);
    let text = heads::encode(&shown.entries);
    let all = annotations(&p.findings);
    let checks = api.crab().checks(api.owner.clone(), api.repo.clone());
    let output = |batch: &[Annotation]| CheckRunOutput {
        title: p.title.clone(),
        summary: summary.clone(),
        text: Some(text.clone()),
        annotations: batch.iter().map(Annotation::to_param).collect(),
        images: vec![],
    };
    let (id, sent_before, created) = match existing {
        Some(run) => {
            let id = run_id(run);
            let had = run.pointer("/output/annotations_count").and_then(Value::as_u64).unwrap_or(0) as usize;
            let same = run.get("conclusion").and_then(Value::as_str) == Some(conclusion_str(p.verdict))
                && run.pointer("/output/title").and_then(Value::as_str) == Some(p.title.as_str())
                && run.pointer("/output/summary").and_then(Value::as_str) == Some(summary.as_str())
                && run.pointer("/output/text").and_then(Value::as_str) == Some(text.as_str())
                && run.get("external_id").and_then(Value::as_str) == Some(external_id(p).as_str());
            if same && had >= all.len() {
                return Ok(WriteStep::Unchanged { id });
            }
            (id, had.min(all.len()), false)
        }
        None => {
            let first = &all[..all.len().min(MAX_ANNOTATIONS_PER_REQUEST)];
            let mut create = checks
                .create_check_run(CHECK_NAME, p.head_sha.clone())
                .external_id(external_id(p))
                .status(CheckRunStatus::Completed)
                .conclusion(conclusion(p.verdict))
                .output(output(first));
            if let Some(url) = details_url {
                create = create.details_url(url);
            }
            let _paced = api.pace_write().await;
            let what = "creating the check run";
            let run =
                api.bounded(what, async { create.send().await.map_err(|e| write_error(what, e)) }).await?;
            (run.id.into_inner(), first.len(), true)
        }
    };
    // Updates carry the verdict too (an existing run may show an old one),
    // then the annotations the run does not have yet, 50 per request.
    let rest = &all[sent_before.min(all.len())..];
    let mut updates: Vec<&[Annotation]> = rest.chunks(MAX_ANNOTATIONS_PER_REQUEST).collect();
    if !created && updates.is_empty() {
        updates.push(&[]);
    }
    for batch in updates {
        let _paced = api.pace_write().await;
        let what = if created { "adding annotations to the check run" } else { "updating the check run" };
        let update = checks
            .update_check_run(octocrab::models::CheckRunId(id))
            // octocrab's setter for `external_id` on updates is named so.
            .external_url(external_id(p))
            .status(CheckRunStatus::Completed)
            .conclusion(conclusion(p.verdict))
            .output(output(batch));
        api.bounded(what, async { update.send().await.map(|_| ()).map_err(|e| write_error(what, e)) })
            .await?;
    }
    Ok(WriteStep::Done { id, annotations: all.len() })
}

/// The status description: the title, cut to GitHub's 140 characters.
pub(crate) fn status_description(p: &Publication) -> String {
    cut(&p.title, MAX_STATUS_DESCRIPTION_CHARS, "…")
}

/// Sets the `retrygate` commit status on the head: the fallback where check
/// runs cannot be written (a personal token cannot create check runs).
/// Sent once: setting the same state twice would be harmless, but a failed
/// write is still reported rather than repeated.
pub(crate) async fn publish_status(
    api: &Api,
    p: &Publication,
    target_url: Option<&str>,
) -> Result<(), ApiError> {
    let state = match p.verdict {
        Verdict::Pass => octocrab::models::StatusState::Success,
        Verdict::Block => octocrab::models::StatusState::Failure,
    };
    let repos = api.crab().repos(api.owner.clone(), api.repo.clone());
    let mut b = repos
        .create_status(p.head_sha.clone(), state)
        .context(CHECK_NAME.to_string())
        .description(status_description(p));
    if let Some(url) = target_url {
        b = b.target(url.to_string());
    }
    let _paced = api.pace_write().await;
    let what = "setting the commit status";
    match api.bounded(what, async { b.send().await.map(|_| ()).map_err(|e| write_error(what, e)) }).await {
        Ok(()) => Ok(()),
        Err(e) if e.outcome_unknown() => {
            // Read back what landed, so the job summary says what is there.
            let api = api.read_back();
            tokio::time::sleep(api.settle().min(api.publish_left())).await;
            let route = api.repo_route(&format!("/commits/{}/statuses?per_page=100", p.head_sha));
            let wanted = conclusion_str(p.verdict);
            match api.get("reading the commit statuses back", &route).await {
                Ok(page) => {
                    let latest = page.body.as_array().and_then(|all| {
                        all.iter().find(|s| s.get("context").and_then(Value::as_str) == Some(CHECK_NAME))
                    });
                    let landed = latest.and_then(|s| s.get("state")).and_then(Value::as_str) == Some(wanted)
                        && latest.and_then(|s| s.get("description")).and_then(Value::as_str)
                            == Some(status_description(p).as_str());
                    if landed {
                        Ok(())
                    } else {
                        Err(e)
                    }
                }
                Err(_) => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_external_id_names_the_base_and_is_read_back() {
        let mut p = Publication::could_not_decide("a", &anyhow::anyhow!("x"));
        assert_eq!(external_id(&p), EXTERNAL_ID, "a verdict bound to no base");
        assert_eq!(bound_base(EXTERNAL_ID), None);
        p.base = Some(crate::github::publication::BaseBinding {
            branch: "release/1.x".into(),
            sha: "f95f852".into(),
        });
        let id = external_id(&p);
        assert_eq!(id, "retrygate-gate base=release/1.x@f95f852");
        assert!(is_own(&id) && is_own(EXTERNAL_ID));
        assert!(!is_own("retrygate-gateway") && !is_own("d3e3b6ad-fb11-5de5-1243-51ac1bbad548"));
        assert_eq!(bound_base(&id), Some(("release/1.x", "f95f852")));
    }
    use crate::finding::Kind;

    #[test]
    fn annotations_are_one_per_finding_with_valid_lines_and_levels() {
        let findings = vec![
            Finding::new(Kind::JitterRemoved, "rust/x", "src/b.rs", 0),
            Finding::new(Kind::RetryWithoutJitter, "rust/y", "src/a.rs", 9).lines(9, 4),
        ];
        let a = annotations(&findings);
        assert_eq!(a.len(), 2);
        let json = serde_json::to_value(a.iter().map(Annotation::to_param).collect::<Vec<_>>()).unwrap();
        assert_eq!(json[0]["path"], "src/a.rs");
        assert_eq!(json[0]["end_line"], 9, "an end before the start is raised to the start");
        assert_eq!(json[0]["annotation_level"], "warning");
        assert_eq!(json[1]["start_line"], 1, "a whole-file finding points at line 1");
        assert_eq!(json[1]["annotation_level"], "failure");
        assert_eq!(json[1]["title"], "jitter-removed (rust/x)");
    }

    #[test]
    fn conclusions_are_never_neutral() {
        assert!(matches!(conclusion(Verdict::Block), CheckRunConclusion::Failure));
        assert!(matches!(conclusion(Verdict::Pass), CheckRunConclusion::Success));
    }

    #[test]
    fn long_summaries_are_cut_with_a_pointer() {
        let p = Publication {
            head_sha: "a".repeat(40),
            base: None,
            verdict: Verdict::Block,
            title: "t".repeat(300),
            summary_markdown: "é".repeat(70_000),
            comment_markdown: String::new(),
            findings: vec![],
            undecided: false,
            reasons: vec![],
            signed_off_by: None,
        };
        let s = summary(&p, Some("https://github.com/o/r/actions/runs/1"));
        assert!(s.len() <= MAX_OUTPUT_CHARS, "{}", s.len());
        assert!(s.ends_with("the full report is in the job summary of https://github.com/o/r/actions/runs/1"));
        let d = status_description(&p);
        assert!(d.chars().count() <= MAX_STATUS_DESCRIPTION_CHARS && d.ends_with("t…"), "{d}");
    }
}
