//! `retrygate demo` runs from the binary alone (copied out of the build
//! tree, run in an empty directory) and tells the whole story: the agent's
//! patch blocked with its findings, "ledger missing" and the storm's
//! timeline; the calm patch passing with its ledger and replay.
//!
//! Its comments, and a comment as large as the printer makes, are rendered
//! by a real GitHub-Flavored Markdown renderer (Debian's `cmark-gfm` with the
//! table extension, which `scripts/test.sh` installs): every table parses
//! with the rows it was written with, no escaped backtick shows, and the
//! part above the first `<details>` stays short. The README shows the first
//! comment as printed.

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::Instant;

use retrygate::config::Enforcement;
use retrygate::decision::AgentDecision;
use retrygate::decision::{
    decide, DecisionInput, Evidence, GateFacts, GateVerdict, ReplayStatus, ReplaySummary, SignOffRequest,
};
use retrygate::finding::{Finding, Kind, Note, Severity};
use retrygate::ledger::LedgerReport;
use retrygate::printer::Context;
use retrygate::testing::markdown::{render_comment, MAX_LINES_BEFORE_DETAILS, MAX_TABLE_ROWS};

use crate::common::output_of_fresh_executable;

#[test]
fn the_full_demo_runs_from_the_binary_alone_and_blocks_then_passes() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("retrygate");
    std::fs::copy(env!("CARGO_BIN_EXE_retrygate"), &bin).unwrap();
    let started = Instant::now();
    let out = output_of_fresh_executable(Command::new(&bin).arg("demo").current_dir(dir.path()));
    let took = started.elapsed();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    let (first, rest) = text.split_once("The agent pushes the calm patch").expect("three acts");
    let (second, third) = rest.split_once("The agent pushes once more").expect("three acts");

    assert!(first.contains("### ❌ retrygate: blocked"), "{first}");
    for part in [
        "**ledger-missing**: no tool-call ledger was found in the 3 places the ledger section lists",
        "#### Findings (7): 6 blocking, 1 warning",
        "**blocking-findings**: 6 retry regressions in the findings table",
        "```mermaid\n",
        "\nxychart-beta\n",
        "**replay-failed**",
        "`retry-non-idempotent`",
        "`timeout-lowered`",
        "limits.max\\_attempts 5",
        "| `retry-after-honored` | ❌ fail |",
        "| `desynchronized` | ❌ fail |",
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
    // The replay exercised the retry the calm patch changed (the cart read,
    // honouring Retry-After), so it counts as evidence (issue 24).
    assert!(second.contains("| 4 | "), "a client came back three times:\n{second}");
    assert!(second.contains("`GET /c/0/cart/7`") && !second.contains("No client retried"), "{second}");
    assert!(second.contains("| `retry-after-honored` | ✅ pass |"), "{second}");
    // Act 3: the cap raised where no analyzer looks, blocked by the
    // comparison with the base alone.
    assert!(third.contains("### ❌ retrygate: blocked"), "{third}");
    for part in [
        "**replay-failed**",
        "retry-count-raised (seen in the replay, [to-the-cap]): GET /cart/{id}: 5 attempts per request at the base, 10 at the head",
        "**Base** (",
        "**Head**:",
        "(exit code 1)",
        "exit code 1 for the first push, 0 for the second, 1 for the third",
    ] {
        assert!(third.contains(part), "act 3 lacks {part:?}:\n{third}");
    }
    for absent in ["**blocking-findings**", "**ledger-", "| `retry-after-honored` | ❌ fail |"] {
        assert!(
            !third.contains(absent),
            "act 3 is blocked by the comparison alone, not {absent:?}:\n{third}"
        );
    }
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
    let (first, rest) = text.split_once("The agent pushes the calm patch").expect("three acts");
    let (second, third) = rest.split_once("The agent pushes once more").expect("three acts");
    assert!(first.contains("**ledger-missing**"), "{first}");
    assert!(
        third.contains("--ledger-artifact tool-ledger-3.zip") && third.contains("**replay-failed**"),
        "{third}"
    );
    assert!(!third.contains("**ledger-"), "the third push's artifact explains its edit: {third}");
    assert!(second.contains("--ledger-artifact tool-ledger.zip"), "{second}");
    assert!(second.contains("### ✅ retrygate: passing"), "{second}");
    assert!(second.contains("From `.tool_ledger.jsonl` in the artifact zip"), "{second}");
    // The ledger was not committed: the artifact is what carried it.
    assert!(!second.contains("committed at"), "{second}");
}

