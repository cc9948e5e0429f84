//! Hand-written retry loops as sites: which `for`/`while`/`loop` around a
//! request is a retry (it re-sends after a failure and stops on success), its
//! attempt bound, its delays, and what it sends. The syntax tests behind the
//! decision (exits, refusals, periodic loops) are in [`super::super::loops`].

use syn::visit::Visit;
use syn::{Expr, Item};

use super::super::eval::Env;
use super::super::loops::{self, exits_on_success, has_exit, is_variant};
use super::super::policy::{Attempts, Fact, Lib, Policy};
use super::super::syntax::{body_facts, ident_of, lines_of};
use super::{pat_ident, FnWalker, Site};

impl<'w, 'i, 'a> FnWalker<'w, 'i, 'a> {
    /// Hand-rolled retry loops. A retry re-issues the same request after a
    /// failure and stops on success; a loop that sends each pass and carries
    /// on whatever happens (a periodic flush or poll, the supervision or
    /// reconnect loop of a long-running task) is not one, nor is a loop that
    /// goes round again after a success to wait for a state (a poll), nor a
    /// `for` over a collection (one request per item).
    pub(super) fn retry_loop(&mut self, whole: &'a Expr) {
        let (body, attempts, label_hint, bound_text) = match whole {
            Expr::ForLoop(f) => {
                if !matches!(&*f.expr, Expr::Range(_)) {
                    return;
                }
                let hint = pat_ident(&f.pat).unwrap_or_default();
                let text = format!("`for {} in {}`", code(&f.pat), code(&f.expr));
                (&f.body, self.range_len(&f.expr), hint, text)
            }
            Expr::While(w) => match &*w.cond {
                // `while let Err(e) = call()`: runs until the call succeeds.
                Expr::Let(l) if is_variant(&l.pat, "Err") => match self.loop_bound(&w.body) {
                    Some((bound, cond)) => (
                        &w.body,
                        Some(bound),
                        String::new(),
                        format!("`while let Err(..)` exits on `{cond}`"),
                    ),
                    None => (
                        &w.body,
                        Some(Attempts::Unbounded),
                        String::new(),
                        "a `while let Err(..)` loop with no attempt limit".into(),
                    ),
                },
                // `while let Some(x) = rx.recv()`: a consumer, not a retry.
                Expr::Let(_) => return,
                cond => {
                    let hint = cond_ident(cond).unwrap_or_default();
                    let bound = self.while_bound(cond).or_else(|| self.loop_bound(&w.body).map(|(b, _)| b));
                    (&w.body, bound, hint, format!("`while {}`", code(cond)))
                }
            },
            Expr::Loop(l) => match self.loop_bound(&l.body) {
                Some((bound, cond)) => {
                    (&l.body, Some(bound), String::new(), format!("`loop` exits on `{cond}`"))
                }
                None => (
                    &l.body,
                    Some(Attempts::Unbounded),
                    String::new(),
                    "a `loop` with no attempt limit".into(),
                ),
            },
            _ => return,
        };
        // The whole loop: `while let Err(e) = client.post(..).send()` sends
        // in its condition.
        let mut facts = body_facts(whole);
        // `delay(d).await`, where `delay` is a function of this file that
        // sleeps: the project's own sleep.
        if facts.sleeps == 0 {
            let sleepers = facts
                .callees
                .iter()
                .filter(|c| self.w.fn_facts(c).is_some_and(|f| f.sleeps > 0 && !f.sends_request))
                .count();
            facts.sleeps += sleepers;
        }
        // `match backoff.next() { Some(d) if r.is_err() => sleep(d), _ => break r }`:
        // a library's strategy iterator, driven by hand, decides the waits
        // and how many there are.
        let driver = self.driving_policy(body);
        // What the loop re-runs: a request of a known client, or any
        // fallible operation whose result it tests (`match op() { Ok(..)
        // => .., Err(..) => .. }`), whatever library sends it.
        // A loop that sleeps and goes round again (`continue`) re-runs
        // what it runs each pass, whatever that is.
        let reruns =
            facts.sends_request || loops::tests_a_result(whole) || (facts.sleeps > 0 && facts.has_continue);
        if !reruns
            || !(facts.sleeps > 0 || facts.has_continue || loops::retries_on_error_arm(body))
            || loops::is_periodic(body)
            || loops::polls_after_success(body)
        {
            return;
        }
        let named_like_retry = {
            let h = label_hint.to_ascii_lowercase();
            h.contains("attempt") || h.contains("retr") || h.contains("tries") || h.contains("try")
        };
        let is_retry = match whole {
            // A bounded `for`/`while` over attempts: the loop ends by itself,
            // so an exit on success (or a name that says so) makes it a retry.
            Expr::ForLoop(_) => has_exit(body) || named_like_retry,
            Expr::While(w) if matches!(&*w.cond, Expr::Let(_)) => true,
            // An open-ended loop must stop when the request succeeds.
            _ => exits_on_success(body) || (named_like_retry && has_exit(body)),
        };
        if !is_retry {
            return;
        }
        // A loop that stops when a backoff policy's `next_backoff()` gives
        // none is bounded by that policy, which is built elsewhere.
        let attempts = match (attempts, &driver) {
            (Some(Attempts::Unbounded), Some(d)) => d.attempts.value,
            (Some(Attempts::Unbounded), None) if facts.delay_from_policy => Attempts::Unknown,
            (a, _) => a.unwrap_or(Attempts::Unknown),
        };
        // An attempt bound retrygate cannot compute: the names it is made
        // of, so a changed definition of one of them is said, not missed.
        let unresolved = match whole {
            Expr::ForLoop(f) if attempts == Attempts::Unknown => bound_names(&f.expr),
            Expr::While(w) if attempts == Attempts::Unknown && !matches!(&*w.cond, Expr::Let(_)) => {
                bound_names(&w.cond)
            }
            _ => Vec::new(),
        };
        let drawn = facts.uses_randomness || self.w.random_through(&facts.jitter_calls, 0);
        // Randomness drawn in the loop jitters only when it reaches a wait.
        let unreached = drawn && self.delay_randomness(body) == Some(false);
        let random = drawn && !unreached;
        let mut p = Policy::new(
            Lib::HAND_ROLLED,
            Fact::new(attempts, bound_text),
            if random {
                Fact::new(Some(true), "the loop's delay uses randomness")
            } else if unreached {
                Fact::new(Some(false), "the loop draws randomness, but none of it reaches the delay it waits")
            } else if let Some(d) = &driver {
                Fact::new(
                    d.jitter.value,
                    format!("the loop waits what its strategy's `next()` gives ({})", d.jitter.why),
                )
            } else if facts.delay_from_policy {
                // `backoff.next_backoff()`: the policy value decides (the
                // backoff crate's ExponentialBackoff jitters by default).
                Fact::new(None, "the loop's delay comes from a backoff policy's `next_backoff()`")
            } else if facts.sleeps == 0 {
                Fact::new(Some(false), "the loop goes round again at once, with no delay")
            } else {
                Fact::new(Some(false), "the loop's delay uses no randomness")
            },
        );
        self.read_retried(&mut p, body, &facts, "the loop");
        if let Some(d) = &driver {
            p.min_delay_ms = p.min_delay_ms.or(d.min_delay_ms);
            p.max_delay_ms = p.max_delay_ms.or(d.max_delay_ms);
        }
        // In a hand-written loop only HTTP writes count: a call named like a
        // write (`send_status()`, `enqueue()`, `refund_use()`) in a loop is
        // as often a message loop, an agent's tool loop or a
        // compare-and-swap on an in-memory copy as a retry of a remote write
        // (holdout6: 12 such blocks, all false). A library or helper retry
        // names what it retries; there the verbs count.
        p.methods.retain(|m| !m.ends_with("()"));
        let (line, end_line) = lines_of(whole);
        // Follow helpers the loop calls for the request itself.
        let mut merged = facts;
        let callees = std::mem::take(&mut merged.callees);
        self.w.merge_callees(&mut merged, callees);
        merged.methods.retain(|m| !m.ends_with("()"));
        p.add_requests(&merged);
        let ops = super::super::ops::resolve(&self.item, &merged.ops);
        self.w.out.sites.push(Site {
            item: self.item.clone(),
            line,
            end_line,
            policy: p,
            unresolved,
            standalone: false,
            ops,
        });
    }

