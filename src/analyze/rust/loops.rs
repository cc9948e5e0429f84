//! What makes a hand-written loop a retry, and what bounds it.
//!
//! A retry re-issues the same request after a failure and stops when it
//! succeeds. Loops that merely contain a request are common in real crates
//! and are not retries: a periodic flush or poll (`interval.tick()`), or the
//! supervision loop of a long-running task that reconnects forever by design.
//! What tells them apart is the exit: a retry leaves the loop on success
//! (`Ok(v) => return Ok(v)`, `break resp`, `if resp.status().is_success() {
//! break }`); the others carry on whatever the request returned.
//!
//! The bound of a retry is read from the shapes real code uses:
//! `if attempt >= MAX { return .. }`, a match guard `Err(e) if attempt < MAX => ..`, a
//! counter kept in a struct field (`self.attempts > self.max`), or an
//! elapsed-time limit (`start.elapsed() > limit`). A bound whose value cannot
//! be computed is still a bound: it is reported as unknown, never as none.

use quote::ToTokens;
use syn::visit::Visit;
use syn::{Expr, Item, Pat};

use super::eval::Env;
use super::policy::Attempts;

/// Whether `pat` is `Variant(..)` (`Ok(v)`, `Err(_)`, `Some(x)`), possibly
/// qualified (`Result::Ok(v)`).
pub(crate) fn is_variant(pat: &Pat, variant: &str) -> bool {
    match pat {
        Pat::TupleStruct(t) => t.path.segments.last().is_some_and(|s| s.ident == variant),
        Pat::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == variant),
        Pat::Or(o) => o.cases.iter().all(|c| is_variant(c, variant)),
        Pat::Paren(p) => is_variant(&p.pat, variant),
        Pat::Reference(r) => is_variant(&r.pat, variant),
        _ => false,
    }
}

fn call_name(e: &Expr) -> Option<String> {
    match e {
        Expr::Call(c) => match &*c.func {
            Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        },
        Expr::MethodCall(m) if m.method == "into" => call_name(&m.receiver),
        Expr::Paren(p) => call_name(&p.expr),
        _ => None,
    }
}

/// `Ok(())` / `()`: what a loop that merely stops returns.
fn is_unit_result(e: &Expr) -> bool {
    match e {
        Expr::Tuple(t) => t.elems.is_empty(),
        Expr::Call(c) => {
            call_name(e).as_deref() == Some("Ok")
                && c.args.len() == 1
                && c.args.first().is_some_and(is_unit_result)
        }
        _ => false,
    }
}

/// Method names whose truth means the request succeeded.
const SUCCESS_TESTS: &[&str] = &["is_success", "is_ok", "is_some"];
/// Method names whose truth means it failed (the `else` branch succeeded).
const FAILURE_TESTS: &[&str] = &["is_err", "is_none", "is_client_error", "is_server_error"];

/// Whether a condition tests for success (`Some(true)`), failure
/// (`Some(false)`), or neither.
fn tests_success(cond: &Expr) -> Option<bool> {
    match cond {
        Expr::Let(l) if is_variant(&l.pat, "Ok") => Some(true),
        Expr::Let(l) if is_variant(&l.pat, "Some") && is_outcome(&l.expr) => Some(true),
        Expr::Let(l) if is_variant(&l.pat, "Err") => Some(false),
        Expr::MethodCall(m) => {
            if SUCCESS_TESTS.iter().any(|t| m.method == t) {
                Some(true)
            } else if FAILURE_TESTS.iter().any(|t| m.method == t) {
                Some(false)
            } else {
                None
            }
        }
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => tests_success(&u.expr).map(|b| !b),
        Expr::Paren(p) => tests_success(&p.expr),
        Expr::Binary(b) if matches!(b.op, syn::BinOp::And(_)) => {
            tests_success(&b.left).or(tests_success(&b.right))
        }
        _ => None,
    }
}

/// Whether `e` is what an operation just gave (a call, a method call, an
/// `.await`, a `?`), as opposed to a value the loop already held: a
/// `Some(..)` of `task_cancel` or `self.deadline` says that option is set,
/// not that a request succeeded, so leaving the loop inside it is no exit
/// on success.
fn is_outcome(e: &Expr) -> bool {
    match e {
        Expr::Call(_) | Expr::MethodCall(_) | Expr::Await(_) | Expr::Try(_) | Expr::Macro(_) => true,
        Expr::Paren(p) => is_outcome(&p.expr),
        Expr::Group(g) => is_outcome(&g.expr),
        Expr::Reference(r) => is_outcome(&r.expr),
        _ => false,
    }
}

/// Whether the loop body leaves the loop when the request succeeds.
pub(crate) fn exits_on_success(body: &syn::Block) -> bool {
    let mut v = SuccessExit { in_success: 0, found: false };
    v.visit_block(body);
    v.found
}

struct SuccessExit {
    /// Depth of success contexts (`Ok(..) =>` arms, `if let Ok(..)`) around
    /// the node being visited.
    in_success: u32,
    found: bool,
}

impl SuccessExit {
    fn exit(&mut self, value: Option<&Expr>) {
        let success_value = value.is_some_and(|v| {
            !matches!(call_name(v).as_deref(), Some("Err" | "None"))
                && !is_unit_result(v)
                && !is_error_path(v)
        });
        if self.in_success > 0 || success_value {
            self.found = true;
        }
    }

    fn in_context<F: FnOnce(&mut Self)>(&mut self, success: bool, f: F) {
        if success {
            self.in_success += 1;
            f(self);
            self.in_success -= 1;
        } else {
            f(self);
        }
    }
}

/// `e` / `err` / `error`: a value named as an error.
fn is_error_path(e: &Expr) -> bool {
    match e {
        Expr::Path(p) => p.path.get_ident().is_some_and(|i| {
            let s = i.to_string();
            s == "e" || s.starts_with("err") || s.ends_with("_err") || s.ends_with("error")
        }),
        Expr::MethodCall(m) if m.method == "into" => is_error_path(&m.receiver),
        _ => false,
    }
}

impl<'ast> Visit<'ast> for SuccessExit {
    fn visit_expr_break(&mut self, b: &'ast syn::ExprBreak) {
        // A labelled `break 'outer` leaves an enclosing loop too.
        self.exit(b.expr.as_deref());
        syn::visit::visit_expr_break(self, b);
    }

