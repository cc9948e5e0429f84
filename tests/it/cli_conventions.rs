//! The command line's conventions, on the real binary: exit codes in
//! `--help`, `--color` and `NO_COLOR`, completions and man pages generated
//! from the flags, `config validate`, progress on stderr for a long replay,
//! and text when text is asked for, whatever stdout is.

use crate::common;

use std::process::{Command, Output, Stdio};

use common::Repo;

fn retrygate(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_retrygate"));
    cmd.args(args).env_remove("RUST_LOG").env_remove("NO_COLOR").env_remove("RETRYGATE_COLOR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run the retrygate binary")
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `main` with the checkout client, `feature` with the agent's patch: a
/// scan that blocks with errors and a warning.
fn blocked_repo() -> Repo {
    let repo = Repo::new();
    repo.write("src/checkout.rs", common::BEFORE);
    repo.commit("base");
    repo.branch("feature");
    repo.write("src/checkout.rs", common::AGENT_PATCH);
    repo.commit("faster");
    repo
}

#[test]
fn help_states_the_exit_codes_of_every_verdict_command() {
    let top = retrygate(&["--help"], &[]);
    assert_eq!(top.status.code(), Some(0));
    assert!(out(&top).contains("Exit codes: 0 pass, 1 blocked"), "{}", out(&top));
    for (cmd, says) in [
        ("scan", "Exit codes: 0 no blocking finding, 1 blocking findings, 2 could not decide."),
        ("check", "2 could not decide"),
        ("replay", "Exit codes: 0 the replay passed, 1 it failed, 2 it could not run."),
        ("github", "1 blocked (the job fails too)"),
    ] {
        let o = retrygate(&[cmd, "--help"], &[]);
        assert!(out(&o).contains(says), "{cmd} --help lacks {says:?}: {}", out(&o));
    }
}

#[test]
fn color_is_asked_for_never_assumed() {
    let repo = blocked_repo();
    let path = repo.path().to_str().unwrap();
    let scan = |extra: &[&str], env: &[(&str, &str)]| {
        let mut args =
            vec!["scan", "--repo", path, "--base", "main", "--head", "feature", "--format", "text"];
        args.extend_from_slice(extra);
        retrygate(&args, env)
    };
    let always = scan(&["--color", "always"], &[]);
    assert_eq!(always.status.code(), Some(1));
    let text = out(&always);
    assert!(text.contains(": \x1b[1;31merror\x1b[0m[timeout-lowered]"), "{text:?}");
    assert!(text.contains("\x1b[33mwarning\x1b[0m[retry-without-jitter]"), "{text:?}");
    assert!(text.contains("retrygate: \x1b[1;31mBLOCK\x1b[0m"), "{text:?}");
    // Not a terminal here: auto is plain, and so are never and NO_COLOR.
    for o in [
        scan(&[], &[]),
        scan(&["--color", "never"], &[]),
        scan(&["--color", "auto"], &[("NO_COLOR", "1")]),
        scan(&[], &[("RETRYGATE_COLOR", "never")]),
    ] {
        assert_eq!(o.status.code(), Some(1));
        assert!(!out(&o).contains('\x1b'), "{:?}", out(&o));
        assert!(out(&o).contains(": error[timeout-lowered]"), "{}", out(&o));
    }
    // Colour never reaches a format programs read.
    let json = scan(&["--color", "always", "--format", "json"], &[]);
    assert!(!out(&json).contains('\x1b'));
    let bad = scan(&["--color", "sometimes"], &[]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(err(&bad).contains("invalid value 'sometimes' for '--color <COLOR>'"), "{}", err(&bad));
}

#[test]
fn text_is_written_to_a_file_when_text_is_asked_for() {
    let repo = blocked_repo();
    let file = repo.path().join("scan.txt");
    let status = Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .args(["scan", "--repo", repo.path().to_str().unwrap(), "--base", "main", "--head", "feature"])
        .args(["--format", "text"])
        .stdout(Stdio::from(std::fs::File::create(&file).unwrap()))
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("src/checkout.rs:"), "{text}");
    assert!(text.trim_end().lines().last().unwrap().starts_with("retrygate: BLOCK: "), "{text}");
    // Without --format, a pipe gets the same text (`retrygate scan | cat`).
    let piped = retrygate(
        &["scan", "--repo", repo.path().to_str().unwrap(), "--base", "main", "--head", "feature"],
        &[],
    );
    assert_eq!(out(&piped), text);
}

#[test]
fn completions_and_man_pages_come_from_the_flags() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let o = retrygate(&["completions", shell], &[]);
        assert_eq!(o.status.code(), Some(0), "{shell}: {}", err(&o));
        let script = out(&o);
        for word in ["retrygate", "scan", "check", "replay", "color"] {
            assert!(script.contains(word), "{shell} completions lack {word}");
        }
    }
    let bad = retrygate(&["completions", "tcsh"], &[]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(err(&bad).contains("invalid value 'tcsh'"), "{}", err(&bad));

    let man = retrygate(&["man"], &[]);
    assert_eq!(man.status.code(), Some(0));
    let page = out(&man);
    assert!(page.contains(".TH retrygate 1"), "{page}");
    assert!(page.contains("Exit codes: 0 pass, 1 blocked"), "the page carries the exit codes");
    for sub in ["scan", "check", "replay", "config"] {
        assert!(page.contains(&format!("retrygate\\-{sub}(1)")), "the page lists {sub}");
        let o = retrygate(&["man", sub], &[]);
        assert_eq!(o.status.code(), Some(0));
        assert!(out(&o).contains(&format!(".TH retrygate-{sub} 1")), "{}", out(&o));
    }
    let scan = out(&retrygate(&["man", "scan"], &[]));
    assert!(scan.contains("\\-\\-base"), "the scan page documents --base: {scan}");
    let none = retrygate(&["man", "nope"], &[]);
    assert_eq!(none.status.code(), Some(2));
    assert!(
        err(&none).contains("no subcommand 'nope'; man pages exist for: scan, check, replay"),
        "{}",
        err(&none)
    );
    let hidden = retrygate(&["man", "replay-client"], &[]);
    assert_eq!(hidden.status.code(), Some(2), "a hidden command has no page");
}

