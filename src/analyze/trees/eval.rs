//! Following a value from where it is written to where a retry uses it,
//! across the files of one revision: names through their bindings (scopes,
//! reassignment, class fields, enum members, default arguments), imports
//! (Python modules, JavaScript/TypeScript relative modules, Go packages,
//! Java classes), object and dictionary literals with spreads (later keys
//! override), and, for what the tree does not structure (arithmetic,
//! `min`/`max`, durations, an environment read with a written default), the
//! floor's own expression evaluator ([`crate::analyze::knobs::value`]) over
//! the expression's text with every name in it already followed.
//!
//! Every value comes with its trail: the places it was followed through,
//! outermost first, so a regression is reported at the line that caused it.

use tree_sitter::Node;

use super::defs::{children, class_of, line_of, scopes_of, unquote, Def, Index};
use super::grammar::Grammar;
use crate::analyze::knobs::tokens::tokenize;
use crate::analyze::knobs::value::{self, Bindings, Value};

/// How many bindings deep a value is followed; deeper is "cannot compute".
const MAX_HOPS: usize = 16;

/// A place in one revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Loc {
    pub(crate) path: String,
    pub(crate) line: u32,
}

/// A computed value and the places it was followed through.
#[derive(Debug, Clone)]
pub(crate) struct Evaluated {
    pub(crate) value: Value,
    pub(crate) trail: Vec<Loc>,
}

/// The files of one revision that the evaluator may follow a name into.
pub(crate) struct World<'t> {
    pub(crate) files: Vec<Index<'t>>,
}

/// One entry of an object, dictionary or struct literal: its key, the file
/// and the node of its value.
pub(crate) type Entry<'t> = (String, usize, Node<'t>);

impl<'t> World<'t> {
    /// The value of expression `n` in file `file`.
    pub(crate) fn eval(&self, file: usize, n: Node<'t>, hops: usize) -> Evaluated {
        let f = self.files[file].file;
        let text = f.text_of(n);
        let known = |v: Value| Evaluated { value: v, trail: Vec::new() };
        if hops > MAX_HOPS {
            return known(Value::Unknown(short(text)));
        }
        match n.kind() {
            "integer"
            | "float"
            | "number"
            | "int_literal"
            | "float_literal"
            | "decimal_integer_literal"
            | "decimal_floating_point_literal"
            | "hex_integer_literal" => known(number(text)),
            "true" => known(Value::Bool(true)),
            "false" => known(Value::Bool(false)),
            "none" | "null" | "nil" | "undefined" | "null_literal" => known(Value::Null),
            "string"
            | "interpreted_string_literal"
            | "raw_string_literal"
            | "string_literal"
            | "template_string" => {
                let interpolated = children(n).iter().any(|c| {
                    matches!(c.kind(), "interpolation" | "template_substitution" | "string_interpolation")
                });
                if interpolated {
                    known(Value::Unknown(short(text)))
                } else {
                    known(value::from_text(&unquote(text)))
                }
            }
            "parenthesized_expression"
            | "as_expression"
            | "satisfies_expression"
            | "non_null_expression"
            | "type_assertion"
            | "expression_list"
            | "literal_element"
            | "expression_statement" => match children(n).first() {
                // One more hop per wrapper: nesting, like bindings, is
                // bounded (a file of a million parentheses must not
                // exhaust the stack; past the bound it is "cannot compute").
                Some(c) if children(n).len() == 1 || n.kind() != "expression_list" => {
                    self.eval(file, *c, hops + 1)
                }
                _ => known(Value::Unknown(short(text))),
            },
            "identifier"
            | "attribute"
            | "member_expression"
            | "selector_expression"
            | "field_access"
            | "scoped_identifier"
            | "shorthand_property_identifier" => self.eval_name(file, n, hops),
            "binary_operator" | "binary_expression" | "boolean_operator" => {
                let op = n.child_by_field_name("operator").map(|o| f.text_of(o)).unwrap_or("");
                let op = if op.is_empty() { operator_between(f.text_of(n), n, f) } else { op.to_string() };
                if matches!(op.as_str(), "??" | "||" | "or") {
                    if let (Some(l), Some(r)) =
                        (n.child_by_field_name("left"), n.child_by_field_name("right"))
                    {
                        let left = self.eval(file, l, hops + 1);
                        return if left.value.is_known() && left.value != Value::Null {
                            left
                        } else {
                            self.eval(file, r, hops + 1)
                        };
                    }
                }
                self.fallback(file, n, hops)
            }
            _ => self.fallback(file, n, hops),
        }
    }

