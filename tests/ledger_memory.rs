//! Verification stays within bounded memory on hostile ledgers. Alone in its
//! own test binary so the process's peak resident size (`VmHWM`) measures
//! only this work; Linux only, where `/proc` reports it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers: a failure is a panic with its location"
)]
#![cfg(target_os = "linux")]

use std::io::Write;

use retrygate::ledger::verify::verify;

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_gigabyte_file_and_a_ten_megabyte_line_stay_within_a_few_megabytes() {
    let dir = tempfile::tempdir().unwrap();
    // 1 GiB without a newline (sparse on disk).
    let huge = dir.path().join("huge.jsonl");
    std::fs::File::create(&huge).unwrap().set_len(1 << 30).unwrap();
    // A 10 MiB line, written in 64 KiB pieces so the test itself stays small.
    let long = dir.path().join("long.jsonl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&long).unwrap());
    f.write_all(b"{\"ts\": 1, \"tool\": \"x\", \"payload\": \"").unwrap();
    let piece = [b'a'; 1 << 16];
    for _ in 0..160 {
        f.write_all(&piece).unwrap();
    }
    f.write_all(b"\", \"digest\": \"0000000000000000\"}\n").unwrap();
    f.into_inner().unwrap().sync_all().unwrap();

    let before = peak_rss_kib();
    let a = verify(&huge, None).unwrap();
    let b = verify(&long, None).unwrap();
    let grew_kib = peak_rss_kib().saturating_sub(before);
    assert!(!a.valid && !b.valid);
    assert!(a.problems[0].message.contains("larger than the 64 MiB limit"));
    assert!(b.problems[0].message.contains("over the 1024 KiB limit"));
    println!("peak resident size grew by {grew_kib} KiB while verifying 1 GiB and a 10 MiB line");
    // The bound is the 1 MiB line cap plus buffers; a reader that held a
    // whole line or file would grow by 10 MiB or far more.
    assert!(grew_kib < 8 * 1024, "peak resident size grew by {grew_kib} KiB");
}
