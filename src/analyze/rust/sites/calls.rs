//! Retry calls and timeouts in expressions: `op.retry(policy)` and its
//! `.when/.adjust` modifiers, `Retry::spawn`, `retry(iter, op)`, retry
//! middleware and layers, `.timeout(..)` setters and `tokio::time::timeout`,
//! and policies built where no retry call is seen (yet).

use std::collections::HashMap;

use syn::Expr;

use super::super::eval::Bound;
use super::super::libs::{self, CallShape};
use super::super::loops;
use super::super::policy::{Attempts, Fact, Lib, Policy};
use super::super::syntax::{body_facts, line_of, lines_of, BodyFacts, Chain};
use super::resolve::{call_segments, interesting_in, Resolved};
use super::{root_key, FnWalker, Site, TimeoutSite, TimeoutTie};

/// Methods and functions whose duration argument is a request or operation
/// timeout.
const TIMEOUT_METHODS: &[&str] = &[
    "timeout",
    "connect_timeout",
    "read_timeout",
    "operation_timeout",
    "operation_attempt_timeout",
    "timeout_global",
    "timeout_per_call",
    "timeout_connect",
    "timeout_read",
    "request_timeout",
];

/// The type of a timeout layer: tower's `TimeoutLayer::new(d)` and
/// OpenDAL's `TimeoutLayer::new().with_timeout(d)`.
const TIMEOUT_LAYER: &str = "TimeoutLayer";

/// OpenDAL's `TimeoutLayer` setters: read only on a chain rooted at the
/// layer, where they cannot be anything else's.
const LAYER_TIMEOUT_SETTERS: &[&str] = &["with_timeout", "with_io_timeout"];

/// Whether a builder setter sets the builder's own retry count or switch
/// (`.request_retries(2)`, `.max_retries(n)`, `.retry_on_timeout(true)`)
/// to something other than "never": what the builder sends, it re-sends.
fn sets_own_retries(m: &syn::ExprMethodCall, env: &super::super::eval::Env<'_>) -> bool {
    let name = m.method.to_string().to_ascii_lowercase();
    let words: Vec<&str> = name.split('_').collect();
    let says_retry = words.iter().any(|w| matches!(*w, "retries" | "retry" | "attempts"));
    // `retry_after`, `no_retry`, `disable_retries`: about retries, not a
    // count or switch that turns them on.
    let negated = words
        .iter()
        .any(|w| matches!(*w, "after" | "no" | "disable" | "without" | "delay" | "backoff" | "interval"));
    let (true, false, Some(arg)) = (says_retry, negated, m.args.first()) else { return false };
    if m.args.len() != 1 {
        return false;
    }
    if let Expr::Lit(syn::ExprLit { lit: syn::Lit::Bool(b), .. }) = arg {
        return b.value;
    }
    // A count of zero retries nothing; one that cannot be read may retry.
    env.number(arg).is_none_or(|n| n > 0.0)
}

/// Whether `e` is, or is a chain rooted at, a timeout layer's constructor
/// (`TimeoutLayer::new(..)`, `opendal::layers::TimeoutLayer::default()`).
fn is_timeout_layer(e: &Expr) -> bool {
    let Expr::Call(c) = e else { return false };
    let Expr::Path(p) = &*c.func else { return false };
    let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
    matches!(segs.as_slice(), [.., ty, f] if ty == TIMEOUT_LAYER && (f == "new" || f == "default"))
}

/// Whether a function body installs a retry layer (`RetryLayer::new(..)`,
/// tower's `ServiceBuilder::retry(policy)`).
fn installs_retry_layer(block: &syn::Block) -> bool {
    struct Finder(bool);
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_path(&mut self, p: &'ast syn::Path) {
            self.0 |= p.segments.iter().any(|s| s.ident == "RetryLayer");
            syn::visit::visit_path(self, p);
        }
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            self.0 |= m.method == "retry" && m.args.len() == 1;
            syn::visit::visit_expr_method_call(self, m);
        }
    }
    let mut f = Finder(false);
    syn::visit::Visit::visit_block(&mut f, block);
    f.0
}

/// Words in a field's name that say its timeout bounds no request: a
/// shutdown grace period, an idle or keep-alive limit, a lease, a cache's
/// lifetime, a poll's pace. Nothing retries on them expiring.
const NOT_A_CALLS_TIMEOUT: &[&str] = &[
    "shutdown",
    "grace",
    "idle",
    "keepalive",
    "alive",
    "lease",
    "ttl",
    "session",
    "heartbeat",
    "poll",
    "interval",
    "cache",
    "expiry",
    "expire",
    "expiration",
    "drain",
    "startup",
    "lock",
    "linger",
    "close",
    "sleep",
    "debounce",
    "election",
    "tick",
    "flush",
    "gc",
    "cleanup",
    "test",
];

/// The milliseconds one unit of a bare number stands for, from the last
/// word of the field that holds it (`client_timeout_in_second`,
/// `request_timeout_ms`); `None` when the name says no unit.
fn unit_of_field(words: &[String]) -> Option<f64> {
    match words.last()?.as_str() {
        "ms" | "millis" | "milliseconds" | "msec" | "msecs" => Some(1.0),
        "s" | "sec" | "secs" | "second" | "seconds" => Some(1000.0),
        "min" | "mins" | "minute" | "minutes" => Some(60_000.0),
        _ => None,
    }
}

/// A struct field whose name says it is a request's timeout
/// (`connect_timeout`, `read_timeout_secs`, `client_timeout_in_second`),
/// with the words of its name.
fn call_timeout_field(name: &str) -> Option<Vec<String>> {
    let words: Vec<String> = name.split('_').filter(|w| !w.is_empty()).map(str::to_ascii_lowercase).collect();
    let says_timeout = words.iter().any(|w| w == "timeout" || w == "deadline");
    (says_timeout && !words.iter().any(|w| NOT_A_CALLS_TIMEOUT.contains(&w.as_str()))).then_some(words)
}

