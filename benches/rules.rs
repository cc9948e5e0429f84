//! Throughput of the rule packs next to `grep -E -f` over the same text.
//!
//! Generates about 100 MB of mixed-language changed text (base and head of
//! Python, TypeScript, Go, Java and YAML files, a few percent of lines edited,
//! retry settings sprinkled in) in a temporary folder, then measures, in the
//! same run:
//!
//! - the rule packs (all bundled rules) over every file pair, on one thread,
//!   and through `analyze::scan` (rayon, all cores);
//! - `LC_ALL=C grep -E -c -f PATTERNS` over the same files, where PATTERNS is
//!   the union of the packs' patterns and context patterns rewritten as POSIX
//!   extended regexes (grep reads the files from the page cache: they were
//!   just written and are read once before timing).
//!
//! Run with `cargo bench --bench rules` (set `RULES_BENCH_MB` to change the
//! size, `RULES_BENCH_RETRY_EVERY` the density of retry settings). Nothing is asserted: the figures are printed as a ratio.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark is a test program: a failure stops it with its location"
)]

use std::io::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use retrygate::analyze::rules::RulePackAnalyzer;
use retrygate::analyze::{self, Analyzer};
use retrygate::changeset::{ChangeSet, FileChange};
use retrygate::testing::analyze::Language;
use retrygate::testing::analyze::{mask, View};

mod large_files;

/// A small deterministic generator (xorshift64*), so runs are comparable.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

struct Lang {
    ext: &'static str,
    filler: &'static [&'static str],
    retry: &'static [&'static str],
}

const LANGS: &[Lang] = &[
    Lang {
        ext: "py",
        filler: &[
            "def handler_{i}(request):",
            "    value = compute(request.args.get(\"id_{i}\"), limit={n})",
            "    # process the batch and log the outcome of step {n}",
            "    log.info(\"processed %s items in %.2f s\", count_{i}, elapsed)",
            "    return {\"status\": \"ok\", \"count\": {n}, \"page\": {i}}",
            "    for item in items[{n}:]: total += item.price * {n}",
            "",
        ],
        retry: &[
            "client_{i} = naive_client(timeout_s=2.5, retries={r}, jitter=True)",
            "RETRY_{i} = Retry(total={r}, backoff_factor=0.5, backoff_jitter=0.5)",
            "@retry(stop=stop_after_attempt({r}), wait=wait_random_exponential(max=10))",
        ],
    },
    Lang {
        ext: "ts",
        filler: &[
            "export function handler{i}(req: Request): Response {",
            "  const value = compute(req.query.id{i}, { limit: {n} });",
            "  // process the batch and log the outcome of step {n}",
            "  logger.info(`processed ${count} items in ${elapsed} ms`);",
            "  return { status: \"ok\", count: {n}, page: {i} };",
            "}",
            "",
        ],
        retry: &[
            "axiosRetry(client{i}, { retries: {r}, retryDelay: axiosRetry.exponentialDelay });",
            "const api{i} = got.extend({ retry: { limit: {r}, methods: [\"GET\"] } });",
        ],
    },
    Lang {
        ext: "go",
        filler: &[
            "func handler{i}(w http.ResponseWriter, r *http.Request) {",
            "\tvalue := compute(r.URL.Query().Get(\"id{i}\"), {n})",
            "\t// process the batch and log the outcome of step {n}",
            "\tlog.Printf(\"processed %d items in %v\", count{i}, elapsed)",
            "\treturn Result{Status: \"ok\", Count: {n}, Page: {i}}",
            "}",
            "",
        ],
        retry: &["\tc{i}.RetryMax = {r}", "\terr = retry.Do(op{i}, retry.Attempts({r}))"],
    },
    Lang {
        ext: "java",
        filler: &[
            "    public Response handler{i}(Request request) {",
            "        int value = compute(request.getParameter(\"id{i}\"), {n});",
            "        // process the batch and log the outcome of step {n}",
            "        log.info(\"processed {} items in {} ms\", count{i}, elapsed);",
            "        return new Response(\"ok\", {n}, {i});",
            "    }",
            "",
        ],
        retry: &["    @Retryable(maxAttempts = {r}, backoff = @Backoff(delay = 200, random = true))"],
    },
    Lang {
        ext: "yaml",
        filler: &[
            "  service-{i}:",
            "    image: registry.example.com/app:{n}",
            "    replicas: {n}",
            "    # resources for the worker pool number {i}",
            "    limits: { cpu: \"{n}m\", memory: \"{i}Mi\" }",
            "",
        ],
        retry: &["    retries:\n      attempts: {r}\n      perTryTimeout: 2s", "    num_retries: {r}"],
    },
];

