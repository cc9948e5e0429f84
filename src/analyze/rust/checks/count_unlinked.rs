//! `rust/value-count-unlinked`: a value named as a retry count
//! (`const MAX_RETRIES`, a `num_retries` or `max_attempts` field set in a
//! struct literal or a default) went up on a line the change touched, and
//! the model links it to no retry site it knows.
//!
//! A count the model can follow is compared where it is used (a retry
//! site's `attempts`, reported at the definition when it lives elsewhere).
//! One it cannot follow (read through a library the analyzer does not know,
//! passed through a channel, a config layer, a macro of another crate) would
//! otherwise pass in silence; this check reports it, saying it was not
//! linked, so that a person looks at what reads it.

use std::collections::HashMap;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::json;

use super::{Applies, Change, RustCheck};
use crate::finding::{Kind, KindDoc, Severity};

/// A retry count the model could not link to a retry site.
pub(crate) const CHECK: RustCheck = RustCheck {
    name: "count-unlinked",
    kinds: &[Kind::RetryCountRaised],
    applies: Applies::Values,
    doc: KindDoc {
        what: "A value named as a retry count (`const MAX_RETRIES`, a `num_retries` or `max_attempts` field in a struct literal or default, the default of an environment read written beside the variable's name, `max_retries: parse_env_var(2, \"APP_MAX_RETRIES\")`, or of an absent setting, `.unwrap_or(3)`) went up, and no retry whose attempt count retrygate computes reads it: it links the value to no retry it models, or the retry that reads it has a count it cannot evaluate (a project's own backoff type, a field of a parameter). An error when the name says retry (`MAX_RETRIES`, `retry_limit`): the name is the project's own word that the value counts retries. Also an error when it says attempts or tries and its file sits in a module named for retries (`retry_client/`, `retries.rs`); otherwise `max_attempts` alone is a warning, a word also used for logins, locks and polls.",
        why: "A raised count that no modelled retry reads may still drive one the analyzer cannot follow (an unknown library, a config layer, another crate); passing it in silence would hide exactly the raise the gate exists to catch.",
        example: "const MAX_RETRIES: u32 = 3;  ->  const MAX_RETRIES: u32 = 10;   (read by a retry retrygate does not model)",
        use_instead: "Keep the count; or make the retry that reads it visible (a known library's setter, a loop bounded by it) so the raise is checked where it acts.",
    },
};

/// A number given to a retry-count name in one version of a file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NamedCount {
    pub(crate) name: String,
    pub(crate) value: f64,
    pub(crate) line: u32,
}

/// Whether a name says it holds a number of retries or attempts
/// (`MAX_RETRIES`, `num_retries`, `maxAttempts`, `retry_limit`), not a
/// delay, a timeout, a switch or a retry budget's figure that goes with
/// retries (`RETRY_DELAY_MS`, `retry_on_timeout`, `DEFAULT_RETRY_COST`).
pub(crate) fn is_retry_count_name(name: &str) -> bool {
    let words = words(name);
    let counted =
        words.iter().any(|w| matches!(w.as_str(), "retries" | "retry" | "attempts" | "attempt" | "tries"));
    let other = words.iter().any(|w| {
        matches!(
            w.as_str(),
            "delay"
                | "interval"
                | "timeout"
                | "backoff"
                | "ms"
                | "millis"
                | "secs"
                | "seconds"
                | "duration"
                | "jitter"
                | "after"
                | "wait"
                | "sleep"
                | "factor"
                | "multiplier"
                | "base"
                | "budget"
                | "percent"
                | "ratio"
                | "status"
                | "code"
                | "codes"
                | "on"
                | "if"
                | "enabled"
                | "header"
                | "id"
                | "cost"
                | "costs"
                | "capacity"
                | "token"
                | "tokens"
                | "bucket"
                | "rate"
                | "refill"
                | "window"
        )
    });
    counted && !other
}

/// `MAX_RETRIES`, `num_retries`, `maxAttempts` -> lowercase words.
fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c == '_' || !c.is_alphanumeric() {
            out.extend((!cur.is_empty()).then(|| std::mem::take(&mut cur)));
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    out.extend((!cur.is_empty()).then_some(cur));
    out
}

/// `const X: T = 3;` and `static X: T = 3;` (a literal integer).
fn const_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?(?:const|static)[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*:[^=;]*=[ \t]*([0-9][0-9_]*)(?:[iu](?:8|16|32|64|128|size))?[ \t]*;")
            .unwrap_or_else(|e| panic!("the const pattern is constant and valid: {e}"))
    })
}