impl<'w, 'i, 'a> FnWalker<'w, 'i, 'a> {
    /// Facts about a retried operation: a closure's body, or a function of
    /// this file named by path or `self.name`; callees are followed once.
    pub(super) fn op_facts(&mut self, op: &'a Expr) -> BodyFacts {
        // A closure sends to paths it captures: `let url = base.join(..)?`
        // above it holds the endpoint the request inside goes to, unless a
        // local inside shadows it (the visitor's own bindings come first).
        let line = line_of(op);
        let env = &self.env;
        let outer = |name: &str| env.lookup(name, line).and_then(super::super::ops::target_path);
        let mut facts = super::super::syntax::body_facts_within(op, &outer);
        // A request built once above the retry and re-sent as a copy
        // (`let req = client.post(url).body(b);` .. `req.try_clone()?.send()`)
        // or handed to a sender (`client.execute(req)`): what it sends is
        // where it was built.
        for name in resent_locals(op) {
            if let Some(init) = self.env.lookup(&name, line) {
                let built = super::super::syntax::body_facts(init);
                if !built.methods.is_empty() {
                    super::merge_facts(&mut facts, &built);
                }
            }
        }
        // A method given by name (`client.request(SUBMIT, url)` with
        // `const SUBMIT: Method = Method::POST;`): the value it was given.
        for name in method_locals(op) {
            let given = self.env.lookup(&name, line).and_then(|init| {
                super::super::syntax::method_path(init)
                    .or_else(|| super::super::syntax::method_from_literal(init))
            });
            if let Some(verb) = given {
                facts.methods.remove(super::super::syntax::UNKNOWN_METHOD);
                if verb == "POST" || verb == "PATCH" {
                    facts.write_lines.insert((verb.clone(), 0));
                }
                facts.methods.insert(verb);
            }
        }
        let named = match op {
            Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            Expr::Field(f) => match &f.member {
                syn::Member::Named(n) => Some(n.to_string()),
                _ => None,
            },
            _ => None,
        };
        let mut callees: Vec<String> = std::mem::take(&mut facts.callees);
        callees.extend(named);
        self.w.merge_callees(&mut facts, callees);
        facts
    }

    pub(super) fn push_site(&mut self, mut policy: Policy, op: Option<&'a Expr>, at: &'a Expr) {
        let mut ops = super::super::ops::Ops::new();
        if let Some(op) = op {
            // An operation that returns its retryable errors as transient
            // says itself what is retried.
            if let Some(refusal_only) = loops::transient_on_refusal_only(op) {
                policy.transient_refusal_only = Some(refusal_only);
            }
            let f = self.op_facts(op);
            libs::read_operation(&mut policy, &f);
            policy.add_requests(&f);
            ops = super::super::ops::resolve(&self.item, &f.ops);
        }
        let (line, end_line) = lines_of(at);
        self.w.out.sites.push(Site {
            item: self.item.clone(),
            line,
            end_line,
            policy,
            unresolved: Vec::new(),
            standalone: false,
            ops,
        });
    }

    /// A whole method chain: policy setters, retry calls, timeouts.
    pub(super) fn chain(&mut self, whole: &'a Expr, chain: &Chain<'a>) {
        let on_layer = is_timeout_layer(chain.root);
        // The builder's own retry setter anywhere in the chain ties its
        // timeouts to the retries it makes.
        let own_retries = !on_layer
            && chain.calls.len() > 1
            && chain
                .calls
                .iter()
                .any(|m| !libs::is_retry_method(&m.method) && sets_own_retries(m, &self.env));
        for (i, m) in chain.calls.iter().enumerate() {
            let is_timeout = TIMEOUT_METHODS.iter().any(|t| m.method == t)
                || (on_layer && LAYER_TIMEOUT_SETTERS.iter().any(|t| m.method == t));
            let is_retry = m.args.len() == 1 && libs::is_retry_method(&m.method);
            if !is_timeout && !is_retry {
                if i == 0 || names_a_retry(&m.method.to_string()) {
                    self.helper_method(whole, m);
                }
                continue;
            }
            let name = m.method.to_string();
            if is_timeout {
                self.w.out.timeout_setters.insert((self.item.clone(), name.clone()));
                if let Some(ms) = m.args.first().and_then(|a| self.env.millis(a)) {
                    let tie = if on_layer {
                        TimeoutTie::LayerAlone
                    } else if own_retries {
                        TimeoutTie::BuilderRetries
                    } else {
                        TimeoutTie::Unknown
                    };
                    self.w.out.timeouts.push(TimeoutSite {
                        item: self.item.clone(),
                        setter: name.clone(),
                        ms,
                        line: line_of(m),
                        op: quote::ToTokens::to_token_stream(chain.root).to_string(),
                        field: false,
                        tie,
                    });
                }
            }
            if is_retry {
                self.retry_call(whole, chain, i);
                return;
            }
        }
        // A policy built here but not (visibly) retried yet.
        if self.root(chain.root).is_some() && !self.is_wrapper_call(chain.root) {
            if let Some(r) = self.resolve(whole, 0) {
                self.standalone_candidate(root_key(chain.root), lines_of(whole), r.policy);
                return;
            }
        }
        self.wrapper_chain(whole, chain);
    }

