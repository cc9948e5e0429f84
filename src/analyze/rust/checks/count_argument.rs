//! `rust/value-count-argument`: a literal passed to a parameter whose name
//! says it is a retry count went up, or became the type's largest value.
//!
//! A project's own retry helper takes its count positionally
//! (`jobs.requeue(task, err, 20)`,
//! `Backoff::doubling(base, usize::MAX, cap)`): the call site
//! says nothing about retries, the helper's signature does. The literal is
//! paired with the same call's argument in the base (by callee and
//! position), and the callee's parameter name is read from its definition:
//! in a file of the change, or found in the head tree. Definitions that
//! disagree on the name decide nothing.

use serde_json::json;
use syn::visit::Visit;

use super::count_unlinked::{is_retry_count_name, unlinked_severity};
use super::{Applies, Change, RustCheck};
use crate::finding::{Kind, KindDoc};

/// A retry count passed to a parameter named for it.
pub(crate) const CHECK: RustCheck = RustCheck {
    name: "count-argument",
    kinds: &[Kind::RetryCountRaised, Kind::RetryUnbounded],
    applies: Applies::Values,
    doc: KindDoc {
        what: "A literal passed to a function's parameter whose name says it counts retries or attempts (`fn requeue(.., max_retries: u32)`, `fn doubling(.., max_attempts: usize, ..)`) went up, or became the type's largest value (`usize::MAX`: no limit). The parameter's name is read from the function's definition, in the change or in the head tree. Severity as for a named count: an error when the name or its module says retry, a warning for `attempts` or `tries` alone; going unbounded is an error.",
        why: "A project's own retry helper takes its count as a plain argument, so the call that raises it names no retry; the helper's signature is where the project said what the number means.",
        example: "jobs.requeue(task, err, 3)  ->  jobs.requeue(task, err, 20)   (fn requeue(&self, task: Task, err: Error, max_retries: u32))",
        use_instead: "Keep the count, or bound the retry by a deadline as well as a count.",
    },
};

/// A literal number given to one argument of a call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ArgLiteral {
    /// The called function's or method's name (`retryable`, `exponential`).
    pub(crate) callee: String,
    /// The argument's position, receiver not counted for a method call.
    pub(crate) index: usize,
    /// A method call (`x.f(..)`) rather than a path call (`T::f(..)`).
    pub(crate) method: bool,
    /// The number; infinite for an integer type's `MAX`.
    pub(crate) value: f64,
    pub(crate) line: u32,
}

/// Every literal number passed as a call's argument in `file`.
pub(crate) fn argument_literals(file: &syn::File) -> Vec<ArgLiteral> {
    let mut v = ArgVisitor(Vec::new());
    v.visit_file(file);
    v.0
}

struct ArgVisitor(Vec<ArgLiteral>);

impl ArgVisitor {
    fn args<'a>(&mut self, callee: String, method: bool, args: impl Iterator<Item = &'a syn::Expr>) {
        for (index, a) in args.enumerate() {
            if let Some((value, line)) = number(a) {
                self.0.push(ArgLiteral { callee: callee.clone(), index, method, value, line });
            }
        }
    }
}

impl<'ast> Visit<'ast> for ArgVisitor {
    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if let syn::Expr::Path(p) = &*c.func {
            // `Some(7)` is the number of the call around it, not a call.
            if let Some(last) = p
                .path
                .segments
                .last()
                .filter(|l| !matches!(l.ident.to_string().as_str(), "Some" | "Ok" | "Err"))
            {
                self.args(last.ident.to_string(), false, c.args.iter());
            }
        }
        syn::visit::visit_expr_call(self, c);
    }

    fn visit_expr_method_call(&mut self, c: &'ast syn::ExprMethodCall) {
        self.args(c.method.to_string(), true, c.args.iter());
        syn::visit::visit_expr_method_call(self, c);
    }
}

