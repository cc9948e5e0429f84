//! Issue 15: hostile input that once crashed, hung, ate memory or passed
//! silently. Each test names the item; each ends in the exit code
//! the issue asks for (0 pass, 1 blocked, 2 could not decide) well within
//! 60 s and 1 GB. The Rust-parser items (1-4) are in `hostile_rust.rs`.

use crate::common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::Repo;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_retrygate");

fn retrygate(args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args).env_remove("GITHUB_EVENT_PATH").env_remove("GITHUB_ACTIONS").stdin(Stdio::null());
    cmd
}

/// Runs `cmd`, killing it after `limit`; panics if it had to be killed.
fn run_within(mut cmd: Command, limit: Duration) -> Output {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start retrygate");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("collect output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("collect output");
            panic!("still running after {limit:?}; stderr: {}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("not JSON ({e}): {}\nstderr: {}", String::from_utf8_lossy(&out.stdout), stderr(out))
    })
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo {}", path.display());
}

#[test]
fn item_5_absurd_timeouts_are_usage_errors_not_panics() {
    for (args, want) in [
        (vec!["replay", "--timeout", "1e20", "--", "true"], "'1e20' for '--timeout"),
        (vec!["replay", "--timeout", "1e19", "--", "true"], "more than the 86400 seconds"),
        (vec!["replay", "--timeout", "inf", "--", "true"], "not a finite number"),
        (vec!["replay", "--timeout=-1", "--", "true"], "not a duration"),
        (vec!["check", "--base", "main", "--replay-timeout", "1e20"], "'1e20' for '--replay-timeout"),
        (vec!["check", "--base", "main", "--replay-timeout", "NaN"], "not a finite number"),
    ] {
        let out = run_within(retrygate(&args), Duration::from_secs(20));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// A backon retry with `max_times` as given, in function `fetch`.
fn retry_file(max_times: &str) -> String {
    format!(
        "use backon::{{ExponentialBuilder, Retryable}};\n\
         async fn fetch(c: &reqwest::Client) -> reqwest::Result<reqwest::Response> {{\n\
             (|| async {{ c.get(\"https://api/x\").send().await }})\n\
                 .retry(ExponentialBuilder::default().with_jitter().with_max_times({max_times}))\n\
                 .await\n\
         }}\n"
    )
}

fn scan(repo: &Repo) -> (Output, Value) {
    let mut cmd = retrygate(&["scan", "--base", "main", "--head", "pr", "--format", "json", "--repo"]);
    cmd.arg(repo.path());
    let out = run_within(cmd, Duration::from_secs(60));
    let v = json(&out);
    (out, v)
}

fn findings_of<'a>(json: &'a Value, kind: &str) -> Vec<&'a Value> {
    json["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == kind).collect()
}

fn notes_for<'a>(json: &'a Value, path: &str) -> Vec<&'a Value> {
    json["notes"].as_array().unwrap().iter().filter(|n| n["path"] == path).collect()
}

fn has_blocking_note(json: &Value, path: &str, text: &str) -> bool {
    notes_for(json, path)
        .iter()
        .any(|n| n["blocking"] == true && n["message"].as_str().unwrap().contains(text))
}

#[test]
fn item_7_a_rust_file_swapped_for_a_symlink_blocks() {
    let repo = Repo::new();
    repo.write("src/client.rs", retry_file("2"));
    repo.write("docs/guide.md", "# guide\n");
    repo.commit("base");
    repo.branch("pr");
    repo.write("src/v2/client.rs", retry_file("9"));
    repo.remove("src/client.rs");
    std::os::unix::fs::symlink("v2/client.rs", repo.join("src/client.rs")).unwrap();
    repo.commit("swap in a link");
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(1), "{json}");
    let notes = notes_for(&json, "src/client.rs");
    assert!(
        notes.iter().any(|n| n["message"].as_str().unwrap().contains("symbolic link to `v2/client.rs`")),
        "{notes:?}"
    );
    assert!(has_blocking_note(&json, "src/client.rs", "could not read this file"), "{notes:?}");

    // A link outside any analyzed language is reported, not blocking.
    let repo = Repo::new();
    repo.write("src/client.rs", retry_file("2"));
    repo.write("docs/guide.md", "# guide\n");
    repo.commit("base");
    repo.branch("pr");
    repo.remove("docs/guide.md");
    std::os::unix::fs::symlink("../README.md", repo.join("docs/guide.md")).unwrap();
    repo.commit("link the guide");
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(0), "{json}");
    assert!(notes_for(&json, "docs/guide.md").iter().all(|n| n["blocking"] == false), "{json}");
}

