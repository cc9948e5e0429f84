//! One head commit, several pull requests: the strictest verdict wins (pure).
//!
//! A check run belongs to a commit, not to a pull request, so the one
//! `retrygate` check run on a head commit is what branch protection and
//! auto-merge read for **every** open pull request whose head that commit
//! is. Publishing for one of them therefore takes the others into account:
//! the check run records each pull request's own verdict (its number, the
//! base branch it was judged against, pass / block / could not decide) in a
//! hidden block of its `output.text`, and shows the most restrictive one.
//! A pass computed against one base branch's policy never stands for
//! another's, and an open pull request with this head that has no verdict
//! yet counts as blocked until its own run publishes one.
//!
//! [`combine`] takes the pull request's own [`Publication`], the record the
//! check run holds and the open pull requests GitHub lists for the head, and
//! returns what to publish: the check's verdict and texts, the pull
//! request's comment (its own verdict, plus a note when the check is
//! stricter because of another pull request), and the record to write back.
//! [`sibling_notes`] says which other pull requests' comments need that note
//! put on or taken off, so no comment reads kinder than its check.

use serde::{Deserialize, Serialize};

use super::publication::Publication;
use crate::decision::{ReasonCode, Verdict};
use crate::finding::Finding;

/// Opens the hidden record in a check run's `output.text`.
pub(crate) const RECORD_START: &str = "<!-- retrygate:verdicts ";
/// Closes it.
pub(crate) const RECORD_END: &str = " -->";

/// Most findings one entry lists as lifted by a sign-off; past that the
/// list is marked incomplete and lifts nothing in a merge queue.
pub(crate) const MAX_LIFTED: usize = 200;

/// One pull request's own verdict on the head, as the check run records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntryVerdict {
    /// Nothing blocked, or a sign-off lifted it.
    Pass,
    /// Something blocks.
    Block,
    /// The gate could not decide; nothing lifts it.
    Undecided,
}

impl EntryVerdict {
    fn words(self) -> &'static str {
        match self {
            EntryVerdict::Pass => "✅ passing",
            EntryVerdict::Block => "❌ blocked",
            EntryVerdict::Undecided => "❌ could not decide",
        }
    }
}

/// One pull request's verdict on the head commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeadEntry {
    /// The pull request; 0 for a commit of no pull request (a merge group).
    pub pr: u64,
    /// The base branch it was judged against.
    pub base: String,
    /// The base commit it was judged against.
    pub base_sha: String,
    /// What that pull request's run decided.
    pub verdict: EntryVerdict,
    /// Its check-run title.
    pub title: String,
    /// Who signed it off, when a sign-off made it pass.
    #[serde(default)]
    pub signed_off_by: Option<String>,
    /// Under a sign-off: the blocking findings the sign-off accepted
    /// ([`finding_key`]), so a merge queue can tell them from new ones.
    #[serde(default)]
    pub lifted: Vec<String>,
    /// Whether `lifted` holds every one of them.
    #[serde(default)]
    pub lifted_complete: bool,
}

/// What identifies a blocking finding between a pull request's head and a
/// merge group holding it: kind, rule, file and message (which names the
/// values, so "raised from 2 to 4" is not "raised from 2 to 9").
pub(crate) fn finding_key(f: &Finding) -> String {
    format!("{}|{}|{}|{}", f.kind.id(), f.rule, f.path, f.message)
}

impl HeadEntry {
    /// The entry for pull request `pr`'s own publication.
    pub(crate) fn of(pr: u64, p: &Publication) -> HeadEntry {
        let verdict = match (p.undecided, p.verdict) {
            (true, _) => EntryVerdict::Undecided,
            (false, Verdict::Block) => EntryVerdict::Block,
            (false, Verdict::Pass) => EntryVerdict::Pass,
        };
        let (mut lifted, mut lifted_complete) = (Vec::new(), false);
        if p.signed_off_by.is_some() && verdict == EntryVerdict::Pass {
            let keys: Vec<String> = p.findings.iter().filter(|f| f.is_blocking()).map(finding_key).collect();
            lifted_complete = keys.len() <= MAX_LIFTED;
            lifted = keys.into_iter().take(MAX_LIFTED).collect();
        }
        let (base, base_sha) = match &p.base {
            Some(b) => (b.branch.clone(), b.sha.clone()),
            None => (String::new(), String::new()),
        };
        HeadEntry {
            pr,
            base,
            base_sha,
            verdict,
            title: p.title.clone(),
            signed_off_by: p.signed_off_by.clone(),
            lifted,
            lifted_complete,
        }
    }

