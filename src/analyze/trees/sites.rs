//! Where a retry library is given its settings, read from the tree with
//! the library's own data file ([`crate::analyze::knobs::libraries`]): the
//! calls that carry a count (`stop_after_attempt(n)`, `WithMaxRetries(b,
//! n)`), the calls that mean "no limit", the constructors that jitter or do
//! not, and the options of the library's holders, wherever they are
//! written: a keyword argument, an object literal passed directly or
//! through a name (spreads expanded), a `**dict`, an annotation's element,
//! a struct literal's field, a builder's method, an assignment to a field.
//!
//! A holder that leaves out an option with a documented default gets the
//! default, so dropping `retries: 3` from a `pRetry` call is compared as 3
//! -> 10.

use tree_sitter::Node;

use super::defs::{children, line_of};
use super::eval::{Evaluated, Loc, World};
use crate::analyze::knobs::libraries::{self, Library, LIBRARIES};
use crate::analyze::knobs::names::Knob;
use crate::analyze::knobs::value::Value;

/// The deepest nesting searched for sites.
const MAX_DEPTH: usize = 300;

/// One setting a library is given, and what it computes to.
#[derive(Debug, Clone)]
pub(crate) struct Site {
    /// What pairs it across revisions (with its path, then without, for
    /// code moved to another file): the names that hold it, the library,
    /// the setting.
    pub(crate) identity: String,
    pub(crate) knob: Knob,
    pub(crate) library: String,
    /// The option or call as written (`retries`, `stop_after_attempt`).
    pub(crate) name: String,
    pub(crate) at: Loc,
    pub(crate) value: Evaluated,
    /// Where the library's default comes from, when the value is one.
    pub(crate) default_source: Option<String>,
    /// A jitter constructor (`wait_exponential`): its name is the value.
    pub(crate) constructor: bool,
    /// For a methods option: whether writes (POST, PATCH, or every method)
    /// are retried; `None` for the other settings. For a request the
    /// library sends (`sends`): whether its method is POST or PATCH,
    /// `None` when it cannot be told.
    pub(crate) writes: Option<bool>,
    /// A request the library builds or sends and retries whatever its
    /// method (a methods `call` entry); `value` is its method.
    pub(crate) sends: bool,
}

/// The libraries file `file` of `world` uses.
pub(crate) fn libraries_of(world: &World<'_>, file: usize) -> Vec<&'static Library> {
    let f = world.files[file].file;
    let lang = f.grammar.library_language();
    LIBRARIES.0.iter().filter(|l| l.used_by(lang, &f.text)).collect()
}

/// A part of a file that was not fully read: where, and why.
pub(crate) type Unread = (Loc, &'static str);

/// Every site of `libs` in file `file`, and the parts of the file that
/// could not be read with certainty (nesting past [`MAX_DEPTH`], a region
/// the grammar could not parse): the caller says so, since a site there
/// may have been missed.
pub(crate) fn sites(world: &World<'_>, file: usize, libs: &[&'static Library]) -> (Vec<Site>, Vec<Unread>) {
    let mut out = Vec::new();
    let mut unread = Vec::new();
    if libs.is_empty() {
        return (out, unread);
    }
    let root = world.files[file].file.tree.root_node();
    walk(world, file, libs, root, &mut out, &mut unread, 0);
    (out, unread)
}

fn walk<'t>(
    world: &World<'t>,
    file: usize,
    libs: &[&'static Library],
    n: Node<'t>,
    out: &mut Vec<Site>,
    unread: &mut Vec<Unread>,
    depth: usize,
) {
    let f = world.files[file].file;
    if depth > MAX_DEPTH {
        unread.push((
            Loc { path: f.path.clone(), line: line_of(n) },
            "code nests deeper than the syntax-tree analyzer reads",
        ));
        return;
    }
    if n.is_error() && unread.len() < 16 {
        // What the grammar could not parse is still searched (its pieces
        // are often whole calls), but a site written across it may be
        // missed: said, when the region holds retry code.
        let text = f.text_of(n);
        if ["retr", "Retr", "backoff", "Backoff"].iter().any(|w| text.contains(w)) {
            unread.push((
                Loc { path: f.path.clone(), line: line_of(n) },
                "a region the grammar could not parse holds retry code",
            ));
        }
    }
    if let Some(holder) = holder(world, file, n) {
        for lib in libs {
            read_holder(world, file, lib, &holder, out);
        }
    }
    for lib in libs {
        read_assignment(world, file, lib, n, out);
        read_reference(world, file, lib, n, out);
    }
    for c in children(n) {
        walk(world, file, libs, c, out, unread, depth + 1);
    }
}

/// A call-like node: its callee's last name and its arguments.
struct Holder<'t> {
    node: Node<'t>,
    name: String,
    args: Option<Node<'t>>,
}

