//! The one walker from a revision's syntax trees to the [`model`]: every
//! function's operations, and the retry that covers each of them.
//!
//! A retry is found in four forms, in every grammar:
//! - a library form from `rules/operations/model.yml` (a decorator, annotation,
//!   wrapper call, Ruby block, `for attempt in Retrying(..)`): the code it
//!   is given is covered;
//! - a loop whose failure path goes round again (a catch clause, a Go
//!   `if err != nil`, a Ruby `rescue .. retry`) and whose success leaves;
//! - a function that calls itself on failure;
//! - a project function that retries a callable it is given, followed to
//!   its definition in the files read (and, unresolved, a call named as a
//!   retry that is given a callable).
//!
//! Calls to the project's own functions under a retry are followed into
//! their bodies, so an operation keeps its identity (the function it is
//! written in) wherever the retry that covers it is written.
//!
//! [`model`]: super::model

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::LazyLock;

use regex::Regex;
use tree_sitter::Node;

use super::clients::{client_names, client_seeds, self_senders, ClientPolicy};
use super::data::{Data, Wrapper};
use super::model::{Attempts, Condition, Covered, Form, Method, Operation, Retry};
use super::syntax::{jump_of, last_segment, receiver, words, Jump, Syntax};
use crate::analyze::knobs::value::Value;
use crate::analyze::trees::defs::line_of;
use crate::analyze::trees::eval::World;
use crate::analyze::trees::grammar::Grammar;

/// The form's name of a reactive retry operator (Reactor, RxJS).
pub(crate) const REACTIVE: &str = "reactive retry operator";

/// How many function bodies deep calls are followed under a retry.
const MAX_DEPTH: usize = 4;

/// How deep the walker descends in one tree; deeper code (generated
/// tables) is not read.
const MAX_NODE_DEPTH: usize = 400;

/// Calls read in one revision of a change (following helpers included);
/// past it the model stops and says so (docs/limits.md).
pub(crate) const MAX_CALLS: usize = 100_000;

/// Retries found in one revision; past it the model stops and says so.
pub(crate) const MAX_RETRIES: usize = 5_000;

/// A timeout and where it is written.
type Timeout = (Option<f64>, Option<(String, u32)>);

/// A number and where it was written, when it was followed there.
type Counted = (f64, Option<(String, u32)>);

/// What one revision's files perform and how it is retried.
#[derive(Debug, Default)]
pub(crate) struct Model {
    pub(crate) covered: Vec<Covered>,
    /// Every retry found, covering operations or not.
    pub(crate) retries: Vec<Retry>,
    /// Whether [`MAX_CALLS`] stopped the walk.
    pub(crate) truncated: bool,
    /// The qualified names of the functions the files define: code the
    /// base did not have is new, not changed.
    pub(crate) functions: HashSet<String>,
    /// The paths of the files modelled.
    pub(crate) files: HashSet<String>,
    /// Who calls what: (calling function, the callee's last name).
    pub(crate) calls: HashSet<(String, String)>,
}

/// The model of a revision (the files of `world`).
pub(crate) fn model(world: &World<'_>, data: &Data) -> Model {
    let mut w = Walker::new(world, data);
    for file in 0..world.files.len() {
        let root = world.files[file].file.tree.root_node();
        let outer = w.outermost_defs(file, root);
        for def in &outer {
            let name = w.qual_name(file, *def);
            let mut ctx = Ctx::top(name, 0, vec![def.id()]);
            if let Some(r) = w.decorator_retry(file, *def, &ctx.function) {
                w.retries.push(r.clone());
                ctx.retry = Some(r);
            }
            if let Some(r) = w.recursion_retry(file, *def, &ctx.function) {
                w.retries.push(r.clone());
                ctx.outer = ctx.retry.take();
                ctx.retry = Some(r);
            }
            w.walk_children(file, *def, &ctx, 0);
        }
        // Module-level code, outside every definition.
        let ctx = Ctx::top("<module>".into(), 0, Vec::new());
        let skip: HashSet<usize> = outer.iter().map(|d| d.id()).collect();
        // The nodes that hold a definition are walked around it.
        let mut holders = HashSet::new();
        for d in &outer {
            let mut p = d.parent();
            while let Some(x) = p {
                if !holders.insert(x.id()) {
                    break;
                }
                p = x.parent();
            }
        }
        w.walk_module(file, root, &ctx, &skip, &holders, 0);
    }
    w.finish()
}

#[derive(Clone)]
struct Ctx {
    /// The function being read, for the identity of what it performs.
    function: String,
    retry: Option<Retry>,
    /// The retry around `retry`, for its failure path.
    outer: Option<Retry>,
    depth: usize,
    /// Definitions being followed (node ids), against cycles.
    visiting: Vec<usize>,
    /// When `retry` is a hand-written loop: its file and byte span. A call
    /// in it is re-issued until it succeeds only if the loop can leave
    /// after the call succeeds ([`Walker::success_leaves`]).
    exit_scope: Option<(usize, usize, usize)>,
    /// The HTTP method a followed call passed to a function that takes
    /// one (`self._send_request('GET', url)`): the method of the request
    /// of unknown method inside it.
    call_method: Option<String>,
}

/// The methods through which a client hands each request to its transport,
/// adapter, handler or interceptor, by library language.
const TRANSPORT_METHODS: &[(&str, &str)] = &[
    ("python", "handle_request"),
    ("python", "handle_async_request"),
    ("python", "send"),
    ("go", "RoundTrip"),
    ("java", "intercept"),
    ("kotlin", "intercept"),
    ("csharp", "SendAsync"),
    ("csharp", "Send"),
];

/// Words in a class's header (its bases) that make it a client's
/// transport: httpx's transports, a requests adapter, an OkHttp
/// interceptor, a .NET message handler.
const TRANSPORT_BASES: &[&str] =
    &["Transport", "HTTPAdapter", "Interceptor", "DelegatingHandler", "HttpMessageHandler"];

/// Words by which a transport's send method retries only reads (`if
/// req.Method != http.MethodGet`, `if request.method not in ("GET",
/// "HEAD")`, `isIdempotent(req)`).
const READS_ONLY: &[&str] =
    &["idempot", "Idempot", "MethodGet", "\"GET\"", "'GET'", "HttpMethod.Get", "Method.GET", "SAFE_METHODS"];

static EMPTY_NAMES: LazyLock<HashSet<String>> = LazyLock::new(HashSet::new);

/// HTTP client types, as declarations name them (Go, Python, JVM, .NET,
/// TypeScript): a field, parameter or variable of one of these is a client.
const CLIENT_TYPES: &str = r"\*?(?:http\.Client|resty\.Client|retryablehttp\.Client|httpx\.(?:Async)?Client|requests\.Session|aiohttp\.ClientSession|HttpClient|OkHttpClient|RestTemplate|WebClient|CloseableHttpClient|AxiosInstance)\b";

/// The names `text` declares with an HTTP client type (`hc *http.Client`,
/// `client: httpx.AsyncClient`, `private final OkHttpClient http;`) or
/// assigns a new client to (`s = requests.Session()`, `hc := &http.Client{`).
fn typed_client_names(text: &str) -> HashSet<String> {
    static DECLS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
        [
            // Go fields and vars, Python and TS annotations: `name TYPE`, `name: TYPE`.
            format!(r"([A-Za-z_]\w*)\s*:?\s+(?:Optional\[)?{CLIENT_TYPES}"),
            format!(r"([A-Za-z_]\w*)\s*:\s*(?:Optional\[)?{CLIENT_TYPES}"),
            // JVM and .NET: `TYPE name`.
            format!(r"{CLIENT_TYPES}\??\s+([A-Za-z_]\w*)\s*[;=,)]"),
            // Built: `name = httpx.Client(`, `name := &http.Client{`.
            format!(r"([A-Za-z_]\w*)\s*:?=\s*(?:new\s+)?&?{CLIENT_TYPES}\s*[({{]"),
        ]
        .iter()
        .map(|p| Regex::new(p).unwrap_or_else(|e| panic!("constant pattern: {e}")))
        .collect()
    });
    let mut out = HashSet::new();
    for re in DECLS.iter() {
        for c in re.captures_iter(text) {
            if let Some(m) = c.get(1) {
                let n = m.as_str();
                if !matches!(
                    n,
                    "return"
                        | "func"
                        | "var"
                        | "new"
                        | "private"
                        | "public"
                        | "final"
                        | "static"
                        | "readonly"
                ) {
                    out.insert(n.to_string());
                }
            }
        }
    }
    out
}

/// The names `text` imports from a path one of whose words names a service
/// (`import com.stripe.model.Customer;`, `from stripe import Customer`,
/// `const { Customer } = require('stripe')`): what is called on them leaves
/// the process.
fn service_imports(text: &str, remote: &[String]) -> HashSet<String> {
    let mut out = HashSet::new();
    for l in text.lines().take(400) {
        let t = l.trim_start();
        let imports = ["import ", "from ", "using ", "use ", "require"].iter().any(|k| t.starts_with(k))
            || t.contains("require(");
        if !imports || !t.split(|c: char| !c.is_alphanumeric()).flat_map(words).any(|w| remote.contains(&w)) {
            continue;
        }
        const KEYWORDS: &[&str] =
            &["import", "from", "using", "use", "require", "as", "const", "let", "var", "static"];
        out.extend(
            t.split(|c: char| !c.is_alphanumeric() && c != '_')
                .filter(|w| w.len() > 1 && !KEYWORDS.contains(w))
                .map(str::to_string),
        );
    }
    out
}

impl Ctx {
    /// A function read on its own, under no retry.
    fn top(function: String, depth: usize, visiting: Vec<usize>) -> Ctx {
        Ctx { function, retry: None, outer: None, depth, visiting, exit_scope: None, call_method: None }
    }

    fn with_retry(&self, r: Retry) -> Ctx {
        Ctx { retry: Some(r), outer: self.retry.clone(), exit_scope: None, ..self.clone() }
    }

    /// Under a hand loop's retry that ends on success at `lp`.
    fn with_loop(&self, r: Retry, file: usize, lp: Node<'_>) -> Ctx {
        Ctx { exit_scope: Some((file, lp.start_byte(), lp.end_byte())), ..self.with_retry(r) }
    }
}

struct Walker<'w, 't> {
    world: &'w World<'t>,
    data: &'w Data,
    /// Definitions by their last name, in every file.
    defs: HashMap<String, Vec<(usize, Node<'t>)>>,
    /// The project's own transports, by their type's name: the method
    /// through which a client sends each request (see [`TRANSPORT_METHODS`]).
    transports: HashMap<String, Vec<(usize, Node<'t>)>>,
    helpers: RefCell<HashMap<(usize, usize), Option<Retry>>>,
    /// Each file's one timeout, read once (a whole-file search).
    file_timeouts: RefCell<HashMap<usize, Timeout>>,
    /// Each file's names typed or built as HTTP clients ([`Walker::typed_clients`]).
    typed: RefCell<HashMap<usize, HashSet<String>>>,
    /// `Owner::NAME` constants looked up by text, once each.
    constants: RefCell<HashMap<String, Option<Counted>>>,
    /// Calls read so far; past [`MAX_CALLS`] the rest of the revision is
    /// not modelled (a note says so).
    calls_read: usize,
    truncated: bool,
    /// Definitions already followed under a retry (node id, retry place).
    expanded: HashSet<(usize, (String, u32))>,
    ops: Vec<(Operation, Option<Retry>)>,
    retries: Vec<Retry>,
    /// While deciding whether a definition retries its parameters: their
    /// names, and the retries found covering a call of one.
    probe: Option<(HashSet<String>, Vec<Retry>)>,
    /// Client-wide policies built in the files read, attached to the
    /// requests in their scope when the walk is done.
    clients: Vec<ClientPolicy>,
    /// (calling function, callee's last name) for every call read.
    calls: HashSet<(String, String)>,
}

/// How a loop's success leaves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Exit {
    None,
    Conditional,
    Unconditional,
}

impl<'w, 't> Walker<'w, 't> {
    fn new(world: &'w World<'t>, data: &'w Data) -> Self {
        let mut w = Walker {
            world,
            data,
            defs: HashMap::new(),
            transports: HashMap::new(),
            helpers: RefCell::new(HashMap::new()),
            file_timeouts: RefCell::new(HashMap::new()),
            typed: RefCell::new(HashMap::new()),
            constants: RefCell::new(HashMap::new()),
            calls_read: 0,
            truncated: false,
            expanded: HashSet::new(),
            ops: Vec::new(),
            retries: Vec::new(),
            probe: None,
            clients: Vec::new(),
            calls: HashSet::new(),
        };
        for file in 0..world.files.len() {
            let root = world.files[file].file.tree.root_node();
            let mut stack = vec![(root, 0usize)];
            while let Some((n, d)) = stack.pop() {
                if d > MAX_NODE_DEPTH {
                    continue;
                }
                if let Some(name) = w.def_name(file, n) {
                    if let Some(owner) = w.transport_owner(file, n, &name) {
                        w.transports.entry(owner).or_default().push((file, n));
                    }
                    w.defs.entry(name).or_default().push((file, n));
                }
                let mut c = n.walk();
                for ch in n.named_children(&mut c) {
                    stack.push((ch, d + 1));
                }
            }
        }
        w
    }

    fn syn(&self, file: usize) -> &'static Syntax {
        Syntax::of(self.grammar(file))
    }

    fn grammar(&self, file: usize) -> Grammar {
        self.world.files[file].file.grammar
    }

    fn text(&self, file: usize, n: Node<'_>) -> &'w str {
        let f = self.world.files[file].file;
        f.text.get(n.byte_range()).unwrap_or("")
    }

    fn path(&self, file: usize) -> &'w str {
        &self.world.files[file].file.path
    }

    /// The name a definition binds: a named function, or a function
    /// literal assigned to a name.
    fn def_name(&self, file: usize, n: Node<'_>) -> Option<String> {
        let syn = self.syn(file);
        let k = n.kind();
        if syn.is_function(k) {
            let name = n.child_by_field_name("name").or_else(|| {
                let mut c = n.walk();
                let found = n
                    .named_children(&mut c)
                    .find(|ch| matches!(ch.kind(), "identifier" | "simple_identifier" | "name"));
                found
            })?;
            return Some(self.text(file, name).trim_start_matches('$').to_string());
        }
        if syn.is_lambda(k) {
            let p = n.parent()?;
            let target = match p.kind() {
                "variable_declarator" => p.child_by_field_name("name"),
                "assignment" | "assignment_expression" | "augmented_assignment" => {
                    p.child_by_field_name("left")
                }
                "pair" => p.child_by_field_name("key"),
                "expression_list" => {
                    let gp = p.parent()?;
                    matches!(gp.kind(), "short_var_declaration" | "assignment_statement")
                        .then(|| gp.child_by_field_name("left"))
                        .flatten()
                }
                _ => None,
            }?;
            let t = self.text(file, target);
            let last = last_segment(t.trim()).trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
            return (!last.is_empty()).then(|| last.to_string());
        }
        None
    }

    fn is_def(&self, file: usize, n: Node<'_>) -> bool {
        let syn = self.syn(file);
        syn.is_function(n.kind()) || (syn.is_lambda(n.kind()) && self.def_name(file, n).is_some())
    }