    /// A name or a member path: followed to its binding.
    fn eval_name(&self, file: usize, n: Node<'t>, hops: usize) -> Evaluated {
        let f = self.files[file].file;
        let text = f.text_of(n).trim().to_string();
        if is_environment(&text) {
            return Evaluated { value: Value::Unknown(text), trail: Vec::new() };
        }
        let name = text.strip_suffix(".value").unwrap_or(&text);
        if let Some((df, d)) = self.resolve(file, name, n, hops) {
            let mut inner = self.eval(df, d.value, hops + 1);
            inner.trail.insert(0, Loc { path: self.files[df].file.path.clone(), line: line_of(d.value) });
            return inner;
        }
        if let Some((obj, key)) = name.rsplit_once('.') {
            if let Some((ef, node)) = self.member(file, obj, key, n, hops) {
                let mut inner = self.eval(ef, node, hops + 1);
                inner.trail.insert(0, Loc { path: self.files[ef].file.path.clone(), line: line_of(node) });
                return inner;
            }
        }
        // `math.inf`, `Number.MAX_SAFE_INTEGER`: the floor's evaluator knows them.
        let v = value::eval(&tokenize(text.as_bytes()), &Bindings::default());
        Evaluated { value: if v.is_known() { v } else { Value::Unknown(short(&text)) }, trail: Vec::new() }
    }

    /// `obj.key` where `obj` is bound to an object or dictionary literal.
    fn member(
        &self,
        file: usize,
        obj: &str,
        key: &str,
        at: Node<'t>,
        hops: usize,
    ) -> Option<(usize, Node<'t>)> {
        let (of, d) = self.resolve(file, obj, at, hops)?;
        let entries = self.entries(of, d.value, hops + 1);
        entries.into_iter().rev().find(|(k, _, _)| k == key).map(|(_, ef, node)| (ef, node))
    }

