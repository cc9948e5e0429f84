//! The syntax of each grammar as the operation model needs it: which node
//! kinds define functions, call, loop, catch and jump. One table per
//! grammar; the walker ([`super::front`]) is written once against them.

use tree_sitter::Node;

use crate::analyze::trees::grammar::Grammar;

/// The node kinds of one grammar.
pub(crate) struct Syntax {
    /// Named definitions of functions and methods.
    pub(crate) functions: &'static [&'static str],
    /// Function literals (lambdas, arrow functions, closures, blocks).
    pub(crate) lambdas: &'static [&'static str],
    pub(crate) calls: &'static [&'static str],
    pub(crate) loops: &'static [&'static str],
    /// A catch clause (its body is the failure path).
    pub(crate) catches: &'static [&'static str],
    pub(crate) ifs: &'static [&'static str],
    /// An argument list, or the block a call is given.
    pub(crate) args: &'static [&'static str],
    /// A keyword argument, object pair or annotation element: key, value.
    pub(crate) pairs: &'static [&'static str],
    /// A decorator, annotation or attribute.
    pub(crate) decorators: &'static [&'static str],
}

const PYTHON: Syntax = Syntax {
    functions: &["function_definition"],
    lambdas: &["lambda"],
    calls: &["call"],
    loops: &["for_statement", "while_statement"],
    catches: &["except_clause", "except_group_clause"],
    ifs: &["if_statement", "elif_clause", "conditional_expression"],
    args: &["argument_list", "generator_expression"],
    pairs: &["keyword_argument", "pair"],
    decorators: &["decorator"],
};

const SCRIPT: Syntax = Syntax {
    functions: &["function_declaration", "method_definition", "generator_function_declaration"],
    lambdas: &["arrow_function", "function_expression", "function", "generator_function"],
    calls: &["call_expression", "new_expression"],
    loops: &["for_statement", "for_in_statement", "while_statement", "do_statement"],
    catches: &["catch_clause"],
    ifs: &["if_statement", "ternary_expression"],
    args: &["arguments", "template_string"],
    pairs: &["pair"],
    decorators: &["decorator"],
};

const GO: Syntax = Syntax {
    functions: &["function_declaration", "method_declaration"],
    lambdas: &["func_literal"],
    calls: &["call_expression"],
    loops: &["for_statement"],
    catches: &[],
    ifs: &["if_statement"],
    args: &["argument_list"],
    pairs: &["keyed_element"],
    decorators: &[],
};

const JAVA: Syntax = Syntax {
    functions: &["method_declaration", "constructor_declaration"],
    lambdas: &["lambda_expression"],
    calls: &["method_invocation", "object_creation_expression"],
    loops: &["for_statement", "enhanced_for_statement", "while_statement", "do_statement"],
    catches: &["catch_clause"],
    ifs: &["if_statement", "ternary_expression"],
    args: &["argument_list"],
    pairs: &["element_value_pair"],
    decorators: &["annotation", "marker_annotation"],
};

const RUBY: Syntax = Syntax {
    functions: &["method", "singleton_method"],
    lambdas: &["do_block", "block", "lambda"],
    calls: &["call"],
    loops: &["while", "until", "for", "while_modifier", "until_modifier"],
    catches: &["rescue"],
    ifs: &["if", "unless", "if_modifier", "unless_modifier", "conditional"],
    args: &["argument_list", "do_block", "block"],
    pairs: &["pair"],
    decorators: &[],
};

const PHP: Syntax = Syntax {
    functions: &["function_definition", "method_declaration"],
    lambdas: &["anonymous_function", "arrow_function", "anonymous_function_creation_expression"],
    calls: &[
        "function_call_expression",
        "member_call_expression",
        "nullsafe_member_call_expression",
        "scoped_call_expression",
        "object_creation_expression",
    ],
    loops: &["for_statement", "while_statement", "do_statement", "foreach_statement"],
    catches: &["catch_clause"],
    ifs: &["if_statement", "conditional_expression"],
    args: &["arguments"],
    pairs: &["argument", "array_element_initializer"],
    decorators: &["attribute"],
};

const CSHARP: Syntax = Syntax {
    functions: &["method_declaration", "local_function_statement", "constructor_declaration"],
    lambdas: &["lambda_expression", "anonymous_method_expression"],
    calls: &["invocation_expression", "object_creation_expression"],
    loops: &["for_statement", "foreach_statement", "while_statement", "do_statement"],
    catches: &["catch_clause"],
    ifs: &["if_statement", "conditional_expression"],
    args: &["argument_list"],
    pairs: &["assignment_expression", "argument"],
    decorators: &["attribute"],
};

const KOTLIN: Syntax = Syntax {
    functions: &["function_declaration"],
    lambdas: &["lambda_literal", "anonymous_function", "annotated_lambda"],
    calls: &["call_expression"],
    loops: &["for_statement", "while_statement", "do_while_statement"],
    catches: &["catch_block"],
    ifs: &["if_expression", "when_expression"],
    args: &["value_arguments", "annotated_lambda", "call_suffix"],
    pairs: &["value_argument"],
    decorators: &["annotation"],
};

