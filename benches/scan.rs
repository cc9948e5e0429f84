//! Benchmark: `retrygate scan` on a large synthetic pull request, against the
//! time to merely `syn::parse_file` the same files, measured in the same run.
//!
//! Run with `cargo bench --bench scan` (add `-- --files N --lines L` to
//! change the size, `-- --keep` to keep the repositories for profiling,
//! `-- --rounds N` to time the scan and ast-grep N times in turns and print
//! medians). It builds two repositories in a temp dir, each with
//! about 2,000 Rust files and 300,000 lines per side:
//!
//! - `every-file`: every file holds retry code (the analyzer's worst case);
//! - `typical`: 3% of the files hold retry code; the rest are ordinary code
//!   with no retry tokens, which the prefilter skips without parsing.
//!
//! File 0 gains a client-wide retry policy in the head, so the scan builds
//! the crate-wide index of write requests (every retry file also sends a
//! POST), and that cost is inside the figures. The head also adds a mesh
//! route with retries for the host every client calls, so the layer model
//! (docs/layers.md) links every client to it; its cost is inside the scan's
//! figure, and the head's model alone is printed as "layer model".
//!
//! It prints wall time and peak memory of the `retrygate scan` process, the
//! single-threaded and two-thread bare-parse times over both sides of every
//! changed file, and the throughput ratio (bare parse time / scan time;
//! above 1 means the scan is faster than bare parsing), and the wall time of
//! ast-grep (npm `@ast-grep/cli`, `ast-grep` on the PATH or `$AST_GREP`)
//! with three retry patterns over the same head files, with the ratio.
//!
//! `-- --real DIR` measures an existing repository instead: the change from
//! its `main` to its `pr` branch, against ast-grep over its work tree.
//! `benches/real-corpus.sh DIR` builds one from real crates (4,264 `.rs`
//! files of opendal, cargo, qdrant and smithy-rs, all added in one commit,
//! with one file of ours whose client retries every method, so that the
//! crate-wide index is built over the whole corpus).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark is a test program: a failure stops it with its location"
)]

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use rayon::prelude::*;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str, default: usize| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let files = flag("--files", 2000);
    let keep = args.iter().any(|a| a == "--keep");
    let lines = flag("--lines", 150);
    let rounds = flag("--rounds", 1).max(1);
    let real = args.iter().position(|a| a == "--real").and_then(|i| args.get(i + 1));
    if let Some(dir) = real {
        println!(
            "retrygate scan benchmark: the repository {dir} (main..pr), {} cores, {rounds} round(s)",
            num_cpus()
        );
        run_real(Path::new(dir), rounds);
        return;
    }
    println!(
        "retrygate scan benchmark: {files} files x ~{lines} lines per side, {} cores, {rounds} round(s)",
        num_cpus()
    );
    for (name, retry_share) in [("every-file", 1.0), ("typical", 0.03)] {
        run_case(name, files, lines, retry_share, keep, rounds);
    }
}

/// Wall times of the scan and of ast-grep, taken in turns (so that a
/// neighbour's load falls on both alike), and the scan's last output.
struct Timed {
    scan: Vec<f64>,
    astgrep: Result<Vec<f64>, String>,
    stdout: Vec<u8>,
    peak_kib: i64,
}

