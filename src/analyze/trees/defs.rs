//! What one version of a file binds: its constants and assignments (by
//! scope, in order, so a reassignment is seen), class and struct field
//! defaults, enum members, default arguments, and what it imports.
//!
//! A name bound in a class is kept as `Class.name` (so `Cfg.n`,
//! `Limits.Tries` and `self.n`/`this.n` inside the class find it); a name
//! bound in a function is kept with that function's scope and is seen only
//! from inside it.

use std::collections::HashMap;

use tree_sitter::{Node, Tree};

use super::grammar::Grammar;

/// The deepest nesting read; deeper code (generated tables) is not bound.
const MAX_DEPTH: usize = 300;

/// One parsed version of a file.
pub(crate) struct FileTree {
    pub(crate) path: String,
    pub(crate) grammar: Grammar,
    pub(crate) text: String,
    pub(crate) tree: Tree,
}

impl FileTree {
    pub(crate) fn new(path: &str, grammar: Grammar, text: &str) -> Result<FileTree, String> {
        let tree = grammar.parse(text)?;
        Ok(FileTree { path: path.to_string(), grammar, text: text.to_string(), tree })
    }

    /// The source text of `n`.
    pub(crate) fn text_of(&self, n: Node<'_>) -> &str {
        self.text.get(n.byte_range()).unwrap_or("")
    }
}

/// 1-based line of a node.
pub(crate) fn line_of(n: Node<'_>) -> u32 {
    u32::try_from(n.start_position().row).unwrap_or(u32::MAX - 1) + 1
}

/// A value bound to a name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Def<'t> {
    pub(crate) value: Node<'t>,
    /// The function it is local to (its node id), `None` at file or class level.
    pub(crate) scope: Option<usize>,
    /// Where the binding starts, for "the last binding before the use".
    pub(crate) at: usize,
}

/// A name brought in from another module.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Import {
    /// The name as the importing file uses it.
    pub(crate) local: String,
    /// The module as written (`.settings`, `./retry`, `github.com/x/y`).
    pub(crate) module: String,
    /// The imported name; empty when the local name is the module itself.
    pub(crate) name: String,
}

/// Everything one version of a file binds.
pub(crate) struct Index<'t> {
    pub(crate) file: &'t FileTree,
    pub(crate) defs: HashMap<String, Vec<Def<'t>>>,
    pub(crate) imports: Vec<Import>,
}

impl<'t> Index<'t> {
    pub(crate) fn of(file: &'t FileTree) -> Index<'t> {
        let mut ix = Index { file, defs: HashMap::new(), imports: Vec::new() };
        ix.walk(file.tree.root_node(), &Ctx::default(), 0);
        ix
    }

    /// The binding of `name` seen from `at` inside `scopes` (innermost
    /// first): the last one before `at` in the innermost scope that binds
    /// it, else the file's last.
    pub(crate) fn lookup(&self, name: &str, scopes: &[usize], at: usize) -> Option<Def<'t>> {
        let defs = self.defs.get(name)?;
        for s in scopes {
            let local: Vec<&Def<'t>> = defs.iter().filter(|d| d.scope == Some(*s)).collect();
            if let Some(d) = local.iter().rev().find(|d| d.at <= at).or(local.last()) {
                return Some(**d);
            }
        }
        let file: Vec<&Def<'t>> = defs.iter().filter(|d| d.scope.is_none()).collect();
        file.iter().rev().find(|d| d.at <= at).or(file.last()).map(|d| **d)
    }

    fn bind(&mut self, name: String, value: Node<'t>, ctx: &Ctx, at: usize) {
        if name.is_empty() {
            return;
        }
        let name = match &ctx.class {
            Some(c) if ctx.function.is_none() => format!("{c}.{name}"),
            _ => name,
        };
        self.defs.entry(name).or_default().push(Def { value, scope: ctx.function, at });
    }

    /// `self.x = v` / `this.x = v` in a method binds the class's `x`.
    fn bind_member(&mut self, target: &str, value: Node<'t>, ctx: &Ctx, at: usize) {
        let rest = target.strip_prefix("self.").or_else(|| target.strip_prefix("this."));
        match (rest, &ctx.class) {
            (Some(field), Some(c)) if !field.contains('.') => {
                self.defs.entry(format!("{c}.{field}")).or_default().push(Def { value, scope: None, at })
            }
            // `cfg.RetryMax = 10`, `Settings.n = 3`: bound by its whole path.
            _ => {
                self.defs.entry(target.to_string()).or_default().push(Def { value, scope: ctx.function, at })
            }
        }
    }