    /// Definitions with no definition around them.
    fn outermost_defs(&self, file: usize, root: Node<'t>) -> Vec<Node<'t>> {
        let mut out = Vec::new();
        let mut stack = vec![(root, 0usize)];
        while let Some((n, d)) = stack.pop() {
            if d > MAX_NODE_DEPTH {
                continue;
            }
            if n.id() != root.id() && self.is_def(file, n) {
                out.push(n);
                continue;
            }
            let mut c = n.walk();
            for ch in n.named_children(&mut c) {
                stack.push((ch, d + 1));
            }
        }
        out.sort_by_key(|n| n.start_byte());
        out
    }

    /// `Class.method` or `function`.
    fn qual_name(&self, file: usize, def: Node<'_>) -> String {
        let name = self.def_name(file, def).unwrap_or_else(|| "<anonymous>".into());
        let mut p = def.parent();
        while let Some(x) = p {
            let k = x.kind();
            if k.contains("class") && !k.contains("body") || k == "module" || k == "object_declaration" {
                if let Some(n) = x.child_by_field_name("name") {
                    return format!("{}.{name}", self.text(file, n));
                }
            }
            p = x.parent();
        }
        if def.kind() == "method_declaration" && self.grammar(file) == Grammar::Go {
            if let Some(r) = def.child_by_field_name("receiver") {
                let t = self.text(file, r);
                if let Some(ty) = t.split(|c: char| !c.is_alphanumeric() && c != '_').rfind(|s| !s.is_empty())
                {
                    return format!("{ty}.{name}");
                }
            }
        }
        name
    }

    fn walk_module(
        &mut self,
        file: usize,
        n: Node<'t>,
        ctx: &Ctx,
        skip: &HashSet<usize>,
        holders: &HashSet<usize>,
        d: usize,
    ) {
        if d > MAX_NODE_DEPTH {
            return;
        }
        let mut c = n.walk();
        let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
        for ch in kids {
            if skip.contains(&ch.id()) {
                continue;
            }
            if holders.contains(&ch.id()) {
                // A call that holds a definition (`axiosRetry(api, {
                // retryCondition: (e) => .. })`) may still install a
                // client-wide policy.
                if self.syn(file).is_call(ch.kind()) {
                    let callee = self.callee(file, ch);
                    let lang = self.grammar(file).library_language();
                    if !callee.is_empty() {
                        let defined = !self.resolve(file, &callee).is_empty();
                        self.client_policy(file, ch, &callee, lang, ctx, defined);
                    }
                }
                self.walk_module(file, ch, ctx, skip, holders, d + 1);
            } else {
                self.walk(file, ch, ctx, d + 1);
            }
        }
    }

    fn walk_children(&mut self, file: usize, n: Node<'t>, ctx: &Ctx, d: usize) {
        let mut c = n.walk();
        let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
        for ch in kids {
            self.walk(file, ch, ctx, d + 1);
        }
    }

    fn walk(&mut self, file: usize, n: Node<'t>, ctx: &Ctx, d: usize) {
        if d > MAX_NODE_DEPTH {
            return;
        }
        if self.truncated || self.retries.len() > MAX_RETRIES {
            self.truncated = true;
            return;
        }
        let syn = self.syn(file);
        let k = n.kind();
        if syn.loops.contains(&k) {
            if let Some(r) = self.loop_retry(file, n, ctx) {
                self.retries.push(r.clone());
                let inner = if r.form == Form::Loop { ctx.with_loop(r, file, n) } else { ctx.with_retry(r) };
                self.walk_children(file, n, &inner, d);
                return;
            }
        }
        // A function defined inside the one walked (a decorated `_post()`
        // the outer function calls): its decorator retries its body, which
        // keeps the outer function's name (the outer function is what the
        // base had).
        if self.is_def(file, n) {
            if let Some(mut r) = self.decorator_retry(file, n, &ctx.function) {
                r.function = ctx.function.clone();
                self.retries.push(r.clone());
                let inner = ctx.with_retry(r);
                self.walk_children(file, n, &inner, d);
                return;
            }
        }
        if syn.catches.contains(&k) && ctx.retry.as_ref().is_some_and(|r| r.form == Form::Loop) {
            // The failure path of a retry loop is not retried by it.
            let outer = Ctx { retry: ctx.outer.clone(), outer: None, exit_scope: None, ..ctx.clone() };
            self.walk_children(file, n, &outer, d);
            return;
        }
        if self.grammar(file) == Grammar::Ruby
            && matches!(k, "begin" | "body_statement" | "do_block" | "block")
        {
            if let Some(r) = self.ruby_rescue_retry(file, n, ctx) {
                self.retries.push(r.clone());
                let inner = ctx.with_retry(r);
                self.walk_children(file, n, &inner, d);
                return;
            }
        }
        // Work started and not waited for (`go send()`, a bare
        // `asyncio.ensure_future(send())`, `Task.Run(..)` as a statement):
        // its failure never reaches the retry around it, which therefore
        // does not re-run it.
        if ctx.retry.is_some() && self.fire_and_forget(file, n) {
            let detached = Ctx { retry: None, outer: None, exit_scope: None, ..ctx.clone() };
            self.walk_children(file, n, &detached, d);
            return;
        }
        // A call after which the loop around it cannot leave is run once
        // per pass, not re-issued until it succeeds: a worker, poll or
        // dispatch loop's work.
        let once;
        let ctx = match ctx.exit_scope {
            Some((f, start, end))
                if syn.is_call(k)
                    && f == file
                    && n.start_byte() >= start
                    && n.end_byte() <= end
                    && !self.success_leaves(file, (start, end), n) =>
            {
                once = Ctx { retry: ctx.outer.clone(), outer: None, exit_scope: None, ..ctx.clone() };
                &once
            }
            _ => ctx,
        };
        if syn.is_call(k) && self.call(file, n, ctx, d) {
            return;
        }
        // `&retryablehttp.Client{RetryMax: 5}`: a client built by value.
        if k == "composite_literal" {
            if let Some(t) = n.child_by_field_name("type") {
                let name: String = self.text(file, t).chars().filter(|c| !c.is_whitespace()).collect();
                let lang = self.grammar(file).library_language();
                if !self.client_policy(file, n, &name, lang, ctx, false) {
                    let _ = self.own_transport(file, n, &name, ctx);
                }
            }
        }
        self.walk_children(file, n, ctx, d);
    }

    /// Whether `n` starts work nobody waits for: a Go `go` statement, or a
    /// task-starting call (`ensure_future`, `create_task`, `spawn`,
    /// `Task.Run`, `launch`, `setImmediate`) whose result is dropped.
    fn fire_and_forget(&self, file: usize, n: Node<'_>) -> bool {
        if n.kind() == "go_statement" {
            return true;
        }
        if !self.syn(file).is_call(n.kind()) {
            return false;
        }
        let callee = self.callee(file, n);
        let starts_task = matches!(
            last_segment(&callee),
            "ensure_future"
                | "create_task"
                | "run_coroutine_threadsafe"
                | "start_soon"
                | "spawn"
                | "spawn_blocking"
                | "launch"
                | "setImmediate"
                | "queueMicrotask"
                | "nextTick"
                | "runAsync"
                | "supplyAsync"
        );
        // .NET's `Task.Run(..)`/`Task.Factory.StartNew(..)`; a `Run` of
        // anything else (`cmd.Run()`, `server.Run()`) runs and waits.
        let dotnet_task = matches!(last_segment(&callee), "Run" | "StartNew")
            && receiver(&callee).rsplit('.').any(|r| r == "Task" || r == "Factory");
        (starts_task || dotnet_task)
            && n.parent().is_some_and(|p| matches!(p.kind(), "expression_statement" | "statement_expression"))
    }

    // ---- calls -------------------------------------------------------

    /// The callee as written, whitespace removed: everything before the
    /// call's arguments.
    /// Kotlin writes a trailing lambda as a call of a call:
    /// `repeat(3) { .. }` is `call(call(repeat, (3)), lambda)`. The inner
    /// call, when the outer one only adds lambdas.
    fn trailing_inner<'a>(&self, file: usize, call: Node<'a>) -> Option<Node<'a>> {
        let syn = self.syn(file);
        let first = call.named_child(0)?;
        if !syn.is_call(first.kind()) || call.named_child_count() < 2 {
            return None;
        }
        let mut c = call.walk();
        let rest_lambdas = call.named_children(&mut c).skip(1).all(|ch| syn.is_lambda(ch.kind()));
        rest_lambdas.then_some(first)
    }

    fn callee(&self, file: usize, call: Node<'_>) -> String {
        if let Some(inner) = self.trailing_inner(file, call) {
            return self.callee(file, inner);
        }
        let syn = self.syn(file);
        let mut c = call.walk();
        let args =
            call.named_children(&mut c).find(|ch| syn.args.contains(&ch.kind()) || syn.is_lambda(ch.kind()));
        let end = args.map_or(call.end_byte(), |a| a.start_byte());
        let f = self.world.files[file].file;
        let raw = f.text.get(call.start_byte()..end).unwrap_or("");
        let mut s: String = raw.chars().filter(|c| !c.is_whitespace()).collect();
        for p in ["await", "new", "yield", "go", "return"] {
            if let Some(r) = s.strip_prefix(p) {
                if raw.trim_start().starts_with(&format!("{p} ")) {
                    s = r.to_string();
                }
            }
        }
        // `(options?.fetch ?? fetch)(url)`: a caller's override or the
        // default; the default is what the code calls when given none.
        if let Some(inner) = s.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
            if let Some((_, fallback)) = inner.rsplit_once("??").or_else(|| inner.rsplit_once("||")) {
                s = fallback.to_string();
            }
        }
        // Generic arguments and optional chaining say nothing of the callee.
        let mut out = String::with_capacity(s.len());
        let mut depth = 0;
        for ch in s.chars() {
            match ch {
                '<' if !out.ends_with('-') => depth += 1,
                '>' if depth > 0 => depth -= 1,
                '?' | '!' if depth == 0 => {}
                _ if depth == 0 => out.push(ch),
                _ => {}
            }
        }
        out.trim_end_matches('.').to_string()
    }

    /// The argument nodes of a call: its argument list's children, and a
    /// block or trailing lambda.
    fn args(&self, file: usize, call: Node<'t>) -> Vec<Node<'t>> {
        let syn = self.syn(file);
        let mut out = Vec::new();
        if let Some(inner) = self.trailing_inner(file, call) {
            out = self.args(file, inner);
            let mut c = call.walk();
            out.extend(call.named_children(&mut c).skip(1));
            return out;
        }
        let mut c = call.walk();
        for ch in call.named_children(&mut c) {
            if syn.is_lambda(ch.kind()) {
                out.push(ch);
            } else if syn.args.contains(&ch.kind()) {
                if syn.is_lambda(ch.kind()) {
                    out.push(ch);
                    continue;
                }
                let mut c2 = ch.walk();
                for a in ch.named_children(&mut c2) {
                    if a.kind() == "comment" {
                        continue;
                    }
                    // Kotlin wraps each argument, PHP and C# too.
                    if matches!(a.kind(), "value_argument" | "argument") && a.named_child_count() == 1 {
                        if let Some(inner) = a.named_child(0) {
                            out.push(inner);
                            continue;
                        }
                    }
                    out.push(a);
                }
                if matches!(ch.kind(), "do_block" | "block" | "annotated_lambda") {
                    out.push(ch);
                }
            }
        }
        out
    }

    fn is_callable(&self, file: usize, n: Node<'_>) -> bool {
        let syn = self.syn(file);
        syn.is_lambda(n.kind())
            || matches!(n.kind(), "do_block" | "block" | "annotated_lambda" | "lambda_literal")
    }

    /// Handles one call; true when its arguments were walked too.
    fn call(&mut self, file: usize, n: Node<'t>, ctx: &Ctx, d: usize) -> bool {
        self.calls_read += 1;
        if self.calls_read > MAX_CALLS || self.retries.len() > MAX_RETRIES {
            self.truncated = true;
            return true;
        }
        let callee = self.callee(file, n);
        if callee.is_empty() {
            return false;
        }
        if self.probe.is_none() {
            self.calls.insert((ctx.function.clone(), last_segment(&callee).to_string()));
        }
        // While probing a definition: a call of one of its parameters.
        if let Some((params, hits)) = self.probe.as_mut() {
            let head = callee.trim_start_matches('$');
            let first = head.split(['.', '-', ':']).next().unwrap_or(head);
            if params.contains(head)
                || params.contains(first)
                    && ["call", "apply", "invoke", "run", "get", "execute", "Invoke", "()"]
                        .iter()
                        .any(|m| head.ends_with(m))
            {
                if let Some(r) = &ctx.retry {
                    hits.push(r.clone());
                }
            }
        }
        let lang = self.grammar(file).library_language();
        let data = self.data;
        // The project's own definition of the name comes first: a
        // `withRetry` the file defines is read, not taken for a library's.
        let mut targets = self.resolve(file, &self.own_receiver_call(file, n, &callee));
        // A method that hands the call on to another object of the same
        // method name (`def call_tool(self, ..): return self.session.call_tool(..)`)
        // delegates; it does not call itself.
        let recv = receiver(&callee).trim_start_matches('$');
        if !recv.is_empty()
            && !matches!(recv, "self" | "this" | "cls" | "@" | "this-" | "static" | "self:" | "static:")
        {
            targets.retain(|(f, d)| {
                !(*f == file && d.start_byte() <= n.start_byte() && n.end_byte() <= d.end_byte())
            });
        }
        // A client built to retry: its call is no request of its own.
        if self.client_policy(file, n, &callee, lang, ctx, !targets.is_empty()) {
            return false;
        }
        if self.own_transport(file, n, &callee, ctx) {
            return false;
        }
        // A library form given code to run.
        let whole = self.world.files[file].file.text.as_str();
        if let Some(w) = data.wrappers.iter().filter(|_| targets.is_empty()).find(|w| {
            w.languages.iter().any(|l| l == lang)
                && w.form.iter().any(|f| f == "call" || f == "block")
                && w.names_callee(&callee)
                && w.used_in(whole)
        }) {
            let args = self.args(file, n);
            let has_code = args.iter().any(|a| self.is_callable(file, *a) || self.names_def(file, *a));
            if has_code {
                let r = self.wrapper_retry(w, file, n, n, ctx);
                self.retries.push(r.clone());
                self.cover_args(file, &args, ctx, &r, d);
                return true;
            }
        }
        // A retry operator applied after the request in a reactive chain:
        // `webClient.post()...bodyToMono(..).retryWhen(Retry.backoff(3, ..))`,
        // `http.post(url, b).pipe(retry(3))`.
        if let Some(r) = self.chain_after_retry(file, n, &callee, ctx) {
            self.retries.push(r.clone());
            let inner = ctx.with_retry(r);
            self.walk_children(file, n, &inner, d);
            return true;
        }
        // Loops written as calls: `3.times do`, `loop do`, `repeat(3) {}`.
        if let Some(r) = self.loop_call_retry(file, n, &callee, ctx) {
            self.retries.push(r.clone());
            let inner = ctx.with_loop(r, file, n);
            self.walk_children(file, n, &inner, d);
            return true;
        }
        // A bare call of a function the files define is that function,
        // even when its name is a sender's (`request(args)`): its body is
        // read below, where the request it sends is.
        let own_bare = !targets.is_empty() && receiver(&callee).is_empty();
        if let Some(op) = self.request(file, n, &callee, ctx).filter(|_| !own_bare) {
            let covered = self.chain_retry(file, n, &callee, ctx).or_else(|| ctx.retry.clone());
            self.ops.push((op, covered));
            return false;
        }
        // The project's own functions.
        if !targets.is_empty() {
            let args = self.args(file, n);
            let has_code = args.iter().any(|a| self.is_callable(file, *a) || self.names_def(file, *a));
            if has_code {
                let helper = targets.iter().find_map(|(f, def)| self.helper_retry(*f, *def));
                if let Some(mut r) = helper {
                    r.function = ctx.function.clone();
                    r.path = self.path(file).to_string();
                    r.line = line_of(n);
                    r.end_line = n.end_position().row as u32 + 1;
                    if let Some(i) = r.count_param {
                        if let Some(a) = args.get(i) {
                            r.attempts = match self.number(file, *a) {
                                Some((v, at)) => {
                                    r.count_at = at;
                                    Attempts::Count(v)
                                }
                                None if self.unlimited(file, *a) => Attempts::Unbounded,
                                None => Attempts::Bounded,
                            };
                        }
                    }
                    if let Some(c) =
                        targets.iter().find_map(|(f, def)| self.param_conditions(*f, *def, file, n))
                    {
                        r.conditions = c;
                    }
                    self.retries.push(r.clone());
                    self.cover_args(file, &args, ctx, &r, d);
                    return true;
                }
            }
            if ctx.retry.is_some() && ctx.depth < MAX_DEPTH {
                for (f, def) in targets {
                    if ctx.visiting.contains(&def.id()) || !self.first_expansion(def, ctx.retry.as_ref()) {
                        continue;
                    }
                    let mut visiting = ctx.visiting.clone();
                    visiting.push(def.id());
                    let call_method = self.passed_method(file, n, f, def).or_else(|| ctx.call_method.clone());
                    let inner = Ctx {
                        function: self.qual_name(f, def),
                        depth: ctx.depth + 1,
                        visiting,
                        call_method,
                        ..ctx.clone()
                    };
                    self.walk_children(f, def, &inner, 0);
                }
            }
            return false;
        }
        if let Some(op) = self
            .sdk_write(file, n, &callee, ctx)
            .or_else(|| self.sdk_read(file, n, &callee, ctx))
            .or_else(|| self.request_by_shape(file, n, &callee, ctx))
        {
            self.ops.push((op, ctx.retry.clone()));
            return false;
        }
        // A method handed to a runner that calls it on another thread and
        // waits (`asyncio.to_thread(client.chat_postMessage, **kw)`,
        // `loop.run_in_executor(None, client.send, m)`): that method is called
        // here, as if written `client.chat_postMessage(**kw)`.
        if let Some(passed) = self.handed_to_runner(file, n, &callee) {
            if let Some(op) =
                self.request(file, n, &passed, ctx).or_else(|| self.sdk_write(file, n, &passed, ctx))
            {
                self.ops.push((op, ctx.retry.clone()));
                return false;
            }
        }
        // A retry helper the files read do not define, known by its name
        // only when it is given code to run.
        let w = words(last_segment(&callee));
        // Or a call of a package or object named as a retry (`retryx.Do(ctx,
        // cfg, func() error {..})`, `retrier.run(fn)`).
        let qualifier = receiver(&callee);
        // The object itself, not the chain before it (`..retrieve().onErrorResume(..)`).
        let object = qualifier.rsplit(['.', ':', '>']).next().unwrap_or("").trim_end_matches(['(', ')']);
        let named_by_qualifier = words(object).iter().any(|x| {
            x.starts_with("retry")
                || x.starts_with("retrier")
                || x.starts_with("retries")
                || x.contains("backoff")
        });
        if named_by_qualifier
            || w.iter()
                .any(|x| matches!(x.as_str(), "retry" | "retries" | "retrying" | "retryable" | "retried"))
        {
            let args = self.args(file, n);
            if args.iter().any(|a| self.is_callable(file, *a)) {
                let attempts = args
                    .iter()
                    .find_map(|a| self.number(file, *a).map(|(v, _)| v))
                    .map_or(Attempts::Unknown, Attempts::Count);
                let r = Retry {
                    form: Form::Helper(last_segment(&callee).to_string()),
                    function: ctx.function.clone(),
                    path: self.path(file).to_string(),
                    line: line_of(n),
                    end_line: n.end_position().row as u32 + 1,
                    attempts,
                    jitter: None,
                    conditions: BTreeSet::new(),
                    count_at: None,
                    reads_retry_after: reads_retry_after(self.text(file, n)),
                    scope: (0, 0),
                    origin: None,
                    count_param: None,
                    count_text: None,
                    bound_sym: None,
                };
                self.retries.push(r.clone());
                self.cover_args(file, &args, ctx, &r, d);
                return true;
            }
        }
        false
    }

    /// A client-wide retry policy built at `n` (a call, or a Go composite
    /// literal), recorded for [`Walker::finish`] to attach.
    /// `defined`: the project defines a function of the callee's last name;
    /// then only a name qualified as the library's is the library's.
    fn client_policy(
        &mut self,
        file: usize,
        n: Node<'t>,
        callee: &str,
        lang: &str,
        ctx: &Ctx,
        defined: bool,
    ) -> bool {
        let data = self.data;
        let whole = self.world.files[file].file.text.as_str();
        let Some(w) = data.wrappers.iter().find(|w| {
            w.form.iter().any(|f| f == "client")
                && w.languages.iter().any(|l| l == lang)
                && w.names_callee(callee)
                && (!defined
                    || w.names.iter().any(|x| x.contains(['.', ':']) && callee.ends_with(x.as_str())))
                && w.used_in(whole)
                && (w.site.is_empty() || w.site.iter().any(|x| self.text(file, n).contains(x.as_str())))
        }) else {
            return false;
        };
        let r = self.wrapper_retry(w, file, n, n, ctx);
        let compact = |t: &str| t.chars().filter(|c| !c.is_whitespace()).collect::<String>();
        let site = compact(self.text(file, n));
        // What the policy's own call says it retries.
        let widened = w.methods_every.iter().map(|x| compact(x)).any(|x| site.contains(&x));
        // Narrowed on its own registration, not on another one in the file.
        let line_of_policy = whole.lines().nth(line_of(n).saturating_sub(1) as usize).unwrap_or("");
        let narrowed = w
            .methods_idempotent
            .iter()
            .map(|x| compact(x))
            .any(|x| site.contains(&x) || compact(line_of_policy).contains(&x));
        let package = (self.grammar(file) == Grammar::Go)
            .then(|| self.path(file).rsplit_once('/').map_or(String::new(), |(d, _)| d.to_string()));
        // Where the client is held: the line that builds it assigns it, or
        // installs it on a receiver, or registers it for a typed client.
        let line_text = whole.lines().nth(line_of(n).saturating_sub(1) as usize).unwrap_or("");
        let seeds = if w.unbound {
            Vec::new()
        } else if w.on_first_argument {
            self.args(file, n)
                .first()
                .map(|a| last_segment(self.text(file, *a).trim()).to_string())
                .filter(|a| a.len() > 1 && a.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$'))
                .into_iter()
                .collect()
        } else {
            client_seeds(line_text, callee)
        };
        self.retries.push(r.clone());
        self.clients.push(ClientPolicy {
            retry: r,
            every_method: (w.methods.as_deref() == Some("every") || widened) && !narrowed,
            bypass: w.bypass.clone(),
            package,
            seeds,
            through: w.through.clone(),
            builder: last_segment(&ctx.function).to_string(),
        });
        true
    }

    /// The type a transport method `def` (named `name`) belongs to, when it
    /// is one: a method of [`TRANSPORT_METHODS`] in a class that names a
    /// transport, adapter, interceptor or handler base (`class
    /// _Retrying(httpx.AsyncBaseTransport)`, `implements Interceptor`,
    /// `: DelegatingHandler`), or a Go `RoundTrip` method.
    fn transport_owner(&self, file: usize, def: Node<'_>, name: &str) -> Option<String> {
        let g = self.grammar(file);
        if !TRANSPORT_METHODS.iter().any(|(l, m)| *l == g.library_language() && *m == name) {
            return None;
        }
        let qual = self.qual_name(file, def);
        let owner = qual.strip_suffix(&format!(".{name}"))?.rsplit('.').next()?.to_string();
        if g == Grammar::Go {
            return Some(owner);
        }
        let mut p = def.parent();
        while let Some(x) = p {
            let k = x.kind();
            if k.contains("class") && !k.contains("body") {
                let body_at = x.child_by_field_name("body").map_or(x.end_byte(), |b| b.start_byte());
                let header = self.world.files[file].file.text.get(x.start_byte()..body_at).unwrap_or("");
                return TRANSPORT_BASES.iter().any(|b| header.contains(b)).then_some(owner);
            }
            p = x.parent();
        }
        None
    }

    /// A client's transport the project writes, built here (`t =
    /// _RetryingTransport(inner)`, `&retryTransport{next: ..}`), whose send
    /// method retries: a client-wide policy that re-sends every request of
    /// the client it carries, whatever its method (the transport sees the
    /// request, not what it does).
    fn own_transport(&mut self, file: usize, n: Node<'t>, callee: &str, ctx: &Ctx) -> bool {
        // `new RetryHandler { InnerHandler = .. }`, `&retryTransport{..}`:
        // the type's name.
        let bare = callee.trim_start_matches(['&', '*']).trim_start_matches("new ").trim();
        let bare = bare.split(['{', '(', '<', ' ']).next().unwrap_or(bare);
        let name = last_segment(bare);
        let Some(methods) = self.transports.get(name).cloned() else { return false };
        if ctx.function.starts_with(&format!("{name}.")) {
            return false;
        }
        let mut found = None;
        let mut methods_text = Vec::new();
        for (f, m) in methods {
            methods_text.push(self.text(f, m));
            let qual = self.qual_name(f, m);
            let mctx = Ctx::top(qual.clone(), 0, vec![m.id()]);
            found = self.decorator_retry(f, m, &qual);
            let mut stack = vec![(m, 0usize)];
            while found.is_none() {
                let Some((x, d)) = stack.pop() else { break };
                if d > MAX_NODE_DEPTH {
                    continue;
                }
                if self.syn(f).loops.contains(&x.kind()) {
                    found = self.loop_retry(f, x, &mctx);
                }
                let mut c = x.walk();
                for ch in x.named_children(&mut c) {
                    stack.push((ch, d + 1));
                }
            }
            if found.is_some() {
                break;
            }
        }
        let Some(r) = found else { return false };
        // A transport that retries only reads says so where it decides.
        let guarded = methods_text.iter().any(|t| READS_ONLY.iter().any(|w| t.contains(w)));
        let g = self.grammar(file);
        let whole = self.world.files[file].file.text.as_str();
        let line_text = whole.lines().nth(line_of(n).saturating_sub(1) as usize).unwrap_or("");
        let bypass: &[&str] = match g {
            Grammar::Python => &["requests", "httpx", "aiohttp", "urllib", "urllib3"],
            Grammar::Go => &["http"],
            _ => &[],
        };
        self.retries.push(r.clone());
        self.clients.push(ClientPolicy {
            retry: r,
            every_method: !guarded,
            bypass: bypass.iter().map(|b| b.to_string()).collect(),
            package: (g == Grammar::Go)
                .then(|| self.path(file).rsplit_once('/').map_or(String::new(), |(d, _)| d.to_string())),
            seeds: client_seeds(line_text, callee),
            through: Vec::new(),
            builder: last_segment(&ctx.function).to_string(),
        });
        true
    }

    /// Walks a retry's arguments: the code it is given under the retry,
    /// names of definitions followed into them, the rest as it is.
    fn cover_args(&mut self, file: usize, args: &[Node<'t>], ctx: &Ctx, r: &Retry, d: usize) {
        let inner = ctx.with_retry(r.clone());
        for a in args {
            if self.is_callable(file, *a) {
                self.walk(file, *a, &inner, d + 1);
            } else if self.names_def(file, *a) {
                let name = self.text(file, *a).trim_start_matches(['&', '$', ':']).to_string();
                for (f, def) in self.resolve(file, &name) {
                    if ctx.visiting.contains(&def.id()) || !self.first_expansion(def, Some(r)) {
                        continue;
                    }
                    let mut visiting = inner.visiting.clone();
                    visiting.push(def.id());
                    let c2 = Ctx {
                        function: self.qual_name(f, def),
                        depth: ctx.depth + 1,
                        visiting,
                        ..inner.clone()
                    };
                    self.walk_children(f, def, &c2, 0);
                }
            } else {
                self.walk(file, *a, ctx, d + 1);
            }
        }
    }

    /// Whether a definition is followed under this retry for the first
    /// time: what it performs under one retry is the same at every call,
    /// so it is read once (the walk stays linear in the code).
    fn first_expansion(&mut self, def: Node<'_>, r: Option<&Retry>) -> bool {
        let key = (def.id(), r.map_or((String::new(), 0), |r| (r.path.clone(), r.line)));
        self.expanded.insert(key)
    }

    /// Whether an argument names a definition of the files read.
    fn names_def(&self, file: usize, n: Node<'_>) -> bool {
        let t = self.text(file, n).trim_start_matches(['&', '$', ':']);
        (t.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.') && !t.is_empty())
            && !self.resolve(file, t).is_empty()
    }

    /// The definitions a callee names: a bare name or `self.`/`this.`
    /// method in the same file first, then a bare name or a qualified name
    /// found once in the other files.
    /// A Go method's call on its own receiver (`a.do(req)` in `func (a
    /// *API) Start`) is a call of the same type's method, whatever the
    /// receiver is named: said as `self.do` for [`Walker::resolve`].
    fn own_receiver_call(&self, file: usize, n: Node<'_>, callee: &str) -> String {
        if self.grammar(file) != Grammar::Go {
            return callee.to_string();
        }
        let recv = receiver(callee);
        if recv.is_empty() || recv.contains(['.', '(']) {
            return callee.to_string();
        }
        let mut p = n.parent();
        while let Some(x) = p {
            if x.kind() == "method_declaration" {
                let named = x
                    .child_by_field_name("receiver")
                    .and_then(|l| l.named_child(0))
                    .and_then(|d| d.child_by_field_name("name"))
                    .is_some_and(|id| self.text(file, id) == recv);
                if named {
                    return format!("self.{}", last_segment(callee));
                }
                break;
            }
            p = x.parent();
        }
        callee.to_string()
    }

    fn resolve(&self, file: usize, callee: &str) -> Vec<(usize, Node<'t>)> {
        let last = last_segment(callee).trim_start_matches('$');
        let Some(defs) = self.defs.get(last) else { return Vec::new() };
        let recv = receiver(callee).trim_start_matches('$');
        let own = recv.is_empty()
            || matches!(recv, "self" | "this" | "cls" | "@" | "this-" | "static" | "self:" | "static:");
        let same: Vec<_> = defs.iter().filter(|(f, _)| *f == file).copied().collect();
        if own {
            if !same.is_empty() {
                return same;
            }
            return if recv.is_empty() { defs.clone() } else { Vec::new() };
        }
        // `obj.name(..)`: a definition named so in the files read, when
        // the name is specific enough to be that one.
        const GENERIC: &[&str] = &[
            "get", "post", "put", "patch", "delete", "send", "run", "call", "execute", "request", "do", "Do",
            "apply", "invoke", "init", "__init__", "new", "create", "update", "start", "close", "open",
            "read", "write", "handle", "process", "fetch", "load", "save", "main", "then", "catch",
        ];
        if GENERIC.contains(&last) || last.len() < 4 || defs.len() > 2 {
            return Vec::new();
        }
        defs.clone()
    }

    // ---- operations ----------------------------------------------------

    /// An HTTP request: a client call named by its method, or a sender
    /// given its method.
    fn request(&self, file: usize, n: Node<'t>, callee: &str, ctx: &Ctx) -> Option<Operation> {
        let last = last_segment(callee);
        let recv = receiver(callee);
        let lower = last.to_ascii_lowercase();
        let mut word = lower.as_str();
        for suffix in ["async", "asjson", "forobject", "forentity", "forlocation", "forbody", "_json", "json"]
        {
            word = word.strip_suffix(suffix).unwrap_or(word);
        }
        let args = self.args(file, n);
        let data = self.data;
        // A write-named call (`post`, `patch`) whose receiver names no client
        // and whose first argument is no URL or path (`handler.post(task)`):
        // a request by its name alone.
        let mut by_name_only = false;
        // The method is a value the caller hands the sender.
        let mut handed_method = false;
        let method = if data.http_methods.write.iter().any(|m| m == word)
            || data.http_methods.idempotent.iter().any(|m| m == word)
        {
            // A route being declared (`app.post("/x", handler)`) is given
            // code; a client call is given data.
            const ROUTERS: &[&str] = &[
                "app",
                "router",
                "route",
                "routes",
                "routing",
                "server",
                "mux",
                "r",
                "e",
                "g",
                "group",
                "engine",
                "fastify",
                "hono",
                "api",
                "blueprint",
                "bp",
            ];
            let declares_route = args.iter().any(|a| self.is_callable(file, *a))
                && ROUTERS
                    .contains(&last_segment(recv).trim_start_matches('$').to_ascii_lowercase().as_str());
            if recv.is_empty() || declares_route {
                return None;
            }
            if data.http_methods.idempotent.iter().any(|m| m == word) {
                let r = last_segment(recv).trim_start_matches('$').to_ascii_lowercase();
                if data.local_receivers.iter().any(|l| *l == r || *l == recv.to_ascii_lowercase())
                    || local_words(&r)
                {
                    return None;
                }
                // `get`, `put` and `delete` are also every map's: a request
                // has a client for a receiver or is given a URL or a context.
                if !self.looks_remote(file, recv, &args) {
                    return None;
                }
            } else if !self.looks_remote(file, recv, &args) {
                by_name_only = true;
            }
            word.to_ascii_uppercase()
        } else if let Some(s) = data.senders.iter().find(|s| s.names.iter().any(|x| x == last)) {
            // Ruby's `f.request :json` configures a middleware; a request
            // names its method (`request(:post, url)`).
            if let Some(sym) = args.first().map(|a| self.text(file, *a)).filter(|t| t.starts_with(':')) {
                let verb = sym.trim_start_matches(':').to_ascii_lowercase();
                if !data.http_methods.write.contains(&verb) && !data.http_methods.idempotent.contains(&verb) {
                    return None;
                }
            }
            if !s.receiver.is_empty() {
                let r = recv.to_ascii_lowercase();
                // A receiver the file declares with a client type
                // (`plain *http.Client`) is a client whatever it is called.
                if !s.receiver.iter().any(|w| r.contains(w.as_str())) && !self.client_name(file, recv) {
                    return None;
                }
            }
            let own = self.method_in_text(self.text(file, n));
            let in_fn = || self.enclosing_text(file, n).and_then(|t| self.method_in_text(t));
            // `session.request(method, url)`: the method is a value the
            // caller gives, not the sender's default.
            let method_value = args.iter().any(|a| {
                let t = self.text(file, *a).to_ascii_lowercase();
                let value =
                    t.rsplit_once('=').map_or(t.as_str(), |(k, v)| if k.trim() == "method" { v } else { "" });
                let value = value.trim().trim_start_matches('$');
                !value.starts_with(['"', '\'', '`', ':'])
                    && words(value).iter().any(|w| w == "method" || w == "verb")
            });
            handed_method = method_value;
            match own.or_else(in_fn) {
                Some(m) => m,
                None if method_value => String::new(),
                None if s.default == "GET" && !self.text(file, n).contains("data=") => "GET".into(),
                None => String::new(),
            }
        } else {
            self.request_spec(file, last, &args)?
        };
        let method = if method.is_empty() { ctx.call_method.clone().unwrap_or_default() } else { method };
        let m = if method.is_empty() {
            Method::Unknown
        } else if let Some(why) =
            method.eq_ignore_ascii_case("POST").then(|| self.post_reads(file, n, &args)).flatten()
        {
            // A POST the request itself shows to be a read: its written
            // endpoint, or the protocol method its body names.
            Method::Idempotent(format!("POST (a read: {why})"))
        } else if data.http_methods.write.iter().any(|w| w.eq_ignore_ascii_case(&method)) {
            Method::Write(method)
        } else {
            Method::Idempotent(method)
        };
        let mut op = self.operation(file, n, callee, m, ctx);
        op.named_only = by_name_only;
        op.any_method = handed_method;
        Some(op)
    }

    /// A call of a function the files read do not define, handed an HTTP
    /// method and a URL or path (`connection.perform_request(method, url,
    /// body)`, `transport.send("POST", "/v1/items", b)`): the request says
    /// what it is, whatever its sender is called. The method is the
    /// literal given, or the one the enclosing function's callers pass.
    /// Calls that build a request without sending it (`http.NewRequest`,
    /// `build_request`) and calls that describe one are not requests.
    fn request_by_shape(&self, file: usize, n: Node<'t>, callee: &str, ctx: &Ctx) -> Option<Operation> {
        const BUILDS: &[&str] = &[
            "new", "build", "builder", "prepare", "create", "sign", "format", "parse", "cache", "key", "hash",
        ];
        // Text made from a request's parts is no request (`fmt.Sprintf("%s
        // %s", method, url)`, `String.format(..)`, `"..".join(..)`).
        const FORMATS: &[&str] = &[
            "sprintf", "printf", "fprintf", "sprint", "print", "println", "errorf", "fmt", "str", "string",
            "strings", "join", "concat", "message", "msg", "wrap", "wrapf", "label", "labels", "name",
        ];
        let last = last_segment(callee);
        let w = words(last);
        let recv = words(receiver(callee));
        let says = |x: &String| {
            DESCRIBES.contains(&x.as_str()) || BUILDS.contains(&x.as_str()) || FORMATS.contains(&x.as_str())
        };
        if w.is_empty() || w.iter().any(says) || recv.iter().any(|x| FORMATS.contains(&x.as_str())) {
            return None;
        }
        // A constructor makes a request object (`new BoxJSONRequest(api,
        // url, "POST")`, `Request(method, url)` in the languages whose
        // classes are capitalised and methods are not); sending it is
        // another call.
        let class_case = matches!(
            self.grammar(file),
            Grammar::Python
                | Grammar::JavaScript
                | Grammar::TypeScript
                | Grammar::Tsx
                | Grammar::Java
                | Grammar::Kotlin
        ) && last.starts_with(|c: char| c.is_ascii_uppercase());
        if class_case || matches!(n.kind(), "object_creation_expression" | "new_expression") {
            return None;
        }
        let args = self.args(file, n);
        let mut literal = None;
        let mut passed = false;
        let mut url = false;
        for a in &args {
            let t = self.text(file, *a).trim();
            if let Some(m) = method_literal(t) {
                literal.get_or_insert(m);
                continue;
            }
            // A keyword argument's value (`method=method`, `url: u`).
            let (key, value) = t
                .split_once(['=', ':'])
                .filter(|(k, _)| k.trim().chars().all(|c| c.is_alphanumeric() || c == '_'))
                .map_or(("", t), |(k, v)| (k.trim(), v.trim()));
            let value = value.trim_start_matches(['$', '&', '*']);
            let quoted = value.starts_with(['"', '\'', '`']);
            let inner = value.trim_start_matches(['"', '\'', '`', 'f']);
            let named: Vec<String> =
                if quoted { Vec::new() } else { words(value.rsplit(['.', '>']).next().unwrap_or(value)) };
            let key_words = words(key);
            if !quoted
                && (named.last().is_some_and(|x| x == "method" || x == "verb")
                    || key_words.iter().any(|x| x == "method" || x == "verb"))
            {
                passed = true;
            } else if key_words
                .iter()
                .chain(named.iter())
                .any(|x| matches!(x.as_str(), "url" | "uri" | "endpoint" | "path" | "route" | "href"))
                || (quoted && (inner.starts_with('/') || inner.starts_with("http")))
            {
                url = true;
            }
        }
        if !url || (literal.is_none() && !passed) {
            return None;
        }
        let method = literal.or_else(|| ctx.call_method.clone()).unwrap_or_default();
        let m = if method.is_empty() {
            Method::Unknown
        } else if self.data.http_methods.write.iter().any(|x| x.eq_ignore_ascii_case(&method)) {
            Method::Write(method)
        } else {
            Method::Idempotent(method)
        };
        let mut op = self.operation(file, n, callee, m, ctx);
        op.any_method = passed;
        Some(op)
    }

    /// The method of a call given the request itself as data: an object
    /// or keyword arguments that name both a literal HTTP method and a URL
    /// (`secureRequest({ method: 'POST', url, data })`,
    /// `call(method="POST", url=u)`). The request says what it is, whatever
    /// the project named the function that sends it. Logging and event
    /// calls that describe a request are not one.
    fn request_spec(&self, file: usize, last: &str, args: &[Node<'t>]) -> Option<String> {
        static METHOD: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r#"(?i)\bmethod['"]?\s*(?::|=>|=)\s*['"](post|patch|put|get|delete|head)['"]"#)
                .unwrap_or_else(|e| panic!("constant pattern: {e}"))
        });
        static URL: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(
                r#"(?i)(?:^|[{,(\s])['"]?(?:url|uri|endpoint|baseurl|base_url)['"]?\s*(?:[:=,}]|=>|$)"#,
            )
            .unwrap_or_else(|e| panic!("constant pattern: {e}"))
        });
        let w = words(last);
        if w.iter().any(|x| DESCRIBES.contains(&x.as_str())) {
            return None;
        }
        let whole: String = args.iter().map(|a| self.text(file, *a)).collect::<Vec<_>>().join(",");
        let methods: BTreeSet<String> = METHOD
            .captures_iter(&whole)
            .filter_map(|c| c.get(1))
            .map(|m| m.as_str().to_ascii_uppercase())
            .collect();
        if methods.len() != 1 || !URL.is_match(&whole) {
            return None;
        }
        methods.into_iter().next()
    }

    /// Why a POST reads, from the request alone ([`crate::analyze::reads`]):
    /// its first argument is a written endpoint that ends in a read
    /// segment, or its body (the call, else the function that builds it)
    /// names only protocol reads. A name the code chooses is not read here.
    fn post_reads(&self, file: usize, n: Node<'t>, args: &[Node<'t>]) -> Option<String> {
        let endpoint = args.first().map(|a| self.text(file, *a).trim()).and_then(|t| {
            let q = t
                .trim_start_matches(['f', 'r', 'b'])
                .chars()
                .next()
                .filter(|c| matches!(c, '"' | '\'' | '`'))?;
            let inner = t.trim_start_matches(['f', 'r', 'b']).strip_prefix(q)?;
            Some(inner[..inner.find(q)?].to_string())
        });
        if let Some(why) = endpoint.as_deref().and_then(crate::analyze::reads::why_read) {
            return Some(why);
        }
        crate::analyze::reads::why_read_body(self.text(file, n))
            .or_else(|| self.enclosing_text(file, n).and_then(crate::analyze::reads::why_read_body))
    }

    /// Whether a call named like an HTTP method goes to another process:
    /// its receiver names a client, or its first argument is a URL, a path
    /// or a context.
    fn looks_remote(&self, file: usize, recv: &str, args: &[Node<'t>]) -> bool {
        const CLIENTS: &[&str] = &[
            "client",
            "clients",
            "clientset",
            "http",
            "https",
            "session",
            "api",
            "rest",
            "requests",
            "httpx",
            "axios",
            "got",
            "ky",
            "conn",
            "connection",
            "svc",
            "service",
            "remote",
            "sdk",
            "resource",
            "resources",
            "faraday",
            "httparty",
            "guzzle",
            "webclient",
            "resttemplate",
            "okhttp",
            "request",
            "req",
            "net",
            "urllib",
            "urllib3",
            "aiohttp",
            "superagent",
            "needle",
            "restclient",
            "typhoeus",
            "excon",
            "curl",
            "browser",
            "page",
            "agent",
            "transport",
            "stub",
            "grpc",
            "v1",
            "apps",
        ];
        if recv.split(['.', '-', '>', ':', '(', ')']).flat_map(words).any(|w| CLIENTS.contains(&w.as_str())) {
            return true;
        }
        // A name the file declares or builds as an HTTP client, whatever it
        // is called (`hc *http.Client`, `self._s = requests.Session()`).
        if self.client_name(file, recv) {
            return true;
        }
        let Some(first) = args.first() else { return false };
        let t = self.text(file, *first).trim().to_ascii_lowercase();
        let unq = t.trim_start_matches(['"', '\'', '`', 'f', 'r']).trim_start_matches(['"', '\'', '`']);
        unq.starts_with("http")
            || unq.starts_with('/')
            || unq.contains("://")
            || unq.starts_with("${")
            || matches!(t.as_str(), "ctx" | "context" | "c.request.context()")
            || t.starts_with("ctx.")
            || t.starts_with("context.")
            || words(&t)
                .iter()
                .any(|w| matches!(w.as_str(), "url" | "uri" | "endpoint" | "path" | "route" | "href"))
    }

    /// The method `n`, a call of a runner that calls what it is given and
    /// waits for it, is handed (`asyncio.to_thread(f, ..)`,
    /// `loop.run_in_executor(None, f, ..)`, `anyio.to_thread.run_sync(f, ..)`,
    /// `sync_to_async(f)`): a reference to a method on a receiver, not a call.
    fn handed_to_runner(&self, file: usize, n: Node<'t>, callee: &str) -> Option<String> {
        let at = match last_segment(callee) {
            "to_thread" | "run_sync" | "sync_to_async" | "database_sync_to_async" => 0,
            "run_in_executor" => 1,
            _ => return None,
        };
        let args = self.args(file, n);
        let a = args.get(at)?;
        let text: String = self.text(file, *a).chars().filter(|c| !c.is_whitespace()).collect();
        let reference = !text.is_empty()
            && text.contains('.')
            && text.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.');
        reference.then_some(text)
    }

    /// The names a file declares with an HTTP client's type or assigns a
    /// new HTTP client to, read once per file.
    /// Whether `recv` (or its last segment) is a name the file declares or
    /// builds as a client, or imports from a service's SDK.
    fn client_name(&self, file: usize, recv: &str) -> bool {
        let plain = recv.trim_start_matches(['$', '@']);
        let root = plain.split(['.', ':', '-', '>']).next().unwrap_or(plain);
        let last = last_segment(plain).trim_start_matches('_');
        let names = self.typed_clients(file);
        !last.is_empty()
            && names.iter().any(|n| {
                let n = n.trim_start_matches('_');
                n == last || n == plain || n == root
            })
    }

    fn typed_clients(&self, file: usize) -> std::cell::Ref<'_, HashSet<String>> {
        if !self.typed.borrow().contains_key(&file) {
            let text = &self.world.files[file].file.text;
            let mut names = typed_client_names(text);
            names.extend(service_imports(text, &self.data.remote_receivers));
            self.typed.borrow_mut().insert(file, names);
        }
        std::cell::Ref::map(self.typed.borrow(), |m| m.get(&file).unwrap_or(&EMPTY_NAMES))
    }

    fn operation(&self, file: usize, n: Node<'_>, callee: &str, method: Method, ctx: &Ctx) -> Operation {
        let keyed = {
            let own = self.text(file, n).to_ascii_lowercase();
            let around = self.enclosing_text(file, n).unwrap_or("").to_ascii_lowercase();
            self.data.idempotency_key.iter().any(|k| own.contains(k.as_str()) || around.contains(k.as_str()))
        };
        let (timeout, timeout_at) = self.timeout_of(file, n);
        Operation {
            function: ctx.function.clone(),
            callee: callee.to_string(),
            method,
            path: self.path(file).to_string(),
            line: line_of(n),
            keyed,
            timeout,
            timeout_at,
            computes: false,
            named_only: false,
            any_method: false,
            target: target_of(self.text(file, n)),
        }
    }

    /// A call's timeout: its own timeout option, else the one timeout the
    /// function around it sets (a client built there).
    fn timeout_of(&self, file: usize, n: Node<'t>) -> (Option<f64>, Option<(String, u32)>) {
        let is_timeout = |k: &str| {
            let w = words(k);
            w.iter().any(|x| x == "timeout")
                && w.last().is_some_and(|x| {
                    ["timeout", "ms", "millis", "seconds", "secs", "sec", "s"].contains(&x.as_str())
                })
                && !w.iter().any(|x| {
                    ["connect", "pool", "idle", "keepalive", "shutdown", "grace", "lock", "cache"]
                        .contains(&x.as_str())
                })
        };
        let syn = self.syn(file);
        let at_of = |v: Node<'_>, trail: Option<(String, u32)>| {
            trail.or(Some((self.path(file).to_string(), line_of(v))))
        };
        // An option or assignment named as a timeout, or a setter of one
        // (`setReadTimeout(..)`, `context.WithTimeout(ctx, ..)`,
        // `AbortSignal.timeout(..)`), inside `node`.
        let read = |node: Node<'t>| -> Option<(f64, Option<(String, u32)>)> {
            for (k, v) in self.options(file, node) {
                if is_timeout(&k) {
                    return self.number(file, v).map(|(x, trail)| (x, at_of(v, trail)));
                }
            }
            let mut stack = vec![(node, 0usize)];
            while let Some((x, d)) = stack.pop() {
                if d > 40 {
                    continue;
                }
                if syn.is_call(x.kind()) {
                    let c = self.callee(file, x);
                    // A timer that only resumes or schedules work
                    // (`setTimeout(resolve, 0)`) bounds no call.
                    if is_timeout(last_segment(&c)) && self.timer_bounds_a_call(file, x, &c) {
                        if let Some((v, trail, a)) = self
                            .args(file, x)
                            .iter()
                            .find_map(|a| self.number(file, *a).map(|(v, t)| (v, t, *a)))
                        {
                            return Some((v, at_of(a, trail)));
                        }
                    }
                }
                if matches!(x.kind(), "assignment" | "assignment_expression" | "assignment_statement") {
                    let left = x.child_by_field_name("left").map(|l| self.text(file, l)).unwrap_or("");
                    if is_timeout(last_segment(left.trim())) {
                        if let Some(v) = x.child_by_field_name("right") {
                            if let Some((val, trail)) = self.number(file, v) {
                                return Some((val, at_of(v, trail)));
                            }
                        }
                    }
                }
                let mut c = x.walk();
                stack.extend(x.named_children(&mut c).map(|ch| (ch, d + 1)));
            }
            None
        };
        if let Some((v, at)) = read(n) {
            return (Some(v), at);
        }
        let mut p = n.parent();
        while let Some(x) = p {
            if syn.is_function(x.kind()) {
                if let Some((v, at)) = read(x) {
                    return (Some(v), at);
                }
                break;
            }
            p = x.parent();
        }
        // A client bound at file level (`var httpClient = &http.Client{Timeout: ..}`),
        // else the file's one timeout (a client built in the constructor).
        let callee = self.callee(file, n);
        let first = callee
            .trim_start_matches('$')
            .split(['.', '-', ':'])
            .find(|s| !s.is_empty() && *s != "self" && *s != "this");
        if let Some(name) = first {
            let ix = &self.world.files[file];
            if let Some(d) = ix.defs.get(name).and_then(|ds| ds.iter().rev().find(|d| d.scope.is_none())) {
                if let Some((v, at)) = read(d.value) {
                    return (Some(v), at);
                }
            }
        }
        // Python and JavaScript pass timeouts per call; a file-wide one
        // there is most often a retry library's own.
        if matches!(
            self.grammar(file),
            Grammar::Python | Grammar::JavaScript | Grammar::TypeScript | Grammar::Tsx
        ) {
            return (None, None);
        }
        if let Some(r) = self.file_timeouts.borrow().get(&file) {
            return r.clone();
        }
        let r = match read(self.world.files[file].file.tree.root_node()) {
            Some((v, at)) => (Some(v), at),
            None => (None, None),
        };
        self.file_timeouts.borrow_mut().insert(file, r.clone());
        r
    }

    /// Whether a timer call bounds a call: any timeout setter does, but a
    /// JavaScript `setTimeout` does only when what it runs gives up on
    /// something (`controller.abort()`, `reject(..)`), since the same call
    /// is how a sleep or a yield is written.
    fn timer_bounds_a_call(&self, file: usize, call: Node<'_>, callee: &str) -> bool {
        if last_segment(callee) != "setTimeout" {
            return true;
        }
        self.args(file, call).first().is_some_and(|cb| {
            let t = self.text(file, *cb).to_ascii_lowercase();
            ["abort", "reject", "cancel", "destroy", "kill", "timeout", "throw"].iter().any(|w| t.contains(w))
        })
    }

    /// The text of the definition around `n`.
    fn enclosing_text(&self, file: usize, n: Node<'_>) -> Option<&'w str> {
        self.enclosing_function(file, n).map(|f| self.text(file, f))
    }

    /// The one HTTP method a piece of code names, if it names one.
    fn method_in_text(&self, text: &str) -> Option<String> {
        static FORMS: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r#"(?i:Method(?:\.|::)?)(Post|Patch|Put|Get|Delete|Head)\b|Net::HTTP::(Post|Patch|Put|Get|Delete)\b|\.(POST|PATCH|PUT|GET|DELETE)\s*\(|(?i:method)['"]?\s*(?:[:=]|=>)\s*['"](?i:(post|patch|put|get|delete|head))['"]|NewRequest(?:WithContext)?\(\s*(?:\w+\s*,\s*)?"(\w+)"|^\s*\(?\s*['"](?i:(post|patch|put|get|delete|head))['"]|\.(post|patch)\s*\("#)
                .unwrap_or_else(|e| panic!("constant pattern: {e}"))
        });
        let mut found: BTreeSet<String> = BTreeSet::new();
        for c in FORMS.captures_iter(text) {
            if let Some(m) = c.iter().skip(1).flatten().next() {
                found.insert(m.as_str().to_ascii_uppercase());
            }
        }
        // A literal first argument (`request("POST", ..)`).
        if found.len() == 1 {
            return found.into_iter().next();
        }
        if found.is_empty() {
            return None;
        }
        // Several methods in one function: the call's own is not known.
        None
    }

    /// An SDK or RPC call whose verb writes (`client.orders.create(..)`).
    fn sdk_write(&self, file: usize, n: Node<'t>, callee: &str, ctx: &Ctx) -> Option<Operation> {
        let last = last_segment(callee);
        let recv = receiver(callee);
        if recv.is_empty() {
            return None;
        }
        // A service object named for what it does, run by a generic method
        // (`Invoices::CreateService.call(..)`, `Payments::Create.perform_now`):
        // its name's first word is the verb.
        let service = if matches!(last, "call" | "call!" | "perform" | "perform_now") {
            let seg = recv.rsplit(['.', ':']).next().unwrap_or(recv);
            seg.starts_with(|c: char| c.is_ascii_uppercase()).then_some(seg)
        } else {
            None
        };
        if constructs_a_value(self.grammar(file), last) || value_type_factory(recv) {
            return None;
        }
        let mut w = words(service.unwrap_or(last));
        let data = self.data;
        let is_verb = |w: &[String]| {
            let first = w.first()?;
            data.write_verbs.iter().find(|v| {
                v.as_str() == first.as_str() || (v.contains('_') && w.join("_").starts_with(v.as_str()))
            })
        };
        // `client.chat_postMessage`, `client.files_upload`: an API's
        // namespace, then the verb, on a receiver that names a client.
        if is_verb(&w).is_none()
            && service.is_none()
            && last.contains('_')
            && w.len() > 1
            && is_verb(&w[1..]).is_some()
            && recv
                .split(['.', '-', '>', ':'])
                .flat_map(words)
                .any(|x| matches!(x.as_str(), "client" | "api" | "sdk"))
        {
            w.remove(0);
        }
        let verb = is_verb(&w)?;
        let r = recv.to_ascii_lowercase();
        let r_last = last_segment(&r).trim_start_matches('$').to_string();
        if data.local_receivers.iter().any(|l| *l == r_last || *l == r)
            || data.stdlib_receivers.iter().any(|l| *l == r_last || *l == r)
            || local_words(&r_last)
        {
            return None;
        }
        // A receiver the function itself built as a collection
        // (`ids := NewIDSet()`, `msgs = []`, `seen = new HashSet<>()`): its
        // `insert`/`add`/`push` change memory, not a service.
        if self.enclosing_text(file, n).is_some_and(|t| built_as_collection(t, recv)) {
            return None;
        }
        // `items.insert(0, x)`: a position first is a list's insert.
        if verb == "insert"
            && self.args(file, n).first().is_some_and(|a| {
                let t = self.text(file, *a).trim();
                !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '-')
            })
        {
            return None;
        }
        // `create_task_group`, `insertNode`: a verb that makes or places a
        // thing, followed by an in-process thing. `send_message` and
        // `publish_event` still send, whatever they send.
        if matches!(verb.as_str(), "create" | "insert" | "register")
            && w.get(1).is_some_and(|second| data.local_objects.iter().any(|o| o == second))
        {
            return None;
        }
        let args = self.args(file, n);
        if args.iter().any(|a| self.is_callable(file, *a)) && verb != "execute" && verb != "invoke" {
            return None;
        }
        if verb == "execute" {
            let first_arg =
                args.first().map(|a| self.text(file, *a).to_ascii_uppercase()).unwrap_or_default();
            let sql = first_arg.trim_start_matches(['"', '\'', '`', 'F', 'R', '(']).trim_start();
            if ["SELECT", "WITH", "SHOW", "EXPLAIN", "DESCRIBE"].iter().any(|s| sql.starts_with(s)) {
                return None;
            }
        }
        let mut op = self.operation(file, n, callee, Method::Write(verb.clone()), ctx);
        let recv_words: Vec<String> = recv.split(['.', '-', '>', ':']).flat_map(words).collect();
        op.named_only = !self.leaves_process(file, recv, &recv_words);
        let compact = recv.to_ascii_lowercase().replace(['.', '_'], "");
        op.computes = data
            .computations
            .iter()
            .any(|c| recv_words.iter().any(|w| w == c) || compact.ends_with(c.as_str()));
        Some(op)
    }

    /// Whether a receiver shows that a call on it leaves the process: one
    /// of its words names a client, connection, database, queue or known
    /// service (`remote_receivers`), or it is a [`Walker::client_name`].
    fn leaves_process(&self, file: usize, recv: &str, recv_words: &[String]) -> bool {
        if recv_words.iter().any(|w| self.data.remote_receivers.iter().any(|r| r == w)) {
            return true;
        }
        self.client_name(file, recv)
    }

    /// A read sent through a client or SDK: a read verb first
    /// (`getUpdates`, `list_objects`, `GetOrder`) on a receiver that names
    /// a client, an API or a service (`bot.api`, `s3_client`, `stub`).
    fn sdk_read(&self, file: usize, n: Node<'t>, callee: &str, ctx: &Ctx) -> Option<Operation> {
        const REMOTE: &[&str] =
            &["client", "clients", "api", "sdk", "stub", "service", "svc", "rpc", "grpc", "remote"];
        let recv = receiver(callee);
        let last = last_segment(callee);
        let w = words(last);
        let verb = w.first()?;
        if !self.data.read_verbs.iter().any(|v| v == verb) || w.len() < 2 && verb != "get" && verb != "list" {
            return None;
        }
        let r = recv.to_ascii_lowercase();
        let r_last = last_segment(&r).trim_start_matches('$').to_string();
        if self.data.local_receivers.iter().any(|l| *l == r_last || *l == r)
            || self.data.stdlib_receivers.iter().any(|l| *l == r_last || *l == r)
        {
            return None;
        }
        let names_remote =
            recv.split(['.', '-', '>', ':', '(', ')']).flat_map(words).any(|x| REMOTE.contains(&x.as_str()));
        if !names_remote || self.args(file, n).iter().any(|a| self.is_callable(file, *a)) {
            return None;
        }
        Some(self.operation(file, n, callee, Method::Idempotent(verb.to_ascii_uppercase()), ctx))
    }

    /// A client chain that retries the request it ends in
    /// (`Http::retry(3, 100)->post(..)`).
    fn chain_retry(&self, file: usize, n: Node<'t>, callee: &str, ctx: &Ctx) -> Option<Retry> {
        let recv = receiver(callee);
        if !recv.contains("retry(") && !recv.contains("Retry(") {
            return None;
        }
        // The retry call inside the receiver: its first number is the count.
        let mut stack = vec![n];
        let mut count = None;
        while let Some(x) = stack.pop() {
            if self.syn(file).is_call(x.kind()) && x.id() != n.id() {
                let c = self.callee(file, x);
                if last_segment(&c).eq_ignore_ascii_case("retry") {
                    count = self.args(file, x).iter().find_map(|a| self.number(file, *a));
                    break;
                }
            }
            let mut c = x.walk();
            for ch in x.named_children(&mut c) {
                if ch.start_byte() < n.start_byte() + recv.len() + 4 {
                    stack.push(ch);
                }
            }
        }
        Some(Retry {
            form: Form::Library("client chain".into()),
            function: ctx.function.clone(),
            path: self.path(file).to_string(),
            line: line_of(n),
            end_line: line_of(n),
            attempts: count.map_or(Attempts::Bounded, |(v, _)| Attempts::Count(v)),
            jitter: Some(false),
            conditions: BTreeSet::from([Condition::Any]),
            count_at: None,
            reads_retry_after: false,
            scope: (0, 0),
            origin: None,
            count_param: None,
            count_text: None,
            bound_sym: None,
        })
    }

    // ---- retries -------------------------------------------------------

    /// A reactive retry operator that re-subscribes to the chain before it
    /// (Reactor `retry`/`retryWhen`, RxJS `pipe(retry(..))`), in the JVM
    /// languages and JavaScript/TypeScript: the chain's requests are retried.
    /// Reactor's `retry()` and RxJS's `retry()` with no count never stop;
    /// `Retry.backoff` jitters by default (factor 0.5).
    fn chain_after_retry(&self, file: usize, n: Node<'t>, callee: &str, ctx: &Ctx) -> Option<Retry> {
        let lang = self.grammar(file).library_language();
        if !matches!(lang, "java" | "kotlin" | "javascript" | "typescript") {
            return None;
        }
        let last = last_segment(callee);
        let recv = receiver(callee);
        if !recv.contains('(') {
            return None;
        }
        let args = self.args(file, n);
        let operator = match last {
            "retry" | "retryWhen" | "retryBackoff" => n,
            "pipe" => *args.iter().find(|a| {
                self.syn(file).is_call(a.kind())
                    && matches!(last_segment(&self.callee(file, **a)), "retry" | "retryWhen")
            })?,
            _ => return None,
        };
        let text = self.text(file, operator);
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let op_args = self.args(file, operator);
        // A builder's setter of a field called `retry` (`Flow.builder()
        // ..retry(flow.retry)..build()`, `.retry(other.getRetry())`) copies
        // a setting; it re-subscribes to nothing.
        let chain: String = recv.chars().filter(|c| !c.is_whitespace()).collect();
        let copies_setting = op_args.iter().any(|a| {
            let t = self.text(file, *a).trim().trim_end_matches("()");
            t.contains('.') && words(last_segment(t)).iter().any(|w| w == "retry")
        });
        if copies_setting || chain.contains(".builder()") || chain.contains(".toBuilder()") {
            return None;
        }
        // The count: the operator's own number, or the first number of the
        // spec it is given (`Retry.backoff(3, ..)`, `{count: 3}`): retries.
        let mut count = op_args.iter().find_map(|a| self.number(file, *a));
        // RxJS's config object: its `count` (none: forever).
        let config = op_args.iter().find(|a| self.text(file, **a).trim_start().starts_with('{'));
        let mut forever = false;
        if let Some(cfg) = config {
            let opts = self.options(file, *cfg);
            match opts.iter().find(|(k, _)| k == "count") {
                Some((_, v)) => count = self.number(file, *v),
                None => forever = true,
            }
        }
        if count.is_none() && !forever {
            let mut stack: Vec<Node<'t>> = op_args.clone();
            while let Some(x) = stack.pop() {
                if let Some(v) = self.number(file, x) {
                    count = Some(v);
                    break;
                }
                let mut c = x.walk();
                let kids: Vec<Node<'t>> = x.named_children(&mut c).collect();
                stack.extend(kids.into_iter().rev());
            }
        }
        // Mutiny's `retry()` takes no count: the calls chained after it bound
        // it (`.atMost(10)`, `.expireIn(..)`, `.until(..)`) or do not
        // (`.indefinitely()`).
        let mut after_bound = None;
        // Mutiny's `withBackOff(..)` jitters unless told `withJitter(0)`.
        let mut after_jitter = false;
        if op_args.is_empty() {
            let mut top = operator;
            while let Some(p) = top.parent() {
                if p.end_byte() > top.end_byte()
                    && (self.syn(file).is_call(p.kind())
                        || p.kind().contains("access")
                        || p.kind().contains("member")
                        || p.kind().contains("navigation")
                        || p.kind().contains("selector"))
                {
                    top = p;
                } else {
                    break;
                }
            }
            let whole = self.world.files[file].file.text.as_str();
            let tail: String = whole
                .get(operator.end_byte()..top.end_byte())
                .unwrap_or("")
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            after_jitter = tail.contains(".withBackOff(")
                && !tail.contains(".withJitter(0)")
                && !tail.contains(".withJitter(0.0)");
            if tail.contains(".indefinitely()") {
                after_bound = Some(Attempts::Unbounded);
            } else if let Some(i) = tail.find(".atMost(") {
                let inner = &tail[i + ".atMost(".len()..];
                let digits: String = inner.chars().take_while(|c| c.is_ascii_digit()).collect();
                after_bound = Some(match digits.parse::<f64>() {
                    Ok(v) if inner[digits.len()..].starts_with(')') => Attempts::Count(v + 1.0),
                    _ => Attempts::Bounded,
                });
            } else if [".expireIn(", ".expireAt(", ".until(", ".whilst("].iter().any(|b| tail.contains(b)) {
                after_bound = Some(Attempts::Bounded);
            }
        }
        let unbounded = forever
            || ["indefinitely()", "MAX_VALUE", "Infinity", "Number.POSITIVE_INFINITY"]
                .iter()
                .any(|w| compact.contains(w))
            || (op_args.is_empty()
                && last_segment(&self.callee(file, operator)) == "retry"
                && after_bound.is_none());
        let attempts = if unbounded {
            Attempts::Unbounded
        } else if let Some(b) = after_bound {
            b
        } else {
            match count {
                Some((v, _)) if v < 0.0 => Attempts::Unbounded,
                Some((v, _)) => Attempts::Count(v + 1.0),
                None => Attempts::Bounded,
            }
        };
        let jitter = Some(
            (compact.contains("Retry.backoff(")
                && !compact.contains(".jitter(0)")
                && !compact.contains(".jitter(0.0)"))
                || has_random(text)
                || after_jitter,
        );
        let filter = ["filter(", "retryIf(", "onRetryExhaustedThrow("]
            .iter()
            .find_map(|f| compact.find(f).map(|i| &compact[i..]))
            .map(|t| classify(balanced_call(t)))
            .unwrap_or_default();
        Some(Retry {
            form: Form::Library(REACTIVE.into()),
            function: ctx.function.clone(),
            path: self.path(file).to_string(),
            line: line_of(operator),
            end_line: operator.end_position().row as u32 + 1,
            attempts,
            jitter,
            conditions: if filter.is_empty() { BTreeSet::from([Condition::Any]) } else { filter },
            count_at: count.and_then(|(_, at)| at),
            reads_retry_after: reads_retry_after(text),
            scope: (0, 0),
            origin: None,
            count_param: None,
            count_text: None,
            bound_sym: None,
        })
    }

    /// A number an expression computes, and where it was written when it
    /// was followed through a binding.
    fn number(&self, file: usize, n: Node<'_>) -> Option<(f64, Option<(String, u32)>)> {
        let ev = self.world.eval(file, n, 0);
        let at = ev.trail.last().map(|l| (l.path.clone(), l.line));
        match ev.value {
            Value::Num { v, .. } => Some((v, at)),
            _ => literal_number(self.text(file, n))
                .map(|v| (v, at))
                .or_else(|| self.qualified_constant(self.text(file, n))),
        }
    }

    /// [`Walker::number`], with the value's own line when it was not
    /// followed anywhere: where a count is written, so that a finding on it
    /// meets another analyzer's on the same line.
    fn number_at(&self, file: usize, n: Node<'_>) -> Option<(f64, Option<(String, u32)>)> {
        self.number(file, n)
            .map(|(v, at)| (v, at.or_else(|| Some((self.path(file).to_string(), line_of(n))))))
    }

    /// `Limits::MAX_TRIES`, `Limits.MaxAttempts`, `self::MAX`: a constant
    /// of a class or module the evaluator does not follow (Ruby, PHP, C#,
    /// Kotlin), found as `NAME = number` (or `const NAME = number`,
    /// `NAME: number`) in the file named after the owner, else in any file
    /// read where it is bound once.
    fn qualified_constant(&self, text: &str) -> Option<(f64, Option<(String, u32)>)> {
        if let Some(r) = self.constants.borrow().get(text) {
            return r.clone();
        }
        let r = self.qualified_constant_uncached(text);
        self.constants.borrow_mut().insert(text.to_string(), r.clone());
        r
    }

    fn qualified_constant_uncached(&self, text: &str) -> Option<(f64, Option<(String, u32)>)> {
        let t = text.trim();
        if t.len() > 120 {
            return None;
        }
        let (owner, name) = t.rsplit_once("::").or_else(|| t.rsplit_once('.'))?;
        let owner = owner.trim_start_matches('$').rsplit(['.', ':', '\\']).next().unwrap_or(owner);
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') || owner.is_empty() {
            return None;
        }
        static BIND: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r"^\s*(?:(?:public|private|protected|internal|static|readonly|final|const|val|var|let)\s+)*(?:[A-Za-z_][\w<>?]*\s+)?([A-Za-z_]\w*)\s*[:=]\s*(?:[A-Za-z_][\w<>?]*\s*=\s*)?(\d[\d_]*)\s*[;,]?\s*(?:#.*|//.*)?$")
                .unwrap_or_else(|e| panic!("constant pattern: {e}"))
        });
        let stem_of = |p: &str| {
            p.rsplit('/')
                .next()
                .unwrap_or(p)
                .split('.')
                .next()
                .unwrap_or("")
                .replace('_', "")
                .to_ascii_lowercase()
        };
        let want = owner.replace('_', "").to_ascii_lowercase();
        let mut found: Vec<(f64, String, u32)> = Vec::new();
        for ix in &self.world.files {
            let f = ix.file;
            for (i, line) in f.text.lines().enumerate() {
                if let Some(c) = BIND.captures(line) {
                    if &c[1] == name {
                        if let Ok(v) = c[2].replace('_', "").parse::<f64>() {
                            found.push((v, f.path.clone(), i as u32 + 1));
                        }
                    }
                }
            }
        }
        let own: Vec<&(f64, String, u32)> = found.iter().filter(|(_, p, _)| stem_of(p) == want).collect();
        let pick = match (own.as_slice(), found.as_slice()) {
            ([one], _) => (*one).clone(),
            ([], [one]) => one.clone(),
            _ => return None,
        };
        Some((pick.0, Some((pick.1, pick.2))))
    }

    fn unlimited(&self, file: usize, n: Node<'_>) -> bool {
        const FOREVER: &[&str] = &[
            "Infinity",
            "Number.POSITIVE_INFINITY",
            "math.inf",
            "float('inf')",
            "float(\"inf\")",
            "Integer.MAX_VALUE",
            "Int.MAX_VALUE",
            "Long.MAX_VALUE",
            "int.MaxValue",
            "PHP_INT_MAX",
            "math.MaxInt",
            "math.MaxInt32",
            "math.MaxInt64",
            "Float::INFINITY",
            "sys.maxsize",
        ];
        let t: String = self.text(file, n).chars().filter(|c| !c.is_whitespace()).collect();
        FOREVER.contains(&t.as_str()) || matches!(self.world.eval(file, n, 0).value, Value::Unlimited)
    }

    /// The keyword options inside `n`: key and value node.
    fn options(&self, file: usize, n: Node<'t>) -> Vec<(String, Node<'t>)> {
        let syn = self.syn(file);
        let mut out = Vec::new();
        let mut stack = vec![(n, 0usize)];
        while let Some((x, d)) = stack.pop() {
            if d > 12 {
                continue;
            }
            if syn.pairs.contains(&x.kind())
                || matches!(x.kind(), "pair" | "assignment_expression" | "keyword_argument")
            {
                let key = x
                    .child_by_field_name("key")
                    .or_else(|| x.child_by_field_name("name"))
                    .or_else(|| x.child_by_field_name("left"))
                    .or_else(|| x.named_child(0));
                let val =
                    x.child_by_field_name("value").or_else(|| x.child_by_field_name("right")).or_else(|| {
                        let c = x.named_child_count();
                        (c >= 2).then(|| x.named_child(c - 1)).flatten()
                    });
                if let (Some(k), Some(v)) = (key, val) {
                    if k.id() != v.id() {
                        let kt = self
                            .text(file, k)
                            .trim_matches(|c: char| !c.is_alphanumeric() && c != '_')
                            .to_string();
                        out.push((kt, v));
                    }
                }
            }
            let mut c = x.walk();
            for ch in x.named_children(&mut c) {
                if !self.is_callable(file, ch) {
                    stack.push((ch, d + 1));
                }
            }
        }
        out
    }

    /// What a library form's settings say, from the node that configures
    /// it (a decorator, a wrapper call).
    fn wrapper_retry(&self, w: &Wrapper, file: usize, site: Node<'t>, at: Node<'t>, ctx: &Ctx) -> Retry {
        // A decorator or annotation holds the call whose arguments count.
        let site = self.call_in(file, site).unwrap_or(site);
        let whole = self.world.files[file].file.text.as_str();
        // A policy built apart: the statement that builds it.
        let text = if w.scope.as_deref() == Some("file") {
            w.attempts
                .calls_in_file
                .iter()
                .chain(&w.attempts.unbounded_in_file)
                .find_map(|c| whole.find(&format!("{c}(")))
                .map_or(whole, |at| {
                    // The statement starts after the last line that ends
                    // one (`;`, `{`, `}` at a line's end).
                    let mut start = 0;
                    let mut pos = 0;
                    for line in whole[..at].split_inclusive('\n') {
                        pos += line.len();
                        if line.trim_end().ends_with([';', '{', '}']) && pos <= at {
                            start = pos;
                        }
                    }
                    let end = whole[at..].find(';').map_or(whole.len(), |i| at + i);
                    &whole[start.min(at)..end]
                })
        } else {
            self.text(file, site)
        };
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        // A word found whole: `rand_factor: 0` is not `rand_factor: 0.25`.
        let has = |words: &[String]| {
            words.iter().any(|x| {
                let x = x.replace(' ', "");
                let mut from = 0;
                while let Some(i) = compact[from..].find(&x) {
                    let end = from + i + x.len();
                    let cont = x.chars().last().is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.');
                    if !cont
                        || !compact[end..].starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '.')
                    {
                        return true;
                    }
                    from = end;
                }
                false
            })
        };
        let spec = &w.attempts;
        let mut attempts = None;
        let mut count_at = None;
        let opts = self.options(file, site);
        let zero_unlimited = spec.zero.as_deref() == Some("unlimited");
        let mut take = |v: Option<(f64, Option<(String, u32)>)>, plus: f64, unl: bool| -> Option<Attempts> {
            if unl {
                return Some(Attempts::Unbounded);
            }
            Some(match v {
                Some((n, _)) if n < 0.0 || (n == 0.0 && zero_unlimited) => Attempts::Unbounded,
                Some((n, a)) => {
                    count_at = a;
                    Attempts::Count(n + plus)
                }
                None => Attempts::Bounded,
            })
        };
        if has(&spec.unbounded) {
            attempts = Some(Attempts::Unbounded);
        }
        if attempts.is_none() {
            for (k, v) in &opts {
                if spec.options.iter().any(|o| o == k) {
                    attempts = take(self.number_at(file, *v), 0.0, self.unlimited(file, *v));
                    break;
                }
                if spec.retry_options.iter().any(|o| o == k) {
                    attempts = take(self.number_at(file, *v), 1.0, self.unlimited(file, *v));
                    break;
                }
            }
        }
        if attempts.is_none() && !spec.calls.is_empty() {
            let mut stack = vec![site];
            while let Some(x) = stack.pop() {
                if self.syn(file).is_call(x.kind()) && x.id() != site.id() {
                    let c = self.callee(file, x);
                    if spec
                        .calls
                        .iter()
                        .any(|s| *s == c || *s == last_segment(&c) || c.ends_with(&format!(".{s}")))
                    {
                        let args = self.args(file, x);
                        let v = args.iter().find_map(|a| self.number_at(file, *a));
                        let unl = args.iter().any(|a| self.unlimited(file, *a));
                        attempts = take(v, if spec.retries_call { 1.0 } else { 0.0 }, unl);
                        break;
                    }
                }
                let mut c = x.walk();
                for ch in x.named_children(&mut c) {
                    if !self.is_callable(file, ch) {
                        stack.push(ch);
                    }
                }
            }
        }
        if attempts.is_none() {
            if let Some(i) = spec.positional {
                let positional: Vec<Node<'t>> = self
                    .args(file, site)
                    .into_iter()
                    .filter(|a| !self.syn(file).pairs.contains(&a.kind()) && !self.is_callable(file, *a))
                    .collect();
                if let Some(a) = positional.get(i) {
                    let plus = if spec.positional_retries { 1.0 } else { 0.0 };
                    attempts = take(self.number_at(file, *a), plus, self.unlimited(file, *a));
                }
            }
        }
        let around = self.enclosing_text(file, site).unwrap_or("");
        if attempts.is_none() && !spec.retry_fields.is_empty() {
            // `c.RetryMax = 5` / `RetryMax: 5` in the function that builds it.
            for field in &spec.retry_fields {
                let pattern = format!(r"\b{}\s*[:=]\s*(\d+)\b", regex::escape(field));
                let Ok(re) = Regex::new(&pattern) else { continue };
                if let Some(n) = re.captures(around).and_then(|m| m[1].parse::<f64>().ok()) {
                    attempts = Some(Attempts::Count(n + 1.0));
                    break;
                }
            }
        }
        if attempts.is_none() && !spec.attempt_fields.is_empty() {
            // `Steps: registryAttempts` in the function, else in the file:
            // the value's node, so a constant is followed where it is written.
            let root = self.world.files[file].file.tree.root_node();
            for scope in [around, whole] {
                let Some(start) = (scope.as_ptr() as usize).checked_sub(whole.as_ptr() as usize) else {
                    continue;
                };
                let found = spec.attempt_fields.iter().find_map(|f| {
                    field_values(scope, f).into_iter().find_map(|v| {
                        let v = v.trim();
                        let at = (v.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
                        (at >= start && !v.is_empty()).then_some((at, v.len()))
                    })
                });
                if let Some((at, len)) = found {
                    let mut node = root.descendant_for_byte_range(at, at + len);
                    while let Some(x) = node.filter(|x| x.end_byte() - x.start_byte() < len) {
                        node = x.parent();
                    }
                    if let Some(x) = node {
                        attempts = take(self.number_at(file, x), 0.0, self.unlimited(file, x));
                    }
                    break;
                }
            }
        }
        if attempts.is_none() && spec.unbounded_in_function.iter().any(|u| around.contains(u.as_str())) {
            attempts = Some(Attempts::Unbounded);
        }
        if attempts.is_none() && spec.unbounded_in_file.iter().any(|u| whole.contains(u.as_str())) {
            attempts = Some(Attempts::Unbounded);
        }
        if attempts.is_none() && !spec.calls_in_file.is_empty() {
            static NUM: LazyLock<Regex> = LazyLock::new(|| {
                Regex::new(r"^\s*\(\s*(\d+)").unwrap_or_else(|e| panic!("constant pattern: {e}"))
            });
            for c in &spec.calls_in_file {
                if let Some(i) = whole.find(&format!("{c}(")) {
                    let rest = &whole[i + c.len()..];
                    attempts = Some(match NUM.captures(rest).and_then(|m| m[1].parse::<f64>().ok()) {
                        Some(n) => Attempts::Count(n + if spec.retries_call { 1.0 } else { 0.0 }),
                        None => Attempts::Bounded,
                    });
                    break;
                }
            }
        }
        if attempts.is_none() && has(&spec.deadline) {
            attempts = Some(Attempts::Bounded);
        }
        // `AsyncRetrying(**retry_args)`: options spread from a value built
        // elsewhere may set the bound; the library's default is not what
        // runs, and retrygate cannot tell what does.
        if attempts.is_none()
            && self.args(file, site).iter().any(|a| {
                matches!(
                    a.kind(),
                    "dictionary_splat"
                        | "list_splat"
                        | "spread_element"
                        | "hash_splat_argument"
                        | "splat_argument"
                        | "variadic_unpacking"
                        | "spread_argument"
                )
            })
        {
            attempts = Some(Attempts::Unknown);
        }
        let attempts = attempts.unwrap_or_else(|| match &spec.default {
            serde_yaml::Value::Number(n) => n.as_f64().map_or(Attempts::Bounded, Attempts::Count),
            serde_yaml::Value::String(s) if s == "unlimited" => Attempts::Unbounded,
            _ => Attempts::Bounded,
        });
        let jitter = if has(&w.jitter.off) {
            Some(false)
        } else if has(&w.jitter.on)
            || w.jitter.on_without.iter().any(|pair| match pair.as_slice() {
                [on, unless] => has(std::slice::from_ref(on)) && !has(std::slice::from_ref(unless)),
                _ => false,
            })
        {
            Some(true)
        } else {
            Some(w.jitter.default)
        };
        let mut conditions = BTreeSet::new();
        let last = last_segment(&self.callee(file, site)).to_string();
        let spec = &w.conditions;
        let read = |t: &str| {
            // Polly's `args.Outcome.Exception is ..` names the property a
            // predicate tests, not a catch-all type.
            let t = t.replace("Outcome.Exception", "Outcome");
            let t = t.as_str();
            let mut c = classify(t);
            for (word, means) in &spec.words {
                if names_whole(t, word) {
                    c.extend(classify(means));
                }
            }
            c
        };
        if let Some(c) = spec.names.get(&last) {
            conditions.extend(classify(c));
        } else {
            for (k, v) in &opts {
                if spec.options.iter().any(|o| o == k) {
                    conditions.extend(read(self.predicate_text(file, *v)));
                }
            }
            // A predicate set as a field where the policy is built; one
            // that names nothing retrygate knows is taken to retry on any
            // failure.
            for value in spec.fields.iter().flat_map(|f| field_values(around, f)) {
                let c = read(value);
                conditions.extend(if c.is_empty() { BTreeSet::from([Condition::Any]) } else { c });
            }
            if conditions.is_empty() && !w.conditions.calls.is_empty() {
                // The calls that say what it retries on, in the site (or
                // the file, for a policy built apart).
                for call in &w.conditions.calls {
                    let mut from = 0;
                    while let Some(i) = text[from..].find(call.as_str()) {
                        let at = from + i;
                        from = at + call.len();
                        let before = text[..at].chars().next_back();
                        let after = text[from..].chars().next();
                        if before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                            || !matches!(after, Some('(' | '<'))
                        {
                            continue;
                        }
                        conditions.extend(read(call_with_block(&text[at..])));
                    }
                }
            }
            if conditions.is_empty() {
                if let Some(i) = w.conditions.positional {
                    let positional: Vec<Node<'t>> = self
                        .args(file, site)
                        .into_iter()
                        .filter(|a| !self.syn(file).pairs.contains(&a.kind()))
                        .collect();
                    // A class-level declaration lists every failure it
                    // retries (`retry_on A, B, C, attempts: 5`).
                    let all = w.form.iter().any(|f| f == "class");
                    for a in positional.iter().skip(i).take(if all { usize::MAX } else { 1 }) {
                        conditions.extend(classify(self.predicate_text(file, *a)));
                    }
                }
            }
            if conditions.is_empty() {
                conditions.extend(classify(&w.conditions.default));
            } else {
                let site_text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
                for a in &spec.also {
                    if !a.off.as_ref().is_some_and(|off| site_text.contains(&off.replace(' ', ""))) {
                        conditions.extend(classify(&a.on));
                    }
                }
            }
        }
        if !spec.stops.is_empty() || !spec.marks.is_empty() {
            let code = self
                .args(file, site)
                .into_iter()
                .find(|a| self.is_callable(file, *a))
                .or_else(|| self.enclosing_function(file, site));
            if let Some(found) = code.and_then(|c| self.escape_conditions(file, c, &spec.stops, &spec.marks))
            {
                conditions = found;
            }
        }
        Retry {
            form: Form::Library(w.library.clone()),
            function: ctx.function.clone(),
            path: self.path(file).to_string(),
            line: line_of(at),
            end_line: at.end_position().row as u32 + 1,
            attempts,
            jitter,
            conditions,
            count_at,
            reads_retry_after: reads_retry_after(text) || reads_retry_after(around),
            scope: (0, 0),
            // The lines its settings were read from (for a policy built
            // apart, the statement that builds it): an edit there changes
            // this retry.
            origin: built_apart(whole, text).map(|(a, b)| (self.path(file).to_string(), a, b)),
            count_param: None,
            count_text: None,
            bound_sym: None,
        }
    }

    /// The function around `n`.
    fn enclosing_function<'a>(&self, file: usize, n: Node<'a>) -> Option<Node<'a>> {
        let syn = self.syn(file);
        let mut p = n.parent();
        while let Some(x) = p {
            if syn.is_function(x.kind()) {
                return Some(x);
            }
            p = x.parent();
        }
        None
    }

    /// What a retry whose retried code decides by calls retries on: each
    /// `if`/`catch` that fails (returns or throws) retries what its
    /// condition names unless it hands the failure to a stop call
    /// (`return backoff.Permanent(err)`, `bail(err)`), or only when it
    /// marks it (`return retry.RetryableError(err)`). A call's own errors
    /// that no `catch` handles (outside Go) are retried where stops decide.
    /// `None` when the code names no stop or mark: the library's default.
    fn escape_conditions(
        &self,
        file: usize,
        code: Node<'_>,
        stops: &[String],
        marks: &[String],
    ) -> Option<BTreeSet<Condition>> {
        let calls = |t: &str, names: &[String]| {
            names.iter().any(|s| {
                t.match_indices(s.as_str()).any(|(i, _)| {
                    let before = t[..i].chars().next_back();
                    !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                        && t[i + s.len()..].trim_start().starts_with('(')
                })
            })
        };
        let whole = self.text(file, code);
        if !calls(whole, stops) && !calls(whole, marks) {
            return None;
        }
        let syn = self.syn(file);
        let go = self.grammar(file) == Grammar::Go;
        let mut out = BTreeSet::new();
        let mut caught = false;
        let mut stack = vec![(code, 0usize)];
        while let Some((x, d)) = stack.pop() {
            if d > MAX_NODE_DEPTH {
                continue;
            }
            let is_if = syn.ifs.contains(&x.kind());
            let is_catch = syn.catches.contains(&x.kind());
            if is_if || is_catch {
                caught |= is_catch;
                let cond = if is_if {
                    x.child_by_field_name("condition").map(|c| self.text(file, c)).unwrap_or("")
                } else {
                    ""
                };
                // The branch taken when the condition holds, without the
                // branches nested in it (read on their own).
                let block = if is_if {
                    x.child_by_field_name("consequence").or_else(|| x.child_by_field_name("body"))
                } else {
                    Some(x)
                };
                let body: String = block.map_or(String::new(), |b| {
                    let blockish = |n: Node<'_>| n.kind().contains("block") || n.kind().ends_with("_list");
                    if !blockish(b) && !is_catch {
                        return self.text(file, b).to_string();
                    }
                    let mut c = b.walk();
                    let mut kids: Vec<Node<'_>> = b.named_children(&mut c).collect();
                    // Go's block holds a statement list.
                    while kids.len() == 1 && blockish(kids[0]) {
                        let k = kids[0];
                        let mut c = k.walk();
                        kids = k.named_children(&mut c).collect();
                    }
                    if kids.is_empty() {
                        return self.text(file, b).to_string();
                    }
                    kids.iter()
                        .filter(|k| !syn.ifs.contains(&k.kind()) && !syn.catches.contains(&k.kind()))
                        .map(|k| self.text(file, *k))
                        .collect::<Vec<_>>()
                        .join("\n")
                });
                let body = body.as_str();
                let fails = body.contains("return") || body.contains("throw") || body.contains("raise");
                let stopped = calls(body, stops);
                let marked = calls(body, marks);
                let retried = if marks.is_empty() { fails && !stopped } else { marked };
                let returns_nothing = {
                    let t: String = body.chars().filter(|c| !c.is_whitespace()).collect();
                    ["{returnnil}", "{returnnull}", "{return}", "{returnNone}"].contains(&t.as_str())
                };
                if retried && !returns_nothing {
                    let named = classify(cond);
                    out.extend(if !named.is_empty() {
                        named
                    } else if is_catch || words(cond).iter().any(|w| w == "err" || w == "error") {
                        BTreeSet::from([Condition::Reset, Condition::Timeout])
                    } else if status_words(cond) {
                        BTreeSet::from([Condition::ServerError])
                    } else {
                        BTreeSet::from([Condition::Any])
                    });
                }
            }
            let mut c = x.walk();
            stack.extend(x.named_children(&mut c).map(|ch| (ch, d + 1)));
        }
        if !go && !caught && marks.is_empty() {
            out.extend([Condition::Reset, Condition::Timeout]);
        }
        Some(out)
    }

    /// What a condition says: a predicate's body (its parameter types
    /// are no catch types), or the expression itself.
    fn predicate_text(&self, file: usize, n: Node<'_>) -> &'w str {
        if self.is_callable(file, n) {
            if let Some(b) = n.child_by_field_name("body") {
                return self.text(file, b);
            }
        }
        self.text(file, n)
    }

    /// `n` when it is a call, else the first call inside it.
    fn call_in(&self, file: usize, n: Node<'t>) -> Option<Node<'t>> {
        let syn = self.syn(file);
        let mut queue = std::collections::VecDeque::from([(n, 0usize)]);
        while let Some((x, d)) = queue.pop_front() {
            if syn.is_call(x.kind()) {
                return Some(x);
            }
            if d < 3 {
                let mut c = x.walk();
                queue.extend(x.named_children(&mut c).map(|ch| (ch, d + 1)));
            }
        }
        None
    }

    /// The decorators, annotations and attributes of a definition.
    fn decorators(&self, file: usize, def: Node<'t>) -> Vec<Node<'t>> {
        let syn = self.syn(file);
        let mut out = Vec::new();
        if syn.decorators.is_empty() {
            return self.class_retries(file, def);
        }
        let look = |n: Node<'t>, out: &mut Vec<Node<'t>>| {
            let mut c = n.walk();
            for ch in n.named_children(&mut c) {
                if syn.decorators.contains(&ch.kind()) {
                    out.push(ch);
                } else if matches!(ch.kind(), "modifiers" | "attribute_list" | "attribute_group") {
                    let mut c2 = ch.walk();
                    for g in ch.named_children(&mut c2) {
                        if syn.decorators.contains(&g.kind())
                            || g.kind() == "attribute"
                            || g.kind() == "annotation"
                        {
                            out.push(g);
                        } else {
                            let mut c3 = g.walk();
                            out.extend(
                                g.named_children(&mut c3).filter(|x| syn.decorators.contains(&x.kind())),
                            );
                        }
                    }
                }
            }
        };
        look(def, &mut out);
        if let Some(p) = def.parent() {
            if p.kind() == "decorated_definition" {
                look(p, &mut out);
            }
        }
        let mut prev = def.prev_named_sibling();
        while let Some(p) = prev {
            if !syn.decorators.contains(&p.kind()) {
                break;
            }
            out.push(p);
            prev = p.prev_named_sibling();
        }
        out.extend(self.class_retries(file, def));
        out
    }

    /// Ruby: the class-level declarations that retry a job's `perform`
    /// (Active Job's `retry_on Net::ReadTimeout, attempts: 5`), read as its
    /// decorators. Each names the failures it retries; together they are
    /// one retry of the job.
    fn class_retries(&self, file: usize, def: Node<'t>) -> Vec<Node<'t>> {
        let runs = |name: &str| {
            self.data.wrappers.iter().any(|w| {
                w.languages.iter().any(|l| l == "ruby")
                    && w.form.iter().any(|f| f == "class")
                    && w.runs.iter().any(|r| r == name)
            })
        };
        if self.grammar(file) != Grammar::Ruby
            || def.kind() != "method"
            || !self.def_name(file, def).is_some_and(|n| runs(&n))
        {
            return Vec::new();
        }
        let Some(body) = def.parent() else { return Vec::new() };
        let mut c = body.walk();
        body.named_children(&mut c).filter(|x| self.is_class_retry(file, *x)).collect()
    }

    /// PHP: a class property that makes the framework run the class's
    /// method again when it throws (a Laravel queued job's
    /// `public $tries = 5;` retries `handle`), read as its decorator. The
    /// property's number is the attempts; 0 means no bound where the
    /// library says so.
    fn class_property_retry(&self, file: usize, def: Node<'t>, ctx: &Ctx) -> Option<Retry> {
        if self.grammar(file) != Grammar::Php || def.kind() != "method_declaration" {
            return None;
        }
        let name = self.def_name(file, def)?;
        let whole = self.world.files[file].file.text.as_str();
        let w = self.data.wrappers.iter().find(|w| {
            w.languages.iter().any(|l| l == "php")
                && w.form.iter().any(|f| f == "class")
                && w.runs.contains(&name)
                && w.used_in(whole)
        })?;
        let body = def.parent()?;
        let mut c = body.walk();
        let prop = body.named_children(&mut c).find(|x| {
            x.kind() == "property_declaration"
                && w.names.iter().any(|n| {
                    let t = self.text(file, *x);
                    let at = format!("${n}");
                    t.find(&at).is_some_and(|i| {
                        !t[i + at.len()..].starts_with(|ch: char| ch.is_alphanumeric() || ch == '_')
                    })
                })
        })?;
        let text = self.text(file, prop);
        let value = text.split_once('=').map(|(_, v)| v.trim().trim_end_matches(';').trim());
        let attempts = match value.and_then(|v| v.parse::<f64>().ok()) {
            Some(n) if n < 0.0 || (n == 0.0 && w.attempts.zero.as_deref() == Some("unlimited")) => {
                Attempts::Unbounded
            }
            Some(n) => Attempts::Count(n),
            None => Attempts::Unknown,
        };
        let compact: String = whole.chars().filter(|c| !c.is_whitespace()).collect();
        let jitter = if w.jitter.on.iter().any(|x| compact.contains(&x.replace(' ', ""))) {
            true
        } else {
            w.jitter.default
        };
        Some(Retry {
            form: Form::Library(w.library.clone()),
            function: ctx.function.clone(),
            path: self.path(file).to_string(),
            line: line_of(prop),
            end_line: prop.end_position().row as u32 + 1,
            attempts,
            jitter: Some(jitter),
            // `$this->fail($e)` in a catch ends the job: what it hands
            // there is not retried.
            conditions: self
                .escape_conditions(file, def, &w.conditions.stops, &w.conditions.marks)
                .unwrap_or_else(|| classify(&w.conditions.default)),
            count_at: None,
            reads_retry_after: reads_retry_after(self.text(file, def)),
            // The whole class: its other members (a `backoff()` method)
            // change how the job is retried.
            scope: (line_of(body), body.end_position().row as u32 + 1),
            origin: None,
            count_param: None,
            count_text: None,
            bound_sym: None,
        })
    }

    /// Whether a node is a class-level Ruby retry declaration (`retry_on ..`).
    fn is_class_retry(&self, file: usize, n: Node<'_>) -> bool {
        n.kind() == "call"
            && n.child_by_field_name("receiver").is_none()
            && n.child_by_field_name("method").is_some_and(|m| self.text(file, m) == "retry_on")
    }

    /// The retry a definition's decorator or annotation puts on its body.
    fn decorator_retry(&self, file: usize, def: Node<'t>, function: &str) -> Option<Retry> {
        let lang = self.grammar(file).library_language();
        let ctx = Ctx::top(function.to_string(), 0, Vec::new());
        if let Some(r) = self.class_property_retry(file, def, &ctx) {
            return Some(r);
        }
        let decorators = self.decorators(file, def);
        // Several class-level declarations are one retry of the job: the
        // failures of all, the largest count.
        let class_wrapper = self.data.wrappers.iter().find(|w| {
            w.languages.iter().any(|l| l == lang)
                && w.form.iter().any(|f| f == "class")
                && w.names_callee("retry_on")
        });
        let class_level: Vec<Retry> = class_wrapper
            .map(|w| {
                decorators
                    .iter()
                    .filter(|d| self.is_class_retry(file, **d))
                    .map(|d| {
                        let mut r = self.wrapper_retry(w, file, *d, *d, &ctx);
                        r.scope = (line_of(def), def.end_position().row as u32 + 1);
                        r
                    })
                    .collect()
            })
            .unwrap_or_default();
        if let Some((first, rest)) = class_level.split_first() {
            let mut r = first.clone();
            for x in rest {
                r.line = r.line.min(x.line);
                r.end_line = r.end_line.max(x.end_line);
                r.conditions.extend(x.conditions.iter().copied());
                r.attempts = match (r.attempts, x.attempts) {
                    (Attempts::Unbounded, _) | (_, Attempts::Unbounded) => Attempts::Unbounded,
                    (Attempts::Count(a), Attempts::Count(b)) => Attempts::Count(a.max(b)),
                    (a, _) => a,
                };
                r.jitter = match (r.jitter, x.jitter) {
                    (Some(a), Some(b)) => Some(a && b),
                    _ => None,
                };
            }
            r.reads_retry_after |= reads_retry_after(self.text(file, def));
            return Some(r);
        }
        for d in decorators {
            let t = self.text(file, d).trim_start_matches(['@', '[', '#']).trim_start_matches('[');
            let name: String =
                t.split('(').next().unwrap_or("").chars().filter(|c| !c.is_whitespace()).collect();
            let name = name.trim_end_matches(']').to_string();
            let whole = self.world.files[file].file.text.as_str();
            let said: String = self.text(file, d).chars().filter(|c| !c.is_whitespace()).collect();
            if let Some(w) = self.data.wrappers.iter().find(|w| {
                w.languages.iter().any(|l| l == lang)
                    && w.form.iter().any(|f| f == "decorator" || f == "annotation")
                    && w.names_callee(&name)
                    && w.used_in(whole)
                    && (w.site.is_empty() || w.site.iter().any(|x| said.contains(&x.replace(' ', ""))))
            }) {
                let mut r = self.wrapper_retry(w, file, d, d, &ctx);
                r.reads_retry_after |= reads_retry_after(self.text(file, def));
                r.scope = (line_of(def), def.end_position().row as u32 + 1);
                return Some(r);
            }
            // A library decorator held in a name (`_retry_call = retry(..)`
            // then `@_retry_call`): the call that built it says the retry.
            if let Some((w, call)) = self.decorator_held_in(file, &name, lang) {
                let mut r = self.wrapper_retry(w, file, call, d, &ctx);
                r.reads_retry_after |= reads_retry_after(self.text(file, def));
                r.scope = (line_of(def), def.end_position().row as u32 + 1);
                return Some(r);
            }
            // A decorator of the project's that retries what it wraps.
            for (f, target) in self.resolve(file, &name) {
                if let Some(mut r) = self.helper_retry(f, target) {
                    r.function = function.to_string();
                    r.path = self.path(file).to_string();
                    r.line = line_of(d);
                    r.end_line = line_of(d);
                    r.scope = (line_of(def), def.end_position().row as u32 + 1);
                    return Some(r);
                }
            }
        }
        None
    }

    /// The library decorator a plain name holds: the file binds it once,
    /// at the start of a line, to a call of a decorator form
    /// (`_retry_call = retry(stop=stop_after_attempt(3))`,
    /// `on_network = backoff.on_exception(backoff.expo, IOError)`).
    fn decorator_held_in(&self, file: usize, name: &str, lang: &str) -> Option<(&'w Wrapper, Node<'t>)> {
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return None;
        }
        let whole = self.world.files[file].file.text.as_str();
        let pattern =
            format!(r"(?m)^[ \t]*{}[ \t]*(?::[^=\n]+)?=[ \t]*([A-Za-z_][\w.]*)[ \t]*\(", regex::escape(name));
        let re = Regex::new(&pattern).ok()?;
        let mut found = re.captures_iter(whole);
        let c = found.next()?;
        if found.next().is_some() {
            return None;
        }
        let callee = c.get(1)?;
        let w = self.data.wrappers.iter().find(|w| {
            w.languages.iter().any(|l| l == lang)
                && w.form.iter().any(|f| f == "decorator")
                && w.names_callee(callee.as_str())
                && w.used_in(whole)
        })?;
        let root = self.world.files[file].file.tree.root_node();
        let mut n = root.descendant_for_byte_range(callee.start(), callee.end())?;
        let syn = self.syn(file);
        while !syn.is_call(n.kind()) {
            n = n.parent()?;
        }
        Some((w, n))
    }

    /// Whether a definition retries a callable it is given: a retry in its
    /// body (or a function nested in it) covers a call of a parameter.
    fn helper_retry(&self, file: usize, def: Node<'t>) -> Option<Retry> {
        let key = (file, def.id());
        if let Some(r) = self.helpers.borrow().get(&key) {
            return r.clone();
        }
        self.helpers.borrow_mut().insert(key, None);
        let mut params = HashSet::new();
        let mut stack = vec![(def, 0usize)];
        while let Some((x, d)) = stack.pop() {
            if d > 40 {
                continue;
            }
            let k = x.kind();
            if k.contains("parameter") || k == "method_parameters" || k == "lambda_parameters" {
                for w in self.text(file, x).split(|c: char| !c.is_alphanumeric() && c != '_') {
                    if !w.is_empty()
                        && !matches!(w, "self" | "this" | "cls" | "args" | "kwargs" | "ctx" | "context")
                    {
                        params.insert(w.to_string());
                    }
                }
            }
            let mut c = x.walk();
            for ch in x.named_children(&mut c) {
                stack.push((ch, d + 1));
            }
        }
        if params.is_empty() {
            return None;
        }
        let name = self.def_name(file, def).unwrap_or_default();
        let mut probe = Walker {
            world: self.world,
            data: self.data,
            defs: HashMap::new(),
            transports: HashMap::new(),
            helpers: RefCell::new(HashMap::new()),
            file_timeouts: RefCell::new(HashMap::new()),
            typed: RefCell::new(HashMap::new()),
            constants: RefCell::new(HashMap::new()),
            calls_read: 0,
            truncated: false,
            expanded: HashSet::new(),
            ops: Vec::new(),
            retries: Vec::new(),
            probe: Some((params, Vec::new())),
            clients: Vec::new(),
            calls: HashSet::new(),
        };
        let mut ctx = Ctx::top(name.clone(), MAX_DEPTH, vec![def.id()]);
        if let Some(r) = probe.recursion_retry(file, def, &name) {
            ctx.retry = Some(r);
        }
        probe.walk_children(file, def, &ctx, 0);
        let order = self.param_order(file, def);
        let found = probe.probe.and_then(|(_, hits)| hits.into_iter().next()).map(|mut r| {
            if !matches!(r.form, Form::Library(_)) {
                r.form = Form::Helper(name);
            }
            r.origin = Some((self.path(file).to_string(), line_of(def), def.end_position().row as u32 + 1));
            // A count that is one of the helper's parameters is read at
            // each call.
            if let Some(bound) = r.count_text.take() {
                r.count_param = order.iter().position(|p| *p == bound);
            }
            r
        });
        self.helpers.borrow_mut().insert(key, found.clone());
        found
    }

    /// What a helper whose `except` names one of its parameters
    /// (`except retry_on:`) retries on at this call: the argument given
    /// for that parameter, by keyword or position.
    fn param_conditions(
        &self,
        f: usize,
        def: Node<'_>,
        file: usize,
        call: Node<'t>,
    ) -> Option<BTreeSet<Condition>> {
        let params = self.param_order(f, def);
        let syn = self.syn(f);
        let mut named = None;
        self.any_in_body(f, def, |x| {
            if !syn.catches.contains(&x.kind()) {
                return false;
            }
            let head = self.text(f, x).split(':').next().unwrap_or("");
            let caught = head.trim_start_matches("except").split(" as ").next().unwrap_or("").trim();
            named = params.iter().position(|p| p == caught);
            named.is_some()
        });
        let i = named?;
        let name = &params[i];
        if let Some((_, v)) = self.options(file, call).into_iter().find(|(k, _)| k == name) {
            return Some(classify_or_any(self.text(file, v)));
        }
        let positional: Vec<Node<'t>> =
            self.args(file, call).into_iter().filter(|a| !self.syn(file).pairs.contains(&a.kind())).collect();
        positional.get(i).map(|a| classify_or_any(self.text(file, *a)))
    }

    /// A definition's parameter names, in order.
    fn param_order(&self, file: usize, def: Node<'_>) -> Vec<String> {
        let Some(params) = def.child_by_field_name("parameters").or_else(|| {
            let mut c = def.walk();
            let found = def.named_children(&mut c).find(|ch| ch.kind().contains("parameter"));
            found
        }) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut c = params.walk();
        for p in params.named_children(&mut c) {
            if p.kind() == "comment" {
                continue;
            }
            let t = self.text(file, p);
            let name = if matches!(p.kind(), "identifier" | "simple_identifier") {
                t.to_string()
            } else {
                p.child_by_field_name("name")
                    .or_else(|| p.child_by_field_name("pattern"))
                    .or_else(|| p.child_by_field_name("left"))
                    .map_or_else(
                        || {
                            t.split(|c: char| !c.is_alphanumeric() && c != '_' && c != '$')
                                .find(|w| !w.is_empty())
                                .unwrap_or("")
                                .to_string()
                        },
                        |n| self.text(file, n).to_string(),
                    )
            };
            out.push(name.trim_start_matches('$').to_string());
        }
        out
    }

    /// A function that calls itself on its failure path.
    fn recursion_retry(&self, file: usize, def: Node<'t>, function: &str) -> Option<Retry> {
        let name = self.def_name(file, def)?;
        let syn = self.syn(file);
        let go = self.grammar(file) == Grammar::Go;
        let mut stack = vec![(def, false, 0usize)];
        while let Some((x, failing, d)) = stack.pop() {
            if d > MAX_NODE_DEPTH {
                continue;
            }
            if x.id() != def.id() && syn.is_function(x.kind()) {
                continue;
            }
            let k = x.kind();
            // An `if` that tests a failure: Go's `err != nil`, or an answer's
            // failing status (`response.status === 503`, `!res.ok`).
            let failure_if = syn.ifs.contains(&k)
                && ((go && self.err_check(file, x) == Some(true))
                    || x.child_by_field_name("condition")
                        .is_some_and(|c| tests_failing_status(self.text(file, c))));
            let now_failing = failing
                || syn.catches.contains(&k)
                || failure_if
                || (syn.is_call(k) && last_segment(&self.callee(file, x)) == "catch");
            if now_failing && syn.is_call(k) && x.id() != def.id() {
                let c = self.callee(file, x);
                let recv = receiver(&c);
                let own = recv.is_empty() || matches!(recv, "self" | "this" | "$this-" | "$this");
                if (last_segment(&c) == name
                    && ((recv.is_empty() && bare_call_reaches(self.grammar(file), def))
                        || (own && !recv.is_empty())))
                    || (own && self.retries_back(file, last_segment(&c), &name))
                {
                    let args = self.text(file, x);
                    // A count passed down, or a flag (`retried=True`): the
                    // call that receives it takes another path.
                    let counted =
                        ["- 1", "-1", "+ 1", "+1", "--", "++", "attempt", "retries", "remaining", "tries"]
                            .iter()
                            .any(|w| args.contains(w))
                            || ["True", "False", "true", "false"].iter().any(|w| names_whole(args, w));
                    let bounded = counted || self.bound_check(file, def);
                    // What the guard of the call names (`status === 401`),
                    // else any failure.
                    let guarded = self
                        .enclosing_if(file, x, def)
                        .map(|(cond, _)| classify_in(self.grammar(file), cond))
                        .filter(|c| !c.is_empty())
                        .unwrap_or_else(|| BTreeSet::from([Condition::Any]));
                    return Some(Retry {
                        form: Form::Recursion,
                        function: function.to_string(),
                        path: self.path(file).to_string(),
                        line: line_of(x),
                        end_line: line_of(x),
                        attempts: if bounded { Attempts::Bounded } else { Attempts::Unbounded },
                        jitter: Some(has_random(self.text(file, def))),
                        conditions: guarded,
                        count_at: None,
                        reads_retry_after: reads_retry_after(self.text(file, def)),
                        scope: (0, 0),
                        origin: None,
                        count_param: None,
                        count_text: None,
                        bound_sym: None,
                    });
                }
            }
            let mut c = x.walk();
            for ch in x.named_children(&mut c) {
                // Only the consequence of `if err != nil` (or of a failing
                // status) fails.
                let f = if failure_if && !failing {
                    now_failing && x.child_by_field_name("consequence").is_some_and(|cq| cq.id() == ch.id())
                } else {
                    now_failing
                };
                stack.push((ch, f, d + 1));
            }
        }
        None
    }

    /// Whether `helper`, called on a failure path of `name`, is a function
    /// of the same file named as a retry (`_retry_request`, `retryRequest`)
    /// that calls `name` again: recursion through one helper, the shape of
    /// generated SDK clients (`request` -> `_retry_request` -> `request`).
    fn retries_back(&self, file: usize, helper: &str, name: &str) -> bool {
        if helper == name || !words(helper).iter().any(|w| w == "retry") {
            return false;
        }
        let Some(defs) = self.defs.get(helper) else { return false };
        defs.iter().filter(|(f, _)| *f == file).any(|(_, d)| {
            let t = self.text(file, *d);
            t.match_indices(name).any(|(i, _)| {
                let before = t[..i].chars().next_back();
                let after = t[i + name.len()..].trim_start().starts_with('(');
                after && before.is_some_and(|b| !b.is_alphanumeric() && b != '_')
            })
        })
    }

    /// Ruby: a `begin`/method body whose `rescue` says `retry`.
    fn ruby_rescue_retry(&self, file: usize, n: Node<'t>, ctx: &Ctx) -> Option<Retry> {
        let mut c = n.walk();
        let rescue = n.named_children(&mut c).find(|ch| ch.kind() == "rescue")?;
        let mut stack = vec![rescue];
        let mut retry_node = None;
        while let Some(x) = stack.pop() {
            if x.kind() == "retry" {
                retry_node = Some(x);
                break;
            }
            let mut c = x.walk();
            stack.extend(x.named_children(&mut c));
        }
        let r = retry_node?;
        let mut conditional = false;
        let mut p = r.parent();
        while let Some(x) = p {
            if x.id() == rescue.id() {
                break;
            }
            if self.syn(file).ifs.contains(&x.kind()) {
                conditional = true;
            }
            p = x.parent();
        }
        let conditional = conditional || self.bound_check(file, rescue);
        let header = self.text(file, rescue).lines().next().unwrap_or("");
        let conditions = classify_or_any(header.trim_start_matches("rescue"));
        // `retry if attempts < N`, `raise if attempts >= N`: N attempts.
        let mut count = None;
        let mut stack = vec![rescue];
        while let Some(x) = stack.pop() {
            if count.is_some() {
                break;
            }
            if self.syn(file).ifs.contains(&x.kind()) {
                if let Some(cond) = x.child_by_field_name("condition") {
                    if let Some(right) = cond.child_by_field_name("right") {
                        let op = cond.child_by_field_name("operator").map_or("", |o| self.text(file, o));
                        if matches!(op, "<" | ">=" | ">") {
                            count = self.number(file, right);
                        }
                    }
                }
            }
            let mut c = x.walk();
            stack.extend(x.named_children(&mut c));
        }
        let (attempts, count_at) = match count {
            Some((v, at)) => (Attempts::Count(v), at),
            None if conditional => (Attempts::Bounded, None),
            None => (Attempts::Unbounded, None),
        };
        Some(Retry {
            form: Form::Loop,
            function: ctx.function.clone(),
            path: self.path(file).to_string(),
            line: line_of(rescue),
            end_line: line_of(r),
            attempts,
            jitter: Some(has_random(self.text(file, rescue))),
            conditions,
            count_at,
            reads_retry_after: reads_retry_after(self.text(file, n)),
            scope: (0, 0),
            origin: None,
            count_param: None,
            count_text: None,
            bound_sym: None,
        })
    }

    /// Go: whether an `if` checks an error: `Some(true)` for
    /// `err != nil` (its consequence is the failure path), `Some(false)`
    /// for `err == nil` (its consequence is the success path).
    fn err_check(&self, file: usize, n: Node<'_>) -> Option<bool> {
        let cond = n.child_by_field_name("condition")?;
        let t = self.text(file, cond);
        let lower = t.to_ascii_lowercase();
        if !lower.contains("err") {
            return None;
        }
        if t.contains("!= nil") {
            Some(true)
        } else if t.contains("== nil") {
            Some(false)
        } else {
            None
        }
    }

    /// Loops written as calls with a block.
    fn loop_call_retry(&self, file: usize, n: Node<'t>, callee: &str, ctx: &Ctx) -> Option<Retry> {
        let last = last_segment(callee);
        let g = self.grammar(file);
        let count = match (g, last) {
            (Grammar::Ruby, "times") => {
                let recv = receiver(callee);
                Some(recv.parse::<f64>().map_or(Attempts::Bounded, Attempts::Count))
            }
            (Grammar::Ruby, "loop") if receiver(callee).is_empty() => Some(Attempts::Unknown),
            (Grammar::Kotlin, "repeat") => Some(
                self.args(file, n)
                    .iter()
                    .find_map(|a| self.number(file, *a))
                    .map_or(Attempts::Bounded, |(v, _)| Attempts::Count(v)),
            ),
            _ => None,
        }?;
        let mut body = self.args(file, n).into_iter().rev().find(|a| self.is_callable(file, *a))?;
        while body.kind() == "annotated_lambda" {
            body = body.named_child(0)?;
        }
        self.loop_shape(file, n, body, count, ctx)
    }

    /// Whether a loop retries, and how.
    fn loop_retry(&self, file: usize, lp: Node<'t>, ctx: &Ctx) -> Option<Retry> {
        let g = self.grammar(file);
        // `for attempt in Retrying(..)`: the library's own iterator.
        if g == Grammar::Python && lp.kind() == "for_statement" {
            if let Some(right) = lp.child_by_field_name("right") {
                if right.kind() == "call" {
                    let c = self.callee(file, right);
                    if let Some(w) = self.data.wrappers.iter().find(|w| {
                        w.languages.iter().any(|l| l == "python")
                            && w.form.iter().any(|f| f == "iterator")
                            && w.names_callee(&c)
                    }) {
                        return Some(self.wrapper_retry(w, file, right, lp, ctx));
                    }
                }
            }
        }
        let body = lp.child_by_field_name("body").unwrap_or(lp);
        let mut bound = self.loop_bound(file, lp, body);
        if bound == Attempts::Unbounded && g == Grammar::Go && self.select_deadline(file, lp, body) {
            bound = Attempts::Bounded;
        }
        self.loop_shape(file, lp, body, bound, ctx)
    }

    /// A Go loop that leaves when a deadline fires: a `select` case on
    /// `time.After(..)`, or on a timer or a context the function made with
    /// a timeout or deadline (`deadline := time.After(15 * time.Minute)`,
    /// `tctx, cancel := context.WithTimeout(ctx, d)` .. `case <-tctx.Done()`).
    /// A bare `ctx.Done()` is no bound: the caller's context may never end.
    fn select_deadline(&self, file: usize, lp: Node<'_>, body: Node<'_>) -> bool {
        static CASE: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r"case\s*<-\s*([A-Za-z_][A-Za-z0-9_.]*(?:\([^)]*\))?)")
                .unwrap_or_else(|e| panic!("constant pattern: {e}"))
        });
        let around = self.enclosing_text(file, lp).unwrap_or("");
        let timed = |head: &str| {
            CASE.captures_iter(head).any(|c| {
                let chan = c.get(1).map_or("", |m| m.as_str());
                if chan.starts_with("time.After(") {
                    return true;
                }
                let name = chan.split(['.', '(']).next().unwrap_or("");
                !name.is_empty()
                    && around.lines().any(|l| {
                        let l = l.trim();
                        l.contains(":=")
                            && l.split(":=")
                                .next()
                                .is_some_and(|lhs| lhs.split(',').any(|v| v.trim() == name))
                            && ["time.After(", "time.NewTimer(", "WithTimeout(", "WithDeadline("]
                                .iter()
                                .any(|k| l.contains(k))
                    })
            })
        };
        // Only a case that leaves: `case <-time.After(backoff):` with an
        // empty body is the loop's sleep, not its deadline.
        self.any_in_body(file, body, |x| {
            x.kind() == "communication_case" && {
                let head = self.text(file, x).split_once(':').map_or("", |(h, _)| h);
                timed(head) && self.leaves(file, x)
            }
        })
    }

    /// Whether any node of `body`, outside the functions and lambdas it
    /// defines, is one `hit` says.
    fn any_in_body<'a>(&self, file: usize, body: Node<'a>, mut hit: impl FnMut(Node<'a>) -> bool) -> bool {
        let syn = self.syn(file);
        let mut stack = vec![(body, 0usize)];
        while let Some((x, d)) = stack.pop() {
            if d > MAX_NODE_DEPTH {
                continue;
            }
            if hit(x) {
                return true;
            }
            let mut c = x.walk();
            for ch in x.named_children(&mut c) {
                if !syn.is_function(ch.kind()) && !syn.is_lambda(ch.kind()) {
                    stack.push((ch, d + 1));
                }
            }
        }
        false
    }

    /// A loop retries when a failure goes round and success leaves; or,
    /// with no failure path, when it waits and leaves on a good status.
    fn loop_shape(
        &self,
        file: usize,
        lp: Node<'t>,
        body: Node<'t>,
        bound: Attempts,
        ctx: &Ctx,
    ) -> Option<Retry> {
        let (round, conditions, exit) = self.paths(file, body);
        let text = self.text(file, body);
        let sleeps = has_sleep(text);
        let collection = bound == Attempts::Bounded && self.iterates_collection(file, lp);
        // A counted loop that leaves on a good status re-sends at once when
        // it sleeps not: `for i in range(3): r = post(..); if r.ok: return`.
        let status_exit = exit == Exit::Conditional
            && (sleeps || (matches!(bound, Attempts::Count(_) | Attempts::Bounded) && !collection))
            && status_words(text)
            && !polls_a_state(text);
        // A loop with no bound that leaves only under a condition is a
        // long-lived worker, poll or dispatch loop, not a retry.
        let endless = matches!(bound, Attempts::Unbounded | Attempts::Unknown);
        // `while not sent:` .. `sent = True`: a flag the condition reads,
        // set in the body, is how success leaves.
        let flag_exit = self
            .loop_condition(file, lp)
            .is_some_and(|c| condition_assigned(self.text(file, c), self.text(file, body)));
        let is_retry = if collection || endless {
            round && (exit == Exit::Unconditional || flag_exit)
        } else {
            (round && (exit != Exit::None || flag_exit)) || status_exit
        };
        if !is_retry || self.enclosing_text(file, lp).is_some_and(waits_for_started_process) {
            return None;
        }
        let conditions = if round { conditions } else { BTreeSet::from([Condition::ServerError]) };
        let attempts = match bound {
            Attempts::Unbounded if exit != Exit::Unconditional && !round => Attempts::Unknown,
            b => b,
        };
        let count_at = self.loop_count_at(file, lp).or_else(|| {
            matches!(attempts, Attempts::Count(_))
                .then(|| self.body_bound(file, lp, body).and_then(|(_, at)| at))
                .flatten()
        });
        let count_text = self
            .bound_node(file, lp)
            .map(|b| self.text(file, b).trim_start_matches('$').to_string())
            .filter(|t| !t.is_empty() && t.chars().all(|c| c.is_alphanumeric() || c == '_'));
        Some(Retry {
            form: Form::Loop,
            function: ctx.function.clone(),
            path: self.path(file).to_string(),
            line: line_of(lp),
            end_line: lp.end_position().row as u32 + 1,
            attempts,
            jitter: Some(has_random(text)),
            conditions,
            count_at,
            reads_retry_after: reads_retry_after(self.text(file, lp)),
            scope: (0, 0),
            origin: None,
            count_param: None,
            count_text,
            bound_sym: self.symbolic_bound(file, lp),
        })
    }

    /// Whether the hand loop spanning `scope` can leave once the call `n`
    /// in it succeeds: a `return`/`break` after it on its own path (in the
    /// statements that follow it, in the branches of an `if` it is the
    /// condition of, in a `try`'s `else`/`finally`), the call returned
    /// itself, or an assignment after it to a name the loop's condition
    /// reads (`while not done:` .. `done = True`).
    /// An exit under an `if` in the statements that follow counts when the
    /// `if` tests what the call gave (a name assigned from it or after
    /// it) or an error or status: `if stopping: break` in a worker loop
    /// does not stop on success.
    /// A retry stops on success; a loop that only goes on to its next pass
    /// runs the call once per pass.
    fn success_leaves(&self, file: usize, scope: (usize, usize), n: Node<'t>) -> bool {
        let syn = self.syn(file);
        let is_loop = |p: Node<'_>| {
            (p.start_byte(), p.end_byte()) == scope
                && (syn.loops.contains(&p.kind()) || syn.is_call(p.kind()))
        };
        let mut lp = n.parent();
        while let Some(p) = lp.filter(|p| !is_loop(*p)) {
            lp = p.parent();
        }
        let condition =
            lp.filter(|p| syn.loops.contains(&p.kind())).and_then(|p| self.loop_condition(file, p));
        let condition_text = condition.map_or("", |c| self.text(file, c));
        let mut names: HashSet<String> = HashSet::new();
        let mut x = n;
        while let Some(p) = x.parent() {
            if is_loop(p) {
                return condition
                    .is_some_and(|c| x.start_byte() >= c.start_byte() && x.end_byte() <= c.end_byte());
            }
            let pk = p.kind();
            if matches!(jump_of(p, self.text(file, p)), Some(Jump::Return | Jump::Break)) {
                return true;
            }
            if syn.ifs.contains(&pk) {
                let from_condition = ["condition", "initializer"]
                    .iter()
                    .filter_map(|f| p.child_by_field_name(f))
                    .any(|c| c.id() == x.id());
                if from_condition {
                    let mut c = p.walk();
                    let kids: Vec<Node<'t>> = p.named_children(&mut c).collect();
                    if kids.iter().any(|k| k.id() != x.id() && self.exits_loop(file, *k, None)) {
                        return true;
                    }
                }
            } else if !syn.catches.contains(&pk) && !branches(pk) {
                names.extend(assigned_names(self.text(file, x)));
                let try_like = pk.contains("try") || pk == "begin";
                let mut next = x.next_named_sibling();
                while let Some(s) = next {
                    let sk = s.kind();
                    let on_success_path =
                        !try_like || sk.contains("else") || sk.contains("finally") || sk.contains("ensure");
                    if on_success_path
                        && (self.exits_loop(file, s, Some(&names))
                            || !condition_text.is_empty()
                                && condition_assigned(condition_text, self.text(file, s)))
                    {
                        return true;
                    }
                    names.extend(assigned_names(self.text(file, s)));
                    next = s.next_named_sibling();
                }
            }
            x = p;
        }
        false
    }

    /// Whether `n` holds a `return`, or a `break` of the loop it is in
    /// (not of a loop, `switch` or `select` inside it), outside nested
    /// functions. Given `names`, an exit under an `if` counts only when
    /// that `if` tests one of them or an error or status.
    fn exits_loop(&self, file: usize, n: Node<'_>, names: Option<&HashSet<String>>) -> bool {
        let syn = self.syn(file);
        let go = self.grammar(file) == Grammar::Go;
        // (node, a break here leaves only something inside, guarded by a
        // test of something else, depth)
        let mut stack = vec![(n, false, false, 0usize)];
        while let Some((x, inner, guarded, d)) = stack.pop() {
            if d > 80 {
                continue;
            }
            let k = x.kind();
            if x.id() != n.id() && (syn.is_function(k) || syn.is_lambda(k) || syn.catches.contains(&k)) {
                continue;
            }
            match jump_of(x, self.text(file, x)) {
                Some(Jump::Return) if !guarded => return true,
                Some(Jump::Break) if !guarded && (!inner || x.named_child_count() > 0) => return true,
                Some(_) => continue,
                None => {}
            }
            let nested = syn.loops.contains(&k)
                || (go
                    && matches!(
                        k,
                        "select_statement" | "expression_switch_statement" | "type_switch_statement"
                    ))
                || matches!(k, "switch_statement" | "switch_expression");
            let guards = names.is_some()
                && (syn.ifs.contains(&k) || nested && !syn.loops.contains(&k))
                && !x
                    .child_by_field_name("condition")
                    .or_else(|| x.child_by_field_name("value"))
                    .is_some_and(|c| tests_result(self.text(file, c), names.unwrap_or(&HashSet::new())));
            let mut c = x.walk();
            for ch in x.named_children(&mut c) {
                stack.push((ch, inner || nested, guarded || guards, d + 1));
            }
        }
        false
    }

    /// Whether a bounded loop walks a collection (`for url in urls`).
    fn iterates_collection(&self, file: usize, lp: Node<'_>) -> bool {
        match lp.kind() {
            "for_statement" if self.grammar(file) == Grammar::Python => {
                lp.child_by_field_name("right").is_none_or(|r| {
                    !(r.kind() == "call"
                        && matches!(self.callee(file, r).as_str(), "range" | "itertools.count" | "count"))
                })
            }
            "for_statement" if self.grammar(file) == Grammar::Kotlin => {
                let t = self.text(file, lp);
                let header = t.split_once('{').map_or(t, |(h, _)| h);
                !(header.contains("..") || header.contains(" until "))
            }
            "for_in_statement" | "enhanced_for_statement" | "foreach_statement" | "for" => true,
            "for_statement" if self.grammar(file) == Grammar::Go => {
                let mut c = lp.walk();
                let found = lp.named_children(&mut c).any(|ch| ch.kind() == "range_clause")
                    && !self.text(file, lp).lines().next().unwrap_or("").contains("range retr");
                (found && self.go_range_count(file, lp).is_none()) || self.indexes_a_collection(file, lp)
            }
            "for_statement" => self.indexes_a_collection(file, lp),
            _ => false,
        }
    }

    /// A counted loop over a collection's indexes (`for (let i = 0; i <
    /// items.length; i++)`, `i < list.size()`, `i < len(xs)`): one pass per
    /// element, not attempts.
    fn indexes_a_collection(&self, file: usize, lp: Node<'_>) -> bool {
        let t = self.text(file, lp);
        let header = t.split_once('{').map_or(t, |(h, _)| h);
        let header = header.lines().next().unwrap_or(header);
        [".length", ".size()", ".Count", ".Length", "len(", "count(", ".size"]
            .iter()
            .any(|w| header.contains(w))
    }

    fn go_range_count(&self, file: usize, lp: Node<'_>) -> Option<(f64, Option<(String, u32)>)> {
        let mut c = lp.walk();
        let rc = lp.named_children(&mut c).find(|ch| ch.kind() == "range_clause")?;
        let right = rc.child_by_field_name("right")?;
        self.number(file, right)
    }

    /// Where a counted loop's bound is written, when it was followed.
    fn loop_count_at(&self, file: usize, lp: Node<'_>) -> Option<(String, u32)> {
        let n = self.bound_node(file, lp)?;
        self.number(file, n).and_then(|(_, at)| at)
    }

    /// The expression that bounds a counted loop (`N` of `range(N)` or
    /// `i < N`).
    fn bound_node<'a>(&self, file: usize, lp: Node<'a>) -> Option<Node<'a>> {
        let g = self.grammar(file);
        if g == Grammar::Python {
            let right = lp.child_by_field_name("right")?;
            let args = right.child_by_field_name("arguments")?;
            let c = args.named_child_count();
            return args.named_child(c.checked_sub(1)?);
        }
        let cond = self.loop_condition(file, lp)?;
        if matches!(
            cond.kind(),
            "binary_expression" | "comparison_operator" | "infix_expression" | "comparison_expression"
        ) {
            let op = cond.child_by_field_name("operator").map(|o| self.text(file, o)).unwrap_or("");
            let op = if op.is_empty() { self.text(file, cond) } else { op };
            if op.contains('<') {
                return cond
                    .child_by_field_name("right")
                    .or_else(|| cond.named_child(cond.named_child_count().saturating_sub(1)));
            }
        }
        None
    }

    /// A counted loop's bound as a name plus a constant, for a bound whose
    /// value is not in the files read (`range(self.max_retries + 1)`,
    /// `i <= cfg.retries`, `for i := 1; i <= n; i++`): the attempts are the
    /// name's value plus the constant.
    fn symbolic_bound(&self, file: usize, lp: Node<'_>) -> Option<(String, f64)> {
        let g = self.grammar(file);
        let n = self.bound_node(file, lp)?;
        let mut offset = 0.0;
        if g == Grammar::Python {
            // `range(a, N)` goes round N - a times.
            let args = lp.child_by_field_name("right")?.child_by_field_name("arguments")?;
            if args.named_child_count() == 2 {
                offset -= self.number(file, args.named_child(0)?)?.0;
            }
        } else {
            let header = self.text(file, lp);
            let header = header.split_once('{').map_or(header, |(h, _)| h);
            offset -= header
                .split_once('=')
                .and_then(|(_, r)| r.trim_start().split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|d| d.parse::<f64>().ok())
                .unwrap_or(0.0);
            if self.loop_condition(file, lp).is_some_and(|c| self.text(file, c).contains("<=")) {
                offset += 1.0;
            }
        }
        let mut t: String = self.text(file, n).chars().filter(|c| !c.is_whitespace()).collect();
        while t.starts_with('(') && t.ends_with(')') && crate::text::brackets_balanced(&t[1..t.len() - 1]) {
            t = t[1..t.len() - 1].to_string();
        }
        let split = t.rfind(['+', '-']).filter(|&i| i > 0).and_then(|i| {
            let k = t[i + 1..].parse::<f64>().ok()?;
            let name = &t[..i];
            (crate::text::brackets_balanced(name) && !name.ends_with(['+', '-', '*', '/'])).then(|| {
                let k = if t.as_bytes()[i] == b'-' { -k } else { k };
                (name.to_string(), k)
            })
        });
        let (name, k) = split.unwrap_or((t, 0.0));
        if name.is_empty() || name.parse::<f64>().is_ok() || !name.chars().any(char::is_alphabetic) {
            return None;
        }
        Some((name, offset + k))
    }

    fn loop_condition<'a>(&self, file: usize, lp: Node<'a>) -> Option<Node<'a>> {
        if let Some(c) = lp.child_by_field_name("condition") {
            // JavaScript's `for (;cond;)` holds an expression statement.
            let c = if c.kind() == "expression_statement" && c.named_child_count() == 1 {
                c.named_child(0).unwrap_or(c)
            } else {
                c
            };
            return Some(unparen(c));
        }
        if self.grammar(file) == Grammar::Go {
            let mut c = lp.walk();
            let kids: Vec<Node<'a>> = lp.named_children(&mut c).collect();
            for ch in kids {
                if ch.kind() == "for_clause" {
                    return ch.child_by_field_name("condition");
                }
                if ch.kind() != "block" && ch.kind() != "range_clause" && ch.kind() != "comment" {
                    return Some(ch);
                }
            }
        }
        None
    }

    /// How many times a loop can go round.
    fn loop_bound(&self, file: usize, lp: Node<'t>, body: Node<'t>) -> Attempts {
        let g = self.grammar(file);
        let k = lp.kind();
        if g == Grammar::Python && k == "for_statement" {
            let Some(right) = lp.child_by_field_name("right") else { return Attempts::Bounded };
            if right.kind() == "call"
                && matches!(self.callee(file, right).as_str(), "itertools.count" | "count")
            {
                return if self.bound_check(file, body) { Attempts::Bounded } else { Attempts::Unbounded };
            }
            if right.kind() == "call" && self.callee(file, right) == "range" {
                let args: Vec<Node<'t>> = right.child_by_field_name("arguments").map_or(Vec::new(), |a| {
                    let mut c = a.walk();
                    a.named_children(&mut c).collect()
                });
                let nums: Vec<Option<f64>> =
                    args.iter().map(|a| self.number(file, *a).map(|x| x.0)).collect();
                return match nums.as_slice() {
                    [Some(n)] => Attempts::Count(*n),
                    [Some(a), Some(b)] => Attempts::Count(b - a),
                    _ => Attempts::Bounded,
                };
            }
            return Attempts::Bounded;
        }
        if matches!(k, "for_in_statement" | "enhanced_for_statement" | "foreach_statement" | "for") {
            return Attempts::Bounded;
        }
        if g == Grammar::Go && k == "for_statement" {
            if let Some((n, _)) = self.go_range_count(file, lp) {
                return Attempts::Count(n);
            }
            let mut c = lp.walk();
            if lp.named_children(&mut c).any(|ch| ch.kind() == "range_clause") {
                return Attempts::Bounded;
            }
        }
        if g == Grammar::Kotlin && k == "for_statement" {
            return self.kotlin_range(file, lp);
        }
        if g == Grammar::Python && k == "for_statement" {
            return Attempts::Bounded;
        }
        let cond = self.loop_condition(file, lp);
        let infinite = match cond {
            None => true,
            Some(c) => {
                let t = self.text(file, c).trim().trim_matches(['(', ')', ';']).trim();
                matches!(t, "true" | "True" | "1" | "TRUE" | "")
            }
        };
        if infinite {
            return if self.loop_bound_check(file, lp, body) {
                self.body_bound(file, lp, body).map_or(Attempts::Bounded, |(n, _)| Attempts::Count(n))
            } else {
                Attempts::Unbounded
            };
        }
        if let Some(n) = self.bound_node(file, lp) {
            if let Some((v, _)) = self.number(file, n) {
                let header = self.text(file, lp);
                let start = header
                    .split_once('=')
                    .and_then(|(_, r)| r.trim_start().split(|c: char| !c.is_ascii_digit()).next())
                    .and_then(|d| d.parse::<f64>().ok())
                    .unwrap_or(0.0);
                let cond_text = cond.map(|c| self.text(file, c)).unwrap_or("");
                let inclusive = cond_text.contains("<=");
                let count = v - start + if inclusive { 1.0 } else { 0.0 };
                if count >= 1.0 {
                    if self.uncounted_failure(file, body, cond_text) {
                        return Attempts::Unbounded;
                    }
                    return Attempts::Count(count);
                }
            }
        }
        let t = cond.map(|c| self.text(file, c)).unwrap_or("");
        if (t.contains('<') || t.contains('>')) && !has_time(t) && self.uncounted_failure(file, body, t) {
            return Attempts::Unbounded;
        }
        if t.contains('<') || t.contains('>') || t.contains("--") || has_time(t) {
            return Attempts::Bounded;
        }
        if self.bound_check(file, body) {
            Attempts::Bounded
        } else {
            Attempts::Unknown
        }
    }

    /// Whether a loop counted by its condition (`while attempt < N`) has
    /// a failure path that goes round without counting: the counter is
    /// moved only inside some `except`/`catch` arms, and another arm
    /// neither moves it nor leaves (`except RateLimited: sleep(..)`), so
    /// that failure is retried with no bound.
    fn uncounted_failure(&self, file: usize, body: Node<'_>, cond: &str) -> bool {
        let counter = cond
            .split(['<', '>', '='])
            .map(str::trim)
            .find(|s| {
                !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '$')
            })
            .unwrap_or("");
        if counter.is_empty() || counter.chars().all(|c| c.is_ascii_digit()) {
            return false;
        }
        let moves = |text: &str| {
            let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            [
                format!("{counter}+="),
                format!("{counter}-="),
                format!("{counter}++"),
                format!("++{counter}"),
                format!("{counter}--"),
                format!("{counter}={counter}+"),
            ]
            .iter()
            .any(|p| t.contains(p.as_str()))
        };
        let syn = self.syn(file);
        let mut catches = Vec::new();
        let mut stack = vec![(body, 0usize)];
        while let Some((x, d)) = stack.pop() {
            if d > 12
                || syn.is_function(x.kind())
                || syn.is_lambda(x.kind())
                || (x.id() != body.id() && syn.loops.contains(&x.kind()))
            {
                continue;
            }
            if syn.catches.contains(&x.kind()) {
                catches.push(x);
                continue;
            }
            let mut c = x.walk();
            stack.extend(x.named_children(&mut c).map(|ch| (ch, d + 1)));
        }
        if catches.is_empty() {
            return false;
        }
        // Outside the arms: the text of the body with the arms cut out.
        let whole = self.text(file, body);
        let base = body.start_byte();
        let mut outside = String::new();
        let mut at = 0;
        catches.sort_by_key(|c| c.start_byte());
        for c in &catches {
            let (a, b) = (c.start_byte() - base, c.end_byte() - base);
            if a >= at && b <= whole.len() {
                outside.push_str(&whole[at..a]);
                at = b;
            }
        }
        outside.push_str(&whole[at.min(whole.len())..]);
        if moves(&outside) {
            return false;
        }
        let counted = catches.iter().filter(|c| moves(self.text(file, **c))).count();
        counted > 0 && catches.iter().any(|c| !moves(self.text(file, *c)) && !self.leaves(file, *c))
    }

    /// A Kotlin `for (i in a until b)`, `a..b`, `a..<b` or over a
    /// collection.
    fn kotlin_range(&self, file: usize, lp: Node<'_>) -> Attempts {
        let text = self.text(file, lp);
        let header = text.split_once('{').map_or(text, |(h, _)| h);
        let Some((_, range)) = header.split_once(" in ") else { return Attempts::Bounded };
        let range = range.trim().trim_end_matches(')').trim();
        let num = |t: &str| t.trim().replace('_', "").parse::<f64>().ok();
        let (a, b, plus) = if let Some((a, b)) = range.split_once(" until ") {
            (a, b, 0.0)
        } else if let Some((a, b)) = range.split_once("..<") {
            (a, b, 0.0)
        } else if let Some((a, b)) = range.split_once("..") {
            (a, b, 1.0)
        } else {
            return Attempts::Bounded;
        };
        match (num(a.trim_start_matches('(')), num(b)) {
            (Some(a), Some(b)) => Attempts::Count(b - a + plus),
            _ => Attempts::Bounded,
        }
    }

    /// Whether a body leaves on a counter or a deadline: an `if` whose
    /// condition reads a name the body counts, or the clock, and that
    /// leaves the loop.
    fn bound_check(&self, file: usize, body: Node<'_>) -> bool {
        self.bound_check_with(file, body, "")
    }

    /// [`Self::bound_check`] for a loop's body, with the loop's header
    /// (`for retries := 1; ; retries++`): a counter moved there counts.
    fn loop_bound_check(&self, file: usize, lp: Node<'_>, body: Node<'_>) -> bool {
        let whole = self.text(file, lp);
        let head_len = body.start_byte().saturating_sub(lp.start_byte()).min(whole.len());
        self.bound_check_with(file, body, whole.get(..head_len).unwrap_or(""))
    }

    /// The count a loop with no bound in its header leaves at: an `if`
    /// in its body that compares a counter the loop moves with a value and
    /// leaves (`if attempt >= MAX_ATTEMPTS: raise`), the value followed to
    /// where it is written, so a count raised there is seen.
    fn body_bound(&self, file: usize, lp: Node<'_>, body: Node<'_>) -> Option<(f64, Option<(String, u32)>)> {
        let whole = self.text(file, lp);
        let head_len = body.start_byte().saturating_sub(lp.start_byte()).min(whole.len());
        let header = whole.get(..head_len).unwrap_or("");
        let counters = loop_counters(self.text(file, body), header);
        let syn = self.syn(file);
        let mut found = None;
        self.any_in_body(file, body, |x| {
            if !syn.ifs.contains(&x.kind()) || !self.leaves(file, x) {
                return false;
            }
            let Some(cond) = x.child_by_field_name("condition") else { return false };
            let mut cond = cond;
            // `if (a >= b)`: the parentheses around it.
            while cond.kind().contains("parenthesized") && cond.named_child_count() == 1 {
                match cond.named_child(0) {
                    Some(c) => cond = c,
                    None => break,
                }
            }
            if !matches!(
                cond.kind(),
                "binary_expression" | "comparison_operator" | "infix_expression" | "comparison_expression"
            ) || !(self.text(file, cond).contains('<') || self.text(file, cond).contains('>'))
            {
                return false;
            }
            let (Some(a), Some(b)) =
                (cond.named_child(0), cond.named_child(cond.named_child_count().saturating_sub(1)))
            else {
                return false;
            };
            let is_counter = |n: Node<'_>| counters.contains(self.text(file, n).trim());
            let other = if is_counter(a) {
                b
            } else if is_counter(b) {
                a
            } else {
                return false;
            };
            found = self.number_at(file, other).filter(|(v, _)| *v >= 1.0);
            found.is_some()
        });
        found
    }

    fn bound_check_with(&self, file: usize, body: Node<'_>, header: &str) -> bool {
        let text = self.text(file, body);
        let counters = loop_counters(text, header);
        let syn = self.syn(file);
        let mut flags = self.failure_flags(file, body);
        flags.extend(delegated_decisions(text, &counters));
        self.any_in_body(file, body, |x| {
            // `misc.Assert(retries < max)`, `Preconditions.checkState(n <= 5)`:
            // an assertion on the counter ends the loop by panicking.
            if syn.is_call(x.kind()) {
                let callee = self.callee(file, x);
                let w = words(last_segment(&callee));
                let asserts = w
                    .first()
                    .is_some_and(|f| matches!(f.as_str(), "assert" | "must" | "require" | "invariant"))
                    || w.iter().any(|x| x == "assert")
                    || matches!(w.as_slice(), [a, b] if a == "check" && (b == "state" || b == "argument"));
                if asserts {
                    let args = x.child_by_field_name("arguments").map(|a| self.text(file, a)).unwrap_or("");
                    return counters
                        .iter()
                        .any(|c| names_whole(args, c) && (args.contains('<') || args.contains('>')));
                }
                return false;
            }
            if !(syn.ifs.contains(&x.kind()) || matches!(x.kind(), "while_modifier" | "until_modifier")) {
                return false;
            }
            let cond = x.child_by_field_name("condition").map(|c| self.text(file, c)).unwrap_or("");
            // The counter as a whole name: `i` is not in `err == nil`.
            let reads = counters.iter().any(|c| {
                names_whole(cond, c) && (cond.contains('<') || cond.contains('>') || cond.contains("=="))
            }) || has_time(cond)
                || counters.iter().any(|c| decides_on(cond, c))
                || flags.iter().any(|f| names_whole(cond, f));
            reads && self.leaves(file, x)
        })
    }

    /// Names a failure path (a `catch`/`except`/`rescue` clause) sets to a
    /// boolean (`retried = true`, `self._override_get = True`): a test of
    /// one that leaves bounds the retry, since the next failure finds it
    /// set. A flag set on success (`ok = True` after the call) is not one.
    fn failure_flags(&self, file: usize, body: Node<'_>) -> Vec<String> {
        static FLAG: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r"(\$?[A-Za-z_][\w.]*(?:->[A-Za-z_]\w*)?)\s*=\s*(?:true|false|True|False)\b")
                .unwrap_or_else(|e| panic!("constant pattern: {e}"))
        });
        let syn = self.syn(file);
        let mut out = Vec::new();
        self.any_in_body(file, body, |x| {
            if syn.catches.contains(&x.kind()) {
                out.extend(
                    FLAG.captures_iter(self.text(file, x))
                        .filter_map(|c| c.get(1))
                        .map(|m| m.as_str().to_string()),
                );
            }
            false
        });
        out
    }

    /// Whether `n` holds a jump out (return, throw, break).
    fn leaves(&self, file: usize, n: Node<'_>) -> bool {
        let mut stack = vec![(n, 0usize)];
        while let Some((x, d)) = stack.pop() {
            if d > 60 {
                continue;
            }
            if let Some(j) = jump_of(x, self.text(file, x)) {
                if j != Jump::Continue {
                    return true;
                }
            }
            let mut c = x.walk();
            stack.extend(x.named_children(&mut c).map(|ch| (ch, d + 1)));
        }
        false
    }

    /// A loop body's failure paths and success exits: whether a failure
    /// goes round, what it goes round on, and how success leaves.
    fn paths(&self, file: usize, body: Node<'t>) -> (bool, BTreeSet<Condition>, Exit) {
        let syn = self.syn(file);
        let go = self.grammar(file) == Grammar::Go;
        let mut round = false;
        let mut conditions = BTreeSet::new();
        let mut exit = Exit::None;
        // (node, inside a failure path, inside a condition, depth)
        let mut stack = vec![(body, false, false, 0usize)];
        while let Some((x, failing, cond, d)) = stack.pop() {
            if d > MAX_NODE_DEPTH {
                continue;
            }
            let k = x.kind();
            if x.id() != body.id() && (syn.is_function(k) || syn.is_lambda(k) || syn.loops.contains(&k)) {
                continue;
            }
            if syn.catches.contains(&k) {
                let body_of = x
                    .child_by_field_name("body")
                    .or_else(|| x.named_child(x.named_child_count().saturating_sub(1)));
                let ends = body_of.is_some_and(|b| self.ends_with_exit(file, b));
                let head_end = body_of.map_or(x.end_byte(), |b| b.start_byte());
                let header = self.world.files[file].file.text.get(x.start_byte()..head_end).unwrap_or("");
                if !ends || self.text(file, x).contains("retry") && self.grammar(file) == Grammar::Ruby {
                    round = true;
                    conditions.extend(self.catch_conditions(file, header, body_of));
                } else if let Some(guards) = body_of.and_then(|b| self.guarded_continues(file, b)) {
                    // `except E as e: if retryable(e): continue; raise`:
                    // the rethrow is the last word, the guarded `continue`
                    // goes round on what its guard names.
                    round = true;
                    let named = classify_in(self.grammar(file), &guards);
                    conditions.extend(if named.is_empty() {
                        self.catch_conditions(file, header, body_of)
                    } else {
                        named
                    });
                }
                continue;
            }
            if go && syn.ifs.contains(&k) {
                match self.err_check(file, x) {
                    Some(true) => {
                        let cq = x.child_by_field_name("consequence");
                        let goes = cq.is_some_and(|b| {
                            let t = self.text(file, b);
                            t.contains("continue") || !self.ends_with_exit(file, b)
                        });
                        if goes {
                            round = true;
                            let cond_text =
                                x.child_by_field_name("condition").map(|c| self.text(file, c)).unwrap_or("");
                            conditions.extend(classify_or_any(cond_text.replace("err != nil", "").as_str()));
                        }
                        if let Some(alt) = x.child_by_field_name("alternative") {
                            stack.push((alt, failing, true, d + 1));
                        }
                        continue;
                    }
                    Some(false) => {
                        if let Some(cq) = x.child_by_field_name("consequence") {
                            if self.leaves(file, cq) {
                                exit = exit.max(Exit::Unconditional);
                                round = true;
                                conditions.insert(Condition::Any);
                            }
                        }
                        continue;
                    }
                    None => {}
                }
            }
            if !failing {
                if let Some(j) = jump_of(x, self.text(file, x)) {
                    if matches!(j, Jump::Return | Jump::Break) {
                        exit = exit.max(if cond { Exit::Conditional } else { Exit::Unconditional });
                    }
                    // A `continue` under a condition on the answer that
                    // waits first: the status path of a retry.
                    if j == Jump::Continue {
                        if let Some((cond_text, block)) = self.enclosing_if(file, x, body) {
                            let c = classify_in(self.grammar(file), cond_text);
                            if !c.is_empty() || has_sleep(block) {
                                round = true;
                                conditions.extend(if c.is_empty() {
                                    BTreeSet::from([Condition::Any])
                                } else {
                                    c
                                });
                            }
                        }
                    }
                    continue;
                }
            }
            let is_cond = syn.ifs.contains(&k)
                || matches!(
                    k,
                    "switch_statement"
                        | "match_statement"
                        | "case"
                        | "when"
                        | "expression_switch_statement"
                        | "switch_expression"
                        | "if_modifier"
                        | "unless_modifier"
                        | "unless"
                );
            let mut c = x.walk();
            for ch in x.named_children(&mut c) {
                // An `if`'s condition is not a branch; its blocks are.
                let in_cond = cond
                    || (is_cond && x.child_by_field_name("condition").is_none_or(|cn| cn.id() != ch.id()));
                stack.push((ch, failing, in_cond, d + 1));
            }
        }
        (round, conditions, exit)
    }

    /// The conditions of the `if`s guarding each `continue` in a catch
    /// clause's `body` (not in a nested loop or function), joined; `None`
    /// when no `continue` is there.
    fn guarded_continues(&self, file: usize, body: Node<'t>) -> Option<String> {
        let syn = self.syn(file);
        let mut found: Option<String> = None;
        let mut stack = vec![(body, 0usize)];
        while let Some((x, d)) = stack.pop() {
            if d > MAX_NODE_DEPTH
                || syn.is_function(x.kind())
                || syn.is_lambda(x.kind())
                || syn.loops.contains(&x.kind())
            {
                continue;
            }
            if jump_of(x, self.text(file, x)) == Some(Jump::Continue) {
                let (cond, _) = self.enclosing_if(file, x, body).unwrap_or(("", ""));
                let all = found.get_or_insert_with(String::new);
                all.push(' ');
                all.push_str(cond);
                continue;
            }
            let mut c = x.walk();
            stack.extend(x.named_children(&mut c).map(|ch| (ch, d + 1)));
        }
        found
    }

    /// The condition and text of the nearest `if` around `n` inside `body`.
    fn enclosing_if(&self, file: usize, n: Node<'t>, body: Node<'t>) -> Option<(&'w str, &'w str)> {
        let syn = self.syn(file);
        let mut p = n.parent();
        while let Some(x) = p {
            if x.id() == body.id() {
                return None;
            }
            if syn.ifs.contains(&x.kind()) {
                let cond = x.child_by_field_name("condition").map_or("", |c| self.text(file, c));
                return Some((cond, self.text(file, x)));
            }
            p = x.parent();
        }
        None
    }

    /// What a catch clause retries on: a C# `when` filter, else a guard at
    /// the top of its body that rethrows what it does not retry (with the
    /// statements before it, which often compute the test), else the
    /// types it catches.
    fn catch_conditions(&self, file: usize, header: &str, body: Option<Node<'t>>) -> BTreeSet<Condition> {
        let g = self.grammar(file);
        if let Some((_, filter)) = header.split_once(" when ") {
            let c = classify_in(g, filter);
            if !c.is_empty() {
                return c;
            }
        }
        let header_set = {
            let c = classify_in(g, header);
            if c.is_empty() {
                BTreeSet::from([Condition::Any])
            } else {
                c
            }
        };
        if let Some(b) = body {
            let syn = self.syn(file);
            let mut c = b.walk();
            let stmts: Vec<Node<'t>> = b.named_children(&mut c).filter(|s| s.kind() != "comment").collect();
            for st in stmts.iter().take(4) {
                let guard_kind = syn.ifs.contains(&st.kind())
                    || matches!(st.kind(), "if_modifier" | "unless_modifier" | "unless");
                if !guard_kind {
                    continue;
                }
                let cq = st.child_by_field_name("consequence").or_else(|| st.child_by_field_name("body"));
                let rethrows = cq.map_or(self.text(file, *st), |cq| self.text(file, cq));
                if !["throw", "raise", "rethrow"].iter().any(|w| rethrows.contains(w)) {
                    continue;
                }
                let cond = st.child_by_field_name("condition").map_or("", |c| self.text(file, c));
                let before =
                    self.world.files[file].file.text.get(b.start_byte()..st.start_byte()).unwrap_or("");
                let unless = matches!(st.kind(), "unless_modifier" | "unless");
                if let Some(r) = guard_retried(g, &header_set, cond, before, unless) {
                    return r;
                }
                break;
            }
        }
        // An untyped catch (`catch (e)`, `except:`, `rescue => e`) takes
        // every failure; so does a type retrygate does not know.
        header_set
    }

    /// Whether a block's last statement leaves (return, throw, break).
    fn ends_with_exit(&self, file: usize, block: Node<'_>) -> bool {
        let mut last = block;
        loop {
            let mut kids = Vec::new();
            let mut cur = last.walk();
            for ch in last.named_children(&mut cur) {
                if ch.kind() != "comment" {
                    kids.push(ch);
                }
            }
            let Some(l) = kids.last().copied() else { break };
            if let Some(j) = jump_of(l, self.text(file, l)) {
                return j != Jump::Continue;
            }
            if matches!(
                l.kind(),
                "block"
                    | "statement_block"
                    | "body_statement"
                    | "then"
                    | "expression_statement"
                    | "statements"
                    | "compound_statement"
                    | "statement_list"
            ) {
                last = l;
                continue;
            }
            // The exception variable of a catch clause is not its body.
            break;
        }
        false
    }

    /// Each file's definition spans, sorted by first line: for
    /// the scope `finish` gives each retry.
    fn spans(&self) -> HashMap<&'w str, Vec<(u32, u32)>> {
        let mut out: HashMap<&str, Vec<(u32, u32)>> = HashMap::new();
        for defs in self.defs.values() {
            for (f, n) in defs {
                out.entry(self.path(*f)).or_default().push((line_of(*n), n.end_position().row as u32 + 1));
            }
        }
        for v in out.values_mut() {
            v.sort_unstable();
        }
        out
    }

    /// The HTTP method a call passes to a definition that takes one (a
    /// parameter named `method` or `verb`): the first argument that is a
    /// method literal (`'GET'`, `http.MethodPost`, `:patch`).
    fn passed_method(&self, file: usize, call: Node<'t>, def_file: usize, def: Node<'t>) -> Option<String> {
        let params = self.param_order(def_file, def);
        let takes = params.iter().any(|p| {
            let w = words(p);
            w.iter().any(|x| x == "method" || x == "verb")
        });
        if takes {
            return self.args(file, call).iter().find_map(|a| method_literal(self.text(file, *a)));
        }
        // A function given a request built by its caller (`a.do(ctx, req)`
        // after `http.NewRequest(http.MethodPost, ..)`) sends the method the
        // caller built it with, when the caller's code names only one.
        let takes_request = params.iter().any(|p| {
            let w = words(p);
            p == "r" || w.iter().any(|x| x == "req" || x == "request")
        });
        let passes_request = self.args(file, call).iter().any(|a| {
            let t = self.text(file, *a);
            t == "r" || words(t).iter().any(|x| x == "req" || x == "request")
        });
        if takes_request && passes_request {
            return self.enclosing_text(file, call).and_then(|t| self.method_in_text(t));
        }
        None
    }

    /// The write method the callers of a function give it, when the
    /// function takes the method as a parameter (named `method` or `verb`)
    /// and a call of it in the files read passes POST or PATCH
    /// (`http.MethodPost`, `"POST"`, `:patch`, `HttpMethod.POST`).
    fn method_from_callers(&self, name: &str) -> Option<String> {
        let defs = self.defs.get(name)?;
        let takes_method = defs.iter().any(|(f, d)| {
            self.param_order(*f, *d).iter().any(|p| super::syntax::carries_method_or_request(p))
        });
        if !takes_method {
            return None;
        }
        (0..self.world.files.len()).find_map(|f| write_method_passed(&self.world.files[f].file.text, name))
    }

    fn finish(mut self) -> Model {
        let files: HashSet<String> = (0..self.world.files.len()).map(|f| self.path(f).to_string()).collect();
        let mut functions = HashSet::new();
        for defs in self.defs.values() {
            for (f, n) in defs {
                functions.insert(self.qual_name(*f, *n));
            }
        }
        let spans = self.spans();
        // The innermost definition around a line: the nearest spans that
        // start at or before it (a bounded look back).
        let scoped = |_: &Walker<'_, '_>, r: &mut Retry| {
            if r.scope != (0, 0) {
                return;
            }
            r.scope = (r.line, r.line);
            let Some(v) = spans.get(r.path.as_str()) else { return };
            let i = v.partition_point(|&(a, _)| a <= r.line);
            if let Some(&(a, b)) = v[..i].iter().rev().take(64).find(|&&(a, b)| a <= r.line && r.line <= b) {
                r.scope = (a, b);
            }
        };
        let mut ops = std::mem::take(&mut self.ops);
        // A request of unknown method in a function that takes the method
        // (`doRequest(ctx, method, path, body)`): its callers say it.
        let mut by_callers: HashMap<String, Option<String>> = HashMap::new();
        let mut from_callers: HashSet<(String, u32)> = HashSet::new();
        for (op, retry) in ops.iter_mut() {
            if op.method != Method::Unknown {
                continue;
            }
            // The function that sends it, then the one that retries it: a
            // transport's `Do(req)` that retries `c.do(req)` is called with
            // the request by code that built it with its method.
            let last = |f: &str| f.rsplit(['.', ':']).next().unwrap_or(f).to_string();
            let mut names = vec![last(&op.function)];
            if let Some(r) = retry.as_ref().map(|r| last(&r.function)).filter(|r| !names.contains(r)) {
                names.push(r);
            }
            let found = names.iter().find_map(|name| {
                by_callers.entry(name.clone()).or_insert_with(|| self.method_from_callers(name)).clone()
            });
            if let Some(m) = found {
                op.method = Method::Write(m);
                from_callers.insert((op.path.clone(), op.line));
            } else if op.any_method
                && !names.iter().any(|name| {
                    (0..self.world.files.len())
                        .any(|f| read_method_passed(&self.world.files[f].file.text, name))
                })
            {
                // No caller in the files says which method: a transport,
                // which sends writes among the rest.
                op.method = Method::Write(ANY_METHOD.into());
            }
        }
        for (_, r) in ops.iter_mut() {
            if let Some(r) = r {
                scoped(&self, r);
            }
        }
        let mut rs = std::mem::take(&mut self.retries);
        for r in rs.iter_mut() {
            scoped(&self, r);
        }
        // Client-wide policies cover the requests sent through a client in
        // their file (their package, in Go).
        let clients = std::mem::take(&mut self.clients);
        let mut through_clients = Vec::new();
        for c in &clients {
            let mut r = c.retry.clone();
            scoped(&self, &mut r);
            let in_scope = |p: &str| match &c.package {
                Some(dir) => p.rsplit_once('/').map_or("", |(d, _)| d) == dir.as_str(),
                None => p == r.path,
            };
            let texts: Vec<&str> = (0..self.world.files.len())
                .filter(|f| in_scope(self.path(*f)))
                .map(|f| self.world.files[f].file.text.as_str())
                .collect();
            // Held under names it could be followed to: the requests sent
            // through them. None told: every request in its scope.
            let names = if c.seeds.is_empty() { Vec::new() } else { client_names(c, &texts) };
            let senders = self_senders(c, &texts);
            if !c.seeds.is_empty() && names.is_empty() && senders.is_empty() {
                continue;
            }
            for (op, _) in &ops {
                if !in_scope(&op.path) {
                    continue;
                }
                let recv = receiver(&op.callee);
                if !c.seeds.is_empty() {
                    let parts: Vec<&str> = recv
                        .split(['.', '(', ')', '>', '-', ':', '@', '$'])
                        .filter(|p| !p.is_empty())
                        .collect();
                    let class = op.function.split('.').next().unwrap_or("");
                    let by_name = names.iter().any(|n| parts.contains(&n.as_str()) || class == n);
                    let by_sender = senders.iter().any(|n| parts.contains(&n.as_str()))
                        && from_callers.contains(&(op.path.clone(), op.line));
                    if !by_name && !by_sender {
                        continue;
                    }
                }
                let bypasses = c.bypass.iter().any(|b| recv == b || recv.starts_with(&format!("{b}.")));
                let method_covered = match &op.method {
                    Method::Idempotent(_) => true,
                    Method::Write(_) | Method::Unknown => c.every_method,
                };
                if !bypasses && method_covered && !op.computes {
                    through_clients.push((op.clone(), Some(r.clone())));
                }
            }
        }
        ops.extend(through_clients);
        self.ops = ops;
        self.retries = rs;
        let mut covered: Vec<Covered> = Vec::new();
        // Keyed by method too: a request function reached under a retry with
        // the method its caller passed is not the same operation as its
        // other calls.
        let mut index: HashMap<(String, String, String, String), usize> = HashMap::new();
        for (op, retry) in self.ops {
            let key = (op.path.clone(), op.function.clone(), op.callee.clone(), format!("{:?}", op.method));
            let i = *index.entry(key).or_insert_with(|| {
                covered.push(Covered { op: op.clone(), retries: Vec::new() });
                covered.len() - 1
            });
            if let Some(r) = retry {
                if !covered[i].retries.iter().any(|x| x.line == r.line && x.path == r.path) {
                    covered[i].retries.push(r);
                }
            }
        }
        let mut retries: Vec<Retry> = Vec::new();
        for r in self.retries {
            if !retries.iter().any(|x| x.path == r.path && x.line == r.line && x.form == r.form) {
                retries.push(r);
            }
        }
        let calls = std::mem::take(&mut self.calls);
        Model { covered, retries, truncated: self.truncated, functions, files, calls }
    }
}