    /// Timeouts set as struct fields (`HttpConfig { connect_timeout:
    /// Duration::from_secs(30), .. }` in a `Default` impl or a
    /// constructor): a config struct is where most crates keep the timeout
    /// their client builder reads. A bare number counts when the field's
    /// name gives its unit.
    pub(super) fn struct_timeouts(&mut self, s: &'a syn::ExprStruct) {
        let mut ty = s.path.segments.last().map(|x| x.ident.to_string()).unwrap_or_default();
        if ty == "Self" {
            // `impl Default for HttpConfig { .. Self { .. } }`: the item
            // is `HttpConfig::default`.
            if let Some(owner) = self.item.rsplit("::").nth(1) {
                ty = owner.to_string();
            }
        }
        for fv in &s.fields {
            let syn::Member::Named(n) = &fv.member else { continue };
            let name = n.to_string();
            let Some(words) = call_timeout_field(&name) else { continue };
            self.w.out.timeout_setters.insert((self.item.clone(), name.clone()));
            let ms = self
                .env
                .millis(&fv.expr)
                .or_else(|| Some(self.env.number(&fv.expr)? * unit_of_field(&words)?));
            if let Some(ms) = ms {
                self.w.out.timeouts.push(TimeoutSite {
                    item: self.item.clone(),
                    setter: name,
                    ms,
                    line: line_of(&fv.expr),
                    op: ty.clone(),
                    field: true,
                    tie: TimeoutTie::Unknown,
                });
            }
        }
    }

    /// Whether `e` calls a constructor of a project's own type (`Wrapper::new()`).
    fn is_wrapper_call(&self, e: &Expr) -> bool {
        matches!(e, Expr::Call(c) if matches!(&*c.func, Expr::Path(p) if self.wrapper_ctor(&p.path).is_some()))
    }

    /// `Wrapper::new().with_min_delay(d)`: a project's own type configured
    /// with a retry library's setter names. With the type's constructor in
    /// view it is a policy built here; otherwise the type is looked for in
    /// the crate (and the workspace), like a helper function.
    fn wrapper_chain(&mut self, whole: &'a Expr, chain: &Chain<'a>) {
        let Expr::Call(c) = chain.root else { return };
        let Expr::Path(p) = &*c.func else { return };
        if p.path.segments.len() < 2
            || !chain.calls.iter().any(|m| libs::any_by_value_setter(&m.method.to_string()))
        {
            return;
        }
        if self.wrapper_ctor(&p.path).is_some() {
            if let Some(r) = self.resolve(whole, 0) {
                let key = root_key(chain.root);
                // The builder inside the constructor is this policy, not
                // another one of its own.
                self.w.consumed.extend(r.keys.iter().copied().filter(|k| *k != key));
                self.standalone_candidate(key, lines_of(whole), r.policy);
            }
        } else if let Some(ty) = p.path.segments.iter().rev().nth(1) {
            let ty = ty.ident.to_string();
            if ty.starts_with(|c: char| c.is_ascii_uppercase()) && ty != "Self" {
                self.w.miss(self.w.index.unalias(&ty));
            }
        }
    }

    /// `op.retry(policy)` (backon), `policy.retry(op)` (again),
    /// `builder.retry(policy)` (reqwest, tower ServiceBuilder),
    /// `loader.retry_config(cfg)` (aws); then `.when/.adjust/.notify`.
    pub(super) fn retry_call(&mut self, whole: &'a Expr, chain: &Chain<'a>, i: usize) {
        let m = chain.calls[i];
        let arg = &m.args[0];
        let receiver: &'a Expr = &m.receiver;
        let (resolved, op) = match self.resolve(receiver, 0) {
            // again: the receiver is the policy and the argument the operation.
            Some(r) if libs::call_shape(r.policy.lib) == CallShape::PolicyFirst => (Some(r), Some(arg)),
            _ => match self.resolve(arg, 0) {
                Some(r) => {
                    let op = match libs::call_shape(r.policy.lib) {
                        CallShape::OnClient => None,
                        CallShape::OperationFirst | CallShape::PolicyFirst => Some(receiver),
                    };
                    (Some(r), op)
                }
                None => (None, None),
            },
        };
        let Some(mut r) = resolved else { return };
        for k in &r.keys {
            self.w.consumed.insert(*k);
        }
        for later in &chain.calls[i + 1..] {
            let Some(a) = later.args.first() else { continue };
            match later.method.to_string().as_str() {
                "adjust" => {
                    let reads = body_facts(a).reads_retry_after;
                    r.policy.retry_after = Fact::new(
                        Some(reads),
                        if reads {
                            ".adjust(..) reads Retry-After"
                        } else {
                            ".adjust(..) does not read Retry-After"
                        },
                    );
                }
                "when" => {
                    r.policy.method_gated |= body_facts(a).method_gated;
                    let t = loops::tests_of_expr(a);
                    r.policy.refusal_only = t.refusal && !t.after_apply;
                }
                _ => {}
            }
        }
        self.push_site(r.policy, op, whole);
    }

