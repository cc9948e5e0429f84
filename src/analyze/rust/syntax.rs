//! Small views over syn's tree that the rest of the analyzer speaks in:
//! method-call chains, path tails, line numbers, and text searches inside an
//! expression.

use proc_macro2::Span;
use std::collections::HashMap;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Expr, ExprMethodCall, Lit};

/// 1-based line where a node starts.
pub(crate) fn line_of<T: Spanned>(node: &T) -> u32 {
    span_lines(node.span()).0
}

/// 1-based first and last line of a node.
pub(crate) fn lines_of<T: Spanned>(node: &T) -> (u32, u32) {
    span_lines(node.span())
}

fn span_lines(span: Span) -> (u32, u32) {
    let start = span.start().line as u32;
    let end = span.end().line as u32;
    (start.max(1), end.max(start).max(1))
}

/// The last `n` segments of a path, as strings: `backon::ExponentialBuilder::default`
/// with n = 2 gives `["ExponentialBuilder", "default"]`.
pub(crate) fn last_segments(path: &syn::Path, n: usize) -> Vec<String> {
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let skip = segs.len().saturating_sub(n);
    segs[skip..].to_vec()
}

/// A method-call chain read left to right: `root.a(..).b(..)` gives the root
/// expression and the calls `[a, b]`.
pub(crate) struct Chain<'a> {
    pub(crate) root: &'a Expr,
    pub(crate) calls: Vec<&'a ExprMethodCall>,
}

/// Unwraps `expr` into its chain. Transparent wrappers (`?`, `.await`,
/// parentheses) between the calls are looked through.
pub(crate) fn chain_of(expr: &Expr) -> Chain<'_> {
    let mut calls = Vec::new();
    let mut cur = expr;
    loop {
        match cur {
            Expr::MethodCall(m) => {
                calls.push(m);
                cur = &m.receiver;
            }
            Expr::Await(a) => cur = &a.base,
            Expr::Try(t) => cur = &t.expr,
            Expr::Paren(p) => cur = &p.expr,
            Expr::Group(g) => cur = &g.expr,
            Expr::Reference(r) => cur = &r.expr,
            _ => break,
        }
    }
    calls.reverse();
    Chain { root: cur, calls }
}

/// The chain that ends in method call `m`.
pub(crate) fn chain_of_call(m: &ExprMethodCall) -> Chain<'_> {
    let mut chain = chain_of(&m.receiver);
    chain.calls.push(m);
    chain
}

/// The single identifier an expression names (`b`, `self.b` gives `b`).
pub(crate) fn ident_of(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Path(p) if p.path.segments.len() == 1 && p.qself.is_none() => {
            Some(p.path.segments[0].ident.to_string())
        }
        Expr::Field(f) => match &f.member {
            syn::Member::Named(i) => Some(i.to_string()),
            syn::Member::Unnamed(_) => None,
        },
        Expr::Reference(r) => ident_of(&r.expr),
        Expr::Paren(p) => ident_of(&p.expr),
        Expr::MethodCall(m) if m.method == "clone" => ident_of(&m.receiver),
        _ => None,
    }
}

/// The entry in a method set for a request whose method cannot be told. It
/// is defined once: every check that treats an unseen method as a possible
/// write compares with this name, never with a spelled-out string.
pub(crate) const UNKNOWN_METHOD: &str = "UNKNOWN";

/// Whether `m` is [`UNKNOWN_METHOD`].
pub(crate) fn is_unknown_method(m: &str) -> bool {
    m == UNKNOWN_METHOD
}

