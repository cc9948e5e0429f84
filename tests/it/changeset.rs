//! `ChangeSet::from_git` on real repositories built in temp dirs: every kind
//! of file change, the files it must skip or decode with a note, three-dot
//! (merge-base) semantics, and the errors a user can cause, each with the
//! message that tells them what to do.

use crate::common;

use common::Repo;
use retrygate::changeset::{ChangeSet, ChangeSetError, FileChange, Side, Status, MAX_FILE_BYTES};

/// 24 numbered lines: long enough for git's rename detection to pair a file
/// with its origin after a one-line edit.
fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("fn line_{i}() -> u32 {{ {i} }}\n")).collect()
}

fn file<'a>(cs: &'a ChangeSet, path: &str) -> &'a FileChange {
    cs.files.iter().find(|f| f.path == path).unwrap_or_else(|| {
        let paths: Vec<&str> = cs.files.iter().map(|f| f.path.as_str()).collect();
        panic!("{path} is not in the change set; it holds {paths:?}")
    })
}

fn note_for<'a>(cs: &'a ChangeSet, path: &str) -> &'a retrygate::finding::Note {
    cs.notes
        .iter()
        .find(|n| n.path.as_deref() == Some(path))
        .unwrap_or_else(|| panic!("no note for {path}; notes: {:?}", cs.notes))
}

/// A repository whose `main` holds `files`, with `feature` checked out on top.
fn repo_with(files: &[(&str, &str)]) -> Repo {
    let repo = Repo::new();
    for (path, text) in files {
        repo.write(path, text);
    }
    repo.commit("base");
    repo.branch("feature");
    repo
}

fn scan(repo: &Repo) -> ChangeSet {
    ChangeSet::from_git(repo.path(), "main", "HEAD").unwrap_or_else(|e| panic!("change set: {e}"))
}

#[test]
fn added_file_has_no_base_and_every_line_added() {
    let repo = repo_with(&[("src/lib.rs", "fn a() {}\n")]);
    repo.write("src/new.rs", "fn b() {}\nfn c() {}\nfn d() {}\n");
    let head = repo.commit("add");
    let cs = scan(&repo);
    assert_eq!(cs.head, head);
    assert_eq!(cs.files.len(), 1, "the untouched file is not part of the change");
    let f = file(&cs, "src/new.rs");
    assert_eq!(f.status, Status::Added);
    assert_eq!(f.base, Side::Absent);
    assert_eq!(f.head.text(), Some("fn b() {}\nfn c() {}\nfn d() {}\n"));
    assert_eq!(f.added, vec![(1, 3)]);
    assert!(cs.notes.is_empty(), "{:?}", cs.notes);
}

#[test]
fn modified_file_reports_only_the_changed_lines() {
    let repo = repo_with(&[("src/client.rs", &numbered(10))]);
    let edited =
        numbered(10).replace("fn line_4() -> u32 { 4 }", "fn line_4() -> u32 { 40 }") + "fn extra() {}\n";
    repo.write("src/client.rs", &edited);
    repo.commit("edit");
    let cs = scan(&repo);
    let f = file(&cs, "src/client.rs");
    assert_eq!(f.status, Status::Modified);
    assert_eq!(f.base.text(), Some(numbered(10).as_str()));
    assert_eq!(f.head.text(), Some(edited.as_str()));
    assert_eq!(f.added, vec![(4, 4), (11, 11)]);
    assert!(f.is_added(4) && !f.is_added(5));
}

#[test]
fn deleted_file_has_no_head_and_adds_nothing() {
    let repo = repo_with(&[("src/old.rs", "fn gone() {}\n"), ("src/keep.rs", "fn kept() {}\n")]);
    repo.remove("src/old.rs");
    repo.commit("delete");
    let cs = scan(&repo);
    assert_eq!(cs.files.len(), 1);
    let f = file(&cs, "src/old.rs");
    assert_eq!(f.status, Status::Deleted);
    assert_eq!(f.base.text(), Some("fn gone() {}\n"));
    assert_eq!(f.head, Side::Absent);
    assert!(f.added.is_empty());
}