/// `md` rendered to HTML by `cmark-gfm` with GitHub's extensions. Raw HTML
/// is let through (`--unsafe`) as GitHub lets `<details>`, `<br>` and
/// `<sub>` through.
fn gfm(md: &str) -> String {
    let mut child = Command::new("cmark-gfm")
        .args(["-e", "table", "-e", "strikethrough", "-e", "autolink", "--unsafe"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot run cmark-gfm ({e}); install it with `apt-get install cmark-gfm` (scripts/test.sh does)")
        });
    child.stdin.take().unwrap().write_all(md.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "cmark-gfm failed: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Rows (header included) of each Markdown table in `md`, in order: every
/// run of lines starting with `|`, less its delimiter row.
fn markdown_tables(md: &str) -> Vec<usize> {
    let mut tables = Vec::new();
    let mut run = 0;
    for line in md.lines().chain([""]) {
        if line.starts_with('|') {
            run += 1;
        } else if run > 0 {
            tables.push(run - 1);
            run = 0;
        }
    }
    tables
}

/// Rows of each `<table>` in rendered HTML, in order.
fn html_tables(html: &str) -> Vec<usize> {
    html.split("<table>")
        .skip(1)
        .map(|t| t.split("</table>").next().unwrap().matches("<tr>").count())
        .collect()
}

/// Lines of `md` before its first `<details>` (all of them when it has none).
fn lines_before_details(md: &str) -> usize {
    md.lines().take_while(|l| !l.starts_with("<details>")).count()
}

/// Renders `md` and checks what a maintainer would see: every table parsed
/// with all its rows, no escaped backtick, the first screen short.
fn assert_renders_well(md: &str, what: &str) -> String {
    let html = gfm(md);
    let want = markdown_tables(md);
    assert!(!want.is_empty(), "{what}: no table at all:\n{md}");
    assert_eq!(html_tables(&html), want, "{what}: a table did not parse as written:\n{html}");
    assert!(!html.contains("\\`"), "{what}: a literal \\` shows:\n{html}");
    let above = lines_before_details(md);
    assert!(above <= MAX_LINES_BEFORE_DETAILS, "{what}: {above} lines before the first <details>:\n{md}");
    html
}

/// The comment of each `retrygate check` in the demo's output, in order.
fn comments(out: &str) -> Vec<&str> {
    out.split("$ retrygate check ")
        .skip(1)
        .map(|part| {
            let body = &part[part.find("\n\n").expect("a blank line after the command") + 2..];
            &body[..body.find("\n(exit code").expect("the exit code after the comment")]
        })
        .collect()
}

fn demo() -> String {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("retrygate");
    std::fs::copy(env!("CARGO_BIN_EXE_retrygate"), &bin).unwrap();
    let out = output_of_fresh_executable(Command::new(&bin).arg("demo").current_dir(dir.path()));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_demos_comments_render_as_a_maintainer_reads_them() {
    let out = demo();
    let comments = comments(&out);
    assert_eq!(comments.len(), 3, "{out}");
    let blocked = comments[0];
    let html = assert_renders_well(blocked, "the blocked push's comment");
    // Above the first <details>: the headline, the reasons, the findings.
    let top = &blocked[..blocked.find("\n<details>").unwrap()];
    assert!(top.starts_with("### ❌ retrygate: blocked\n\n| | Why | How to fix |"), "{top}");
    assert!(top.ends_with("| `rust/loop-jitter` |\n"), "only the findings table after the reasons: {top}");
    assert_eq!(top.matches("\n#### ").count(), 1, "one heading, the findings': {top}");
    assert!(html.contains("<code>retrygate explain jitter-removed</code>"), "fixes show as code: {html}");
    // The loop whose count the agent raised is `retry-count-raised`; both
    // loops are over the ceiling, and the new one is never called "raised".
    let raised: Vec<&str> = top.lines().filter(|l| l.contains("`retry-count-raised`")).collect();
    assert_eq!(raised.len(), 1, "only the raised loop: {top}");
    assert!(
        raised[0].contains("retries raised from 2 to 6") && raised[0].contains("`rust/loop-attempts`"),
        "{}",
        raised[0]
    );
    let over: Vec<&str> = top.lines().filter(|l| l.contains("`retry-over-limit`")).collect();
    assert_eq!(over.len(), 2, "both loops are over limits.max_attempts: {top}");
    assert!(over.iter().all(|l| l.contains("`policy/max-attempts`")), "{over:?}");
    // One count: the heading, the reason and the table's rows agree.
    let rows = top.lines().filter(|l| l.starts_with("| 🔴 error") || l.starts_with("| 🟡 warning")).count();
    assert!(top.contains(&format!("#### Findings ({rows}): ")), "{top}");
    // Each reason is whole: nothing above the details is cut.
    assert!(!top.contains('…'), "no reason or cell is cut: {top}");
    // No parenthesised plural in what a maintainer reads first.
    assert!(!top.contains("(s)") && !top.contains("(ies)"), "{top}");
    // The replay: one line per failed check, the storm's range in words.
    let replay = &blocked[blocked.find("#### 429 replay").unwrap()..];
    let first = replay.lines().find(|l| l.starts_with("- ❌ `retry-after-honored`: ")).expect("its line");
    assert!(
        first.contains(" of ")
            && first.contains(" retries came back ")
            && first.contains("after a 429 that asked for 1000"),
        "{first}"
    );
    assert!(replay.lines().filter(|l| l.starts_with("- ❌ ")).count() >= 3, "{replay}");
    assert!(replay.contains("\n- ❌ `no-unsafe-replay`: "), "{replay}");
    let collapsed = &replay
        [replay.find("<details><summary>Every check, and each client's requests</summary>").unwrap()..];
    assert!(collapsed.contains("<details><summary>client 0"), "per-client detail is collapsed: {collapsed}");
    // The storm as a chart, inside the collapsed block: one label, one asked
    // wait and one comeback per retry after a 429, the asked waits at least
    // ten times what the storm client waited.
    let chart = &collapsed[collapsed.find("```mermaid\n").expect("a Mermaid chart")..];
    let chart = &chart[..chart[3..].find("```").unwrap() + 3];
    let series = |prefix: &str| -> Vec<String> {
        let line = chart
            .lines()
            .find(|l| l.trim_start().starts_with(prefix))
            .unwrap_or_else(|| panic!("{prefix}: {chart}"));
        let inner = &line[line.find('[').unwrap() + 1..line.rfind(']').unwrap()];
        inner.split(", ").map(|x| x.trim_matches('"').to_string()).collect()
    };
    let (labels, asked, came) = (series("x-axis"), series("bar"), series("line"));
    assert_eq!((labels.len(), asked.len()), (came.len(), came.len()), "{chart}");
    assert_eq!(labels.len(), 36, "12 clients, 3 retries after a 429 each: {chart}");
    for (a, c) in asked.iter().zip(&came) {
        let (a, c): (u64, u64) = (a.parse().unwrap(), c.parse().unwrap());
        assert!(a >= 1000 && c * 10 < a, "asked {a} ms, came back after {c} ms: {chart}");
    }
    assert!(!replay[..replay.len() - collapsed.len()].contains("```mermaid"), "the chart is collapsed");
    assert!(!replay[..replay.len() - collapsed.len()].contains("client 0"), "{replay}");

    assert_renders_well(comments[1], "the calm push's comment");
    let tuned = assert_renders_well(comments[2], "the third push's comment");
    assert!(tuned.contains("Compared with the base"), "{tuned}");
}

#[test]
fn a_comment_as_large_as_the_printer_makes_still_renders_and_fits() {
    // Every reason at once, hundreds of findings with hostile text, two rules
    // on each location, and many notes.
    let head = "3f2a9c0d1e2b3c4d5e6f708192a3b4c5d6e7f809";
    let nasty = "raised | from `2` to\n6 <b>now</b> [x](y) *z* `unclosed";
    let mut findings = Vec::new();
    for i in 0..400u32 {
        let path = format!("src/dir {}/file|{i}`.rs", i % 9);
        for rule in ["rust/loop-attempts", "policy/max-attempts"] {
            findings.push(
                Finding::new(Kind::RetryCountRaised, rule, &path, i + 1).lines(i + 1, i + 4).message(nasty),
            );
        }
        findings.push(
            Finding::new(Kind::RetryWithoutJitter, "rust/loop-jitter", &path, i + 1)
                .severity(Severity::Warning),
        );
    }
    findings.push(Finding::new(
        Kind::GateConfigChanged,
        "policy/gate-config-changed",
        ".github/retrygate.yml",
        0,
    ));
    findings.push(Finding::new(Kind::ProtectedPath, "policy/protected-path", "deploy/prod.yml", 0));
    let notes: Vec<Note> = (0..80)
        .map(|i| Note::blocking(Some(&format!("vendor/{i}.rs")), format!("could not parse `{i}`")))
        .collect();
    let agent = AgentDecision { is_agent: true, because: vec!["label `agent`".into()] };
    let ledger = LedgerReport::missing(vec!["`.tool_ledger.jsonl` at the head".into()], "tool-ledger", None);
    let mut replay = ReplaySummary::with_status(ReplayStatus::Fail, "retry code changed");
    replay.reasons = (0..40).map(|i| format!("check {i} failed with `x|y`")).collect();
    let sign_off = SignOffRequest { sha: "0000000deadbeef".into(), by: Some("someone".into()) };
    let decision = decide(&DecisionInput {
        mode: Enforcement::Enforce,
        head,
        findings: &findings,
        notes: &notes,
        agent: &agent,
        ledger: Some(&ledger),
        replay: &replay,
        sign_off: Some(&sign_off),
    });
    assert_eq!(decision.reasons.len(), 7, "{:?}", decision.reasons);
    let facts = GateFacts {
        base: "main".into(),
        base_sha: "b".repeat(40),
        merge_base: "b".repeat(40),
        head: head.into(),
        head_branch: Some("codex/x".into()),
        author: Some("codex[bot]".into()),
        labels: vec!["agent".into()],
        agent: agent.clone(),
        config_source: "defaults".into(),
        mode: Enforcement::Enforce,
    };
    let v = GateVerdict::new(
        decision,
        findings,
        notes,
        Evidence { ledger: Some(ledger), replay: Some(replay) },
        Some(facts),
    );
    let link = format!("https://github.com/acme/shop/blob/{head}");
    let md = render_comment(&v, &Context { link_base: Some(&link), ..Context::default() });
    let html = assert_renders_well(&md, "the large comment");
    let findings_table = markdown_tables(&md)[1];
    assert_eq!(findings_table, MAX_TABLE_ROWS + 1, "the cap, in rows of one location and kind");
    assert!(md.len() < 65_536, "fits a GitHub comment: {} bytes", md.len());
    assert!(
        html.contains(&format!(
            "<a href=\"{link}/src/dir%200/file%7C0%60.rs#L1-L4\"><code>src/dir 0/file|0`.rs:1-4</code></a>"
        )),
        "links survive odd paths: {html}"
    );
}

/// `text` with what changes from one demo run to the next made equal:
/// commit ids, temporary paths, numbers (timings, counts), the cut end of a
/// truncated cell, and the per-request timeline inside the replay's
/// collapsed block.
fn normalised(text: &str) -> String {
    let mut text = text.replace("\r\n", "\n");
    if let Some(start) = text.find("<details><summary>Every check, and each client's requests</summary>") {
        let end = ["\n#### Sign-off", "\n<sub>"].iter().filter_map(|m| text[start..].find(m)).min().unwrap();
        text.replace_range(start..start + end, "REPLAY DETAIL");
    }
    let ids = regex::Regex::new(r"[0-9a-f]{7,40}").unwrap();
    let temp = regex::Regex::new(r"\S*/retrygate-demo-[A-Za-z0-9]+").unwrap();
    let exe = regex::Regex::new(r"\S*/retrygate replay-client").unwrap();
    let numbers = regex::Regex::new(r"[0-9]+").unwrap();
    let text = ids.replace_all(&text, "ID");
    let text = temp.replace_all(&text, "DEMO");
    let text = exe.replace_all(&text, "retrygate replay-client");
    let text = numbers.replace_all(&text, "N").replace("N–N", "N");
    text.lines()
        .map(|l| {
            l.trim_end()
                .split(" | ")
                .map(|c| if c.contains('…') { "…" } else { c })
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_guide_and_the_readme_show_the_demos_first_comment_as_printed() {
    let root = env!("CARGO_MANIFEST_DIR");
    let between = |path: &str, name: &str| -> String {
        let text = std::fs::read_to_string(format!("{root}/{path}")).unwrap();
        let start = format!("<!-- {name}:start -->\n");
        let a = text.find(&start).unwrap_or_else(|| panic!("{path} lacks the {name}:start marker"));
        let b = text
            .find(&format!("<!-- {name}:end -->"))
            .unwrap_or_else(|| panic!("{path} lacks the {name}:end marker"));
        text[a + start.len()..b].to_string()
    };
    let out = demo();
    let printed = comments(&out)[0];
    assert_eq!(
        normalised(between("docs/getting-started.md", "demo-comment").trim_end()),
        normalised(printed.trim_end()),
        "docs/getting-started.md's demo comment is out of date: run scripts/regen.sh"
    );
    // The README shows the comment's summary: up to the findings table.
    let summary = printed.split("\n#### ").next().unwrap_or(printed);
    assert!(summary.contains("| Why | How to fix |"), "{summary}");
    assert_eq!(
        normalised(between("README.md", "demo-summary").trim_end()),
        normalised(summary.trim_end()),
        "README's demo summary is out of date: run scripts/regen.sh"
    );
}