fn holder<'t>(world: &World<'t>, file: usize, n: Node<'t>) -> Option<Holder<'t>> {
    let f = world.files[file].file;
    let (callee, args) = match n.kind() {
        "call" | "call_expression" => {
            (n.child_by_field_name("function")?, n.child_by_field_name("arguments"))
        }
        "new_expression" => (n.child_by_field_name("constructor")?, n.child_by_field_name("arguments")),
        "method_invocation" => (n.child_by_field_name("name")?, n.child_by_field_name("arguments")),
        "object_creation_expression" => (n.child_by_field_name("type")?, n.child_by_field_name("arguments")),
        "annotation" => (n.child_by_field_name("name")?, n.child_by_field_name("arguments")),
        "composite_literal" => (n.child_by_field_name("type")?, n.child_by_field_name("body")),
        _ => return None,
    };
    let text = f.text_of(callee);
    let name =
        text.rsplit(['.', ':']).next().unwrap_or(text).split('<').next().unwrap_or("").trim().to_string();
    Some(Holder { node: n, name, args })
}

/// Positional arguments (keyword arguments and spreads left out).
fn positional<'t>(args: Node<'t>) -> Vec<Node<'t>> {
    children(args)
        .into_iter()
        .filter(|a| {
            !matches!(
                a.kind(),
                "keyword_argument"
                    | "dictionary_splat"
                    | "list_splat"
                    | "element_value_pair"
                    | "keyed_element"
            )
        })
        .collect()
}

fn read_holder<'t>(
    world: &World<'t>,
    file: usize,
    lib: &'static Library,
    h: &Holder<'t>,
    out: &mut Vec<Site>,
) {
    let f = world.files[file].file;
    // A builder's step is where its method is named: a chain written over
    // several lines has its change on the step's line, not the chain's first.
    let at_node = if h.node.kind() == "method_invocation" {
        h.node.child_by_field_name("name").unwrap_or(h.node)
    } else {
        h.node
    };
    let at = Loc { path: f.path.clone(), line: line_of(at_node) };
    let identity = |key: &str| format!("{}|{}|{}", owner(world, file, h.node), lib.library, key);
    for (knob, e) in lib.entries() {
        let unbounded = lib.unbounded.iter().any(|u| std::ptr::eq(u, e));
        if let Some(call) = &e.call {
            if *call != h.name {
                continue;
            }
            let value = if unbounded {
                Evaluated { value: Value::Unlimited, trail: Vec::new() }
            } else {
                let Some(arg) = h.args.and_then(|a| positional(a).get(e.arg).copied()) else { continue };
                meant(e, world.eval(file, arg, 0))
            };
            out.push(site(identity(&lib.key(knob, e)), knob, lib, call, at.clone(), value, None));
            continue;
        }
        let Some(option) = &e.option else { continue };
        let within = e.within.contains(&h.name);
        // A builder's method: `.maxAttempts(5)` on a chain that starts at
        // one of the library's holders (or anywhere, when it names none).
        if h.name == *option && h.node.kind() == "method_invocation" {
            if e.within.is_empty() || chain_has(world, file, h.node, &e.within) {
                if let Some(arg) = h.args.and_then(|a| positional(a).first().copied()) {
                    let value = meant(e, world.eval(file, arg, 0));
                    out.push(site(identity(&lib.key(knob, e)), knob, lib, option, at.clone(), value, None));
                }
            }
            continue;
        }
        if !(within || e.within.is_empty() && h.node.kind() == "composite_literal") {
            continue;
        }
        match option_value(world, file, h, option) {
            Some((vf, node)) => {
                let mut value = if knob == Knob::Count {
                    match count_of_strategy(world, vf, lib, node, 0) {
                        Strategy::Value(v) => v,
                        // A stop by time only (`stop_after_delay(30)`):
                        // bounded, but not by a count; no count site.
                        Strategy::NotACount => continue,
                    }
                } else {
                    world.eval(vf, node, 0)
                };
                if knob == Knob::Jitter && !value.value.is_known() {
                    // `jitter=backoff.full_jitter`: a jittering function
                    // passed by name is the jitter it names.
                    if let Some(on) = jitter_named(lib, world.files[vf].file.text_of(node)) {
                        value.value = Value::Bool(on);
                    }
                }
                let mut value = meant(e, value);
                let loc = Loc { path: world.files[vf].file.path.clone(), line: line_of(node) };
                if loc != at {
                    value.trail.insert(0, loc);
                }
                out.push(site(identity(&lib.key(knob, e)), knob, lib, option, at.clone(), value, None));
            }
            None if within => {
                if let Some(d) = libraries::default_value(e) {
                    let value = Evaluated { value: d, trail: Vec::new() };
                    let source = Some(lib.default_source(e));
                    out.push(site(identity(&lib.key(knob, e)), knob, lib, option, at.clone(), value, source));
                }
            }
            None => {}
        }
    }
    read_methods(world, file, lib, h, &at, out);
    if let Some(j) = &lib.jitter {
        let on = j.on.contains(&h.name);
        if on || j.off.contains(&h.name) {
            let value = Evaluated { value: Value::Bool(on), trail: Vec::new() };
            let mut s = site(identity("jitter-constructor"), Knob::Jitter, lib, &h.name, at, value, None);
            s.constructor = true;
            out.push(s);
        }
    }
}