    fn walk(&mut self, n: Node<'t>, ctx: &Ctx, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let f = self.file;
        let text = |n: Node<'t>| f.text_of(n).to_string();
        let field = |n: Node<'t>, name: &str| n.child_by_field_name(name);
        let at = n.start_byte();
        let mut inner = ctx.clone();
        match n.kind() {
            // Scopes.
            "class_definition"
            | "class_declaration"
            | "class"
            | "enum_declaration"
            | "interface_declaration"
            | "record_declaration"
            | "object_declaration" => {
                if let Some(name) = field(n, "name") {
                    inner.class = Some(text(name));
                    inner.function = None;
                }
            }
            k if is_function(k) => {
                inner.function = Some(n.id());
            }
            _ => {}
        }
        match n.kind() {
            // Python `x = v`, `x: int = v`, `self.x = v`; JS `x = v`.
            "assignment" | "assignment_expression" => {
                if let (Some(l), Some(r)) = (field(n, "left"), field(n, "right")) {
                    match l.kind() {
                        "identifier" => self.bind(text(l), r, ctx, at),
                        "attribute" | "member_expression" => self.bind_member(&text(l), r, ctx, at),
                        _ => {}
                    }
                }
            }
            // Go `a, b = x, y` and `x := v`; each left name with its value.
            "assignment_statement" | "short_var_declaration" | "const_spec" | "var_spec" => {
                let (ls, rs) = match n.kind() {
                    "const_spec" | "var_spec" => (names_of(n, "name"), field(n, "value")),
                    _ => (field(n, "left").map(|l| named(l)).unwrap_or_default(), field(n, "right")),
                };
                let rs = rs.map(named).unwrap_or_default();
                for (l, r) in ls.iter().zip(rs.iter()) {
                    match l.kind() {
                        "identifier" => self.bind(text(*l), *r, ctx, at),
                        "selector_expression" => self.bind_member(&text(*l), *r, ctx, at),
                        _ => {}
                    }
                }
            }
            // JS/TS `const x = v`, Java `int x = v` (fields and locals).
            "variable_declarator" => {
                if let (Some(l), Some(r)) = (field(n, "name"), field(n, "value")) {
                    if matches!(l.kind(), "identifier") {
                        self.bind(text(l), r, ctx, at);
                    }
                }
            }
            // Class fields with a default (TS, JS), enum members.
            "public_field_definition" | "field_definition" | "enum_assignment" => {
                let name = field(n, "name").or_else(|| field(n, "property"));
                if let (Some(l), Some(r)) = (name, field(n, "value")) {
                    self.bind(text(l), r, &Ctx { function: None, ..ctx.clone() }, at);
                }
            }
            // Default arguments, bound in the function they belong to.
            "default_parameter"
            | "typed_default_parameter"
            | "required_parameter"
            | "optional_parameter"
            | "assignment_pattern" => {
                let name = field(n, "name").or_else(|| field(n, "pattern")).or_else(|| field(n, "left"));
                let value = field(n, "value").or_else(|| field(n, "right"));
                if let (Some(l), Some(r), Some(func)) = (name, value, enclosing_function(n)) {
                    if l.kind() == "identifier" {
                        let c = Ctx { function: Some(func.id()), ..ctx.clone() };
                        self.bind(text(l), r, &c, at);
                    }
                }
            }
            // `{ retries = 3 } = {}` in a parameter list.
            "object_assignment_pattern" => {
                if let (Some(l), Some(r), Some(func)) =
                    (field(n, "left"), field(n, "right"), enclosing_function(n))
                {
                    let c = Ctx { function: Some(func.id()), ..ctx.clone() };
                    self.bind(text(l), r, &c, at);
                }
            }
            "import_from_statement" => self.python_from_import(n),
            "import_statement" if f.grammar == Grammar::Python => {
                for c in children(n) {
                    let (module, local) = match c.kind() {
                        "dotted_name" => (text(c), text(c)),
                        "aliased_import" => (
                            field(c, "name").map(text).unwrap_or_default(),
                            field(c, "alias").map(text).unwrap_or_default(),
                        ),
                        _ => continue,
                    };
                    self.imports.push(Import { local, module, name: String::new() });
                }
            }
            "import_statement" => self.js_import(n),
            "import_spec" => {
                let module = field(n, "path").map(|p| unquote(&text(p))).unwrap_or_default();
                let local = field(n, "name")
                    .map(text)
                    .unwrap_or_else(|| module.rsplit('/').next().unwrap_or("").to_string());
                self.imports.push(Import { local, module, name: String::new() });
            }
            "import_declaration" if f.grammar == Grammar::Java => {
                let path = text(n);
                let path = path.trim_start_matches("import").trim().trim_start_matches("static").trim();
                let path = path.trim_end_matches(';').trim();
                if let Some((module, name)) = path.rsplit_once('.') {
                    self.imports.push(Import {
                        local: name.to_string(),
                        module: module.to_string(),
                        name: name.to_string(),
                    });
                }
            }
            _ => {}
        }
        for c in children(n) {
            self.walk(c, &inner, depth + 1);
        }
    }

