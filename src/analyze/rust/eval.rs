//! Constant evaluation: just enough to read `6`, `MAX_RETRIES`,
//! `Duration::from_millis(TIMEOUT_MS)` or `2 * BASE` as a number.
//!
//! The environment holds the file's `const`/`static` items (at any depth) and
//! the `let` bindings of the function being read. Anything else evaluates to
//! `None`, which the analyzer treats as "unknown", never as zero.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

use syn::{BinOp, Expr, Lit, UnOp};

use super::syntax::{last_segments, line_of};

/// Names a file or function binds to expressions.
#[derive(Default, Clone)]
pub(crate) struct Env<'a> {
    /// File-level `const` and `static` items by name.
    pub(crate) consts: HashMap<String, &'a Expr>,
    /// `let name = expr;` in the current function, in source order.
    pub(crate) lets: HashMap<String, Vec<(u32, &'a Expr)>>,
    /// A helper's parameters, bound to what one call site passes
    /// (`with_retry(op, 5)` binds `max_retries` to 5).
    pub(crate) bound: HashMap<String, Bound>,
    /// Names looked up and not found (constants of another module, a
    /// helper of another file): what the crate-wide resolution looks for.
    pub(crate) misses: RefCell<BTreeSet<String>>,
    /// Call-site arguments that were needed and could not be computed, as
    /// written (`cfg.retries`): the blocking note names them.
    pub(crate) unknown_args: RefCell<BTreeSet<String>>,
    /// Set when a bound parameter was read: the call site's arguments
    /// made a difference to the policy.
    pub(crate) bound_used: std::cell::Cell<bool>,
    /// What struct fields are set to, by field name: the values of struct
    /// literals (`Config { max_retries: 3, .. }` in `impl Default` or a
    /// constructor) and the bodies of `#[serde(default = "fn")]` functions,
    /// so `self.config.max_retries` reads as the value the crate gives it.
    pub(crate) fields: HashMap<String, Vec<&'a Expr>>,
    /// Field defaults written as numbers in attributes
    /// (`#[arg(default_value_t = 5)]`, `#[arg(default_value = "5")]`).
    pub(crate) field_numbers: HashMap<String, Vec<f64>>,
    /// The value of each function of the file that takes nothing and is
    /// one expression: `max_retries()` is 3 where `const fn max_retries()
    /// -> usize { 3 }`.
    pub(crate) values: HashMap<String, &'a Expr>,
    /// The types of the current function's parameters by name
    /// (`p: &HttpPolicy` -> `HttpPolicy`): a field read on one takes that
    /// struct's values ([`Env::field_key`]).
    pub(crate) types: HashMap<String, String>,
    /// The structs whose field values were needed and are set nowhere in
    /// the files read (`config: &Config` .. `config.max_retries`): the
    /// crate-wide resolution reads the files that declare them.
    pub(crate) field_misses: RefCell<BTreeSet<String>>,
    /// Fields being read now: a field whose value reads itself
    /// (`count: opts.count.unwrap_or(2) + 1`) is read once, not again.
    pub(crate) fields_reading: RefCell<Vec<String>>,
}

/// One parameter bound to a call site's argument.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bound {
    pub(crate) number: Option<f64>,
    pub(crate) millis: Option<f64>,
    /// The argument as written, for messages.
    pub(crate) text: String,
}