fn fill(template: &str, i: u64, n: u64, r: u64) -> String {
    template.replace("{i}", &i.to_string()).replace("{n}", &n.to_string()).replace("{r}", &r.to_string())
}

/// One base/head pair of about `bytes` bytes per side.
fn file_pair(rng: &mut Rng, lang: &Lang, bytes: usize, retry_every: u64) -> (String, String) {
    let (mut base, mut head) = (String::with_capacity(bytes), String::with_capacity(bytes));
    let mut i = 0;
    while base.len() < bytes {
        i += 1;
        let (b, h) = if rng.below(retry_every) == 0 {
            let t = lang.retry[rng.below(lang.retry.len() as u64) as usize];
            let r = 1 + rng.below(4);
            // A third of the retry settings change in the head.
            let r2 = if rng.below(3) == 0 { r + 1 + rng.below(5) } else { r };
            (fill(t, i, 0, r), fill(t, i, 0, r2))
        } else {
            let t = lang.filler[rng.below(lang.filler.len() as u64) as usize];
            let n = rng.below(1000);
            // About 3 % of ordinary lines are edited.
            let n2 = if rng.below(33) == 0 { n + 1 } else { n };
            (fill(t, i, n, 0), fill(t, i, n2, 0))
        };
        base.push_str(&b);
        base.push('\n');
        head.push_str(&h);
        head.push('\n');
    }
    (base, head)
}

/// Rewrites a rule regex (Rust syntax) as a POSIX ERE for GNU grep. Case
/// flags are dropped (`(?i)`, `(?i:..)`, `(?-i:..)` become plain groups):
/// grep then does no more work than the rules, only matches less.
fn to_ere(p: &str) -> String {
    let p = p
        .replace("(?i)", "")
        .replace("(?:", "(")
        .replace("(?i:", "(")
        .replace("(?-i:", "(")
        .replace("[^\\]]", "[^]]");
    let mut out = String::new();
    let mut chars = p.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '(' if chars.peek() == Some(&'?') => {
                // (?P<name>  ->  (
                for d in chars.by_ref() {
                    if d == '>' {
                        break;
                    }
                }
                out.push('(');
            }
            '[' if !in_class => {
                in_class = true;
                out.push('[');
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    out.push(']');
                    chars.next();
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            '\\' => {
                let Some(e) = chars.next() else { break };
                match (in_class, e) {
                    (_, 'd') => out.push_str(if in_class { "0-9" } else { "[0-9]" }),
                    (true, 's') => out.push_str("[:space:]"),
                    (true, 'w') => out.push_str("[:alnum:]_"),
                    (true, 't') => out.push('\t'),
                    (true, other) => out.push(other),
                    (false, 'n') => out.push_str("\\s"),
                    (false, 't') => out.push_str("[[:blank:]]"),
                    (false, other) => {
                        out.push('\\');
                        out.push(other);
                    }
                }
            }
            other => out.push(other),
        }
    }
    out
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = None;
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        let v = f();
        let d = t.elapsed();
        best = Some(best.map_or(d, |b: Duration| b.min(d)));
        last = Some(v);
    }
    (best.unwrap_or_default(), last.expect("at least one run"))
}

/// CPU time in clock ticks (1/100 s) of this process and of its waited-for
/// children, from /proc/self/stat; (0, 0) where that is not available.
fn cpu_ticks() -> (u64, u64) {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return (0, 0) };
    let Some((_, rest)) = stat.rsplit_once(')') else { return (0, 0) };
    let f: Vec<u64> = rest.split_whitespace().map(|x| x.parse().unwrap_or(0)).collect();
    match f.get(11..15) {
        Some([ut, st, cut, cst]) => (ut + st, cut + cst),
        _ => (0, 0),
    }
}

/// Interleaved measurement rounds; each figure is the best round.
const ROUNDS: usize = 5;

fn mb_per_s(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64()
}