    fn shown(&self) -> String {
        if self.pr == 0 {
            "this commit".to_string()
        } else if self.base.is_empty() {
            format!("#{}", self.pr)
        } else {
            format!("#{} into `{}`", self.pr, self.base)
        }
    }
}

/// Longest record written: the check run's `output.text` holds at most
/// 65,535 characters.
pub(crate) const MAX_RECORD_CHARS: usize = 60_000;

/// The record as it is written into the check run's `output.text`. When the
/// lists of signed-off findings make it too long, they are dropped and
/// marked incomplete (a merge queue then lifts none of them): the verdicts
/// themselves are always kept.
pub fn encode(entries: &[HeadEntry]) -> String {
    // `--` cannot occur inside an HTML comment; JSON escapes keep it out.
    let write = |e: &[HeadEntry]| {
        let json = serde_json::to_string(e).unwrap_or_else(|_| "[]".into()).replace("--", "-\\u002d");
        format!("{RECORD_START}{json}{RECORD_END}")
    };
    let full = write(entries);
    if full.len() <= MAX_RECORD_CHARS {
        return full;
    }
    let slim: Vec<HeadEntry> = entries
        .iter()
        .cloned()
        .map(|e| HeadEntry { lifted: Vec::new(), lifted_complete: false, ..e })
        .collect();
    write(&slim)
}

/// The record a check run's `output.text` holds: `None` when it holds none
/// (a run written before records, or by something else), `Some(Err)` when
/// one is there but unreadable.
pub(crate) fn decode(text: Option<&str>) -> Option<Result<Vec<HeadEntry>, String>> {
    let text = text?;
    let start = text.find(RECORD_START)? + RECORD_START.len();
    let end = text[start..].find(RECORD_END).map(|e| start + e);
    let Some(end) = end else {
        return Some(Err("the record in the check run is not closed".into()));
    };
    Some(
        serde_json::from_str(&text[start..end])
            .map_err(|e| format!("the record in the check run is unreadable ({e})")),
    )
}

/// What to publish for one pull request on a head shared with others.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Combined {
    /// The check run's (and status's) publication: the strictest verdict.
    pub(crate) check: Publication,
    /// The pull request's sticky comment.
    pub(crate) comment_markdown: String,
    /// The record to write into the check run.
    pub(crate) entries: Vec<HeadEntry>,
    /// The entry that decides the check, when it is not this pull request's.
    pub(crate) stricter: Option<HeadEntry>,
}

/// Combines pull request `pr`'s own publication `own` with the `record`
/// the check run holds and the `open` pull requests whose head this commit
/// is (this one included or not). Entries of pull requests that are no
/// longer open with this head are dropped; an open one without an entry is
/// counted as blocked ("no verdict yet"). The check shows the strictest:
/// could not decide, then blocked, then passing; a tie keeps this pull
/// request's own texts.
pub(crate) fn combine(pr: u64, own: &Publication, record: &[HeadEntry], open: &[u64]) -> Combined {
    let mine = HeadEntry::of(pr, own);
    let mut entries = vec![mine.clone()];
    for n in open.iter().filter(|n| **n != pr) {
        let entry = record.iter().find(|e| e.pr == *n).cloned().unwrap_or_else(|| HeadEntry {
            pr: *n,
            base: String::new(),
            base_sha: String::new(),
            verdict: EntryVerdict::Block,
            title: "no retrygate verdict yet: its own run publishes one (or close it)".into(),
            signed_off_by: None,
            lifted: Vec::new(),
            lifted_complete: false,
        });
        if !entries.iter().any(|e| e.pr == entry.pr) {
            entries.push(entry);
        }
    }
    entries[1..].sort_by_key(|e| e.pr);
    let strictest = entries.iter().map(|e| e.verdict).max().unwrap_or(mine.verdict);
    let stricter = (strictest > mine.verdict)
        .then(|| entries.iter().find(|e| e.verdict == strictest).cloned())
        .flatten();
    if entries.len() == 1 {
        return Combined {
            check: own.clone(),
            comment_markdown: own.comment_markdown.clone(),
            entries,
            stricter,
        };
    }
    let mut table = format!(
        "#### This commit is the head of {} open pull requests\n\nThe check shows the strictest of their verdicts: a pass computed against one base branch's policy never stands for another's.\n\n| pull request | verdict |\n|---|---|\n",
        entries.len()
    );
    for e in &entries {
        let this = if e.pr == pr { " (this run)" } else { "" };
        table.push_str(&format!(
            "| {}{this} | {}: {} |\n",
            e.shown(),
            e.verdict.words(),
            e.title.replace('|', "\\|")
        ));
    }
    let mut check = own.clone();
    if let Some(s) = &stricter {
        check.verdict = Verdict::Block;
        check.title = format!(
            "{} by {}: {}",
            s.verdict.words().trim_start_matches(|c: char| !c.is_ascii_alphabetic()),
            s.shown().replace('`', ""),
            s.title
        );
    }
    check.summary_markdown = format!(
        "{table}\n#### {}{}\n\n{}",
        mine.shown(),
        if stricter.is_some() { ", its own verdict" } else { "" },
        own.summary_markdown
    );
    let comment_markdown = match &stricter {
        None => own.comment_markdown.clone(),
        Some(s) => format!("{}\n\n{}", own.comment_markdown.trim_end(), note(s)),
    };
    Combined { check, comment_markdown, entries, stricter }
}

