//! Issue 15, items 1-4: Rust files built to overflow the parser, fool the
//! depth check or blow up the printer end in a blocking note that names the
//! file (exit 1), never in an abort (exit 134) or a silent pass; and files
//! just under the limit are analysed, from `scan` and from `check` alike.

use crate::common;

use std::process::{Command, Output};

use common::Repo;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_retrygate");

/// Enough retry vocabulary that the analyzer parses the file.
const RETRY_FN: &str = "fn retry_me() {}\n";

fn run(args: &[&str], repo: &Repo) -> (Output, Value) {
    let out = Command::new(BIN)
        .args(args)
        .arg("--repo")
        .arg(repo.path())
        .args(["--base", "main", "--head", "pr", "--format", "json"])
        .output()
        .expect("run retrygate");
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "exit {:?}, not JSON ({e}): {}\nstderr: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, json)
}

/// A repository whose `pr` branch adds every `(path, text)`.
fn repo_adding(files: &[(String, String)], config: Option<&str>) -> Repo {
    let repo = Repo::new();
    repo.write("src/lib.rs", RETRY_FN);
    if let Some(c) = config {
        repo.write(".github/retrygate.yml", c);
    }
    repo.commit("base");
    repo.branch("pr");
    for (path, text) in files {
        repo.write(path, text);
    }
    repo.commit("hostile");
    repo
}

fn blocking_note<'a>(json: &'a Value, path: &str) -> &'a Value {
    json["notes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["path"] == path && n["blocking"] == true)
        .unwrap_or_else(|| panic!("no blocking note for {path}: {}", json["notes"]))
}

fn assert_too_deep(json: &Value, path: &str) {
    let msg = blocking_note(json, path)["message"].as_str().unwrap().to_string();
    assert!(msg.contains("nest deeper than the 1500 levels"), "{path}: {msg}");
}