/// What a count option's value means when the library takes a strategy
/// object there (tenacity's `stop=`).
enum Strategy {
    Value(Evaluated),
    NotACount,
}

/// The count a strategy value stands for: the library's count call gives
/// its argument (`stop_after_attempt(5)`: 5), its unbounded call gives no
/// limit, and a combination with `|` (stop at whichever comes first) gives
/// the smallest count among its parts; a strategy call the library data
/// does not list as a count (`stop_after_delay(30)`) is not a count. Any
/// other value is evaluated as it is.
fn count_of_strategy<'t>(
    world: &World<'t>,
    file: usize,
    lib: &Library,
    n: Node<'t>,
    depth: usize,
) -> Strategy {
    let f = world.files[file].file;
    if depth > 16 {
        return Strategy::Value(world.eval(file, n, 0));
    }
    match n.kind() {
        "parenthesized_expression" => match children(n).first() {
            Some(c) => count_of_strategy(world, file, lib, *c, depth + 1),
            None => Strategy::Value(world.eval(file, n, 0)),
        },
        "binary_operator" if n.child_by_field_name("operator").is_some_and(|o| f.text_of(o) == "|") => {
            let parts = [n.child_by_field_name("left"), n.child_by_field_name("right")];
            let mut best: Option<Evaluated> = None;
            for p in parts.into_iter().flatten() {
                if let Strategy::Value(v) = count_of_strategy(world, file, lib, p, depth + 1) {
                    let smaller = match (&best, &v.value) {
                        (None, _) => true,
                        (Some(b), Value::Num { v: x, .. }) => match b.value {
                            Value::Num { v: y, .. } => x < &y,
                            _ => true,
                        },
                        _ => false,
                    };
                    if smaller {
                        best = Some(v);
                    }
                }
            }
            best.map_or(Strategy::NotACount, Strategy::Value)
        }
        "call" | "call_expression" | "method_invocation" => {
            let Some(callee) = n.child_by_field_name("function").or_else(|| n.child_by_field_name("name"))
            else {
                return Strategy::Value(world.eval(file, n, 0));
            };
            let text = f.text_of(callee);
            let name = text.rsplit(['.', ':']).next().unwrap_or(text).trim();
            if let Some(e) = lib.counts.iter().find(|e| e.call.as_deref() == Some(name)) {
                let arg = n.child_by_field_name("arguments").and_then(|a| positional(a).get(e.arg).copied());
                return match arg {
                    Some(a) => Strategy::Value(world.eval(file, a, 0)),
                    None => Strategy::Value(world.eval(file, n, 0)),
                };
            }
            if lib.unbounded.iter().any(|e| e.call.as_deref() == Some(name)) {
                return Strategy::Value(Evaluated { value: Value::Unlimited, trail: Vec::new() });
            }
            Strategy::NotACount
        }
        "identifier" | "attribute" => {
            let text = f.text_of(n);
            let name = text.rsplit('.').next().unwrap_or(text).trim();
            if lib.unbounded.iter().any(|e| e.call.as_deref() == Some(name)) {
                return Strategy::Value(Evaluated { value: Value::Unlimited, trail: Vec::new() });
            }
            Strategy::Value(world.eval(file, n, 0))
        }
        _ => Strategy::Value(world.eval(file, n, 0)),
    }
}