/// Opens the note a pull request's comment carries while the check on its
/// head is stricter than its own verdict because of another pull request.
pub(crate) const NOTE_MARKER: &str = "<!-- retrygate:head-note -->";

/// The note for a comment whose pull request's check is decided by `by`.
pub(crate) fn note(by: &HeadEntry) -> String {
    format!(
        "{NOTE_MARKER}\n> [!WARNING]\n> The required `retrygate` check on this commit is **{}**: pull request {} has the same head commit and its verdict is {}. The check shows the strictest verdict of every open pull request with this head.\n",
        if by.verdict == EntryVerdict::Undecided { "failing (could not decide)" } else { "blocked" },
        by.shown(),
        by.verdict.words().trim_start_matches(|c: char| !c.is_ascii_alphabetic()),
    )
}

/// The notes the other pull requests' comments should carry after `c` was
/// published for `pr`: for each other open pull request with a verdict, the
/// note naming the entry that decides the check when that is stricter than
/// its own verdict, else `None` (its note, if any, is taken away).
pub(crate) fn sibling_notes(pr: u64, c: &Combined) -> Vec<(u64, Option<String>)> {
    let strictest = c.entries.iter().map(|e| e.verdict).max();
    let decider = c.entries.iter().find(|e| Some(e.verdict) == strictest);
    c.entries
        .iter()
        .filter(|e| e.pr != pr && e.pr != 0 && !e.base.is_empty())
        .map(|e| match decider {
            Some(d) if d.verdict > e.verdict => (e.pr, Some(note(d))),
            _ => (e.pr, None),
        })
        .collect()
}

/// `body` (a sticky comment's text) with its note replaced by `note`.
pub(crate) fn with_note(body: &str, note: Option<&str>) -> String {
    let own = body.split(NOTE_MARKER).next().unwrap_or(body).trim_end();
    match note {
        Some(n) => format!("{own}\n\n{n}"),
        None => format!("{own}\n"),
    }
}