#[test]
fn pure_move_is_a_rename_with_no_added_lines() {
    let text = numbered(24);
    let repo = repo_with(&[("src/retry.rs", &text)]);
    repo.rename("src/retry.rs", "src/net/retry.rs");
    repo.commit("move");
    let cs = scan(&repo);
    assert_eq!(cs.files.len(), 1, "a move is one change, not a delete and an add: {:?}", cs.files);
    let f = file(&cs, "src/net/retry.rs");
    assert_eq!(f.status, Status::Renamed);
    assert_eq!(f.old_path.as_deref(), Some("src/retry.rs"));
    assert_eq!(f.base.text(), Some(text.as_str()), "the base side is the origin's content");
    assert_eq!(f.head.text(), Some(text.as_str()));
    assert!(f.added.is_empty(), "moved code is not new code: {:?}", f.added);
}

#[test]
fn rename_with_an_edit_adds_only_the_edited_lines() {
    let text = numbered(24);
    let repo = repo_with(&[("src/retry.rs", &text)]);
    repo.rename("src/retry.rs", "src/backoff.rs");
    repo.write("src/backoff.rs", text.replace("{ 17 }", "{ 1700 }"));
    repo.commit("move and edit");
    let cs = scan(&repo);
    assert_eq!(cs.files.len(), 1, "{:?}", cs.files);
    let f = file(&cs, "src/backoff.rs");
    assert_eq!(f.status, Status::Renamed);
    assert_eq!(f.old_path.as_deref(), Some("src/retry.rs"));
    assert_eq!(f.added, vec![(17, 17)]);
}

#[test]
fn binary_file_is_skipped_with_a_note() {
    let repo = repo_with(&[("README.md", "hello\n")]);
    repo.write("assets/logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".as_slice());
    repo.write("src/blob.rs", b"fn a() {}\n\0\0binary".as_slice());
    repo.commit("binaries");
    let cs = scan(&repo);
    for path in ["assets/logo.png", "src/blob.rs"] {
        let f = file(&cs, path);
        assert_eq!(f.head, Side::Skipped, "{path}");
        assert!(f.added.is_empty());
        let n = note_for(&cs, path);
        assert!(n.message.contains("binary file"), "{n}");
    }
}

#[test]
fn files_over_2_mib_are_skipped_with_a_note_and_2_mib_exactly_is_read() {
    let limit = MAX_FILE_BYTES as usize;
    assert_eq!(limit, 2 * 1024 * 1024);
    let line = "// padding padding padding padding padding padding padding padding\n";
    let mut at_limit = line.repeat(limit / line.len() + 1);
    at_limit.truncate(limit - 1);
    at_limit.push('\n');
    let over = format!("{at_limit}x");
    let repo = repo_with(&[("README.md", "hello\n")]);
    repo.write("src/at_limit.rs", &at_limit);
    repo.write("src/huge.rs", &over);
    repo.commit("large files");
    let cs = scan(&repo);

    let ok = file(&cs, "src/at_limit.rs");
    assert_eq!(ok.head.text().map(str::len), Some(limit), "a file of exactly 2 MiB is read");
    assert!(cs.notes.iter().all(|n| n.path.as_deref() != Some("src/at_limit.rs")), "{:?}", cs.notes);

    let huge = file(&cs, "src/huge.rs");
    assert_eq!(huge.head, Side::Skipped);
    let n = note_for(&cs, "src/huge.rs");
    assert!(n.message.contains(&format!("{} bytes", limit + 1)) && n.message.contains("2 MiB"), "{n}");
}

#[test]
fn non_utf8_text_is_analysed_lossily_with_a_note() {
    let repo = repo_with(&[("src/latin1.rs", "// base\n")]);
    // "größe" in Latin-1: valid text, invalid UTF-8.
    repo.write("src/latin1.rs", b"// gr\xf6\xdfe\nconst MAX_RETRIES: u32 = 6;\n".as_slice());
    repo.commit("latin-1");
    let cs = scan(&repo);
    let f = file(&cs, "src/latin1.rs");
    let text = f.head.text().expect("the file is still analysed");
    assert!(text.contains("const MAX_RETRIES: u32 = 6;"), "{text}");
    assert!(text.contains('\u{fffd}'), "invalid bytes become replacement characters: {text}");
    assert_eq!(f.added, vec![(1, 2)]);
    let n = note_for(&cs, "src/latin1.rs");
    assert!(!n.blocking);
    assert!(n.message.contains("not valid UTF-8") && n.message.contains("offset 5"), "{n}");
}

