//! What operation a retry covers, and when a retry the change removed and a
//! new one cover the same operation.
//!
//! Most of a retry's checks compare one base site with one head site. Two
//! rules reach further: a new retry that replaces removed retries which all
//! jittered loses their jitter (`jitter-removed`, not a new retry's
//! `retry-without-jitter` warning), and a new retry that takes over writes
//! the removed retries already re-sent is no widening (its
//! `retry-non-idempotent` is dropped). Both are right only when the code
//! relates the two retries: deleting an unrelated jittered retry must not
//! turn a new retry's warning into a blocking finding, and a removed retry of
//! `POST /a` says nothing about a new retry of `POST /b`. So a removed retry
//! and a new one are paired only when they cover the same operation, and
//! when the model cannot tell, they are not.
//!
//! What a retry covers is read from the code it retries, as keys
//! ([`Ops`]):
//! - `req METHOD TARGET`: a request with a known method and a URL or path
//!   written in the code (a literal, a `format!` template, a constant):
//!   `client.post(format!("{}/orders/{id}", self.base))` is
//!   `req POST /orders/{}`. The scheme and host are dropped, so a base URL
//!   moved into a field keeps the key;
//! - `call NAME`: a function or method the retried code calls by a name that
//!   says what it does (`api::create_order(..)`, `s3.put_object()`); names
//!   every client or type has (`send`, `execute`, `get`, `clone`, `new`) say
//!   nothing and are left out;
//! - `call Type::NAME`: a method of the site's own type (`self.submit(..)`
//!   in `Client::sync` is `call Client::submit`).
//!
//! Two retries cover the same operation ([`Removed::paired`]) when they share
//! a key, when one retries a call of the function that held the other
//! (a retry moved up into the caller), when the function that held the
//! removed retry now calls the function that holds the new one (per-endpoint
//! retries folded into one shared retry), or when the new retry is installed
//! on a client and the removed retry's request is still sent from where it
//! was, now through that client.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::OnceLock;

use syn::Expr;

/// The operation keys of a retry site (see the module docs).
pub(crate) type Ops = BTreeSet<String>;

/// Names that do not say which operation a call performs: HTTP builder and
/// client methods every request goes through, the standard library's
/// conversions and combinators, retry libraries' own calls, and the names a
/// retry helper gives the operation it is handed (`op()`, `f()`). A call by
/// one of these is no evidence that two retries cover the same thing.
const GENERIC: &[&str] = &[
    // HTTP clients and request builders.
    "send",
    "execute",
    "call",
    "request",
    "fetch",
    "get",
    "post",
    "put",
    "patch",
    "delete",
    "head",
    "json",
    "form",
    "body",
    "header",
    "headers",
    "query",
    "bearer_auth",
    "basic_auth",
    "timeout",
    "build",
    "builder",
    "text",
    "bytes",
    "error_for_status",
    "status",
    "try_clone",
    "version",
    "method",
    "url",
    "uri",
    "multipart",
    "send_json",
    "send_string",
    "send_form",
    "send_bytes",
    "response",
    "client",
    "connect",
    // The standard library and futures.
    "new",
    "default",
    "from",
    "into",
    "try_from",
    "try_into",
    "clone",
    "cloned",
    "to_string",
    "to_owned",
    "as_ref",
    "as_mut",
    "as_str",
    "as_slice",
    "as_deref",
    "borrow",
    "borrow_mut",
    "deref",
    "lock",
    "read",
    "write",
    "unwrap",
    "unwrap_or",
    "unwrap_or_default",
    "unwrap_or_else",
    "expect",
    "map",
    "map_err",
    "and_then",
    "or_else",
    "ok",
    "err",
    "ok_or",
    "ok_or_else",
    "is_ok",
    "is_err",
    "is_some",
    "is_none",
    "iter",
    "into_iter",
    "iter_mut",
    "collect",
    "len",
    "is_empty",
    "push",
    "pop",
    "insert",
    "remove",
    "contains",
    "contains_key",
    "entry",
    "extend",
    "sleep",
    "spawn",
    "now",
    "elapsed",
    "boxed",
    "then",
    "poll",
    "context",
    "with_context",
    "parse",
    "join",
    "split",
    "trim",
    "drop",
    "run",
    "wait",
    "await",
    "block_on",
    "from_millis",
    "from_secs",
    "duration",
    "min",
    "max",
    "load",
    "store",
    "fetch_add",
    "fetch_sub",
    "random",
    "gen",
    "gen_range",
    "thread_rng",
    "rng",
    "jitter",
    "kind",
    "code",
    "message",
    "source",
    "log",
    "trace",
    "debug",
    "info",
    "warn",
    "error",
    // What a retry helper calls the operation it is handed.
    "op",
    "f",
    "func",
    "operation",
    "fut",
    "future",
    "task",
    "action",
    "make",
    "attempt",
    "callback",
    "cb",
    "closure",
];

