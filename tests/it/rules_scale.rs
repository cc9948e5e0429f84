//! Very large edited files through the rule engine, end to end (a real git
//! repository and the binary): every changed setting is found, each on its
//! own line, and an unchanged setting is not. The engine once paired
//! settings and looked up changed lines with a scan per occurrence, which
//! made a 150,000-line file take minutes.
//!
//! Speed is measured, not asserted here: each test prints its time, and
//! `cargo bench --bench rules` scans the same four shapes at 150,000 lines
//! and twice that, and prints the ratio (linear work about 2, quadratic 4).

use crate::common;
use common::git;

use std::process::Command;
use std::time::{Duration, Instant};

#[path = "../../benches/large_files/mod.rs"]
mod large_files;

/// Settings per file: enough that work per occurrence that scans the file
/// or the changed ranges shows as minutes in a debug build.
const N: usize = 20_000;

/// A repository whose `main` holds `base` as `big.py` and whose HEAD holds `head`.
fn repo(base: &str, head: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    std::fs::write(d.join("big.py"), base).unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "base"]);
    git(d, &["checkout", "-q", "-b", "agent/change"]);
    std::fs::write(d.join("big.py"), head).unwrap();
    git(d, &["commit", "-q", "-am", "head"]);
    dir
}

/// Runs `scan --format json` and returns (exit code, findings, elapsed).
fn scan(dir: &std::path::Path) -> (Option<i32>, Vec<serde_json::Value>, Duration) {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .args(["scan", "--base", "main", "--format", "json"])
        .current_dir(dir)
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), json["findings"].as_array().cloned().unwrap_or_default(), elapsed)
}

/// Scans `(base, head)` as `big.py` and prints the time it took.
fn scan_shape(name: &str, (base, head): (String, String)) -> (Option<i32>, Vec<serde_json::Value>) {
    let dir = repo(&base, &head);
    let (code, findings, elapsed) = scan(dir.path());
    println!("{name}: {} lines scanned in {elapsed:?}", head.lines().count());
    (code, findings)
}

#[test]
fn every_raised_count_of_a_large_file_is_found_on_its_line() {
    let _room = crate::common::enter(crate::common::Room::Busy);
    let (code, findings) = scan_shape("raised", large_files::raised(N));
    assert_eq!(code, Some(1));
    assert_eq!(findings.len(), N, "one finding per raised line");
    assert!(findings.iter().all(|f| f["kind"] == "retry-count-raised"));
    assert_eq!(findings[N - 1]["line"], N);
}

#[test]
fn raised_counts_between_unchanged_lines_are_found_on_the_raised_lines_only() {
    let _room = crate::common::enter(crate::common::Room::Busy);
    // As many changed ranges as settings: a changed-line lookup per match
    // that scans the ranges is quadratic here.
    let (code, findings) =
        scan_shape("raised between unchanged", large_files::raised_between_unchanged(N / 2));
    assert_eq!(code, Some(1));
    assert_eq!(findings.len(), N / 2);
    assert_eq!(findings[1]["line"], 3, "findings sit on the raised lines only");
}

#[test]
fn every_removed_jitter_of_a_large_file_is_found() {
    let _room = crate::common::enter(crate::common::Room::Busy);
    // The `removed` pairing and placement must not rescan the block per line.
    let n = N / 5;
    let (code, findings) = scan_shape("jitter removed", large_files::jitter_removed(n));
    assert_eq!(code, Some(1));
    assert!(findings.len() >= n * 9 / 10, "{} findings", findings.len());
    assert!(findings.iter().all(|f| f["kind"] == "jitter-removed"));
}

#[test]
fn an_unchanged_large_file_with_one_edit_reports_only_that_edit() {
    let _room = crate::common::enter(crate::common::Room::Busy);
    let (code, findings) = scan_shape("one edit", large_files::one_edit(N));
    assert_eq!(code, Some(1));
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0]["line"], N / 2 + 1);
}
