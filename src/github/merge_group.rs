//! The verdict for a merge queue's group commit (`merge_group`), as pure
//! functions; [`super::action`] gathers the facts.
//!
//! A merge queue tests `head_sha`: `base_sha` with the queued pull requests
//! merged on top, in order. Auto-merge lives there, so the required check
//! must report on that commit, and its verdict must **never be weaker than
//! the verdicts of the pull requests in the group**:
//!
//! 1. Which pull requests: every first-parent commit in `base_sha..head_sha`
//!    must name one, as GitHub's merge queue writes them (`Merge pull
//!    request #N from ...` for the merge method, `Title (#N)` for squash),
//!    and the pull request of `head_ref` (`.../pr-N-<sha>`) is always one.
//!    A commit that names none (the rebase method) blocks: retrygate cannot
//!    tell whose change it is, so it cannot vouch for it.
//! 2. Each pull request's own verdict: retrygate's check run on its current
//!    head must have concluded `success`, and its record
//!    ([`super::heads`]) must hold that pull request's own pass computed
//!    against this base branch (a run written before records is read by
//!    its `external_id`, [`super::check_run::external_id`]). A sign-off is part
//!    of that verdict: the sign-off run published `success` on that head.
//!    No check run, a failing one, one without this pull request's pass, or
//!    one computed for another base branch blocks the group.
//! 3. The group's own gate: the change `base_sha..head_sha` with the config
//!    of `base_sha`, as a person's change (ledger and replay evidence were
//!    demanded of each pull request on its own). It catches what no single
//!    pull request showed (two changes that together raise a retry budget,
//!    a base that moved), so its block stands. The one exception: a
//!    blocking finding that a queued pull request had on its own head and a
//!    maintainer signed off there (the check run records those findings,
//!    [`super::heads::HeadEntry::lifted`]) is not enforced again; every
//!    other finding of the group, a combined regression, blocks
//!    ([`super::heads::group_lift`]). A group gate that could not decide
//!    is never lifted.

use serde_json::Value;

use super::check_run;
use super::heads::{self, EntryVerdict, HeadEntry};
use super::publication::Publication;
use crate::printer::Verdict;

/// A first-parent commit of the group and the pull request it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attributed {
    pub(crate) prs: Vec<u64>,
    /// Commits that name no pull request.
    pub(crate) unattributed: Vec<String>,
}

/// The pull request a merge-queue commit subject names, if any.
pub(crate) fn pr_of_subject(subject: &str) -> Option<u64> {
    if let Some(rest) = subject.strip_prefix("Merge pull request #") {
        return rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok();
    }
    let open = subject.trim_end().strip_suffix(')')?.rfind("(#")?;
    subject.trim_end()[open + 2..subject.trim_end().len() - 1].parse().ok()
}

/// The pull requests of a group from its first-parent commits (`(sha,
/// subject)`, any order) and the pull request `head_ref` names.
pub(crate) fn attribute(commits: &[(String, String)], last_pr: Option<u64>) -> Attributed {
    let mut prs = Vec::new();
    let mut unattributed = Vec::new();
    for (sha, subject) in commits {
        match pr_of_subject(subject) {
            Some(n) if !prs.contains(&n) => prs.push(n),
            Some(_) => {}
            None => unattributed.push(sha.clone()),
        }
    }
    if let Some(n) = last_pr.filter(|n| !prs.contains(n)) {
        prs.push(n);
    }
    Attributed { prs, unattributed }
}

/// One queued pull request's own verdict, as its check run shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PrVerdict {
    Passing {
        /// Its entry, when it passed by a maintainer's sign-off.
        signed: Option<HeadEntry>,
    },
    /// Why it does not count as passing.
    NotPassing(String),
}