/// Methods that hand back the value they are called on (a clone, a lock
/// guard, a reference): `self.api.clone().create_order(..)` calls
/// `create_order` on `self.api` as much as without the `clone()`.
const TRANSPARENT: &[&str] = &[
    "clone",
    "lock",
    "read",
    "write",
    "borrow",
    "borrow_mut",
    "as_ref",
    "as_mut",
    "deref",
    "get_ref",
    "get_mut",
    "unwrap",
    "expect",
    "inner",
];

/// Whether a name says nothing about the operation a call performs. Read
/// for every call [`super::syntax::body_facts`] visits, so the names are
/// looked up in a set built once.
fn is_generic(name: &str) -> bool {
    static NAMES: OnceLock<HashSet<&'static str>> = OnceLock::new();
    let names = NAMES.get_or_init(|| {
        let setters = super::libs::LIBRARIES
            .iter()
            .flat_map(|l| l.by_value_setters().iter().chain(l.mutating_setters()));
        GENERIC.iter().chain(super::libs::call_names()).chain(setters).copied().collect()
    });
    names.contains(name)
        // Questions and conversions (`e.is_timeout()`, `status.as_u16()`)
        // and setters inspect or configure; they perform nothing.
        || ["is_", "has_", "as_", "to_", "into_", "with_", "set_"].iter().any(|p| name.starts_with(p))
        // A tuple struct or variant (`Ok(..)`, `Error::Http(..)`).
        || name.starts_with(|c: char| c.is_ascii_uppercase())
        // The retry itself, not what it retries.
        || ["retry", "retries", "backoff"].iter().any(|w| name.contains(w))
}

/// `call NAME` for a function or method called by a telling name.
pub(crate) fn call_key(name: &str) -> Option<String> {
    (!is_generic(name)).then(|| format!("call {name}"))
}

/// A method that passes its receiver through (`clone`, `as_ref`, `into`):
/// no operation of its own.
fn says_nothing(name: &str) -> bool {
    TRANSPARENT.contains(&name) || ["to_string", "to_owned", "into"].contains(&name)
}

/// A call of a method on `self`, before the site's type is known
/// ([`resolve`] makes it `call Type::NAME`).
pub(crate) fn self_call_key(name: &str) -> Option<String> {
    (!says_nothing(name)).then(|| format!("self {name}"))
}

/// A method called on a field of `self` (`self.client.get(url)`): `call
/// Type::NAME`, with the type named after the field (`client` -> `Client`,
/// `http_client` -> `HttpClient`), as a field holding the one value of a
/// type usually is. It relates a retry that moved into that type's method
/// (a shared sender the endpoints now call), whatever the method's name;
/// the name alone (`get`) says nothing.
pub(crate) fn field_call_key(field: &str, name: &str) -> Option<String> {
    let nothing = says_nothing(name);
    let ty: String = field
        .split('_')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect();
    (!nothing && !ty.is_empty()).then(|| format!("call {ty}::{name}"))
}

/// Whether a method called on this receiver is the first call of its chain
/// (the operation, not a setting of it): a receiver that is a value, or a
/// value seen through a [`TRANSPARENT`] call. `s3.put_object().bucket(b)`
/// calls `put_object`; `bucket` configures its result.
pub(crate) fn heads_a_chain(receiver: &Expr) -> bool {
    match strip(receiver) {
        Expr::MethodCall(m) => {
            TRANSPARENT.contains(&m.method.to_string().as_str()) && heads_a_chain(&m.receiver)
        }
        _ => true,
    }
}

fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Await(a) => strip(&a.base),
        Expr::Try(t) => strip(&t.expr),
        Expr::Paren(p) => strip(&p.expr),
        Expr::Group(g) => strip(&g.expr),
        Expr::Reference(r) => strip(&r.expr),
        _ => e,
    }
}

/// `req METHOD TARGET` for a request whose target is written in the code.
pub(crate) fn request_key(method: &str, target: &Expr) -> Option<String> {
    let t = target_of(target)?;
    Some(format!("req {} {t}", method.to_ascii_uppercase()))
}

