//! The Rust analyzer's time grows linearly with the number of retry sites in
//! a file (issue 15, item 14: 40,000 new retry sites in one 1.9 MB file took
//! 6-8 s, and twenty such files never finished).
//!
//! Each shape below puts many retry sites in one file: one function per
//! site, many policies bound to the same name in one function, and many
//! timeouts and loops. The test analyses a file with N sites and one with 4N
//! and asserts that every site is found in both and neither file is refused;
//! it prints the time ratio (linear work takes about 4 times as long,
//! quadratic work 16 times) without asserting it, since a timed assertion
//! fails on a busy machine. Speed is measured by `cargo bench --bench scan`.

use std::time::{Duration, Instant};

use retrygate::analyze::rust::RustAnalyzer;
use retrygate::analyze::{self, Analyzer};
use retrygate::changeset::{ChangeSet, FileChange};

/// One function per site: a backon retry of a POST, a timeout, and a loop.
fn many_functions(n: usize) -> String {
    let mut s = String::from("use backon::{ExponentialBuilder, Retryable};\nuse std::time::Duration;\n");
    for i in 0..n {
        s.push_str(&format!(
            "async fn f{i}(c: &Client) -> Result<()> {{\n    let b = ExponentialBuilder::default().with_max_times({});\n    (|| c.post(URL).timeout(Duration::from_millis({})).send()).retry(b).await?;\n    Ok(())\n}}\n",
            3 + i % 5,
            100 + i % 7
        ));
    }
    s
}

/// One function, every policy bound to the same name in turn, each retried:
/// name lookups and in-place setters scale with the bindings of that name.
fn one_function(n: usize) -> String {
    let mut s = String::from(
        "use exponential_backoff::Backoff;\nuse std::time::Duration;\nfn all(c: &Client) {\n    let mut b = Backoff::new(3, Duration::from_millis(100), None);\n",
    );
    for i in 0..n {
        s.push_str(&format!(
            "    b.set_jitter(0.{});\n    let b = Backoff::new({}, Duration::from_millis(100), None);\n    for attempt in 0..{} {{ if c.get(U).send().is_ok() {{ break; }} sleep(b.next()); }}\n",
            i % 9,
            2 + i % 4,
            2 + i % 4
        ));
    }
    s.push_str("}\n");
    s
}

fn analyse(head: &str) -> (Duration, usize) {
    let base = "fn unrelated() {}\n";
    let cs = ChangeSet::from_files(vec![FileChange::from_texts("src/lib.rs", Some(base), Some(head))]);
    let rust = RustAnalyzer::new();
    let analyzers: [&dyn Analyzer; 1] = [&rust];
    let t = Instant::now();
    let out = analyze::scan(&cs, &analyzers);
    assert!(out.notes.iter().all(|n| !n.blocking), "the file must be analysed, not refused: {:?}", out.notes);
    (t.elapsed(), out.findings.len())
}

fn check_linear(name: &str, make: fn(usize) -> String, n: usize) {
    // Warm up (thread pool, allocator) so the small case is not charged for it.
    analyse(&make(n / 10));
    let (small, fs) = analyse(&make(n));
    let (large, fl) = analyse(&make(4 * n));
    assert!(fs > 0 && fl >= 4 * fs - 4, "{name}: findings should scale with sites ({fs} then {fl})");
    // The time ratio is printed, not asserted: a timed assertion fails on a
    // busy machine (it did, under four parallel builds). `cargo bench --bench
    // scan` measures speed against a baseline in the same run.
    let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-3);
    eprintln!("{name}: {n} sites {small:?}, {} sites {large:?} (x{ratio:.1})", 4 * n);
}

#[test]
fn many_functions_scale_linearly() {
    let _room = crate::common::enter(crate::common::Room::Busy);
    check_linear("one function per site", many_functions, 2_500);
}

#[test]
fn many_bindings_of_one_name_scale_linearly() {
    let _room = crate::common::enter(crate::common::Room::Busy);
    check_linear("one function, one name", one_function, 2_500);
}

/// `n` functions `{name}{i}`, each retrying a request to its own path,
/// with jitter or without; `retried: false` sends the same requests unretried.
fn endpoints(name: &str, n: usize, jitter: bool, retried: bool) -> String {
    let mut s = String::from("use backon::{ExponentialBuilder, Retryable};\n");
    let with = if jitter { ".with_jitter()" } else { "" };
    for i in 0..n {
        let send = format!("c.get(\"https://api.example/{name}/{i}\").send()");
        if retried {
            s.push_str(&format!(
                "async fn {name}{i}(c: &Client) -> Result<()> {{\n    (|| {send}).retry(ExponentialBuilder::default(){with}).await?;\n    Ok(())\n}}\n"
            ));
        } else {
            s.push_str(&format!(
                "async fn {name}{i}(c: &Client) -> Result<()> {{\n    {send}.await?;\n    Ok(())\n}}\n"
            ));
        }
    }
    s
}

/// A change that deletes `n` jittered retries and adds `n` unrelated ones
/// without jitter, in the same file and in another: each removed retry is
/// weighed against the new ones by what they retry, which must not cost
/// `n` squared. Every new retry is a warning, none a `jitter-removed`.
#[test]
fn removed_and_unrelated_new_retries_scale_linearly() {
    let _room = crate::common::enter(crate::common::Room::Busy);
    let run = |n: usize| {
        let files = vec![
            FileChange::from_texts(
                "src/same.rs",
                Some(&endpoints("old", n, true, true)),
                Some(&endpoints("new", n, false, true)),
            ),
            FileChange::from_texts(
                "src/gone.rs",
                Some(&endpoints("gone", n, true, true)),
                Some(&endpoints("gone", n, true, false)),
            ),
            FileChange::from_texts("src/added.rs", None, Some(&endpoints("added", n, false, true))),
        ];
        let cs = ChangeSet::from_files(files);
        let rust = RustAnalyzer::new();
        let analyzers: [&dyn Analyzer; 1] = [&rust];
        let t = Instant::now();
        let out = analyze::scan(&cs, &analyzers);
        let elapsed = t.elapsed();
        let kinds: Vec<&str> = out.findings.iter().map(|f| f.kind.id()).collect();
        assert_eq!(kinds.len(), 2 * n, "one finding per new retry");
        assert!(kinds.iter().all(|k| *k == "retry-without-jitter"), "{kinds:?}");
        elapsed
    };
    run(50);
    let n = 500;
    let small = run(n);
    let large = run(4 * n);
    let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-3);
    eprintln!("removed and new retries: {n} each {small:?}, {} each {large:?} (x{ratio:.1})", 4 * n);
}
