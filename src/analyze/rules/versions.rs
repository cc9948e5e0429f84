//! Findings that hold only below a version of the program that reads the
//! file (a rule's `version:`): nginx before 1.9.13 passes a POST that failed
//! on one upstream to the next, later versions do not. The version is read
//! from the Dockerfiles in the finding's folder and the folders above it,
//! nearest first: the changed files, then the rest of the head tree.
//!
//! Found and below the limit: the finding stands and names the version and
//! where it was read. Found and at or above it: the finding is dropped. Not
//! found: the finding keeps its place at the rule's `unknown` severity and
//! says that the version decides. The tree could not be read: the finding
//! keeps the rule's own severity and says why.

use std::collections::{BTreeMap, HashSet};

use super::helpers::RepoHead;
use super::lang::Language;
use super::spec::{parse_version, RuleSet, VersionGate};
use crate::changeset::git::Blob;
use crate::changeset::FileChange;
use crate::finding::Finding;

/// The largest Dockerfile read from the head tree, in bytes.
const MAX_DOCKERFILE_BYTES: u64 = 256 * 1024;

/// Dockerfiles by folder: `(path, text)`.
type ByFolder = BTreeMap<String, Vec<(String, String)>>;

/// Where a version was read: `(path, line, version as written)`.
type Found = (String, u32, String);

/// Settles every finding of a rule with a `version:` gate.
pub(crate) fn settle(
    set: &RuleSet,
    findings: &mut Vec<Finding>,
    files: &[&FileChange],
    tree: Option<&RepoHead>,
) {
    let gate_of = |f: &Finding| set.rules.iter().find(|r| r.id == f.rule).and_then(|r| r.version.as_ref());
    let gated: Vec<String> =
        findings.iter().filter(|f| gate_of(f).is_some()).map(|f| folder(&f.path)).collect();
    if gated.is_empty() {
        return;
    }
    let (dockerfiles, unread) = dockerfiles(&gated, files, tree);
    findings.retain_mut(|f| {
        let Some(gate) = gate_of(f) else { return true };
        match find_version(gate, &folder(&f.path), &dockerfiles) {
            Some((path, line, version)) => {
                let below = parse_version(&version).is_some_and(|v| v < gate.below);
                if below {
                    f.message = format!("{} ({} {version}, read from {path}:{line})", f.message, gate.name);
                }
                below
            }
            None if unread.is_some() => {
                // The tree could not be read: the finding keeps the rule's own
                // severity (an error never lowers a verdict).
                f.message = format!(
                    "{}; the {} version could not be looked up ({}), and this holds only before {}",
                    f.message,
                    gate.name,
                    unread.as_deref().unwrap_or_default(),
                    gate.below_text
                );
                true
            }
            None => {
                f.severity = gate.unknown;
                f.message = format!(
                    "{}; the {} version was not found in a Dockerfile in this folder or above it, and this holds only before {}",
                    f.message, gate.name, gate.below_text
                );
                true
            }
        }
    });
}

/// The folder of a repository path (`""` for the root).
fn folder(path: &str) -> String {
    path.rsplit_once('/').map_or(String::new(), |(d, _)| d.to_string())
}

/// Whether `dir` is `of` or a folder above it.
fn is_at_or_above(dir: &str, of: &str) -> bool {
    dir.is_empty() || of == dir || of.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/'))
}

/// The Dockerfiles in the gated folders or above them, by folder: the head
/// side of the changed files first, then the unchanged files of the tree;
/// and why the tree could not be read, if it could not.
fn dockerfiles(
    gated: &[String],
    files: &[&FileChange],
    tree: Option<&RepoHead>,
) -> (ByFolder, Option<String>) {
    let wanted = |path: &str| {
        Language::of_path(path) == Some(Language::Dockerfile)
            && gated.iter().any(|g| is_at_or_above(&folder(path), g))
    };
    let mut out: ByFolder = BTreeMap::new();
    let mut seen = HashSet::new();
    for f in files {
        seen.insert(f.path.as_str());
        if let (true, Some(text)) = (wanted(&f.path), f.head.text()) {
            out.entry(folder(&f.path)).or_default().push((f.path.clone(), text.to_string()));
        }
    }
    let mut unread = None;
    if let Some(tree) = tree {
        match tree_files(tree, &|p: &str| wanted(p) && !seen.contains(p)) {
            Ok(found) => {
                for (path, text) in found {
                    out.entry(folder(&path)).or_default().push((path, text));
                }
            }
            Err(e) => unread = Some(e),
        }
    }
    for list in out.values_mut() {
        list.sort();
    }
    (out, unread)
}

/// The tree's files that `wanted` keeps, read with one `git cat-file`; `Err`
/// says why the tree could not be read (the finding then keeps its rule's
/// severity).
fn tree_files(tree: &RepoHead, wanted: &dyn Fn(&str) -> bool) -> Result<Vec<(String, String)>, String> {
    let listing = tree.git.tree_blobs(&tree.rev).map_err(|e| e.to_string())?;
    let picked: Vec<(String, String)> = listing
        .into_iter()
        .filter(|b| wanted(&b.path) && b.size <= MAX_DOCKERFILE_BYTES)
        .map(|b| (b.path, b.id))
        .collect();
    let ids: Vec<String> = picked.iter().map(|p| p.1.clone()).collect();
    let blobs = tree.git.read_blobs(&ids, MAX_DOCKERFILE_BYTES).map_err(|e| e.to_string())?;
    Ok(picked
        .into_iter()
        .zip(blobs)
        .filter_map(|((path, _), blob)| match blob {
            Blob::Bytes(b) => String::from_utf8(b).ok().map(|t| (path, t)),
            _ => None,
        })
        .collect())
}