    /// Whether randomness reaches the waits of a loop body: what each
    /// timer call (`sleep(d)`, `Delay::new(t)`) is given, the `let`s its
    /// names were bound by (followed up to [`MAX_DELAY_DEPTH`] deep), and
    /// the functions of the file it calls. `None` when a wait's value
    /// cannot be followed (a parameter, a field, a function the file does
    /// not define): the loop's randomness is then taken as it is.
    fn delay_randomness(&mut self, body: &'a syn::Block) -> Option<bool> {
        let args = timer_args(body);
        if args.is_empty() {
            return None;
        }
        let mut seen = std::collections::HashSet::new();
        for a in args {
            if self.expr_randomness(a, 0, &mut seen)? {
                return Some(true);
            }
        }
        Some(false)
    }

    /// [`Self::delay_randomness`] of one expression.
    fn expr_randomness(
        &mut self,
        e: &'a Expr,
        depth: usize,
        seen: &mut std::collections::HashSet<String>,
    ) -> Option<bool> {
        if depth > MAX_DELAY_DEPTH {
            return None;
        }
        let f = body_facts(e);
        if f.uses_randomness || f.delay_from_policy || self.w.random_through(&f.jitter_calls, 0) {
            return Some(true);
        }
        for c in f.callees.iter().filter(|c| !f.jitter_calls.contains(c)) {
            let called = self
                .w
                .fn_facts(c)
                .map(|cf| (cf.uses_randomness || cf.delay_from_policy, cf.jitter_calls.clone()))?;
            if called.0 || self.w.random_through(&called.1, 0) {
                return Some(true);
            }
        }
        let line = super::super::syntax::line_of(e);
        for name in local_names(e) {
            if !seen.insert(name.clone()) {
                continue;
            }
            let init = self.env.lookup(&name, line)?;
            if self.expr_randomness(init, depth + 1, seen)? {
                return Some(true);
            }
        }
        Some(false)
    }