    fn python_from_import(&mut self, n: Node<'t>) {
        let f = self.file;
        let Some(module) = n.child_by_field_name("module_name") else { return };
        let module = f.text_of(module).to_string();
        let mut cursor = n.walk();
        for c in n.children_by_field_name("name", &mut cursor) {
            let (name, local) = match c.kind() {
                "aliased_import" => (
                    c.child_by_field_name("name").map(|x| f.text_of(x)).unwrap_or(""),
                    c.child_by_field_name("alias").map(|x| f.text_of(x)).unwrap_or(""),
                ),
                _ => (f.text_of(c), f.text_of(c)),
            };
            self.imports.push(Import {
                local: local.to_string(),
                module: module.clone(),
                name: name.to_string(),
            });
        }
    }

    fn js_import(&mut self, n: Node<'t>) {
        let f = self.file;
        let Some(source) = n.child_by_field_name("source") else { return };
        let module = unquote(f.text_of(source));
        let Some(clause) = children(n).into_iter().find(|c| c.kind() == "import_clause") else { return };
        for c in children(clause) {
            match c.kind() {
                // `import x from`: the module's default export.
                "identifier" => self.imports.push(Import {
                    local: f.text_of(c).to_string(),
                    module: module.clone(),
                    name: "default".to_string(),
                }),
                "namespace_import" => {
                    if let Some(id) = children(c).into_iter().find(|x| x.kind() == "identifier") {
                        self.imports.push(Import {
                            local: f.text_of(id).to_string(),
                            module: module.clone(),
                            name: String::new(),
                        });
                    }
                }
                "named_imports" => {
                    for s in children(c).into_iter().filter(|s| s.kind() == "import_specifier") {
                        let name = s.child_by_field_name("name").map(|x| f.text_of(x)).unwrap_or("");
                        let local = s.child_by_field_name("alias").map(|x| f.text_of(x)).unwrap_or(name);
                        self.imports.push(Import {
                            local: local.to_string(),
                            module: module.clone(),
                            name: name.to_string(),
                        });
                    }
                }
                _ => {}
            }
        }
    }
}

#[derive(Debug, Clone, Default)]
struct Ctx {
    class: Option<String>,
    function: Option<usize>,
}

/// The named children of `n`, comments left out.
pub(crate) fn children(n: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = n.walk();
    n.named_children(&mut cursor).filter(|c| !c.kind().contains("comment")).collect()
}

fn named(n: Node<'_>) -> Vec<Node<'_>> {
    if n.kind() == "expression_list" {
        children(n)
    } else {
        vec![n]
    }
}

fn names_of<'t>(n: Node<'t>, field: &str) -> Vec<Node<'t>> {
    let mut cursor = n.walk();
    n.children_by_field_name(field, &mut cursor).collect()
}

