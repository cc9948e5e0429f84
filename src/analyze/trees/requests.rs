//! `tree/write-through-retrying-library`: a request built or sent by a
//! retry library that has no method filter (go-retryablehttp's
//! `NewRequest`), new in the head, whose method is POST or PATCH.
//!
//! Such a library retries every request it sends after a 5xx or a lost
//! connection, so a write sent through it can be applied twice. The method
//! is the call's argument followed to its value ([`super::eval`]). A method
//! read from a setting (`*cfg.WebhookMethod`) is looked up by the setting's
//! name in the head revision: a line that gives that name a written method
//! (`WebhookMethod: flag.String("webhook.method", "POST", ..)`,
//! `WebhookMethod = "POST"`) is its default. A method that cannot be told is
//! a warning: it may be a GET.

use std::collections::HashSet;

use serde_json::json;

use super::eval::Loc;
use super::sites::{request_writes, Site};
use crate::analyze::knobs::value::Value;
use crate::analyze::rules::helpers::RepoHead;
use crate::finding::{Finding, Kind, KindDoc, Severity};

pub(crate) const RULE: &str = "tree/write-through-retrying-library";

pub(crate) const DOC: KindDoc = KindDoc {
    what: "A request is now built or sent by a retry library that retries every method (go-retryablehttp's `NewRequest`, `NewRequestWithContext`, `Post`), and its method is POST or PATCH: written in the call, followed through names, or the default of the setting it is read from. A method that cannot be told is a warning.",
    why: "The library resends the request after a 5xx, a timeout or a lost connection whatever its method; a write the server applied before the answer was lost is applied again (a second notification, a duplicate order).",
    example: "http.NewRequest(cfg.Method, url, body) with cfg.Method defaulting to \"POST\"  ->  retryablehttp.NewRequest(cfg.Method, url, body)",
    use_instead: "Send writes with a plain client, or give the retrying client a CheckRetry that returns false for POST and PATCH, or send an Idempotency-Key the server honours.",
};

/// The most lines of `git grep` read while looking for a setting's default.
const MAX_GREP_LINES: usize = 2_000;

/// Findings for the head's library-built requests that are new (no base
/// request of the same identity) and written on an added line.
pub(crate) fn check(
    base: &[Site],
    head: &[Site],
    added: &dyn Fn(&Loc) -> bool,
    tree: Option<&RepoHead>,
) -> Vec<Finding> {
    let before: HashSet<&str> =
        base.iter().filter(|s| s.sends && s.writes != Some(false)).map(|s| s.identity.as_str()).collect();
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for h in head.iter().filter(|s| s.sends && s.writes != Some(false) && added(&s.at)) {
        if before.contains(h.identity.as_str())
            || !seen.insert((h.at.path.clone(), h.at.line, h.identity.clone()))
        {
            continue;
        }
        let shown = h.value.value.show();
        let (severity, method, why) = match h.writes {
            Some(_) => (Severity::Error, shown.trim_matches(['"', '`']).to_ascii_uppercase(), String::new()),
            None => match tree.zip(setting_name(&h.value.value)).map(|(t, n)| setting_default(t, &n)) {
                Some(Ok(Some((m, at)))) => (
                    Severity::Error,
                    m.clone(),
                    format!(" (the method is {shown}, which defaults to \"{m}\" at {at})"),
                ),
                // The search failed: the default is unknown, not absent, so
                // the request blocks until someone checks it.
                Some(Err(e)) => (
                    Severity::Error,
                    "possible write".into(),
                    format!(" (the method is {shown}; its default could not be searched: {e}; check that the head commit is in the repository, then run retrygate again)"),
                ),
                _ => (Severity::Warning, String::new(), String::new()),
            },
        };
        let message = if severity == Severity::Error {
            format!(
                "a {method} request{why} is now sent through {}'s `{}`, which retries every method after a 5xx or a lost connection: the write can be applied twice (followed on the syntax tree; read from the library's data)",
                h.library, h.name
            )
        } else {
            format!(
                "a request whose method cannot be told ({shown}) is now sent through {}'s `{}`, which retries every method; check that it is not a POST or PATCH (followed on the syntax tree; read from the library's data)",
                h.library, h.name
            )
        };
        out.push(Finding {
            kind: Kind::RetryNonIdempotent,
            rule: RULE.to_string(),
            severity,
            path: h.at.path.clone(),
            line: h.at.line,
            end_line: h.at.line,
            message,
            base: None,
            head: Some(json!({ "call": h.name, "method": shown, "library": h.library })),
            fix: None,
        });
    }
    out
}