impl Syntax {
    pub(crate) fn of(g: Grammar) -> &'static Syntax {
        match g {
            Grammar::Python => &PYTHON,
            Grammar::JavaScript | Grammar::TypeScript | Grammar::Tsx => &SCRIPT,
            Grammar::Go => &GO,
            Grammar::Java => &JAVA,
            Grammar::Ruby => &RUBY,
            Grammar::Php => &PHP,
            Grammar::CSharp => &CSHARP,
            Grammar::Kotlin => &KOTLIN,
        }
    }

    pub(crate) fn is_function(&self, k: &str) -> bool {
        self.functions.contains(&k)
    }
    pub(crate) fn is_lambda(&self, k: &str) -> bool {
        self.lambdas.contains(&k)
    }
    pub(crate) fn is_call(&self, k: &str) -> bool {
        self.calls.contains(&k)
    }
}

/// What a statement does to the flow of a loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Jump {
    Return,
    Break,
    Continue,
    Throw,
}

/// The jump `n` is, by its kind or (for grammars that share one kind for
/// all jumps, and for `raise`/`panic` written as calls) its first word.
pub(crate) fn jump_of(n: Node<'_>, text: &str) -> Option<Jump> {
    let k = n.kind();
    // A bare `raise`/`return`/`break` is a plain identifier in some grammars.
    match text.trim() {
        "raise" | "throw" => return Some(Jump::Throw),
        "return" => return Some(Jump::Return),
        "break" => return Some(Jump::Break),
        _ => {}
    }
    let first = text.split(|c: char| !c.is_alphanumeric() && c != '_').next().unwrap_or("");
    match k {
        "return_statement" | "return" | "return_expression" => return Some(Jump::Return),
        "break_statement" | "break" | "break_expression" => return Some(Jump::Break),
        "continue_statement" | "continue" | "next" | "continue_expression" => return Some(Jump::Continue),
        "raise_statement" | "throw_statement" | "throw_expression" => return Some(Jump::Throw),
        "jump_expression" | "expression_statement" | "call" | "call_expression" => {}
        _ => return None,
    }
    match first {
        "return" => Some(Jump::Return),
        "break" => Some(Jump::Break),
        "continue" => Some(Jump::Continue),
        "throw" | "raise" | "panic" => Some(Jump::Throw),
        "log" if text.starts_with("log.Fatal") => Some(Jump::Throw),
        _ => None,
    }
}

/// The last segment of a callee: `post` of `self.session.post`.
pub(crate) fn last_segment(callee: &str) -> &str {
    callee.rsplit(['.', ':', '>']).next().unwrap_or(callee).trim_start_matches('$')
}

/// The last two segments: `backoff.Retry` of `pkg.backoff.Retry`.
pub(crate) fn last_two(callee: &str) -> String {
    let parts: Vec<&str> = callee.split(['.', ':', '>']).filter(|s| !s.is_empty() && *s != "-").collect();
    match parts.len() {
        0 => String::new(),
        1 => parts[0].to_string(),
        n => format!("{}.{}", parts[n - 2].trim_end_matches('-'), parts[n - 1]),
    }
}

/// Everything before the last segment: `self.session` of `self.session.post`.
pub(crate) fn receiver(callee: &str) -> &str {
    let last = last_segment(callee);
    let cut = callee.len().saturating_sub(last.len());
    callee.get(..cut).unwrap_or("").trim_end_matches(['.', ':', '>', '-', '?'])
}

/// The words of an identifier, lowercase: `createOrder` and `create_order`
/// are `create`, `order`.
pub(crate) fn words(ident: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in ident.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Whether a parameter (its name, or its declaration with the type) carries
/// an HTTP method or a request built with one (`method`, `verb`, `req`,
/// `r *http.Request`): its callers say what the function sends.
pub(crate) fn carries_method_or_request(param: &str) -> bool {
    param == "r" || words(param).iter().any(|x| matches!(x.as_str(), "method" | "verb" | "req" | "request"))
}

/// Whether a text names a retry (`retr`, `attempt`, `backoff`, `tries`,
/// any case): worth reading unchanged files for.
pub(crate) fn names_a_retry(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    ["retr", "attempt", "backoff", "tries"].iter().any(|w| t.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callee_parts() {
        assert_eq!(last_segment("self.session.post"), "post");
        assert_eq!(last_segment("$client->post"), "post");
        assert_eq!(last_segment("Http::post"), "post");
        assert_eq!(receiver("self.session.post"), "self.session");
        assert_eq!(receiver("$client->post"), "$client");
        assert_eq!(receiver("fetch"), "");
        assert_eq!(last_two("pkg.backoff.Retry"), "backoff.Retry");
        assert_eq!(words("createOrder"), ["create", "order"]);
        assert_eq!(words("put_record"), ["put", "record"]);
        assert_eq!(words("PostAsync"), ["post", "async"]);
    }
}
