//! Where the gate finds an agent's tool-call ledger, and verifying it.
//!
//! The places, in this order (docs/ledger.md, "Where the ledger is looked
//! for"); the first that holds a ledger is the one verified:
//!
//! 1. `--ledger PATH`, when given (a local override; the Action never sets it);
//! 2. `ledger.path` committed at the head commit;
//! 3. the Actions artifact named `ledger.artifact`: `--ledger-artifact ZIP`
//!    locally, or, in the Action, the newest unexpired artifact of that name
//!    uploaded by a workflow run on the head commit (else by a run on an
//!    earlier commit of the pull request, see [`from_actions`]);
//! 4. `ledger.path` in the working tree (a CI step that put it there).
//!
//! Wherever it comes from, the ledger is verified the same way: every line,
//! digest and chain link, and coverage of every changed file by the head's
//! content. The report says where it came from (`origin`); when nothing is
//! found, it lists the places looked (`looked`), which the blocking reason
//! repeats.

use std::path::PathBuf;

use crate::changeset::git::Blob;
use crate::changeset::{ChangeSet, Git};
use crate::config::Config;
use crate::ledger::artifact::{self, ArtifactRefusal, ArtifactSource, LedgerOrigin, ListedArtifact};
use crate::ledger::lines::ReadLimits;
use crate::ledger::{self, ChangeTarget, LedgerReport};

use super::CheckInput;

/// Finds the ledger of the change `cs` and verifies it against the change.
/// `Err` = could not decide (git failed, the artifacts API could not be
/// asked, a path given on the command line cannot be read).
pub(crate) fn find_and_verify(
    input: &CheckInput,
    config: &Config,
    cs: &ChangeSet,
    git: &Git,
) -> anyhow::Result<LedgerReport> {
    let rel = config.ledger.path.trim_start_matches("./");
    let name = &config.ledger.artifact;
    let mut target = ChangeTarget::from_changeset(cs)?;
    // The ledger committed with the change is not an edit it must explain.
    target.exclude(rel);
    let limits = ReadLimits::default();

    // 1. An explicit file.
    if let Some(path) = &input.ledger {
        let mut report = ledger::verify(path, Some(&target))?;
        if report.present {
            report.origin = Some(LedgerOrigin::File { path: path.display().to_string() });
            return Ok(report);
        }
        let looked = vec![format!("--ledger {}: no such file", path.display())];
        return Ok(LedgerReport::missing(looked, name, Some(&target)));
    }
    let mut looked = Vec::new();

    // 2. Committed at the head. One byte over the limit is enough for the
    // verifier to say it is too large.
    match git.read_blob_at(&cs.head, rel, limits.max_ledger_bytes + 1)? {
        Some(Blob::Bytes(bytes)) => {
            let shown = format!("{}:{rel}", crate::text::short_sha(&cs.head));
            let mut report = ledger::verify::verify_reader(&shown, bytes.as_slice(), Some(&target), limits)?;
            report.origin = Some(LedgerOrigin::FileAtHead { commit: cs.head.clone(), path: rel.to_string() });
            return Ok(report);
        }
        Some(Blob::TooLarge(size)) => anyhow::bail!(
            "the ledger {rel} committed at the head is {size} bytes, over the {} MiB limit; a real ledger is a few MB",
            limits.max_ledger_bytes >> 20
        ),
        _ => looked.push(format!("`{rel}` committed at {}: not there", crate::text::short_sha(&cs.head))),
    }

    // 3. The artifact: a local zip, or the Actions artifacts of the head.
    if let Some(zip_path) = &input.ledger_artifact {
        let shown = zip_path.display().to_string();
        let zip = artifact::read_zip_file(zip_path).map_err(|e| {
            anyhow::anyhow!("--ledger-artifact: {e}; pass the zip of the `{name}` artifact downloaded from the agent's workflow run (`gh run download RUN -n {name}` unpacks it: zip it again, or pass the ledger with --ledger)")
        })?;
        let origin = |entry: Option<String>| LedgerOrigin::ArtifactFile { zip: shown.clone(), entry };
        return Ok(match zip.and_then(|z| artifact::verify_zip(&z, &shown, rel, Some(&target), limits)) {
            Ok((mut report, entry)) => {
                report.origin = Some(origin(Some(entry)));
                report
            }
            Err(refusal) => refused(&shown, refusal, origin(None), Some(&target)),
        });
    }
    match &input.artifacts {
        Some(source) => {
            if let Some(report) = from_actions(source.as_ref(), name, cs, git, rel, &target, &mut looked)? {
                return Ok(report);
            }
        }
        None => looked.push(format!(
            "the Actions artifact `{name}` of a run on {}: not looked up (no GitHub access here; pass --ledger-artifact ZIP)",
            crate::text::short_sha(&cs.head)
        )),
    }

    // 4. The working tree. `--repo` may be a subdirectory; `ledger.path` is
    // relative to the root.
    let root = git.run(&["rev-parse", "--show-toplevel"]).map(PathBuf::from)?;
    let path = root.join(rel);
    let mut report = ledger::verify(&path, Some(&target))?;
    if report.present {
        report.origin = Some(LedgerOrigin::File { path: path.display().to_string() });
        return Ok(report);
    }
    looked.push(format!("`{rel}` in the working tree: no such file"));
    Ok(LedgerReport::missing(looked, name, Some(&target)))
}