    /// What a hand-written retry's code says of its delays, its Retry-After
    /// handling and what it sends (`who` names it in the facts' reasons).
    fn read_retried(
        &self,
        p: &mut Policy,
        body: &'a syn::Block,
        facts: &super::super::syntax::BodyFacts,
        who: &str,
    ) {
        let sleeps = SleepArgs::collect(body, &self.env);
        p.min_delay_ms = sleeps.iter().copied().reduce(f64::min);
        p.max_delay_ms = sleeps.iter().copied().reduce(f64::max);
        p.retry_after = if facts.reads_retry_after {
            Fact::new(Some(true), format!("{who} reads Retry-After"))
        } else {
            Fact::new(Some(false), format!("{who} does not read Retry-After"))
        };
        p.methods = facts.methods.clone();
        p.idempotency_key = facts.idempotency_key;
        p.method_gated = facts.method_gated;
        p.refusal_only = loops::retries_on_refusal_only_with(body, &|cond| self.held_predicate(cond));
    }

    /// A function that calls itself on its error path (`Err(e) if attempt
    /// < 3 => { sleep(d).await; Box::pin(send(c, attempt + 1)).await }`):
    /// a retry of what the function sends, written as recursion. Its bound
    /// is the comparison that guards the call (on a counter it passes on),
    /// its delays the sleeps of the body; a call of itself outside an error
    /// path (a walk of a tree, a paginated fetch) is no retry.
    pub(super) fn recursive_retry(&mut self, sig: &'a syn::Signature, block: &'a syn::Block) {
        let name = sig.ident.to_string();
        let params = param_names(sig);
        let sent = sent_params(block, &params);
        let mut finder = SelfCall {
            name: &name,
            params: &params,
            sent: &sent,
            in_err: 0,
            guards: 0,
            found: None,
            resent: None,
        };
        finder.visit_block(block);
        let facts = body_facts(block);
        // It must send something to be a retry of it (a parser that
        // recurses on its error path retries nothing).
        if !facts.sends_request && facts.methods.is_empty() {
            return;
        }
        // Outside an error path, a call of itself that sends again what it
        // was given, counting down or up, after a wait, re-sends the same
        // request (`self.retry(req, sleep, remaining - 1)` when the
        // response says rate-limited); a walk that recurses into new work
        // passes other values and does not wait.
        let resent = finder.resent.filter(|_| facts.sleeps > 0);
        let Some(guarded) = finder.found.or(resent) else { return };
        let (attempts, why) = match self.loop_bound(block) {
            Some((bound, cond)) => (bound, format!("`{name}` calls itself on failure while `{cond}`")),
            None if guarded => (
                Attempts::Unknown,
                format!("`{name}` calls itself on failure under a condition retrygate could not compute"),
            ),
            None => (Attempts::Unbounded, format!("`{name}` calls itself on every failure, with no limit")),
        };
        let random = facts.uses_randomness || self.w.random_through(&facts.jitter_calls, 0);
        let mut p = Policy::new(
            Lib::HAND_ROLLED,
            Fact::new(attempts, why),
            if random {
                Fact::new(Some(true), "the recursion's delay uses randomness")
            } else if facts.sleeps == 0 {
                Fact::new(Some(false), "the function calls itself at once, with no delay")
            } else {
                Fact::new(Some(false), "the recursion's delay uses no randomness")
            },
        );
        self.read_retried(&mut p, block, &facts, "the function");
        // A function handed a built request (`req: Request`) re-sends
        // whatever its callers build: the requests of its file.
        let types = super::param_types(sig);
        let handed_request =
            sent.iter().any(|n| types.get(n).is_some_and(|t| REQUEST_TYPES.contains(&t.as_str())));
        if handed_request {
            let mut file = self.w.index.file_facts();
            // The HTTP requests only: the file's calls of its own helpers
            // (`send_req()`) are the route to this function, not writes.
            file.methods.retain(|m| !m.ends_with("()"));
            p.add_requests(&file);
            if p.methods.is_empty() {
                p.methods.insert(super::super::syntax::UNKNOWN_METHOD.into());
            }
        }
        let mut merged = facts;
        let callees: Vec<String> =
            std::mem::take(&mut merged.callees).into_iter().filter(|c| *c != name).collect();
        self.w.merge_callees(&mut merged, callees);
        p.add_requests(&merged);
        let ops = super::super::ops::resolve(&self.item, &merged.ops);
        let (line, end_line) = lines_of(sig);
        self.w.out.sites.push(Site {
            item: self.item.clone(),
            line,
            end_line,
            policy: p,
            unresolved: Vec::new(),
            standalone: false,
            ops,
        });
    }