/// The path a request is sent to, when the code writes it (a literal, a
/// `format!` template, a `join` onto a base): `/orders/{}`.
pub(crate) fn target_path(e: &Expr) -> Option<String> {
    target_of(e).filter(|t| t.starts_with('/'))
}

/// The local a request target is read from (`url`, `&url`, `url.clone()`,
/// `url.as_str()`), for a path the local was given earlier.
pub(crate) fn local_name(e: &Expr) -> Option<String> {
    match e {
        Expr::Reference(r) => local_name(&r.expr),
        Expr::Paren(p) => local_name(&p.expr),
        Expr::MethodCall(m)
            if m.args.is_empty()
                && ["as_str", "as_ref", "clone", "to_owned"].iter().any(|n| m.method == n) =>
        {
            local_name(&m.receiver)
        }
        Expr::Path(p) if p.qself.is_none() && p.path.segments.len() == 1 => {
            Some(p.path.segments[0].ident.to_string())
        }
        _ => None,
    }
}

/// The target of a request as a key: a path (`/orders/{}`) from a literal
/// or a `format!` template, or the name of a constant (`ORDERS_URL`).
fn target_of(e: &Expr) -> Option<String> {
    match e {
        Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => normalize(&s.value()),
        Expr::Reference(r) => target_of(&r.expr),
        // `base.join("/token")?`: the URL the `?` unwraps.
        Expr::Try(t) => target_of(&t.expr),
        Expr::Paren(p) => target_of(&p.expr),
        Expr::Group(g) => target_of(&g.expr),
        Expr::Macro(m) if m.mac.path.segments.last().is_some_and(|s| s.ident == "format") => {
            let first = m.mac.tokens.clone().into_iter().next()?;
            let lit: syn::LitStr = syn::parse2(first.into()).ok()?;
            normalize(&lit.value())
        }
        Expr::MethodCall(m)
            if m.args.is_empty()
                && ["as_str", "as_ref", "to_string", "to_owned", "clone"].iter().any(|n| m.method == n) =>
        {
            target_of(&m.receiver)
        }
        // `base.join("orders")`: a path relative to a base URL.
        Expr::MethodCall(m) if m.method == "join" && m.args.len() == 1 => {
            let rel = target_of(&m.args[0]).or_else(|| match &m.args[0] {
                Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => {
                    normalize(&format!("/{}", s.value()))
                }
                _ => None,
            })?;
            Some(rel)
        }
        Expr::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?.ident.to_string();
            let is_const = last.len() > 1
                && last.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                && last.chars().any(|c| c.is_ascii_uppercase());
            is_const.then_some(last)
        }
        _ => None,
    }
}

/// A URL or path as a key: placeholders as `{}`, without scheme, host,
/// query or a trailing slash; `None` unless a path with a written part is
/// left (`retry-after` read from a header map is no request target).
fn normalize(s: &str) -> Option<String> {
    let mut t = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                t.push('{');
            }
            '{' => {
                for d in chars.by_ref() {
                    if d == '}' {
                        break;
                    }
                }
                t.push_str("{}");
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                t.push('}');
            }
            _ => t.push(c),
        }
    }
    let t = t.split(['?', '#']).next().unwrap_or("");
    let t = match t.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("", |i| &rest[i..]),
        None => t.trim_start_matches("{}"),
    };
    let t = t.trim_end_matches('/');
    // A path of placeholders only (`format!("{}/{}", base, path)`) could be
    // any request.
    let telling = t.chars().any(|c| !matches!(c, '/' | '{' | '}'));
    (t.starts_with('/') && telling).then(|| t.to_string())
}

/// The keys of `facts_ops` for a site in `item`: `self NAME` becomes
/// `call Type::NAME` with the site's type (the segment before the
/// function's name), or is dropped in a free function.
pub(crate) fn resolve<'s>(item: &str, facts_ops: impl IntoIterator<Item = &'s String>) -> Ops {
    let ty = item.rsplit("::").nth(1);
    facts_ops
        .into_iter()
        .filter_map(|k| match k.strip_prefix("self ") {
            Some(name) => ty.map(|t| format!("call {t}::{name}")),
            None => Some(k.clone()),
        })
        .collect()
}

/// The keys a call of the function at `item` leaves in its caller:
/// `call Type::NAME` (from `self.NAME(..)`) and, for a telling name,
/// `call NAME`.
fn keys_of_item(item: &str) -> Vec<String> {
    let mut parts = item.rsplit("::");
    let Some(name) = parts.next() else { return Vec::new() };
    let mut keys: Vec<String> = call_key(name).into_iter().collect();
    if let Some(ty) = parts.next() {
        keys.push(format!("call {ty}::{name}"));
    }
    keys
}

