//! `retrygate ledger verify/append/show` end to end: the shared fixtures,
//! byte compatibility with Python's `json.dumps`, hash chains, coverage
//! against real git repositories, hostile inputs, and concurrent appends.

use crate::common;
use common::{git, write};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use retrygate::ledger::lines::ReadLimits;
use retrygate::ledger::pyjson;
use retrygate::ledger::verify::{verify, verify_file, verify_reader, ChangeTarget, LedgerReport};
use sha2::{Digest, Sha256};

const BIN: &str = env!("CARGO_BIN_EXE_retrygate");

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ledger").join(name)
}

fn retrygate(args: &[&str], dir: &Path) -> Output {
    Command::new(BIN).args(args).current_dir(dir).output().unwrap()
}

/// A repository with a `main` branch and a `pr` branch that changes the
/// three files the fixture ledgers edit.
fn fixture_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(d, "clients/checkout.py", "TIMEOUT = 10\n");
    write(d, "clients/retry_policy.py", "RETRIES = 2\n");
    write(d, "README.md", "shop\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "base"]);
    git(d, &["checkout", "-qb", "pr"]);
    write(d, "clients/checkout.py", "TIMEOUT = 1\n");
    write(d, "clients/retry_policy.py", "RETRIES = 6\n");
    write(d, "docs/notes/résumé.md", "notes\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "agent change"]);
    dir
}

fn problems(r: &LedgerReport) -> Vec<(Option<u64>, String)> {
    r.problems.iter().map(|p| (p.line, p.message.clone())).collect()
}

// --- The four shared fixtures, with the outcomes their README states. ---

#[test]
fn fixture_valid_has_seven_records_and_every_digest_matches() {
    let r = verify(&fixture("seed-format-valid.jsonl"), None).unwrap();
    assert!(r.valid, "{:?}", problems(&r));
    assert_eq!((r.records, r.lines, r.format.as_deref()), (7, 7, Some("v1")));
}

#[test]
fn fixture_tampered_payload_fails_on_line_3_only() {
    let r = verify(&fixture("seed-format-tampered-payload.jsonl"), None).unwrap();
    assert!(!r.valid);
    let p = problems(&r);
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(p[0].0, Some(3));
    assert!(p[0].1.contains("digest 1dd7502ccd19576a does not match the payload"), "{p:?}");
    assert!(r.problems[0].fix.contains("never by hand"));
}

#[test]
fn fixture_line_removed_passes_alone_but_coverage_names_the_missing_file() {
    let alone = verify(&fixture("seed-format-line-removed.jsonl"), None).unwrap();
    assert!(alone.valid, "every remaining digest matches: {:?}", problems(&alone));

    let repo = fixture_repo();
    let target = ChangeTarget::from_git(repo.path(), "main", "pr").unwrap();
    let r = verify(&fixture("seed-format-line-removed.jsonl"), Some(&target)).unwrap();
    assert!(!r.valid);
    let c = r.coverage.as_ref().unwrap();
    assert_eq!(c.unexplained, vec!["clients/retry_policy.py"]);
    assert!(c.not_landed.is_empty(), "{c:?}");
    assert_eq!((c.changed, c.explained), (3, 2));
    assert!(problems(&r)[0]
        .1
        .contains("clients/retry_policy.py changed in the pull request, but no ledger record explains it"));

    // The complete ledger explains the same change.
    let full = verify(&fixture("seed-format-valid.jsonl"), Some(&target)).unwrap();
    assert!(full.valid, "{:?}", problems(&full));
    assert_eq!(full.coverage.unwrap().explained, 3);
}

#[test]
fn fixture_malformed_names_line_2() {
    let r = verify(&fixture("seed-format-malformed.jsonl"), None).unwrap();
    assert!(!r.valid);
    let p = problems(&r);
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(p[0].0, Some(2));
    assert!(p[0].1.contains("not valid JSON"), "{p:?}");
    assert_eq!(r.records, 2, "lines 1 and 3 are still read");
}

#[test]
fn cli_exit_codes_and_formats_follow_the_fixtures() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ok = retrygate(
        &["ledger", "verify", "--ledger", fixture("seed-format-valid.jsonl").to_str().unwrap()],
        here,
    );
    assert_eq!(ok.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&ok.stdout).contains(": valid (7 records, v1)"));

    // Relative paths, so the snapshots read the same on every machine.
    let bad = "tests/fixtures/ledger/seed-format-malformed.jsonl";
    let out = retrygate(&["ledger", "verify", "--ledger", bad], here);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("ledger_verify_malformed_text", String::from_utf8_lossy(&out.stdout));

    let json = retrygate(
        &[
            "ledger",
            "verify",
            "--format",
            "json",
            "--ledger",
            "tests/fixtures/ledger/seed-format-tampered-payload.jsonl",
        ],
        here,
    );
    assert_eq!(json.status.code(), Some(1));
    insta::assert_snapshot!("ledger_verify_tampered_json", String::from_utf8_lossy(&json.stdout));
}