/// Whether `text` names one of the library's jittering (`Some(true)`) or
/// non-jittering (`Some(false)`) constructors, by its last name.
fn jitter_named(lib: &Library, text: &str) -> Option<bool> {
    let j = lib.jitter.as_ref()?;
    let last = text.trim().rsplit(['.', ':']).next().unwrap_or("").trim();
    if j.on.iter().any(|c| c == last) {
        Some(true)
    } else if j.off.iter().any(|c| c == last) {
        Some(false)
    } else {
        None
    }
}

/// A jitter constructor named without being called, where a value goes:
/// `retryDelay: axiosRetry.exponentialDelay`, `generator:
/// decorrelatedJitterGenerator`, `c.Backoff = retryablehttp.DefaultBackoff`,
/// `retry.DelayType(retry.BackOffDelay)`. Libraries take their backoff
/// functions this way as often as they take their results; an import or a
/// call's callee is not such a value.
fn read_reference<'t>(
    world: &World<'t>,
    file: usize,
    lib: &'static Library,
    n: Node<'t>,
    out: &mut Vec<Site>,
) {
    if !matches!(
        n.kind(),
        "identifier" | "attribute" | "member_expression" | "selector_expression" | "field_access"
    ) {
        return;
    }
    let Some(parent) = n.parent() else { return };
    // The outermost node of a dotted name only (`a.b.c`, not `a.b`).
    if matches!(parent.kind(), "attribute" | "member_expression" | "selector_expression" | "field_access") {
        return;
    }
    let is_callee = parent.child_by_field_name("function").is_some_and(|c| c.id() == n.id())
        || parent.child_by_field_name("name").is_some_and(|c| c.id() == n.id())
        || parent.child_by_field_name("left").is_some_and(|c| c.id() == n.id())
        || parent.child_by_field_name("key").is_some_and(|c| c.id() == n.id());
    let in_import = {
        let mut p = Some(parent);
        let mut found = false;
        while let Some(x) = p {
            if x.kind().contains("import") {
                found = true;
                break;
            }
            p = x.parent();
        }
        found
    };
    if is_callee || in_import {
        return;
    }
    let f = world.files[file].file;
    let text = f.text_of(n);
    let Some(on) = jitter_named(lib, text) else { return };
    let name = text.rsplit(['.', ':']).next().unwrap_or(text).trim().to_string();
    let at = Loc { path: f.path.clone(), line: line_of(n) };
    let identity = format!("{}|{}|jitter-constructor", owner(world, file, n), lib.library);
    let value = Evaluated { value: Value::Bool(on), trail: Vec::new() };
    let mut s = site(identity, Knob::Jitter, lib, &name, at, value, None);
    s.constructor = true;
    out.push(s);
}

/// `b.RandomizationFactor = 0`: an option of a library holder set as a
/// field, for options that name no holder.
fn read_assignment<'t>(
    world: &World<'t>,
    file: usize,
    lib: &'static Library,
    n: Node<'t>,
    out: &mut Vec<Site>,
) {
    if !matches!(n.kind(), "assignment" | "assignment_expression" | "assignment_statement") {
        return;
    }
    let f = world.files[file].file;
    let (Some(l), Some(r)) = (n.child_by_field_name("left"), n.child_by_field_name("right")) else { return };
    let target = f.text_of(l);
    let Some((_, field)) = target.rsplit_once('.') else { return };
    for (knob, e) in lib.entries() {
        if e.option.as_deref() == Some(field) && e.within.is_empty() {
            let value_node =
                if r.kind() == "expression_list" { children(r).first().copied().unwrap_or(r) } else { r };
            let value = meant(e, world.eval(file, value_node, 0));
            let at = Loc { path: f.path.clone(), line: line_of(n) };
            let identity = format!("{}|{}|{}", owner(world, file, n), lib.library, lib.key(knob, e));
            out.push(site(identity, knob, lib, field, at, value, None));
        }
    }
}

/// A value as the library entry `e` reads it (0 as no limit, where so).
fn meant(e: &libraries::Entry, mut v: Evaluated) -> Evaluated {
    v.value = e.meaning(v.value);
    v
}