    /// The entries of an object, dictionary or struct literal (or of a name
    /// bound to one), spreads expanded in order so later keys override.
    pub(crate) fn entries(&self, file: usize, n: Node<'t>, hops: usize) -> Vec<Entry<'t>> {
        let f = self.files[file].file;
        if hops > MAX_HOPS {
            return Vec::new();
        }
        let mut out = Vec::new();
        match n.kind() {
            "object" | "dictionary" | "literal_value" => {
                for c in children(n) {
                    match c.kind() {
                        "pair" | "keyed_element" => {
                            if let (Some(k), Some(v)) = (
                                c.child_by_field_name("key").or_else(|| children(c).first().copied()),
                                c.child_by_field_name("value").or_else(|| children(c).get(1).copied()),
                            ) {
                                out.push((unquote(f.text_of(k).trim()), file, v));
                            }
                        }
                        "shorthand_property_identifier" => out.push((f.text_of(c).to_string(), file, c)),
                        "spread_element" | "dictionary_splat" => {
                            if let Some(inner) = children(c).first() {
                                out.extend(self.entries(file, *inner, hops + 1));
                            }
                        }
                        _ => {}
                    }
                }
            }
            "composite_literal" => {
                if let Some(body) = n.child_by_field_name("body") {
                    out.extend(self.entries(file, body, hops + 1));
                }
            }
            "unary_expression" if f.text_of(n).starts_with('&') => {
                if let Some(inner) = children(n).first() {
                    out.extend(self.entries(file, *inner, hops + 1));
                }
            }
            "parenthesized_expression" | "as_expression" | "satisfies_expression" => {
                if let Some(inner) = children(n).first() {
                    out.extend(self.entries(file, *inner, hops + 1));
                }
            }
            // `dict(retries=3, **BASE)`.
            "call" if n.child_by_field_name("function").is_some_and(|c| f.text_of(c) == "dict") => {
                if let Some(args) = n.child_by_field_name("arguments") {
                    for a in children(args) {
                        match a.kind() {
                            "keyword_argument" => {
                                if let (Some(k), Some(v)) =
                                    (a.child_by_field_name("name"), a.child_by_field_name("value"))
                                {
                                    out.push((f.text_of(k).to_string(), file, v));
                                }
                            }
                            "dictionary_splat" => {
                                if let Some(inner) = children(a).first() {
                                    out.extend(self.entries(file, *inner, hops + 1));
                                }
                            }
                            _ => {}
                        }
                    }
                }
            }
            "identifier" | "attribute" | "member_expression" | "selector_expression" | "field_access" => {
                let name = f.text_of(n).trim().to_string();
                if let Some((df, d)) = self.resolve(file, &name, n, hops) {
                    out.extend(self.entries(df, d.value, hops + 1));
                }
            }
            _ => {}
        }
        out
    }

    /// The binding `name` refers to from node `at` of `file`, in this file
    /// or, through its imports, another file of the revision.
    pub(crate) fn resolve(
        &self,
        file: usize,
        name: &str,
        at: Node<'t>,
        hops: usize,
    ) -> Option<(usize, Def<'t>)> {
        if hops > MAX_HOPS {
            return None;
        }
        let ix = &self.files[file];
        let f = ix.file;
        let scopes = scopes_of(at);
        let pos = at.start_byte();
        if let Some(rest) = name.strip_prefix("self.").or_else(|| name.strip_prefix("this.")) {
            let class = class_of(f, at)?;
            return ix.lookup(&format!("{class}.{rest}"), &[], pos).map(|d| (file, d));
        }
        // The binding must not be the use itself (`x = x + 1` reads the old x).
        if let Some(d) = ix.lookup(name, &scopes, pos).filter(|d| !contains(d.value, at)) {
            return Some((file, d));
        }
        // Inside a class, a bare name is also the class's own (Java fields,
        // Python class-body names).
        if !name.contains('.') {
            if let Some(class) = class_of(f, at) {
                if let Some(d) =
                    ix.lookup(&format!("{class}.{name}"), &[], pos).filter(|d| !contains(d.value, at))
                {
                    return Some((file, d));
                }
            }
        }
        let (head, rest) = match name.split_once('.') {
            Some((h, r)) => (h, Some(r)),
            None => (name, None),
        };
        for imp in ix.imports.iter().filter(|i| i.local == head) {
            let Some(target) = self.module_file(file, &imp.module, &imp.name) else { continue };
            let want = match (imp.name.as_str(), rest) {
                ("", Some(r)) => r.to_string(),
                ("", None) => continue,
                (n, Some(r)) => format!("{n}.{r}"),
                (n, None) => n.to_string(),
            };
            let tix = &self.files[target];
            if let Some(d) = tix.lookup(&want, &[], usize::MAX) {
                return Some((target, d));
            }
        }
        // Go: a package's files share one scope. Java: `Config.N` is the
        // class in Config.java.
        match f.grammar {
            Grammar::Go => {
                let dir = parent(&f.path);
                for (i, other) in self.files.iter().enumerate() {
                    if i != file && other.file.grammar == Grammar::Go && parent(&other.file.path) == dir {
                        if let Some(d) = other.lookup(name, &[], usize::MAX) {
                            return Some((i, d));
                        }
                    }
                }
            }
            Grammar::Java if rest.is_some() => {
                let want = format!("/{head}.java");
                for (i, other) in self.files.iter().enumerate() {
                    let p = format!("/{}", other.file.path);
                    if i != file && p.ends_with(&want) {
                        if let Some(d) = other.lookup(name, &[], usize::MAX) {
                            return Some((i, d));
                        }
                    }
                }
            }
            _ => {}
        }
        None
    }

    /// The file of this revision a module path names, seen from `file`.
    fn module_file(&self, file: usize, module: &str, name: &str) -> Option<usize> {
        let from = &self.files[file].file;
        let candidates: Vec<String> = match from.grammar {
            Grammar::Python => {
                let dots = module.chars().take_while(|c| *c == '.').count();
                let rel = module[dots..].replace('.', "/");
                let base = if dots > 0 {
                    let mut d = parent(&from.path).to_string();
                    for _ in 1..dots {
                        d = parent(&d).to_string();
                    }
                    join(&d, &rel)
                } else {
                    rel.clone()
                };
                let mut c = vec![format!("{base}.py"), format!("{base}/__init__.py")];
                if !name.is_empty() && !rel.is_empty() {
                    c.push(format!("{base}/{name}.py"));
                }
                c
            }
            Grammar::JavaScript | Grammar::TypeScript | Grammar::Tsx => {
                if !module.starts_with('.') {
                    return None;
                }
                let base = normalize(&join(parent(&from.path), module));
                let stem = base.trim_end_matches(".js").trim_end_matches(".mjs").trim_end_matches(".cjs");
                ["ts", "tsx", "js", "mjs", "cjs", "jsx"]
                    .iter()
                    .flat_map(|e| [format!("{stem}.{e}"), format!("{stem}/index.{e}")])
                    .collect()
            }
            Grammar::Go => {
                let tail = module.rsplit('/').find(|s| !s.starts_with('v') || s.len() > 3).unwrap_or(module);
                return self.files.iter().position(|o| {
                    o.file.grammar == Grammar::Go && parent(&o.file.path).rsplit('/').next() == Some(tail)
                });
            }
            Grammar::Java => vec![format!("{}.java", module.replace('.', "/"))],
            // The operation model reads values in these grammars within a
            // file only.
            Grammar::Ruby | Grammar::Php | Grammar::CSharp | Grammar::Kotlin => return None,
        };
        // A module path names a file by its tail: the repository layout
        // (`src/`, a package root) is not known, so the longest match wins.
        self.files.iter().position(|o| {
            let p = format!("/{}", o.file.path);
            candidates.iter().any(|c| p.ends_with(&format!("/{}", c.trim_start_matches('/'))))
        })
    }

    /// What the tree does not structure: the expression's text through the
    /// floor's evaluator, every name in it followed first.
    fn fallback(&self, file: usize, n: Node<'t>, hops: usize) -> Evaluated {
        let f = self.files[file].file;
        let text = f.text_of(n);
        let mut bindings = Bindings::default();
        let mut trail = Vec::new();
        let mut names = Vec::new();
        collect_names(n, &mut names, 0);
        for m in names {
            let t = f.text_of(m).trim().to_string();
            if bindings.by_name.contains_key(&t) || is_environment(&t) {
                continue;
            }
            let e = self.eval_name(file, m, hops + 1);
            if e.value.is_known() {
                trail.extend(e.trail);
                bindings.by_name.insert(t, e.value);
            }
        }
        let v = value::eval(&tokenize(text.as_bytes()), &bindings);
        Evaluated { value: if v.is_known() { v } else { Value::Unknown(short(text)) }, trail }
    }
}

/// Names and member paths inside `n` that are values (not a call's callee).
fn collect_names<'t>(n: Node<'t>, out: &mut Vec<Node<'t>>, depth: usize) {
    if depth > 40 || out.len() > 32 {
        return;
    }
    for c in children(n) {
        let is_callee = n.child_by_field_name("function").is_some_and(|f| f.id() == c.id())
            || n.child_by_field_name("name")
                .is_some_and(|f| f.id() == c.id() && n.kind() == "method_invocation");
        match c.kind() {
            _ if is_callee => {}
            "identifier" | "attribute" | "member_expression" | "selector_expression" | "field_access" => {
                out.push(c)
            }
            "keyword_argument" => {
                if let Some(v) = c.child_by_field_name("value") {
                    match v.kind() {
                        "identifier" | "attribute" => out.push(v),
                        _ => collect_names(v, out, depth + 1),
                    }
                }
            }
            _ => collect_names(c, out, depth + 1),
        }
    }
}