/// The version the nearest Dockerfile names: the finding's folder first,
/// then each folder above it; within a folder, files in name order.
fn find_version(gate: &VersionGate, dir: &str, dockerfiles: &ByFolder) -> Option<Found> {
    let mut level = Some(dir.to_string());
    while let Some(d) = level {
        for (path, text) in dockerfiles.get(&d).into_iter().flatten() {
            if let Some(caps) = gate.pattern.captures(text.as_bytes()) {
                if let Some(v) = caps.name("v") {
                    let line =
                        text.as_bytes()[..v.start()].iter().filter(|&&b| b == b'\n').count() as u32 + 1;
                    return Some((path.clone(), line, String::from_utf8_lossy(v.as_bytes()).into_owned()));
                }
            }
        }
        level = if d.is_empty() { None } else { Some(folder(&d)) };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::rules::RulePackAnalyzer;
    use crate::analyze::Analyzer;
    use crate::finding::Severity;

    const BASE: &str = "location / {\n    proxy_pass http://app;\n}\n";
    const HEAD: &str =
        "location / {\n    proxy_next_upstream error timeout http_502;\n    proxy_pass http://app;\n}\n";

    /// The severity and message of the finding on `edge/conf/site.conf`,
    /// with `dockerfile` (path, text) beside it, unchanged.
    fn judge(dockerfile: Option<(&str, &str)>) -> Vec<(Severity, String)> {
        let packs = RulePackAnalyzer::bundled().unwrap();
        let mut files = vec![FileChange::from_texts("edge/conf/site.conf", Some(BASE), Some(HEAD))];
        if let Some((path, text)) = dockerfile {
            files.push(FileChange::from_texts(path, Some(text), Some(text)));
        }
        let refs: Vec<&FileChange> = files.iter().collect();
        packs
            .analyze_set(&refs)
            .findings
            .into_iter()
            .filter(|f| f.rule == "infra/nginx-next-upstream-5xx")
            .map(|f| (f.severity, f.message))
            .collect()
    }

    #[test]
    fn an_old_nginx_above_the_config_blocks_and_is_named() {
        let f = judge(Some(("edge/Dockerfile", "FROM nginx:1.9.12\n")));
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].0, Severity::Error);
        assert!(f[0].1.ends_with("(nginx 1.9.12, read from edge/Dockerfile:1)"), "{}", f[0].1);
    }

    #[test]
    fn a_current_nginx_or_a_tag_that_is_not_a_number_drops_the_finding() {
        assert!(judge(Some(("edge/Dockerfile", "FROM nginx:1.9.13\n"))).is_empty());
        assert!(judge(Some(("Dockerfile", "FROM nginx:stable-alpine\n"))).is_empty());
    }

    #[test]
    fn an_unknown_version_is_a_warning_that_says_so() {
        // A Dockerfile in a sibling folder says nothing about this config.
        let f = judge(Some(("other/Dockerfile", "FROM nginx:1.6\n")));
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].0, Severity::Warning);
        assert!(f[0].1.contains("the nginx version was not found in a Dockerfile"), "{}", f[0].1);
        assert_eq!(judge(None).len(), 1);
    }

    #[test]
    fn folders_and_their_ancestors() {
        assert_eq!(folder("router/templates/nginx.conf"), "router/templates");
        assert_eq!(folder("nginx.conf"), "");
        assert!(is_at_or_above("router", "router/templates"));
        assert!(is_at_or_above("", "router/templates"));
        assert!(is_at_or_above("router/templates", "router/templates"));
        assert!(!is_at_or_above("rout", "router/templates"));
        assert!(!is_at_or_above("router/templates/x", "router/templates"));
    }

    #[test]
    fn a_tree_that_cannot_be_read_keeps_the_rule_s_severity() {
        // A real repository asked for a revision it does not have.
        let dir = tempfile::tempdir().unwrap();
        let ok =
            std::process::Command::new("git").args(["init", "-q"]).current_dir(dir.path()).status().unwrap();
        assert!(ok.success());
        let tree = RepoHead { git: crate::changeset::Git::open(dir.path()).unwrap(), rev: "f".repeat(40) };
        let packs = RulePackAnalyzer::bundled().unwrap();
        let file = FileChange::from_texts("edge/conf/site.conf", Some(BASE), Some(HEAD));
        let mut findings: Vec<Finding> = packs
            .analyze_set(&[&file])
            .findings
            .into_iter()
            .filter(|f| f.rule == "infra/nginx-next-upstream-5xx")
            .collect();
        assert_eq!(findings.len(), 1, "{findings:?}");
        findings[0].severity = Severity::Error;
        findings[0].message = "m".into();
        settle(&packs.engine.set, &mut findings, &[&file], Some(&tree));
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].severity, Severity::Error);
        assert!(
            findings[0].message.starts_with("m; the nginx version could not be looked up ("),
            "{}",
            findings[0].message
        );
    }
}