/// Judges pull request `pr`'s `retrygate` check run (from
/// [`super::check_run::find`] on its head) for a group on `base_branch`: the
/// run must conclude `success`, and its record must hold `pr`'s own pass
/// computed against `base_branch` (a run written before records were kept
/// is read by its `external_id`).
pub(crate) fn judge_pr(run: Option<&Value>, pr: u64, head_sha: &str, base_branch: &str) -> PrVerdict {
    let short = crate::text::short_sha(head_sha);
    let Some(run) = run else {
        return PrVerdict::NotPassing(format!("no retrygate verdict on its head `{short}`"));
    };
    let conclusion = run.get("conclusion").and_then(Value::as_str).unwrap_or("none");
    if conclusion != "success" {
        return PrVerdict::NotPassing(format!("its verdict on `{short}` is `{conclusion}`"));
    }
    let against = |branch: &str| {
        PrVerdict::NotPassing(format!(
            "its passing verdict on `{short}` was computed against `{branch}`, not `{base_branch}`"
        ))
    };
    match heads::decode(run.pointer("/output/text").and_then(Value::as_str)) {
        Some(Err(why)) => PrVerdict::NotPassing(format!("{why}; re-run retrygate on it")),
        Some(Ok(entries)) => match entries.into_iter().find(|e| e.pr == pr) {
            None => PrVerdict::NotPassing(format!(
                "the check run on `{short}` holds no verdict of #{pr}; re-run retrygate on it"
            )),
            Some(e) if e.verdict != EntryVerdict::Pass => {
                PrVerdict::NotPassing(format!("its own verdict on `{short}` is not a pass: {}", e.title))
            }
            Some(e) if e.base != base_branch => against(&e.base),
            Some(e) => PrVerdict::Passing { signed: e.signed_off_by.is_some().then_some(e) },
        },
        None => match run.get("external_id").and_then(Value::as_str).and_then(check_run::bound_base) {
            Some((branch, _)) if branch == base_branch => PrVerdict::Passing { signed: None },
            Some((branch, _)) => against(branch),
            None => PrVerdict::NotPassing(format!(
                "its verdict on `{short}` does not say which base it was computed against; re-run retrygate on it"
            )),
        },
    }
}