#[test]
fn item_8_a_submodule_bump_blocks_and_names_the_range() {
    let repo = Repo::new();
    repo.write("src/lib.rs", "fn f() {}\n");
    let (old, new) = ("1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222");
    repo.git(&["update-index", "--add", "--cacheinfo", &format!("160000,{old},vendor/client")]);
    repo.git(&["add", "src/lib.rs"]);
    repo.git(&["commit", "-q", "-m", "base"]);
    repo.branch("pr");
    repo.git(&["update-index", "--cacheinfo", &format!("160000,{new},vendor/client")]);
    repo.git(&["commit", "-q", "-m", "bump"]);
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(1), "{json}");
    assert!(
        has_blocking_note(&json, "vendor/client", "submodule moved from 111111111111 to 222222222222"),
        "{json}"
    );
    assert!(has_blocking_note(
        &json,
        "vendor/client",
        "git -C vendor/client log -p 111111111111..222222222222"
    ));

    // Removing the submodule hides nothing: reported, not blocking.
    repo.git(&["rm", "-q", "--cached", "vendor/client"]);
    repo.git(&["commit", "-q", "-m", "drop it"]);
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(0), "{json}");
    assert_eq!(notes_for(&json, "vendor/client")[0]["blocking"], false);
}

#[test]
fn item_9_shifted_and_powered_counts_are_computed_and_unknown_ones_block() {
    let repo = Repo::new();
    for f in ["shift", "konst", "pow", "opaque", "untouched"] {
        repo.write(&format!("src/{f}.rs"), retry_file("2"));
    }
    repo.write("src/untouched.rs", retry_file("limit()"));
    repo.commit("base");
    repo.branch("pr");
    repo.write("src/shift.rs", retry_file("1 << 20"));
    repo.write("src/konst.rs", format!("const N: usize = 1 << 20;\n{}", retry_file("N")));
    repo.write("src/pow.rs", retry_file("10usize.pow(6)"));
    repo.write("src/opaque.rs", retry_file("limit()"));
    repo.write("src/untouched.rs", format!("// a comment\n{}", retry_file("limit()")));
    repo.commit("raise");
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(1), "{json}");
    let raised: Vec<(&str, &Value)> = findings_of(&json, "retry-count-raised")
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), &f["head"]["attempts"]))
        .collect();
    assert!(raised.contains(&("src/shift.rs", &Value::from(1_048_577))), "{raised:?}");
    assert!(raised.contains(&("src/konst.rs", &Value::from(1_048_577))), "{raised:?}");
    assert!(raised.contains(&("src/pow.rs", &Value::from(1_000_001))), "{raised:?}");
    assert!(
        has_blocking_note(
            &json,
            "src/opaque.rs",
            "line 3: the retry count given to `.with_max_times(..)` is computed"
        ),
        "{json}"
    );
    assert!(notes_for(&json, "src/untouched.rs").is_empty(), "an unchanged retry line is not news: {json}");
}

#[test]
fn item_10_replace_refs_do_not_hide_the_head() {
    let repo = Repo::new();
    repo.write("src/client.rs", retry_file("2"));
    repo.commit("base");
    let base_blob = repo.git(&["rev-parse", "HEAD:src/client.rs"]);
    repo.branch("pr");
    repo.write("src/client.rs", retry_file("8"));
    repo.commit("raise");
    let head_blob = repo.git(&["rev-parse", "HEAD:src/client.rs"]);
    repo.git(&["replace", &head_blob, &base_blob]);
    assert_eq!(
        repo.git(&["show", "pr:src/client.rs"]),
        retry_file("2").trim_end(),
        "the replace ref is active"
    );
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(1), "{json}");
    assert_eq!(findings_of(&json, "retry-count-raised")[0]["head"]["attempts"], 9, "{json}");
}