/// The names a statement assigns (`resp, err := ..`, `const r = ..`,
/// `r = ..`).
fn assigned_names(stmt: &str) -> Vec<String> {
    static LHS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?m)^\s*(?:const|let|var|val|final|auto|[A-Z][A-Za-z0-9_<>,\[\]]*\s+)?\s*([A-Za-z_$][A-Za-z0-9_$.,\s]*?)\s*(?::=|=)[^=]")
            .unwrap_or_else(|e| panic!("constant pattern: {e}"))
    });
    LHS.captures_iter(stmt)
        .filter_map(|c| c.get(1))
        .flat_map(|m| m.as_str().split([',', ' ']).map(|w| w.trim().trim_start_matches('$').to_string()))
        .filter(|w| !w.is_empty() && w != "_")
        .collect()
}

/// Whether a condition tests what a call gave: one of `names`, or an
/// error, a status or success.
fn tests_result(condition: &str, names: &HashSet<String>) -> bool {
    condition
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$' || c == '.'))
        .filter(|w| !w.is_empty())
        .any(|w| {
            let w = w.trim_start_matches('$');
            let head = w.split('.').next().unwrap_or(w);
            names.contains(w) || names.contains(head) || {
                let l = head.to_ascii_lowercase();
                l.starts_with("err")
                    || l.starts_with("exc")
                    || l.contains("status")
                    || l.contains("success")
                    || matches!(l.as_str(), "ok" | "res" | "resp" | "response" | "result" | "e" | "ex")
            }
        })
}