/// Whether a merge group's blocking verdict `group` may be lifted by the
/// sign-offs of queued pull requests (`signed`: their entries): only when
/// the group's gate decided, blocks for findings alone (no incomplete scan,
/// nothing else), and every blocking finding of the group is one a queued
/// pull request's sign-off accepted on its own head. A finding that no
/// single pull request had (a combined regression) is what the group's own
/// check exists to catch: it blocks.
pub(crate) fn group_lift(group: &Publication, signed: &[&HeadEntry]) -> Result<Vec<u64>, String> {
    if group.undecided {
        return Err("the group's own gate could not decide, and nothing lifts that".into());
    }
    if let Some(r) = group
        .reasons
        .iter()
        .find(|r| !matches!(r, ReasonCode::BlockingFindings | ReasonCode::GateConfigChanged))
    {
        return Err(format!(
            "the group blocks for `{}`, which no sign-off of a queued pull request covers",
            r.as_str()
        ));
    }
    let mut by = Vec::new();
    for f in group.findings.iter().filter(|f| f.is_blocking()) {
        let key = finding_key(f);
        match signed.iter().find(|e| e.lifted_complete && e.lifted.contains(&key)) {
            Some(e) => {
                if !by.contains(&e.pr) {
                    by.push(e.pr);
                }
            }
            None => {
                return Err(format!(
                    "the group's finding `{}` at {} is not one a signed-off pull request had on its own head (a combined regression)",
                    f.kind.id(),
                    f.location()
                ))
            }
        }
    }
    if by.is_empty() {
        return Err("the group blocks with no finding a sign-off accepted".into());
    }
    Ok(by)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Kind;
    use crate::github::publication::BaseBinding;

    fn publication(verdict: Verdict, base: &str, title: &str) -> Publication {
        Publication {
            head_sha: "a".repeat(40),
            base: Some(BaseBinding { branch: base.into(), sha: "b".repeat(40) }),
            verdict,
            title: title.into(),
            summary_markdown: format!("report of {title}\n"),
            comment_markdown: format!("comment of {title}\n"),
            findings: vec![],
            undecided: false,
            reasons: vec![],
            signed_off_by: None,
        }
    }

    #[test]
    fn a_pass_never_stands_for_a_blocked_pull_request_with_the_same_head() {
        let blocked = HeadEntry::of(7, &publication(Verdict::Block, "main", "blocked: blocking-findings"));
        let own = publication(Verdict::Pass, "evil", "passing: no blocking retry regressions");
        let c = combine(8, &own, std::slice::from_ref(&blocked), &[7, 8]);
        assert_eq!(c.check.verdict, Verdict::Block);
        assert_eq!(c.check.title, "blocked by #7 into main: blocked: blocking-findings");
        assert_eq!(c.stricter, Some(blocked));
        assert!(
            c.check.summary_markdown.contains("| #7 into `main` | ❌ blocked: blocked: blocking-findings |"),
            "{}",
            c.check.summary_markdown
        );
        assert!(
            c.check.summary_markdown.contains("| #8 into `evil` (this run) | ✅ passing"),
            "{}",
            c.check.summary_markdown
        );
        assert!(c.comment_markdown.starts_with("comment of passing"), "its own verdict first");
        assert!(
            c.comment_markdown
                .contains("is **blocked**: pull request #7 into `main` has the same head commit"),
            "{}",
            c.comment_markdown
        );
        assert_eq!(c.entries.iter().map(|e| e.pr).collect::<Vec<_>>(), [8, 7]);
        // #7's own verdict decides: its comment needs no note.
        assert_eq!(sibling_notes(8, &c), [(7, None)]);
    }

    #[test]
    fn a_kinder_sibling_gets_a_note_naming_the_stricter_pull_request_and_loses_it_after() {
        let passed = HeadEntry::of(7, &publication(Verdict::Pass, "main", "passing"));
        let own = publication(Verdict::Block, "evil", "blocked");
        let c = combine(8, &own, &[passed], &[7, 8]);
        let notes = sibling_notes(8, &c);
        assert_eq!(notes.len(), 1);
        let n = notes[0].1.clone().unwrap();
        assert!(
            n.starts_with(NOTE_MARKER) && n.contains("pull request #8 into `evil` has the same head commit"),
            "{n}"
        );
        let body = "<!-- retrygate:sticky-comment -->\n### passing\n".to_string();
        let noted = with_note(&body, Some(&n));
        assert_eq!(with_note(&noted, Some(&n)), noted, "the same note is not added twice");
        assert_eq!(with_note(&noted, None), body, "taken away once the check agrees again");
        // Not judged yet: nothing to annotate.
        let c = combine(8, &own, &[], &[7, 8]);
        assert!(sibling_notes(8, &c).is_empty());
    }

    #[test]
    fn closed_pull_requests_drop_out_and_unjudged_ones_block() {
        let blocked = HeadEntry::of(7, &publication(Verdict::Block, "main", "blocked"));
        let own = publication(Verdict::Pass, "evil", "passing");
        // #7 was closed: only this pull request is open with the head.
        let c = combine(8, &own, &[blocked], &[8]);
        assert_eq!((c.check.verdict, c.entries.len()), (Verdict::Pass, 1));
        assert_eq!(c.check, own, "alone, the publication is unchanged");
        // #9 has the head and no verdict yet: blocked until its run publishes.
        let c = combine(8, &own, &[], &[8, 9]);
        assert_eq!(c.check.verdict, Verdict::Block);
        assert!(c.check.title.starts_with("blocked by #9: no retrygate verdict yet"), "{}", c.check.title);
        // Passing everywhere: passes, with the table.
        let other = HeadEntry::of(9, &publication(Verdict::Pass, "main", "passing"));
        let c = combine(8, &own, &[other], &[8, 9]);
        assert_eq!((c.check.verdict, c.check.title.as_str(), c.stricter), (Verdict::Pass, "passing", None));
    }

    #[test]
    fn could_not_decide_is_stricter_than_blocked() {
        let mut undecided = publication(Verdict::Block, "main", "retrygate could not decide");
        undecided.undecided = true;
        let u = HeadEntry::of(7, &undecided);
        let b = HeadEntry::of(9, &publication(Verdict::Block, "main", "blocked"));
        let c = combine(8, &publication(Verdict::Block, "dev", "blocked"), &[u, b], &[7, 8, 9]);
        assert_eq!(c.stricter.map(|e| e.pr), Some(7));
        assert!(c.comment_markdown.contains("**failing (could not decide)**"), "{}", c.comment_markdown);
    }

    #[test]
    fn the_record_round_trips_through_the_check_run_text() {
        let mut e = HeadEntry::of(7, &publication(Verdict::Block, "main", "a -- b --> c"));
        e.title = "x --> <!-- y".into();
        let text = format!("some text\n{}", encode(std::slice::from_ref(&e)));
        assert_eq!(text.matches(RECORD_END).count(), 1, "the title cannot close the comment early: {text}");
        assert_eq!(decode(Some(&text)), Some(Ok(vec![e])));
        assert_eq!(decode(Some("no record")), None);
        assert_eq!(decode(None), None);
        let mut big = HeadEntry::of(4, &publication(Verdict::Pass, "main", "passing (signed off)"));
        big.lifted = vec!["x".repeat(1000); MAX_LIFTED];
        big.lifted_complete = true;
        let text = encode(&[big.clone(), HeadEntry { pr: 5, ..big }]);
        assert!(text.len() <= MAX_RECORD_CHARS, "{}", text.len());
        let back = decode(Some(&text)).unwrap().unwrap();
        assert_eq!(
            back.iter().map(|e| (e.pr, e.lifted_complete)).collect::<Vec<_>>(),
            [(4, false), (5, false)]
        );
        let e = decode(Some("<!-- retrygate:verdicts [{] -->")).unwrap().unwrap_err();
        assert!(e.starts_with("the record in the check run is unreadable"), "{e}");
    }

    #[test]
    fn a_group_block_is_lifted_only_by_findings_a_sign_off_accepted() {
        let finding = |msg: &str| {
            Finding::new(Kind::RetryCountRaised, "rust/backon-max-times", "src/a.rs", 3).message(msg)
        };
        let mut signed = publication(Verdict::Pass, "main", "passing (signed off)");
        signed.signed_off_by = Some("maintainer".into());
        signed.findings = vec![finding("retries raised from 2 to 4")];
        let entry = HeadEntry::of(3, &signed);
        assert_eq!(
            entry.lifted,
            ["retry-count-raised|rust/backon-max-times|src/a.rs|retries raised from 2 to 4"]
        );

        let mut group = publication(Verdict::Block, "main", "blocked");
        group.reasons = vec![ReasonCode::BlockingFindings];
        group.findings = vec![finding("retries raised from 2 to 4")];
        assert_eq!(group_lift(&group, &[&entry]), Ok(vec![3]));
        // A combined regression: a value no single pull request had.
        group.findings = vec![finding("retries raised from 2 to 9")];
        let e = group_lift(&group, &[&entry]).unwrap_err();
        assert!(
            e.contains("is not one a signed-off pull request had on its own head (a combined regression)"),
            "{e}"
        );
        // An incomplete scan or an undecided gate is never lifted.
        group.findings = vec![finding("retries raised from 2 to 4")];
        group.reasons = vec![ReasonCode::BlockingFindings, ReasonCode::ScanIncomplete];
        assert!(group_lift(&group, &[&entry]).unwrap_err().contains("`scan-incomplete`"));
        let undecided = Publication::could_not_decide("a", &anyhow::anyhow!("typo in the config"));
        assert!(group_lift(&undecided, &[&entry]).unwrap_err().contains("could not decide"));
    }
}