#[test]
fn item_11_rust_behind_path_attributes_and_upper_case_extensions_is_read() {
    let repo = Repo::new();
    repo.write("src/lib.rs", "mod imp;\n");
    repo.write("src/imp.rs", retry_file("2"));
    repo.write("src/client.rs", retry_file("2"));
    repo.commit("base");
    repo.branch("pr");
    repo.write("src/lib.rs", "#[path = \"client_impl.txt\"]\nmod imp;\n");
    repo.remove("src/imp.rs");
    repo.write("src/client_impl.txt", retry_file("7"));
    repo.rename("src/client.rs", "src/client.RS");
    repo.write("src/client.RS", retry_file("5"));
    repo.commit("hide the raises");
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(1), "{json}");
    let paths: Vec<&str> =
        findings_of(&json, "retry-count-raised").iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert!(paths.contains(&"src/client_impl.txt") && paths.contains(&"src/client.RS"), "{json}");

    // An include of a file the change does not show is a blocking note.
    let repo = Repo::new();
    repo.write("src/lib.rs", "mod imp;\n");
    repo.write("src/imp.rs", retry_file("2"));
    repo.write("src/old_impl.txt", retry_file("50"));
    repo.commit("base");
    repo.branch("pr");
    repo.write("src/lib.rs", "#[path = \"old_impl.txt\"]\nmod imp;\n");
    repo.commit("point elsewhere");
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(1), "{json}");
    assert!(
        has_blocking_note(&json, "src/lib.rs", "now compiles `src/old_impl.txt` as Rust source"),
        "{json}"
    );
}

/// A repository whose base has `config` as `.github/retrygate.yml`, and a
/// `pr` branch with a small change.
fn repo_with_config(config: &str) -> Repo {
    let repo = Repo::new();
    repo.write(".github/retrygate.yml", config);
    repo.write("src/lib.rs", "fn f() {}\n");
    repo.commit("base");
    repo.branch("pr");
    repo.write("src/lib.rs", "fn g() {}\n");
    repo.commit("change");
    repo
}

fn check_cmd(repo: &Repo) -> Command {
    check_as(repo, "--human")
}

fn check_as(repo: &Repo, who: &str) -> Command {
    let mut cmd = retrygate(&["check", "--base", "main", "--head", "pr", who, "--format", "json", "--repo"]);
    cmd.arg(repo.path());
    cmd
}

#[test]
fn item_15_deep_yaml_flow_nesting_is_refused_before_parsing() {
    // A base config just under its 1 MiB limit, 500,000 levels deep.
    let deep = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
    let repo = repo_with_config(&format!("mode: enforce\nagents: {}\n", deep(500_000)));
    let start = Instant::now();
    let out = run_within(check_cmd(&repo), Duration::from_secs(60));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(".github/retrygate.yml:2") && err.contains("nest deeper than 100 levels"), "{err}");
    assert!(start.elapsed() < Duration::from_secs(30), "took {:?}", start.elapsed());

    // A scenario and a rule file, 150,000 levels deep.
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("deep.yml");
    std::fs::write(&scenario, format!("responses: {}\n", deep(150_000))).unwrap();
    let out = run_within(
        retrygate(&["replay", "--scenario", scenario.to_str().unwrap(), "--", "true"]),
        Duration::from_secs(60),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("line 1: brackets nest deeper than 100 levels"), "{}", stderr(&out));

    let rules = dir.path().join("rules");
    std::fs::create_dir(&rules).unwrap();
    std::fs::write(rules.join("deep.yml"), format!("rules: {}\n", deep(150_000))).unwrap();
    let out =
        run_within(retrygate(&["rules", "list", "--dir", rules.to_str().unwrap()]), Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("deep.yml: line 1: brackets nest deeper"), "{}", stderr(&out));
}