fn main() -> anyhow::Result<()> {
    let total_mb: usize = std::env::var("RULES_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
    // One line in this many is a retry setting (a third of them change). The
    // default, 100, is far denser than real code: a worst case for the rules.
    let retry_every: u64 =
        std::env::var("RULES_BENCH_RETRY_EVERY").ok().and_then(|v| v.parse().ok()).unwrap_or(100).max(1);
    let per_file = 256 * 1024;
    let pairs = (total_mb * 1_000_000).div_ceil(2 * per_file);
    let dir = tempfile::tempdir()?;
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let mut files = Vec::with_capacity(pairs);
    let mut paths = Vec::new();
    let mut bytes = 0;
    for k in 0..pairs {
        let lang = &LANGS[k % LANGS.len()];
        let (base, head) = file_pair(&mut rng, lang, per_file, retry_every);
        bytes += base.len() + head.len();
        let rel = format!("src/m{k}/file{k}.{}", lang.ext);
        for (side, text) in [("base", &base), ("head", &head)] {
            let p = dir.path().join(side).join(&rel);
            std::fs::create_dir_all(p.parent().unwrap_or(Path::new(".")))?;
            std::fs::write(&p, text)?;
            paths.push(p);
        }
        files.push(FileChange::from_texts(&rel, Some(&base), Some(&head)));
    }
    println!(
        "data: {} file pairs, {:.1} MB of base+head text, 1 line in {} a retry setting, in {}",
        pairs,
        bytes as f64 / 1e6,
        retry_every,
        dir.path().display()
    );

    let t = Instant::now();
    let packs = RulePackAnalyzer::bundled()?;
    let load = t.elapsed();
    println!(
        "load: {} rules read in {:.1} ms (each language's regexes compile when its first file is scanned)",
        packs.rules().len(),
        load.as_secs_f64() * 1e3
    );

    let mut patterns: Vec<String> = Vec::new();
    for r in packs.rules() {
        patterns.extend(r.pattern_sources.iter().map(|p| to_ere(p)));
    }
    patterns.extend(packs.context_sources().iter().map(|p| to_ere(p)));
    let pat_path = dir.path().join("patterns.ere");
    let mut pf = std::fs::File::create(&pat_path)?;
    for p in &patterns {
        writeln!(pf, "{p}")?;
    }
    drop(pf);
    let check = Command::new("grep")
        .env("LC_ALL", "C")
        .arg("-E")
        .arg("-f")
        .arg(&pat_path)
        .arg("/dev/null")
        .output()?;
    if check.status.code() == Some(2) {
        anyhow::bail!("grep rejected the patterns: {}", String::from_utf8_lossy(&check.stderr));
    }
    let grep = || -> anyhow::Result<usize> {
        let out = Command::new("grep")
            .env("LC_ALL", "C")
            .args(["-E", "-c", "-h", "-f"])
            .arg(&pat_path)
            .args(&paths)
            .output()?;
        Ok(String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| l.trim().parse::<usize>().ok()).sum())
    };
    grep()?; // warm the page cache

    if std::env::var_os("RULES_BENCH_PER_PATTERN").is_some() {
        // Diagnostic: the slowest single patterns over every head text.
        let mut times: Vec<(Duration, String)> = Vec::new();
        for r in packs.rules() {
            for (re, src) in r.patterns.iter().map(|p| p.get()).zip(&r.pattern_sources) {
                let t = Instant::now();
                let n: usize = files
                    .iter()
                    .filter_map(|f| f.head.text())
                    .map(|h| re.find_iter(h.as_bytes()).count())
                    .sum();
                times.push((t.elapsed(), format!("{} {src} ({n} matches)", r.id)));
            }
        }
        times.sort();
        for (d, what) in times.iter().rev().take(8) {
            println!("  {:>7.1} ms  {what}", d.as_secs_f64() * 1e3);
        }
    }
    let cs = ChangeSet::from_files(files);
    let analyzers: [&dyn Analyzer; 1] = [&packs];
    let mask_all = || {
        cs.files
            .iter()
            .filter_map(|f| Some((Language::of_path(&f.path)?, f)))
            .map(|(l, f)| {
                [f.base.text(), f.head.text()]
                    .into_iter()
                    .flatten()
                    .map(|t| mask(t, &l.syntax(), View::Code).len())
                    .sum::<usize>()
            })
            .sum::<usize>()
    };
    // Interleaved rounds, best of each: a shared, busy machine slows all
    // contenders alike instead of whichever happened to run during a spike.
    let (mut masking, mut seq, mut par, mut g) = (Duration::MAX, Duration::MAX, Duration::MAX, Duration::MAX);
    let (mut findings, mut scan_findings, mut lines) = (0, 0, 0);
    let (mut rules_cpu, mut grep_cpu) = (0u64, 0u64);
    for _ in 0..ROUNDS {
        masking = masking.min(best_of(1, mask_all).0);
        let before = cpu_ticks();
        let (d, n) = best_of(1, || cs.files.iter().map(|f| packs.analyze(f).findings.len()).sum::<usize>());
        rules_cpu += cpu_ticks().0.saturating_sub(before.0);
        (seq, findings) = (seq.min(d), n);
        let (d, o) = best_of(1, || analyze::scan(&cs, &analyzers));
        (par, scan_findings) = (par.min(d), o.findings.len());
        let before = cpu_ticks();
        let (d, l) = best_of(1, grep);
        grep_cpu += cpu_ticks().1.saturating_sub(before.1);
        (g, lines) = (g.min(d), l?);
    }
    println!("masking alone:        {:>8.1} MB/s", mb_per_s(bytes, masking));
    println!(
        "rules, 1 thread:      {:>8.1} MB/s  ({:.2} s, {} findings)",
        mb_per_s(bytes, seq),
        seq.as_secs_f64(),
        findings
    );
    println!(
        "rules, scan (rayon):  {:>8.1} MB/s  ({:.2} s, {} findings, {} threads)",
        mb_per_s(bytes, par),
        par.as_secs_f64(),
        scan_findings,
        rayon::current_num_threads()
    );
    println!(
        "grep -E -f, LC_ALL=C: {:>8.1} MB/s  ({:.2} s, {} matching lines, {} patterns)",
        mb_per_s(bytes, g),
        g.as_secs_f64(),
        lines,
        patterns.len()
    );
    println!(
        "ratio: rules 1 thread / grep = {:.2}x, rules scan / grep = {:.2}x (wall clock, best round; above 1 = faster than grep)",
        g.as_secs_f64() / seq.as_secs_f64(),
        g.as_secs_f64() / par.as_secs_f64()
    );
    // The machine-readable row scripts/figures.py records.
    let row = serde_json::json!({
        "figure": format!("{:.0} MB, 1 line in {retry_every} a retry setting, through `scan`", bytes as f64 / 1e6),
        "value": format!("{:.1} MB/s", mb_per_s(bytes, par)),
        "baseline": format!("grep -E -f {:.1} MB/s", mb_per_s(bytes, g)),
        "ratio": format!("{:.2}", g.as_secs_f64() / par.as_secs_f64()),
        "goal": "above 1 is faster than grep",
    });
    println!("figure: {row}");
    if rules_cpu > 0 && grep_cpu > 0 {
        println!(
            "cpu time over {ROUNDS} rounds: rules 1 thread {:.2} s, grep {:.2} s: ratio {:.2}x (less sensitive to a busy machine)",
            rules_cpu as f64 / 100.0,
            grep_cpu as f64 / 100.0,
            grep_cpu as f64 / rules_cpu as f64
        );
    }
    large_edited_files(&packs);
    Ok(())
}