#[test]
fn cli_coverage_against_a_real_repository() {
    let repo = fixture_repo();
    let out = retrygate(
        &[
            "ledger",
            "verify",
            "--format",
            "json",
            "--ledger",
            fixture("seed-format-line-removed.jsonl").to_str().unwrap(),
            "--repo",
            ".",
            "--base",
            "main",
            "--head",
            "pr",
        ],
        repo.path(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The head commit's id changes with the clock the fixture repository
    // was committed at, and the ledger's path with the machine.
    assert_eq!(v["coverage"]["head"].as_str().map(str::len), Some(40));
    v["coverage"]["head"] = "[head sha]".into();
    v["ledger"] = "[ledger]".into();
    insta::assert_snapshot!("ledger_verify_coverage_json", serde_json::to_string_pretty(&v).unwrap());
}

#[test]
fn cli_could_not_decide_is_exit_2_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    // The ledger path is a directory.
    let out = retrygate(&["ledger", "verify", "--ledger", "."], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot read the ledger"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // An unknown base revision.
    let repo = fixture_repo();
    let l = fixture("seed-format-valid.jsonl");
    let out =
        retrygate(&["ledger", "verify", "--ledger", l.to_str().unwrap(), "--base", "nope"], repo.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown revision 'nope'"));
    // --head without --base is a usage error.
    let out = retrygate(&["ledger", "verify", "--ledger", l.to_str().unwrap(), "--head", "pr"], repo.path());
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_missing_ledger_is_absent_and_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let r = verify(&dir.path().join("none.jsonl"), None).unwrap();
    assert!(!r.present && !r.valid);
    assert!(r.problems[0].message.contains("no ledger at"));
    let out = retrygate(&["ledger", "verify", "--ledger", "none.jsonl"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("absent"));
}

// --- Byte compatibility with Python itself. ---

/// A small deterministic generator, so failures reproduce.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 11
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn gen_string(g: &mut Lcg) -> String {
    const POOL: &[char] = &[
        'a', 'Z', '0', ' ', '"', '\\', '/', '\n', '\t', '\u{1}', '\u{1f}', '\u{7f}', 'é', 'ß', '€', '中',
        '\u{ffff}', '😀', '𝄞', '\u{2028}', '~',
    ];
    let len = g.below(8);
    (0..len).map(|_| POOL[g.below(POOL.len() as u64) as usize]).collect()
}

fn gen_json(g: &mut Lcg, depth: u32) -> String {
    let pick = if depth > 3 { g.below(6) } else { g.below(9) };
    match pick {
        0 => "null".into(),
        1 => {
            if g.below(2) == 0 {
                "true".into()
            } else {
                "false".into()
            }
        }
        2 => {
            // Integers, including ones beyond 64 bits.
            let mut s = if g.below(3) == 0 { "-".to_string() } else { String::new() };
            s.push_str(&(g.next() % 1_000_000_007).to_string());
            if g.below(4) == 0 {
                s.push_str(&g.next().to_string());
            }
            s
        }
        3 | 4 => {
            // Floats from random bits (all magnitudes), and "nice" decimals.
            let f = if g.below(2) == 0 {
                f64::from_bits(g.next() << 11 | g.next() & 0x7ff)
            } else {
                (g.below(2_000_000) as f64 - 1_000_000.0)
                    / [1.0, 8.0, 1000.0, 1e-20, 1e20][g.below(5) as usize]
            };
            if f.is_finite() {
                format!("{f:e}")
            } else {
                "1.5".into()
            }
        }
        5 => serde_json::to_string(&gen_string(g)).unwrap(),
        6 | 7 => {
            let n = g.below(4);
            let members: Vec<String> = (0..n)
                .map(|_| {
                    format!("{}: {}", serde_json::to_string(&gen_string(g)).unwrap(), gen_json(g, depth + 1))
                })
                .collect();
            format!("{{{}}}", members.join(","))
        }
        _ => {
            let n = g.below(4);
            let items: Vec<String> = (0..n).map(|_| gen_json(g, depth + 1)).collect();
            format!("[{}]", items.join(", "))
        }
    }
}

#[test]
fn digests_match_python_json_dumps_byte_for_byte() {
    let mut g = Lcg(0x5eed);
    let mut docs: Vec<String> = (0..3000).map(|_| format!("{{\"p\": {}}}", gen_json(&mut g, 0))).collect();
    // Hand-picked edge cases on top of the generated ones.
    docs.extend(
        [
            r#"{"b": 1, "a": 2, "b": 3}"#,
            r#"{"x": [1e16, 1e15, 0.0001, 0.00001, -0.0, 1E400, 5e-324, 123456789012345678901234567890]}"#,
            r#"{"path": "docs/notes/r\u00e9sum\u00e9.md", "bytes": 77}"#,
            r#"{"s": "\ud834\udd1e \u2028 \u0000"}"#,
            r#"{"é": 1, "e": 2, "z": 3, "😀": 4, "\uffff": 5}"#,
            r#"{"title": "reduce checkout latency", "branch": "agent/checkout-timeouts", "draft": false, "reviewers": null}"#,
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let input = docs.join("\n") + "\n";
    let script = r#"
import hashlib, json, sys
# Split on "\n" only: str.splitlines() would also split at U+2028.
for line in sys.stdin.buffer.read().split(b"\n")[:-1]:
    s = json.dumps(json.loads(line.decode("utf-8")), sort_keys=True)
    print(hashlib.sha256(s.encode()).hexdigest()[:16], s)
"#;
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 is needed for this test");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success());
    let python = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = python.lines().collect();
    assert_eq!(lines.len(), docs.len());
    for (doc, py) in docs.iter().zip(lines) {
        let v = pyjson::parse(doc).unwrap_or_else(|e| panic!("{doc}: {e}"));
        let ours = format!("{} {}", pyjson::digest(&v), pyjson::dumps_sorted(&v));
        assert_eq!(ours, py, "input: {doc}");
    }
}

// --- v2 chains. ---

fn append(dir: &Path, args: &[&str]) {
    append_to(dir, Path::new("l.jsonl"), args)
}

fn append_to(dir: &Path, ledger: &Path, args: &[&str]) {
    let mut all = vec!["ledger", "append", "--ledger", ledger.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = retrygate(&all, dir);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

fn v2_ledger(dir: &Path) -> PathBuf {
    for i in 0..5 {
        append(dir, &["--tool", "Bash", "--payload", &format!("{{\"command\": \"step {i}\"}}")]);
    }
    dir.join("l.jsonl")
}

fn rewrite_lines(path: &Path, f: impl FnOnce(&mut Vec<String>)) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    f(&mut lines);
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn the_chain_catches_a_removed_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = v2_ledger(dir.path());
    assert!(verify(&path, None).unwrap().valid);
    rewrite_lines(&path, |l| {
        l.remove(2);
    });
    let r = verify(&path, None).unwrap();
    let p = problems(&r);
    assert_eq!(p[0].0, Some(3), "{p:?}");
    assert!(p[0].1.contains("seq is 4 where 3 was expected"), "{p:?}");
    assert!(p[1].1.contains("does not match line 2's SHA-256"), "{p:?}");
    assert_eq!(p.len(), 2, "one removal, one place: {p:?}");
    assert!(r.problems[0].fix.contains("hash chain"));
}

#[test]
fn the_chain_catches_reordering_and_an_edited_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = v2_ledger(dir.path());
    rewrite_lines(&path, |l| l.swap(1, 2));
    let p = problems(&verify(&path, None).unwrap());
    assert!(p.iter().any(|(l, m)| *l == Some(2) && m.contains("seq is 3 where 2 was expected")), "{p:?}");

    let dir2 = tempfile::tempdir().unwrap();
    let path = v2_ledger(dir2.path());
    rewrite_lines(&path, |l| l[1] = l[1].replace("step 1", "step X"));
    let p = problems(&verify(&path, None).unwrap());
    assert_eq!(p.iter().map(|(l, _)| *l).collect::<Vec<_>>(), [Some(2), Some(3)], "{p:?}");
    assert!(p[0].1.contains("does not match the payload"));
    assert!(p[1].1.contains("prev"));

    let dir3 = tempfile::tempdir().unwrap();
    let path = v2_ledger(dir3.path());
    rewrite_lines(&path, |l| {
        l.remove(0);
    });
    let p = problems(&verify(&path, None).unwrap());
    assert!(p.iter().any(|(l, m)| *l == Some(1) && m.contains("lines before it were removed")), "{p:?}");
}

#[test]
fn v2_coverage_compares_the_last_record_with_the_head_content() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(d, "app/pay.py", "A = 1\n");
    write(d, "old.txt", "bye\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "base"]);
    git(d, &["checkout", "-qb", "pr"]);
    // The agent edits two files and deletes one, each recorded; the ledger
    // is committed with the change, as the hooks leave it.
    let ledger = d.join(".tool_ledger.jsonl");
    write(d, "app/pay.py", "A = 2\n");
    append_to(d, &ledger, &["--tool", "Edit", "--path", "app/pay.py"]);
    write(d, "src/new.rs", "fn main() {}\n");
    append_to(d, &ledger, &["--tool", "Write", "--path", "src/new.rs"]);
    // Binary content is hashed from git's raw bytes, not decoded text.
    std::fs::create_dir_all(d.join("assets")).unwrap();
    std::fs::write(d.join("assets/logo.bin"), [0u8, 159, 146, 150, 0, 255]).unwrap();
    append_to(d, &ledger, &["--tool", "Write", "--path", "assets/logo.bin"]);
    std::fs::remove_file(d.join("old.txt")).unwrap();
    append_to(d, &ledger, &["--tool", "Delete", "--path", "old.txt"]);
    // An edit that was later reverted: recorded, not in the change.
    write(d, "README.md", "tmp\n");
    append_to(d, &ledger, &["--tool", "Write", "--path", "README.md"]);
    std::fs::remove_file(d.join("README.md")).unwrap();
    let ledger_out = ledger.clone();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "agent"]);
    let mut target = ChangeTarget::from_git(d, "main", "pr").unwrap();
    assert_eq!(target.files.len(), 5, "the ledger itself is part of the change");
    target.exclude(".tool_ledger.jsonl");
    let r = verify(&ledger_out, Some(&target)).unwrap();
    assert!(r.valid, "{:?}", problems(&r));
    let c = r.coverage.clone().unwrap();
    assert!(c.unexplained.is_empty(), "{c:?}");
    assert_eq!((c.changed, c.explained), (4, 4));
    assert_eq!(c.not_landed, vec!["README.md"]);

    // A later edit the ledger does not know about.
    write(d, "app/pay.py", "A = 3  # sneaky\n");
    git(d, &["commit", "-qam", "unrecorded"]);
    // Through the command line, which leaves the ledger out by itself.
    let out = retrygate(
        &["ledger", "verify", "--format", "json", "--ledger", ".tool_ledger.jsonl", "--base", "main"],
        d,
    );
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["coverage"]["unexplained"], serde_json::json!(["app/pay.py"]));
    let mut target = ChangeTarget::from_git(d, "main", "pr").unwrap();
    target.exclude(".tool_ledger.jsonl");
    let r = verify(&ledger_out, Some(&target)).unwrap();
    let c = r.coverage.as_ref().unwrap();
    assert_eq!(c.unexplained, vec!["app/pay.py"]);
    let p = problems(&r);
    let hit = p.iter().find(|(_, m)| m.starts_with("app/pay.py: the last record")).expect("hash problem");
    assert_eq!(hit.0, Some(1), "names the line of the last record");
    assert!(hit.1.contains("the file changed after its last recorded edit"), "{p:?}");
}

#[test]
fn append_refuses_paths_outside_the_repository() {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q"]);
    let out = retrygate(
        &["ledger", "append", "--ledger", "l.jsonl", "--tool", "Edit", "--path", "/etc/hostname"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("outside the repository"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = retrygate(
        &["ledger", "append", "--ledger", "l.jsonl", "--tool", "x", "--payload", "{oops"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--payload is not JSON"));
}

#[test]
fn concurrent_appends_from_many_processes_never_interleave_or_fork() {
    let dir = tempfile::tempdir().unwrap();
    const WRITERS: usize = 6;
    const EACH: usize = 15;
    let handles: Vec<_> = (0..WRITERS)
        .map(|w| {
            let d = dir.path().to_path_buf();
            std::thread::spawn(move || {
                for i in 0..EACH {
                    // A payload long enough that a torn write would show.
                    let payload = format!("{{\"command\": \"writer {w} call {i} {}\"}}", "x".repeat(2000));
                    let out = Command::new(BIN)
                        .args([
                            "ledger",
                            "append",
                            "--ledger",
                            "l.jsonl",
                            "--tool",
                            "Bash",
                            "--payload",
                            &payload,
                        ])
                        .current_dir(&d)
                        .output()
                        .unwrap();
                    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let path = dir.path().join("l.jsonl");
    let r = verify(&path, None).unwrap();
    assert!(r.valid, "{:?}", problems(&r));
    assert_eq!(r.records, (WRITERS * EACH) as u64);
    assert_eq!(r.format.as_deref(), Some("v2"));
    // Every writer's every call is there exactly once.
    let text = std::fs::read_to_string(&path).unwrap();
    for w in 0..WRITERS {
        for i in 0..EACH {
            assert_eq!(text.matches(&format!("writer {w} call {i} ")).count(), 1);
        }
    }
}

// --- Hostile inputs: bounded memory, clear errors. ---

#[test]
fn a_ten_megabyte_line_is_reported_and_the_rest_still_verified() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    let mut f = std::fs::File::create(&path).unwrap();
    let good = std::fs::read_to_string(fixture("seed-format-valid.jsonl")).unwrap();
    let first = good.lines().next().unwrap();
    f.write_all(b"{\"ts\": 1, \"tool\": \"x\", \"payload\": {\"blob\": \"").unwrap();
    let chunk = vec![b'a'; 1 << 20];
    for _ in 0..10 {
        f.write_all(&chunk).unwrap();
    }
    f.write_all(b"\"}, \"digest\": \"0000000000000000\"}\n").unwrap();
    writeln!(f, "{first}").unwrap();
    drop(f);
    let r = verify(&path, None).unwrap();
    let p = problems(&r);
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(p[0].0, Some(1));
    assert!(p[0].1.contains("over the 1024 KiB limit for one record"), "{p:?}");
    assert_eq!((r.lines, r.records), (2, 1));
}

#[test]
fn a_one_gigabyte_ledger_stops_at_the_limit_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.jsonl");
    // Sparse: 1 GiB of NUL bytes on disk in no time, no newline anywhere.
    let f = std::fs::File::create(&path).unwrap();
    f.set_len(1 << 30).unwrap();
    drop(f);
    let r = verify(&path, None).unwrap();
    assert!(!r.valid);
    let p = problems(&r);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].1.contains("larger than the 64 MiB limit; verification stopped after 67108864 bytes"),
        "{p:?}"
    );
}

#[test]
fn binary_garbage_gives_line_numbered_problems_not_a_crash() {
    let mut g = Lcg(42);
    let garbage: Vec<u8> = (0..200_000).map(|_| g.next() as u8).collect();
    let r = verify_reader("garbage", &garbage[..], None, ReadLimits::default()).unwrap();
    assert!(!r.valid);
    assert_eq!(r.records, 0);
    assert!(r.problems.iter().all(|p| p.line.is_some() && !p.fix.is_empty()));
    assert!(r.problems.len() + r.problems_omitted as usize >= r.lines as usize - 1);
}

#[test]
fn a_generated_session_ledger_verifies_in_full_and_respects_smaller_limits() {
    // 20,000 v2 records (about 4 MB), chained by an independent writer here.
    let mut text = String::new();
    let mut prev: Option<String> = None;
    for seq in 1..=20_000u64 {
        let payload =
            format!("{{\"path\": \"src/mod{}.rs\", \"tool_use_id\": \"toolu_{seq:08}\"}}", seq % 97);
        let p = pyjson::parse(&payload).unwrap();
        let line = format!(
            "{{\"v\": 2, \"seq\": {seq}, \"ts\": {}, \"tool\": \"Edit\", \"payload\": {}, \"digest\": \"{}\", \"prev\": {}, \"sha256\": \"{}\"}}",
            pyjson::float_repr(1.7e9 + seq as f64 / 8.0),
            pyjson::dumps(&p),
            pyjson::digest(&p),
            prev.as_ref().map_or("null".to_string(), |h| format!("\"{h}\"")),
            hex::encode(Sha256::digest(seq.to_string()))
        );
        prev = Some(hex::encode(Sha256::digest(line.as_bytes())));
        text.push_str(&line);
        text.push('\n');
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    std::fs::write(&path, &text).unwrap();
    let r = verify(&path, None).unwrap();
    assert!(r.valid, "{:?}", problems(&r));
    assert_eq!(r.records, 20_000);
    let small = ReadLimits { max_line_bytes: 1 << 10, max_ledger_bytes: 1 << 20 };
    let r = verify_file(&path, None, small).unwrap();
    assert!(!r.valid);
    assert!(r.problems[0].message.contains("larger than the 1 MiB limit"), "{:?}", problems(&r));
    assert!(r.records > 1000 && r.records < 20_000);
}

#[test]
fn show_prints_the_timeline_in_text_and_json() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let l = fixture("seed-format-valid.jsonl");
    let out = retrygate(&["ledger", "show", "--ledger", l.to_str().unwrap()], here);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 7);
    assert!(
        lines[2].contains("2025-11-29T09:53:24.625Z  edit_file  1dd7502ccd19576a  clients/checkout.py"),
        "{text}"
    );
    assert!(lines[4].contains("pytest -q tests/unit"), "{text}");
    assert!(lines[5].contains("docs/notes/résumé.md"), "{text}");
    let out = retrygate(&["ledger", "show", "--format", "json", "--ledger", l.to_str().unwrap()], here);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 7);
    assert_eq!(v[6]["tool"], "open_pr");
    assert_eq!(v[6]["time"], "2025-11-29T09:53:30.625Z");

    let bad = fixture("seed-format-malformed.jsonl");
    let out = retrygate(&["ledger", "show", "--ledger", bad.to_str().unwrap()], here);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("    2  (unreadable: not valid JSON"));
    let out = retrygate(&["ledger", "show", "--ledger", "/nonexistent/ledger.jsonl"], here);
    assert_eq!(out.status.code(), Some(2));
}