fn contains(outer: Node<'_>, inner: Node<'_>) -> bool {
    outer.start_byte() <= inner.start_byte() && inner.end_byte() <= outer.end_byte()
}

/// The operator token between a binary node's operands, when the grammar
/// gives it no field.
fn operator_between(_text: &str, n: Node<'_>, f: &super::defs::FileTree) -> String {
    let mut cursor = n.walk();
    let op = n.children(&mut cursor).find(|c| !c.is_named()).map(|c| f.text_of(c).to_string());
    op.unwrap_or_default()
}

/// Reads of the environment with no written default.
fn is_environment(text: &str) -> bool {
    text.starts_with("process.env.")
        || text.starts_with("os.environ[")
        || text.starts_with("import.meta.env.")
}

fn number(text: &str) -> Value {
    let t: String = text.chars().filter(|c| *c != '_').collect();
    let t = t.trim_end_matches(['l', 'L', 'f', 'F', 'd', 'D', 'n']);
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok().map(|v| v as f64)
    } else {
        t.parse::<f64>().ok()
    };
    match v {
        Some(v) => Value::Num { v, seconds: false },
        None => Value::Unknown(text.to_string()),
    }
}

fn short(text: &str) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > 80 {
        one.chars().take(77).collect::<String>() + "..."
    } else {
        one
    }
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