/// The method of a request that sends whatever method it is handed
/// (`session.request(method, url)`, `perform_request(method, path)`) when
/// no caller shows which: a transport, which sends writes among the rest
/// unless something shows it only reads. Judged as a write.
pub(crate) const ANY_METHOD: &str = "any method it is handed (POST included)";

/// Words of a call that describes or records a request rather than
/// sending one (a log line, a metric, a mock, a route).
const DESCRIBES: &[&str] = &[
    "log",
    "logger",
    "info",
    "debug",
    "warn",
    "warning",
    "error",
    "trace",
    "emit",
    "push",
    "track",
    "record",
    "span",
    "metric",
    "metrics",
    "set",
    "mock",
    "expect",
    "stub",
    "intercept",
    "on",
    "route",
];

/// The HTTP method an argument names as a literal: `"POST"`, `'get'`,
/// `http.MethodPatch`, `:delete`, `HttpMethod.PUT`.
fn method_literal(arg: &str) -> Option<String> {
    static LIT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?i)^\s*(?:method\s*=\s*)?(?:["'`:]|(?:[A-Za-z_.]*\.)?(?:Method|HttpMethod|Verb)s?\.?)(get|head|options|put|delete|post|patch)["'`]?\s*$"#)
            .unwrap_or_else(|e| panic!("constant pattern: {e}"))
    });
    LIT.captures(arg).and_then(|c| c.get(1)).map(|m| m.as_str().to_ascii_uppercase())
}