    /// Calls: the libraries' entry points ([`libs::entry_point`]:
    /// `Retry::spawn`, `backoff::retry`, `retry(iter, op)`,
    /// `RetryTransientMiddleware::new_with_policy`, `RetryLayer::new`, ...),
    /// `tokio::time::timeout(d, fut)`, and constructors with no setters.
    pub(super) fn call(&mut self, whole: &'a Expr, c: &'a syn::ExprCall) {
        let Expr::Path(p) = &*c.func else { return };
        if c.args.len() == 1 && is_timeout_layer(whole) {
            self.layer_timeout(whole, &c.args[0]);
            return;
        }
        // Most calls in a file are nothing to a retry: reject them by their
        // last name before any allocation.
        let aliases = &self.w.index.aliases;
        if !p.path.segments.last().is_some_and(|s| interesting_in(&s.ident, aliases)) {
            self.helper_call(whole, p, c.args.iter().collect());
            return;
        }
        let Some((ty, func)) = call_segments(&p.path, aliases) else { return };
        let (ty, func) = (ty.as_str(), func.as_str());
        let args: Vec<&'a Expr> = c.args.iter().collect();
        if let Some(entry) = libs::entry_point(ty, func, args.len()) {
            let resolved = args.first().and_then(|a| self.resolve(a, 0));
            let Some(mut r) = resolved.or_else(|| self.unread_policy(entry, args.first().copied())) else {
                return;
            };
            if let Some(cond) = entry.condition.and_then(|i| args.get(i)) {
                r.policy.method_gated |= body_facts(*cond).method_gated;
                let t = loops::tests_of_expr(cond);
                r.policy.refusal_only = t.refusal && !t.after_apply;
            }
            r.policy.client_wide |= entry.client_wide;
            let op = entry.operation.and_then(|i| args.get(i).copied());
            self.consume_and_push(r, op, whole);
            return;
        }
        match (ty, func) {
            (_, "timeout") if args.len() == 2 => {
                self.w.out.timeout_setters.insert((self.item.clone(), "timeout".into()));
                if let Some(ms) = self.env.millis(args[0]) {
                    self.w.out.timeouts.push(TimeoutSite {
                        item: self.item.clone(),
                        setter: "timeout".into(),
                        ms,
                        line: line_of(whole),
                        op: quote::ToTokens::to_token_stream(args[1]).to_string(),
                        field: false,
                        tie: TimeoutTie::Wrapped,
                    });
                }
            }
            _ => {
                // A constructor with no setters (`ExponentialBuilder::default()`).
                let chain = Chain { root: whole, calls: Vec::new() };
                self.chain(whole, &chain);
            }
        }
    }

    /// tower's `TimeoutLayer::new(d)`: a timeout on every call through
    /// the stack it is layered into; [`Self::bind_layers`] ties it to a
    /// retry layer of the same function.
    fn layer_timeout(&mut self, whole: &'a Expr, d: &'a Expr) {
        let setter = format!("{TIMEOUT_LAYER}::new");
        self.w.out.timeout_setters.insert((self.item.clone(), setter.clone()));
        if let Some(ms) = self.env.millis(d) {
            self.w.out.timeouts.push(TimeoutSite {
                item: self.item.clone(),
                setter,
                ms,
                line: line_of(whole),
                op: TIMEOUT_LAYER.into(),
                field: false,
                tie: TimeoutTie::LayerAlone,
            });
        }
    }

    /// Ties the timeout layers this function set (from `first` on) to a
    /// retry layer installed in the same function: a stack with both
    /// re-sends what the timeout cuts short (under the retry layer each
    /// attempt, over it all of them), while a timeout layer alone often
    /// bounds a server's handlers, which nothing here re-runs.
    pub(super) fn bind_layers(&mut self, block: &syn::Block, first: usize) {
        let layers = first..self.w.out.timeouts.len();
        if !self.w.out.timeouts[layers.clone()].iter().any(|t| t.tie == TimeoutTie::LayerAlone) {
            return;
        }
        if !installs_retry_layer(block) {
            return;
        }
        for t in &mut self.w.out.timeouts[layers] {
            if t.tie == TimeoutTie::LayerAlone {
                t.tie = TimeoutTie::LayerWithRetry;
            }
        }
    }

    /// The policy of an entry point whose policy argument is not computed
    /// here (`backoff::future::retry(self.backoff.clone(), op)`): the
    /// library is known by the call, what its policy allows is not. The
    /// retry is still a site, so what it re-sends is judged.
    fn unread_policy(&self, entry: &libs::EntryPoint, arg: Option<&'a Expr>) -> Option<Resolved> {
        // Only while a helper is read for its callers: as a site of its own,
        // a policy of unknown jitter and count would take the place of the
        // known policy it replaces when base and head are matched.
        if self.w.helper_depth == 0 {
            return None;
        }
        let arg = arg?;
        // Only a value held elsewhere: a field, a parameter, a clone of one.
        let held = matches!(super::super::syntax::chain_of(arg).root, Expr::Field(_) | Expr::Path(_));
        if !held {
            return None;
        }
        let lib = libs::library_of_entry(entry)?;
        let text = code(arg);
        let mut policy = Policy::new(
            lib,
            Fact::new(Attempts::Unknown, format!("the policy `{text}` is not built here")),
            Fact::new(None, format!("the policy `{text}` is not built here")),
        );
        policy.retry_after = Fact::new(None, format!("the policy `{text}` is not built here"));
        Some(Resolved { policy, keys: Vec::new() })
    }

    /// A call of a function that is not a library's: when it is a retry
    /// helper of the crate (`with_retry(|| client.post(..).send(), 5)`),
    /// the helper's retry is read again with its parameters bound to this
    /// call's arguments, and becomes a site here, covering what the
    /// arguments send. A helper the file does not define is recorded for
    /// the crate-wide resolution when its name says it retries.
    pub(super) fn helper_call(&mut self, whole: &'a Expr, p: &'a syn::ExprPath, args: Vec<&'a Expr>) {
        if self.w.helper_depth > 0 || args.is_empty() {
            return;
        }
        let Some(last) = p.path.segments.last() else { return };
        let name = self.w.index.unalias(&last.ident.to_string()).to_string();
        let defined = self.expand_helper(whole, &name, &args);
        // A free function (or one of a module, `http::call`) handed a
        // method may be another file's retry helper of that method; a
        // type's (`Request::new(Method::POST, url)`) builds a value.
        let n = p.path.segments.len();
        let of_type =
            n >= 2 && p.path.segments[n - 2].ident.to_string().starts_with(|c: char| c.is_ascii_uppercase());
        if !defined && !of_type && !names_a_retry(&name) && args.iter().any(|a| handed_method(a).is_some()) {
            self.w.miss(&name);
        }
    }