fn join(dir: &str, rel: &str) -> String {
    if dir.is_empty() {
        rel.to_string()
    } else if rel.is_empty() {
        dir.to_string()
    } else {
        format!("{dir}/{rel}")
    }
}

/// `a/b/../c/./d` as `a/c/d`.
pub(crate) fn normalize(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            p => out.push(p),
        }
    }
    out.join("/")
}

#[cfg(test)]
mod tests {
    use super::super::defs::FileTree;
    use super::*;

    /// The value of the last expression statement's expression, with the
    /// other files beside it.
    fn value_of(files: &[(&str, &str)]) -> (Value, Vec<Loc>) {
        let trees: Vec<FileTree> =
            files.iter().map(|(p, t)| FileTree::new(p, Grammar::of_path(p).unwrap(), t).unwrap()).collect();
        let world = World { files: trees.iter().map(Index::of).collect() };
        fn last_statement<'t>(n: Node<'t>, out: &mut Option<Node<'t>>) {
            for c in children(n) {
                if c.kind() == "expression_statement" {
                    *out = Some(c);
                }
                last_statement(c, out);
            }
        }
        let mut last = None;
        last_statement(trees[0].tree.root_node(), &mut last);
        let expr = children(last.unwrap())[0];
        let e = world.eval(0, expr, 0);
        (e.value, e.trail)
    }

    fn num(v: f64) -> Value {
        Value::Num { v, seconds: false }
    }

    #[test]
    fn names_are_followed_through_scopes_classes_and_reassignment() {
        assert_eq!(value_of(&[("a.py", "N = 3\nM = N * 2\nM\n")]).0, num(6.0));
        assert_eq!(value_of(&[("a.py", "class Cfg:\n    n = 4\nCfg.n\n")]).0, num(4.0));
        assert_eq!(value_of(&[("a.py", "N = 3\nN = 5\nN\n")]).0, num(5.0));
        assert_eq!(value_of(&[("a.ts", "enum L { Tries = 7 }\nL.Tries;\n")]).0, num(7.0));
        assert_eq!(value_of(&[("a.py", "import os\nN = int(os.getenv('N', '9'))\nN\n")]).0, num(9.0));
        assert_eq!(value_of(&[("a.ts", "const n = Number(process.env.N ?? 4);\nn;\n")]).0, num(4.0));
        assert_eq!(value_of(&[("a.py", "A = 3\nB = 10\nmin(A, B)\n")]).0, num(3.0));
    }

    #[test]
    fn objects_spread_with_later_keys_overriding() {
        let code = "const BASE = { retries: 3 };\nconst OPTS = { ...BASE, retries: 8 };\nOPTS.retries;\n";
        let (v, trail) = value_of(&[("a.ts", code)]);
        assert_eq!(v, num(8.0));
        assert_eq!(trail.last().map(|l| l.line), Some(2));
        let code = "const BASE = { retries: 3 };\nconst OPTS = { factor: 2, ...BASE };\nOPTS.retries;\n";
        assert_eq!(value_of(&[("a.ts", code)]).0, num(3.0));
    }

    #[test]
    fn imports_reach_the_file_that_binds_the_name() {
        let (v, trail) =
            value_of(&[("app/c.py", "from .settings import N\nN\n"), ("app/settings.py", "N = 8\n")]);
        assert_eq!(v, num(8.0));
        assert_eq!(trail, [Loc { path: "app/settings.py".into(), line: 1 }]);
        let (v, _) = value_of(&[
            ("src/c.ts", "import { LIMITS } from './limits';\nLIMITS.retries;\n"),
            ("src/limits.ts", "export const LIMITS = { retries: 6 };\n"),
        ]);
        assert_eq!(v, num(6.0));
        let (v, _) = value_of(&[
            ("pkg/a.go", "package pkg\nfunc f() { MaxTries }\n"),
            ("pkg/b.go", "package pkg\nconst MaxTries = 5\n"),
        ]);
        assert_eq!(v, num(5.0));
    }

    #[test]
    fn what_cannot_be_computed_is_unknown_with_its_text() {
        assert!(matches!(value_of(&[("a.py", "load()\n")]).0, Value::Unknown(t) if t == "load()"));
        assert!(matches!(value_of(&[("a.ts", "process.env.N;\n")]).0, Value::Unknown(_)));
    }
}