/// Facts about the code inside an expression or block that decide whether a
/// retry is safe: which HTTP methods it sends, whether it sends an
/// Idempotency-Key, whether it reads Retry-After, whether it jitters.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct BodyFacts {
    /// Upper-case HTTP methods seen; [`UNKNOWN_METHOD`] for a request whose
    /// method cannot be told.
    pub(crate) methods: std::collections::BTreeSet<String>,
    /// POSTs judged reads by their written endpoint, each as why (`its
    /// endpoint /v1/t/{}/describe ends in /describe, ..`,
    /// [`crate::analyze::reads`]); they are not in `methods`.
    pub(crate) reads: std::collections::BTreeSet<String>,
    /// Where each POST/PATCH was seen, `(method, line)`, so a client-wide
    /// policy can ask which client sent it ([`super::crate_index`] knows).
    /// A method written where no request site is (a `"POST"` literal) has
    /// a line no site matches and so always counts.
    pub(crate) write_lines: std::collections::BTreeSet<(String, u32)>,
    pub(crate) idempotency_key: bool,
    pub(crate) reads_retry_after: bool,
    pub(crate) uses_randomness: bool,
    /// Functions called by plain name whose name says jitter
    /// (`jitter(attempt)`, `hash_jitter(n)`): whether they randomise is
    /// decided by their bodies where the file defines them
    /// (`Walker::random_through`), not by their names.
    pub(crate) jitter_calls: Vec<String>,
    /// A delay is taken from a backoff policy value (`b.next_backoff()`,
    /// the backoff crate's `Backoff` trait): its jitter is decided where
    /// that value is built, not in this body.
    pub(crate) delay_from_policy: bool,
    /// `is_idempotent()` / `is_safe()` called: retries are gated on the method.
    pub(crate) method_gated: bool,
    /// A request is sent (`.send()`, `.execute(..)`, `request(..)`).
    pub(crate) sends_request: bool,
    /// Functions called by plain name or as `self.name(..)`, to follow once.
    pub(crate) callees: Vec<String>,
    /// `continue` appears.
    pub(crate) has_continue: bool,
    /// Sleeps: the duration expressions passed to `sleep(..)`.
    pub(crate) sleeps: usize,
    /// The request carries a body that cannot be copied: a multipart form
    /// (`.multipart(form)`) or a stream (`Body::wrap_stream(..)`). reqwest's
    /// `Request::try_clone` returns `None` for such a request, so a retry
    /// that re-sends clones of it never sends it twice.
    pub(crate) body_not_cloneable: bool,
    /// `.try_clone()` is called: what is re-sent is a copy of a request
    /// built once, not a request built again on every attempt.
    pub(crate) resends_clones: bool,
    /// What the code sends and calls, as keys that tell one operation from
    /// another ([`super::ops`]); `self NAME` until the site's type is known.
    pub(crate) ops: std::collections::BTreeSet<String>,
}

const HTTP_VERBS: &[&str] = &["get", "post", "put", "patch", "delete", "head"];

/// Collects [`BodyFacts`] from any syntax node.
pub(crate) fn body_facts<'a, T: FactsNode<'a>>(node: &'a T) -> BodyFacts {
    body_facts_within(node, &|_| None)
}

/// [`body_facts`] of a node that reads locals bound outside it (a
/// closure's captures): `outer` gives the path a captured name holds.
pub(crate) fn body_facts_within<'a, T: FactsNode<'a>>(node: &'a T, outer: OuterPaths<'_>) -> BodyFacts {
    let mut v =
        FactsVisitor { facts: BodyFacts::default(), paths: HashMap::new(), aliases: HashMap::new(), outer };
    node.visit_with(&mut v);
    let mut facts = v.facts;
    protocol_reads(&mut facts, || node.tokens());
    facts
}

/// One POST whose body names only protocol reads (a JSON-RPC `eth_call`, a
/// GraphQL `query`; [`crate::analyze::reads::why_read_body`]) is a read:
/// it leaves `methods` for `reads`, with why. Only when it is the one write
/// the code sends, so a second request cannot borrow its body's verdict.
fn protocol_reads(facts: &mut BodyFacts, tokens: impl FnOnce() -> String) {
    let posts: Vec<&(String, u32)> = facts.write_lines.iter().filter(|(m, _)| m == "POST").collect();
    let sites = posts.iter().filter(|(_, line)| *line != 0).count();
    if sites != 1 || facts.write_lines.iter().any(|(m, _)| m == "PATCH") {
        return;
    }
    let Some(why) = crate::analyze::reads::why_read_body(&tokens()) else { return };
    facts.write_lines.retain(|(m, _)| m != "POST");
    facts.methods.remove("POST");
    facts.reads.insert(why);
}

/// The request path a name bound outside the visited node holds, if any.
pub(crate) type OuterPaths<'r> = &'r dyn Fn(&str) -> Option<String>;

/// Nodes [`body_facts`] can read.
pub(crate) trait FactsNode<'a> {
    fn visit_with(&'a self, v: &mut FactsVisitor<'_>);
    /// The node's tokens as text (`json ! ({ "method" : "eth_call" })`).
    fn tokens(&'a self) -> String;
}

impl<'a> FactsNode<'a> for Expr {
    fn visit_with(&'a self, v: &mut FactsVisitor<'_>) {
        v.visit_expr(self);
    }
    fn tokens(&'a self) -> String {
        quote::ToTokens::to_token_stream(self).to_string()
    }
}

impl<'a> FactsNode<'a> for syn::Block {
    fn visit_with(&'a self, v: &mut FactsVisitor<'_>) {
        v.visit_block(self);
    }
    fn tokens(&'a self) -> String {
        quote::ToTokens::to_token_stream(self).to_string()
    }
}