/// The setting a method is read from: the last field of a selector
/// (`*config.Get().WebHookMethod` -> `WebHookMethod`). A bare name is a
/// parameter or a local, which the evaluator follows itself; a short or
/// generic field (`Method`, `method`) names nothing to look up.
fn setting_name(v: &Value) -> Option<String> {
    let Value::Unknown(text) = v else { return None };
    let (_, last) = text.rsplit_once('.')?;
    let last = last.trim();
    let ok = last.len() > "method".len()
        && last.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && last.to_ascii_lowercase().contains("method");
    ok.then(|| last.to_string())
}

/// The method a setting named `name` is given where it is defined in the
/// head revision: every line that defines it (`name:` or `name =`) and
/// writes a method must write the same one, POST or PATCH.
/// `Err` when git could not search the revision (no match is `Ok(None)`).
fn setting_default(tree: &RepoHead, name: &str) -> Result<Option<(String, String)>, String> {
    let args = ["grep", "-n", "-I", "-w", "-F", "-e", name, tree.rev.as_str(), "--"];
    let listed = match tree.git.run(&args) {
        Ok(out) => out,
        // No file matched: git grep exits 1 and says nothing.
        Err(crate::changeset::ChangeSetError::Git { stderr, .. }) if stderr.is_empty() => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let tests = crate::analyze::testcode::ScanPaths::defaults();
    let prefix = format!("{}:", tree.rev);
    let mut found: Option<(String, String)> = None;
    for line in listed.lines().take(MAX_GREP_LINES) {
        let Some(rest) = line.strip_prefix(prefix.as_str()) else { continue };
        let mut parts = rest.splitn(3, ':');
        let (Some(path), Some(no), Some(text)) = (parts.next(), parts.next(), parts.next()) else { continue };
        if tests.test_pattern(path).is_some() {
            continue;
        }
        let Some(after) = defines(text, name) else { continue };
        let methods: Vec<String> = quoted(after)
            .filter_map(|q| request_writes(&Value::Text(q.to_string())).map(|w| (q, w)))
            .map(|(q, _)| q.to_ascii_uppercase())
            .collect();
        for m in methods {
            match &found {
                Some((f, _)) if *f != m => return Ok(None),
                Some(_) => {}
                None => found = Some((m, format!("{path}:{no}"))),
            }
        }
    }
    Ok(found.filter(|(m, _)| request_writes(&Value::Text(m.clone())) == Some(true)))
}

/// The text after `name` where a line defines it (`name:` as a field or
/// keyed value, `name =`, `name :=`), `None` where it only uses it.
fn defines<'t>(text: &'t str, name: &str) -> Option<&'t str> {
    let mut from = 0;
    while let Some(i) = text[from..].find(name) {
        let at = from + i;
        let before = text[..at].chars().next_back();
        let after = &text[at + name.len()..];
        let whole = !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            && !after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
        let rest = after.trim_start();
        if whole && (rest.starts_with(':') || (rest.starts_with('=') && !rest.starts_with("=="))) {
            return Some(rest);
        }
        from = at + name.len();
    }
    None
}

/// The double-quoted strings of a line.
fn quoted(text: &str) -> impl Iterator<Item = &str> {
    text.split('"').skip(1).step_by(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_is_named_by_the_last_field_of_a_selector_that_says_method() {
        let name = |t: &str| setting_name(&Value::Unknown(t.into()));
        assert_eq!(name("*config.Get().WebHookMethod"), Some("WebHookMethod".into()));
        assert_eq!(name("cfg.notify_method"), Some("notify_method".into()));
        assert_eq!(name("method"), None, "a parameter is followed by the evaluator");
        assert_eq!(name("req.Method"), None, "too generic to look up");
        assert_eq!(name("cfg.URL"), None);
    }

    #[test]
    fn a_definition_line_gives_the_text_after_the_name() {
        fn d(t: &str) -> Option<&str> {
            defines(t, "WebHookMethod")
        }
        assert_eq!(
            d("\tWebHookMethod:   flag.String(\"m\", \"POST\", \"x\"),"),
            Some(":   flag.String(\"m\", \"POST\", \"x\"),")
        );
        assert_eq!(d("WebHookMethod = \"PATCH\""), Some("= \"PATCH\""));
        assert_eq!(d("if c.WebHookMethod == \"POST\" {"), None, "a use, not a definition");
        assert_eq!(d("MyWebHookMethod: \"POST\""), None, "another name");
        assert_eq!(quoted("a \"POST\" b \"x\"").collect::<Vec<_>>(), ["POST", "x"]);
    }
}