    /// [`Self::helper_call`] for a method: `self.send_with_retry(req)`, or
    /// any receiver when the name says it retries.
    pub(super) fn helper_method(&mut self, whole: &'a Expr, m: &'a syn::ExprMethodCall) {
        if self.w.helper_depth > 0 {
            return;
        }
        let name = m.method.to_string();
        let on_self = matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self"));
        // `retrier.run(|| c.post(..).send())` where `retrier` is a value of
        // one of the crate's types: its method is followed to its
        // definition like a free helper, whatever it is called.
        let on_own_value = !on_self && m.args.iter().any(is_closure) && self.holds_own_type(&m.receiver);
        if !on_self && !on_own_value && !names_a_retry(&name) {
            return;
        }
        let args: Vec<&'a Expr> = m.args.iter().collect();
        let defined = self.expand_helper(whole, &name, &args);
        if !defined && on_own_value {
            self.w.miss(&name);
        }
        if !defined && names_a_retry(&name) {
            self.unread_retry_method(whole, &name, &args);
        }
    }

    /// Whether `receiver` is a local bound to a value of a type the code
    /// builds itself: a struct literal (`Retrier { max_retries: 3 }`) or an
    /// associated constructor (`Retrier::new(3)`), not a library's client.
    fn holds_own_type(&self, receiver: &'a Expr) -> bool {
        let Some(name) = super::super::syntax::ident_of(receiver) else { return false };
        let Some(init) = self.env.lookup(&name, line_of(receiver)) else { return false };
        let capitalized = |p: &syn::Path| {
            p.segments
                .last()
                .is_some_and(|s| s.ident.to_string().starts_with(|c: char| c.is_ascii_uppercase()))
        };
        match init {
            Expr::Struct(s) => capitalized(&s.path),
            Expr::Call(c) => match &*c.func {
                Expr::Path(p) => {
                    let n = p.path.segments.len();
                    n >= 2
                        && p.path.segments[n - 2]
                            .ident
                            .to_string()
                            .starts_with(|c: char| c.is_ascii_uppercase())
                        && matches!(
                            p.path.segments[n - 1].ident.to_string().as_str(),
                            "new" | "default" | "with_config"
                        )
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// A retry method retrygate cannot read (`policy.retry_operation(||
    /// client.post(..))`, defined in a crate it did not search): the name
    /// says it retries, so each closure argument that sends a request is a
    /// retry of that request, with a count that is not known. A POST moved
    /// out of it into a loop is then not a new retry of a write, and a POST
    /// newly handed to it is one. A closure that sends nothing (backon's
    /// `.retry(builder)` takes none) adds nothing.
    fn unread_retry_method(&mut self, whole: &'a Expr, name: &str, args: &[&'a Expr]) {
        for a in args.iter().copied().filter(|a| is_closure(a)) {
            if self.op_facts(a).methods.is_empty() {
                continue;
            }
            let policy = Policy::new(
                Lib::HAND_ROLLED,
                Fact::new(
                    Attempts::Unknown,
                    format!("through `{name}(..)`, a retry function retrygate could not read"),
                ),
                Fact::new(None, format!("`{name}(..)` was not read")),
            );
            self.push_site(policy, Some(a), whole);
        }
    }

    /// Reads a call of `name` as a call of the helper it names; `false`
    /// when neither the file nor its definers define `name`.
    fn expand_helper(&mut self, whole: &'a Expr, name: &str, args: &[&'a Expr]) -> bool {
        let index = self.w.index;
        let (Some(&block), Some(&sig)) = (index.fns.get(name), index.sigs.get(name)) else {
            if names_a_retry(name) {
                self.w.miss(name);
            }
            return false;
        };
        let params: Vec<Option<String>> = sig
            .inputs
            .iter()
            .filter_map(|i| match i {
                syn::FnArg::Typed(t) => Some(super::pat_ident(&t.pat)),
                syn::FnArg::Receiver(_) => None,
            })
            .collect();
        if params.is_empty() || !self.is_helper(name, block, sig, &params) {
            return true;
        }
        let mut bound = std::collections::HashMap::new();
        for (param, arg) in params.iter().zip(args) {
            if let Some(param) = param {
                let b = Bound { number: self.env.number(arg), millis: self.env.millis(arg), text: code(arg) };
                bound.insert(param.clone(), b);
            }
        }
        self.env.bound_used.set(false);
        let sites = self.walk_helper(block, bound);
        let args_count = self.env.bound_used.replace(false);
        if sites.is_empty() {
            return true;
        }
        // What the call hands the helper is what the helper's retry re-sends.
        let mut facts = BodyFacts::default();
        let mut built_once_not_cloneable = false;
        for a in args {
            let mut f = self.op_facts(a);
            // A request built into a local first (`let request =
            // client.post(url).build()?; self.execute(request)`).
            if let Some(name) = super::super::syntax::ident_of(a) {
                if let Some(init) = self.env.lookup(&name, line_of(*a)) {
                    super::merge_facts(&mut f, &body_facts(init));
                }
            }
            // A request built once (not a closure that builds it again on
            // each attempt) whose body cannot be copied.
            built_once_not_cloneable |= f.body_not_cloneable && !is_closure(a);
            super::merge_facts(&mut facts, &f);
        }
        // A helper that re-sends copies (`request.try_clone()`) cannot copy
        // a multipart or streamed body: that request is sent once, never
        // retried, so this call adds no retry of a write.
        if built_once_not_cloneable && body_facts(block).resends_clones {
            return true;
        }
        // A call whose arguments change neither how the helper retries nor
        // what it sends is the helper's own retry, already a site where the
        // helper is defined.
        let sends = !facts.methods.is_empty() || !facts.reads.is_empty() || facts.idempotency_key;
        if !args_count && !sends {
            return true;
        }
        let (line, end_line) = lines_of(whole);
        for (mut site, unknown) in sites {
            libs::read_operation(&mut site.policy, &facts);
            site.policy.add_requests(&facts);
            site.ops.extend(super::super::ops::resolve(&self.item, &facts.ops));
            site.policy.attempts.why = format!("through `{name}(..)`: {}", site.policy.attempts.why);
            site.line = line;
            site.end_line = end_line;
            site.item = self.item.clone();
            site.unresolved = unknown;
            self.w.out.sites.push(site);
        }
        true
    }

    /// Whether `name` is a retry helper: its body retries, and what it
    /// retries or how often comes from its parameters (an operation passed
    /// as a closure, a request or method, a count or delay). A function that
    /// merely holds a retry of its own (`fn fetch(client)`) is not one: its
    /// callers do not change what it does. Read once per function.
    fn is_helper(
        &mut self,
        name: &str,
        block: &'a syn::Block,
        sig: &syn::Signature,
        params: &[Option<String>],
    ) -> bool {
        if let Some(known) = self.w.helpers.get(name) {
            return *known;
        }
        // Recursion through the helper itself reads as "not a helper".
        self.w.helpers.insert(name.to_string(), false);
        let unknown: std::collections::HashMap<String, Bound> = params
            .iter()
            .flatten()
            .map(|p| (p.clone(), Bound { number: None, millis: None, text: p.clone() }))
            .collect();
        let sites = self.walk_helper(block, unknown);
        let takes_operation = || {
            let types = quote::ToTokens::to_token_stream(sig).to_string();
            ["Fn", "FnMut", "FnOnce", "Future", "Method", "Request", "RequestBuilder"]
                .iter()
                .any(|t| types.split(|c: char| !c.is_alphanumeric() && c != '_').any(|w| w == *t))
        };
        let found = !sites.is_empty() && (sites.iter().any(|(_, u)| !u.is_empty()) || takes_operation());
        self.w.helpers.insert(name.to_string(), found);
        found
    }

    /// The retry sites of a helper's body with its parameters bound, each
    /// with the arguments it needed and could not compute; the walk leaves
    /// nothing behind in the file's model.
    fn walk_helper(
        &mut self,
        block: &'a syn::Block,
        bound: std::collections::HashMap<String, Bound>,
    ) -> Vec<(Site, Vec<String>)> {
        let mut lets = super::LetCollector::default();
        syn::visit::Visit::visit_block(&mut lets, block);
        let mut env = std::mem::take(&mut self.env);
        let saved_lets = std::mem::replace(&mut env.lets, lets.lets);
        let saved_bound = std::mem::replace(&mut env.bound, bound);
        let saved_unknown = env.unknown_args.take();
        let before = self.w.out.sites.len();
        let timeouts = self.w.out.timeouts.len();
        let standalone = self.w.standalone.len();
        self.w.helper_depth += 1;
        // A helper's parameters are bound to the call's arguments (`env.bound`),
        // not known by their types.
        let mut sub = FnWalker {
            w: &mut *self.w,
            env,
            mutations: lets.mutations,
            params: HashMap::new(),
            item: self.item.clone(),
        };
        syn::visit::Visit::visit_block(&mut sub, block);
        let mut env = sub.env;
        self.w.helper_depth -= 1;
        let unknown: Vec<String> = env.unknown_args.replace(saved_unknown).into_iter().collect();
        env.lets = saved_lets;
        env.bound = saved_bound;
        self.env = env;
        // Policies built in the helper and not retried there are the
        // helper's own sites, found when its definition is walked.
        self.w.out.timeouts.truncate(timeouts);
        for c in self.w.standalone.drain(standalone..) {
            self.w.standalone_keys.remove(&c.key);
        }
        self.w.out.sites.drain(before..).map(|s| (s, unknown.clone())).collect()
    }

    pub(super) fn consume_and_push(&mut self, r: Resolved, op: Option<&'a Expr>, whole: &'a Expr) {
        for k in &r.keys {
            self.w.consumed.insert(*k);
        }
        self.push_site(r.policy, op, whole);
    }
}

/// Whether a function's name says it retries (`with_retry`,
/// `send_with_retries`, `retry_with_backoff`): a helper by such a name that
/// the file does not define is looked for in the rest of the crate.
pub(super) fn names_a_retry(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["retry", "retries", "retrying", "backoff", "attempts"].iter().any(|w| n.contains(w))
}

/// The HTTP method an argument hands a function, written as one
/// (`Method::POST`, `reqwest::Method::from_bytes(b"PATCH").unwrap()`,
/// `Method::GET.clone()`): a function that takes it may be a retry helper
/// of another file whose request method is that parameter, so the callee is
/// looked for even when its name does not say retry (`http::call(c,
/// Method::POST, url)`).
fn handed_method(arg: &Expr) -> Option<String> {
    match arg {
        Expr::MethodCall(m)
            if m.args.len() <= 1
                && matches!(m.method.to_string().as_str(), "unwrap" | "expect" | "clone") =>
        {
            handed_method(&m.receiver)
        }
        Expr::Try(t) => handed_method(&t.expr),
        Expr::Paren(p) => handed_method(&p.expr),
        Expr::Reference(r) => handed_method(&r.expr),
        e => super::super::syntax::method_path(e).or_else(|| super::super::syntax::method_from_literal(e)),
    }
}

/// Names given as the method of a request (`.request(NAME, url)`,
/// `.method(NAME)`).
fn method_locals(op: &Expr) -> Vec<String> {
    struct Given(Vec<String>);
    impl<'ast> syn::visit::Visit<'ast> for Given {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            if (m.method == "request" && m.args.len() == 2) || (m.method == "method" && m.args.len() == 1) {
                self.0.extend(m.args.first().and_then(super::super::syntax::ident_of));
            }
            syn::visit::visit_expr_method_call(self, m);
        }
    }
    let mut v = Given(Vec::new());
    syn::visit::Visit::visit_expr(&mut v, op);
    v.0
}

/// Locals an operation re-sends rather than builds: the receiver of a
/// `.try_clone()` and the argument of an `.execute(..)`.
fn resent_locals(op: &Expr) -> Vec<String> {
    struct Resent(Vec<String>);
    impl<'ast> syn::visit::Visit<'ast> for Resent {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            let name = m.method.to_string();
            if name == "try_clone" && m.args.is_empty() {
                self.0.extend(super::super::syntax::ident_of(&m.receiver));
            }
            if name == "execute" && m.args.len() == 1 {
                self.0.extend(super::super::syntax::ident_of(&m.args[0]));
            }
            syn::visit::visit_expr_method_call(self, m);
        }
    }
    let mut v = Resent(Vec::new());
    syn::visit::Visit::visit_expr(&mut v, op);
    v.0.sort();
    v.0.dedup();
    v.0
}