/// The group's publication: the group gate's, never weaker than the pull
/// requests' own verdicts (see the module docs).
pub(crate) fn combine(group: Publication, prs: &[(u64, PrVerdict)], unattributed: &[String]) -> Publication {
    let mut list = String::from("#### Queued pull requests\n\n");
    for (n, v) in prs {
        list.push_str(&match v {
            PrVerdict::Passing { signed: None } => format!("- #{n}: passing\n"),
            PrVerdict::Passing { signed: Some(e) } => format!(
                "- #{n}: passing (signed off by {})\n",
                e.signed_off_by.as_deref().unwrap_or("a maintainer")
            ),
            PrVerdict::NotPassing(why) => format!("- #{n}: **not passing**: {why}\n"),
        });
    }
    for sha in unattributed {
        list.push_str(&format!(
            "- commit `{}` names no pull request (the rebase merge method?); retrygate cannot vouch for it: use the merge or squash method with the merge queue\n",
            crate::text::short_sha(sha)
        ));
    }
    let failing: Vec<String> = prs
        .iter()
        .filter(|(_, v)| matches!(v, PrVerdict::NotPassing(_)))
        .map(|(n, _)| format!("#{n}"))
        .collect();
    let signed: Vec<&HeadEntry> = prs
        .iter()
        .filter_map(|(_, v)| match v {
            PrVerdict::Passing { signed } => signed.as_ref(),
            PrVerdict::NotPassing(_) => None,
        })
        .collect();
    let (verdict, title, note) = if !failing.is_empty() || !unattributed.is_empty() || prs.is_empty() {
        let mut parts = Vec::new();
        if !failing.is_empty() {
            parts.push(format!("queued pull requests without a passing verdict: {}", failing.join(", ")));
        }
        if !unattributed.is_empty() || prs.is_empty() {
            parts.push("commits that name no pull request".to_string());
        }
        (Verdict::Block, format!("blocked: {}", parts.join("; ")), String::new())
    } else if group.verdict == Verdict::Block && !signed.is_empty() {
        match heads::group_lift(&group, &signed) {
            Ok(by) => {
                let by: Vec<String> = by.iter().map(|n| format!("#{n}")).collect();
                (
                    Verdict::Pass,
                    format!("passing: every queued pull request passed; the group's findings are the ones signed off on {}", by.join(", ")),
                    format!("\nEvery blocking finding of the group is one a maintainer signed off on the pull request that brought it ({}); they are shown, not enforced again.\n", by.join(", ")),
                )
            }
            Err(why) => (
                Verdict::Block,
                group.title.clone(),
                format!("\nA sign-off on a queued pull request does not lift this: {why}.\n"),
            ),
        }
    } else {
        (group.verdict, group.title.clone(), String::new())
    };
    let summary = format!("{list}{note}\n#### The group's own gate\n\n{}", group.summary_markdown);
    Publication { verdict, title, comment_markdown: summary.clone(), summary_markdown: summary, ..group }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn subjects_name_their_pull_request_in_both_queue_formats() {
        assert_eq!(pr_of_subject("Merge pull request #42 from octo/fix-retry"), Some(42));
        assert_eq!(pr_of_subject("Raise the retry budget (#7)"), Some(7));
        assert_eq!(pr_of_subject("Raise (the) budget (#7) "), Some(7));
        assert_eq!(pr_of_subject("Fix #7 in the client"), None);
        assert_eq!(pr_of_subject("Raise retries (see #7 and more)"), None);
        let a = attribute(
            &[
                ("c2".into(), "B (#4)".into()),
                ("c1".into(), "Merge pull request #3 from o/x".into()),
                ("c0".into(), "wip".into()),
            ],
            Some(4),
        );
        assert_eq!(a, Attributed { prs: vec![4, 3], unattributed: vec!["c0".into()] });
        assert_eq!(attribute(&[], Some(9)).prs, [9]);
    }

    #[test]
    fn a_pull_request_counts_only_with_a_success_bound_to_the_same_base() {
        let head = "ec26c3e57ca3a959ca5aad62de7213c562f8c821";
        let run = |c: &str, ext: &str, title: &str| json!({"conclusion": c, "external_id": ext, "output": {"title": title}});
        let ok = run("success", "retrygate-gate base=main@f95f852", "passing: no blocking retry regressions");
        assert_eq!(judge_pr(Some(&ok), 4, head, "main"), PrVerdict::Passing { signed: None });
        let why = |v: PrVerdict| match v {
            PrVerdict::NotPassing(w) => w,
            other => panic!("{other:?}"),
        };
        assert!(why(judge_pr(None, 4, head, "main")).contains("no retrygate verdict on its head `ec26c3e`"));
        assert!(why(judge_pr(Some(&run("failure", "retrygate-gate base=main@x", "")), 4, head, "main"))
            .contains("`failure`"));
        assert!(
            why(judge_pr(Some(&ok), 4, head, "release")).contains("computed against `main`, not `release`")
        );
        assert!(why(judge_pr(Some(&run("success", "retrygate-gate", "")), 4, head, "main"))
            .contains("does not say which base"));
    }

    fn entry(pr: u64, base: &str, verdict: EntryVerdict, signed: Option<&str>) -> HeadEntry {
        HeadEntry {
            pr,
            base: base.into(),
            base_sha: "f95f852".into(),
            verdict,
            title: "t".into(),
            signed_off_by: signed.map(str::to_string),
            lifted: vec![],
            lifted_complete: true,
        }
    }

    #[test]
    fn the_record_names_each_pull_requests_own_verdict_and_base() {
        let head = "ec26c3e57ca3a959ca5aad62de7213c562f8c821";
        let run = |entries: &[HeadEntry]| json!({"conclusion": "success", "external_id": "retrygate-gate base=main@f95f852", "output": {"title": "passing", "text": heads::encode(entries)}});
        let signed = entry(4, "main", EntryVerdict::Pass, Some("m"));
        assert_eq!(
            judge_pr(Some(&run(std::slice::from_ref(&signed))), 4, head, "main"),
            PrVerdict::Passing { signed: Some(signed) }
        );
        let why = |v: PrVerdict| match v {
            PrVerdict::NotPassing(w) => w,
            other => panic!("{other:?}"),
        };
        // The run's last writer was another pull request into `main`; #4's
        // own verdict was against `evil`.
        let r =
            run(&[entry(5, "main", EntryVerdict::Pass, None), entry(4, "evil", EntryVerdict::Pass, None)]);
        assert!(why(judge_pr(Some(&r), 4, head, "main")).contains("computed against `evil`, not `main`"));
        let r = run(&[entry(5, "main", EntryVerdict::Pass, None)]);
        assert!(why(judge_pr(Some(&r), 4, head, "main")).contains("holds no verdict of #4"));
        let r = run(&[entry(4, "main", EntryVerdict::Undecided, None)]);
        assert!(why(judge_pr(Some(&r), 4, head, "main")).contains("is not a pass"));
    }

    #[test]
    fn an_undecided_group_is_never_lifted_by_a_signed_off_pull_request() {
        let group = Publication::could_not_decide("a", &anyhow::anyhow!("bad config"));
        let signed = entry(4, "main", EntryVerdict::Pass, Some("m"));
        let p = combine(group, &[(4, PrVerdict::Passing { signed: Some(signed) })], &[]);
        assert_eq!(p.verdict, Verdict::Block);
        assert!(p.undecided);
        assert!(
            p.summary_markdown.contains("could not decide, and nothing lifts that"),
            "{}",
            p.summary_markdown
        );
    }
}