#[test]
fn item_1_nesting_without_brackets_is_refused_with_a_note_per_file() {
    let cases: Vec<(&str, String)> = vec![
        ("vec", format!("fn retry() {{ let x: {}u8{} = 0; }}", "Vec<".repeat(9_000), ">".repeat(9_000))),
        ("closure", format!("fn retry() {{ let f = {}0; }}", "|x| ".repeat(17_000))),
        ("not", format!("fn retry() {{ let x = {}y; }}", "!".repeat(48_000))),
        ("ref", format!("fn retry() {{ let x = {}y; }}", "&".repeat(100_000))),
        ("deref", format!("fn retry() {{ let x = {}y; }}", "*".repeat(100_000))),
        ("ptr", format!("fn retry() {{ let x: {}u8 = 0; }}", "*const ".repeat(100_000))),
        ("ret", format!("fn retry() {{ {}1; }}", "return ".repeat(100_000))),
        ("assign", format!("fn retry() {{ {}1; }}", "a = ".repeat(100_000))),
    ];
    let files: Vec<(String, String)> =
        cases.iter().map(|(k, t)| (format!("src/{k}.rs"), t.clone())).collect();
    let repo = repo_adding(&files, None);
    let (out, json) = run(&["scan"], &repo);
    assert_eq!(out.status.code(), Some(1), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    for (path, _) in &files {
        assert_too_deep(&json, path);
    }
}

/// Every pass that parses a changed file goes through the depth check,
/// not only the main one: the scan of retry-count constants and fields
/// parses the file again, and once called syn directly (a seeded fuzz case,
/// 200,000 `*` in a changed file with a `max_attempts` field, aborted the
/// binary).
#[test]
fn item_1_a_tower_in_a_changed_file_beside_a_retry_count_is_refused_not_crashed() {
    let repo = Repo::new();
    repo.write("src/lib.rs", format!("{RETRY_FN}const MAX_RETRIES: u32 = 3;\n"));
    repo.commit("base");
    repo.branch("pr");
    let tower = format!("fn retry() {{ let x = {}y; }}\n", "*".repeat(200_000));
    repo.write("src/lib.rs", format!("{RETRY_FN}const MAX_RETRIES: u32 = 9;\n{tower}"));
    repo.commit("hostile");
    let (out, json) = run(&["scan"], &repo);
    assert_eq!(out.status.code(), Some(1), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    assert_too_deep(&json, "src/lib.rs");
}

#[test]
fn item_2_strings_chars_and_comments_do_not_hide_nesting() {
    let deep = format!("{}1{}", "(".repeat(22_000), ")".repeat(22_000));
    let files: Vec<(String, String)> =
        [("char", "let c = '\"';"), ("raw", "let s = r\"\\\";"), ("comment", "/* \" */")]
            .iter()
            .map(|(k, prefix)| {
                (format!("src/{k}.rs"), format!("fn retry() {{ {prefix} let x = {deep}; }}\n"))
            })
            .collect();
    let repo = repo_adding(&files, None);
    let (out, json) = run(&["scan"], &repo);
    assert_eq!(out.status.code(), Some(1), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    for (path, _) in &files {
        assert_too_deep(&json, path);
    }
}

#[test]
fn item_3_long_chains_the_printer_would_recurse_on_are_refused() {
    let files = vec![
        // A method named `r`, not `retry`: 241,000 retry words would pass the
        // change's budget of retry words (docs/limits.md) before the depth
        // limit is reached; the file still says retry once, so it is parsed.
        ("src/chain.rs".to_string(), format!("fn retry() {{ while b{} {{}} }}", ".r()".repeat(241_000))),
        ("src/plus.rs".to_string(), format!("fn retry() {{ while x{} > 0 {{}} }}", " + 1".repeat(146_000))),
        (
            "src/cast.rs".to_string(),
            format!("fn retry() {{ for i in 0..x{} {{}} }}", " as u8".repeat(186_000)),
        ),
    ];
    let repo = repo_adding(&files, None);
    let (out, json) = run(&["scan"], &repo);
    assert_eq!(out.status.code(), Some(1), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    for (path, _) in &files {
        assert_too_deep(&json, path);
    }
}

/// A raised retry count next to code nested just under the limit: the file
/// is parsed (on the analysis stack) and the raise is still found.
fn near_limit_file(raise_to: u32) -> String {
    format!(
        "use backon::{{ExponentialBuilder, Retryable}};\n\
         type Deep = {}u8{};\n\
         async fn fetch(c: &reqwest::Client) -> reqwest::Result<reqwest::Response> {{\n\
             let x = {}1{};\n\
             (|| async {{ c.get(\"https://api/x\").send().await }})\n\
                 .retry(ExponentialBuilder::default().with_jitter().with_max_times({raise_to}))\n\
                 .await\n\
         }}\n",
        "Vec<".repeat(370),
        ">".repeat(370),
        "(".repeat(1_400),
        ")".repeat(1_400),
    )
}

#[test]
fn code_just_under_the_limit_is_analysed_by_scan() {
    let repo = Repo::new();
    repo.write("src/client.rs", near_limit_file(2));
    repo.commit("base");
    repo.branch("pr");
    repo.write("src/client.rs", near_limit_file(6));
    repo.commit("raise");
    let (out, json) = run(&["scan"], &repo);
    assert_eq!(out.status.code(), Some(1), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(json["findings"][0]["kind"], "retry-count-raised", "{json}");
    assert!(json["notes"].as_array().unwrap().iter().all(|n| n["blocking"] != true), "{}", json["notes"]);
}

#[test]
fn item_4_check_with_max_attempts_parses_on_the_analysis_stack() {
    // Under the limit: `check` re-reads head policies for limits.max_attempts;
    // on the main thread's 8 MiB this depth aborted the process.
    let files = vec![("src/client.rs".to_string(), near_limit_file(6))];
    let repo = repo_adding(&files, Some("limits: { max_attempts: 3 }\n"));
    let (out, json) = run(&["check", "--human"], &repo);
    assert_eq!(out.status.code(), Some(1), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let over = json["findings"].as_array().unwrap().iter().find(|f| f["rule"] == "policy/max-attempts");
    assert!(over.is_some(), "the 7-attempt policy is over the limit: {json}");

    // Over the limit (1,500 nested generics, an 8 KB file): one blocking note
    // naming the file (the limits check adds none when the scan has one) and
    // the reason the gate gives, not an abort.
    let deep = format!("fn retry() {{ let x: {}u8{} = 0; }}\n", "Vec<".repeat(1_500), ">".repeat(1_500));
    let repo = repo_adding(&[("src/deep.rs".to_string(), deep)], Some("limits: { max_attempts: 3 }\n"));
    let (out, json) = run(&["check", "--human"], &repo);
    assert_eq!(out.status.code(), Some(1), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    assert_too_deep(&json, "src/deep.rs");
    assert_eq!(json["reasons"][0]["code"], "scan-incomplete", "{json}");
}

/// `select!` bodies are expanded into plain syntax after the depth check
/// (`analyze::rust::macros`): selects nested as deep as the check admits are
/// walked on the analysis stack, and the raise inside the innermost is found.
fn nested_selects(levels: usize, raise_to: u32) -> String {
    format!(
        "use backon::{{ExponentialBuilder, Retryable}};\n\
         async fn fetch(c: &reqwest::Client) {{\n\
             {}\n\
             (|| async {{ c.get(\"https://api/x\").send().await }})\n\
                 .retry(ExponentialBuilder::default().with_jitter().with_max_times({raise_to}))\n\
                 .await\n\
             {}\n\
         }}\n",
        "select! { _ = tick() => ".repeat(levels),
        ", }".repeat(levels),
    )
}

#[test]
fn selects_nested_just_under_the_limit_are_expanded_and_analysed() {
    // A bare `select!` is the cheapest nesting for the depth bound (three
    // levels: `select`, `!`, the group) and the deepest after expansion (an
    // `if let` in a block per level); 490 is within a few levels of the most
    // the check admits (497 is refused).
    let levels = 490;
    let repo = Repo::new();
    repo.write("src/client.rs", nested_selects(levels, 2));
    repo.commit("base");
    repo.branch("pr");
    repo.write("src/client.rs", nested_selects(levels, 6));
    repo.commit("raise");
    let (out, json) = run(&["scan"], &repo);
    assert_eq!(out.status.code(), Some(1), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(json["findings"][0]["kind"], "retry-count-raised", "{json}");
    assert!(json["notes"].as_array().unwrap().iter().all(|n| n["blocking"] != true), "{}", json["notes"]);
}