pub(crate) struct FactsVisitor<'r> {
    facts: BodyFacts,
    /// Paths held in locals (`let url = base.join("/oauth/token")?;`), so a
    /// request sent to `url` is judged by the endpoint it was given.
    paths: HashMap<String, Option<String>>,
    /// Locals bound to a chain on another name (`let mut c = client.clone();`):
    /// the name the chain starts from, to tell a client from a container.
    aliases: HashMap<String, String>,
    outer: OuterPaths<'r>,
}

impl FactsVisitor<'_> {
    /// Records a request sent with `verb` to `target`: a method, or, for a
    /// POST whose written endpoint is a read, a read with its reason.
    fn note_request(&mut self, verb: String, target: Option<&Expr>, line: u32) {
        if verb == "POST" {
            let path = target.and_then(|t| {
                let local = super::ops::local_name(t);
                super::ops::target_path(t).or_else(|| {
                    let name = local.as_deref()?;
                    match self.paths.get(name) {
                        Some(held) => held.clone(),
                        None => (self.outer)(name),
                    }
                })
            });
            if let Some(why) = path.as_deref().and_then(crate::analyze::reads::why_read) {
                self.facts.reads.insert(why);
                return;
            }
        }
        if verb == "POST" || verb == "PATCH" {
            self.facts.write_lines.insert((verb.clone(), line));
        }
        self.facts.methods.insert(verb);
    }

    fn note_str(&mut self, s: &str) {
        let lower = s.to_ascii_lowercase();
        if lower == "idempotency-key" || lower == "x-idempotency-key" {
            self.facts.idempotency_key = true;
        }
        if lower == "retry-after" {
            self.facts.reads_retry_after = true;
        }
        let upper = s.to_ascii_uppercase();
        if matches!(upper.as_str(), "POST" | "PATCH") && s.chars().all(|c| c.is_ascii_uppercase()) {
            // No request site is at line 0: a written method always counts.
            self.facts.write_lines.insert((upper.clone(), 0));
            self.facts.methods.insert(upper);
        }
    }

    fn note_ident(&mut self, ident: &str) {
        self.note_name(ident, true);
    }

    /// What a name says. `named_thing` is false for a local variable's
    /// name (a lower-case single-segment path): what it holds is decided by
    /// what it was given, not by what it is called, so `let retry_after =
    /// Duration::from_millis(100)` reads no header and a key in
    /// `idempotency_id` sent as `X-Request-Id` is no Idempotency-Key. A
    /// function or method called (`parse_retry_after(..)`,
    /// `err.retry_after()`) and a constant (`IDEMPOTENCY_HEADER`) still say.
    fn note_name(&mut self, ident: &str, named_thing: bool) {
        if named_thing && contains_ci(ident, "idempotency") {
            self.facts.idempotency_key = true;
        }
        if named_thing && contains_ci(ident, "retry_after") {
            self.facts.reads_retry_after = true;
        }
        if ["rand", "thread_rng", "random", "gen_range", "fastrand", "rng"]
            .iter()
            .any(|w| ident.eq_ignore_ascii_case(w))
            || contains_ci(ident, "jitter")
        {
            self.facts.uses_randomness = true;
        }
    }
}

/// Whether a call is of a function named for jitter by its plain name
/// (`jitter(n)`, `hash_jitter(n)`, `full_jitter(d)`): a function of the
/// crate, whose body says whether it randomises; a library's
/// (`tokio_retry::strategy::jitter`) is written with its path and trusted.
fn is_jitter_call(path: &syn::Path) -> bool {
    path.segments.len() == 1
        && path.segments.first().is_some_and(|s| contains_ci(&s.ident.to_string(), "jitter"))
}

/// A call that waits: `sleep(d)`, `sleep_until(t)`, tokio 0.2's
/// `delay_for(d)`/`delay_until(t)`, and the timer futures of tokio 0.1 and
/// futures-timer (`Delay::new(at)`) and async-io (`Timer::after(d)`).
pub(crate) fn is_timer_call(path: &syn::Path) -> bool {
    let mut names = path.segments.iter().rev().map(|s| s.ident.to_string());
    let Some(last) = names.next() else { return false };
    let before = names.next();
    matches!(last.as_str(), "sleep" | "sleep_ms" | "sleep_until" | "delay_for" | "delay_until")
        || matches!((before.as_deref(), last.as_str()), (Some("Delay"), "new") | (Some("Timer"), "after"))
}

