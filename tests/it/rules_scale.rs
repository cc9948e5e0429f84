//! The rule engine stays linear in the number of changed lines: a pull
//! request that edits a very large file (150k retry settings in 1.5 MB) is
//! scanned end to end, through a real git repository and the binary, well
//! within the gate's time budget. The engine once paired settings and
//! looked up changed lines with a scan per occurrence, which made such a
//! file take minutes.

use crate::common;
use common::git;

use std::process::Command;
use std::time::{Duration, Instant};

/// What a gate run may take; these scans must finish far below it, even in
/// a debug build on a shared machine.
const BUDGET: Duration = Duration::from_secs(60);

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

#[test]
fn one_hundred_fifty_thousand_raised_counts_in_one_file_scan_in_time() {
    let _room = crate::common::enter(crate::common::Room::Busy);
    let n = 150_000;
    let dir = repo(&"retries=2\n".repeat(n), &"retries=3\n".repeat(n));
    assert!(std::fs::metadata(dir.path().join("big.py")).unwrap().len() >= 1_500_000);
    let (code, findings, elapsed) = scan(dir.path());
    assert_eq!(code, Some(1));
    assert_eq!(findings.len(), n, "one finding per raised line");
    assert!(findings.iter().all(|f| f["kind"] == "retry-count-raised"));
    assert_eq!(findings[n - 1]["line"], n);
    assert!(elapsed < BUDGET, "took {elapsed:?}");
}

#[test]
fn raised_counts_between_unchanged_lines_scan_in_time() {
    let _room = crate::common::enter(crate::common::Room::Busy);
    // 75k separate changed ranges: a changed-line lookup per match that
    // scans the ranges is quadratic here.
    let n = 75_000;
    let side = |v: u32| (0..n).map(|i| format!("retries={v}\nx{i} = 1\n")).collect::<String>();
    let dir = repo(&side(2), &side(3));
    let (code, findings, elapsed) = scan(dir.path());
    assert_eq!(code, Some(1));
    assert_eq!(findings.len(), n);
    assert_eq!(findings[1]["line"], 3, "findings sit on the raised lines only");
    assert!(elapsed < BUDGET, "took {elapsed:?}");
}

#[test]
fn thirty_thousand_removed_jitter_settings_scan_in_time() {
    let _room = crate::common::enter(crate::common::Room::Busy);
    // 30k replaced lines (1.6 MB, under the file size limit), each losing its jittered wait: the
    // `removed` pairing and placement must not rescan the block per line.
    let n = 30_000;
    let base = "@retry(wait=wait_random_exponential(1))\ndef f(): pass\n".repeat(n);
    let head = "@retry(wait=wait_fixed(1))\ndef f(): pass\n".repeat(n);
    let dir = repo(&base, &head);
    let (code, findings, elapsed) = scan(dir.path());
    assert_eq!(code, Some(1));
    assert!(findings.len() >= n * 9 / 10, "{} findings", findings.len());
    assert!(findings.iter().all(|f| f["kind"] == "jitter-removed"));
    assert!(elapsed < BUDGET, "took {elapsed:?}");
}

#[test]
fn an_unchanged_large_file_with_one_edit_reports_only_that_edit() {
    let _room = crate::common::enter(crate::common::Room::Busy);
    let n = 150_000;
    let base = "retries=2\n".repeat(n);
    let head = format!("{}retries=9\n{}", "retries=2\n".repeat(n / 2), "retries=2\n".repeat(n / 2 - 1));
    let dir = repo(&base, &head);
    let (code, findings, elapsed) = scan(dir.path());
    assert_eq!(code, Some(1));
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0]["line"], n / 2 + 1);
    assert!(elapsed < BUDGET, "took {elapsed:?}");
}
