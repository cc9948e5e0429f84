//! Where the gate finds an agent's tool-call ledger, and verifying it.
//!
//! The places, in this order (docs/ledger.md, "Where the ledger is looked
//! for"); the first that holds a ledger is the one verified:
//!
//! 1. `--ledger PATH`, when given (a local override; the Action never sets it);
//! 2. `ledger.path` committed at the head commit;
//! 3. the Actions artifact named `ledger.artifact`: `--ledger-artifact ZIP`
//!    locally, or, in the Action, the newest unexpired artifact of that name
//!    uploaded by a workflow run on the head commit ([`ArtifactSource`]);
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
use crate::ledger::artifact::{self, ArtifactRefusal, ArtifactSearch, LedgerOrigin};
use crate::ledger::lines::Limits;
use crate::ledger::{self, ChangeTarget, LedgerReport};

use super::CheckInput;

fn short(sha: &str) -> &str {
    sha.get(..7).unwrap_or(sha)
}

/// Finds the ledger of the change `cs` and verifies it against the change.
/// `Err` = could not decide (git failed, the artifacts API could not be
/// asked, a path given on the command line cannot be read).
pub fn find_and_verify(
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
    let limits = Limits::default();

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
            let shown = format!("{}:{rel}", short(&cs.head));
            let mut report = ledger::verify::verify_reader(&shown, bytes.as_slice(), Some(&target), limits)?;
            report.origin = Some(LedgerOrigin::FileAtHead { commit: cs.head.clone(), path: rel.to_string() });
            return Ok(report);
        }
        Some(Blob::TooLarge(size)) => anyhow::bail!(
            "the ledger {rel} committed at the head is {size} bytes, over the {} MiB limit; a real ledger is a few MB",
            limits.max_ledger_bytes >> 20
        ),
        _ => looked.push(format!("`{rel}` committed at {}: not there", short(&cs.head))),
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
        Some(source) => match source.find(name, &cs.head)? {
            ArtifactSearch::Found { artifact, zip } => {
                let shown = format!("artifact {} `{}`", artifact.artifact_id, artifact.name);
                let origin = |entry: Option<String>| LedgerOrigin::Artifact { artifact: artifact.clone(), entry };
                return Ok(match artifact::verify_zip(&zip, &shown, rel, Some(&target), limits) {
                    Ok((mut report, entry)) => {
                        report.origin = Some(origin(Some(entry)));
                        report
                    }
                    Err(refusal) => refused(&shown, refusal, origin(None), Some(&target)),
                });
            }
            ArtifactSearch::NotFound(why) => looked.push(format!("{}: {why}", source.describe())),
            ArtifactSearch::Refused { artifact, why } => {
                looked.push(format!("{}: {} {why}", source.describe(), artifact.describe()))
            }
        },
        None => looked.push(format!(
            "the Actions artifact `{name}` of a run on {}: not looked up (no GitHub access here; pass --ledger-artifact ZIP)",
            short(&cs.head)
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
    looked.push(format!("`{rel}` in the working tree {}: no such file", root.display()));
    Ok(LedgerReport::missing(looked, name, Some(&target)))
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
    let mut report = ledger::verify::verify_reader(shown, &b""[..], target, Limits::default())
        .unwrap_or_else(|_| LedgerReport::missing(Vec::new(), "", target));
    report.present = true;
    report.valid = false;
    report.problems.insert(0, ledger::Problem { line: None, message: refusal.message, fix: refusal.fix });
    report.origin = Some(origin);
    report
}