/// `20`, `20usize`, `Some(20)`, `usize::MAX` (infinite), with its line.
/// A literal count (`3`, `Some(3)`) or an integer type's `MAX`, with its line.
pub(crate) fn number(e: &syn::Expr) -> Option<(f64, u32)> {
    match e {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) => {
            Some((i.base10_parse::<u64>().ok()? as f64, i.span().start().line as u32))
        }
        syn::Expr::Path(p) => {
            let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
            let is_max = matches!(segs.as_slice(), [ty, max] if max == "MAX"
                && matches!(ty.as_str(), "usize" | "u8" | "u16" | "u32" | "u64" | "u128" | "isize" | "i32" | "i64"));
            let line = p.path.segments.first()?.ident.span().start().line as u32;
            is_max.then_some((f64::INFINITY, line))
        }
        syn::Expr::Call(c) if c.args.len() == 1 => {
            let syn::Expr::Path(p) = &*c.func else { return None };
            if p.path.is_ident("Some") {
                number(c.args.first()?)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The touched head arguments whose value went up from the same call's
/// argument in the base, paired as [`super::count_unlinked::decide`] pairs
/// named counts: by callee and position, in order, after the untouched
/// occurrences took their base values.
pub(crate) fn raised<'h>(
    base: &[ArgLiteral],
    head: &'h [ArgLiteral],
    touched: impl Fn(u32) -> bool,
) -> Vec<(&'h ArgLiteral, f64)> {
    use std::collections::HashMap;
    let key = |a: &ArgLiteral| (a.callee.clone(), a.index, a.method);
    let mut before: HashMap<(String, usize, bool), Vec<f64>> = HashMap::new();
    for b in base {
        before.entry(key(b)).or_default().push(b.value);
    }
    for h in head.iter().filter(|h| !touched(h.line)) {
        if let Some(values) = before.get_mut(&key(h)) {
            if let Some(i) = values.iter().position(|v| *v == h.value) {
                values.remove(i);
            }
        }
    }
    let mut seen: HashMap<(String, usize, bool), usize> = HashMap::new();
    let mut out = Vec::new();
    for h in head.iter().filter(|h| touched(h.line)) {
        let n = seen.entry(key(h)).or_default();
        let was = before.get(&key(h)).and_then(|v| v.get(*n)).copied();
        *n += 1;
        if let Some(was) = was.filter(|w| h.value > *w) {
            out.push((h, was));
        }
    }
    out
}

/// The parameter names of every definition of `name` in `file`: whether it
/// takes `self`, and its other parameters' names in order (`_` where the
/// pattern is not a plain name).
pub(crate) fn signatures(file: &syn::File, name: &str) -> Vec<(bool, Vec<String>)> {
    struct Sigs<'n>(&'n str, Vec<(bool, Vec<String>)>);
    impl<'ast> Visit<'ast> for Sigs<'_> {
        fn visit_signature(&mut self, s: &'ast syn::Signature) {
            if s.ident == self.0 {
                let receiver = s.receiver().is_some();
                let names = s
                    .inputs
                    .iter()
                    .filter_map(|a| match a {
                        syn::FnArg::Typed(t) => Some(match &*t.pat {
                            syn::Pat::Ident(i) => i.ident.to_string(),
                            _ => "_".to_string(),
                        }),
                        syn::FnArg::Receiver(_) => None,
                    })
                    .collect();
                self.1.push((receiver, names));
            }
            syn::visit::visit_signature(self, s);
        }
    }
    let mut v = Sigs(name, Vec::new());
    v.visit_file(file);
    v.1
}

/// The name of the parameter an argument goes to, when every definition
/// found agrees on it. A path call to a method (`T::f(x, a)`) passes the
/// receiver first.
pub(crate) fn parameter(sigs: &[(bool, Vec<String>)], arg: &ArgLiteral) -> Option<String> {
    let mut found: Option<&String> = None;
    for (receiver, names) in sigs {
        let i = if *receiver && !arg.method {
            arg.index.checked_sub(1)?
        } else if !*receiver && arg.method {
            return None;
        } else {
            arg.index
        };
        let n = names.get(i)?;
        if found.is_some_and(|f| f != n) {
            return None;
        }
        found = Some(n);
    }
    found.cloned()
}