#[test]
fn config_validate_says_valid_invalid_or_unreadable() {
    let repo = Repo::new();
    repo.write("README.md", "x\n");
    repo.commit("no config");
    let dir = repo.path().to_str().unwrap();
    let none = retrygate(&["config", "validate", "--repo", dir], &[]);
    assert_eq!(none.status.code(), Some(0));
    assert_eq!(
        out(&none),
        ".github/retrygate.yml: not there; the defaults apply (docs/gate.md, \"Config from the base\", lists them)\n"
    );

    repo.write(".github/retrygate.yml", "mode: enforce\nlimits: { max_attempts: 3 }\n");
    let ok = retrygate(&["config", "validate", "--repo", dir], &[]);
    assert_eq!((ok.status.code(), out(&ok)), (Some(0), ".github/retrygate.yml: valid\n".to_string()));

    repo.write(".github/retrygate.yml", "mode: enforce\nreplay:\n  clientz: 8\n");
    let bad = retrygate(&["config", "validate", "--repo", dir], &[]);
    assert_eq!(bad.status.code(), Some(1));
    let e = err(&bad);
    assert!(e.starts_with("retrygate: .github/retrygate.yml:3: ") && e.contains("clientz"), "{e}");
    assert_eq!(e.lines().count(), 1, "one line: {e}");

    // A file named on the command line.
    let file = repo.path().join("candidate.yml");
    std::fs::write(&file, "mode: sometimes\n").unwrap();
    let named = retrygate(&["config", "validate", file.to_str().unwrap()], &[]);
    assert_eq!(named.status.code(), Some(1));
    assert!(
        err(&named).contains("candidate.yml:1: ") && err(&named).contains("sometimes"),
        "{}",
        err(&named)
    );
    let missing = retrygate(&["config", "validate", "/nonexistent/retrygate.yml"], &[]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(err(&missing).contains("cannot read /nonexistent/retrygate.yml"), "{}", err(&missing));

    // At a commit, as the gate reads a pull request's base.
    repo.commit("bad config");
    let at = retrygate(&["config", "validate", "--repo", dir, "--rev", "HEAD"], &[]);
    assert_eq!(at.status.code(), Some(1));
    assert!(err(&at).contains(":.github/retrygate.yml:3: "), "{}", err(&at));
    let before = retrygate(&["config", "validate", "--repo", dir, "--rev", "HEAD~1"], &[]);
    assert_eq!(before.status.code(), Some(0), "{}", err(&before));
    assert!(out(&before).contains("defaults"), "{}", out(&before));
    let nowhere = retrygate(&["config", "validate", "--repo", dir, "--rev", "no-such-rev"], &[]);
    assert_eq!(nowhere.status.code(), Some(2));
    assert!(err(&nowhere).contains("no-such-rev"), "{}", err(&nowhere));
}

#[test]
fn a_replay_longer_than_two_seconds_says_so_on_stderr() {
    // The reference client honours `Retry-After: 1` three times: over 3 s.
    let bin = env!("CARGO_BIN_EXE_retrygate");
    let o = retrygate(
        &[
            "replay",
            "--clients",
            "1",
            "--format",
            "json",
            "--",
            bin,
            "replay-client",
            "--profile",
            "reference",
        ],
        &[],
    );
    let e = err(&o);
    assert!(
        e.contains("retrygate replay: running for 2 s (1 client, scenario default; at most 60 s)"),
        "{e}"
    );
    assert!(e.contains("retrygate replay: done after "), "{e}");
    assert!(out(&o).trim_start().starts_with('{'), "stdout stays the report: {}", out(&o));
    // A replay that ends at once prints nothing of the kind.
    let quick = retrygate(&["replay", "--clients", "1", "--format", "json", "--", "false"], &[]);
    assert!(!err(&quick).contains("running for"), "{}", err(&quick));
}
