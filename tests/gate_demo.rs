//! `retrygate demo` runs from the binary alone (copied out of the build
//! tree, run in an empty directory) and tells the whole story: the agent's
//! patch blocked with its findings, "ledger missing" and the storm's
//! timeline; the calm patch passing with its ledger and replay.

use std::process::Command;
use std::time::Instant;

#[test]
fn the_full_demo_runs_from_the_binary_alone_and_blocks_then_passes() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("retrygate");
    std::fs::copy(env!("CARGO_BIN_EXE_retrygate"), &bin).unwrap();
    let started = Instant::now();
    let out = Command::new(&bin).arg("demo").current_dir(dir.path()).output().unwrap();
    let took = started.elapsed();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    let (first, second) = text.split_once("The agent pushes the calm patch").expect("two acts");

    assert!(first.contains("### ❌ retrygate: blocked"), "{first}");
    for part in [
        "**ledger-missing**: ledger missing",
        "**replay-failed**",
        "`retry-non-idempotent`",
        "`timeout-lowered`",
        "limits.max\\_attempts 5",
        "| `retry-after-honored` | ❌ fail |",
        "(**lockstep**)",
        "<details><summary>client 0",
        "retrygate-demo-",
        "(exit code 1)",
    ] {
        assert!(first.contains(part), "act 1 lacks {part:?}:\n{first}");
    }
    assert!(second.contains("### ✅ retrygate: passing"), "{second}");
    for part in ["✅ valid", "explains 1 of 1 changed files", "##### 429 replay: ✅ pass", "(exit code 0)"]
    {
        assert!(second.contains(part), "act 2 lacks {part:?}:\n{second}");
    }
    assert!(!second.contains("⛔"), "nothing blocks the calm patch:\n{second}");
    eprintln!("retrygate demo took {:.1} s", took.as_secs_f64());
}

#[test]
fn the_calm_push_can_carry_its_ledger_as_an_artifact() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .args(["demo", "--ledger-from", "artifact"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    let (first, second) = text.split_once("The agent pushes the calm patch").expect("two acts");
    assert!(first.contains("**ledger-missing**"), "{first}");
    assert!(second.contains("--ledger-artifact tool-ledger.zip"), "{second}");
    assert!(second.contains("### ✅ retrygate: passing"), "{second}");
    assert!(second.contains("From `.tool_ledger.jsonl` in the artifact zip"), "{second}");
    // The ledger was not committed: the artifact is what carried it.
    assert!(!second.contains("committed at"), "{second}");
}