    fn visit_expr_return(&mut self, r: &'ast syn::ExprReturn) {
        self.exit(r.expr.as_deref());
        syn::visit::visit_expr_return(self, r);
    }

    fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
        self.visit_expr(&m.expr);
        let outcome = is_outcome(&m.expr);
        for a in &m.arms {
            let success = is_variant(&a.pat, "Ok") || (outcome && is_variant(&a.pat, "Some"));
            self.in_context(success, |v| syn::visit::visit_arm(v, a));
        }
    }

    fn visit_expr_if(&mut self, i: &'ast syn::ExprIf) {
        self.visit_expr(&i.cond);
        let t = tests_success(&i.cond);
        self.in_context(t == Some(true), |v| v.visit_block(&i.then_branch));
        if let Some((_, e)) = &i.else_branch {
            self.in_context(t == Some(false), |v| v.visit_expr(e));
        }
    }

    fn visit_expr_loop(&mut self, _: &'ast syn::ExprLoop) {
        // An inner loop's exits leave the inner loop.
    }
    fn visit_expr_while(&mut self, _: &'ast syn::ExprWhile) {}
    fn visit_expr_for_loop(&mut self, _: &'ast syn::ExprForLoop) {}
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_expr_async(&mut self, _: &'ast syn::ExprAsync) {}
    fn visit_item(&mut self, _: &'ast Item) {}
}

/// Whether a loop tests the outcome of a fallible operation: a `match` with
/// an `Ok`/`Err` arm, an `if let Ok(..)`/`Err(..)`, or `while let Err(..)`.
/// Such a loop re-runs that operation when it goes round again, whichever
/// library the operation belongs to.
pub(crate) fn tests_a_result(e: &Expr) -> bool {
    struct Outcome(bool);
    impl<'ast> Visit<'ast> for Outcome {
        // `if result.is_ok() || tries >= 3 { break result; }`
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            if (m.method == "is_ok" || m.method == "is_err") && m.args.is_empty() {
                self.0 = true;
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
            if m.arms.iter().any(|a| is_variant(&a.pat, "Ok") || is_variant(&a.pat, "Err")) {
                self.0 = true;
            }
            syn::visit::visit_expr_match(self, m);
        }
        fn visit_expr_let(&mut self, l: &'ast syn::ExprLet) {
            if is_variant(&l.pat, "Ok") || is_variant(&l.pat, "Err") {
                self.0 = true;
            }
            syn::visit::visit_expr_let(self, l);
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast Item) {}
    }
    let mut v = Outcome(false);
    v.visit_expr(e);
    v.0
}

/// Whether the body waits on a timer tick (`interval.tick().await`): a
/// periodic loop, which sends new data each pass.
pub(crate) fn is_periodic(body: &syn::Block) -> bool {
    struct Tick(bool);
    impl<'ast> Visit<'ast> for Tick {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            if m.method == "tick" && m.args.is_empty() {
                self.0 = true;
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            // `tokio::select! { _ = interval.tick() => .. }`
            let mut prev_tick = false;
            for tt in m.tokens.clone() {
                match &tt {
                    proc_macro2::TokenTree::Ident(i) => prev_tick = i == "tick",
                    proc_macro2::TokenTree::Group(g) if prev_tick && g.stream().is_empty() => self.0 = true,
                    _ => prev_tick = false,
                }
            }
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast Item) {}
    }
    let mut v = Tick(false);
    v.visit_block(body);
    v.0
}

/// Whether the loop goes round again after a success: inside an `Ok(..)`
/// or `Some(..)` arm (or `if let Ok(..)`), a branch on the value that
/// leaves the loop on one path and carries on on another, testing a state
/// the answer holds rather than its HTTP status (`match state.status {
/// Running => break, Init => {} }`). That loop waits for a state by
/// polling, one request per pass whatever the answer; a retry goes round
/// only after a failure (an `Err`, or a status such as 429 or 5xx).
pub(crate) fn polls_after_success(body: &syn::Block) -> bool {
    struct Poll {
        /// Names bound by the success patterns around the node (`state` in
        /// `Ok(state) =>`): a poll branches on the answer, not on a counter.
        answer: Vec<String>,
        /// Depth of code under a test of the HTTP status (an arm guarded
        /// by `is_retryable(resp.status())`): a success there is a failure
        /// status the loop retries, not a state it waits for.
        under_status: u32,
        found: bool,
    }
    impl Poll {
        fn branch(&mut self, tested: &dyn quote::ToTokens, paths: &[&Expr]) {
            let tokens = tested.to_token_stream();
            if self.under_status > 0 || !mentions(&tokens, &self.answer) || names_status(tokens) {
                return;
            }
            let leaves = paths.iter().filter(|e| always_exits(e)).count();
            if leaves > 0 && leaves < paths.len() {
                self.found = true;
            }
        }
        fn in_success(&mut self, pat: &Pat, f: impl FnOnce(&mut Self)) {
            let before = self.answer.len();
            if is_variant(pat, "Ok") || is_variant(pat, "Some") {
                let mut names = PatNames(Vec::new());
                names.visit_pat(pat);
                self.answer.extend(names.0);
            }
            f(self);
            self.answer.truncate(before);
        }
    }
    struct PatNames(Vec<String>);
    impl<'ast> Visit<'ast> for PatNames {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            self.0.push(p.ident.to_string());
            syn::visit::visit_pat_ident(self, p);
        }
    }
    impl<'ast> Visit<'ast> for Poll {
        fn visit_arm(&mut self, a: &'ast syn::Arm) {
            let status = a.guard.as_ref().is_some_and(|(_, g)| names_status(g.to_token_stream()));
            self.under_status += u32::from(status);
            self.in_success(&a.pat, |v| syn::visit::visit_arm(v, a));
            self.under_status -= u32::from(status);
        }
        fn visit_local(&mut self, l: &'ast syn::Local) {
            // `let state: State = resp.json().await?;` holds the answer too.
            if l.init.as_ref().is_some_and(|i| mentions(&i.expr.to_token_stream(), &self.answer)) {
                let mut names = PatNames(Vec::new());
                names.visit_pat(&l.pat);
                self.answer.extend(names.0);
            }
            syn::visit::visit_local(self, l);
        }
        fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
            let arms: Vec<&Expr> = m.arms.iter().map(|a| &*a.body).collect();
            self.branch(&*m.expr, &arms);
            let status = names_status(m.expr.to_token_stream());
            self.under_status += u32::from(status);
            syn::visit::visit_expr_match(self, m);
            self.under_status -= u32::from(status);
        }
        fn visit_expr_if(&mut self, i: &'ast syn::ExprIf) {
            self.visit_expr(&i.cond);
            if let Expr::Let(l) = &*i.cond {
                self.in_success(&l.pat, |v| v.visit_block(&i.then_branch));
            } else {
                let then =
                    Expr::Block(syn::ExprBlock { attrs: vec![], label: None, block: i.then_branch.clone() });
                let unit = Expr::Tuple(syn::ExprTuple {
                    attrs: vec![],
                    paren_token: Default::default(),
                    elems: Default::default(),
                });
                let other = i.else_branch.as_ref().map_or(&unit, |(_, e)| &**e);
                self.branch(&*i.cond, &[&then, other]);
                let status = names_status(i.cond.to_token_stream());
                self.under_status += u32::from(status);
                self.visit_block(&i.then_branch);
                if let Some((_, e)) = &i.else_branch {
                    self.visit_expr(e);
                }
                self.under_status -= u32::from(status);
                return;
            }
            if let Some((_, e)) = &i.else_branch {
                self.visit_expr(e);
            }
        }
        fn visit_expr_loop(&mut self, _: &'ast syn::ExprLoop) {}
        fn visit_expr_while(&mut self, _: &'ast syn::ExprWhile) {}
        fn visit_expr_for_loop(&mut self, _: &'ast syn::ExprForLoop) {}
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast Item) {}
    }
    let mut v = Poll { answer: Vec::new(), under_status: 0, found: false };
    v.visit_block(body);
    v.found
}

/// Whether `tokens` name one of `names`.
fn mentions(tokens: &proc_macro2::TokenStream, names: &[String]) -> bool {
    !names.is_empty()
        && tokens.clone().into_iter().any(|tt| match &tt {
            proc_macro2::TokenTree::Ident(i) => names.iter().any(|n| i == n),
            proc_macro2::TokenTree::Group(g) => mentions(&g.stream(), names),
            _ => false,
        })
}

/// Whether tokens read an HTTP status: a `.status()` call, `is_success()`,
/// `StatusCode`, `as_u16()`, or a literal status code (a field named
/// `status` is the answer's own state, not its HTTP status).
fn names_status(tokens: proc_macro2::TokenStream) -> bool {
    use proc_macro2::{Delimiter, TokenTree};
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    tokens.iter().enumerate().any(|(k, tt)| match tt {
        TokenTree::Ident(i) => {
            let s = i.to_string();
            let called = matches!(tokens.get(k + 1), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis);
            matches!(s.as_str(), "is_success" | "is_server_error" | "is_client_error" | "as_u16" | "StatusCode")
                || (called && matches!(s.as_str(), "status" | "status_code"))
        }
        TokenTree::Literal(l) => l.to_string().parse::<u32>().is_ok_and(|n| (100..600).contains(&n)),
        TokenTree::Group(g) => names_status(g.stream()),
        TokenTree::Punct(_) => false,
    })
}

/// Whether the loop body, at its top level, matches on what an operation
/// just gave so that success leaves the loop and failure goes round again:
/// `match op().await { Ok(v) => break v, Err(e) => warn!(..) }`. Such a
/// loop re-runs the operation at once after every failure, with no sleep
/// or `continue` to say so.
pub(crate) fn retries_on_error_arm(body: &syn::Block) -> bool {
    body.stmts.iter().any(|s| {
        let e = match s {
            syn::Stmt::Expr(e, _) => e,
            syn::Stmt::Local(l) => match &l.init {
                Some(init) => &init.expr,
                None => return false,
            },
            _ => return false,
        };
        let Expr::Match(m) = e else { return false };
        if !is_outcome(&m.expr) {
            return false;
        }
        let ok_leaves = m.arms.iter().any(|a| is_variant(&a.pat, "Ok") && always_exits(&a.body));
        let err_stays = m.arms.iter().any(|a| is_variant(&a.pat, "Err") && !always_exits(&a.body));
        ok_leaves && err_stays
    })
}

/// Whether a failure can end the loop: a `?`, a `return` or `break` of an
/// `Err(..)` or of a value named as an error, a `bail!`/`panic!`, or any
/// `break`/`return` inside an `Err` arm (or `if let Err(..)`). Closures,
/// async blocks and nested items are not the loop's own code. A loop that
/// cannot give up leaves only on success or on a stop it is told (a
/// shutdown's `return Ok(())`): it retries every failure for ever.
pub(crate) fn can_give_up(body: &syn::Block) -> bool {
    struct GiveUp {
        in_err: u32,
        found: bool,
    }
    impl GiveUp {
        fn exit(&mut self, value: Option<&Expr>) {
            let failing = value.is_some_and(|v| call_name(v).as_deref() == Some("Err") || is_error_path(v));
            if self.in_err > 0 || failing {
                self.found = true;
            }
        }
        fn in_err<F: FnOnce(&mut Self)>(&mut self, err: bool, f: F) {
            self.in_err += u32::from(err);
            f(self);
            self.in_err -= u32::from(err);
        }
    }
    impl<'ast> Visit<'ast> for GiveUp {
        fn visit_expr_try(&mut self, t: &'ast syn::ExprTry) {
            self.found = true;
            syn::visit::visit_expr_try(self, t);
        }
        fn visit_expr_return(&mut self, r: &'ast syn::ExprReturn) {
            self.exit(r.expr.as_deref());
            syn::visit::visit_expr_return(self, r);
        }
        fn visit_expr_break(&mut self, b: &'ast syn::ExprBreak) {
            self.exit(b.expr.as_deref());
            syn::visit::visit_expr_break(self, b);
        }
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            if leaves_by_macro(m) {
                self.found = true;
            }
        }
        fn visit_arm(&mut self, a: &'ast syn::Arm) {
            self.in_err(is_variant(&a.pat, "Err"), |v| syn::visit::visit_arm(v, a));
        }
        fn visit_expr_if(&mut self, i: &'ast syn::ExprIf) {
            let err = matches!(&*i.cond, Expr::Let(l) if is_variant(&l.pat, "Err"));
            self.visit_expr(&i.cond);
            self.in_err(err, |v| v.visit_block(&i.then_branch));
            if let Some((_, e)) = &i.else_branch {
                self.visit_expr(e);
            }
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_expr_async(&mut self, _: &'ast syn::ExprAsync) {}
        fn visit_item(&mut self, _: &'ast Item) {}
    }
    let mut v = GiveUp { in_err: 0, found: false };
    v.visit_block(body);
    v.found
}

/// Whether every path through `e` leaves the loop (`break`, `return`,
/// `bail!`/`panic!`/`unreachable!`).
fn always_exits(e: &Expr) -> bool {
    match e {
        Expr::Break(_) | Expr::Return(_) => true,
        Expr::Macro(m) => leaves_by_macro(&m.mac),
        Expr::Block(b) => block_always_exits(&b.block),
        Expr::If(i) => {
            block_always_exits(&i.then_branch) && i.else_branch.as_ref().is_some_and(|(_, e)| always_exits(e))
        }
        Expr::Match(m) => !m.arms.is_empty() && m.arms.iter().all(|a| always_exits(&a.body)),
        _ => false,
    }
}

/// `bail!`, `panic!`, `unreachable!`, `todo!`: they never fall through.
fn leaves_by_macro(m: &syn::Macro) -> bool {
    m.path
        .segments
        .last()
        .is_some_and(|s| matches!(s.ident.to_string().as_str(), "bail" | "panic" | "unreachable" | "todo"))
}

fn block_always_exits(b: &syn::Block) -> bool {
    b.stmts.iter().any(|s| match s {
        syn::Stmt::Expr(e, _) => always_exits(e),
        syn::Stmt::Macro(m) => leaves_by_macro(&m.mac),
        _ => false,
    })
}

/// Identifiers that name an attempt counter or a time budget.
/// A `let` binding of the function: a counter, where a limit is a
/// constant or a parameter (`attempt < max_retries` with `let mut attempt
/// = 0` is not `0 < max_retries`).
fn is_local(e: &Expr, env: &Env) -> bool {
    matches!(e, Expr::Path(p) if p.path.get_ident().is_some_and(|i| env.lets.contains_key(&i.to_string())))
}

fn names_a_counter(e: &Expr) -> bool {
    let text = match e {
        Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        Expr::Field(f) => match &f.member {
            syn::Member::Named(n) => Some(n.to_string()),
            syn::Member::Unnamed(_) => None,
        },
        Expr::MethodCall(m) => Some(m.method.to_string()),
        Expr::Call(c) => match &*c.func {
            Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        },
        Expr::Paren(p) => return names_a_counter(&p.expr),
        Expr::Cast(c) => return names_a_counter(&c.expr),
        Expr::Unary(u) => return names_a_counter(&u.expr),
        _ => None,
    };
    text.is_some_and(|t| {
        let t = t.to_ascii_lowercase();
        ["attempt", "retr", "tries", "try", "count", "elapsed", "deadline", "budget", "remaining", "left"]
            .iter()
            .any(|w| t.contains(w))
            || t == "n"
            || t == "i"
    })
}

/// Whether a comparison reads elapsed time (`start.elapsed() > limit`,
/// `Instant::now() >= deadline`).
fn is_time_test(e: &Expr) -> bool {
    match e {
        Expr::MethodCall(m) => m.method == "elapsed" || is_time_test(&m.receiver),
        Expr::Call(c) => {
            matches!(&*c.func, Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "now"))
        }
        Expr::Path(p) => p.path.get_ident().is_some_and(|i| {
            let s = i.to_string().to_ascii_lowercase();
            s.contains("deadline") || s.contains("elapsed")
        }),
        Expr::Paren(p) => is_time_test(&p.expr),
        _ => false,
    }
}

/// The attempt bound of a loop body, with the condition's text.
pub(crate) fn loop_bound(body: &syn::Block, env: &Env) -> Option<(Attempts, String)> {
    let mut finder = BoundFinder { env, found: None };
    finder.visit_block(body);
    finder.found
}

struct BoundFinder<'e, 'a> {
    env: &'e Env<'a>,
    found: Option<(Attempts, String)>,
}

impl BoundFinder<'_, '_> {
    /// A comparison that stops the loop when true (`attempt >= MAX` before
    /// a `return`), or keeps retrying while true (`attempt < MAX` in a guard).
    fn comparison(&self, cond: &Expr, stops_when_true: bool) -> Option<Attempts> {
        let Expr::Binary(b) = cond else { return None };
        if let syn::BinOp::And(_) | syn::BinOp::Or(_) = b.op {
            return self
                .comparison(&b.left, stops_when_true)
                .or_else(|| self.comparison(&b.right, stops_when_true));
        }
        // Normalise `MAX <= attempt` to `attempt >= MAX`.
        let (counter, limit, op) = if self.env.number(&b.left).is_some()
            && self.env.number(&b.right).is_none()
            && !is_local(&b.left, self.env)
        {
            (&*b.right, &*b.left, flip(b.op))
        } else {
            (&*b.left, &*b.right, b.op)
        };
        if is_time_test(counter) || is_time_test(limit) {
            let stop = matches!(op, syn::BinOp::Gt(_) | syn::BinOp::Ge(_));
            let keep = matches!(op, syn::BinOp::Lt(_) | syn::BinOp::Le(_));
            if (stops_when_true && stop) || (!stops_when_true && keep) {
                return Some(match self.env.millis(limit) {
                    Some(ms) => Attempts::TimeBounded(ms),
                    None => Attempts::Unknown,
                });
            }
            return None;
        }
        // `exit_code(&pod) != Some(0)`: a test of what an operation
        // returned, not of how many times it ran.
        if is_option_or_result(counter) || is_option_or_result(limit) {
            return None;
        }
        // An (in)equality counts attempts only when one side is a counter:
        // `status != 200` keeps going on a status, `attempt == MAX` stops
        // at a count.
        if matches!(op, syn::BinOp::Eq(_) | syn::BinOp::Ne(_))
            && !names_a_counter(counter)
            && !names_a_counter(limit)
            && !is_local(counter, self.env)
        {
            return None;
        }
        let n = self.env.number(limit);
        if n.is_none() && !names_a_counter(counter) && !names_a_counter(limit) {
            return None;
        }
        // `left == 0`: a count down, whose size is where it started
        // (`let mut n_retry = 3;` .. `n_retry -= 1`): that many retries.
        let counts_down = matches!(
            (op, stops_when_true),
            (syn::BinOp::Eq(_) | syn::BinOp::Le(_), true) | (syn::BinOp::Ne(_) | syn::BinOp::Gt(_), false)
        );
        if counts_down && n == Some(0.0) && is_local(counter, self.env) {
            return Some(match self.env.number(counter).filter(|start| *start > 0.0) {
                Some(start) => Attempts::from_retries(Some(start)),
                None => Attempts::Unknown,
            });
        }
        if matches!(op, syn::BinOp::Eq(_) | syn::BinOp::Ne(_)) && n == Some(0.0) {
            return Some(Attempts::Unknown);
        }
        let bound = match (op, stops_when_true) {
            (syn::BinOp::Ge(_) | syn::BinOp::Eq(_), true) => n.map(|n| Attempts::from_total(Some(n))),
            (syn::BinOp::Gt(_), true) => n.map(|n| Attempts::from_total(Some(n + 1.0))),
            (syn::BinOp::Lt(_), false) => n.map(|n| Attempts::from_retries(Some(n))),
            (syn::BinOp::Le(_), false) => n.map(|n| Attempts::from_retries(Some(n + 1.0))),
            (syn::BinOp::Ne(_), false) => n.map(|n| Attempts::from_total(Some(n))),
            _ => return None,
        };
        // A bound that cannot be computed (`self.max_attempts`) is a bound.
        Some(bound.unwrap_or(Attempts::Unknown))
    }
}

/// `Some(x)`, `None`, `Ok(x)`, `Err(x)`: a value wrapped as an outcome.
fn is_option_or_result(e: &Expr) -> bool {
    match e {
        Expr::Paren(p) => is_option_or_result(&p.expr),
        Expr::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == "None"),
        _ => matches!(call_name(e).as_deref(), Some("Some" | "Ok" | "Err")),
    }
}

fn flip(op: syn::BinOp) -> syn::BinOp {
    use syn::BinOp::*;
    match op {
        Lt(t) => Gt(syn::Token![>](t.span)),
        Le(t) => Ge(syn::Token![>=](t.spans)),
        Gt(t) => Lt(syn::Token![<](t.span)),
        Ge(t) => Le(syn::Token![<=](t.spans)),
        other => other,
    }
}

/// Whether a block leaves the loop or the function (`break`, `return`, `?`,
/// a panic).
pub(crate) fn has_exit(body: &syn::Block) -> bool {
    let mut v = Exit { found: false, nested_loops: 0 };
    v.visit_block(body);
    v.found
}

/// Whether an expression `continue`s the loop it is in.
fn expr_continues(e: &Expr) -> bool {
    let block = syn::Block { brace_token: Default::default(), stmts: vec![syn::Stmt::Expr(e.clone(), None)] };
    has_continue(&block)
}

/// Whether a block `continue`s the loop it is in.
fn has_continue(b: &syn::Block) -> bool {
    struct Continue(bool);
    impl<'ast> Visit<'ast> for Continue {
        fn visit_expr_continue(&mut self, _: &'ast syn::ExprContinue) {
            self.0 = true;
        }
        fn visit_expr_loop(&mut self, _: &'ast syn::ExprLoop) {}
        fn visit_expr_while(&mut self, _: &'ast syn::ExprWhile) {}
        fn visit_expr_for_loop(&mut self, _: &'ast syn::ExprForLoop) {}
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast Item) {}
    }
    let mut v = Continue(false);
    v.visit_block(b);
    v.0
}

fn expr_exits(e: &Expr) -> bool {
    let mut v = Exit { found: false, nested_loops: 0 };
    v.visit_expr(e);
    v.found
}

/// Finds a way out of a loop's body. A `break` without a label inside a
/// loop nested in the body leaves that inner loop only, and nothing inside
/// a closure or an `async` block leaves the loop: a `for` that spawns
/// workers, each running its own loop, does not end when a worker does.
struct Exit {
    found: bool,
    /// Loops nested in the body around the node being visited.
    nested_loops: u32,
}

impl Exit {
    fn nested(&mut self, f: impl FnOnce(&mut Self)) {
        self.nested_loops += 1;
        f(self);
        self.nested_loops -= 1;
    }
}

impl<'ast> Visit<'ast> for Exit {
    fn visit_expr_break(&mut self, b: &'ast syn::ExprBreak) {
        if self.nested_loops == 0 || b.label.is_some() {
            self.found = true;
        }
        syn::visit::visit_expr_break(self, b);
    }
    fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
        self.found = true;
    }
    fn visit_expr_try(&mut self, t: &'ast syn::ExprTry) {
        self.found = true;
        syn::visit::visit_expr_try(self, t);
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if m.path.segments.last().is_some_and(|s| s.ident == "panic" || s.ident == "bail") {
            self.found = true;
        }
    }
    fn visit_expr_loop(&mut self, l: &'ast syn::ExprLoop) {
        self.nested(|v| syn::visit::visit_expr_loop(v, l));
    }
    fn visit_expr_while(&mut self, w: &'ast syn::ExprWhile) {
        self.nested(|v| syn::visit::visit_expr_while(v, w));
    }
    fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
        self.nested(|v| syn::visit::visit_expr_for_loop(v, f));
    }
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_expr_async(&mut self, _: &'ast syn::ExprAsync) {}
    fn visit_item(&mut self, _: &'ast Item) {}
}

fn code<T: quote::ToTokens>(node: &T) -> String {
    let text = node.to_token_stream().to_string();
    match text.char_indices().nth(57) {
        Some((i, _)) if text.len() > 60 => format!("{}..", &text[..i]),
        _ => text,
    }
}

impl<'ast> Visit<'ast> for BoundFinder<'_, '_> {
    fn visit_expr_if(&mut self, i: &'ast syn::ExprIf) {
        if self.found.is_none() {
            let then_exits = has_exit(&i.then_branch);
            let else_exits = i.else_branch.as_ref().is_some_and(|(_, e)| expr_exits(e));
            let bound = if then_exits {
                self.comparison(&i.cond, true)
            } else if else_exits || has_continue(&i.then_branch) {
                // `if attempt < MAX { sleep; continue } else { return Err(e) }`,
                // or `if retries < MAX { retries += 1; continue; }` then a
                // fall-through that returns.
                self.comparison(&i.cond, false)
            } else {
                None
            };
            self.found = bound.map(|a| (a, code(&*i.cond)));
        }
        syn::visit::visit_expr_if(self, i);
    }

    fn visit_arm(&mut self, a: &'ast syn::Arm) {
        // `Err(e) if attempt < MAX => { attempt += 1; sleep(..) }`
        if self.found.is_none() {
            if let Some((_, guard)) = &a.guard {
                // An arm that goes round again (`continue`) keeps retrying
                // while its guard holds, even when an error inside it can
                // leave early (`?`).
                let bound = if expr_exits(&a.body) && !expr_continues(&a.body) {
                    self.comparison(guard, true)
                } else {
                    self.comparison(guard, false)
                };
                self.found = bound.map(|b| (b, code(&**guard)));
            }
        }
        syn::visit::visit_arm(self, a);
    }

    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'ast Item) {}
}

/// Statuses and tests meaning the server refused the request before acting
/// on it (429, 401, 407): a retry after them cannot repeat a write.
/// reqwest's `is_connect()` and `ConnectionRefused`: the connection was
/// never made, so nothing was sent.
const REFUSAL_WORDS: &[&str] = &[
    "TOO_MANY_REQUESTS",
    "UNAUTHORIZED",
    "PROXY_AUTHENTICATION_REQUIRED",
    "is_rate_limited",
    "is_connect",
    "ConnectionRefused",
];
const REFUSAL_CODES: &[u64] = &[429, 401, 407];
/// Statuses and tests that come after the request may have been applied:
/// 5xx, timeouts, broken connections.
const AFTER_APPLY_WORDS: &[&str] = &[
    "is_server_error",
    "INTERNAL_SERVER_ERROR",
    "BAD_GATEWAY",
    "SERVICE_UNAVAILABLE",
    "GATEWAY_TIMEOUT",
    "is_timeout",
    "is_request",
    "is_body",
    "TimedOut",
    "ConnectionReset",
    "ConnectionAborted",
    "BrokenPipe",
    "UnexpectedEof",
];

/// What a condition tests: a refusal status, an after-apply failure, both
/// or neither.
#[derive(Default, Clone, Copy)]
pub(crate) struct Tests {
    pub(crate) refusal: bool,
    pub(crate) after_apply: bool,
}

struct TestWords(Tests);

impl<'ast> Visit<'ast> for TestWords {
    fn visit_ident(&mut self, i: &'ast proc_macro2::Ident) {
        let s = i.to_string();
        if REFUSAL_WORDS.contains(&s.as_str()) {
            self.0.refusal = true;
        }
        if AFTER_APPLY_WORDS.contains(&s.as_str()) {
            self.0.after_apply = true;
        }
    }
    fn visit_lit_int(&mut self, l: &'ast syn::LitInt) {
        if let Ok(v) = l.base10_parse::<u64>() {
            if REFUSAL_CODES.contains(&v) {
                self.0.refusal = true;
            } else if (500..600).contains(&v) {
                self.0.after_apply = true;
            }
        }
    }
    fn visit_item(&mut self, _: &'ast Item) {}
}

/// What an expression (a `.when(..)` predicate, a condition) tests.
pub(crate) fn tests_of_expr(e: &Expr) -> Tests {
    let mut v = TestWords(Tests::default());
    v.visit_expr(e);
    v.0
}

fn tests_of_pat(p: &Pat) -> Tests {
    let mut v = TestWords(Tests::default());
    v.visit_pat(p);
    v.0
}

/// Whether every way a loop body goes round again (a sleep or a `continue`)
/// sits under a test for a refusal status (429, 401) and none for a 5xx or
/// a timeout: such a loop never re-sends a write the server may have applied.
/// `resolve` tells what a condition tests when it calls something whose
/// body is elsewhere (a predicate held in a field: `(self.should_retry)(status)`).
pub(crate) fn retries_on_refusal_only_with(body: &syn::Block, resolve: &Resolve) -> bool {
    let mut v = RetryPaths { resolve: Some(resolve), ..RetryPaths::default() };
    v.visit_block(body);
    v.refusal_paths > 0 && v.other_paths == 0 && !v.after_apply
}

/// Tells what a condition tests from code elsewhere (`None`: unknown).
pub(crate) type Resolve<'r> = dyn Fn(&Expr) -> Option<Tests> + 'r;

/// The field a condition calls as a function: `(self.retry_if)(code)` and
/// `(cfg.retry_if)(code)` give `retry_if`.
pub(crate) fn called_field(cond: &Expr) -> Option<String> {
    let mut found = None;
    let mut v = CalledField(&mut found);
    v.visit_expr(cond);
    found
}

struct CalledField<'f>(&'f mut Option<String>);

impl<'ast> Visit<'ast> for CalledField<'_> {
    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        let mut f = &*c.func;
        while let Expr::Paren(p) = f {
            f = &p.expr;
        }
        if let Expr::Field(syn::ExprField { member: syn::Member::Named(n), .. }) = f {
            *self.0 = Some(n.to_string());
        }
        syn::visit::visit_expr_call(self, c);
    }
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
}

/// What a function body or closure tests (a predicate's own code).
pub(crate) fn tests_of_block(b: &syn::Block) -> Tests {
    let mut v = TestWords(Tests::default());
    v.visit_block(b);
    v.0
}

/// For an operation that tells its retry which errors are worth another
/// attempt by returning them as transient (`backoff::Error::Transient {..}`,
/// `Error::transient(e)`, tokio-retry's `RetryError::Transient`): whether
/// every transient return sits under a refusal test (429, 401) and none
/// under a 5xx or timeout. `None` when the operation returns nothing
/// transient that can be seen (it is then decided elsewhere).
pub(crate) fn transient_on_refusal_only(op: &Expr) -> Option<bool> {
    let mut body = op;
    loop {
        match body {
            Expr::Closure(c) => body = &c.body,
            Expr::Async(a) => {
                let mut v = RetryPaths { transient: true, ..RetryPaths::default() };
                v.visit_block(&a.block);
                return v.decided();
            }
            Expr::Block(b) => {
                let mut v = RetryPaths { transient: true, ..RetryPaths::default() };
                v.visit_block(&b.block);
                return v.decided();
            }
            Expr::Paren(p) => body = &p.expr,
            _ => return None,
        }
    }
}

#[derive(Default)]
struct RetryPaths<'r> {
    /// Transient returns are the paths that retry (not sleeps or `continue`).
    transient: bool,
    /// What a condition that tests nothing visible calls (see
    /// [`retries_on_refusal_only_with`]).
    resolve: Option<&'r Resolve<'r>>,
    refusal_depth: u32,
    refusal_paths: u32,
    other_paths: u32,
    after_apply: bool,
}

impl RetryPaths<'_> {
    /// What a condition tests, through `resolve` when it shows nothing.
    fn condition(&self, cond: &Expr) -> Tests {
        let t = tests_of_expr(cond);
        if t.refusal || t.after_apply {
            return t;
        }
        self.resolve.and_then(|r| r(cond)).unwrap_or(t)
    }

    fn decided(&self) -> Option<bool> {
        (self.refusal_paths + self.other_paths > 0).then_some(self.other_paths == 0 && !self.after_apply)
    }

    fn path(&mut self) {
        if self.refusal_depth > 0 {
            self.refusal_paths += 1;
        } else {
            self.other_paths += 1;
        }
    }

    fn under(&mut self, t: Tests, f: impl FnOnce(&mut Self)) {
        self.after_apply |= t.after_apply;
        let refusal = t.refusal && !t.after_apply;
        if refusal {
            self.refusal_depth += 1;
        }
        f(self);
        if refusal {
            self.refusal_depth -= 1;
        }
    }
}

impl<'ast> Visit<'ast> for RetryPaths<'_> {
    fn visit_expr_if(&mut self, i: &'ast syn::ExprIf) {
        let t = self.condition(&i.cond);
        self.visit_expr(&i.cond);
        self.under(t, |v| v.visit_block(&i.then_branch));
        if let Some((_, e)) = &i.else_branch {
            self.visit_expr(e);
        }
    }

    fn visit_arm(&mut self, a: &'ast syn::Arm) {
        let mut t = tests_of_pat(&a.pat);
        if let Some((_, g)) = &a.guard {
            let g = self.condition(g);
            t.refusal |= g.refusal;
            t.after_apply |= g.after_apply;
        }
        self.under(t, |v| v.visit_expr(&a.body));
    }

    fn visit_expr_continue(&mut self, _: &'ast syn::ExprContinue) {
        if !self.transient {
            self.path();
        }
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if let Expr::Path(p) = &*c.func {
            if !self.transient
                && p.path.segments.last().is_some_and(|s| s.ident == "sleep" || s.ident == "sleep_ms")
            {
                self.path();
            }
        }
        syn::visit::visit_expr_call(self, c);
    }

    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        // `Error::transient(e)` called, or handed to `map_err` as a value.
        if self.transient
            && p.path.segments.len() > 1
            && p.path.segments.last().is_some_and(|s| s.ident == "transient")
        {
            self.path();
        }
        syn::visit::visit_expr_path(self, p);
    }

    fn visit_expr_struct(&mut self, e: &'ast syn::ExprStruct) {
        if self.transient && e.path.segments.last().is_some_and(|s| s.ident == "Transient") {
            self.path();
        }
        syn::visit::visit_expr_struct(self, e);
    }

    fn visit_expr_loop(&mut self, _: &'ast syn::ExprLoop) {}
    fn visit_expr_while(&mut self, _: &'ast syn::ExprWhile) {}
    fn visit_expr_for_loop(&mut self, _: &'ast syn::ExprForLoop) {}
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'ast Item) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retries_on_refusal_only(body: &syn::Block) -> bool {
        retries_on_refusal_only_with(body, &|_| None)
    }

    fn body(src: &str) -> syn::Block {
        syn::parse_str(src).unwrap()
    }

    #[test]
    fn a_predicate_held_in_a_field_is_resolved_where_the_condition_shows_nothing() {
        let e = |s: &str| -> Expr { syn::parse_str(s).unwrap() };
        assert_eq!(called_field(&e("(self.should_retry)(code) && n < 3")).as_deref(), Some("should_retry"));
        assert_eq!(called_field(&e("self.should_retry(code)")), None, "a method, not a field");
        let b = body("{ let r = send(); if (self.should_retry)(r.status()) { continue; } return r; }");
        assert!(!retries_on_refusal_only(&b), "nothing seen: not refusal-only");
        let refusal = |_: &Expr| Some(Tests { refusal: true, after_apply: false });
        assert!(retries_on_refusal_only_with(&b, &refusal));
        let wide = |_: &Expr| Some(Tests { refusal: true, after_apply: true });
        assert!(!retries_on_refusal_only_with(&b, &wide));
    }

    #[test]
    fn transient_returns_are_the_retry_paths_of_an_operation() {
        let e = |s: &str| -> Expr { syn::parse_str(s).unwrap() };
        let refusal = "|| async { let r = send().await.map_err(Error::Permanent)?; if r.status().as_u16() == 429 { return Err(Error::Transient { err: E, retry_after: None }); } Ok(r) }";
        assert_eq!(transient_on_refusal_only(&e(refusal)), Some(true));
        let wide = "|| async { let r = send().await.map_err(Error::Permanent)?; if r.status().is_server_error() { return Err(Error::Transient { err: E, retry_after: None }); } if r.status().as_u16() == 429 { return Err(Error::transient(E)); } Ok(r) }";
        assert_eq!(transient_on_refusal_only(&e(wide)), Some(false));
        let any = "|| async { send().await.map_err(backoff::Error::transient) }";
        assert_eq!(transient_on_refusal_only(&e(any)), Some(false));
        assert_eq!(transient_on_refusal_only(&e("|| async { send().await }")), None);
        assert_eq!(transient_on_refusal_only(&e("op")), None);
    }

    #[test]
    fn success_exits_are_told_from_failure_exits() {
        assert!(exits_on_success(&body("{ match send() { Ok(v) => return Ok(v), Err(e) => sleep(d) } }")));
        assert!(exits_on_success(&body(
            "{ let r = send()?; if r.status().is_success() { break; } sleep(d); }"
        )));
        assert!(exits_on_success(&body("{ if let Ok(r) = send() { break r; } }")));
        assert!(!exits_on_success(&body("{ if let Err(e) = send() { warn(e); } sleep(d); }")));
        assert!(!exits_on_success(&body(
            "{ match send() { Err(e) => return Err(e), Ok(_) => {} } sleep(d); }"
        )));
        assert!(!exits_on_success(&body("{ if stop.is_cancelled() { return Ok(()); } send(); sleep(d); }")));
    }

    #[test]
    fn a_loop_that_tests_a_result_reruns_an_operation() {
        let e = |s: &str| -> Expr { syn::parse_str(s).unwrap() };
        assert!(tests_a_result(&e(
            "loop { match op().await { Ok(v) => return Ok(v), Err(_) => sleep(d) } }"
        )));
        assert!(tests_a_result(&e("loop { if let Ok(v) = agent.get(u).call() { break v; } sleep(d); }")));
        assert!(!tests_a_result(&e("loop { let x = rx.recv(); if x.is_none() { break; } sleep(d); }")));
        assert!(!tests_a_result(&e(
            "loop { let f = || match op() { Ok(v) => v, Err(e) => panic!() }; f(); }"
        )));
    }

    #[test]
    fn a_guard_on_an_arm_that_continues_keeps_retrying_despite_a_question_mark() {
        let env = Env::default();
        let guard = "{ match classify(&r) { Some(t) if n < 10 => { let d = wait(t)?; sleep(d); n += 1; continue; } _ => return r } }";
        assert_eq!(loop_bound(&body(guard), &env).map(|b| b.0), Some(Attempts::Total(11.0)));
    }

    #[test]
    fn timer_ticks_make_a_loop_periodic() {
        assert!(is_periodic(&body("{ interval.tick().await; send(); }")));
        assert!(is_periodic(&body("{ tokio::select! { _ = interval.tick() => send(), } }")));
        assert!(!is_periodic(&body("{ send(); sleep(d); }")));
    }

    #[test]
    fn refusal_only_retries_are_told_from_wide_ones() {
        let refusal = "{ let r = send(); if r.status() == StatusCode::TOO_MANY_REQUESTS { sleep(d); continue; } return r; }";
        assert!(retries_on_refusal_only(&body(refusal)));
        let wide = "{ let r = send(); if r.status() == 429 || r.status().is_server_error() { sleep(d); continue; } return r; }";
        assert!(!retries_on_refusal_only(&body(wide)));
        let any = "{ match send() { Ok(r) => return Ok(r), Err(_) => sleep(d) } }";
        assert!(!retries_on_refusal_only(&body(any)));
    }

    #[test]
    fn bounds_written_other_ways_are_bounds() {
        let env = Env::default();
        let guard = "{ match send() { Ok(v) => return Ok(v), Err(e) if attempt < 3 => sleep(d), Err(e) => return Err(e) } }";
        assert_eq!(loop_bound(&body(guard), &env).map(|b| b.0), Some(Attempts::Total(4.0)));
        let field = "{ if self.attempts >= self.max_attempts { return Err(e); } }";
        assert_eq!(loop_bound(&body(field), &env).map(|b| b.0), Some(Attempts::Unknown));
        let elapsed = "{ if start.elapsed() > Duration::from_secs(30) { return Err(e); } }";
        assert_eq!(loop_bound(&body(elapsed), &env).map(|b| b.0), Some(Attempts::TimeBounded(30_000.0)));
        let cont = "{ if retries < 3 { retries += 1; continue; } return r; }";
        assert_eq!(loop_bound(&body(cont), &env).map(|b| b.0), Some(Attempts::Total(4.0)));
        assert_eq!(loop_bound(&body("{ send(); sleep(d); }"), &env), None);
        // A counter compared for equality is a bound; an outcome or a
        // status compared for equality is not.
        let eq = "{ if attempt == 5 { return Err(e); } }";
        assert_eq!(loop_bound(&body(eq), &env).map(|b| b.0), Some(Attempts::Total(5.0)));
        let status = "{ let Some(pod) = pod else { continue }; if exit_code(&pod) != Some(0) { continue; } return Ok(pod); }";
        assert_eq!(loop_bound(&body(status), &env), None);
        let code = "{ if resp.status().as_u16() != 200 { sleep(d); continue; } return Ok(resp); }";
        assert_eq!(loop_bound(&body(code), &env), None);
        // A count down to zero is bounded by where it started, a method or
        // a function alike.
        for down in ["{ if left.count() == 0 { break; } }", "{ if count_left(&x) == 0 { break; } }"] {
            assert_eq!(loop_bound(&body(down), &env).map(|b| b.0), Some(Attempts::Unknown), "{down}");
        }
        // A local counted down from a number: that many retries.
        let start: Expr = syn::parse_str("20").unwrap();
        let mut env = Env::default();
        env.lets.insert("n_retry".to_string(), vec![(0, &start)]);
        for down in [
            "{ match send() { Ok(r) => return Ok(r), Err(e) => { if n_retry == 0 { return Err(e); } n_retry -= 1; } } }",
            "{ if n_retry <= 0 { return Err(e); } n_retry -= 1; }",
            "{ match send() { Ok(r) => return Ok(r), Err(e) if n_retry > 0 => { n_retry -= 1; sleep(d) } Err(e) => return Err(e) } }",
        ] {
            assert_eq!(loop_bound(&body(down), &env).map(|b| b.0), Some(Attempts::Total(21.0)), "{down}");
        }
    }
}