impl<'ast> Visit<'ast> for FactsVisitor<'_> {
    fn visit_expr_method_call(&mut self, m: &'ast ExprMethodCall) {
        let name = m.method.to_string();
        self.note_ident(&name);
        if name == "next_backoff" && m.args.is_empty() {
            self.facts.delay_from_policy = true;
        }
        let sends = match name.as_str() {
            // `tx.send(msg)` on a channel takes an argument; a request's `.send()` does not.
            "send" | "call" => m.args.is_empty(),
            "execute" => true,
            // ureq's and isahc's senders that carry the body.
            "send_json" | "send_string" | "send_form" | "send_bytes" => m.args.len() == 1,
            _ => false,
        };
        // The verb a request chain is sent with, and the target it names.
        let chain_verb = |m: &'ast ExprMethodCall| -> Option<(String, Option<&'ast Expr>, u32)> {
            let chain = chain_of_call(m);
            let verb = chain.calls.iter().find_map(|c| {
                let n = c.method.to_string();
                HTTP_VERBS
                    .contains(&n.as_str())
                    .then(|| (n.to_ascii_uppercase(), c.args.first(), line_of(&c.method)))
            });
            verb.or_else(|| {
                let target = match chain.root {
                    Expr::Call(c) => c.args.first(),
                    _ => None,
                };
                free_verb(chain.root).map(|v| (v, target, line_of(chain.root)))
            })
        };
        match name.as_str() {
            // `.call()` sends a request only on a request builder (ureq's
            // `agent.get(url).call()`); elsewhere it calls a function.
            "call" if sends && chain_verb(m).is_none() => {}
            _ if sends => {
                self.facts.sends_request = true;
                let chain = chain_of_call(m);
                let verb = chain_verb(m);
                let explicit = chain.calls.iter().any(|c| c.method == "request" || c.method == "method");
                match verb {
                    Some((v, target, line)) => self.note_request(v, target, line),
                    None if !explicit && name == "send" => {
                        // `client.execute(req)` / a prebuilt request: method unknown
                        // unless a Method path elsewhere in the body names it.
                        self.facts.methods.insert(UNKNOWN_METHOD.into());
                    }
                    None if explicit => {
                        // `.request(M, url)` / `.method(M)`: the method is the
                        // value given; one not written here (a constant, a
                        // parameter) cannot be told, which is not "none".
                        let given = chain
                            .calls
                            .iter()
                            .filter(|c| c.method == "request" || c.method == "method")
                            .filter_map(|c| c.args.first())
                            .any(|a| method_path(a).is_some() || method_from_literal(a).is_some());
                        if !given {
                            self.facts.methods.insert(UNKNOWN_METHOD.into());
                        }
                    }
                    None => {}
                }
            }
            "post" | "patch" if !m.args.is_empty() => {
                self.note_request(name.to_ascii_uppercase(), m.args.first(), line_of(&m.method));
            }
            _ if sdk_write(&name, &m.receiver, &self.aliases).is_some() => {
                // An SDK or RPC call whose verb writes (`client.submit_order(req)`,
                // `producer.send_messages(batch)`, AWS's `put_item()`): a write
                // whose answer can be lost like a POST's.
                self.facts.methods.insert(format!("{name}()"));
            }
            "is_idempotent" | "is_safe" => self.facts.method_gated = true,
            "multipart" if m.args.len() == 1 => self.facts.body_not_cloneable = true,
            "try_clone" if m.args.is_empty() => self.facts.resends_clones = true,
            _ => {}
        }
        // What operation this is: a request to a target written here, or
        // the first call of a chain by a telling name.
        let verb = HTTP_VERBS.contains(&name.as_str()) && m.args.len() == 1;
        if verb {
            self.facts.ops.extend(super::ops::request_key(&name, &m.args[0]));
        } else if name == "request" && m.args.len() == 2 {
            if let Some(method) = method_path(&m.args[0]) {
                self.facts.ops.extend(super::ops::request_key(&method, &m.args[1]));
            }
        }
        if let Expr::Field(f) = &*m.receiver {
            let on_self_field = matches!(&*f.base, Expr::Path(p) if p.path.is_ident("self"));
            if let (true, syn::Member::Named(field)) = (on_self_field, &f.member) {
                self.facts.ops.extend(super::ops::field_call_key(&field.to_string(), &name));
            }
        }
        let on_self = matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self"));
        if on_self {
            self.facts.ops.extend(super::ops::self_call_key(&name));
            self.facts.callees.push(name);
        } else if super::ops::heads_a_chain(&m.receiver) {
            self.facts.ops.extend(super::ops::call_key(&name));
        }
        syn::visit::visit_expr_method_call(self, m);
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if let Expr::Path(p) = &*c.func {
            if let Some(last) = p.path.segments.last() {
                let name = last.ident.to_string();
                if is_jitter_call(&p.path) {
                    self.facts.jitter_calls.push(name.clone());
                } else {
                    self.note_ident(&name);
                }
                if is_timer_call(&p.path) {
                    self.facts.sleeps += 1;
                }
                if name == "request" || name == "fetch" {
                    self.facts.sends_request = true;
                }
                if name == "wrap_stream" {
                    self.facts.body_not_cloneable = true;
                }
                if let Some(verb) = method_from_call(c) {
                    // `Method::from_bytes(b"POST")`: the method is the literal.
                    if verb == "POST" || verb == "PATCH" {
                        self.facts.write_lines.insert((verb.clone(), line_of(c)));
                    }
                    self.facts.methods.insert(verb);
                }
                if let Some(verb) = free_verb_of_path(&p.path) {
                    // `ureq::post(url)`, `surf::get(url)`, `reqwest::get(url)`.
                    self.facts.sends_request = true;
                    if let Some(target) = c.args.first() {
                        self.facts.ops.extend(super::ops::request_key(&verb, target));
                    }
                    self.note_request(verb, c.args.first(), line_of(c));
                } else {
                    self.facts.ops.extend(super::ops::call_key(&name));
                }
                if p.path.segments.len() == 1 {
                    self.facts.callees.push(name);
                }
                if is_jitter_call(&p.path) {
                    // The name is not read as randomness: only the arguments.
                    for a in &c.args {
                        self.visit_expr(a);
                    }
                    return;
                }
            }
        }
        syn::visit::visit_expr_call(self, c);
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        if let (syn::Pat::Ident(name), Some(init)) = (&l.pat, &l.init) {
            // A name given another value no longer holds a path, and hides
            // any the closure's surroundings gave it.
            self.paths.insert(name.ident.to_string(), super::ops::target_path(&init.expr));
            match root_name(&init.expr) {
                Some(root) => self.aliases.insert(name.ident.to_string(), root),
                None => self.aliases.remove(&name.ident.to_string()),
            };
        }
        syn::visit::visit_local(self, l);
    }

    fn visit_expr_continue(&mut self, c: &'ast syn::ExprContinue) {
        self.facts.has_continue = true;
        syn::visit::visit_expr_continue(self, c);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if let [.., ty, variant] = segs.as_slice() {
            // `Method::POST`, not `Method::from_bytes` (read with its argument).
            if ty == "Method" && HTTP_METHOD_NAMES.iter().any(|m| variant.eq_ignore_ascii_case(m)) {
                let verb = variant.to_ascii_uppercase();
                if verb == "POST" || verb == "PATCH" {
                    let line = p.segments.last().map_or(0, |s| line_of(&s.ident));
                    self.facts.write_lines.insert((verb.clone(), line));
                }
                self.facts.methods.insert(verb);
            }
        }
        let local = segs.len() == 1 && segs[0].chars().any(|c| c.is_ascii_lowercase());
        for s in &segs {
            self.note_name(s, !local);
        }
        if segs.iter().any(|s| s == "RETRY_AFTER") {
            self.facts.reads_retry_after = true;
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_lit(&mut self, l: &'ast Lit) {
        if let Lit::Str(s) = l {
            self.note_str(&s.value());
        }
        syn::visit::visit_lit(self, l);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // Macro bodies (`format!`, `json!`, `tokio::select!`) are token streams:
        // read their string literals and identifiers without parsing them.
        scan_tokens(m.tokens.clone(), self);
        syn::visit::visit_macro(self, m);
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {
        // Nested items are separate retry scopes; they are read on their own.
    }
}

/// HTTP client crates whose free functions send a request by method name.
const HTTP_CRATES: &[&str] = &["ureq", "reqwest", "surf", "isahc", "attohttpc", "minreq"];

/// `ureq::post` -> `POST`.
fn free_verb_of_path(path: &syn::Path) -> Option<String> {
    let n = path.segments.len();
    if n < 2 || !HTTP_CRATES.iter().any(|c| path.segments[n - 2].ident == c) {
        return None;
    }
    let last = path.segments[n - 1].ident.to_string();
    HTTP_VERBS.contains(&last.as_str()).then(|| last.to_ascii_uppercase())
}

/// Receivers that are in-process values in Rust code: a channel's, a
/// collection's or a builder's `send`/`insert`/`register` does not leave
/// the process.
const LOCAL_RECEIVERS: &[&str] = &[
    "self",
    "tx",
    "rx",
    "sender",
    "senders",
    "chan",
    "channel",
    "ch",
    "queue",
    "vec",
    "map",
    "set",
    "list",
    "buf",
    "buffer",
    "out",
    "builder",
    "events",
    "event",
    "registry",
    "metrics",
    "span",
    "cache",
    "headers",
    "params",
    "state",
    "pending",
    "stack",
    "heap",
    "deque",
    "results",
    "items",
    "entries",
    "bytes",
    "writer",
    "stdout",
    "stderr",
    "hasher",
    "digest",
    "ctx",
    "context",
    "bus",
    "broadcast",
    "notify",
    "watch",
    "signal",
    "scope",
    "spawner",
    "executor",
    "runtime",
    "handle",
    "tasks",
];

/// What a receiver names, its chain and references aside: `self.client`
/// is `client`, `client.clone()` is `client`, `&mut c` is `c`.
fn root_name(e: &Expr) -> Option<String> {
    match e {
        Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        Expr::Field(f) => match &f.member {
            syn::Member::Named(n) => Some(n.to_string()),
            syn::Member::Unnamed(_) => root_name(&f.base),
        },
        Expr::MethodCall(m) if m.args.is_empty() => root_name(&m.receiver),
        Expr::Reference(r) => root_name(&r.expr),
        Expr::Paren(p) => root_name(&p.expr),
        Expr::Await(a) => root_name(&a.base),
        Expr::Try(t) => root_name(&t.expr),
        _ => None,
    }
}

/// The SDK or RPC write a method call makes, by its verb, as written in the
/// catalogue of what calls mean (`write_verbs` of rules/operations/model.yml,
/// shared with the other languages): `Some(name)` for
/// `orders.submit_order(req)`, `producer.send_messages(batch)` or AWS's
/// `client.put_item()`. Not a write: `send` itself (a request builder's or a
/// channel's), `post`/`patch` (read as HTTP), a verb whose second word names
/// an in-process object (`create_task`), a receiver that is an in-process
/// value ([`LOCAL_RECEIVERS`]), and `insert`/`register`, which in Rust are a
/// collection's unless the receiver names a database or client.
fn sdk_write(name: &str, receiver: &Expr, aliases: &HashMap<String, String>) -> Option<String> {
    let data = crate::analyze::operations::data::DATA.as_ref().ok()?;
    if matches!(name, "send" | "post" | "patch" | "send_json" | "send_string" | "send_form" | "send_bytes") {
        return None;
    }
    let words = crate::analyze::knobs::names::words(name);
    let first = words.first()?;
    let verb = data.write_verbs.iter().find(|v| {
        v.as_str() == first.as_str() || (v.contains('_') && name.to_ascii_lowercase().starts_with(v.as_str()))
    })?;
    if matches!(verb.as_str(), "post" | "patch") {
        return None;
    }
    if words.get(1).is_some_and(|second| data.local_objects.iter().any(|o| o == second)) {
        return None;
    }
    let root = root_name(receiver)?;
    let root = aliases.get(&root).cloned().unwrap_or(root);
    let root_words = crate::analyze::knobs::names::words(&root);
    let lower = root.to_ascii_lowercase();
    if LOCAL_RECEIVERS.contains(&lower.as_str())
        || root_words.iter().any(|w| LOCAL_RECEIVERS.contains(&w.as_str()))
    {
        return None;
    }
    if matches!(verb.as_str(), "insert" | "register" | "upsert")
        && !root_words.iter().any(|w| {
            matches!(
                w.as_str(),
                "db" | "database"
                    | "client"
                    | "conn"
                    | "connection"
                    | "collection"
                    | "repo"
                    | "repository"
                    | "dynamo"
                    | "mongo"
                    | "es"
                    | "elastic"
                    | "qdrant"
                    | "index"
                    | "table"
            )
        })
    {
        return None;
    }
    Some(name.to_string())
}

/// Every HTTP method's name, as `http::Method` spells its constants.
const HTTP_METHOD_NAMES: &[&str] =
    &["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "CONNECT", "TRACE"];

/// The method a `Method::POST` argument names.
pub(crate) fn method_path(e: &Expr) -> Option<String> {
    let Expr::Path(p) = e else { return None };
    let n = p.path.segments.len();
    let variant = p.path.segments[n - 1].ident.to_string();
    (n >= 2 && p.path.segments[n - 2].ident == "Method" && HTTP_METHOD_NAMES.contains(&variant.as_str()))
        .then_some(variant)
}

/// The method `Method::from_bytes(b"POST")` (or `from_str("POST")`,
/// `try_from("POST")`) builds from its literal, upper-cased.
pub(crate) fn method_from_literal(e: &Expr) -> Option<String> {
    let Expr::Call(c) = e else { return None };
    method_from_call(c)
}

/// [`method_from_literal`] of a call.
fn method_from_call(c: &syn::ExprCall) -> Option<String> {
    let Expr::Path(p) = &*c.func else { return None };
    let n = p.path.segments.len();
    let ctor = p.path.segments.last()?.ident.to_string();
    if n < 2
        || p.path.segments[n - 2].ident != "Method"
        || !matches!(ctor.as_str(), "from_bytes" | "from_str" | "try_from")
    {
        return None;
    }
    let text = match c.args.first()? {
        Expr::Lit(l) => match &l.lit {
            Lit::ByteStr(b) => String::from_utf8(b.value()).ok()?,
            Lit::Str(s) => s.value(),
            _ => return None,
        },
        _ => return None,
    };
    let upper = text.to_ascii_uppercase();
    HTTP_METHOD_NAMES.contains(&upper.as_str()).then_some(upper)
}

/// The method of a chain rooted in a free verb call (`ureq::post(url)`).
fn free_verb(root: &Expr) -> Option<String> {
    match root {
        Expr::Call(c) => match &*c.func {
            Expr::Path(p) => free_verb_of_path(&p.path),
            _ => None,
        },
        _ => None,
    }
}

/// Case-insensitive substring test without allocating (`needle` is lower-case ASCII).
fn contains_ci(hay: &str, needle: &str) -> bool {
    hay.len() >= needle.len()
        && hay.as_bytes().windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

fn scan_tokens(ts: proc_macro2::TokenStream, v: &mut FactsVisitor<'_>) {
    for tt in ts {
        match tt {
            proc_macro2::TokenTree::Group(g) => scan_tokens(g.stream(), v),
            proc_macro2::TokenTree::Ident(i) => v.note_ident(&i.to_string()),
            proc_macro2::TokenTree::Literal(l) => {
                let s = l.to_string();
                if let Some(inner) = s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
                    v.note_str(inner);
                }
            }
            proc_macro2::TokenTree::Punct(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(src: &str) -> BodyFacts {
        let e: Expr = syn::parse_str(src).unwrap();
        body_facts(&e)
    }

    #[test]
    fn an_sdk_or_rpc_call_whose_verb_writes_is_a_write_and_a_channel_send_is_not() {
        for (src, call) in [
            ("async { let mut c = client.clone(); c.submit_order(req).await }", "submit_order()"),
            ("async { producer.send_messages(batch.clone()).await }", "send_messages()"),
            ("async { self.dynamo.put_item().table_name(t).item(i).send().await }", "put_item()"),
            ("async { self.db_client.insert(row).await }", "insert()"),
            ("async { stripe.create_refund(params).await }", "create_refund()"),
        ] {
            let f = facts(src);
            assert!(f.methods.contains(call), "{src}: {f:?}");
        }
        for src in [
            "async { tx.send(msg).await }",
            "async { self.events_tx.send(ev) }",
            "async { self.pending.insert(id, w); }",
            "async { map.insert(k, v); }",
            "async { runtime.create_task(fut) }",
            "async { c.get(url).send().await }",
            "async { registry.register(metric) }",
            "async { self.submit(job).await }",
        ] {
            let f = facts(src);
            assert!(!f.methods.iter().any(|m| m.ends_with("()")), "{src}: {f:?}");
        }
    }

    #[test]
    fn a_method_given_to_request_is_read_from_its_value_or_is_unknown() {
        let f =
            facts(r#"async { c.request(reqwest::Method::from_bytes(b"POST").unwrap(), url).send().await }"#);
        assert!(f.methods.contains("POST") && !f.methods.contains("FROM_BYTES"), "{f:?}");
        let f = facts(r#"async { c.request(SUBMIT, url).send().await }"#);
        assert!(f.methods.iter().any(|m| is_unknown_method(m)), "a constant not written here: {f:?}");
        let f = facts(r#"async { c.request(method.clone(), url).send().await }"#);
        assert!(f.methods.iter().any(|m| is_unknown_method(m)), "{f:?}");
        let f = facts(r#"async { c.request(Method::GET, url).send().await }"#);
        assert_eq!(f.methods.iter().map(String::as_str).collect::<Vec<_>>(), ["GET"]);
    }

    #[test]
    fn a_post_whose_body_names_only_protocol_reads_is_a_read() {
        let read = facts(
            r#"async { c.post(&rpc).json(&json!({"jsonrpc": "2.0", "id": 1, "method": "eth_call", "params": [tx]})).send().await }"#,
        );
        assert!(!read.methods.contains("POST"), "{read:?}");
        assert!(read.reads.iter().any(|r| r.contains("`eth_call`")), "{read:?}");
        let st = facts(
            r#"async { c.post(&rpc).json(&RpcRequest { jsonrpc: "2.0", method: "simulateTransaction", params }).send().await }"#,
        );
        assert!(!st.methods.contains("POST"), "{st:?}");
        let gql = facts(
            r#"async { c.post(&gql).json(&json!({"query": "query Status { run { state } }"})).send().await }"#,
        );
        assert!(!gql.methods.contains("POST"), "{gql:?}");
        for write in [
            r#"async { c.post(&rpc).json(&json!({"jsonrpc": "2.0", "method": "eth_sendRawTransaction", "params": [raw]})).send().await }"#,
            r#"async { c.post(&gql).json(&json!({"query": "mutation { cancel(id: 1) { id } }"})).send().await }"#,
            "async { c.post(&rpc).json(&json!({\"jsonrpc\": \"2.0\", \"method\": \"eth_call\"})).send().await?;\n c.post(&orders).json(&o).send().await }",
        ] {
            assert!(facts(write).methods.contains("POST"), "{write}");
        }
    }

    #[test]
    fn chain_reads_left_to_right_through_await_and_try() {
        let e: Expr = syn::parse_str("a.b(1).c().await?.d(2)").unwrap();
        let ch = chain_of(&e);
        let names: Vec<String> = ch.calls.iter().map(|c| c.method.to_string()).collect();
        assert_eq!(names, ["b", "c", "d"]);
        assert!(matches!(ch.root, Expr::Path(_)));
    }

    #[test]
    fn methods_and_keys_are_seen() {
        let f = facts("async { client.post(url).json(&o).send().await }");
        assert!(f.methods.contains("POST") && f.sends_request && !f.idempotency_key);
        let f = facts("async { client.post(url).header(\"Idempotency-Key\", k).send().await }");
        assert!(f.idempotency_key);
        let f = facts("async { client.get(url).send().await }");
        assert_eq!(f.methods.iter().collect::<Vec<_>>(), ["GET"]);
        let f = facts("client.request(Method::PATCH, url).send()");
        assert!(f.methods.contains("PATCH"));
        let f = facts("client.execute(req)");
        assert!(f.sends_request && f.methods.is_empty());
        let f = facts("{ let v = map.get(&k); v.len() }");
        assert!(f.methods.is_empty() && !f.sends_request, "a HashMap get is not a request");
    }

    #[test]
    fn other_http_clients_send_requests_too() {
        let f = facts("agent.post(url).send_json(body)");
        assert!(f.sends_request && f.methods.contains("POST"));
        let f = facts("agent.get(url).call()");
        assert!(f.sends_request && f.methods.contains("GET"));
        let f = facts("ureq::post(url).call()");
        assert!(f.sends_request && f.methods.contains("POST"));
        let f = facts("handler.call()");
        assert!(!f.sends_request, "a call that is not a request builder's");
        let f = facts("mylib::post(x)");
        assert!(!f.sends_request && f.methods.is_empty(), "not an HTTP client crate");
    }

    #[test]
    fn a_function_named_for_jitter_is_a_call_to_follow_not_randomness() {
        let f = facts("sleep(Duration::from_millis(base + hash_jitter(attempt)))");
        assert!(!f.uses_randomness, "the name alone");
        assert_eq!(f.jitter_calls, ["hash_jitter"]);
        let f = facts("sleep(jitter(rand::random::<u64>()))");
        assert!(f.uses_randomness, "randomness in the arguments still counts");
        let f = facts("strategy.map(tokio_retry::strategy::jitter)");
        assert!(f.uses_randomness && f.jitter_calls.is_empty(), "a library's, by its path");
        let f = facts("builder.with_jitter()");
        assert!(f.uses_randomness, "a builder's setter");
    }

    #[test]
    fn what_a_body_sends_and_calls_is_kept_as_operation_keys() {
        let f = facts(
            "async { self.api.lock().await.create_order(o).await?; \
             client.post(format!(\"{}/orders/{id}\", base)).json(&o).send().await?; \
             client.request(Method::PATCH, \"https://api.example/carts/\").send().await?; \
             self.refresh(); s3.put_object().bucket(b).send().await; Ok(()) }",
        );
        let keys: Vec<&str> = f.ops.iter().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "call create_order",
                "call put_object",
                "req PATCH /carts",
                "req POST /orders/{}",
                "self refresh"
            ]
        );
        let f = facts("{ let v = headers.get(\"retry-after\"); map.get(&k); e.is_timeout() }");
        assert!(f.ops.is_empty(), "{:?}", f.ops);
    }

    #[test]
    fn retry_after_and_randomness_are_seen() {
        let f = facts("resp.headers().get(RETRY_AFTER)");
        assert!(f.reads_retry_after);
        let f = facts("resp.headers().get(\"retry-after\")");
        assert!(f.reads_retry_after);
        let f = facts("sleep(base + rand::thread_rng().gen_range(0..100))");
        assert!(f.uses_randomness && f.sleeps == 1);
    }
}
