//! A seeded mutation fuzzer for the Rust analyzer (issue 15): real `.rs`
//! files (this crate's own sources) are mutated the way hostile pull
//! requests are (towers of operators, generics, closures, chains and
//! brackets; stray quotes and comment openers; cut and duplicated slices)
//! and analysed as the head of a change against the original, under
//! `catch_unwind`, on a rayon pool whose threads have a quarter of the
//! analysis stack the binary uses. A panic fails the test; a stack overflow aborts
//! it; a case slower than [`CASE_LIMIT`] fails it. Each failure prints the
//! seed and case number that reproduce it.
//!
//! It runs for [`DEFAULT_SECS`] seconds in `cargo test` (and so in
//! `.ci/run`); `RETRYGATE_FUZZ_SECS=600` runs longer, `RETRYGATE_FUZZ_SEED=N`
//! picks another sequence.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use retrygate::analyze::rust::RustAnalyzer;
use retrygate::analyze::Analyzer;
use retrygate::changeset::FileChange;
use retrygate::testing::analyze::ANALYSIS_STACK_BYTES;

const DEFAULT_SECS: u64 = 15;
const DEFAULT_SEED: u64 = 0x5eed_0015;
/// No single case may take longer (debug build, shared machine).
const CASE_LIMIT: Duration = Duration::from_secs(20);

/// xorshift64*: a small, seedable generator (no dependency needed).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Units whose repetition deepens syn's tree without brackets, or fools a
/// scanner that guesses where strings and comments are.
const UNITS: &[(&str, &str)] = &[
    ("Vec<", ">"),
    ("|x| ", ""),
    ("!", ""),
    ("&", ""),
    ("*", ""),
    ("*const ", ""),
    ("return ", ""),
    ("a = ", ""),
    ("-", ""),
    ("(", ")"),
    ("[", "]"),
    ("{", "}"),
    ("", ".retry()"),
    ("", " + 1"),
    ("", " as u8"),
    ("", "?"),
    ("", ".await"),
    ("if a {} else ", ""),
    ("unsafe {", "}"),
    ("HashMap<u8, ", ">"),
    ("|a, b| ", ""),
    ("#[a] !", ""),
];

const NOISE: &[&str] =
    &["'\"'", "r\"\\\"", "/* \" */", "\"", "'", "/*", "*/", "//", "r#\"", "#", "\n", "{", "}", "(", ")"];

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// A char boundary at or before `at`.
fn boundary(s: &str, mut at: usize) -> usize {
    at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn mutate(src: &str, rng: &mut Rng) -> String {
    let mut s = src.to_string();
    for _ in 0..1 + rng.below(3) {
        let at = boundary(&s, rng.below(s.len() + 1));
        match rng.below(5) {
            0 | 1 => {
                // A tower: up to 200,000 repetitions of one unit around a value.
                let (open, close) = UNITS[rng.below(UNITS.len())];
                // Sizes around the depth limit, and far past it.
                let n = [10, 300, 700, 1_400, 2_000, 20_000, 200_000][rng.below(7)];
                let tower = format!(" {}x{} ", open.repeat(n), close.repeat(n));
                s.insert_str(at, &tower);
            }
            2 => {
                let noise = NOISE[rng.below(NOISE.len())];
                s.insert_str(at, noise);
            }
            3 => {
                let end = boundary(&s, at + rng.below(400));
                s.replace_range(at..end, "");
            }
            _ => {
                let end = boundary(&s, at + rng.below(2_000));
                let slice = s[at..end].to_string();
                s.insert_str(end, &slice);
            }
        }
    }
    s
}

#[test]
fn mutated_real_rust_files_never_crash_or_hang_the_analyzer() {
    let _room = crate::common::enter(crate::common::Room::Busy);
    let secs = std::env::var("RETRYGATE_FUZZ_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_SECS);
    let seed = std::env::var("RETRYGATE_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_SEED);
    let mut files = Vec::new();
    rs_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    files.sort();
    let sources: Vec<(String, String)> =
        files.iter().map(|p| (p.display().to_string(), std::fs::read_to_string(p).unwrap())).collect();
    assert!(sources.len() > 20, "the fuzzer needs real files to mutate");

    // The analyzer's parallel work runs on this pool: its threads have a
    // quarter of the stack the binary gives analysis threads.
    let pool =
        rayon::ThreadPoolBuilder::new().num_threads(2).stack_size(ANALYSIS_STACK_BYTES / 4).build().unwrap();
    let mut rng = Rng(seed | 1);
    let started = Instant::now();
    let mut cases = 0u64;
    let mut blocked = 0u64;
    while started.elapsed() < Duration::from_secs(secs) {
        cases += 1;
        let (name, original) = &sources[rng.below(sources.len())];
        let mutated = mutate(original, &mut rng);
        // Announced before running: an abort (stack overflow) leaves this as
        // the last line of the test's output.
        eprintln!("fuzz case {cases} (seed {seed}): {name}, {} bytes", mutated.len());
        let file = FileChange::from_texts("src/fuzzed.rs", Some(original), Some(&mutated));
        let case_start = Instant::now();
        let outcome = pool.install(|| catch_unwind(AssertUnwindSafe(|| RustAnalyzer::new().analyze(&file))));
        let took = case_start.elapsed();
        match outcome {
            Ok(result) => blocked += u64::from(result.notes.iter().any(|n| n.blocking)),
            Err(_) => {
                panic!("fuzz case {cases} (RETRYGATE_FUZZ_SEED={seed}) panicked on a mutation of {name}")
            }
        }
        assert!(took < CASE_LIMIT, "fuzz case {cases} (seed {seed}) took {took:?} on a mutation of {name}");
    }
    println!("{cases} mutated files analysed in {:?}; {blocked} ended in a blocking note", started.elapsed());
    assert!(cases > 0);
}