fn timed(repo: &Path, astgrep_dir: &str, rounds: usize) -> Timed {
    let mut t = Timed { scan: Vec::new(), astgrep: Ok(Vec::new()), stdout: Vec::new(), peak_kib: 0 };
    for _ in 0..rounds {
        let start = Instant::now();
        let (stdout, peak_kib) = run_measured(repo);
        t.scan.push(start.elapsed().as_secs_f64());
        (t.stdout, t.peak_kib) = (stdout, peak_kib.max(t.peak_kib));
        if let Ok(times) = &mut t.astgrep {
            match ast_grep(repo, astgrep_dir) {
                Ok(secs) => times.push(secs),
                Err(why) => t.astgrep = Err(why),
            }
        }
    }
    t
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The scan / ast-grep line: medians, their ratio, and each round's ratio.
fn ratio_line(t: &Timed) -> String {
    match &t.astgrep {
        Ok(ag) => {
            let rounds: Vec<String> = t.scan.iter().zip(ag).map(|(s, a)| format!("{:.2}", s / a)).collect();
            format!(
                "  ast-grep, 3 patterns      {:8.2} s   scan / ast-grep wall time: {:.2} (goal: at most 1.0, parity; per round {})\n",
                median(ag),
                median(&t.scan) / median(ag),
                rounds.join(" ")
            )
        }
        Err(why) => format!("  ast-grep: not measured ({why})\n"),
    }
}

/// An existing repository whose `pr` branch adds or changes files over
/// `main` (benches/real-corpus.sh builds one from real crates): scan and
/// ast-grep over its whole work tree.
fn run_real(repo: &Path, rounds: usize) {
    let t = timed(repo, ".", rounds);
    let report: serde_json::Value =
        serde_json::from_slice(&t.stdout).unwrap_or_else(|e| panic!("scan output is not JSON ({e})"));
    let findings = report["findings"].as_array().map_or(0, Vec::len);
    let start = Instant::now();
    let cs = retrygate::changeset::ChangeSet::from_git(repo, "main", "pr").unwrap();
    let changeset_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let r = retrygate::scan::scan_changeset(&cs).unwrap();
    let analyze_s = start.elapsed().as_secs_f64();
    let bytes: usize = cs.files.iter().filter_map(|f| f.head.text()).map(str::len).sum();
    let mut s = String::new();
    writeln!(s, "\n[real] {} changed files, {:.1} MB of head text", cs.files.len(), bytes as f64 / 1e6)
        .unwrap();
    writeln!(
        s,
        "  retrygate scan           {:8.2} s   peak RSS {:.0} MiB   {findings} findings   (median of {rounds})",
        median(&t.scan),
        t.peak_kib as f64 / 1024.0
    )
    .unwrap();
    writeln!(
        s,
        "    of which: change set from git {changeset_s:.2} s, analyzers {analyze_s:.2} s (in-process, {} findings)",
        r.findings.len()
    )
    .unwrap();
    s.push_str(&ratio_line(&t));
    s.push_str(&figure_line(
        &format!("{} files, {:.0} MB", cs.files.len(), bytes as f64 / 1e6),
        &t,
        findings,
    ));
    print!("{s}");
}

/// The machine-readable row scripts/figures.py records: the scan's median
/// against ast-grep's, measured in turns in the same run.
fn figure_line(label: &str, t: &Timed, findings: usize) -> String {
    let (baseline, ratio) = match &t.astgrep {
        Ok(ag) => (format!("ast-grep {:.2} s", median(ag)), format!("{:.2}", median(&t.scan) / median(ag))),
        Err(why) => (format!("ast-grep not measured ({why})"), String::new()),
    };
    let row = serde_json::json!({
        "figure": format!("{label}: scan median of {} rounds", t.scan.len()),
        "value": format!("{:.2} s, peak RSS {:.0} MiB, {findings} findings", median(&t.scan), t.peak_kib as f64 / 1024.0),
        "baseline": baseline,
        "ratio": ratio,
        "goal": "scan / ast-grep at most 1.0",
    });
    format!("figure: {row}\n")
}

fn num_cpus() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// A mesh route with retries for the host every generated client calls.
const MESH_ROUTE: &str = "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: { name: api }\nspec:\n  hosts: [api]\n  http:\n  - retries: { attempts: 2, retryOn: connect-failure }\n    route: [{ destination: { host: api } }]\n";

fn run_case(name: &str, files: usize, lines: usize, retry_share: f64, keep: bool, rounds: usize) {
    let dir = tempfile::tempdir().unwrap();
    if keep {
        println!("keeping {} for profiling", dir.path().display());
    }
    let repo = dir.path();
    let retry_files = ((files as f64) * retry_share).ceil() as usize;
    let (base, head) = generate(files, lines, retry_files);
    git(repo, &["init", "-q", "-b", "main"]);
    write_all(repo, &base);
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "base"]);
    git(repo, &["checkout", "-q", "-b", "pr"]);
    write_all(repo, &head);
    // The head also retries the clients' host in the mesh, so the layer
    // model does its whole work (every client that names a host is parsed
    // again and joined to the route) and its cost is in the scan's figure.
    std::fs::create_dir_all(repo.join("k8s")).unwrap();
    std::fs::write(repo.join("k8s/api-vs.yaml"), MESH_ROUTE).unwrap();
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "head"]);
    let total_lines: usize = head.iter().map(|(_, t)| t.lines().count()).sum();

    // The scan, as a user runs it (binary built in release by cargo bench),
    // in turns with ast-grep and its three retry patterns over the head files.
    let timing = timed(repo, "src", rounds);
    let scan_s = median(&timing.scan);
    let peak_kib = timing.peak_kib;
    let report: serde_json::Value =
        serde_json::from_slice(&timing.stdout).unwrap_or_else(|e| panic!("scan output is not JSON ({e})"));
    let findings = report["findings"].as_array().map_or(0, Vec::len);
    // The same scan in-process, split into its two phases.
    let t = Instant::now();
    let cs = retrygate::changeset::ChangeSet::from_git(repo, "main", "pr").unwrap();
    let changeset_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let r = retrygate::scan::scan_changeset(&cs).unwrap();
    let analyze_s = t.elapsed().as_secs_f64();
    assert_eq!(r.findings.len(), findings);

    // Bare parsing of the same files (both sides), one thread and all cores.
    let all: Vec<&str> = base.iter().chain(head.iter()).map(|(_, t)| t.as_str()).collect();
    let t = Instant::now();
    for src in &all {
        let f = syn::parse_file(src).unwrap();
        std::hint::black_box(f);
    }
    let parse1_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    all.par_iter().for_each(|src| {
        std::hint::black_box(syn::parse_file(src).unwrap());
    });
    let parse_n_s = t.elapsed().as_secs_f64();
    // The layer model of the head alone (what `retrygate layers` builds).
    let t = Instant::now();
    let layers = retrygate::analyze::layers::at_revision(repo, "pr").unwrap();
    let layers_s = t.elapsed().as_secs_f64();
    // Parse plus the analyzer's own model of each file, one thread: the
    // analysis overhead on top of parsing.
    let t = Instant::now();
    for src in &all {
        let f = syn::parse_file(src).unwrap();
        std::hint::black_box(retrygate::testing::analyze::site_model(&f, src));
    }
    let model1_s = t.elapsed().as_secs_f64();

    let mut s = String::new();
    writeln!(s, "\n[{name}] {files} changed files ({retry_files} with retry code), {total_lines} head lines")
        .unwrap();
    writeln!(
        s,
        "  retrygate scan           {scan_s:8.2} s   peak RSS {:.0} MiB   {findings} findings",
        peak_kib as f64 / 1024.0
    )
    .unwrap();
    writeln!(
        s,
        "    of which: change set from git {changeset_s:.2} s, analyzers {analyze_s:.2} s (in-process)"
    )
    .unwrap();
    writeln!(
        s,
        "  layer model of the head  {layers_s:8.2} s   ({} operations; the scan builds it for base and head)",
        layers.operations.len()
    )
    .unwrap();
    writeln!(s, "  syn::parse_file, 1 core  {parse1_s:8.2} s").unwrap();
    writeln!(s, "  syn::parse_file, {} cores {parse_n_s:8.2} s", num_cpus()).unwrap();
    writeln!(
        s,
        "  parse + site model, 1 core {model1_s:6.2} s   (analysis overhead {:.0}% of parse)",
        (model1_s / parse1_s - 1.0) * 100.0
    )
    .unwrap();
    writeln!(
        s,
        "  throughput vs bare parse: {:.2}x (1 core)  {:.2}x ({} cores)",
        parse1_s / scan_s,
        parse_n_s / scan_s,
        num_cpus()
    )
    .unwrap();
    s.push_str(&ratio_line(&timing));
    s.push_str(&figure_line(
        &format!("{name} ({files} files, {retry_files} with retry code)"),
        &timing,
        findings,
    ));
    print!("{s}");
    if keep {
        let _ = dir.keep();
    }
}