/// One retry, as the pairing reads it.
pub(crate) struct Retry<'s> {
    pub(crate) item: &'s str,
    pub(crate) ops: &'s Ops,
    /// Installed on a client: it covers every request the client sends.
    pub(crate) client_wide: bool,
}

impl<'s> Retry<'s> {
    pub(crate) fn of(site: &'s super::sites::Site) -> Self {
        Retry { item: &site.item, ops: &site.ops, client_wide: site.policy.client_wide }
    }
}

/// The retries a change removed, indexed by what relates a new retry to
/// them, so that pairing each new retry costs what it finds rather than the
/// number of removed retries (a change may delete a file of thousands).
pub(crate) struct Removed<'s> {
    /// By each key of the removed retry: a new retry that shares it, or
    /// whose function the removed retry called.
    by_key: HashMap<&'s str, Vec<usize>>,
    /// By the keys a call of the removed retry's function leaves: a new
    /// retry that retries that call (moved up into the caller).
    by_call_of_item: HashMap<String, Vec<usize>>,
    /// By what the removed retry's function does at the head: it now calls
    /// the function that holds the new retry (folded into it).
    by_now: HashMap<&'s str, Vec<usize>>,
    /// Removed retries whose request is still sent from their function at
    /// the head: a new retry installed on a client now covers it.
    still_sent: Vec<usize>,
    /// By the types whose methods the removed retry retried (`call
    /// Client::get_request` gives `Client`): a new retry inside a method of
    /// that type took the retry into the type (the per-call retries folded
    /// into the client's own sender, renamed on the way).
    by_type_called: HashMap<&'s str, Vec<usize>>,
}

/// The type of a `call Type::NAME` key.
fn called_type(key: &str) -> Option<&str> {
    key.strip_prefix("call ")?.rsplit_once("::").map(|(ty, _)| ty)
}

impl<'s> Removed<'s> {
    /// Indexes `removed`, each with what its function does at the head (its
    /// keys; `None` when the function is gone or could not be read).
    pub(crate) fn new(removed: &[(Retry<'s>, Option<&'s Ops>)]) -> Self {
        let mut r = Removed {
            by_key: HashMap::new(),
            by_call_of_item: HashMap::new(),
            by_now: HashMap::new(),
            still_sent: Vec::new(),
            by_type_called: HashMap::new(),
        };
        for (i, (retry, now)) in removed.iter().enumerate() {
            for k in retry.ops {
                r.by_key.entry(k.as_str()).or_default().push(i);
                if let Some(ty) = called_type(k) {
                    r.by_type_called.entry(ty).or_default().push(i);
                }
            }
            for k in keys_of_item(retry.item) {
                r.by_call_of_item.entry(k).or_default().push(i);
            }
            if let Some(now) = now {
                for k in now.iter() {
                    r.by_now.entry(k.as_str()).or_default().push(i);
                }
                if retry.ops.iter().any(|k| k.starts_with("req ") && now.contains(k)) {
                    r.still_sent.push(i);
                }
            }
        }
        r
    }