/// The function a parameter belongs to.
pub(crate) fn enclosing_function(n: Node<'_>) -> Option<Node<'_>> {
    let mut p = n.parent();
    while let Some(x) = p {
        if is_function(x.kind()) {
            return Some(x);
        }
        p = x.parent();
    }
    None
}

pub(crate) fn is_function(kind: &str) -> bool {
    matches!(
        kind,
        "function_definition"
            | "function_declaration"
            | "method_definition"
            | "method_declaration"
            | "constructor_declaration"
            | "arrow_function"
            | "function_expression"
            | "function"
            | "generator_function_declaration"
            | "func_literal"
            | "lambda"
    )
}

/// The scopes `n` is inside, innermost first (function node ids).
pub(crate) fn scopes_of(n: Node<'_>) -> Vec<usize> {
    let mut out = Vec::new();
    let mut p = n.parent();
    while let Some(x) = p {
        if is_function(x.kind()) {
            out.push(x.id());
        }
        p = x.parent();
    }
    out
}

/// The class `n` is inside, by name.
pub(crate) fn class_of<'a>(file: &'a FileTree, n: Node<'_>) -> Option<&'a str> {
    let mut p = n.parent();
    while let Some(x) = p {
        if matches!(x.kind(), "class_definition" | "class_declaration" | "class" | "enum_declaration") {
            return x.child_by_field_name("name").map(|c| file.text_of(c));
        }
        p = x.parent();
    }
    None
}

/// A string literal's content, quotes and Python prefixes (`r`, `b`, `f`,
/// `u`) removed; any other text is returned as it is.
pub(crate) fn unquote(s: &str) -> String {
    let prefix =
        s.find(['"', '\'', '`']).filter(|&i| i <= 2 && s[..i].chars().all(|c| "rbfuRBFU".contains(c)));
    let Some(i) = prefix else { return s.to_string() };
    let s = &s[i..];
    for q in ["\"\"\"", "\'\'\'", "\"", "\'", "`"] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner.to_string();
        }
    }
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_names(g: Grammar, code: &str) -> Vec<String> {
        let f = FileTree::new("x", g, code).unwrap();
        let ix = Index::of(&f);
        let mut names: Vec<String> = ix.defs.keys().cloned().collect();
        names.sort();
        names
    }

    #[test]
    fn python_binds_module_class_and_parameter_names_and_imports() {
        let code = "from .settings import N as M, K\nimport os\nX = 1\nclass Cfg:\n    n: int = 3\n    def __init__(self):\n        self.m = 4\ndef make(k=3):\n    local = 2\n";
        assert_eq!(index_names(Grammar::Python, code), ["Cfg.m", "Cfg.n", "X", "k", "local"]);
        let f = FileTree::new("x", Grammar::Python, code).unwrap();
        let ix = Index::of(&f);
        assert_eq!(ix.imports[0], Import { local: "M".into(), module: ".settings".into(), name: "N".into() });
        assert_eq!(ix.imports[2].module, "os");
    }

    #[test]
    fn typescript_binds_consts_enums_fields_and_defaults() {
        let code = "import p, { N as M } from './settings';\nexport const D = { retries: 3 };\nenum L { Tries = 3 }\nclass C { retries = 4 }\nfunction f(a = 3, { b = 2 } = {}) {}\n";
        assert_eq!(index_names(Grammar::TypeScript, code), ["C.retries", "D", "L.Tries", "a", "b"]);
        let f = FileTree::new("x", Grammar::TypeScript, code).unwrap();
        let ix = Index::of(&f);
        assert_eq!(
            ix.imports[1],
            Import { local: "M".into(), module: "./settings".into(), name: "N".into() }
        );
    }

    #[test]
    fn go_and_java_bind_constants_and_fields() {
        let go = "package p\nimport b \"github.com/cenkalti/backoff/v4\"\nconst MaxRetries = 3\nvar d, e = 1, 2\nfunc f() { c.RetryMax = 10 }\n";
        assert_eq!(index_names(Grammar::Go, go), ["MaxRetries", "c.RetryMax", "d", "e"]);
        let java =
            "import static a.b.Limits.MAX;\nclass A { static final int MAX = 3; void f() { int k = 2; } }\n";
        assert_eq!(index_names(Grammar::Java, java), ["A.MAX", "k"]);
    }

    #[test]
    fn a_reassignment_is_the_value_after_it() {
        let f = FileTree::new("x", Grammar::Python, "N = 3\nN = 5\nuse(N)\n").unwrap();
        let ix = Index::of(&f);
        let d = ix.lookup("N", &[], 20).unwrap();
        assert_eq!(f.text_of(d.value), "5");
        let d = ix.lookup("N", &[], 4).unwrap();
        assert_eq!(f.text_of(d.value), "3");
    }
}

#[cfg(test)]
mod unquote_tests {
    use super::unquote;

    #[test]
    fn quotes_and_prefixes_go_and_names_stay() {
        assert_eq!(unquote("\"5\""), "5");
        assert_eq!(unquote("f'x'"), "x");
        assert_eq!(unquote("'''a'''"), "a");
        assert_eq!(unquote("retries"), "retries");
        assert_eq!(unquote("`10`"), "10");
    }
}