fn site(
    identity: String,
    knob: Knob,
    lib: &Library,
    name: &str,
    at: Loc,
    value: Evaluated,
    default_source: Option<String>,
) -> Site {
    Site {
        identity,
        knob,
        library: lib.library.clone(),
        name: name.to_string(),
        at,
        value,
        default_source,
        constructor: false,
        writes: None,
        sends: false,
    }
}

/// The methods options of `lib` on holder `h`: whether each makes writes
/// retried, its absence read with the library's default.
fn read_methods<'t>(
    world: &World<'t>,
    file: usize,
    lib: &'static Library,
    h: &Holder<'t>,
    at: &Loc,
    out: &mut Vec<Site>,
) {
    for e in &lib.methods {
        if let Some(call) = &e.call {
            read_request(world, file, lib, h, e, call, at, out);
            continue;
        }
        let Some(option) = &e.option else { continue };
        if !e.within.contains(&h.name) {
            continue;
        }
        let identity = format!("{}|{}|methods:{option}", owner(world, file, h.node), lib.library);
        let (writes, value, source) = match option_value(world, file, h, option) {
            Some((vf, node)) => {
                let v = world.eval(vf, node, 0);
                let text = world.files[vf].file.text_of(node).to_ascii_uppercase();
                let writes = match &v.value {
                    // None (urllib3 2.x) or a false value (1.x's
                    // method_whitelist): any verb.
                    Value::Null | Value::Bool(false) => true,
                    Value::Unknown(t) => {
                        let t = t.to_ascii_uppercase();
                        t.contains("POST")
                            || t.contains("PATCH")
                            || text.contains("POST")
                            || text.contains("PATCH")
                    }
                    _ => text.contains("POST") || text.contains("PATCH"),
                };
                (writes, v, None)
            }
            None if e.default.as_deref() == Some("idempotent") => (
                false,
                Evaluated { value: Value::Unknown("idempotent methods only".into()), trail: Vec::new() },
                Some(lib.default_source(e)),
            ),
            None => continue,
        };
        let mut s = site(identity, Knob::Count, lib, option, at.clone(), value, source);
        s.writes = Some(writes);
        out.push(s);
    }
}

/// A request the library builds or sends (a methods `call` entry), with
/// its method: the argument at `e.arg` followed to its value, or the
/// method the call fixes (`e.default`). Only a call written with one of the
/// entry's qualifiers (`retryablehttp.NewRequest`) is the library's.
#[allow(clippy::too_many_arguments)]
fn read_request<'t>(
    world: &World<'t>,
    file: usize,
    lib: &'static Library,
    h: &Holder<'t>,
    e: &libraries::Entry,
    call: &str,
    at: &Loc,
    out: &mut Vec<Site>,
) {
    let f = world.files[file].file;
    let Some(callee) = h.node.child_by_field_name("function") else { return };
    let qualifier = f.text_of(callee).rsplit_once('.').map(|(q, _)| q.trim());
    if h.name != call || !qualifier.is_some_and(|q| e.within.iter().any(|w| w == q)) {
        return;
    }
    let value = match &e.default {
        Some(m) => Evaluated { value: Value::Text(m.clone()), trail: Vec::new() },
        None => {
            let Some(arg) = h.args.and_then(|a| positional(a).get(e.arg).copied()) else { return };
            world.eval(file, arg, 0)
        }
    };
    let identity = format!("{}|{}|sends:{call}", owner(world, file, h.node), lib.library);
    let mut s = site(identity, Knob::Count, lib, call, at.clone(), value.clone(), None);
    s.writes = request_writes(&value.value);
    s.sends = true;
    out.push(s);
}

/// Whether a request method is a write: POST or PATCH (a string, or Go's
/// `http.MethodPost`), not one (another method), or `None` when the value
/// says no method.
pub(crate) fn request_writes(v: &Value) -> Option<bool> {
    let word = match v {
        Value::Text(t) => t.to_ascii_uppercase(),
        Value::Unknown(t) => {
            let t = t.trim();
            let last = t.rsplit('.').next().unwrap_or(t);
            let last = last.strip_prefix("Method").unwrap_or(last).trim_matches(['"', '\'', '`']);
            if last.chars().all(|c| c.is_ascii_alphabetic()) && last.len() >= 3 {
                last.to_ascii_uppercase()
            } else {
                return None;
            }
        }
        _ => return None,
    };
    match word.as_str() {
        "POST" | "PATCH" => Some(true),
        "GET" | "HEAD" | "PUT" | "DELETE" | "OPTIONS" | "TRACE" | "CONNECT" => Some(false),
        _ => None,
    }
}