/// `name: 3,` or `name: Some(3)` in a struct literal (a literal integer).
fn field_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?:^|[{,])[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*:[ \t]*(?:Some\([ \t]*)?([0-9][0-9_]*)(?:[iu](?:8|16|32|64|128|size))?[ \t]*\)?[ \t]*(?:[,}]|$)")
            .unwrap_or_else(|e| panic!("the field pattern is constant and valid: {e}"))
    })
}

/// `name: read("ENV_NAME", 3),` or `name: read(3, "ENV_NAME"),`: a value
/// read from the environment with its default written beside the
/// variable's name; and `name: <anything>.unwrap_or(3),`: a default where
/// a setting is absent. The default is what runs unless someone sets it.
fn default_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r#"(?:^|[{,])[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*:[ \t]*(?:[A-Za-z_][A-Za-z0-9_:]*[ \t]*\([ \t]*(?:"[A-Z][A-Z0-9_]*"[ \t]*,[ \t]*([0-9][0-9_]*)|([0-9][0-9_]*)(?:[iu](?:8|16|32|64|128|size))?[ \t]*,[ \t]*"[A-Z][A-Z0-9_]*")|[^,;{}]*\.unwrap_or\([ \t]*(?:Some\([ \t]*)?([0-9][0-9_]*))"#)
            .unwrap_or_else(|e| panic!("the default pattern is constant and valid: {e}"))
    })
}

/// `fn default_max_retries() -> u32 { 5 }` (on one line or several): a
/// function that takes nothing and returns a literal is a named value, as
/// a `const` is (a serde default, a `const fn`). Group 1 is the name,
/// group 2 the number.
fn value_fn_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"fn[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*\([ \t]*\)[ \t]*->[^{;]*\{\s*(?:Some\(\s*)?([0-9][0-9_]*)(?:[iu](?:8|16|32|64|128|size))?\s*\)?\s*\}")
            .unwrap_or_else(|e| panic!("the value function pattern is constant and valid: {e}"))
    })
}

/// The literal numbers a text gives to retry-count names, line by line.
///
/// Read by line (a struct literal inside a macro's tokens counts too), but a
/// field of a struct *pattern* (`Err(E::Retryable { retries: 1, .. }) =>`)
/// tests a value instead of setting one, so those are left out where the
/// file parses.
pub(crate) fn named_counts(text: &str) -> Vec<NamedCount> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let found = const_pattern()
            .captures(code)
            .into_iter()
            .chain(field_pattern().captures_iter(code))
            .chain(default_pattern().captures_iter(code))
            .filter(|c| is_retry_count_name(&c[1]));
        for c in found {
            // The number is whichever of the pattern's groups took it.
            let number = (2..c.len()).find_map(|g| c.get(g)).map(|m| m.as_str());
            if let Some(value) = number.and_then(|n| n.replace('_', "").parse::<f64>().ok()) {
                out.push(NamedCount { name: c[1].to_string(), value, line: i as u32 + 1 });
            }
        }
    }
    if text.contains("fn ") {
        for c in value_fn_pattern().captures_iter(text) {
            let (Some(name), Some(number)) = (c.get(1), c.get(2)) else { continue };
            if !is_retry_count_name(name.as_str()) {
                continue;
            }
            if let Ok(value) = number.as_str().replace('_', "").parse::<f64>() {
                let line = text[..number.start()].matches('\n').count() as u32 + 1;
                out.push(NamedCount { name: name.as_str().to_string(), value, line });
            }
        }
    }
    if !out.is_empty() {
        if let Ok(file) = crate::analyze::rust::parse::parse_file(text) {
            let mut patterns = PatternFields::default();
            syn::visit::Visit::visit_file(&mut patterns, &file);
            out.retain(|c| !patterns.0.contains(&(c.name.clone(), c.line)));
        }
    }
    out
}

/// Fields of struct patterns, by name and line.
#[derive(Default)]
struct PatternFields(std::collections::HashSet<(String, u32)>);

impl<'ast> syn::visit::Visit<'ast> for PatternFields {
    fn visit_field_pat(&mut self, f: &'ast syn::FieldPat) {
        if let syn::Member::Named(name) = &f.member {
            self.0.insert((name.to_string(), name.span().start().line as u32));
        }
        syn::visit::visit_field_pat(self, f);
    }

    // `matches!(e, Pat { .. })` and `assert_matches!` hold a pattern in
    // their tokens, which syn leaves unparsed.
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let is_matches =
            m.path.segments.last().is_some_and(|s| s.ident == "matches" || s.ident == "assert_matches");
        if is_matches {
            let parser = |input: syn::parse::ParseStream| {
                input.parse::<syn::Expr>()?;
                input.parse::<syn::Token![,]>()?;
                let pat = syn::Pat::parse_multi_with_leading_vert(input)?;
                input.parse::<proc_macro2::TokenStream>()?;
                Ok(pat)
            };
            if let Ok(pat) = syn::parse::Parser::parse2(parser, m.tokens.clone()) {
                syn::visit::Visit::visit_pat(self, &pat);
            }
        }
        syn::visit::visit_macro(self, m);
    }
}

