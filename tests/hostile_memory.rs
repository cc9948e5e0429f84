//! Issue 15, item 18: `ledger show` streams. Alone in its own test binary so
//! the children's peak resident size (`getrusage(RUSAGE_CHILDREN)`) measures
//! only the commands this test runs; Linux only.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers: a failure is a panic with its location"
)]
#![cfg(target_os = "linux")]

use std::io::Write;
use std::process::{Command, Stdio};

fn children_peak_rss_kib() -> i64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) }, 0);
    usage.ru_maxrss
}

#[test]
fn item_18_ledger_show_of_a_1_mb_ledger_stays_small_in_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.jsonl");
    // 1 MB of one-byte lines: half a million entries, each an unreadable
    // line. Holding them all took about 280 MB (text) and 520 MB (json); the
    // issue's 5 MB took 1.4 and 2.6 GB, and a debug build needs a minute for it.
    let mut f = std::io::BufWriter::new(std::fs::File::create(&ledger).unwrap());
    let mut written = 0;
    let record = b"{\"ts\": 1764410004.625, \"tool\": \"edit\", \"payload\": {\"path\": \"a.py\"}, \"digest\": \"0000000000000000\"}\n";
    f.write_all(record).unwrap();
    while written < 1_000_000 {
        f.write_all(b"x\n").unwrap();
        written += 2;
    }
    f.into_inner().unwrap().sync_all().unwrap();

    for format in ["text", "json"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_retrygate"))
            .args(["ledger", "show", "--format", format, "--ledger"])
            .arg(&ledger)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read what it prints, keeping only the first and the last lines.
        let mut stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            let (mut head, mut total, mut tail) = (Vec::new(), 0usize, Vec::new());
            loop {
                let n = std::io::Read::read(&mut stdout, &mut buf).unwrap();
                if n == 0 {
                    break;
                }
                if head.len() < 4096 {
                    head.extend_from_slice(&buf[..n.min(4096)]);
                }
                tail = buf[..n].to_vec();
                total += n;
            }
            (String::from_utf8_lossy(&head).into_owned(), total, String::from_utf8_lossy(&tail).into_owned())
        });
        let out = child.wait_with_output().unwrap();
        let (head, total, tail) = reader.join().unwrap();
        assert_eq!(out.status.code(), Some(1), "unreadable lines make show exit 1");
        assert!(String::from_utf8_lossy(&out.stderr).contains("500000 lines are not readable"));
        match format {
            "text" => {
                assert!(head.contains("edit  0000000000000000  a.py"), "{head}");
                assert!(tail.ends_with("500001  (unreadable: not valid JSON: expected a JSON value (column 1); run `retrygate ledger verify`)\n"), "{tail}");
            }
            _ => {
                assert!(head.starts_with("[\n  {\n    \"line\": 1,"), "{head}");
                assert!(tail.ends_with("  }\n]\n"), "{tail}");
            }
        }
        println!("{format}: {total} bytes printed");
    }
    let peak_mib = children_peak_rss_kib() / 1024;
    println!("peak resident size of `ledger show`: {peak_mib} MiB");
    assert!(peak_mib < 100, "ledger show peaked at {peak_mib} MiB");
}