    /// The library policy whose iterator the loop drives by hand
    /// (`backoff.next()` on a binding that resolves to a tokio-retry
    /// strategy); its root is then consumed by this loop.
    fn driving_policy(&mut self, body: &'a syn::Block) -> Option<Policy> {
        struct Next<'a>(Option<&'a Expr>);
        impl<'a> Visit<'a> for Next<'a> {
            fn visit_expr_method_call(&mut self, m: &'a syn::ExprMethodCall) {
                let plain = matches!(&*m.receiver, Expr::Path(p) if p.path.segments.len() == 1);
                if self.0.is_none() && m.method == "next" && m.args.is_empty() && plain {
                    self.0 = Some(&m.receiver);
                }
                syn::visit::visit_expr_method_call(self, m);
            }
            fn visit_expr_closure(&mut self, _: &'a syn::ExprClosure) {}
            fn visit_item(&mut self, _: &'a Item) {}
        }
        let mut v = Next(None);
        v.visit_block(body);
        let r = self.resolve(v.0?, 0)?;
        for k in &r.keys {
            self.w.consumed.insert(*k);
        }
        Some(r.policy)
    }

    /// What a retry condition tests when it calls a predicate held in a
    /// field (`(self.retry_if)(status)`): the functions and closures the
    /// file sets that field to (`retry_if: default_retry_if`), read
    /// together. `None` when no value of the field is known.
    fn held_predicate(&self, cond: &Expr) -> Option<loops::Tests> {
        let field = loops::called_field(cond)?;
        let values = self.env.fields.get(&field)?;
        let mut tests = loops::Tests::default();
        let mut read = false;
        for v in values {
            let mut names =
                PredicateBodies { fns: &self.w.index.fns, blocks: Vec::new(), closures: Vec::new() };
            syn::visit::Visit::visit_expr(&mut names, v);
            for b in names.blocks {
                let t = loops::tests_of_block(b);
                tests.refusal |= t.refusal;
                tests.after_apply |= t.after_apply;
                read = true;
            }
            for c in names.closures {
                let t = loops::tests_of_expr(c);
                tests.refusal |= t.refusal;
                tests.after_apply |= t.after_apply;
                read = true;
            }
        }
        read.then_some(tests)
    }

    pub(super) fn range_len(&self, e: &Expr) -> Option<Attempts> {
        let Expr::Range(r) = e else { return None };
        let start = r.start.as_deref().map_or(Some(0.0), |s| self.env.number(s))?;
        let end = self.env.number(r.end.as_deref()?)?;
        let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
        Some(Attempts::from_total(Some(end - start + if inclusive { 1.0 } else { 0.0 })))
    }

    pub(super) fn while_bound(&self, cond: &Expr) -> Option<Attempts> {
        let Expr::Binary(b) = cond else { return None };
        let n = self.env.number(&b.right)?;
        match b.op {
            syn::BinOp::Lt(_) => Some(Attempts::from_total(Some(n))),
            syn::BinOp::Le(_) => Some(Attempts::from_total(Some(n + 1.0))),
            _ => None,
        }
    }