/// How an unlinked raise weighs: a name with `retry`/`retries` in it blocks,
/// as a raised count under such a name does in every rule pack; `attempts`
/// or `tries` alone only warns, since those words also count logins, lock
/// acquisitions and polls, unless the module it is defined in says retry:
/// the path qualifies a Rust name (`retry_client::DEFAULT_MAX_TRIES`).
pub(crate) fn unlinked_severity(name: &str, path: &str) -> Severity {
    if words(name).iter().any(|w| matches!(w.as_str(), "retries" | "retry")) || path_says_retry(path) {
        Severity::Error
    } else {
        Severity::Warning
    }
}

/// Whether a file's folders or name say retry (`retry_client/`,
/// `src/retriable.rs`, `retrying.rs`): its module path does.
pub(crate) fn path_says_retry(path: &str) -> bool {
    path.split('/').any(|part| {
        let stem = part.strip_suffix(".rs").unwrap_or(part);
        words(stem).iter().any(|w| {
            matches!(w.as_str(), "retry" | "retries" | "retrying" | "retrier" | "retriable" | "retryable")
        })
    })
}

/// The head's retry counts on touched lines that went up from the same
/// name's value in the base, when `linked` says no modelled retry reads
/// them.
///
/// A head occurrence on a line the change left alone is the base
/// occurrence it was, so each one first takes a base occurrence of its name
/// and value out of the pairing; the touched head occurrences are then
/// paired in order with the base occurrences left. An occurrence the change
/// inserted beside unchanged ones is therefore new, not a raise of its
/// neighbour.
pub(crate) fn decide<'h>(
    path: &str,
    base: &[NamedCount],
    head: &'h [NamedCount],
    touched: impl Fn(u32) -> bool,
    linked: impl Fn(&NamedCount) -> bool,
) -> Vec<(&'h NamedCount, Change)> {
    let mut before: HashMap<&str, Vec<f64>> = HashMap::new();
    for b in base {
        before.entry(b.name.as_str()).or_default().push(b.value);
    }
    for h in head.iter().filter(|h| !touched(h.line)) {
        if let Some(values) = before.get_mut(h.name.as_str()) {
            if let Some(i) = values.iter().position(|v| *v == h.value) {
                values.remove(i);
            }
        }
    }
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut out = Vec::new();
    for h in head.iter().filter(|h| touched(h.line)) {
        let n = seen.entry(h.name.as_str()).or_default();
        let was = before.get(h.name.as_str()).and_then(|v| v.get(*n)).copied();
        *n += 1;
        let Some(was) = was else { continue };
        if h.value > was && !linked(h) {
            let mut c = Change::new(
                Kind::RetryCountRaised,
                &CHECK,
                format!(
                    "`{}` raised from {} to {}, and no retry whose attempt count retrygate computes reads it (it links it to no retry it models, or cannot evaluate the count of the one that does), so the attempts it allows were not checked; a maintainer checks which retry reads it",
                    h.name, was, h.value
                ),
            );
            c.severity = unlinked_severity(&h.name, path);
            c.base = Some(json!({"value": was}));
            c.head = Some(json!({"value": h.value}));
            out.push((h, c));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_that_says_retry_blocks_and_attempts_alone_warns() {
        for n in ["MAX_RETRIES", "num_retries", "retry_limit", "NUM_RETRIES_CONNECT", "maxRetryCount"] {
            assert_eq!(unlinked_severity(n, "src/lib.rs"), Severity::Error, "{n}");
        }
        for n in ["max_attempts", "MAX_TRIES", "loginAttempts"] {
            assert_eq!(unlinked_severity(n, "src/lib.rs"), Severity::Warning, "{n}");
            assert_eq!(unlinked_severity(n, "src/auth/login.rs"), Severity::Warning, "{n}");
            // The module path qualifies the name.
            assert_eq!(unlinked_severity(n, "src/retry_client/sui.rs"), Severity::Error, "{n}");
            assert_eq!(unlinked_severity(n, "crates/net/src/retriable.rs"), Severity::Error, "{n}");
        }
        // Words, not substrings: `retrieve` says nothing.
        assert!(!path_says_retry("src/retrieve/mod.rs"));
    }

    #[test]
    fn retry_count_names_and_the_names_that_only_go_with_retries() {
        for n in
            ["MAX_RETRIES", "num_retries", "maxAttempts", "retry_limit", "RETRIES", "max_tries", "MAX_RETRY"]
        {
            assert!(is_retry_count_name(n), "{n}");
        }
        for n in [
            "RETRY_DELAY_MS",
            "retry_on_timeout",
            "retry_after",
            "max_connections",
            "retrieve_count",
            "backoff_base",
            // A token bucket's cost per retry goes up to allow fewer retries.
            "DEFAULT_RETRY_COST",
            "retry_bucket_capacity",
        ] {
            assert!(!is_retry_count_name(n), "{n}");
        }
    }

    #[test]
    fn consts_statics_and_struct_literal_fields_are_read_with_their_lines() {
        let text = "pub const MAX_RETRIES: u32 = 1_0;\nstatic RETRY_DELAY_MS: u64 = 5;\nlet s = S { num_retries: 3, name: 4 };\nlet t = T {\n    max_attempts: Some(7u8),\n};\nfn f(retries: u32) {}\n// const RETRIES: u32 = 9;\n";
        let got: Vec<(String, f64, u32)> =
            named_counts(text).into_iter().map(|c| (c.name, c.value, c.line)).collect();
        assert_eq!(
            got,
            [
                ("MAX_RETRIES".into(), 10.0, 1),
                ("num_retries".into(), 3.0, 3),
                ("max_attempts".into(), 7.0, 5)
            ]
        );
    }

    #[test]
    fn defaults_of_environment_reads_and_of_absent_settings_are_read() {
        let text = "let c = C {\n    max_retries: parse_env_var(2, \"APP_MAX_RETRIES\"),\n    num_retries: env_or(\"APP_RETRIES\", 4),\n    retry_limit: std::env::var(\"R\").ok().and_then(|v| v.parse().ok()).unwrap_or(6),\n    max_retries: cfg.retries.unwrap_or(Some(8)),\n    max_retries: lookup(3, \"lower_case_is_no_variable\"),\n    max_retries: pick(3, 4),\n};\n";
        let got: Vec<(String, f64, u32)> =
            named_counts(text).into_iter().map(|c| (c.name, c.value, c.line)).collect();
        assert_eq!(
            got,
            [
                ("max_retries".into(), 2.0, 2),
                ("num_retries".into(), 4.0, 3),
                ("retry_limit".into(), 6.0, 4),
                ("max_retries".into(), 8.0, 5)
            ]
        );
    }

    #[test]
    fn only_an_unlinked_raise_on_a_touched_line_is_reported() {
        let base = named_counts("const MAX_RETRIES: u32 = 3;\nconst RETRIES: u32 = 5;\n");
        let head = named_counts("const MAX_RETRIES: u32 = 10;\nconst RETRIES: u32 = 2;\n");
        let found = decide("src/lib.rs", &base, &head, |_| true, |_| false);
        assert_eq!(found.len(), 1, "{found:?}");
        let (at, c) = &found[0];
        assert_eq!((at.line, c.severity), (1, Severity::Error), "the name says retry: it blocks");
        assert!(
            c.message.starts_with("`MAX_RETRIES` raised from 3 to 10, and no retry whose attempt count"),
            "{}",
            c.message
        );
        assert!(
            decide("src/lib.rs", &base, &head, |_| true, |c| c.name == "MAX_RETRIES").is_empty(),
            "linked: the retry reports it"
        );
        assert!(
            decide("src/lib.rs", &base, &head, |_| false, |_| false).is_empty(),
            "an untouched line is not the change's"
        );
        assert!(
            decide("src/lib.rs", &[], &head, |_| true, |_| false).is_empty(),
            "a new name has no base value to exceed"
        );
    }

    /// A match arm that tests `retries: 1` sets nothing; a struct literal
    /// with the same field does.
    #[test]
    fn struct_pattern_fields_are_not_settings() {
        let text = "fn f(e: E) -> S {\n    match e {\n        E::Retryable {\n            retries: 1,\n            ..\n        } => S {\n            retries: 2,\n        },\n        _ => todo!(),\n    }\n}\n";
        let got: Vec<(String, f64, u32)> =
            named_counts(text).into_iter().map(|c| (c.name, c.value, c.line)).collect();
        assert_eq!(got, [("retries".into(), 2.0, 7)]);
    }

    /// A new occurrence inserted before an unchanged one is new, not the
    /// unchanged one raised; an edited one is still compared.
    #[test]
    fn an_inserted_occurrence_is_not_a_raise_of_its_neighbour() {
        let nc = |value: f64, line: u32| NamedCount { name: "num_retries".into(), value, line };
        let base = [nc(0.0, 10)];
        let head = [nc(1.0, 10), nc(0.0, 14)];
        assert!(decide("src/lib.rs", &base, &head, |l| l == 10, |_| false).is_empty());
        let head = [nc(1.0, 10), nc(3.0, 14)];
        let found = decide("src/lib.rs", &base, &head, |_| true, |_| false);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0.value, 1.0);
    }
}