/// Whether an argument is a closure (`|| async { .. }`), which builds what
/// it sends again on every call.
fn is_closure(e: &Expr) -> bool {
    match e {
        Expr::Closure(_) => true,
        Expr::Paren(p) => is_closure(&p.expr),
        _ => false,
    }
}

/// Source text of an argument, for messages (`settings.retries`, not the
/// token stream's `settings . retries`).
fn code(e: &Expr) -> String {
    let text = quote::ToTokens::to_token_stream(e).to_string().replace(" . ", ".").replace(" (", "(");
    match text.char_indices().nth(57) {
        Some((i, _)) if text.len() > 60 => format!("{}..", &text[..i]),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::super::model_of;
    use super::{handed_method, names_a_retry};
    use crate::analyze::rust::policy::Attempts;

    #[test]
    fn the_call_shape_decides_which_side_is_the_operation() {
        let m = model_of(
            "fn backon() { (|| client.post(\"/x\").send()).retry(ExponentialBuilder::default()); }\n\
             fn again() { RetryPolicy::exponential(Duration::from_millis(10)).retry(|| client.post(\"/y\").send()); }\n\
             fn reqwest() { let c = reqwest::Client::builder().retry(retry::for_host(\"api\")).build(); }\n",
        );
        let methods =
            |item: &str| m.sites.iter().find(|s| s.item == item).map(|s| s.policy.methods.clone()).unwrap();
        assert!(methods("backon").contains("POST"), "the receiver is the operation");
        assert!(methods("again").contains("POST"), "the argument is the operation");
        assert!(methods("reqwest").is_empty(), "a client's retry has no operation at the call");
    }

    const HELPER: &str = "async fn with_retry<F: FnMut() -> Fut, Fut>(mut op: F, max: usize) -> R {\n\
         let mut attempt = 0;\n\
         loop { match op().await { Ok(v) => return Ok(v), Err(e) if attempt < max => { attempt += 1; sleep(D).await; } Err(e) => return Err(e) } }\n\
         }\n";

    #[test]
    fn a_retry_helper_is_a_site_at_each_call_with_its_arguments() {
        let m = model_of(&format!(
            "{HELPER}fn a() {{ with_retry(|| c.post(U).send(), 4); }}\nfn b() {{ with_retry(|| c.get(U).send(), N); }}\nconst N: usize = 1;\n"
        ));
        let at = |item: &str| m.sites.iter().find(|s| s.item == item).map(|s| s.policy.clone());
        let a = at("a").expect("a call site");
        assert_eq!(a.attempts.value, Attempts::Total(5.0));
        assert!(a.methods.contains("POST"), "{:?}", a.methods);
        assert_eq!(at("b").map(|p| p.attempts.value), Some(Attempts::Total(2.0)));
        assert_eq!(
            at("with_retry").map(|p| p.attempts.value),
            Some(Attempts::Unknown),
            "the definition stays a site"
        );
    }

    #[test]
    fn a_function_that_only_holds_a_retry_is_not_a_helper() {
        let m = model_of(
            "fn fetch(c: &Client) -> R { (|| c.get(U).send()).retry(ExponentialBuilder::default()) }\nfn a(c: &Client) { fetch(c); }\n",
        );
        assert_eq!(m.sites.iter().map(|s| s.item.as_str()).collect::<Vec<_>>(), ["fetch"]);
        assert!(
            names_a_retry("send_with_retry")
                && names_a_retry("retry_with_backoff")
                && !names_a_retry("fetch")
        );
    }

    #[test]
    fn an_unknown_argument_is_named_on_the_site() {
        let m = model_of(&format!(
            "{HELPER}fn a(cfg: &Cfg) {{ with_retry(|| c.get(U).send(), cfg.retries); }}\n"
        ));
        let a = m.sites.iter().find(|s| s.item == "a").expect("a call site");
        assert_eq!(a.policy.attempts.value, Attempts::Unknown);
        assert_eq!(a.unresolved, ["cfg.retries"]);
    }

    /// A config struct's timeouts: durations, and bare numbers whose
    /// field names give the unit; timeouts that bound no request
    /// (shutdown, idle) and unitless numbers are not read.
    #[test]
    fn timeouts_set_as_struct_fields_are_read() {
        let m = model_of(
            "impl Default for HttpConfig { fn default() -> Self { Self {\n\
             connect_timeout: Duration::from_secs(30),\n\
             client_timeout_in_second: 10,\n\
             read_timeout_ms: 250,\n\
             shutdown_timeout: Duration::from_secs(20),\n\
             pool_idle_timeout: Duration::from_secs(90),\n\
             timeout: 5,\n\
             retries: 3 } } }\n",
        );
        let got: Vec<(&str, f64, &str)> =
            m.timeouts.iter().map(|t| (t.setter.as_str(), t.ms, t.op.as_str())).collect();
        assert_eq!(
            got,
            [
                ("connect_timeout", 30_000.0, "HttpConfig"),
                ("client_timeout_in_second", 10_000.0, "HttpConfig"),
                ("read_timeout_ms", 250.0, "HttpConfig")
            ]
        );
        assert!(m.timeouts.iter().all(|t| t.item.ends_with("default")), "{:?}", m.timeouts);
    }

    #[test]
    fn modifiers_after_the_retry_change_its_policy() {
        let m = model_of(
            "fn a() { (|| get()).retry(ExponentialBuilder::default()).adjust(|e, d| e.retry_after().or(d)).when(|e| e.status() == 429).await; }\n",
        );
        let p = &m.sites[0].policy;
        assert_eq!(p.retry_after.value, Some(true), "{:?}", p.retry_after);
        assert!(p.refusal_only);
    }

    #[test]
    fn spawn_style_calls_and_their_conditions() {
        let m = model_of(
            "fn a() { Retry::spawn(FixedInterval::from_millis(10).take(3), || client.post(\"/o\").send()); }\n\
             fn b() { RetryIf::spawn(FixedInterval::from_millis(10).take(3), op, |e: &E| e.is_idempotent()); }\n",
        );
        assert_eq!(m.sites.len(), 2, "{:?}", m.sites);
        assert_eq!(m.sites[0].policy.attempts.value, Attempts::Total(4.0));
        assert!(m.sites[0].policy.methods.contains("POST"));
        assert!(m.sites[1].policy.method_gated);
    }

    #[test]
    fn timeouts_are_read_from_setters_and_from_tokio_timeout() {
        let m = model_of(
            "fn a() { let c = Client::builder().timeout(Duration::from_secs(2)).connect_timeout(Duration::from_millis(300)).build(); }\n\
             async fn b() { tokio::time::timeout(Duration::from_millis(800), fut).await; }\n\
             fn c() { let d = Duration::from_secs(dynamic()); x.timeout(d); }\n",
        );
        let t: Vec<(&str, f64)> = m.timeouts.iter().map(|t| (t.setter.as_str(), t.ms)).collect();
        assert_eq!(t, [("timeout", 2000.0), ("connect_timeout", 300.0), ("timeout", 800.0)]);
    }

    #[test]
    fn a_policy_built_and_retried_is_one_site_and_one_built_alone_is_kept() {
        let retried = model_of("fn a() { let b = ExponentialBuilder::default(); (|| get()).retry(b); }\n");
        assert_eq!(retried.sites.len(), 1, "{:?}", retried.sites);
        let alone = model_of(
            "fn policy() -> ExponentialBuilder { ExponentialBuilder::default().with_max_times(2) }\n",
        );
        assert_eq!(alone.sites.len(), 1);
        assert_eq!(alone.sites[0].policy.attempts.value, Attempts::Total(3.0));
    }

    const METHOD_HELPER: &str = "async fn call(c: &Client, method: reqwest::Method, url: &str) -> R {\n\
         (|| async { c.request(method.clone(), url).send().await }).retry(ExponentialBuilder::default().with_jitter()).await\n\
         }\n";

    #[test]
    fn a_method_handed_to_a_helper_is_what_its_retry_sends() {
        let m = model_of(&format!(
            "{METHOD_HELPER}fn a(c: &Client) {{ call(c, Method::POST, U); }}\nfn b(c: &Client) {{ call(c, reqwest::Method::from_bytes(b\"PATCH\").unwrap(), U); }}\nfn g(c: &Client) {{ call(c, Method::GET, U); }}\n"
        ));
        let methods = |item: &str| m.sites.iter().find(|s| s.item == item).map(|s| s.policy.methods.clone());
        assert!(methods("a").is_some_and(|ms| ms.contains("POST")), "{:?}", m.sites);
        assert!(methods("b").is_some_and(|ms| ms.contains("PATCH")));
        assert!(methods("g").is_some_and(|ms| !ms.contains("POST") && ms.contains("GET")));
    }

    #[test]
    fn a_function_handed_a_method_is_looked_for_elsewhere_whatever_its_name() {
        let m = model_of("fn a(c: &Client) { crate::http::call(c, Method::POST, U); }\n");
        assert!(m.unresolved.contains("call"), "{:?}", m.unresolved);
        let m = model_of("fn a(c: &Client) { crate::http::call(c, &Method::GET.clone(), U); }\n");
        assert!(m.unresolved.contains("call"), "a read is looked for too: the base may have sent it");
        let m = model_of("fn a(c: &Client) { crate::http::call(c, verb, U); crate::http::other(c, 3); }\n");
        assert!(m.unresolved.is_empty(), "{:?}", m.unresolved);
        let m = model_of("fn a(c: &Client) { let r = reqwest::Request::new(Method::POST, u); send(r); }\n");
        assert!(!m.unresolved.contains("new"), "a type's constructor builds a value: {:?}", m.unresolved);
    }

    #[test]
    fn a_handed_method_is_read_through_unwrap_clone_and_references() {
        let arg = |src: &str| handed_method(&syn::parse_str::<syn::Expr>(src).unwrap());
        assert_eq!(arg("Method::POST").as_deref(), Some("POST"));
        assert_eq!(arg("&reqwest::Method::PATCH.clone()").as_deref(), Some("PATCH"));
        assert_eq!(arg("Method::from_str(\"POST\")?").as_deref(), Some("POST"));
        assert_eq!(arg("Method::from_bytes(b\"DELETE\").expect(\"m\")").as_deref(), Some("DELETE"));
        assert_eq!(arg("method"), None);
        assert_eq!(arg("Method::from_bytes(raw)"), None);
        assert_eq!(arg("Verb::POST"), None);
    }
}
