//! Snapshots of every output format, on the verdicts the tests above build.
//!
//! The substring tests above say what must hold; these say what changed.
//! When a rendering changes on purpose, review the new `.snap` files
//! (`cargo insta review`, or run with `INSTA_UPDATE=always` and read the
//! diff in git) before committing them: CONTRIBUTING.md says how.

use super::gate::gate;
use super::*;
use retrygate::config::Enforcement;
use retrygate::decision::ReplayStatus;
use retrygate::printer::{check_title, Context};

/// One verdict in every format, each snapshot named `<case>.<format>`.
fn snapshot_every_format(case: &str, v: &GateVerdict) {
    for (name, format) in [
        ("text", Format::Text),
        ("json", Format::Json),
        ("markdown", Format::Markdown),
        ("sarif", Format::Sarif),
        ("github", Format::Github),
    ] {
        let mut out = Vec::new();
        printer::render_in(v, &Context::default(), format, &mut out)
            .expect("rendering into a Vec cannot fail");
        // The crate's version is in SARIF's tool record; a release must not
        // rewrite every snapshot.
        let out = String::from_utf8(out)
            .expect("every format is UTF-8")
            .replace(env!("CARGO_PKG_VERSION"), "[version]");
        insta::assert_snapshot!(format!("{case}.{name}"), out);
    }
    insta::assert_snapshot!(format!("{case}.check-title"), check_title(v));
}

#[test]
fn scan_blocked_by_several_findings_and_notes() {
    snapshot_every_format("scan-blocked", &blocked_report());
}

#[test]
fn scan_passing_with_a_warning() {
    snapshot_every_format("scan-passing", &passing_report());
}

#[test]
fn scan_with_nothing_found() {
    snapshot_every_format("scan-empty", &empty_report());
}

#[test]
fn gate_blocked_with_a_rejected_replay() {
    snapshot_every_format("gate-blocked", &gate(Enforcement::Enforce, ReplayStatus::Rejected, None));
}

#[test]
fn gate_in_advisory_mode() {
    snapshot_every_format("gate-advisory", &gate(Enforcement::Advisory, ReplayStatus::Rejected, None));
}

#[test]
fn gate_signed_off_on_the_exact_head() {
    let signed =
        gate(Enforcement::Enforce, ReplayStatus::Pass, Some("3f2a9c0d1e2b3c4d5e6f708192a3b4c5d6e7f809"));
    snapshot_every_format("gate-signed-off", &signed);
}
