//! The facts the gate reads from git: the rule packs at the base commit
//! (never the head: a pull request cannot weaken its own gate; the config is
//! read the same way, by [`crate::config::Config::at_base`]), the head branch
//! name, and the `Co-authored-by` trailers of the range.

use anyhow::{anyhow, Context};

use crate::changeset::git::Blob;
use crate::changeset::Git;

/// Rule files larger than this are refused (a rule pack is a few KiB).
const MAX_RULE_BYTES: u64 = 1 << 20;

/// The `*.yml`/`*.yaml` files directly in each `rules.extra` folder at the
/// base commit, as `(path, text)` for the rule-pack analyzer.
pub(crate) fn rules_at_base(
    git: &Git,
    base_sha: &str,
    dirs: &[String],
) -> anyhow::Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for dir in dirs {
        let d = format!("{}/", dir.trim_start_matches("./").trim_end_matches('/'));
        let listing = git
            .run_bytes(&["ls-tree", "-z", base_sha, "--", &d])
            .with_context(|| format!("listing rules.extra folder {d} at the base commit"))?;
        let mut found = false;
        for entry in listing.split(|&b| b == 0).filter(|e| !e.is_empty()) {
            let entry = String::from_utf8_lossy(entry);
            let Some((meta, path)) = entry.split_once('\t') else { continue };
            if !meta.contains(" blob ") || !(path.ends_with(".yml") || path.ends_with(".yaml")) {
                continue;
            }
            found = true;
            match git.read_blob_at(base_sha, path, MAX_RULE_BYTES)? {
                Some(Blob::Bytes(b)) => {
                    let text = String::from_utf8(b).map_err(|_| {
                        anyhow!("{}:{path}: rule file is not UTF-8 text", crate::text::short_sha(base_sha))
                    })?;
                    out.push((path.to_string(), text));
                }
                Some(Blob::TooLarge(size)) => {
                    return Err(anyhow!(
                        "{}:{path}: rule file is {size} bytes, over the {} KiB limit",
                        crate::text::short_sha(base_sha),
                        MAX_RULE_BYTES >> 10
                    ))
                }
                _ => {
                    return Err(anyhow!(
                        "{}:{path}: cannot read the rule file",
                        crate::text::short_sha(base_sha)
                    ))
                }
            }
        }
        if !found {
            return Err(anyhow!(
                "rules.extra names {d}, but the base commit {} has no *.yml rule file there; fix rules.extra in the base config",
                crate::text::short_sha(base_sha)
            ));
        }
    }
    Ok(out)
}

/// The branch name `rev` stands for (`refs/heads/X` or `refs/remotes/R/X`
/// -> `X`), or `None` for a bare commit.
pub(crate) fn branch_name(git: &Git, rev: &str) -> Option<String> {
    if rev.starts_with('-') {
        return None;
    }
    let out = git.run(&["rev-parse", "--symbolic-full-name", "--end-of-options", rev]).ok()?;
    // Some git versions echo `--end-of-options` on a line of its own.
    let full = out.lines().rev().find(|l| l.starts_with("refs/"))?;
    if let Some(b) = full.strip_prefix("refs/heads/") {
        return Some(b.to_string());
    }
    full.strip_prefix("refs/remotes/").and_then(|r| r.split_once('/')).map(|(_, b)| b.to_string())
}

/// `(commit, value)` for every `Co-authored-by` trailer of the commits in
/// `merge_base..head`.
pub(crate) fn co_authors(git: &Git, merge_base: &str, head: &str) -> anyhow::Result<Vec<(String, String)>> {
    let range = format!("{merge_base}..{head}");
    let out = git
        .run_bytes(&[
            "log",
            "--no-show-signature",
            "--format=%H%x1f%(trailers:key=Co-authored-by,valueonly,separator=%x1e)%x00",
            &range,
        ])
        .context("reading the commit trailers of the range")?;
    let mut found = Vec::new();
    for rec in out.split(|&b| b == 0) {
        let rec = String::from_utf8_lossy(rec);
        let rec = rec.trim_start_matches('\n');
        let Some((sha, values)) = rec.split_once('\u{1f}') else { continue };
        for v in values.split('\u{1e}').map(str::trim).filter(|v| !v.is_empty()) {
            found.push((sha.to_string(), v.to_string()));
        }
    }
    Ok(found)
}
