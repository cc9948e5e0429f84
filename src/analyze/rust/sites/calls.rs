//! Retry calls and timeouts in expressions: `op.retry(policy)` and its
//! `.when/.adjust` modifiers, `Retry::spawn`, `retry(iter, op)`, retry
//! middleware and layers, `.timeout(..)` setters and `tokio::time::timeout`,
//! and policies built where no retry call is seen (yet).

use syn::Expr;

use super::super::libs::{self, CallShape};
use super::super::loops;
use super::super::policy::{Fact, Policy};
use super::super::syntax::{body_facts, last_segments, line_of, lines_of, BodyFacts, Chain};
use super::resolve::{as_root, interesting_call_name, Resolved};
use super::{root_key, Candidate, FnWalker, Site, TimeoutSite};

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

impl<'w, 'i, 'a> FnWalker<'w, 'i, 'a> {
    /// Facts about a retried operation: a closure's body, or a function of
    /// this file named by path or `self.name`; callees are followed once.
    pub(super) fn op_facts(&mut self, op: &'a Expr) -> BodyFacts {
        let mut facts = body_facts(op);
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
        if let Some(op) = op {
            let f = self.op_facts(op);
            libs::read_operation(&mut policy, &f);
            policy.methods.extend(f.methods);
            policy.idempotency_key |= f.idempotency_key;
        }
        let (line, end_line) = lines_of(at);
        self.w.out.sites.push(Site { item: self.item.clone(), line, end_line, policy });
    }

    /// A whole method chain: policy setters, retry calls, timeouts.
    pub(super) fn chain(&mut self, whole: &'a Expr, chain: &Chain<'a>) {
        for (i, m) in chain.calls.iter().enumerate() {
            let is_timeout = TIMEOUT_METHODS.iter().any(|t| m.method == t);
            let is_retry = m.args.len() == 1 && libs::is_retry_method(&m.method);
            if !is_timeout && !is_retry {
                continue;
            }
            let name = m.method.to_string();
            if is_timeout {
                if let Some(ms) = m.args.first().and_then(|a| self.env.millis(a)) {
                    self.w.out.timeouts.push(TimeoutSite {
                        item: self.item.clone(),
                        setter: name.clone(),
                        ms,
                        line: line_of(m),
                    });
                }
            }
            if is_retry {
                self.retry_call(whole, chain, i);
                return;
            }
        }
        // A policy built here but not (visibly) retried yet.
        if as_root(chain.root).is_some() {
            if let Some(r) = self.resolve(whole, 0) {
                let key = root_key(chain.root);
                if self.w.standalone_keys.insert(key) {
                    let (line, end_line) = lines_of(whole);
                    let site = Site { item: self.item.clone(), line, end_line, policy: r.policy };
                    self.w.standalone.push(Candidate { key, site });
                }
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
        // Most calls in a file are nothing to a retry: reject them by their
        // last name before any allocation.
        if !p.path.segments.last().is_some_and(|s| interesting_call_name(&s.ident)) {
            return;
        }
        let segs = last_segments(&p.path, 2);
        let (ty, func) = match segs.as_slice() {
            [ty, func] => (ty.as_str(), func.as_str()),
            [func] => ("", func.as_str()),
            _ => return,
        };
        let args: Vec<&'a Expr> = c.args.iter().collect();
        if let Some(entry) = libs::entry_point(ty, func, args.len()) {
            let Some(mut r) = args.first().and_then(|a| self.resolve(a, 0)) else { return };
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
                if let Some(ms) = self.env.millis(args[0]) {
                    self.w.out.timeouts.push(TimeoutSite {
                        item: self.item.clone(),
                        setter: "timeout".into(),
                        ms,
                        line: line_of(whole),
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

    pub(super) fn consume_and_push(&mut self, r: Resolved, op: Option<&'a Expr>, whole: &'a Expr) {
        for k in &r.keys {
            self.w.consumed.insert(*k);
        }
        self.push_site(r.policy, op, whole);
    }
}

#[cfg(test)]
mod tests {
    use super::super::model_of;
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
}