/// Artifacts of runs on commits of the pull request that are tried when no
/// run on the head uploaded one, newest first.
pub(crate) const MAX_EARLIER_CANDIDATES: usize = 3;

/// Commits of the pull request looked at for earlier runs.
const MAX_PR_COMMITS: usize = 1000;

/// The ledger from the repository's Actions artifacts named `name`, or
/// `None` (with what was found pushed on `looked`).
///
/// First choice: the newest unexpired artifact of a run on the head commit.
/// An agent's own workflow run, though, starts on the commit it branched
/// from (the base, or the previous head) and pushes the head during the
/// run, so its run is never "on" the head it produced. When no run on the
/// head uploaded one, the newest unexpired artifacts of runs on the merge
/// base or an earlier commit of the pull request are tried (at most
/// [`MAX_EARLIER_CANDIDATES`]): the first whose ledger verifies against the
/// change is taken; when none does, the newest one's report is returned, so
/// a ledger of another commit fails coverage and says so.
fn from_actions(
    source: &dyn ArtifactSource,
    name: &str,
    cs: &ChangeSet,
    git: &Git,
    rel: &str,
    target: &ChangeTarget,
    looked: &mut Vec<String>,
) -> anyhow::Result<Option<LedgerReport>> {
    let place = source.describe();
    let all = match source.list(name)? {
        Ok(all) => all,
        Err(why) => {
            looked.push(format!("{place}: {why}"));
            return Ok(None);
        }
    };
    if all.is_empty() {
        looked.push(format!("{place}: no artifact named `{name}`"));
        return Ok(None);
    }
    let on_head: Vec<&ListedArtifact> = all.iter().filter(|a| a.artifact.head_sha == cs.head).collect();
    if !on_head.is_empty() {
        let Some(live) = on_head.iter().find(|a| !a.expired) else {
            let a = &on_head[0].artifact;
            let when = a.expires_at.as_deref().unwrap_or("an unknown date");
            looked.push(format!(
                "{place}: {} expired on {when}; re-run the agent's workflow to upload it again, or commit the ledger",
                a.describe()
            ));
            return Ok(None);
        };
        return match source.download(live)? {
            Ok(zip) => Ok(Some(verify_artifact(live, &zip, rel, target))),
            Err(why) => {
                looked.push(format!("{place}: {} {why}", live.artifact.describe()));
                Ok(None)
            }
        };
    }
    // No run on the head: runs on the merge base or earlier commits of the
    // pull request, where an agent's run starts.
    let range = format!("{}..{}", cs.merge_base, cs.head);
    let listing = git.run(&["rev-list", &format!("--max-count={MAX_PR_COMMITS}"), &range])?;
    let mut ours: std::collections::HashSet<&str> = listing.lines().map(str::trim).collect();
    ours.insert(cs.merge_base.as_str());
    let earlier: Vec<&ListedArtifact> = all
        .iter()
        .filter(|a| !a.expired && ours.contains(a.artifact.head_sha.as_str()))
        .take(MAX_EARLIER_CANDIDATES)
        .collect();
    let mut first: Option<LedgerReport> = None;
    for candidate in &earlier {
        match source.download(candidate)? {
            Ok(zip) => {
                let report = verify_artifact(candidate, &zip, rel, target);
                if report.valid {
                    return Ok(Some(report));
                }
                first.get_or_insert(report);
            }
            Err(why) => looked.push(format!("{place}: {} {why}", candidate.artifact.describe())),
        }
    }
    if first.is_some() {
        return Ok(first);
    }
    if earlier.is_empty() {
        looked.push(format!(
            "{place}: none of the {} artifacts named `{name}` comes from a run on {} or on an earlier commit of the pull request (the newest is from a run on {})",
            all.len(),
            crate::text::short_sha(&cs.head),
            crate::text::short_sha(&all[0].artifact.head_sha)
        ));
    }
    Ok(None)
}

/// Reads and verifies the ledger of a downloaded artifact.
fn verify_artifact(listed: &ListedArtifact, zip: &[u8], rel: &str, target: &ChangeTarget) -> LedgerReport {
    let a = &listed.artifact;
    let shown = format!("artifact {} `{}`", a.artifact_id, a.name);
    let origin = |entry: Option<String>| LedgerOrigin::Artifact { artifact: a.clone(), entry };
    match artifact::verify_zip(zip, &shown, rel, Some(target), ReadLimits::default()) {
        Ok((mut report, entry)) => {
            report.origin = Some(origin(Some(entry)));
            report
        }
        Err(refusal) => refused(&shown, refusal, origin(None), Some(target)),
    }
}

/// The report for an artifact that was found but could not be read as a
/// ledger: present (there was evidence) and invalid, with the refusal as its
/// problem.
fn refused(
    shown: &str,
    refusal: ArtifactRefusal,
    origin: LedgerOrigin,
    target: Option<&ChangeTarget>,
) -> LedgerReport {
    // An empty ledger verified against the change: no records, so every
    // changed file shows as unexplained, and the refusal comes first.
    let mut report = ledger::verify::verify_reader(shown, &b""[..], target, ReadLimits::default())
        .unwrap_or_else(|_| LedgerReport::missing(Vec::new(), "", target));
    report.present = true;
    report.valid = false;
    report.problems.insert(0, ledger::Problem { line: None, message: refusal.message, fix: refusal.fix });
    report.origin = Some(origin);
    report
}
