//! The hook parses an event in memory close to the event's size. Alone in
//! its own test binary so the process's peak resident size (`VmHWM`)
//! measures only this work; Linux only, where `/proc` reports it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers: a failure is a panic with its location"
)]
#![cfg(target_os = "linux")]

use retrygate::ledger::hook::{run_hook, Agent, HookDecision, HookEnv, MAX_INPUT_BYTES};

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn an_event_just_under_the_cap_full_of_small_values_stays_within_a_few_times_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let git = |args: &[&str]| {
        let ok =
            std::process::Command::new("git").args(args).current_dir(d).output().unwrap().status.success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    // A generic JSON value costs ~110 bytes per byte of `0,0,0,...` (a 16 MB
    // array peaked at 1.8 GB); the hook keeps only the fields it reads.
    let mut input = String::from("{\"hook_event_name\": \"PreToolUse\", \"tool_name\": \"Edit\", \"cwd\": ");
    input.push_str(&serde_json::to_string(d).unwrap());
    input.push_str(", \"tool_input\": {\"file_path\": \"src/lib.rs\", \"edits\": [");
    while input.len() < MAX_INPUT_BYTES - 1024 {
        input.push_str("0,");
    }
    input.push_str("0]}}");
    let env = HookEnv { agent_mutate: None, ledger: None, fallback_dir: d.to_path_buf() };

    let before = peak_rss_kib();
    let out = run_hook(Agent::Claude, input.as_bytes(), &env).unwrap();
    let grew_mib = peak_rss_kib().saturating_sub(before) / 1024;
    assert_eq!(out.decision, HookDecision::Allow, "{}", out.stderr);
    assert!(grew_mib < 32, "parsing an {} MiB event grew the peak by {grew_mib} MiB", MAX_INPUT_BYTES >> 20);
}