    /// `loop { .. if attempt >= N { break/return } .. }`.
    pub(super) fn loop_bound(&self, body: &syn::Block) -> Option<(Attempts, String)> {
        loops::loop_bound(body, &self.env)
    }
}

/// The names an attempt bound is computed from (`0..cfg.max_retries()` ->
/// `cfg`, `max_retries`), in order, without the loop's own counter words.
fn bound_names(e: &Expr) -> Vec<String> {
    struct Names(Vec<String>);
    impl<'a> Visit<'a> for Names {
        fn visit_ident(&mut self, i: &'a proc_macro2::Ident) {
            let n = i.to_string();
            if n != "self" && n != "Self" && !self.0.contains(&n) {
                self.0.push(n);
            }
        }
    }
    let mut names = Names(Vec::new());
    names.visit_expr(e);
    names.0
}

/// Source text of a node for messages, as tokens (`0 ..= MAX_RETRIES`).
fn code<T: quote::ToTokens>(node: &T) -> String {
    let text = node.to_token_stream().to_string();
    if text.len() > 60 {
        format!("{}..", &text[..text.char_indices().nth(57).map_or(text.len(), |(i, _)| i)])
    } else {
        text
    }
}

fn cond_ident(e: &Expr) -> Option<String> {
    match e {
        Expr::Binary(b) => ident_of(&b.left),
        _ => None,
    }
}

/// How many `let`s deep [`FnWalker::delay_randomness`] follows a wait's
/// value.
const MAX_DELAY_DEPTH: usize = 8;

/// The arguments of the timer calls of a body (`sleep(d)`, `sleep_until(t)`,
/// `Delay::new(t)`), not inside nested items.
fn timer_args(body: &syn::Block) -> Vec<&Expr> {
    struct Timers<'a>(Vec<&'a Expr>);
    impl<'a> Visit<'a> for Timers<'a> {
        fn visit_expr_call(&mut self, c: &'a syn::ExprCall) {
            if let Expr::Path(p) = &*c.func {
                if super::super::syntax::is_timer_call(&p.path) {
                    self.0.extend(c.args.iter());
                }
            }
            syn::visit::visit_expr_call(self, c);
        }
        fn visit_item(&mut self, _: &'a Item) {}
    }
    let mut v = Timers(Vec::new());
    v.visit_block(body);
    v.0
}

/// The single-segment names an expression reads (`base`, `attempt`,
/// `MAX_DELAY`), not the functions it calls by name, nor inside closures.
fn local_names(e: &Expr) -> Vec<String> {
    struct Names(Vec<String>);
    impl<'a> Visit<'a> for Names {
        fn visit_expr_call(&mut self, c: &'a syn::ExprCall) {
            for a in &c.args {
                self.visit_expr(a);
            }
            if !matches!(&*c.func, Expr::Path(_)) {
                self.visit_expr(&c.func);
            }
        }
        fn visit_expr_path(&mut self, p: &'a syn::ExprPath) {
            if let Some(i) = p.path.get_ident() {
                self.0.push(i.to_string());
            }
        }
        fn visit_expr_closure(&mut self, _: &'a syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'a Item) {}
    }
    let mut v = Names(Vec::new());
    v.visit_expr(e);
    v.0
}

/// Durations passed to `sleep(..)` inside a loop body.
struct SleepArgs<'e, 'a> {
    env: &'e Env<'a>,
    found: Vec<f64>,
}

/// The bodies a field's value names: functions of the file by name, and
/// closures written in place.
struct PredicateBodies<'f, 'a> {
    fns: &'f std::collections::HashMap<String, &'a syn::Block>,
    blocks: Vec<&'a syn::Block>,
    closures: Vec<&'f Expr>,
}

impl<'f, 'a> Visit<'f> for PredicateBodies<'f, 'a> {
    fn visit_expr_path(&mut self, p: &'f syn::ExprPath) {
        if let Some(b) = p.path.segments.last().and_then(|s| self.fns.get(&s.ident.to_string())) {
            self.blocks.push(b);
        }
    }
    fn visit_expr_closure(&mut self, c: &'f syn::ExprClosure) {
        self.closures.push(&c.body);
    }
}

impl<'e, 'a> SleepArgs<'e, 'a> {
    fn collect(body: &syn::Block, env: &'e Env<'a>) -> Vec<f64> {
        let mut v = SleepArgs { env, found: Vec::new() };
        v.visit_block(body);
        v.found
    }
}