/// Runs `retrygate scan` on `repo`; returns its stdout and its own peak
/// resident memory (KiB), read with wait4 so that the git processes this
/// benchmark ran to build the repository do not count.
// The child is reaped by wait4 below, which std cannot see.
#[allow(clippy::zombie_processes)]
fn run_measured(repo: &Path) -> (Vec<u8>, i64) {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .args(["scan", "--repo"])
        .arg(repo)
        .args(["--base", "main", "--head", "pr", "--format", "json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut stdout).unwrap();
    let pid = child.id() as libc::pid_t;
    // SAFETY: wait4 reaps our own child and writes only into the structs we pass.
    let rss = unsafe {
        let mut status = 0;
        let mut ru: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::wait4(pid, &mut status, 0, &mut ru), pid);
        ru.ru_maxrss
    };
    (stdout, rss)
}

/// Three ast-grep rules a retry reviewer would write: a backon-style
/// `.retry(..)` call, a `loop` around a request, and a POST.
const AST_GREP_RULES: &str = "id: retry-call\nlanguage: Rust\nrule: {pattern: $OP.retry($POLICY)}\n---\nid: request-loop\nlanguage: Rust\nrule: {kind: for_expression, has: {stopBy: end, pattern: $C.send()}}\n---\nid: post\nlanguage: Rust\nrule: {pattern: $C.post($$$ARGS)}\n";

/// The ast-grep binary: `$AST_GREP`, else `ast-grep` on the PATH (install
/// it with `npm install -g @ast-grep/cli`).
fn ast_grep_bin() -> String {
    std::env::var("AST_GREP").unwrap_or_else(|_| "ast-grep".into())
}

/// Wall time of `ast-grep scan` with [`AST_GREP_RULES`] over the head files
/// in `dir` (relative to `repo`).
fn ast_grep(repo: &Path, dir: &str) -> Result<f64, String> {
    let bin = ast_grep_bin();
    let t = Instant::now();
    let out = Command::new(&bin)
        .args(["scan", "--inline-rules", AST_GREP_RULES, "--json=compact", dir])
        .current_dir(repo)
        .output()
        .map_err(|e| format!("{bin}: {e}; install it with `npm install -g @ast-grep/cli` or set AST_GREP"))?;
    let secs = t.elapsed().as_secs_f64();
    if !out.status.success() && out.stdout.is_empty() {
        return Err(format!("{bin} failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(secs)
}

/// Repository-relative path and text of each generated file.
type Files = Vec<(String, String)>;

fn write_all(repo: &Path, files: &[(String, String)]) {
    for (p, text) in files {
        let path = repo.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

fn git(dir: &Path, args: &[&str]) {
    let st = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"])
        .args(args)
        .status()
        .unwrap();
    assert!(st.success(), "git {args:?}");
}

/// Base and head versions of `files` files; the first `retry_files` hold
/// retry code whose head raises a count, the rest change an ordinary line.
fn generate(files: usize, lines: usize, retry_files: usize) -> (Files, Files) {
    let mut base = Vec::with_capacity(files);
    let mut head = Vec::with_capacity(files);
    for i in 0..files {
        let path = format!("src/m{}/f{i}.rs", i % 40);
        let retry = i < retry_files;
        base.push((path.clone(), file(i, lines, retry, false)));
        head.push((path, file(i, lines, retry, true)));
    }
    (base, head)
}

fn file(i: usize, lines: usize, retry: bool, head: bool) -> String {
    let mut s = String::new();
    writeln!(s, "//! Generated module {i}.\nuse std::collections::HashMap;\n").unwrap();
    if i == 0 {
        // A client-wide retry policy new in the head: the scan then builds the
        // crate-wide index of write requests, so its cost is measured too.
        let with = if head {
            "\n        .with(reqwest_retry::RetryTransientMiddleware::new_with_policy(policy))"
        } else {
            ""
        };
        writeln!(
            s,
            "fn client() -> reqwest_middleware::ClientWithMiddleware {{\n    let policy = reqwest_retry::policies::ExponentialBackoff::builder().build_with_max_retries(3);\n    reqwest_middleware::ClientBuilder::new(reqwest::Client::new()){with}\n        .build()\n}}\n"
        )
        .unwrap();
    }
    if retry {
        writeln!(
            s,
            "async fn submit_{i}(c: &Client, body: &Body) -> Result<Response, Error> {{\n    c.post(\"https://api/{i}\").json(body).send().await\n}}\n"
        )
        .unwrap();
        let n = if head { 6 } else { 2 };
        writeln!(s, "const MAX_RETRIES: usize = {n};").unwrap();
        writeln!(
            s,
            "async fn fetch_{i}(c: &reqwest::Client) -> reqwest::Result<reqwest::Response> {{\n    (|| async {{ c.get(\"https://api/{i}\").send().await }})\n        .retry(backon::ExponentialBuilder::default().with_jitter().with_max_times(MAX_RETRIES))\n        .await\n}}\n"
        )
        .unwrap();
        writeln!(
            s,
            "fn load_{i}(c: &Client) -> Result<Response, Error> {{\n    for attempt in 0..=MAX_RETRIES {{\n        match c.get(URL).send() {{\n            Ok(r) => return Ok(r),\n            Err(_) => std::thread::sleep(std::time::Duration::from_millis(rand::random::<u64>() % 100)),\n        }}\n    }}\n    Err(Error::GaveUp)\n}}\n"
        )
        .unwrap();
    }
    let mut k = 0;
    while s.lines().count() < lines {
        let v = if head && k == 0 { 42 } else { k };
        writeln!(
            s,
            "#[derive(Debug, Clone)]\npub struct Item{i}_{k} {{ id: u64, name: String, tags: Vec<String> }}\n\nimpl Item{i}_{k} {{\n    pub fn score(&self, weights: &HashMap<String, f64>) -> f64 {{\n        let mut total = {v} as f64;\n        for t in &self.tags {{\n            total += weights.get(t).copied().unwrap_or(0.5) * (self.id % 7) as f64;\n        }}\n        if total > 100.0 {{ total / 2.0 }} else {{ total }}\n    }}\n}}\n"
        )
        .unwrap();
        k += 1;
    }
    s
}