/// The change for an argument that went up, when its parameter's name says
/// it counts retries.
pub(crate) fn decide(
    path: &str,
    arg: &ArgLiteral,
    was: f64,
    param: &str,
    defined_at: &str,
) -> Option<Change> {
    if !is_retry_count_name(param) {
        return None;
    }
    let mut c = if arg.value.is_infinite() {
        let mut c = Change::new(
            Kind::RetryUnbounded,
            &CHECK,
            format!(
                "the `{param}` argument of `{}` (defined at {defined_at}) went from {was} to the type's largest value: no limit on attempts",
                arg.callee
            ),
        );
        c.severity = crate::finding::Severity::Error;
        c.head = Some(json!({"value": "MAX"}));
        c
    } else {
        let mut c = Change::new(
            Kind::RetryCountRaised,
            &CHECK,
            format!(
                "the `{param}` argument of `{}` (defined at {defined_at}) raised from {was} to {}: the parameter's name says it counts retries, and no retry whose attempt count retrygate computes reads it",
                arg.callee, arg.value
            ),
        );
        c.severity = unlinked_severity(param, path);
        c.head = Some(json!({"value": arg.value}));
        c
    };
    c.base = Some(json!({"value": was, "parameter": param}));
    Some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> syn::File {
        syn::parse_file(text).unwrap()
    }

    #[test]
    fn literals_by_callee_and_position_with_max_as_unbounded() {
        let f = parse(
            "fn f() { ctx.retryable(s, \"m\", e, 20); RetryPolicy::exponential(d, 2.0, usize::MAX, Some(7)); }",
        );
        let got: Vec<(String, usize, bool, f64)> =
            argument_literals(&f).into_iter().map(|a| (a.callee, a.index, a.method, a.value)).collect();
        assert_eq!(
            got,
            [
                ("retryable".into(), 3, true, 20.0),
                ("exponential".into(), 2, false, f64::INFINITY),
                ("exponential".into(), 3, false, 7.0)
            ]
        );
    }

    #[test]
    fn the_parameter_is_read_from_every_definition_that_agrees() {
        let f = parse("impl C { fn retryable(&self, s: S, m: M, e: E, retries: usize) {} }\nfn exponential(d: D, f: f32, max_attempts: usize) {}");
        let arg = |callee: &str, index, method| ArgLiteral {
            callee: callee.into(),
            index,
            method,
            value: 1.0,
            line: 1,
        };
        assert_eq!(
            parameter(&signatures(&f, "retryable"), &arg("retryable", 3, true)).as_deref(),
            Some("retries")
        );
        // `C::retryable(&c, s, m, e, 3)` passes the receiver first.
        assert_eq!(
            parameter(&signatures(&f, "retryable"), &arg("retryable", 4, false)).as_deref(),
            Some("retries")
        );
        assert_eq!(
            parameter(&signatures(&f, "exponential"), &arg("exponential", 2, false)).as_deref(),
            Some("max_attempts")
        );
        // A method call cannot reach a free function.
        assert_eq!(parameter(&signatures(&f, "exponential"), &arg("exponential", 2, true)), None);
        // Two definitions that disagree decide nothing.
        let two = parse("fn run(n: u32, retries: u32) {}\nmod m { fn run(n: u32, width: u32) {} }");
        assert_eq!(parameter(&signatures(&two, "run"), &arg("run", 1, false)), None);
    }

    #[test]
    fn only_a_raise_to_a_retry_count_parameter_is_a_change() {
        let base = argument_literals(&parse("fn f() { c.retryable(1, 3); c.retryable(2, 10); }"));
        let head = argument_literals(&parse("fn f() { c.retryable(1, 20); c.retryable(2, 10); }"));
        let up = raised(&base, &head, |_| true);
        assert_eq!(up.len(), 1, "{up:?}");
        let (arg, was) = up[0];
        assert_eq!((arg.index, arg.value, was), (1, 20.0, 3.0));
        let c = decide("src/states.rs", arg, was, "retries", "src/ctx.rs:4").unwrap();
        assert_eq!((c.kind, c.severity), (Kind::RetryCountRaised, crate::finding::Severity::Error));
        assert!(
            c.message.starts_with(
                "the `retries` argument of `retryable` (defined at src/ctx.rs:4) raised from 3 to 20"
            ),
            "{}",
            c.message
        );
        assert!(decide("src/states.rs", arg, was, "width", "src/ctx.rs:4").is_none());
        // Untouched lines are not compared.
        assert!(raised(&base, &head, |_| false).is_empty());
        let inf = ArgLiteral { value: f64::INFINITY, ..arg.clone() };
        let c = decide("src/states.rs", &inf, 77.0, "max_attempts", "src/p.rs:9").unwrap();
        assert_eq!((c.kind, c.severity), (Kind::RetryUnbounded, crate::finding::Severity::Error));
        assert!(c.message.starts_with("the `max_attempts` argument of `retryable`"), "{}", c.message);
    }
}