impl<'ast> Visit<'ast> for SleepArgs<'_, '_> {
    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if let Expr::Path(p) = &*c.func {
            if p.path.segments.last().is_some_and(|s| s.ident == "sleep") {
                if let Some(ms) = c.args.first().and_then(|a| self.env.millis(a)) {
                    self.found.push(ms);
                }
            }
        }
        syn::visit::visit_expr_call(self, c);
    }
    fn visit_item(&mut self, _: &'ast Item) {}
}

/// Finds a call of the function `name` itself on an error path: in a match
/// arm whose pattern is `Err(..)`, or in the body of `if let Err(..)`.
/// `found` says whether that call also sits under an `if` or an arm guard
/// (a bound may hold it).
/// Types of a request built before it is sent (reqwest's, http's).
const REQUEST_TYPES: &[&str] = &["Request", "RequestBuilder"];

struct SelfCall<'n> {
    name: &'n str,
    /// The function's parameters in order (the receiver left out).
    params: &'n [String],
    /// The parameters the body hands to a call ([`sent_params`]).
    sent: &'n [String],
    in_err: u32,
    guards: u32,
    /// A call of itself on an error path; `Some(true)` when a condition
    /// guards it.
    found: Option<bool>,
    /// A call of itself anywhere that passes a sent parameter on unchanged
    /// and steps a counter ([`SelfCall::resends`]); `Some(true)` when
    /// guarded.
    resent: Option<bool>,
}

/// The names of a signature's plainly named parameters, in order.
fn param_names(sig: &syn::Signature) -> Vec<String> {
    sig.inputs
        .iter()
        .filter_map(|a| match a {
            syn::FnArg::Typed(t) => pat_ident(&t.pat).or_else(|| Some(String::new())),
            syn::FnArg::Receiver(_) => None,
        })
        .collect()
}

/// The parameters among `params` that the body gives to a call as an
/// argument (`client.execute(req.try_clone()?)`, `send(&req)`): what the
/// function sends, when it is handed its request.
fn sent_params(block: &syn::Block, params: &[String]) -> Vec<String> {
    struct Sent<'p> {
        params: &'p [String],
        out: Vec<String>,
    }
    impl Sent<'_> {
        fn arg(&mut self, a: &Expr) {
            if let Some(root) = arg_root(a) {
                if self.params.contains(&root) && !self.out.contains(&root) {
                    self.out.push(root);
                }
            }
        }
    }
    impl<'a> Visit<'a> for Sent<'_> {
        fn visit_expr_call(&mut self, c: &'a syn::ExprCall) {
            c.args.iter().for_each(|a| self.arg(a));
            syn::visit::visit_expr_call(self, c);
        }
        fn visit_expr_method_call(&mut self, m: &'a syn::ExprMethodCall) {
            m.args.iter().for_each(|a| self.arg(a));
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_item(&mut self, _: &'a Item) {}
    }
    let mut v = Sent { params, out: Vec::new() };
    v.visit_block(block);
    v.out
}

/// The local an argument is made from: `req`, `&req`, `req.clone()`,
/// `req.try_clone().unwrap()`.
fn arg_root(e: &Expr) -> Option<String> {
    match e {
        Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
        Expr::Reference(r) => arg_root(&r.expr),
        Expr::Paren(p) => arg_root(&p.expr),
        Expr::Try(t) => arg_root(&t.expr),
        Expr::MethodCall(m) if m.args.is_empty() => arg_root(&m.receiver),
        _ => None,
    }
}

/// `n - 1`, `attempt + 1`, `n.saturating_sub(1)`: a counter parameter
/// stepped by one.
fn steps_counter(e: &Expr, params: &[String]) -> bool {
    let one = |e: &Expr| matches!(e, Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) if i.base10_digits() == "1");
    let param = |e: &Expr| arg_root(e).is_some_and(|r| params.contains(&r));
    match e {
        Expr::Binary(b) => {
            matches!(b.op, syn::BinOp::Add(_) | syn::BinOp::Sub(_)) && param(&b.left) && one(&b.right)
        }
        Expr::MethodCall(m) => {
            let name = m.method.to_string();
            matches!(name.as_str(), "saturating_sub" | "saturating_add" | "checked_sub" | "checked_add")
                && param(&m.receiver)
                && m.args.first().is_some_and(one)
        }
        Expr::Paren(p) => steps_counter(&p.expr, params),
        _ => false,
    }
}