/// One very large edited file per shape, at `n` and `2n` settings: the time
/// ratio is about 2 when the engine's work is linear in the changed lines,
/// 4 when it is quadratic (tests/it/rules_scale.rs checks the findings).
fn large_edited_files(packs: &RulePackAnalyzer) {
    let n: usize = std::env::var("RULES_BENCH_LARGE_N").ok().and_then(|v| v.parse().ok()).unwrap_or(150_000);
    type Shape = fn(usize) -> (String, String);
    let shapes: [(&str, Shape); 4] = [
        ("every count raised", large_files::raised),
        ("raised between unchanged lines", large_files::raised_between_unchanged),
        ("jitter removed", large_files::jitter_removed),
        ("one edit in an unchanged file", large_files::one_edit),
    ];
    let analyzers: [&dyn Analyzer; 1] = [packs];
    for (name, make) in shapes {
        let time = |n: usize| {
            let (base, head) = make(n);
            let cs = ChangeSet::from_files(vec![FileChange::from_texts("big.py", Some(&base), Some(&head))]);
            best_of(3, || analyze::scan(&cs, &analyzers).findings.len())
        };
        let ((small, found), (large, found_large)) = (time(n), time(2 * n));
        println!(
            "large file, {name}: {n} settings {:.2} s ({found} findings), {} settings {:.2} s ({found_large}): ratio {:.2} (linear about 2, quadratic 4)",
            small.as_secs_f64(),
            2 * n,
            large.as_secs_f64(),
            large.as_secs_f64() / small.as_secs_f64()
        );
    }
}
