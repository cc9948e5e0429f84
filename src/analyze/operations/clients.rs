//! Client-wide retry policies: a client, transport, adapter or middleware
//! built to retry every request sent through it (`form: [client]` in
//! `rules/operations/model.yml`). The walker records one where it is built;
//! here are the names the client is held under (the variable it is
//! assigned to, the receiver it is installed on, the typed client it is
//! registered for), followed through the scope's assignments, so that the
//! policy covers the requests sent through that client and not every
//! request beside it.

use std::sync::LazyLock;

use regex::Regex;

use super::model::Retry;
use super::syntax::receiver;

/// A client (a transport, an adapter, a middleware) built to retry every
/// request sent through it: it covers the requests of its file, and of its
/// package where a package is a directory (Go), that do not bypass every
/// client (a plain library's module-level functions).
#[derive(Debug, Clone)]
pub(crate) struct ClientPolicy {
    pub(crate) retry: Retry,
    /// Every method, or only idempotent ones.
    pub(crate) every_method: bool,
    pub(crate) bypass: Vec<String>,
    /// The directory whose files share it (Go), else only its own file.
    pub(crate) package: Option<String>,
    /// The names the client is held under where it is built (the variable
    /// it is assigned to, the receiver it is installed on, the typed client
    /// it is registered for); [`client_names`] follows them through the
    /// scope's assignments. Empty: it could not be told, and the policy
    /// covers every request in its scope.
    pub(crate) seeds: Vec<String>,
    /// Only values derived through these calls are the retrying client
    /// (`rc.StandardClient()`); the client's own calls are the library
    /// analyzer's to judge.
    pub(crate) through: Vec<String>,
    /// The function that builds it, whose callers get the client when it
    /// returns it.
    pub(crate) builder: String,
}

/// The target a line assigns or declares (`rc := ..`, `self.s = ..`,
/// `val c = ..`, a keyed `hc: ..`).
static TARGET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:(?:var|let|const|val|final|private|public|readonly|static)\s+)*(?:[A-Za-z_][\w<>\[\]]*\s+)?([$@]?[A-Za-z_][\w.@$>-]*)(?:\s*:=|\s*=[^=>]|:\s)")
        .unwrap_or_else(|e| panic!("constant pattern: {e}"))
});

/// A method called on a receiver: (receiver, method).
static CALL_ON: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"([$@]?[A-Za-z_][\w.@$>-]*)\.(\w+)\s*\(").unwrap_or_else(|e| panic!("constant pattern: {e}"))
});

/// A name's last segment (`self.session` -> `session`, `@conn` -> `conn`).
fn last(x: &str) -> String {
    x.rsplit(['.', '>', '@', '$']).next().unwrap_or(x).trim_start_matches(['@', '$']).to_string()
}

/// The seeds of a client used through an adapter (`through`, as
/// `rc.StandardClient()`) that also send themselves in `texts`
/// (`c.client.Do(req)`). The library reader judges such sends where it
/// reads the request's method; the model covers them only where that
/// method comes from the sender's callers, which the reader does not see.
pub(crate) fn self_senders(c: &ClientPolicy, texts: &[&str]) -> Vec<String> {
    if c.through.is_empty() {
        return Vec::new();
    }
    let sends = [".Do(", ".Get(", ".Post(", ".PostForm(", ".Head("];
    c.seeds
        .iter()
        .filter(|n| {
            let calls: Vec<String> = sends.iter().map(|s| format!("{n}{s}")).collect();
            texts.iter().any(|t| {
                calls.iter().any(|call| {
                    t.match_indices(call.as_str()).any(|(at, _)| {
                        !t[..at].chars().next_back().is_some_and(|ch| ch.is_alphanumeric() || ch == '_')
                    })
                })
            })
        })
        .cloned()
        .collect()
}

/// The names the line that builds a client-wide policy holds it under:
/// the target it assigns (`rc := retryablehttp.NewClient()`), the receiver
/// of the call it is passed to or chained on (`self.session.mount(..)`,
/// `http.AddStandardResilienceHandler()`), and a typed client's type
/// (`AddHttpClient<OrdersClient>()`).
pub(crate) fn client_seeds(line: &str, callee: &str) -> Vec<String> {
    static TYPED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"AddHttpClient<\s*(?:\w+\s*,\s*)?(\w+)\s*>")
            .unwrap_or_else(|e| panic!("constant pattern: {e}"))
    });
    let mut out = Vec::new();
    if let Some(m) = TYPED.captures(line) {
        out.push(m[1].to_string());
        return out;
    }
    if let Some(m) = TARGET.captures(line) {
        out.push(last(&m[1]));
    } else if let Some(m) = CALL_ON.captures_iter(line).find(|m| INSTALLS.contains(&&m[2])) {
        out.push(last(&m[1]));
    }
    let lib = receiver(callee);
    out.retain(|n| n.len() > 1 && n != lib && !matches!(n.as_str(), "self" | "this" | "return" | "services"));
    out
}