impl SelfCall<'_> {
    /// The arguments of `e` when it calls this function.
    fn self_args<'e>(&self, e: &'e Expr) -> Option<Vec<&'e Expr>> {
        match e {
            Expr::Call(c) if self.calls_self(e) => Some(c.args.iter().collect()),
            Expr::MethodCall(m) if self.calls_self(e) => Some(m.args.iter().collect()),
            _ => None,
        }
    }

    /// Whether a call of itself sends again what this call sent: a
    /// parameter the body hands to a call is passed on in its own place,
    /// and another parameter is stepped by one.
    fn resends(&self, args: &[&Expr]) -> bool {
        let same = args.iter().enumerate().any(|(i, a)| {
            self.params.get(i).is_some_and(|p| {
                !p.is_empty() && self.sent.contains(p) && arg_root(a).as_deref() == Some(p.as_str())
            })
        });
        same && args.iter().any(|a| steps_counter(a, self.params))
    }

    fn calls_self(&self, e: &Expr) -> bool {
        match e {
            Expr::Call(c) => match &*c.func {
                Expr::Path(p) => {
                    let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
                    segs.last().is_some_and(|l| l == self.name)
                        && (segs.len() == 1 || (segs.len() == 2 && segs[0] == "Self"))
                }
                _ => false,
            },
            Expr::MethodCall(m) => {
                m.method == self.name && matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self"))
            }
            _ => false,
        }
    }
}

impl<'ast> Visit<'ast> for SelfCall<'_> {
    fn visit_expr(&mut self, e: &'ast Expr) {
        if self.in_err > 0 && self.found.is_none() && self.calls_self(e) {
            self.found = Some(self.guards > 0);
        }
        if self.resent.is_none() && self.self_args(e).is_some_and(|args| self.resends(&args)) {
            self.resent = Some(self.guards > 0);
        }
        match e {
            Expr::If(i) => {
                let err = matches!(&*i.cond, Expr::Let(l) if is_variant(&l.pat, "Err"));
                self.visit_expr(&i.cond);
                self.in_err += u32::from(err);
                self.guards += u32::from(!err);
                self.visit_block(&i.then_branch);
                self.in_err -= u32::from(err);
                self.guards -= u32::from(!err);
                if let Some((_, els)) = &i.else_branch {
                    self.guards += 1;
                    self.visit_expr(els);
                    self.guards -= 1;
                }
            }
            Expr::Match(m) => {
                self.visit_expr(&m.expr);
                for arm in &m.arms {
                    let err = is_variant(&arm.pat, "Err");
                    let guarded = arm.guard.is_some();
                    self.in_err += u32::from(err);
                    self.guards += u32::from(guarded);
                    self.visit_expr(&arm.body);
                    self.in_err -= u32::from(err);
                    self.guards -= u32::from(guarded);
                }
            }
            _ => syn::visit::visit_expr(self, e),
        }
    }
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'ast Item) {}
}

#[cfg(test)]
mod tests {
    use super::super::model_of;
    use super::*;

    fn loops(src: &str) -> Vec<Policy> {
        model_of(src).sites.into_iter().map(|s| s.policy).filter(|p| p.lib == Lib::HAND_ROLLED).collect()
    }