#[test]
fn paths_with_spaces_and_non_ascii_survive_unquoted() {
    let repo = repo_with(&[("README.md", "hello\n")]);
    repo.write("src/zahlung dienst/größe.rs", "fn a() {}\n");
    repo.commit("odd names");
    let cs = scan(&repo);
    assert_eq!(file(&cs, "src/zahlung dienst/größe.rs").status, Status::Added);
}

#[test]
fn symbolic_links_are_noted_not_read() {
    let repo = repo_with(&[("src/real.rs", "fn a() {}\n")]);
    std::os::unix::fs::symlink("real.rs", repo.join("src/link.rs")).unwrap();
    repo.commit("symlink");
    let cs = scan(&repo);
    // Listed with its link side skipped, so an analyzer that wants the path
    // knows it is blind there (issue 15, item 7).
    let link = file(&cs, "src/link.rs");
    assert_eq!((&link.base, &link.head), (&Side::Absent, &Side::Skipped));
    assert!(note_for(&cs, "src/link.rs").message.contains("symbolic link to `real.rs`"));
}

#[test]
fn changes_on_the_base_branch_after_the_fork_are_not_in_the_pr() {
    let repo = Repo::new();
    repo.write("src/shared.rs", numbered(5));
    repo.write("src/client.rs", "fn old() {}\n");
    let fork_point = repo.commit("base");
    repo.branch("feature");
    repo.write("src/client.rs", "fn new() {}\n");
    let head = repo.commit("the PR's change");
    // main moves on after the PR branched: it edits a shared file and adds one.
    repo.checkout("main");
    repo.write("src/shared.rs", numbered(5).replace("{ 3 }", "{ 300 }"));
    repo.write("src/main_only.rs", "fn main_only() {}\n");
    repo.commit("main advances");

    let cs = ChangeSet::from_git(repo.path(), "main", "feature").unwrap();
    assert_eq!(cs.merge_base, fork_point);
    assert_eq!(cs.head, head);
    assert_eq!(cs.base_rev, "main");
    let paths: Vec<&str> = cs.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, vec!["src/client.rs"], "only the PR's own change");
    let f = file(&cs, "src/client.rs");
    assert_eq!(f.base.text(), Some("fn old() {}\n"), "compared with the fork point, not main's tip");
}