/// Methods that install a client or a policy on their receiver
/// (`session.mount(.., adapter)`, `builder.Use(mw)`).
const INSTALLS: &[&str] = &[
    "mount",
    "use",
    "Use",
    "install",
    "register",
    "WithHTTPClient",
    "SetHTTPClient",
    "setHttpClient",
    "httpClient",
    "with_http_client",
    "handler",
    "push",
    "setTransport",
    "SetTransport",
];

/// The lines of `text`, with a call's arguments written over several lines
/// joined to the line that opens it (`self.c = Client(\n transport=t,\n)`
/// is one line), so that an argument is seen with the target it is
/// assigned to. Parentheses and brackets only: braces open blocks.
fn logical_lines(text: &str) -> Vec<String> {
    const MAX_JOINED: usize = 2_000;
    let mut out: Vec<String> = Vec::new();
    let mut open = 0i32;
    for line in text.lines() {
        let joining = open > 0 && out.last().is_some_and(|l| l.len() < MAX_JOINED);
        if joining {
            if let Some(last) = out.last_mut() {
                last.push(' ');
                last.push_str(line.trim());
            }
        } else {
            open = 0;
            out.push(line.to_string());
        }
        for c in line.chars() {
            match c {
                '(' | '[' => open += 1,
                ')' | ']' => open -= 1,
                _ => {}
            }
        }
        open = open.max(0);
    }
    out
}

/// The names a client-wide policy's client is held under in `texts` (its
/// scope's files), followed from its seeds through assignments (`x := rc`,
/// `HTTPClient: rc.StandardClient()`, `self.s = s`), installations
/// (`s.mount(.., adapter)`) and its builder's callers (`c: newClient()`),
/// a few steps deep.
pub(crate) fn client_names(c: &ClientPolicy, texts: &[&str]) -> Vec<String> {
    static KEYED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*([A-Za-z_]\w*)\s*(?::|=)\s*&?[\w.]*$")
            .unwrap_or_else(|e| panic!("constant pattern: {e}"))
    });
    let mentions = |line: &str, name: &str, through: &[String]| -> bool {
        let mut from = 0;
        while let Some(i) = line[from..].find(name) {
            let at = from + i;
            let end = at + name.len();
            let before = line[..at].chars().next_back();
            let after = line[end..].chars().next();
            let word = !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                && !after.is_some_and(|c| c.is_alphanumeric() || c == '_');
            if word
                && (through.is_empty() || through.iter().any(|t| line[end..].starts_with(&format!(".{t}"))))
            {
                return true;
            }
            from = end;
        }
        false
    };
    let mut names: Vec<String> = Vec::new();
    let mut frontier: Vec<String> = c.seeds.clone();
    let mut first = true;
    for _ in 0..4 {
        let mut next = Vec::new();
        for text in texts {
            for line in logical_lines(text) {
                let line = line.as_str();
                let through: &[String] = if first { &c.through } else { &[] };
                if !frontier.iter().any(|n| mentions(line, n, through)) {
                    continue;
                }
                if let Some(m) = TARGET.captures(line) {
                    next.push(last(&m[1]));
                }
                // A field or argument given it: `hc: rc.StandardClient()`,
                // `Session(adapter=a)`.
                for n in &frontier {
                    let mut from = 0;
                    while let Some(i) = line[from..].find(n.as_str()) {
                        let at = from + i;
                        from = at + n.len();
                        let seg = line[..at].rsplit(['{', '(', ',', ';']).next().unwrap_or("");
                        if let Some(k) = KEYED.captures(seg) {
                            next.push(k[1].to_string());
                        }
                    }
                }
                for m in CALL_ON.captures_iter(line) {
                    if INSTALLS.contains(&&m[2]) {
                        next.push(last(&m[1]));
                    }
                }
                if line.trim_start().starts_with("return") && !c.builder.is_empty() {
                    next.push(c.builder.clone());
                }
            }
        }
        if !first || c.through.is_empty() {
            names.extend(frontier.iter().cloned());
        }
        first = false;
        next.retain(|n| {
            n.len() > 1 && !names.contains(n) && !matches!(n.as_str(), "self" | "this" | "err" | "ctx")
        });
        next.sort();
        next.dedup();
        if next.is_empty() {
            frontier.clear();
            break;
        }
        frontier = next;
    }
    // The last step's names, when the steps ran out before the names did.
    names.extend(frontier);
    names.sort();
    names.dedup();
    names
}