    /// The removed retries (their indices, in order) that cover the same
    /// operation as the new retry `new`.
    pub(crate) fn paired(&self, new: &Retry) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for k in new.ops {
            out.extend(self.by_key.get(k.as_str()).into_iter().flatten());
            out.extend(self.by_call_of_item.get(k).into_iter().flatten());
        }
        for k in keys_of_item(new.item) {
            out.extend(self.by_key.get(k.as_str()).into_iter().flatten());
            out.extend(self.by_now.get(k.as_str()).into_iter().flatten());
        }
        if new.client_wide {
            out.extend(&self.still_sent);
        }
        if let Some(ty) = new.item.rsplit("::").nth(1) {
            out.extend(self.by_type_called.get(ty).into_iter().flatten());
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Whether two retries are related by their own keys: they share one, or
/// one retries a call of the function that holds the other.
fn related(a: &Retry, b: &Retry) -> bool {
    a.ops.iter().any(|k| b.ops.contains(k))
        || keys_of_item(a.item).iter().any(|k| b.ops.contains(k))
        || keys_of_item(b.item).iter().any(|k| a.ops.contains(k))
}

/// Whether two sites of one file, in different functions, are known to
/// cover different operations: both say what they retry, and nothing of it
/// is shared. A base site and a head site in different functions are taken
/// for one renamed site only when they are not.
pub(crate) fn known_unrelated(a: &Retry, b: &Retry) -> bool {
    !a.ops.is_empty() && !b.ops.is_empty() && !related(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(src: &str) -> Expr {
        syn::parse_str(src).unwrap_or_else(|e| panic!("{src}: {e}"))
    }

    fn ops(keys: &[&str]) -> Ops {
        keys.iter().map(|k| k.to_string()).collect()
    }

    #[test]
    fn a_target_is_a_path_whatever_the_base_url() {
        let key = |m: &str, e: &str| request_key(m, &expr(e));
        assert_eq!(key("post", "\"https://api.example.com/orders/\"").as_deref(), Some("req POST /orders"));
        assert_eq!(
            key("get", "format!(\"{}/orders/{id}?x=1\", self.base)").as_deref(),
            Some("req GET /orders/{}")
        );
        assert_eq!(key("get", "&format!(\"{base}/orders/{}\", id)").as_deref(), Some("req GET /orders/{}"));
        assert_eq!(key("get", "self.base.join(\"prices\")").as_deref(), Some("req GET /prices"));
        assert_eq!(key("post", "ORDERS_URL").as_deref(), Some("req POST ORDERS_URL"));
        for none in [
            "url",
            "\"retry-after\"",
            "format!(\"{}{}\", base, path)",
            "format!(\"{}/{}\", base, path)",
            "\"https://api.example.com\"",
        ] {
            assert_eq!(key("get", none), None, "{none}");
        }
    }

    #[test]
    fn a_method_on_a_field_names_the_fields_type() {
        assert_eq!(field_call_key("client", "get").as_deref(), Some("call Client::get"));
        assert_eq!(field_call_key("http_client", "send").as_deref(), Some("call HttpClient::send"));
        assert_eq!(field_call_key("client", "clone"), None);
    }

    #[test]
    fn generic_names_are_no_operation() {
        assert_eq!(call_key("create_order").as_deref(), Some("call create_order"));
        for name in ["send", "execute", "clone", "new", "op", "Ok", "with_max_times", "retry_with_backoff"] {
            assert_eq!(call_key(name), None, "{name}");
        }
        assert_eq!(
            resolve("net::Client::sync", &ops(&["self submit", "call put_object"])),
            ops(&["call Client::submit", "call put_object"])
        );
        assert!(resolve("sync", &ops(&["self submit"])).is_empty(), "no type to resolve `self` with");
        assert!(heads_a_chain(&expr("self.api")));
        assert!(heads_a_chain(&expr("self.api.lock().await")));
        assert!(!heads_a_chain(&expr("s3.put_object()")));
    }

    /// Whether the removed retry and the new one are paired.
    fn same_operation(removed: &Retry, now: Option<&Ops>, new: &Retry) -> bool {
        let removed = Retry { item: removed.item, ops: removed.ops, client_wide: removed.client_wide };
        Removed::new(&[(removed, now)]).paired(new) == [0]
    }

    #[test]
    fn retries_are_paired_only_by_what_they_cover() {
        let prices = ops(&["req GET /prices"]);
        let stock = ops(&["req GET /stock"]);
        let none = Ops::new();
        let r = |item, ops| Retry { item, ops, client_wide: false };
        let removed = r("prices", &prices);
        assert!(!same_operation(&removed, None, &r("stock", &stock)), "different requests");
        assert!(!same_operation(&removed, None, &r("stock", &none)), "nothing known is not the same");
        let both = ops(&["req GET /prices", "req GET /stock"]);
        assert!(same_operation(&removed, None, &r("sync_all", &both)));
        // A retry moved up into the caller retries a call of the function
        // that held it.
        let calls_prices = ops(&["call prices"]);
        assert!(same_operation(&removed, None, &r("refresh", &calls_prices)));
        // The function that held it now calls the shared retry.
        let now = ops(&["call Client::send_json"]);
        assert!(same_operation(&removed, Some(&now), &r("Client::send_json", &none)));
        assert!(!same_operation(&removed, Some(&now), &r("Other::load", &none)));
        // A layer on the client takes over a request still sent from where
        // the removed retry was; a closure retry elsewhere does not.
        let layer = Retry { item: "http", ops: &none, client_wide: true };
        assert!(same_operation(&removed, Some(&prices), &layer));
        assert!(!same_operation(&removed, Some(&stock), &layer));
        assert!(!same_operation(&removed, Some(&prices), &r("http", &none)));
        assert!(known_unrelated(&removed, &r("stock", &stock)));
        assert!(!known_unrelated(&removed, &r("stock", &none)), "unknown is not unrelated");
    }
}