#[test]
fn shallow_clone_without_merge_base_says_to_fetch_full_history() {
    let origin = Repo::new();
    origin.write("src/lib.rs", numbered(3));
    origin.commit("c1");
    origin.branch("feature");
    origin.write("src/lib.rs", numbered(4));
    origin.commit("c2");
    origin.checkout("main");
    origin.write("README.md", "main moves on\n");
    origin.commit("c3");

    let clone = Repo::clone_from(&origin, &["--depth", "1", "--no-single-branch"]);
    assert_eq!(clone.git(&["rev-parse", "--is-shallow-repository"]), "true");
    let err = ChangeSet::from_git(clone.path(), "origin/main", "origin/feature").unwrap_err();
    assert!(matches!(err, ChangeSetError::ShallowClone { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("fetch full history"), "{msg}");
    assert!(msg.contains("origin/main") && msg.contains("origin/feature"), "{msg}");

    // Following the advice works.
    clone.git(&["fetch", "-q", "--unshallow"]);
    let cs = ChangeSet::from_git(clone.path(), "origin/main", "origin/feature").unwrap();
    assert_eq!(cs.files.len(), 1);
    assert_eq!(file(&cs, "src/lib.rs").added, vec![(4, 4)]);
}

#[test]
fn unrelated_histories_are_an_error_not_an_empty_change() {
    let repo = repo_with(&[("a.rs", "fn a() {}\n")]);
    repo.git(&["checkout", "-q", "--orphan", "island"]);
    repo.write("b.rs", "fn b() {}\n");
    repo.commit("unrelated root");
    let err = ChangeSet::from_git(repo.path(), "main", "island").unwrap_err();
    assert!(matches!(err, ChangeSetError::UnrelatedHistories { .. }), "{err:?}");
    assert!(err.to_string().contains("share no history"), "{err}");
}

#[test]
fn unknown_revisions_are_named() {
    let repo = repo_with(&[("a.rs", "fn a() {}\n")]);
    repo.write("a.rs", "fn b() {}\n");
    repo.commit("edit");
    for (base, head, bad) in [
        ("no-such-branch", "HEAD", "no-such-branch"),
        ("main", "feature~5", "feature~5"),
        ("--output=/tmp/x", "HEAD", "--output=/tmp/x"),
        ("main:a.rs", "HEAD", "main:a.rs"),
    ] {
        let err = ChangeSet::from_git(repo.path(), base, head).unwrap_err();
        assert!(matches!(err, ChangeSetError::UnknownRevision { .. }), "{base}..{head}: {err:?}");
        let msg = err.to_string();
        assert!(msg.contains(&format!("unknown revision '{bad}'")), "{msg}");
        assert!(msg.contains("git fetch"), "says what to do next: {msg}");
    }
}

#[test]
fn a_missing_remote_tracking_base_is_fetched_by_its_branch_name() {
    // actions/checkout's default depth-1 checkout has no origin/main.
    let repo = repo_with(&[("a.rs", "fn a() {}\n")]);
    let err = ChangeSet::from_git(repo.path(), "origin/main", "HEAD").unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("unknown revision 'origin/main'"), "{msg}");
    assert!(msg.contains("(git fetch origin main)"), "{msg}");
    let err = ChangeSet::from_git(repo.path(), "refs/remotes/upstream/release/1.2", "HEAD").unwrap_err();
    assert!(err.to_string().contains("(git fetch upstream release/1.2)"), "{err}");
    let err = ChangeSet::from_git(repo.path(), "v1.0", "HEAD").unwrap_err();
    assert!(err.to_string().contains("(git fetch origin v1.0)"), "{err}");
}

#[test]
fn a_directory_outside_git_is_not_a_repository() {
    let dir = tempfile::tempdir().unwrap();
    let err = ChangeSet::from_git(dir.path(), "main", "HEAD").unwrap_err();
    assert!(matches!(err, ChangeSetError::NotARepository { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains(&format!("{} is not a git repository", dir.path().display())), "{msg}");
    assert!(msg.contains("--repo"), "{msg}");

    let missing = dir.path().join("nope");
    let err = ChangeSet::from_git(&missing, "main", "HEAD").unwrap_err();
    assert!(err.to_string().contains("does not exist"), "{err}");
}

#[test]
fn a_subdirectory_of_a_repository_scans_the_whole_repository() {
    let repo = repo_with(&[("src/a.rs", "fn a() {}\n")]);
    repo.write("src/a.rs", "fn b() {}\n");
    repo.write("docs/b.md", "b\n");
    repo.commit("edit");
    let cs = ChangeSet::from_git(&repo.join("src"), "main", "HEAD").unwrap();
    let mut paths: Vec<&str> = cs.files.iter().map(|f| f.path.as_str()).collect();
    paths.sort();
    assert_eq!(paths, vec!["docs/b.md", "src/a.rs"], "paths are repository-relative");
}

#[test]
fn diff_relative_in_the_users_config_does_not_hide_files_outside_the_directory() {
    // `diff.relative = true` (git >= 2.28) makes `git diff` run in a
    // subdirectory show only that directory, with shortened paths: a scan
    // from `src/` would silently miss every other changed file.
    let repo = repo_with(&[("src/a.rs", "fn a() {}\n"), ("lib/b.rs", "fn b() {}\n")]);
    repo.git(&["config", "diff.relative", "true"]);
    repo.write("src/a.rs", "fn a2() {}\n");
    repo.write("lib/b.rs", "fn b2() {}\n");
    repo.commit("edit both");
    let cs = ChangeSet::from_git(&repo.join("src"), "main", "HEAD").unwrap();
    let mut paths: Vec<&str> = cs.files.iter().map(|f| f.path.as_str()).collect();
    paths.sort();
    assert_eq!(paths, vec!["lib/b.rs", "src/a.rs"]);
}

#[test]
fn submodule_changes_are_noted_not_read() {
    let repo = repo_with(&[("a.rs", "fn a() {}\n")]);
    // A gitlink entry, as `git submodule add` would record it.
    let commit = repo.head();
    repo.git(&["update-index", "--add", "--cacheinfo", &format!("160000,{commit},vendor/dep")]);
    repo.git(&["commit", "-q", "-m", "add a submodule"]);
    let cs = scan(&repo);
    assert!(cs.files.iter().all(|f| f.path != "vendor/dep"), "{:?}", cs.files);
    assert!(note_for(&cs, "vendor/dep").message.contains("submodule"));
}