/// Nodes whose children are alternatives, not a sequence: what follows
/// one of them is not run after it.
fn branches(kind: &str) -> bool {
    matches!(
        kind,
        "select_statement"
            | "expression_switch_statement"
            | "type_switch_statement"
            | "switch_statement"
            | "switch_block"
            | "switch_body"
            | "switch_expression"
            | "switch_section"
            | "match_statement"
            | "when_expression"
            | "case"
            | "conditional_expression"
            | "ternary_expression"
            | "binary_expression"
            | "boolean_operator"
    )
}

/// Whether a loop condition reads a name its body assigns other than by
/// counting (`while not done:` .. `done = True`; `for err != nil { err = f() }`).
fn condition_assigned(condition: &str, body: &str) -> bool {
    static ASSIGN: LazyLock<Regex> = LazyLock::new(|| {
        // One target or several (`done, resp = f()`, `[done, n] = ..`,
        // `done, err := ..`): any of them may be the flag.
        Regex::new(r"[\[({]?\s*((?:[A-Za-z_][A-Za-z0-9_.]*\s*,\s*)*[A-Za-z_][A-Za-z0-9_.]*)\s*[\])}]?\s*(?::=|=)\s*([^=\n][^\n]*)")
            .unwrap_or_else(|e| panic!("constant pattern: {e}"))
    });
    let names: HashSet<&str> = condition
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .filter(|w| w.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_'))
        .collect();
    ASSIGN.captures_iter(body).any(|c| {
        let (Some(targets), Some(rhs)) = (c.get(1), c.get(2)) else { return false };
        let rhs = rhs.as_str().trim_start();
        targets.as_str().split(',').map(str::trim).any(|name| {
            let last = name.rsplit('.').next().unwrap_or(name);
            names.iter().any(|w| *w == name || w.rsplit('.').next() == Some(last))
                && !rhs.starts_with(name)
                && !name.ends_with(['+', '-', '*', '/'])
        })
    })
}

fn unparen(n: Node<'_>) -> Node<'_> {
    if n.kind() == "parenthesized_expression" && n.named_child_count() == 1 {
        if let Some(c) = n.named_child(0) {
            return c;
        }
    }
    n
}

/// What a catch clause still retries after a guard that rethrows when
/// `cond` holds: its terms that are negated (`!(e instanceof A)`,
/// `status != 429`) are what it retries; its plain terms are what it
/// rethrows. A negated name is read through its definition among the
/// statements before the guard. `None` when no term names a failure.
fn guard_retried(
    g: Grammar,
    header: &BTreeSet<Condition>,
    cond: &str,
    before: &str,
    unless: bool,
) -> Option<BTreeSet<Condition>> {
    let mut kept = BTreeSet::new();
    let mut thrown = BTreeSet::new();
    for raw in cond
        .split("&&")
        .flat_map(|t| t.split("||"))
        .flat_map(|t| t.split(" and "))
        .flat_map(|t| t.split(" or "))
    {
        let term = raw.trim().trim_start_matches('(').trim();
        let negated = term.starts_with('!') && !term.starts_with("!=")
            || term.starts_with("not ")
            || term.contains("!=")
            || term.contains(" is not ");
        let negated = negated != unless;
        let mut c = classify_in(g, term);
        if c.is_empty() && negated {
            // `!retryable`: the name's definition says what it is.
            let name =
                term.trim_start_matches(['!', '(']).trim_start_matches("not ").trim().trim_end_matches(')');
            if !name.is_empty() && name.chars().all(|ch| ch.is_alphanumeric() || ch == '_') {
                for line in before.lines() {
                    if let Some((l, r)) = line.split_once('=') {
                        if l.split_whitespace().last() == Some(name) && !r.starts_with('=') {
                            c = classify_in(g, r);
                        }
                    }
                }
            }
        }
        if negated {
            kept.extend(c);
        } else {
            thrown.extend(c);
        }
    }
    if kept.is_empty() && thrown.is_empty() {
        return None;
    }
    if thrown.is_empty() {
        return Some(kept);
    }
    let mut out: BTreeSet<Condition> = header.difference(&thrown).copied().collect();
    out.extend(kept);
    if out.is_empty() {
        out.insert(Condition::RateLimited);
    }
    Some(out)
}

/// The first string literal in a call's text that holds a `/` (a URL or a
/// path, template placeholders kept): what the request is sent to.
fn target_of(call: &str) -> Option<String> {
    static LIT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"["'`]([^"'`\s]*/[^"'`\s]*)["'`]"#).unwrap_or_else(|e| panic!("constant pattern: {e}"))
    });
    let args = call.split_once('(').map_or(call, |(_, a)| a);
    LIT.captures(args).and_then(|c| c.get(1)).map(|m| m.as_str().to_string())
}