/// What a qualified path names ([`Env::qualified_const`]).
enum Qualified<'a> {
    Expr(&'a Expr),
    /// A standard type's bound: `MAX`, `MIN` or `ZERO`.
    Limit(&'static str),
    Missing,
}

/// Types whose `MAX`/`MIN`/`ZERO` are the standard library's bounds.
const STD_BOUNDED_TYPES: &[&str] = &[
    "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "f32", "f64",
    "Duration",
];

enum Named<'e, 'a> {
    Expr(&'a Expr),
    Bound(&'e Bound),
    Missing,
}

/// How deep `eval` follows names before giving up (cycles, long chains).
const MAX_DEPTH: u32 = 16;

impl<'a> Env<'a> {
    /// The expression a name stands for at `line`: the last `let` of that name
    /// before the line, else a constant.
    pub(crate) fn lookup(&self, name: &str, line: u32) -> Option<&'a Expr> {
        if let Some(bindings) = self.lets.get(name) {
            // Strictly earlier lines: in `let b = b.with_jitter();` the `b` on the
            // right is the previous binding.
            // Bindings are in source order, so a binary search finds it (a
            // linear one made a file with thousands of `let`s quadratic).
            let before = bindings.partition_point(|(l, _)| *l < line);
            if let Some((_, e)) = before.checked_sub(1).map(|i| &bindings[i]) {
                return Some(e);
            }
        }
        self.consts.get(name).copied()
    }

    /// What a single name stands for at `line`: an earlier `let`, a bound
    /// parameter, or a constant; a constant-like name found nowhere is
    /// recorded in [`Env::misses`].
    fn name_at(&self, name: &str, line: u32) -> Named<'_, 'a> {
        if let Some(bindings) = self.lets.get(name) {
            let before = bindings.partition_point(|(l, _)| *l < line);
            if let Some((_, e)) = before.checked_sub(1).map(|i| &bindings[i]) {
                return Named::Expr(e);
            }
        }
        if let Some(b) = self.bound.get(name) {
            self.bound_used.set(true);
            return Named::Bound(b);
        }
        match self.consts.get(name) {
            Some(e) => Named::Expr(e),
            None => {
                self.miss(name);
                Named::Missing
            }
        }
    }

    /// Records a constant-like name (`MAX_RETRIES`) that was not found.
    pub(crate) fn miss(&self, name: &str) {
        let const_like = name.len() > 1
            && name.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
            && name.bytes().any(|b| b.is_ascii_uppercase());
        if const_like {
            self.misses.borrow_mut().insert(name.to_string());
        }
    }

    /// Where the values of field `n` read on `f.base` are kept: under the
    /// receiver's struct (`Type.n`) when it is a parameter of known type
    /// and the crate sets that struct's field somewhere, else under the
    /// bare name (every struct's field of that name).
    pub(crate) fn field_key(&self, f: &syn::ExprField, n: &syn::Ident) -> String {
        let name = n.to_string();
        let Expr::Path(p) = &*f.base else { return name };
        let Some(ty) = p.path.get_ident().and_then(|i| self.types.get(&i.to_string())) else { return name };
        let typed = super::sites::typed_key(ty, &name);
        if self.fields.contains_key(&typed) || self.field_numbers.contains_key(&typed) {
            typed
        } else if !self.fields.contains_key(&name) && !self.field_numbers.contains_key(&name) {
            // Set nowhere in the files read: the struct's own file may say.
            typed
        } else {
            name
        }
    }

    /// The one value every place that sets field `name` gives it, read by
    /// `eval`; `None` when no place is known, or two give different values
    /// (the field is then as unknown as a value computed at run time).
    fn field_value(&self, name: &str, eval: impl Fn(&'a Expr) -> Option<f64>) -> Option<f64> {
        let exprs = self.fields.get(name).map_or(&[][..], Vec::as_slice);
        let numbers = self.field_numbers.get(name).map_or(&[][..], Vec::as_slice);
        if exprs.is_empty() && numbers.is_empty() {
            if let Some((ty, _)) = name.split_once('.') {
                self.field_misses.borrow_mut().insert(ty.to_string());
            }
            return None;
        }
        let mut value: Option<f64> = None;
        // A value built from a local or a parameter (`max_retries: n`,
        // `Config { retries: args.retries }`) is set at run time, and the
        // names it uses belong to another function than the one read now.
        let set_at_run_time = |e: &Expr| {
            let mut v = NamesLocal { consts: &self.consts, found: false };
            syn::visit::Visit::visit_expr(&mut v, e);
            v.found
        };
        if exprs.iter().any(|e| set_at_run_time(e)) {
            return None;
        }
        // `max_retries: None` leaves the field unset: the default written
        // where it is read (`.unwrap_or(3)`) applies, not a value.
        let is_none = |e: &Expr| matches!(e, Expr::Path(p) if p.path.is_ident("None"));
        let exprs: Vec<&&'a Expr> = exprs.iter().filter(|e| !is_none(e)).collect();
        if self.fields_reading.borrow().iter().any(|f| f == name) {
            return None;
        }
        self.fields_reading.borrow_mut().push(name.to_string());
        let values: Vec<Option<f64>> =
            exprs.iter().map(|e| eval(e)).chain(numbers.iter().map(|n| Some(*n))).collect();
        self.fields_reading.borrow_mut().pop();
        for v in values {
            let v = v?;
            match value {
                Some(seen) if seen != v => return None,
                _ => value = Some(v),
            }
        }
        value
    }

    /// What a path of two or more segments names: an associated constant
    /// of the type it names (`Payments::MAX_RETRIES`, `<Ledger as
    /// Policy>::MAX`, keyed `Type::NAME` by the index) before a constant of
    /// that bare name, so two types' `MAX` and a free `MAX` are told apart;
    /// a standard type's bound (`u32::MAX`, `Duration::ZERO`) is a limit.
    /// A name found nowhere is recorded as a miss.
    fn qualified_const(&self, p: &syn::ExprPath) -> Qualified<'a> {
        let segs = last_segments(&p.path, 2);
        let Some(name) = segs.last() else { return Qualified::Missing };
        let ty = match &p.qself {
            Some(q) => match &*q.ty {
                syn::Type::Path(t) => t.path.segments.last().map(|s| s.ident.to_string()),
                _ => None,
            },
            None if segs.len() == 2 => segs.first().cloned(),
            None => None,
        };
        if let Some(t) = ty.as_deref().and_then(|ty| self.consts.get(&format!("{ty}::{name}"))) {
            return Qualified::Expr(t);
        }
        let limit = ["MAX", "MIN", "ZERO"].iter().copied().find(|l| l == name);
        if let (Some(l), Some(ty)) = (limit, ty.as_deref()) {
            if STD_BOUNDED_TYPES.contains(&ty) {
                return Qualified::Limit(l);
            }
        }
        if let Some(t) = self.consts.get(name.as_str()) {
            return Qualified::Expr(t);
        }
        match limit {
            // A bound of a type the crate does not define here (a library's
            // `Limits::MAX`) keeps the meaning the bare word has.
            Some(l) => Qualified::Limit(l),
            None => {
                self.miss(name);
                Qualified::Missing
            }
        }
    }

    /// A plain number (integers, floats, arithmetic, casts, names).
    /// The value of `name()` for a function of the file that takes nothing
    /// and is one expression ([`Env::values`]).
    fn value_of_call(&self, c: &syn::ExprCall) -> Option<&'a Expr> {
        let Expr::Path(p) = &*c.func else { return None };
        let name = p.path.segments.last()?.ident.to_string();
        let found = self.values.get(&name).copied();
        // A bare `name()` not found here may be another file's function;
        // `Instant::now()` is nobody's to look for.
        if found.is_none() && p.path.segments.len() == 1 {
            self.miss(&name);
        }
        found
    }

    pub(crate) fn number(&self, e: &Expr) -> Option<f64> {
        self.number_at(e, 0)
    }

    fn number_at(&self, e: &Expr, depth: u32) -> Option<f64> {
        if depth > MAX_DEPTH {
            return None;
        }
        match e {
            Expr::Lit(l) => match &l.lit {
                // As f64, so a literal past u64 (`1` followed by 30 zeros) is a
                // huge count, not an unknown one.
                Lit::Int(i) => i.base10_digits().parse::<f64>().ok(),
                Lit::Float(f) => f.base10_parse::<f64>().ok(),
                Lit::Bool(b) => Some(if b.value { 1.0 } else { 0.0 }),
                _ => None,
            },
            Expr::Paren(p) => self.number_at(&p.expr, depth + 1),
            Expr::Group(g) => self.number_at(&g.expr, depth + 1),
            Expr::Cast(c) => self.number_at(&c.expr, depth + 1),
            Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => self.number_at(&u.expr, depth + 1).map(|v| -v),
            Expr::Binary(b) => {
                let l = self.number_at(&b.left, depth + 1)?;
                let r = self.number_at(&b.right, depth + 1)?;
                match b.op {
                    BinOp::Add(_) => Some(l + r),
                    BinOp::Sub(_) => Some(l - r),
                    BinOp::Mul(_) => Some(l * r),
                    BinOp::Div(_) if r != 0.0 => Some(l / r),
                    BinOp::Rem(_) if r != 0.0 => Some(l % r),
                    // `1 << 20`: a power of two, however large (f64 keeps the
                    // magnitude where an integer type would wrap).
                    BinOp::Shl(_) if r >= 0.0 => Some(l * 2f64.powf(r.trunc())),
                    BinOp::Shr(_) if r >= 0.0 => Some((l / 2f64.powf(r.trunc())).trunc()),
                    BinOp::BitOr(_) | BinOp::BitAnd(_) | BinOp::BitXor(_) => int_bits(b.op, l, r),
                    _ => None,
                }
            }
            Expr::Path(p) if p.path.segments.len() == 1 => {
                let name = p.path.segments[0].ident.to_string();
                match self.name_at(&name, line_of(e)) {
                    Named::Expr(target) => self.number_at(target, depth + 1),
                    Named::Bound(b) => {
                        if b.number.is_none() {
                            self.unknown_args.borrow_mut().insert(b.text.clone());
                        }
                        b.number
                    }
                    Named::Missing => None,
                }
            }
            Expr::Path(p) => match self.qualified_const(p) {
                Qualified::Expr(target) => self.number_at(target, depth + 1),
                // `u32::MAX`, `usize::MAX`: effectively unbounded counts.
                Qualified::Limit("MAX") => Some(f64::INFINITY),
                Qualified::Limit(_) | Qualified::Missing => None,
            },
            Expr::MethodCall(m) if m.method == "into" || m.method == "clone" => {
                self.number_at(&m.receiver, depth + 1)
            }
            // `env("APP_MAX_RETRIES", 6)?`: a setting read at start-up is its
            // default unless someone sets it, as in the rule packs.
            Expr::Try(t) => self.number_at(&t.expr, depth + 1),
            Expr::Call(c) if c.args.len() == 2 => {
                let default = setting_default(c)?;
                self.number_at(default, depth + 1)
            }
            // `cfg.max_retries.unwrap_or(5)`: the field's value where the
            // crate sets one, else the default written here.
            Expr::MethodCall(m) if m.method == "unwrap_or" && m.args.len() == 1 => {
                self.number_at(&m.receiver, depth + 1).or_else(|| self.number_at(&m.args[0], depth + 1))
            }
            Expr::Field(f) => match &f.member {
                syn::Member::Named(n) => {
                    self.field_value(&self.field_key(f, n), |v| self.number_at(v, depth + 1))
                }
                syn::Member::Unnamed(_) => None,
            },
            Expr::MethodCall(m) if m.args.len() == 1 => {
                // Integer arithmetic written as methods: `10usize.pow(6)`,
                // `n.saturating_mul(2)`, `a.max(b)`.
                let l = self.number_at(&m.receiver, depth + 1)?;
                let r = self.number_at(&m.args[0], depth + 1)?;
                let name = m.method.to_string();
                let op = name
                    .strip_prefix("saturating_")
                    .or_else(|| name.strip_prefix("wrapping_"))
                    .or_else(|| name.strip_prefix("checked_"))
                    .unwrap_or(&name);
                match op {
                    "pow" => Some(l.powf(r)),
                    "add" => Some(l + r),
                    "sub" => Some(l - r),
                    "mul" => Some(l * r),
                    "div" if r != 0.0 => Some(l / r),
                    "min" => Some(l.min(r)),
                    "max" => Some(l.max(r)),
                    _ => None,
                }
            }
            Expr::Call(c) if c.args.is_empty() => {
                let target = self.value_of_call(c)?;
                self.number_at(target, depth + 1)
            }
            // `Some(6)` / `NonZeroU32::new(6)` / `u32::from(6u8)` around a count.
            Expr::Call(c) if c.args.len() == 1 => {
                let Expr::Path(p) = &*c.func else { return None };
                let segs = last_segments(&p.path, 2);
                let wraps = match segs.as_slice() {
                    [.., last] if last == "Some" => true,
                    [ty, f] => {
                        (f == "from" && ty.starts_with(['u', 'i']))
                            || (ty.starts_with("NonZero") && (f == "new" || f == "new_unchecked"))
                    }
                    _ => false,
                };
                wraps.then(|| self.number_at(&c.args[0], depth + 1)).flatten()
            }
            _ => None,
        }
    }

    /// A duration in milliseconds: `Duration::from_secs(2)`, `from_millis(N)`,
    /// `Duration::new(s, ns)`, `Some(d)`, a const bound to one, or `d * 2`.
    pub(crate) fn millis(&self, e: &Expr) -> Option<f64> {
        self.millis_at(e, 0)
    }

    fn millis_at(&self, e: &Expr, depth: u32) -> Option<f64> {
        if depth > MAX_DEPTH {
            return None;
        }
        match e {
            Expr::Call(c) => {
                let Expr::Path(p) = &*c.func else { return None };
                let segs = last_segments(&p.path, 2);
                let func = segs.last()?.as_str();
                let arg = |i: usize| c.args.iter().nth(i).and_then(|a| self.number_at(a, depth + 1));
                match func {
                    "from_millis" => arg(0),
                    "from_secs" | "from_secs_f64" | "from_secs_f32" => arg(0).map(|v| v * 1000.0),
                    "from_micros" => arg(0).map(|v| v / 1000.0),
                    "from_nanos" => arg(0).map(|v| v / 1_000_000.0),
                    "from_mins" => arg(0).map(|v| v * 60_000.0),
                    "new" if segs.first().map(String::as_str) == Some("Duration") => {
                        Some(arg(0)? * 1000.0 + arg(1)? / 1_000_000.0)
                    }
                    "Some" => c.args.first().and_then(|a| self.millis_at(a, depth + 1)),
                    _ if c.args.is_empty() => {
                        self.value_of_call(c).and_then(|t| self.millis_at(t, depth + 1))
                    }
                    _ => None,
                }
            }
            Expr::Paren(p) => self.millis_at(&p.expr, depth + 1),
            Expr::Group(g) => self.millis_at(&g.expr, depth + 1),
            Expr::Reference(r) => self.millis_at(&r.expr, depth + 1),
            Expr::Binary(b) => match b.op {
                BinOp::Mul(_) => {
                    if let Some(d) = self.millis_at(&b.left, depth + 1) {
                        Some(d * self.number_at(&b.right, depth + 1)?)
                    } else {
                        Some(self.number_at(&b.left, depth + 1)? * self.millis_at(&b.right, depth + 1)?)
                    }
                }
                BinOp::Div(_) => {
                    let r = self.number_at(&b.right, depth + 1)?;
                    (r != 0.0).then_some(self.millis_at(&b.left, depth + 1)? / r)
                }
                BinOp::Add(_) => {
                    Some(self.millis_at(&b.left, depth + 1)? + self.millis_at(&b.right, depth + 1)?)
                }
                BinOp::Sub(_) => {
                    Some(self.millis_at(&b.left, depth + 1)? - self.millis_at(&b.right, depth + 1)?)
                }
                _ => None,
            },
            Expr::Path(p) => {
                let target = if p.path.segments.len() == 1 && p.qself.is_none() {
                    let name = p.path.segments[0].ident.to_string();
                    match self.name_at(&name, line_of(e)) {
                        Named::Expr(t) => t,
                        Named::Bound(b) => {
                            if b.millis.is_none() {
                                self.unknown_args.borrow_mut().insert(b.text.clone());
                            }
                            return b.millis;
                        }
                        Named::Missing => return None,
                    }
                } else {
                    match self.qualified_const(p) {
                        Qualified::Expr(t) => t,
                        Qualified::Limit("ZERO") => return Some(0.0),
                        Qualified::Limit("MAX") => return Some(f64::INFINITY),
                        Qualified::Limit(_) | Qualified::Missing => return None,
                    }
                };
                self.millis_at(target, depth + 1)
            }
            Expr::MethodCall(m) if m.method == "into" || m.method == "clone" => {
                self.millis_at(&m.receiver, depth + 1)
            }
            Expr::MethodCall(m) if m.method == "unwrap_or" && m.args.len() == 1 => {
                self.millis_at(&m.receiver, depth + 1).or_else(|| self.millis_at(&m.args[0], depth + 1))
            }
            // `d.min(cap)`, `total.saturating_sub(spent)`, `a.max(b)`.
            Expr::MethodCall(m) if m.args.len() == 1 => {
                let l = self.millis_at(&m.receiver, depth + 1)?;
                let r = self.millis_at(&m.args[0], depth + 1)?;
                match m.method.to_string().as_str() {
                    "min" => Some(l.min(r)),
                    "max" => Some(l.max(r)),
                    "saturating_sub" => Some((l - r).max(0.0)),
                    "saturating_add" | "add" => Some(l + r),
                    "sub" => Some(l - r),
                    _ => None,
                }
            }
            Expr::Field(f) => match &f.member {
                syn::Member::Named(n) => {
                    self.field_value(&self.field_key(f, n), |v| self.millis_at(v, depth + 1))
                }
                syn::Member::Unnamed(_) => None,
            },
            _ => None,
        }
    }
}

/// The default of a setting read by name, written beside the name:
/// `env("APP_MAX_RETRIES", 6)` or `read(6, "APP_MAX_RETRIES")`, a call of
/// two arguments one of which is a string that names an environment
/// variable (upper case, digits, `_`). [`super::checks::count_unlinked`]
/// reads the same shape from text.
fn setting_default(c: &syn::ExprCall) -> Option<&Expr> {
    let names_setting = |e: &Expr| match e {
        Expr::Lit(syn::ExprLit { lit: Lit::Str(s), .. }) => {
            let v = s.value();
            v.starts_with(|c: char| c.is_ascii_uppercase())
                && v.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        }
        _ => false,
    };
    match (c.args.first()?, c.args.last()?) {
        (name, default) | (default, name) if names_setting(name) && !names_setting(default) => Some(default),
        _ => None,
    }
}

/// Finds a single-segment name that is not a constant (a local, a
/// parameter, `self`) in a field's value.
struct NamesLocal<'c, 'a> {
    consts: &'c HashMap<String, &'a Expr>,
    found: bool,
}

impl<'ast> syn::visit::Visit<'ast> for NamesLocal<'_, '_> {
    fn visit_expr_field(&mut self, f: &'ast syn::ExprField) {
        // `options.retries`: read through the field table, not the local.
        if !matches!(&*f.base, Expr::Path(_)) {
            syn::visit::visit_expr_field(self, f);
        }
    }

    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        if p.path.segments.len() == 1 {
            let name = p.path.segments[0].ident.to_string();
            let const_like = name.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
            if !const_like && !self.consts.contains_key(&name) && name != "None" && name != "Some" {
                self.found = true;
            }
        }
        syn::visit::visit_expr_path(self, p);
    }

    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        // `env("APP_RETRIES", 6)`: the function called is an item, not a
        // local; what it is given may be one.
        if !matches!(&*c.func, Expr::Path(_)) {
            self.visit_expr(&c.func);
        }
        for a in &c.args {
            self.visit_expr(a);
        }
    }
}