/// The value node of `option` among a holder's arguments, in this file or
/// (an object bound elsewhere) another.
fn option_value<'t>(
    world: &World<'t>,
    file: usize,
    h: &Holder<'t>,
    option: &str,
) -> Option<(usize, Node<'t>)> {
    // A nested option (`retry.limit`: got's `{ retry: { limit: 2 } }`):
    // the outer key's object, then each inner key in it, wherever the
    // objects are bound.
    if let Some((outer, rest)) = option.split_once('.') {
        let (mut vf, mut node) = top_option_value(world, file, h, outer)?;
        for key in rest.split('.') {
            let (_, ef, v) = world.entries(vf, node, 0).into_iter().rev().find(|(k, _, _)| k == key)?;
            (vf, node) = (ef, v);
        }
        return Some((vf, node));
    }
    top_option_value(world, file, h, option)
}

fn top_option_value<'t>(
    world: &World<'t>,
    file: usize,
    h: &Holder<'t>,
    option: &str,
) -> Option<(usize, Node<'t>)> {
    let f = world.files[file].file;
    let args = h.args?;
    let mut found = None;
    for a in children(args) {
        match a.kind() {
            "keyword_argument" | "element_value_pair" => {
                let k = a.child_by_field_name("name").or_else(|| a.child_by_field_name("key"));
                if k.is_some_and(|k| f.text_of(k) == option) {
                    found = a.child_by_field_name("value").map(|v| (file, v));
                }
            }
            "keyed_element" => {
                let kids = children(a);
                if kids.first().is_some_and(|k| f.text_of(*k).trim() == option) {
                    found = kids.get(1).map(|v| (file, *v));
                }
            }
            _ => {
                let entries = world.entries(
                    file,
                    if a.kind() == "dictionary_splat" {
                        children(a).first().copied().unwrap_or(a)
                    } else {
                        a
                    },
                    0,
                );
                if let Some((_, ef, v)) = entries.into_iter().rev().find(|(k, _, _)| k == option) {
                    found = Some((ef, v));
                }
            }
        }
    }
    found
}

/// Whether a method chain below `n` starts at a call named in `names`.
fn chain_has(world: &World<'_>, file: usize, n: Node<'_>, names: &[String]) -> bool {
    let f = world.files[file].file;
    let mut cur = n.child_by_field_name("object");
    let mut steps = 0;
    while let Some(c) = cur {
        steps += 1;
        if steps > 64 {
            return false;
        }
        let name =
            c.child_by_field_name("name").or_else(|| c.child_by_field_name("type")).map(|x| f.text_of(x));
        if name.is_some_and(|nm| names.iter().any(|w| w == nm)) || names.iter().any(|w| f.text_of(c) == w) {
            return true;
        }
        cur = c.child_by_field_name("object");
    }
    false
}

/// What holds a site, as the names around it: the variable it is assigned
/// to, the function (or decorated function) and class it is in.
pub(crate) fn owner(world: &World<'_>, file: usize, n: Node<'_>) -> String {
    let f = world.files[file].file;
    // Where a holder is written is also what it is: the callee of the
    // call it is an argument of (`@retry(stop=stop_after_attempt(3))`).
    let mut parts: Vec<String> = Vec::new();
    let mut p = n.parent();
    while let Some(x) = p {
        let name = match x.kind() {
            "assignment" | "assignment_expression" => x.child_by_field_name("left"),
            "variable_declarator" | "const_spec" | "var_spec" => x.child_by_field_name("name"),
            "short_var_declaration" => x.child_by_field_name("left"),
            "pair" | "keyed_element" | "keyword_argument" => None,
            "decorated_definition" => {
                x.child_by_field_name("definition").and_then(|d| d.child_by_field_name("name"))
            }
            k if super::defs::is_function(k) || k.starts_with("class") || k == "method_declaration" => {
                x.child_by_field_name("name")
            }
            _ => None,
        };
        if let Some(nm) = name {
            let t = f.text_of(nm).to_string();
            if parts.last() != Some(&t) {
                parts.push(t);
            }
        }
        p = x.parent();
    }
    parts.reverse();
    parts.join(".")
}