/// [`classify`] with what a grammar's own exception names mean: Guzzle's
/// `ConnectException` also covers timeouts, where Java's means refused.
pub(crate) fn classify_in(g: Grammar, text: &str) -> BTreeSet<Condition> {
    let mut c = classify(text);
    if g == Grammar::Php && text.contains("ConnectException") {
        c.remove(&Condition::Refused);
        c.insert(Condition::Timeout);
    }
    c
}

/// The failures an exception list, a condition or an option names.
pub(crate) fn classify(text: &str) -> BTreeSet<Condition> {
    let t = text.to_ascii_lowercase();
    let mut out = BTreeSet::new();
    let has = |ws: &[&str]| ws.iter().any(|w| t.contains(w));
    if has(&["429", "ratelimit", "rate_limit", "toomanyrequests", "too_many_requests", "throttl"]) {
        out.insert(Condition::RateLimited);
    }
    if has(&[
        "refused",
        "connecterror",
        "connect_error",
        "econnrefused",
        "connecttimeout",
        "connect_timeout",
        "connectexception",
        "is_connect",
        "couldnt_connect",
        "couldnotconnect",
    ]) {
        out.insert(Condition::Refused);
    }
    if has(&["conflict", "409", "optimistic"]) {
        out.insert(Condition::Conflict);
    }
    if has(&["401", "403", "407", "unauthorized", "unauthenticated", "forbidden"]) {
        out.insert(Condition::AuthRefused);
    }
    let t_wo_connect = t.replace("connecttimeout", "").replace("connect_timeout", "");
    if t_wo_connect.contains("timeout")
        || t_wo_connect.contains("timedout")
        || t_wo_connect.contains("deadline")
        || has(&["taskcanceled", "operationcanceled", "econnaborted", "is_timeout"])
    {
        out.insert(Condition::Timeout);
    }
    // A refusal named inside a broad class (`SocketException` whose code
    // is ConnectionRefused) narrows it.
    let refused_named = t.contains("refused");
    // Short class names match whole identifiers only (`isAxiosError` is
    // no `OSError`).
    let tokens: Vec<&str> =
        t.split(|c: char| !c.is_alphanumeric() && c != '_').filter(|w| !w.is_empty()).collect();
    let token = |ws: &[&str]| tokens.iter().any(|tk| ws.contains(tk));
    if has(&[
        "reset",
        "connectionerror",
        "connection_error",
        "disconnect",
        "remoteprotocol",
        "brokenpipe",
        "eoferror",
        "eofexception",
        "io.eof",
        "unexpectedeof",
        "unexpected_eof",
        "protocolerror",
        "incomplete",
        "econnreset",
        "readerror",
        "read_error",
        "writeerror",
    ]) || !refused_named
        && (has(&[
            "ioexception",
            "socketexception",
            "socketerror",
            "networkerror",
            "transporterror",
            "resourceaccess",
            "httprequestexception",
            "faraday::error",
        ]) || token(&["ioerror", "oserror", "typeerror", "eof", "socket", "transport"]))
    {
        out.insert(Condition::Reset);
    }
    if has(&[
        "5xx",
        "500",
        "502",
        "503",
        "504",
        "servererror",
        "server_error",
        "badgateway",
        "unavailable",
        "httperror",
        "httpstatuserror",
        "apierror",
        "api_error",
        "statuserror",
    ]) || !refused_named && has(&["requestexception", "webexception", "httprequestexception"])
    {
        out.insert(Condition::ServerError);
    }
    if has(&["any", "all"]) && t.len() < 6 {
        out.insert(Condition::Any);
    }
    // A catch-all type, as a whole name (not `ConnectException`).
    static ANY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?:^|[^A-Za-z0-9_])\\?(?:Exception|Throwable|BaseException|StandardError|RuntimeException|Error)(?:$|[^A-Za-z0-9_])")
            .unwrap_or_else(|e| panic!("constant pattern: {e}"))
    });
    if ANY.is_match(text) {
        out.insert(Condition::Any);
    }
    out
}