/// `|`, `&`, `^` on two whole numbers that fit in a u64; `None` otherwise.
fn int_bits(op: BinOp, l: f64, r: f64) -> Option<f64> {
    let fits = |v: f64| v >= 0.0 && v.fract() == 0.0 && v <= u64::MAX as f64;
    if !fits(l) || !fits(r) {
        return None;
    }
    let (a, b) = (l as u64, r as u64);
    let v = match op {
        BinOp::BitOr(_) => a | b,
        BinOp::BitAnd(_) => a & b,
        BinOp::BitXor(_) => a ^ b,
        _ => return None,
    };
    Some(v as f64)
}

/// `1500.0` -> `1.5 s`, `800.0` -> `800 ms`: durations as people write them.
pub(crate) fn fmt_ms(ms: f64) -> String {
    if ms.is_infinite() {
        "unlimited".into()
    } else if ms >= 1000.0 && (ms / 1000.0).fract() == 0.0 {
        format!("{} s", ms / 1000.0)
    } else if ms >= 1000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else {
        format!("{} ms", trim_float(ms))
    }
}

pub(crate) fn trim_float(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.2}").trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(s: &str) -> Expr {
        syn::parse_str(s).unwrap()
    }

    #[test]
    fn calls_of_value_functions_and_duration_arithmetic_evaluate() {
        let three: Expr = syn::parse_str("3").unwrap();
        let short: Expr = syn::parse_str("Duration::from_millis(300)").unwrap();
        let mut env = Env::default();
        env.values.insert("max_retries".into(), &three);
        env.values.insert("request_timeout".into(), &short);
        let n = |s: &str| env.number(&syn::parse_str::<Expr>(s).unwrap());
        let ms = |s: &str| env.millis(&syn::parse_str::<Expr>(s).unwrap());
        assert_eq!(n("max_retries()"), Some(3.0));
        assert_eq!(n("limits::max_retries() + 1"), Some(4.0));
        assert_eq!(n("other()"), None);
        assert_eq!(ms("request_timeout()"), Some(300.0));
        assert_eq!(ms("Duration::from_millis(2500).min(Duration::from_millis(300))"), Some(300.0));
        assert_eq!(ms("Duration::from_secs(3).saturating_sub(Duration::from_millis(2200))"), Some(800.0));
        assert_eq!(ms("Duration::from_secs(1).saturating_sub(Duration::from_secs(2))"), Some(0.0));
    }

    #[test]
    fn an_associated_constant_is_read_by_its_type_before_its_bare_name() {
        let (three, ten, five, ms) = (expr("3"), expr("10"), expr("5"), expr("Duration::from_millis(250)"));
        let mut env = Env::default();
        env.consts.insert("MAX_RETRIES".into(), &five);
        env.consts.insert("Payments::MAX_RETRIES".into(), &three);
        env.consts.insert("Ledger::MAX".into(), &ten);
        env.consts.insert("Ledger::WAIT".into(), &ms);
        let n = |s: &str| env.number(&expr(s));
        assert_eq!(n("Payments::MAX_RETRIES"), Some(3.0), "the type's, not the free const");
        assert_eq!(n("crate::policy::Payments::MAX_RETRIES + 1"), Some(4.0));
        assert_eq!(n("MAX_RETRIES"), Some(5.0), "a bare name is the free const");
        assert_eq!(n("Orders::MAX_RETRIES"), Some(5.0), "another type falls back to the bare name");
        assert_eq!(n("<Ledger as RetryPolicy>::MAX"), Some(10.0), "a trait impl's const is not a bound");
        assert_eq!(n("Ledger::MAX"), Some(10.0));
        assert_eq!(n("usize::MAX"), Some(f64::INFINITY), "a standard type's bound stays one");
        assert_eq!(n("<u32 as Bounded>::MAX"), Some(f64::INFINITY));
        assert_eq!(env.millis(&expr("<Ledger as RetryPolicy>::WAIT")), Some(250.0));
        assert_eq!(env.millis(&expr("Duration::ZERO")), Some(0.0));
        assert_eq!(n("Unknown::LIMIT"), None);
        assert!(env.misses.borrow().contains("LIMIT"), "a name found nowhere is looked for elsewhere");
    }

    #[test]
    fn a_field_read_on_a_typed_parameter_takes_its_structs_values() {
        let (three, five) = (expr("3"), expr("5"));
        let mut env = Env::default();
        env.fields.insert("max_attempts".into(), vec![&three, &five]);
        env.fields.insert("Http.max_attempts".into(), vec![&three]);
        env.fields.insert("Login.max_attempts".into(), vec![&five]);
        env.types.insert("p".into(), "Http".into());
        env.types.insert("q".into(), "Other".into());
        assert_eq!(env.number(&expr("p.max_attempts")), Some(3.0), "the parameter's struct");
        assert_eq!(
            env.number(&expr("q.max_attempts")),
            None,
            "a struct the crate never sets: every namesake"
        );
        assert_eq!(env.number(&expr("cfg.max_attempts")), None, "an untyped receiver: every namesake");
        assert_eq!(env.number(&expr("self.p.max_attempts")), None, "only a parameter's type is known");
    }

    #[test]
    fn numbers_and_durations_evaluate() {
        let env = Env::default();
        assert_eq!(env.number(&expr("6")), Some(6.0));
        assert_eq!(env.number(&expr("2 * 3 + 1")), Some(7.0));
        assert_eq!(env.number(&expr("(5 as u32)")), Some(5.0));
        assert_eq!(env.number(&expr("u32::MAX")), Some(f64::INFINITY));
        assert_eq!(env.millis(&expr("Duration::from_secs(2)")), Some(2000.0));
        assert_eq!(env.millis(&expr("std::time::Duration::from_millis(800)")), Some(800.0));
        assert_eq!(env.millis(&expr("Duration::new(1, 500_000_000)")), Some(1500.0));
        assert_eq!(env.millis(&expr("Some(Duration::from_secs_f64(0.5))")), Some(500.0));
        assert_eq!(env.millis(&expr("Duration::from_millis(100) * 3")), Some(300.0));
        assert_eq!(env.millis(&expr("cache_ttl()")), None);
        assert_eq!(env.number(&expr("unknown_name")), None);
    }

    #[test]
    fn a_field_reads_as_the_value_every_place_gives_it() {
        let (three, other, local, timeout, max) =
            (expr("3"), expr("7"), expr("args.retries"), expr("Duration::from_secs(TIMEOUT)"), expr("MAX"));
        let mut env = Env::default();
        env.consts.insert("MAX".into(), &three);
        env.consts.insert("TIMEOUT".into(), &other);
        env.fields.insert("max_retries".into(), vec![&three, &max]);
        env.fields.insert("timeout".into(), vec![&timeout]);
        assert_eq!(
            env.number(&expr("self.config.max_retries")),
            Some(3.0),
            "a literal and a const that agree"
        );
        assert_eq!(env.millis(&expr("cfg.timeout")), Some(7000.0));
        env.fields.insert("retries".into(), vec![&three, &other]);
        assert_eq!(env.number(&expr("cfg.retries")), None, "two places disagree");
        env.fields.insert("retries".into(), vec![&three, &local]);
        assert_eq!(env.number(&expr("cfg.retries")), None, "also set at run time");
        assert_eq!(env.number(&expr("cfg.unset.unwrap_or(5)")), Some(5.0), "the default written at the read");
        assert_eq!(env.number(&expr("cfg.max_retries.unwrap_or(5)")), Some(3.0));
        env.field_numbers.insert("attempts".into(), vec![4.0]);
        assert_eq!(env.number(&expr("opts.attempts")), Some(4.0));
        assert_eq!(env.number(&expr("cfg.unset")), None);
        let (none, from_opts) = (expr("None"), expr("opts.count.unwrap_or(2) + 1"));
        env.fields.insert("count".into(), vec![&none, &from_opts]);
        assert_eq!(
            env.number(&expr("self.cfg.count")),
            Some(3.0),
            "unset, then the default where it is read"
        );
    }

    #[test]
    fn shifts_powers_and_integer_methods_evaluate() {
        let env = Env::default();
        assert_eq!(env.number(&expr("1 << 20")), Some(1_048_576.0));
        assert_eq!(env.number(&expr("1u64 << 63")), Some(9_223_372_036_854_775_808.0));
        assert_eq!(env.number(&expr("(1 << 20) >> 10")), Some(1024.0));
        assert_eq!(env.number(&expr("10usize.pow(6)")), Some(1_000_000.0));
        assert_eq!(env.number(&expr("3u32.saturating_mul(2)")), Some(6.0));
        assert_eq!(env.number(&expr("5.max(9)")), Some(9.0));
        assert_eq!(env.number(&expr("0b1100 | 0b0011")), Some(15.0));
        assert_eq!(env.number(&expr("17 % 5")), Some(2.0));
        assert_eq!(env.number(&expr("Some(4)")), Some(4.0));
        assert_eq!(env.number(&expr("NonZeroU32::new(4)")), Some(4.0));
        assert_eq!(env.number(&expr("u32::from(4u8)")), Some(4.0));
        assert_eq!(env.number(&expr("Client::new(4)")), None);
        assert_eq!(
            env.number(&expr("100000000000000000000000000000")),
            Some(1e29),
            "past u64 is huge, not unknown"
        );
        assert_eq!(env.number(&expr("n.pow(2)")), None, "an unknown operand stays unknown");
        assert_eq!(env.number(&expr("1 << -1")), None);
        assert_eq!(env.number(&expr("x.count_ones(2)")), None);
    }

    #[test]
    fn names_resolve_through_consts_and_lets() {
        let file: syn::File = syn::parse_str(
            "const MAX_RETRIES: u32 = 6; const T: Duration = Duration::from_millis(TIMEOUT_MS); const TIMEOUT_MS: u64 = 800;",
        )
        .unwrap();
        let mut env = Env::default();
        for item in &file.items {
            if let syn::Item::Const(c) = item {
                env.consts.insert(c.ident.to_string(), &c.expr);
            }
        }
        assert_eq!(env.number(&expr("MAX_RETRIES")), Some(6.0));
        assert_eq!(env.number(&expr("MAX_RETRIES + 1")), Some(7.0));
        assert_eq!(env.millis(&expr("T")), Some(800.0));
        assert_eq!(env.millis(&expr("self::T")), Some(800.0));
    }

    #[test]
    fn self_referential_names_do_not_loop() {
        let file: syn::File = syn::parse_str("const A: u32 = B; const B: u32 = A;").unwrap();
        let mut env = Env::default();
        for item in &file.items {
            if let syn::Item::Const(c) = item {
                env.consts.insert(c.ident.to_string(), &c.expr);
            }
        }
        assert_eq!(env.number(&expr("A")), None);
    }

    #[test]
    fn durations_format_for_people() {
        assert_eq!(fmt_ms(800.0), "800 ms");
        assert_eq!(fmt_ms(2500.0), "2.5 s");
        assert_eq!(fmt_ms(60_000.0), "60 s");
        assert_eq!(fmt_ms(f64::INFINITY), "unlimited");
    }
}