#[test]
fn a_yaml_tag_cannot_turn_enforce_into_advisory() {
    let repo = repo_with_config("mode: !advisory\n");
    let out = run_within(check_cmd(&repo), Duration::from_secs(60));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(".github/retrygate.yml:1") && err.contains("the YAML tag `!advisory` is not accepted"),
        "{err}"
    );
    // The plain spelling is still accepted.
    let repo = repo_with_config("mode: advisory\n");
    let out = run_within(check_cmd(&repo), Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["facts"]["mode"], "advisory");
}

#[test]
fn item_16_fifos_are_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("ledger.jsonl");
    mkfifo(&fifo);
    for sub in ["verify", "show"] {
        let out = run_within(
            retrygate(&["ledger", sub, "--ledger", fifo.to_str().unwrap()]),
            Duration::from_secs(20),
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "ledger {sub}: {err}");
        assert!(
            err.contains("ledger.jsonl") && err.contains("FIFO, not a regular file"),
            "ledger {sub}: {err}"
        );
    }

    // A rule-test case file that is a FIFO.
    let rules = dir.path().join("rules");
    std::fs::create_dir_all(rules.join("tests/case/base")).unwrap();
    std::fs::create_dir_all(rules.join("tests/case/head")).unwrap();
    std::fs::write(rules.join("py.yml"), "rules: []\n").unwrap();
    std::fs::write(rules.join("tests/case/base/a.py"), "retries = 2\n").unwrap();
    mkfifo(&rules.join("tests/case/head/a.py"));
    let out = run_within(retrygate(&["rules", "test", rules.to_str().unwrap()]), Duration::from_secs(20));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("head/a.py: is a FIFO"), "{err}");
}

#[test]
fn item_20_devices_are_refused_wherever_a_file_comes_from_outside() {
    let dev = "/dev/zero";
    let refused = "/dev/zero: is a character device, not a regular file";
    // A replay scenario.
    let out = run_within(retrygate(&["replay", "--scenario", dev, "--", "true"]), Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(refused), "{}", stderr(&out));

    // The event payload, and the verdict file the publish job reads.
    let ws = tempfile::tempdir().unwrap();
    let fixture =
        format!("{}/tests/fixtures/github/workflow_run__completed.payload.json", env!("CARGO_MANIFEST_DIR"));
    for (event, args) in [
        (dev, vec!["github"]),
        (fixture.as_str(), vec!["github", "--mode", "publish", "--verdict-file", dev]),
    ] {
        let mut cmd = retrygate(&args);
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("GITHUB_EVENT_NAME", if event == dev { "pull_request" } else { "workflow_run" })
            .env("GITHUB_EVENT_PATH", event)
            .env("GITHUB_REPOSITORY", "octo/shop")
            .env("GITHUB_API_URL", "http://127.0.0.1:9")
            .env("GITHUB_TOKEN", "t")
            .env("GITHUB_WORKSPACE", ws.path());
        let out = run_within(cmd, Duration::from_secs(20));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(refused), "{args:?}: {}", stderr(&out));
    }

    // A replay report handed to `check`: rejected evidence, never a pass.
    let repo = Repo::new();
    repo.write("src/client.rs", retry_file("2"));
    repo.commit("base");
    repo.branch("pr");
    repo.write("src/client.rs", retry_file("1"));
    repo.commit("fewer retries: the replay is still required");
    let mut cmd = check_as(&repo, "--agent");
    cmd.args(["--replay-report", dev]);
    let out = run_within(cmd, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(json(&out).to_string().contains(refused), "{}", json(&out));

    // A rule-test case.
    let rules = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(rules.path().join("tests/case/base")).unwrap();
    std::fs::create_dir_all(rules.path().join("tests/case/head")).unwrap();
    std::fs::write(rules.path().join("py.yml"), "rules: []\n").unwrap();
    std::fs::write(rules.path().join("tests/case/base/a.py"), "retries = 2\n").unwrap();
    std::os::unix::fs::symlink(dev, rules.path().join("tests/case/head/a.py")).unwrap();
    let out =
        run_within(retrygate(&["rules", "test", rules.path().to_str().unwrap()]), Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is a character device"), "{}", stderr(&out));
}