    #[test]
    fn a_bounded_for_over_attempts_is_a_retry_with_its_count_and_delays() {
        let p = loops(
            "const MAX: u32 = 3;\nfn a() { for attempt in 0..=MAX { match client.post(\"/o\").send() { Ok(r) => return Ok(r), Err(_) => sleep(Duration::from_millis(100)) } } }\n",
        );
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].attempts.value, Attempts::Total(4.0));
        assert_eq!((p[0].min_delay_ms, p[0].max_delay_ms), (Some(100.0), Some(100.0)));
        assert_eq!(p[0].jitter.value, Some(false));
        assert!(p[0].methods.contains("POST"));
        assert!(p[0].attempts.why.contains("for attempt in"), "{}", p[0].attempts.why);
    }

    #[test]
    fn loops_that_are_not_retries() {
        // Over a collection: one request per item.
        assert!(loops("fn a() { for id in ids { client.get(id).send(); sleep(d); } }").is_empty());
        // A consumer.
        assert!(
            loops("fn a() { while let Some(x) = rx.recv() { client.post(x).send(); sleep(d); } }").is_empty()
        );
        // No request in the loop.
        assert!(loops("fn a() { for i in 0..3 { sleep(d); if done() { break; } } }").is_empty());
    }

    #[test]
    fn while_bounds_and_open_loops() {
        let w = loops("fn a() { let mut tries = 0; while tries < 5 { if client.get(u).send().is_ok() { break; } tries += 1; sleep(d); } }");
        assert_eq!(w[0].attempts.value, Attempts::Total(5.0));
        let l = loops("fn a() { loop { match client.get(u).send() { Ok(r) => return r, Err(_) => { sleep(jittered(d)); continue; } } } }");
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].attempts.value, Attempts::Unbounded);
        let e = loops("fn a() { while let Err(e) = client.get(u).send() { sleep(d); } }");
        assert_eq!(e[0].attempts.value, Attempts::Unbounded);
    }

    #[test]
    fn a_jitter_named_function_jitters_only_when_its_body_randomises() {
        let looped = |helper: &str| {
            loops(&format!(
                "fn a() {{ for attempt in 0..3 {{ if client.get(u).send().is_ok() {{ break; }} sleep(jitter(attempt)); }} }}\n{helper}\n"
            ))
        };
        let random = looped("fn jitter(n: u32) -> Duration { Duration::from_millis(100 * n as u64 + rand::random::<u64>() % 100) }");
        assert_eq!(random[0].jitter.value, Some(true), "{:?}", random[0].jitter);
        let hashed = looped(
            "fn jitter(n: u32) -> Duration { let mut h = DefaultHasher::new(); n.hash(&mut h); Duration::from_millis(h.finish() % 100) }",
        );
        assert_eq!(hashed[0].jitter.value, Some(false), "a deterministic body under a jitter name");
        let nested = looped(
            "fn jitter(n: u32) -> Duration { Duration::from_millis(full_jitter(n)) }\nfn full_jitter(n: u32) -> u64 { fastrand::u64(0..n as u64) }",
        );
        assert_eq!(nested[0].jitter.value, Some(true), "through another jitter-named function");
        let elsewhere = looped("");
        assert_eq!(elsewhere[0].jitter.value, Some(true), "not defined here: trusted until found");
    }

    #[test]
    fn randomness_jitters_only_when_it_reaches_the_wait() {
        let jitter = |body: &str| {
            let p = loops(&format!(
                "fn a() {{\nlet mut attempt = 0;\nloop {{ match client.get(u).send() {{ Ok(r) => return r, Err(_) if attempt < 3 => {{\nattempt += 1;\n{}\n}} Err(e) => return e }} }} }}\nfn backoff(n: u64) -> Duration {{ Duration::from_millis(100 * n) }}\n",
                body.replace("; ", ";\n")
            ));
            p[0].jitter.value
        };
        assert_eq!(
            jitter("let j = rand::random::<u64>() % 100; sleep(Duration::from_millis(100 + j));"),
            Some(true)
        );
        assert_eq!(
            jitter("let j = rand::random::<u64>() % 100; let d = Duration::from_millis(100 + j); sleep(d);"),
            Some(true),
            "through two lets"
        );
        assert_eq!(
            jitter("let id = rand::random::<u64>(); log(id); sleep(Duration::from_millis(100 * attempt));"),
            Some(false),
            "drawn for something else"
        );
        assert_eq!(
            jitter("let id = rand::random::<u64>(); log(id); sleep(backoff(attempt));"),
            Some(false),
            "a deterministic function of the file"
        );
        assert_eq!(
            jitter("let id = rand::random::<u64>(); log(id); sleep(other_file_delay(attempt));"),
            Some(true),
            "a function the file does not define: the loop's randomness stands"
        );
        assert_eq!(
            jitter("let id = rand::random::<u64>(); log(id); sleep(self.delay);"),
            Some(true),
            "a value not followed"
        );
    }

    #[test]
    fn a_jitter_function_the_file_does_not_define_is_looked_for() {
        let m = super::super::model_of(
            "fn a() { for attempt in 0..3 { if client.get(u).send().is_ok() { break; } sleep(jitter(attempt)); } }\n",
        );
        assert!(m.unresolved.contains("jitter"), "{:?}", m.unresolved);
    }

    #[test]
    fn randomness_in_the_loop_is_jitter() {
        let p = loops("fn a() { for attempt in 0..3 { if client.get(u).send().is_ok() { break; } sleep(Duration::from_millis(rand::random::<u64>() % 100)); } }");
        assert_eq!(p[0].jitter.value, Some(true), "{:?}", p[0].jitter);
    }

    #[test]
    fn code_is_shortened_for_messages() {
        let short: syn::Expr = syn::parse_str("0..=MAX_RETRIES").unwrap();
        assert_eq!(code(&short), "0 ..= MAX_RETRIES");
        let long: syn::Expr =
            syn::parse_str(&format!("0..{}", "a_very_long_name + ".repeat(8) + "1")).unwrap();
        let c = code(&long);
        assert!(c.ends_with("..") && c.chars().count() == 59, "{c}");
    }
}