/// The values `text` assigns to a field (`c.CheckRetry = func(..) {..}`,
/// `o.Retry.ShouldHandle = args => ..;`, `CheckRetry: policy,`): from the
/// `=` or `:` to the end of the statement, brackets balanced.
fn field_values<'x>(text: &'x str, field: &str) -> Vec<&'x str> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    for (i, _) in text.match_indices(field) {
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[i + field.len()..];
        let trimmed = rest.trim_start();
        let Some(value) = trimmed.strip_prefix(['=', ':']) else { continue };
        if value.starts_with('=') {
            continue;
        }
        let start = text.len() - value.len();
        let mut depth = 0i32;
        let mut end = text.len();
        for (j, &b) in bytes.iter().enumerate().skip(start) {
            match b {
                b'(' | b'{' | b'[' => depth += 1,
                b')' | b'}' | b']' => {
                    depth -= 1;
                    if depth < 0 {
                        end = j;
                        break;
                    }
                }
                b';' | b',' if depth == 0 => {
                    end = j;
                    break;
                }
                b'\n' if depth == 0 && j > start && !text[start..j].trim().is_empty() => {
                    let next = text[j + 1..].trim_start();
                    // A C# or TS expression continued on the next line.
                    if !next.starts_with(['|', '&', '.', '?', '+']) {
                        end = j;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push(&text[start..end]);
    }
    out
}

/// The names a loop's body or header moves by one (`attempt += 1`, `i++`,
/// `n = n + 1`): its counters.
fn loop_counters<'x>(body: &'x str, header: &'x str) -> HashSet<&'x str> {
    static COUNTER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(\$?[A-Za-z_][\w.]*)\s*(?:\+\+|--|\+=|-=)|(?:\+\+|--)\s*(\$?[A-Za-z_][\w.]*)|(\$?[A-Za-z_][\w.]*)\s*=\s*(\$?[A-Za-z_][\w.]*)\s*[+-]\s*1\b")
            .unwrap_or_else(|e| panic!("constant pattern: {e}"))
    });
    COUNTER
        .captures_iter(body)
        .chain(COUNTER.captures_iter(header))
        .filter_map(|c| c.get(1).or_else(|| c.get(2)).or_else(|| c.get(3)).map(|m| m.as_str()))
        .collect()
}

/// The lines of `part`, a statement cut out of `whole` (a policy built
/// apart from where it runs), or `None` when it is all of `whole` or not
/// part of it.
fn built_apart(whole: &str, part: &str) -> Option<(u32, u32)> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    if part.len() >= whole.len() || start + part.len() > whole.len() {
        return None;
    }
    let first = whole[..start].matches('\n').count() as u32 + 1;
    Some((first, first + part.matches('\n').count() as u32))
}

/// [`classify`], with an unnamed or unknown failure counted as any.
fn classify_or_any(text: &str) -> BTreeSet<Condition> {
    let c = classify(text);
    if c.is_empty() {
        BTreeSet::from([Condition::Any])
    } else {
        c
    }
}

/// The calls of `name` in `text`, not its definitions: for each, where
/// its line starts and the call from `name(` to its matching parenthesis.
fn calls_of<'a>(text: &'a str, name: &'a str) -> impl Iterator<Item = (usize, &'a str)> + 'a {
    let mut from = 0;
    std::iter::from_fn(move || {
        while let Some(i) = text[from..].find(name) {
            let at = from + i;
            from = at + name.len();
            let before = text[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$')
                || !text[from..].starts_with('(')
            {
                continue;
            }
            // A definition's parameter list is no call.
            let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let head = text[line_start..at].trim_start();
            if ["def ", "func ", "function ", "fn ", "async def "].iter().any(|k| head.starts_with(k))
                || head.starts_with("func (")
            {
                continue;
            }
            return Some((line_start, balanced_call(&text[from..])));
        }
        None
    })
}

/// Whether a call of `name` in `text` passes a read method (`"GET"`,
/// `http.MethodGet`, `:delete`, `HttpMethod.PUT`): its callers are in the
/// files, so a sender handed its method is no transport of unknown use.
pub(crate) fn read_method_passed(text: &str, name: &str) -> bool {
    static READ: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?i)\bMethod(Get|Head|Options|Put|Delete)\b|["'`](get|head|options|put|delete)["'`]|:(get|head|options|put|delete)\b|\b(?:HttpMethod|Method|Verb)s?\.(get|head|options|put|delete)\b"#)
            .unwrap_or_else(|e| panic!("constant pattern: {e}"))
    });
    text.contains(name) && calls_of(text, name).any(|(_, call)| READ.is_match(call))
}

/// The write method a call of `name` in `text` passes (`http.MethodPost`,
/// `"POST"`, `:patch`, `HttpMethod.POST`), or that a request it is passed
/// was built with a few lines before, upper-cased: how a sender that takes
/// its method or its request as a parameter is known to write.
pub(crate) fn write_method_passed(text: &str, name: &str) -> Option<String> {
    static ASSIGNED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*(?:var\s+|let\s+|const\s+|val\s+|final\s+)?([A-Za-z_$][A-Za-z0-9_$]*(?:\s*,\s*[A-Za-z_$][A-Za-z0-9_$]*)*)\s*:?=[^=]")
            .unwrap_or_else(|e| panic!("constant pattern: {e}"))
    });
    static WRITE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?i)\bMethod(Post|Patch)\b|["'`](post|patch)["'`]|:(post|patch)\b|\b(?:HttpMethod|Method|Verb)s?\.(post|patch)\b"#)
            .unwrap_or_else(|e| panic!("constant pattern: {e}"))
    });
    // The write method a piece of text names, upper-cased.
    let write_in = |t: &str| {
        WRITE
            .captures(t)
            .map(|c| c.iter().skip(1).flatten().next().map_or("POST", |m| m.as_str()).to_ascii_uppercase())
    };
    for (line_start, call) in calls_of(text, name) {
        if let Some(m) = write_in(call) {
            return Some(m);
        }
        // A request built with a write method a few lines before and passed
        // in: `req, err := c.NewRequest(ctx, http.MethodPost, ..)` ..
        // `c.Do(ctx, req, ..)`.
        let args: HashSet<&str> =
            call.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect();
        for l in text[..line_start].lines().rev().take(12) {
            let (Some(a), Some(m)) = (ASSIGNED.captures(l), write_in(l)) else { continue };
            let targets = a.get(1).map_or("", |m| m.as_str());
            if targets
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| !w.is_empty() && args.contains(w))
            {
                return Some(m);
            }
        }
    }
    None
}

/// `name(...)` (or `name<..>(...)`) at the start of `text`, to its
/// matching parenthesis.
fn balanced_call(text: &str) -> &str {
    let mut depth = 0i32;
    let mut opened = false;
    for (i, ch) in text.char_indices() {
        match ch {
            '(' => {
                depth += 1;
                opened = true;
            }
            ')' => {
                depth -= 1;
                if opened && depth == 0 {
                    return &text[..=i];
                }
            }
            '\n' | ';' if !opened => return &text[..i],
            _ => {}
        }
        if i > 4000 {
            break;
        }
    }
    text.get(..text.len().min(4000)).unwrap_or(text)
}

/// [`balanced_call`] with the trailing block a Kotlin or Ruby call is
/// given (`retryIf(3) { _, r -> r.status == TooManyRequests }`).
fn call_with_block(text: &str) -> &str {
    let call = balanced_call(text);
    let rest = &text[call.len()..];
    let trimmed = rest.trim_start_matches([' ', '\t']);
    if !trimmed.starts_with('{') {
        return call;
    }
    let start = text.len() - trimmed.len();
    let mut depth = 0i32;
    for (i, ch) in trimmed.char_indices().take(4000) {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &text[..start + i + 1];
                }
            }
            _ => {}
        }
    }
    call
}

/// A number written with separators or a unit the evaluator does not
/// read (`30_000`, `500L`, `TimeSpan.FromSeconds(30)`,
/// `Duration.ofMillis(2000)`): the one numeric literal of the text, in
/// seconds when a unit says so.
fn literal_number(text: &str) -> Option<f64> {
    static NUM: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?:^|[^A-Za-z0-9_.])(\d[\d_]*(?:\.\d+)?)[LlFfDdUu]?\b")
            .unwrap_or_else(|e| panic!("constant pattern: {e}"))
    });
    let t = text.trim();
    if t.len() > 80 {
        return None;
    }
    let nums: Vec<f64> =
        NUM.captures_iter(t).filter_map(|c| c[1].replace('_', "").parse::<f64>().ok()).collect();
    let [v] = nums.as_slice() else { return None };
    let lower = t.to_ascii_lowercase();
    let scale = if lower.contains("millis") || lower.contains("milliseconds") {
        0.001
    } else if lower.contains("minutes") || lower.contains("ofminutes") {
        60.0
    } else {
        1.0
    };
    Some(v * scale)
}

/// Whether a receiver's name says it is an in-process container
/// (`listen_queue`, `connCache`, `seenMap`): its `get`/`put` stays here.
fn local_words(receiver: &str) -> bool {
    words(receiver).iter().any(|w| {
        matches!(
            w.as_str(),
            "queue"
                | "cache"
                | "map"
                | "dict"
                | "set"
                | "list"
                | "store"
                | "registry"
                | "lister"
                | "informer"
                | "indexer"
                | "env"
                | "environ"
                | "config"
                | "cfg"
                | "settings"
                | "options"
                | "opts"
                | "params"
                | "headers"
                | "kwargs"
                | "args"
                | "state"
                | "lock"
                | "mutex"
                | "pool"
                | "pools"
                | "caches"
                | "maps"
                | "tx"
                | "chan"
                | "ch"
                | "buf"
                | "buffer"
                | "locks"
                | "channel"
                | "results"
                | "items"
                | "entries"
                | "records"
        )
    })
}

/// Whether `text` (a function) binds the root name of `recv` to an
/// in-memory collection: a list, map or set literal, `make(..)`, a
/// constructor whose type names a collection (`new ArrayList<>()`,
/// `NewIDSet()`, `set()`, `defaultdict(list)`), or a declared collection
/// type (`var ids []string`, `msgs: list[str] = ..`).
fn built_as_collection(text: &str, recv: &str) -> bool {
    static COLLECTION: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*(?:\[|\{|make\(|(?:list|dict|set|frozenset|deque|defaultdict|OrderedDict|Counter|Array|Map|Set|WeakMap)\(|new\s+(?:[\w.]*\.)?\w*(?:List|Map|Set|Array|Queue|Deque|Dictionary|Vector|Stack|Collection)\b|(?:[\w.]*\.)?(?:New|new|make|Make)?\w*(?:Set|Map|List|Dict|Array|Queue|Deque|Slice)\s*[({<]|mutableListOf|mutableSetOf|mutableMapOf|arrayListOf|hashMapOf|hashSetOf|listOf|setOf|mapOf)")
            .unwrap_or_else(|e| panic!("constant pattern: {e}"))
    });
    static TYPED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*(?:\[\]|map\[|(?:list|dict|set|List|Dict|Set|Map|Array|deque)\b|(?:[\w.]*\.)?\w*(?:Set|Map|List|Dict)\b)")
            .unwrap_or_else(|e| panic!("constant pattern: {e}"))
    });
    let root = recv.split(['.', '-', '[', '(']).next().unwrap_or("").trim_start_matches('$');
    if root.is_empty()
        || matches!(root, "self" | "this" | "cls")
        || !root.chars().all(|c| c.is_alphanumeric() || c == '_')
    {
        return false;
    }
    // The binding of the root, and only when the receiver is the root
    // itself (`ids.Insert`, not `ids.client.Insert`).
    if recv.trim_start_matches('$') != root {
        return false;
    }
    let mut at = 0;
    while let Some(i) = text[at..].find(root) {
        let start = at + i;
        let end = start + root.len();
        at = end;
        let before = text[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '$') {
            continue;
        }
        let rest = &text[end..];
        if rest.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest_t = rest.trim_start();
        let value =
            rest_t.strip_prefix(":=").or_else(|| rest_t.strip_prefix('=').filter(|r| !r.starts_with('=')));
        if value.is_some_and(|v| COLLECTION.is_match(v)) {
            return true;
        }
        // `ids: list[str] = []`, `var ids []string`, `ids []string` (Go
        // params), `List<String> ids = ..` is caught by the value.
        if let Some(ty) = rest_t.strip_prefix(':').filter(|r| !r.starts_with('=')) {
            if TYPED.is_match(ty) {
                return true;
            }
        }
        if text[..start].trim_end().ends_with("var") && TYPED.is_match(rest) {
            return true;
        }
    }
    false
}

/// Whether a condition tests that an answer failed: a 429 or 5xx status
/// (`response.status === 503`, `resp.status_code >= 500`,
/// `status in (429, 503)`), or an answer that is not ok (`!res.ok`).
fn tests_failing_status(cond: &str) -> bool {
    static FAILING: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)status\w*(?:\(\))?\s*(?:===?|>=?|\bin\b|\bis\b)\s*[\[(]?\s*(?:429|5\d\d)\b|(?:!|\bnot\s+)\s*\w+(?:\.\w+)*\.ok\b|\.is_server_error\(\)|IsServerError")
            .unwrap_or_else(|e| panic!("constant pattern: {e}"))
    });
    FAILING.is_match(cond)
}

/// Callees that use an attempt number without deciding whether to go on:
/// a delay, a log line, a metric.
fn uses_count_only(callee: &str) -> bool {
    let w = words(callee);
    w.iter().any(|x| {
        matches!(
            x.as_str(),
            "sleep"
                | "wait"
                | "delay"
                | "backoff"
                | "jitter"
                | "log"
                | "logf"
                | "logger"
                | "print"
                | "printf"
                | "println"
                | "fmt"
                | "format"
                | "sprintf"
                | "debug"
                | "info"
                | "warn"
                | "warning"
                | "trace"
                | "error"
                | "errorf"
                | "metric"
                | "metrics"
                | "record"
                | "observe"
                | "inc"
                | "emit"
                | "span"
                | "after"
                | "timer"
                | "duration"
                | "interval"
                | "str"
                | "string"
                | "itoa"
        )
    })
}

/// Whether `cond` hands the counter to a function that decides
/// (`if !shouldRetry(attempt, err)`, `if policy.exhausted(attempts)`).
fn decides_on(cond: &str, counter: &str) -> bool {
    static CALL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"([A-Za-z_][\w.]*)\s*\(([^()]*)\)").unwrap_or_else(|e| panic!("constant pattern: {e}"))
    });
    CALL.captures_iter(cond).any(|c| {
        let callee = c.get(1).map_or("", |m| m.as_str());
        let args = c.get(2).map_or("", |m| m.as_str());
        !uses_count_only(callee) && args.split(',').any(|a| names_whole(a.trim(), counter))
    })
}

/// Names a body assigns from a call given the loop's counter
/// (`retry, after, err := g.shouldRetry(attempts, err)`): the callee
/// decides whether to go on, so a test of one that leaves bounds the loop
/// by a count retrygate does not compute.
fn delegated_decisions(body: &str, counters: &HashSet<&str>) -> Vec<String> {
    static ASSIGN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?m)^\s*(?:let\s+|const\s+|var\s+|val\s+|auto\s+)?\(?([A-Za-z_][\w]*(?:\s*,\s*[A-Za-z_][\w]*)*)\)?\s*:?=\s*(?:await\s+|try\s+|yield\s+)?([A-Za-z_][\w.]*)\s*\(([^()]*)\)")
            .unwrap_or_else(|e| panic!("constant pattern: {e}"))
    });
    if counters.is_empty() {
        return Vec::new();
    }
    ASSIGN
        .captures_iter(body)
        .filter(|c| {
            let callee = c.get(2).map_or("", |m| m.as_str());
            let args = c.get(3).map_or("", |m| m.as_str());
            !uses_count_only(callee)
                && counters.iter().any(|k| args.split(',').any(|a| names_whole(a.trim(), k)))
        })
        .flat_map(|c| {
            c.get(1).map_or(Vec::new(), |m| {
                m.as_str()
                    .split(',')
                    .map(|x| x.trim().to_string())
                    .filter(|x| x != "_" && x != "err")
                    .collect()
            })
        })
        .collect()
}

/// Whether code reads the Retry-After header: its name (`retry-after`),
/// or the field a client library fills from it (`err.retryAfter`,
/// `e.retry_after`); a local variable named `retry_after` is not it.
fn reads_retry_after(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    t.contains("retry-after")
        || t.contains(".retryafter")
        || t.contains(".retry_after")
        || t.contains("retryafterms")
}

/// Whether a call by bare name inside `def` can call `def` itself. In
/// Python, PHP, JavaScript/TypeScript and Go a method is reached only
/// through its receiver (`self.f()`, `$this->f()`, `this.f()`, `c.f()`):
/// a bare `redirect()` inside a method `redirect` calls the function of
/// that name (Laravel's helper, a module function), not the method. In
/// Java, C#, Kotlin and Ruby a bare name inside a class is the method.
fn bare_call_reaches(g: Grammar, def: Node<'_>) -> bool {
    match g {
        Grammar::Java | Grammar::CSharp | Grammar::Kotlin | Grammar::Ruby => true,
        Grammar::Go | Grammar::Php | Grammar::JavaScript | Grammar::TypeScript | Grammar::Tsx => {
            !matches!(def.kind(), "method_declaration" | "method_definition")
        }
        Grammar::Python => {
            // function_definition -> block -> class_definition, possibly
            // through a decorated_definition.
            let mut p = def.parent();
            for _ in 0..3 {
                match p {
                    Some(x) if x.kind() == "class_definition" => return false,
                    Some(x) if matches!(x.kind(), "block" | "decorated_definition") => p = x.parent(),
                    _ => break,
                }
            }
            true
        }
    }
}

/// Whether a call named `last` builds a value rather than calling out, by
/// the language's naming conventions. Kotlin names functions in camelCase,
/// so a CapWords call is a constructor (`CreateOrderRequest(..)`). Python
/// names classes in CapWords (PEP 8), but gRPC stubs keep the proto's
/// CapWords methods (`stub.CreateOrder(req)`), so only a CapWords name
/// ending in what a message type is called counts
/// (`types.SendMessageSuccessResponse(..)`).
fn constructs_a_value(g: Grammar, last: &str) -> bool {
    if !last.starts_with(|c: char| c.is_ascii_uppercase()) {
        return false;
    }
    match g {
        Grammar::Kotlin => true,
        Grammar::Python => [
            "Response",
            "Request",
            "Result",
            "Error",
            "Exception",
            "Options",
            "Config",
            "Params",
            "Args",
            "Spec",
            "Schema",
        ]
        .iter()
        .any(|s| last.ends_with(s) && last.len() > s.len()),
        _ => false,
    }
}

/// Whether a receiver is a type named for a value (`RequestBody.create(..)`,
/// `HttpRequest.newBuilder()`, `RetryConfig.custom()`): its factories build
/// the value, they send nothing. A type named for a resource
/// (`Customer.create(..)` in an SDK) is not one of these.
fn value_type_factory(recv: &str) -> bool {
    let t = last_segment(recv);
    t.starts_with(|c: char| c.is_ascii_uppercase())
        && [
            "Body", "Request", "Response", "Builder", "Options", "Config", "Params", "Spec", "Schema",
            "Factory",
        ]
        .iter()
        .any(|s| t.ends_with(s))
}

fn has_random(text: &str) -> bool {
    [
        "random", "Random", "rand(", "rand.", "Rand", "jitter", "Jitter", "uniform(", "randint", "fastrand",
        "randn", "secrets.",
    ]
    .iter()
    .any(|w| text.contains(w))
}

fn has_sleep(text: &str) -> bool {
    [
        "sleep",
        "Sleep",
        "setTimeout",
        "delay(",
        "Delay(",
        "time.After",
        "wait(",
        "Wait(",
        "backoff",
        "Backoff",
        "usleep",
    ]
    .iter()
    .any(|w| text.contains(w))
}

/// Whether `text` names `name` as a whole identifier (`retried`, not
/// `retried_count`).
fn names_whole(text: &str, name: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(ident) && !text[i + name.len()..].starts_with(ident)
    })
}

fn has_time(text: &str) -> bool {
    [
        "deadline",
        "Deadline",
        "elapsed",
        "Elapsed",
        "Since(",
        "time.time",
        "monotonic",
        "Date.now",
        "currentTimeMillis",
        "nanoTime",
        "Instant",
        "ctx.Err",
        "ctx.Done",
        ".Done()",
        "timeout",
        "Timeout",
        "expire",
        "remaining",
        "time.Now",
        "Time.now",
        "microtime",
        "Stopwatch",
        "DateTime",
    ]
    .iter()
    .any(|w| text.contains(w))
}

/// Whether a loop waits for a job's state rather than a request's
/// success: it compares a status with the states a task goes through
/// (`TaskStatus.ENQUEUED`, `"processing"`, `status in ["completed",
/// "failed"]`). Such a loop asks again because the work is not done, not
/// because the request failed: a poll, whose requests each succeed.
fn polls_a_state(text: &str) -> bool {
    const STATES: &[&str] = &[
        "enqueued",
        "queued",
        "pending",
        "processing",
        "running",
        "in_progress",
        "inprogress",
        "completed",
        "succeeded",
        "finished",
        "canceled",
        "cancelled",
    ];
    let lower = text.to_ascii_lowercase();
    STATES.iter().any(|w| {
        lower.match_indices(w).any(|(i, _)| {
            let before = lower[..i].chars().next_back();
            let after = lower[i + w.len()..].chars().next();
            !before.is_some_and(|c| c.is_ascii_alphanumeric())
                && !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    })
}

/// Whether a function starts a local process and asks it on a local
/// address (`cmd.Start()` .. `http.Get("http://127.0.0.1:%d")`): a loop
/// there waits for the process it started to come up. It calls no
/// dependency that an outage would make it hammer.
fn waits_for_started_process(text: &str) -> bool {
    const STARTS: &[&str] = &[
        "cmd.Start()",
        ".Start()",
        "exec.Command(",
        "exec.CommandContext(",
        "subprocess.Popen(",
        "asyncio.create_subprocess_exec(",
        "child_process",
        "spawn(",
        "new ProcessBuilder(",
        "Process.Start(",
        "Command::new(",
    ];
    const LOCAL: &[&str] = &["127.0.0.1", "localhost", "0.0.0.0", "[::1]"];
    STARTS.iter().any(|s| text.contains(s)) && LOCAL.iter().any(|l| text.contains(l))
}

fn status_words(text: &str) -> bool {
    ["ok", "status", "success", "code", "200", "429", "500", "503", "Status", "OK", "Success", "isSuccessful"]
        .iter()
        .any(|w| text.contains(w))
}

/// Whether `callee` is named by `names` (helper of the tests).
#[cfg(test)]
pub(crate) fn models_of(path: &str, text: &str) -> Model {
    let g = Grammar::of_path(path).unwrap();
    let tree = crate::analyze::trees::defs::FileTree::new(path, g, text).unwrap();
    let world = World { files: vec![crate::analyze::trees::defs::Index::of(&tree)] };
    let data = super::data::DATA.as_ref().unwrap();
    model(&world, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covered_writes(path: &str, text: &str) -> Vec<(String, Attempts)> {
        let m = models_of(path, text);
        m.covered
            .iter()
            .filter(|c| c.op.method.writes() && !c.retries.is_empty())
            .map(|c| (c.op.callee.clone(), c.retries[0].attempts))
            .collect()
    }

    #[test]
    fn python_decorator_covers_the_post_of_its_function() {
        let got = covered_writes(
            "a.py",
            "import requests\nfrom tenacity import retry, stop_after_attempt\n@retry(stop=stop_after_attempt(3))\ndef create(b):\n    return requests.post('https://x/orders', json=b)\n",
        );
        assert_eq!(got, vec![("requests.post".to_string(), Attempts::Count(3.0))]);
    }

    #[test]
    fn python_loop_with_except_that_goes_round() {
        let got = covered_writes(
            "a.py",
            "import requests, time\ndef create(b):\n    for i in range(5):\n        try:\n            return requests.post('u', json=b)\n        except Exception:\n            time.sleep(1)\n",
        );
        assert_eq!(got, vec![("requests.post".to_string(), Attempts::Count(5.0))]);
        let unbounded = covered_writes(
            "a.py",
            "import requests, time\ndef create(b):\n    while True:\n        try:\n            return requests.post('u', json=b)\n        except Exception:\n            time.sleep(1)\n",
        );
        assert_eq!(unbounded, vec![("requests.post".to_string(), Attempts::Unbounded)]);
    }

    #[test]
    fn a_worker_loop_is_not_a_retry() {
        let got = covered_writes(
            "a.py",
            "def work(q):\n    while True:\n        try:\n            m = q.get()\n            requests.post('u', json=m)\n        except Exception:\n            log.exception('x')\n",
        );
        assert!(got.is_empty(), "{got:?}");
    }

    /// A bound tested in the body against a counter the loop's header
    /// moves, or handed to a function that decides, bounds the loop; a
    /// counter used only for the delay does not.
    #[test]
    fn a_loop_bound_in_its_header_or_in_a_deciding_call_is_a_bound() {
        let header = "package a\nfunc f(max int) error {\n\tfor retries := 1; ; retries++ {\n\t\t_, err := client.PutItem(in)\n\t\tif err == nil {\n\t\t\treturn nil\n\t\t}\n\t\tif retries >= max {\n\t\t\treturn err\n\t\t}\n\t\ttime.Sleep(time.Second)\n\t}\n}\n";
        assert_eq!(covered_attempts("a.go", header), vec![Attempts::Bounded]);
        let decided = "package a\nfunc (g *G) f() error {\n\tattempts := 0\n\tfor {\n\t\tattempts++\n\t\t_, err := g.api.SendMessage(ctx, m)\n\t\tif err != nil {\n\t\t\tretry, after, retryErr := g.shouldRetry(attempts, err)\n\t\t\tif retryErr != nil {\n\t\t\t\treturn retryErr\n\t\t\t}\n\t\t\tif retry {\n\t\t\t\ttime.Sleep(after)\n\t\t\t\tcontinue\n\t\t\t}\n\t\t\treturn err\n\t\t}\n\t\treturn nil\n\t}\n}\n";
        assert_eq!(covered_attempts("a.go", decided), vec![Attempts::Bounded]);
        let in_condition = "def f(c):\n    attempt = 0\n    while True:\n        attempt += 1\n        try:\n            return c.client.post('u')\n        except Exception as e:\n            if not policy.allows(attempt, e):\n                raise\n            time.sleep(1)\n";
        assert_eq!(covered_attempts("a.py", in_condition), vec![Attempts::Bounded]);
        // The counter only paces the delay: nothing stops the loop.
        let paced = "package a\nfunc f() error {\n\tattempts := 0\n\tfor {\n\t\tattempts++\n\t\t_, err := client.Post(u, \"application/json\", b)\n\t\tif err == nil {\n\t\t\treturn nil\n\t\t}\n\t\td := backoffFor(attempts)\n\t\tlog.Printf(\"retry %d\", attempts)\n\t\ttime.Sleep(d)\n\t}\n}\n";
        assert_eq!(covered_attempts("a.go", paced), vec![Attempts::Unbounded]);
    }

    /// `insert`/`add` on a collection the function built is memory, not a
    /// service; the same verb on a client is a write.
    #[test]
    fn inserting_into_a_collection_the_function_built_is_not_a_write() {
        assert_no_covered_writes(&[
            ("a.go", "package a\nfunc f() error {\n\tfor i := 0; i < 3; i++ {\n\t\tseen := NewIDSet()\n\t\tseen.Insert(id)\n\t\tif _, err := client.Get(u); err == nil {\n\t\t\treturn nil\n\t\t}\n\t}\n\treturn nil\n}\n"),
            ("a.py", "def f(b):\n    for i in range(3):\n        try:\n            msgs = convert(b)\n            msgs.insert(0, {'role': 'system'})\n            return client.get('u')\n        except Exception:\n            time.sleep(1)\n"),
            ("a.py", "def f(b):\n    for i in range(3):\n        try:\n            rows: list[str] = []\n            rows.insert(b)\n            return client.get('u')\n        except Exception:\n            time.sleep(1)\n"),
            ("A.java", "class A {\n  void f() {\n    for (int i = 0; i < 3; i++) {\n      try {\n        List<String> ids = new ArrayList<>();\n        ids.add(x);\n        Set<String> seen = new HashSet<>();\n        seen.insert(x);\n        return;\n      } catch (Exception e) {\n        sleep(1);\n      }\n    }\n  }\n}\n"),
        ]);
        let got = covered_writes(
            "a.py",
            "def f(b):\n    for i in range(3):\n        try:\n            return db.insert(b)\n        except Exception:\n            time.sleep(1)\n",
        );
        assert_eq!(got.len(), 1, "{got:?}");
    }

    /// `setTimeout` is a timeout of a call only when what it runs gives up
    /// on one; `setTimeout(resolve, 0)` is a yield.
    #[test]
    fn a_timer_that_only_resumes_bounds_no_call() {
        let timeout = |src: &str| models_of("a.ts", src).covered.iter().find_map(|c| c.op.timeout);
        let yielding = "async function f(b) {\n  for (let i = 0; i < 3; i++) {\n    try {\n      await new Promise((r) => setTimeout(r, 0));\n      return await fetch(u, { method: 'POST', body: b });\n    } catch (e) {\n      await sleep(100);\n    }\n  }\n}\n";
        assert_eq!(timeout(yielding), None);
        let aborting = "async function f(b) {\n  for (let i = 0; i < 3; i++) {\n    try {\n      const c = new AbortController();\n      setTimeout(() => c.abort(), 5000);\n      return await fetch(u, { method: 'POST', body: b, signal: c.signal });\n    } catch (e) {\n      await sleep(100);\n    }\n  }\n}\n";
        assert_eq!(timeout(aborting), Some(5000.0));
    }

    /// Work started and not waited for is not re-run by the retry around
    /// the code that starts it; awaited work is.
    #[test]
    fn work_started_and_not_awaited_is_not_retried() {
        assert_no_covered_writes(&[
            ("a.py", "async def run(self):\n    while True:\n        try:\n            asyncio.ensure_future(self.client.post('u', json=m))\n            await self.connect()\n            return\n        except Exception:\n            await asyncio.sleep(1)\n"),
            ("A.cs", "class A {\n  async Task F() {\n    for (var i = 0; i < 3; i++) {\n      try {\n        Task.Run(() => client.PostAsync(u, body));\n        await conn.OpenAsync();\n        return;\n      } catch (Exception e) {\n        await Task.Delay(1000);\n      }\n    }\n  }\n}\n"),
            ("a.go", "package a\nfunc f() error {\n\tfor i := 0; i < 3; i++ {\n\t\tgo client.Post(u, \"application/json\", b)\n\t\tif err := conn.Dial(); err == nil {\n\t\t\treturn nil\n\t\t}\n\t\ttime.Sleep(time.Second)\n\t}\n\treturn nil\n}\n"),
        ]);
        // A `Run` that is no task (`cmd.Run()`) waits: what it does is retried.
        let waited = covered_writes(
            "a.go",
            "package a\nfunc f() error {\n\tfor i := 0; i < 3; i++ {\n\t\trunner.Run(client.Post(u, \"application/json\", b))\n\t\tif err := conn.Dial(); err == nil {\n\t\t\treturn nil\n\t\t}\n\t\ttime.Sleep(time.Second)\n\t}\n\treturn nil\n}\n",
        );
        assert_eq!(waited.len(), 1, "{waited:?}");
        let awaited = covered_writes(
            "a.py",
            "async def run(self):\n    while True:\n        try:\n            t = asyncio.ensure_future(self.client.post('u', json=m))\n            await t\n            return\n        except Exception:\n            await asyncio.sleep(1)\n",
        );
        assert_eq!(awaited.len(), 1, "{awaited:?}");
    }

    /// A read through a client or SDK is an operation (a retry around it
    /// has a bound to lose); the same verb on an in-memory receiver is not.
    #[test]
    fn sdk_reads_on_a_client_are_operations() {
        let covered = |path: &str, src: &str| -> Vec<(String, String, Attempts)> {
            models_of(path, src)
                .covered
                .iter()
                .filter(|c| !c.retries.is_empty())
                .map(|c| (c.op.callee.clone(), format!("{:?}", c.op.method), c.retries[0].attempts))
                .collect()
        };
        let ts = "async function poll(bot) {\n  while (true) {\n    try {\n      return await bot.api.getUpdates({ offset });\n    } catch (e) {\n      await sleep(1000);\n    }\n  }\n}\n";
        assert_eq!(
            covered("a.ts", ts),
            vec![("bot.api.getUpdates".to_string(), "Idempotent(\"GET\")".to_string(), Attempts::Unbounded)]
        );
        let py = "def f(key):\n    for i in range(5):\n        try:\n            return s3_client.list_objects(Bucket=key)\n        except Exception:\n            time.sleep(1)\n";
        assert_eq!(covered("a.py", py).len(), 1);
        let local = "def f(key):\n    for i in range(5):\n        try:\n            v = settings.get_value(key)\n            return cache.get_entry(key)\n        except Exception:\n            time.sleep(1)\n";
        assert!(covered("a.py", local).is_empty(), "{:?}", covered("a.py", local));
    }

    /// An assertion on the counter ends the loop (by panicking).
    #[test]
    fn an_assertion_on_the_counter_bounds_the_loop() {
        let src = "package a\nfunc f() {\n\tretryCount := 0\n\tfor {\n\t\tresp, err := http.Post(u, \"application/json\", b)\n\t\tif err == nil {\n\t\t\treturn\n\t\t}\n\t\tretryCount++\n\t\tmisc.Assert(retryCount < maxRetry)\n\t\ttime.Sleep(time.Second)\n\t}\n}\n";
        assert_eq!(covered_attempts("a.go", src), vec![Attempts::Bounded]);
        let unasserted =
            src.replace("misc.Assert(retryCount < maxRetry)", "log.Print(retryCount < maxRetry)");
        assert_eq!(covered_attempts("a.go", &unasserted), vec![Attempts::Unbounded]);
    }

    /// A function that calls itself when the answer's status fails is a
    /// retry: bounded when the call passes a flag or a count down,
    /// unbounded when it passes the same arguments.
    #[test]
    fn a_function_that_calls_itself_on_a_failing_status_is_a_retry() {
        let once = "export async function request(args, options) {\n  const response = await fetch(url, info);\n  if (response.status === 503 && !options?.wait) {\n    return request(args, { ...options, wait: true });\n  }\n  return response.json();\n}\n";
        assert_eq!(covered_attempts("a.ts", once), vec![Attempts::Bounded]);
        let forever = "export async function request(args, options) {\n  const response = await fetch(url, info);\n  if (response.status === 503) {\n    return request(args, options);\n  }\n  return response.json();\n}\n";
        assert_eq!(covered_attempts("a.ts", forever), vec![Attempts::Unbounded]);
        // The fetch a caller may override is still a fetch.
        let overridable =
            forever.replace("await fetch(url, info)", "await (options?.fetch ?? fetch)(url, info)");
        assert_eq!(covered_attempts("a.ts", &overridable), vec![Attempts::Unbounded]);
        // A recursive walk on success is no retry.
        let walk = "export async function request(args, options) {\n  const response = await fetch(url, info);\n  if (response.status === 200 && args.next) {\n    return request(args.next, options);\n  }\n  return response.json();\n}\n";
        assert!(covered_attempts("a.ts", walk).is_empty());
    }

    fn covered_attempts(path: &str, text: &str) -> Vec<Attempts> {
        models_of(path, text).covered.iter().flat_map(|c| c.retries.iter().map(|r| r.attempts)).collect()
    }

    fn assert_no_covered_writes(cases: &[(&str, &str)]) {
        for (path, text) in cases {
            let got = covered_writes(path, text);
            assert!(got.is_empty(), "{path}: {got:?}\n{text}");
        }
    }

    #[test]
    fn a_loop_with_no_header_bound_counts_to_the_value_its_body_leaves_at() {
        let py = "def f(b):\n    attempt = 0\n    while True:\n        try:\n            return requests.post('u', json=b)\n        except ConnectionError:\n            attempt += 1\n            if attempt >= 5:\n                raise\n            time.sleep(1)\n";
        assert_eq!(covered_attempts("a.py", py), vec![Attempts::Count(5.0)]);
        let go = "package a\nfunc f() error {\n\tfor i := 0; ; i++ {\n\t\t_, err := http.Post(u, \"\", nil)\n\t\tif err == nil {\n\t\t\treturn nil\n\t\t}\n\t\tif (i > maxTries) {\n\t\t\treturn err\n\t\t}\n\t\ttime.Sleep(time.Second)\n\t}\n}\n";
        // A name no one defines: bounded, its count unknown.
        assert_eq!(covered_attempts("a.go", go), vec![Attempts::Bounded]);
        let go = go.replace("package a\n", "package a\nconst maxTries = 4\n");
        assert_eq!(covered_attempts("a.go", &go), vec![Attempts::Count(4.0)]);
    }

    #[test]
    fn an_mcp_tool_call_is_a_write() {
        let py = "async def f(session, name, args):\n    for attempt in range(3):\n        try:\n            return await session.call_tool(name, args)\n        except Exception:\n            await asyncio.sleep(1)\n";
        assert_eq!(covered_writes("a.py", py).len(), 1);
        let ts = "async function f(client: Client, name: string) {\n  for (let i = 0; i < 3; i++) {\n    try {\n      return await client.callTool({ name });\n    } catch (e) {\n      await sleep(1000);\n    }\n  }\n}\n";
        assert_eq!(covered_writes("a.ts", ts).len(), 1);
    }

    #[test]
    fn failures_handed_to_a_stop_call_are_not_retried_and_the_rest_are() {
        let conditions = |path: &str, text: &str| -> Vec<BTreeSet<Condition>> {
            models_of(path, text).retries.iter().map(|r| r.conditions.clone()).collect()
        };
        let go = |on_err: &str| {
            format!("package a\n\nimport \"github.com/cenkalti/backoff/v4\"\n\nfunc Push(b []byte) error {{\n\top := func() error {{\n\t\tresp, err := http.Post(u, \"\", nil)\n\t\tif err != nil {{\n\t\t\t{on_err}\n\t\t}}\n\t\tif resp.StatusCode == http.StatusTooManyRequests {{\n\t\t\treturn errLimited\n\t\t}}\n\t\tif resp.StatusCode >= 300 {{\n\t\t\treturn backoff.Permanent(errBad)\n\t\t}}\n\t\treturn nil\n\t}}\n\treturn backoff.Retry(op, backoff.NewExponentialBackOff())\n}}\n")
        };
        assert_eq!(
            conditions("a.go", &go("return backoff.Permanent(err)")),
            vec![BTreeSet::from([Condition::RateLimited])]
        );
        // With no stop call at all, the library's default (any failure).
        assert_eq!(
            conditions("a.go", &go("return err").replace("backoff.Permanent(errBad)", "errBad")),
            vec![BTreeSet::from([Condition::Any])]
        );
        assert_eq!(
            conditions("a.go", &go("return err")),
            vec![BTreeSet::from([Condition::RateLimited, Condition::Timeout, Condition::Reset])]
        );
        // async-retry: a call's own errors, not caught, are retried.
        let js = "import retry from 'async-retry';\nexport async function f(b) {\n  return retry(async (bail) => {\n    const res = await fetch(u, { method: 'POST', body: b });\n    if (!res.ok) { bail(new Error('no')); return; }\n    return res.json();\n  }, { retries: 3 });\n}\n";
        assert_eq!(conditions("a.js", js), vec![BTreeSet::from([Condition::Timeout, Condition::Reset])]);
    }

    #[test]
    fn a_fields_value_is_read_to_the_end_of_its_statement() {
        let go = "c := retryablehttp.NewClient()\n\tc.CheckRetry = func(ctx context.Context, r *http.Response, err error) (bool, error) {\n\t\treturn r.StatusCode == 429, nil\n\t}\n\treturn c\n";
        let v = field_values(go, "CheckRetry");
        assert_eq!(v.len(), 1);
        assert!(v[0].contains("429") && !v[0].contains("return c"), "{v:?}");
        let cs = "o.Retry.ShouldHandle = args => ValueTask.FromResult(\n    a == 1\n    || b(args));\nreturn builder;\n";
        let v = field_values(cs, "ShouldHandle");
        assert!(v[0].contains("|| b(args)") && !v[0].contains("builder"), "{v:?}");
        // Another name that ends the same, and a comparison, are not the field.
        assert!(field_values("c.MyCheckRetry = f\nif CheckRetry == nil {}\n", "CheckRetry").is_empty());
    }

    /// Loops that re-issue a write until it succeeds, one per language
    /// and exit shape: each covers it.
    #[test]
    fn a_loop_that_leaves_after_the_write_succeeds_covers_it() {
        let cases: &[(&str, &str)] = &[
            ("a.py", "def f(b):\n    done = False\n    while not done:\n        try:\n            requests.post('u', json=b)\n            done = True\n        except Exception:\n            time.sleep(1)\n"),
            ("a.py", "def f(b):\n    for i in range(3):\n        try:\n            requests.post('u', json=b)\n        except Exception:\n            time.sleep(1)\n            continue\n        else:\n            break\n"),
            ("a.py", "def f(b):\n    done = False\n    while not done:\n        try:\n            r = requests.post('u', json=b)\n            done, b = handle(r)\n        except ConnectionError:\n            time.sleep(1)\n"),
            ("a.go", "package a\nfunc f() error {\n\tdone := false\n\tfor !done {\n\t\tresp, err := http.Post(u, \"\", nil)\n\t\tif err != nil {\n\t\t\ttime.Sleep(time.Second)\n\t\t\tcontinue\n\t\t}\n\t\tdone, err = check(resp)\n\t}\n\treturn nil\n}\n"),
            ("a.py", "def f(b):\n    for i in range(3):\n        try:\n            r = requests.post('u', json=b)\n            if r.status_code < 500:\n                return r\n        except Exception:\n            time.sleep(1)\n"),
            ("a.go", "package a\nfunc f() error {\n\tfor i := 0; i < 3; i++ {\n\t\t_, err := http.Post(u, \"\", nil)\n\t\tif err == nil {\n\t\t\treturn nil\n\t\t}\n\t\ttime.Sleep(time.Second)\n\t}\n\treturn nil\n}\n"),
            ("a.go", "package a\nfunc f() error {\n\tfor i := 0; i < 3; i++ {\n\t\tif _, err := http.Post(u, \"\", nil); err == nil {\n\t\t\tbreak\n\t\t}\n\t\ttime.Sleep(time.Second)\n\t}\n\treturn nil\n}\n"),
            ("a.ts", "async function f(u: string) {\n  for (let i = 0; i < 3; i++) {\n    try {\n      const r = await fetch(u, { method: \"POST\" });\n      if (r.ok) return r;\n    } catch (e) {\n      await sleep(1000);\n    }\n  }\n}\n"),
            ("A.java", "class A {\n  String f() throws Exception {\n    while (true) {\n      try {\n        return rest.postForObject(u, b, String.class);\n      } catch (RestClientException e) {\n        Thread.sleep(1000);\n      }\n    }\n  }\n}\n"),
            // Counted and leaving on a good status, with no sleep: re-sent at once.
            ("a.py", "def f(b):\n    for i in range(NUM_RETRIES):\n        resp = conn.post('/logs', data=b)\n        if resp.ok:\n            return\n        print('failed')\n"),
        ];
        for (path, text) in cases {
            assert_eq!(covered_writes(path, text).len(), 1, "{path}:\n{text}");
        }
    }

    /// A sender that takes its request or method as a parameter writes
    /// when a caller passes a write method, or a request built with one a
    /// few lines before; a read built nearby says nothing.
    #[test]
    fn a_write_method_passed_in_or_built_before_the_call_is_seen() {
        let direct = "def go(e):\n    e.invoke(method=\"POST\", url=u)\n";
        assert_eq!(write_method_passed(direct, "invoke"), Some("POST".to_string()));
        let built = "func (s *S) Create(ctx context.Context) error {\n\treq, err := s.client.NewRequest(ctx, http.MethodPost, path, body)\n\tif err != nil {\n\t\treturn err\n\t}\n\treturn s.client.DoWithContext(ctx, req, nil)\n}\n";
        assert_eq!(write_method_passed(built, "DoWithContext"), Some("POST".to_string()));
        let read = "func (s *S) List(ctx context.Context) error {\n\treq, err := s.client.NewRequest(ctx, http.MethodGet, path, nil)\n\tx := \"POST\"\n\treturn s.client.DoWithContext(ctx, req, nil)\n}\n";
        assert_eq!(write_method_passed(read, "DoWithContext"), None);
        assert_eq!(write_method_passed("def invoke(self, method, url):\n    pass\n", "invoke"), None);
    }

    /// Active Job: the class's `retry_on` lines retry its `perform`, as one
    /// retry (the largest count); a service object named for a write
    /// (`Invoices::CreateService.call`) is the write it retries, one named
    /// for a read is not.
    #[test]
    fn a_jobs_retry_on_covers_what_its_perform_writes() {
        let job = |decls: &str, call: &str| {
            format!("class CreateJob < ApplicationJob\n{decls}\n  def perform(invoice)\n    {call}(invoice: invoice)\n  end\nend\n")
        };
        let both = job(
            "  retry_on RequestLimitError, attempts: 100\n  retry_on Net::ReadTimeout, attempts: 6",
            "Invoices::CreateService.call",
        );
        assert_eq!(
            covered_writes("app/jobs/create_job.rb", &both),
            vec![("Invoices::CreateService.call".to_string(), Attempts::Count(100.0))]
        );
        let forever =
            job("  retry_on Net::ReadTimeout, attempts: :unlimited", "Payments::CreateService.call");
        assert_eq!(
            covered_writes("app/jobs/create_job.rb", &forever),
            vec![("Payments::CreateService.call".to_string(), Attempts::Unbounded)]
        );
        let listed = models_of(
            "app/jobs/create_job.rb",
            &job("  retry_on RateLimited, Net::ReadTimeout, attempts: 6", "Invoices::CreateService.call"),
        );
        let conditions: Vec<_> = listed
            .covered
            .iter()
            .flat_map(|c| c.retries.iter().flat_map(|r| r.conditions.iter().copied()))
            .collect();
        assert!(conditions.contains(&Condition::Timeout), "every listed failure is read: {conditions:?}");
        let read = job("  retry_on Net::ReadTimeout, attempts: 6", "Invoices::FetchService.call");
        assert_eq!(covered_writes("app/jobs/create_job.rb", &read), vec![]);
        let none = job("", "Invoices::CreateService.call");
        assert_eq!(covered_writes("app/jobs/create_job.rb", &none), vec![]);
    }

    /// A loop bounded by a deadline whose flag is set from the answer
    /// (`exit_loop, url = handle(r)`) and whose `except` arm goes round:
    /// it retries its request.
    #[test]
    fn a_deadline_loop_left_through_a_tuple_assigned_flag_covers_its_request() {
        let text = "import requests, time\ndef invoke(b, max_duration):\n    start = time.time()\n    exit_loop = False\n    while not exit_loop:\n        try:\n            r = requests.post('u', json=b)\n            exit_loop, b = handle(r)\n        except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as e:\n            if time.time() - start >= max_duration:\n                raise\n            handle_retry(e)\n";
        assert_eq!(covered_writes("a.py", text).len(), 1, "{text}");
    }

    /// A retrying client used through an adapter elsewhere that sends
    /// itself a request its sender's callers build: the send is covered,
    /// as a write, since the library reader cannot see those callers. A
    /// send whose method the sender writes itself is the reader's.
    #[test]
    fn a_retrying_client_that_sends_its_callers_requests_covers_them() {
        let text = |send: &str| {
            format!("package a\n\ntype Client struct {{\n\tclient *retryablehttp.Client\n}}\n\nfunc NewClient() *Client {{\n\tclient := &Client{{client: retryablehttp.NewClient()}}\n\treturn client\n}}\n\n{send}\nfunc (s *Orders) Create(ctx context.Context) error {{\n\treq, _ := http.NewRequest(http.MethodPost, u, nil)\n\treturn s.c.DoWithContext(ctx, req)\n}}\n")
        };
        let covered = |t: &str| {
            models_of("a.go", t)
                .covered
                .iter()
                .filter(|c| c.op.callee == "c.client.Do" && !c.retries.is_empty())
                .map(|c| c.op.method.writes())
                .collect::<Vec<_>>()
        };
        let from_callers = text("func (c *Client) DoWithContext(ctx context.Context, r *http.Request) error {\n\t_, err := c.client.Do(r)\n\treturn err\n}\n");
        assert_eq!(covered(&from_callers), vec![true], "{from_callers}");
        let own = text("func (c *Client) Ping(ctx context.Context) error {\n\treq, _ := retryablehttp.NewRequest(http.MethodGet, u, nil)\n\t_, err := c.client.Do(req)\n\treturn err\n}\n");
        assert_eq!(covered(&own), Vec::<bool>::new(), "{own}");
    }

    /// Loops that send each pass and go on to the next, whatever the
    /// answer: worker, ticker and queue loops. None covers its write.
    #[test]
    fn a_loop_that_goes_on_after_the_write_does_not_cover_it() {
        let cases: &[(&str, &str)] = &[
            ("a.go", "package a\nfunc f(ctx context.Context) {\n\tfor {\n\t\tselect {\n\t\tcase <-t.C:\n\t\t\tif _, err := http.Post(u, \"\", nil); err != nil {\n\t\t\t\tlog.Print(err)\n\t\t\t}\n\t\tcase <-ctx.Done():\n\t\t\treturn\n\t\t}\n\t}\n}\n"),
            ("a.ts", "async function f() {\n  while (true) {\n    const job = await queue.next();\n    try {\n      await fetch(u, { method: \"POST\", body: job });\n    } catch (e) {\n      console.error(e);\n    }\n    if (stopped) break;\n  }\n}\n"),
            ("a.py", "def f(q):\n    while True:\n        item = q.get()\n        if item is None:\n            break\n        try:\n            requests.post('u', json=item)\n        except Exception:\n            time.sleep(1)\n"),
            ("A.cs", "class A {\n  async Task F() {\n    while (!ct.IsCancellationRequested) {\n      try {\n        await http.PostAsync(u, body);\n      } catch (Exception e) {\n        await Task.Delay(1000);\n      }\n    }\n  }\n}\n"),
        ];
        assert_no_covered_writes(cases);
    }

    /// A counted loop over a collection's indexes sends one request per
    /// element: it retries none of them.
    #[test]
    fn a_loop_over_a_collections_indexes_is_not_a_retry() {
        let cases: &[(&str, &str)] = &[
            ("a.ts", "async function f(items: string[]) {\n  for (let i = 0; i < items.length; i++) {\n    try {\n      await fetch(u, { method: \"POST\", body: items[i] });\n    } catch (e) {\n      await sleep(100);\n      continue;\n    }\n  }\n}\n"),
            // Each item sent in turn until one is taken: a walk over the
            // items, not the same request sent again.
            ("a.ts", "async function f(items: string[]) {\n  for (let i = 0; i < items.length; i++) {\n    try {\n      const r = await fetch(u, { method: \"POST\", body: items[i] });\n      if (r.ok) return r;\n    } catch (e) {\n      continue;\n    }\n  }\n}\n"),
            ("a.go", "package a\nfunc f(items []string) error {\n\tfor i := 0; i < len(items); i++ {\n\t\tif _, err := http.Post(u, \"\", nil); err != nil {\n\t\t\ttime.Sleep(time.Second)\n\t\t\tcontinue\n\t\t}\n\t}\n\treturn nil\n}\n"),
        ];
        assert_no_covered_writes(cases);
    }

    /// Write-named calls of standard-library modules and types stay in the
    /// process: no operation, even under a retry.
    #[test]
    fn standard_library_calls_named_like_writes_are_not_writes() {
        let cases: &[(&str, &str)] = &[
            ("a.go", "package a\nfunc f() error {\n\tfor i := 0; i < 3; i++ {\n\t\tif _, err := os.Create(p); err == nil {\n\t\t\treturn nil\n\t\t}\n\t\ttime.Sleep(time.Second)\n\t}\n\treturn nil\n}\n"),
            ("A.cs", "class A {\n  async Task F() {\n    while (true) {\n      try {\n        using var cts = CancellationTokenSource.CreateLinkedTokenSource(ct);\n        return;\n      } catch (Exception e) {\n        await Task.Delay(1000);\n      }\n    }\n  }\n}\n"),
        ];
        assert_no_covered_writes(cases);
        // A client's create under the same loop is a write.
        let got = covered_writes(
            "a.go",
            "package a\nfunc f() error {\n\tfor i := 0; i < 3; i++ {\n\t\tif _, err := client.Create(ctx, o); err == nil {\n\t\t\treturn nil\n\t\t}\n\t\ttime.Sleep(time.Second)\n\t}\n\treturn nil\n}\n",
        );
        assert_eq!(got.len(), 1, "{got:?}");
    }

    /// Options spread from a value built elsewhere: the bound cannot be
    /// told, so it is not the library's default (tenacity's is no bound).
    #[test]
    fn a_retry_given_spread_options_has_an_unknown_bound() {
        let src = |args: &str| {
            format!("import tenacity, requests\ndef f(b, opts):\n    for attempt in tenacity.Retrying({args}):\n        with attempt:\n            requests.post('u', json=b)\n")
        };
        assert_eq!(covered_attempts("a.py", &src("**opts")), vec![Attempts::Unknown]);
        assert_eq!(covered_attempts("a.py", &src("")), vec![Attempts::Unbounded]);
    }

    /// A shared request function that takes the method: what it sends is
    /// what its callers give it. A POST among them makes its retried
    /// request a write; callers that only read leave it unknown.
    #[test]
    fn a_request_function_that_takes_the_method_writes_what_its_callers_pass() {
        let go = |verb: &str| {
            format!("package a\nfunc (c *Client) doRequest(ctx context.Context, method, path string, body io.Reader) (*http.Response, error) {{\n\tfor attempt := 0; attempt <= 3; attempt++ {{\n\t\treq, _ := http.NewRequestWithContext(ctx, method, c.base+path, body)\n\t\tresp, err := c.httpClient.Do(req)\n\t\tif err != nil {{\n\t\t\ttime.Sleep(time.Second)\n\t\t\tcontinue\n\t\t}}\n\t\treturn resp, nil\n\t}}\n\treturn nil, errors.New(\"x\")\n}}\nfunc (c *Client) CreateIssue(ctx context.Context) error {{\n\t_, err := c.doRequest(ctx, {verb}, \"/issues\", nil)\n\treturn err\n}}\n")
        };
        assert_eq!(covered_writes("a.go", &go("http.MethodPost")).len(), 1);
        assert!(covered_writes("a.go", &go("http.MethodGet")).is_empty());
        let py = |verb: &str| {
            format!("import requests, time\nclass C:\n    def _request(self, method, url, **kw):\n        for attempt in range(3):\n            try:\n                return self.session.request(method, url, **kw)\n            except requests.ConnectionError:\n                time.sleep(1)\n\n    def create(self, b):\n        return self._request({verb}, '/orders', json=b)\n")
        };
        assert_eq!(covered_writes("a.py", &py("'POST'")).len(), 1);
        assert!(covered_writes("a.py", &py("'GET'")).is_empty());
        // A retry around one call of it: that call's method, whatever other
        // callers pass.
        let around = "import tenacity\nclass R:\n    async def _send_request(self, method, url, **kw):\n        return await self.session.request(method, url, **kw)\n\n    @tenacity.retry(stop=tenacity.stop_after_attempt(10))\n    async def _wait_until_alive(self):\n        return await self._send_request('GET', self.url + '/alive')\n\n    async def close(self):\n        await self._send_request('POST', self.url + '/stop')\n";
        assert!(covered_writes("a.py", around).is_empty(), "{:?}", covered_writes("a.py", around));
        let posting = around.replace("'GET', self.url + '/alive'", "'POST', self.url + '/start'");
        assert_eq!(covered_writes("a.py", &posting).len(), 1);
    }

    /// A Go poll that leaves on a deadline it made is bounded in time; one
    /// that leaves only when the caller's context ends is not.
    #[test]
    fn a_go_select_loop_with_its_own_deadline_is_bounded() {
        let src = |setup: &str, case: &str| {
            format!("package a\nfunc f(ctx context.Context) error {{\n\t{setup}\n\tfor {{\n\t\tselect {{\n\t\tcase <-{case}:\n\t\t\treturn errors.New(\"timeout\")\n\t\tcase <-t.C:\n\t\t\t_, err := http.Post(u, \"\", nil)\n\t\t\tif err != nil {{\n\t\t\t\tcontinue\n\t\t\t}}\n\t\t\treturn nil\n\t\t}}\n\t}}\n}}\n")
        };
        let attempts = |text: &str| covered_attempts("a.go", text);
        assert_eq!(
            attempts(&src("deadline := time.After(15 * time.Minute)", "deadline")),
            vec![Attempts::Bounded]
        );
        assert_eq!(
            attempts(&src("tctx, cancel := context.WithTimeout(ctx, d)", "tctx.Done()")),
            vec![Attempts::Bounded]
        );
        assert_eq!(attempts(&src("_ = 0", "ctx.Done()")), vec![Attempts::Unbounded]);
    }

    #[test]
    fn go_loop_around_http_post() {
        let got = covered_writes(
            "a.go",
            "package a\nfunc send(b []byte) error {\n\tfor i := 0; i < 5; i++ {\n\t\tresp, err := http.Post(url, \"application/json\", bytes.NewReader(b))\n\t\tif err != nil {\n\t\t\ttime.Sleep(time.Second)\n\t\t\tcontinue\n\t\t}\n\t\tresp.Body.Close()\n\t\treturn nil\n\t}\n\treturn errors.New(\"x\")\n}\n",
        );
        assert_eq!(got, vec![("http.Post".to_string(), Attempts::Count(5.0))]);
    }

    #[test]
    fn java_annotation_and_ts_loop() {
        let got = covered_writes(
            "A.java",
            "class A {\n  @Retryable(maxAttempts = 3)\n  public Order create(Order o) {\n    return rest.postForObject(url, o, Order.class);\n  }\n}\n",
        );
        assert_eq!(got, vec![("rest.postForObject".to_string(), Attempts::Count(3.0))]);
        let ts = covered_writes(
            "a.ts",
            "async function create(b: Body) {\n  for (let i = 0; i < 4; i++) {\n    try {\n      return await fetch(url, { method: \"POST\", body: JSON.stringify(b) });\n    } catch (e) {\n      await sleep(100);\n    }\n  }\n}\n",
        );
        assert_eq!(ts, vec![("fetch".to_string(), Attempts::Count(4.0))]);
    }
}
