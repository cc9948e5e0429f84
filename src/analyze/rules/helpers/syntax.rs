//! Just enough syntax to resolve a project's own retry helpers: function
//! definitions with their bodies, calls with their argument spans, and the
//! write requests inside a span, in Python, JavaScript/TypeScript, Go and
//! Java/Kotlin.
//!
//! Everything here reads masked text (comments and prose strings blanked, so
//! offsets are the file's) and is linear in it: brackets are matched once per
//! file with a stack, and write tokens are found once per file and then
//! looked up by binary search for each span.

use std::sync::OnceLock;

use regex::bytes::Regex;

use crate::analyze::rules::lang::Language;

/// The languages helper resolution reads, grouped by how they are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Family {
    Python,
    Js,
    Go,
    Java,
}

impl Family {
    /// Every family, in declaration order.
    pub(crate) const ALL: [Family; 4] = [Family::Python, Family::Js, Family::Go, Family::Java];

    pub(crate) fn of(lang: Language) -> Option<Family> {
        Some(match lang {
            Language::Python => Family::Python,
            Language::JavaScript | Language::TypeScript => Family::Js,
            Language::Go => Family::Go,
            Language::Java | Language::Kotlin => Family::Java,
            _ => return None,
        })
    }

    /// The rule pack whose rule ids the findings carry.
    pub(crate) fn pack(self) -> &'static str {
        match self {
            Family::Python => "python",
            Family::Js => "js",
            Family::Go => "go",
            Family::Java => "java",
        }
    }
}

/// Longest span (bytes) a definition body or a call's arguments may have;
/// past it the construct is not read (generated code, minified bundles).
const MAX_SPAN: usize = 64 * 1024;

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| {
        regex::bytes::RegexBuilder::new(pattern)
            .unicode(false)
            .multi_line(true)
            .build()
            .unwrap_or_else(|e| panic!("helper pattern is constant and valid: {e}"))
    })
}

/// A write request inside code: `.post(`, `"POST"`, `http.MethodPost`,
/// `HttpMethod.PATCH`, `method: 'post'`. Group 1..=3 hold the verb.
fn write_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        r#"(?i)\.(post|patch)\b|["'`](post|patch)["'`]|\b(?:http\.Method|HttpMethod\.|Method\.|RequestMethod\.)(post|patch)\b|\bhttp\.(post)(?:form)?\s*\("#,
    )
}

/// What makes a body a retry: a library that retries, a retry-named call,
/// or a decorator that retries (read over the body and the lines above it).
fn retry_lib_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        r"(?i)\b(?:fetch_?retry|p_?retry|async_?retry|axios_?retry|retry\.do|backoff\.(?:retry|retrynotify|on_exception|on_predicate)|tenacity|retrying|stamina|retrytemplate|failsafe|retry\.of|retrywhen|retryablehttp|stop_after_attempt)\b|@\w*retr(?:y|ying|yable)\b|\b\w*retry\w*\s*\(",
    )
}

/// A loop, and a word that says it repeats a failed attempt.
fn loop_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"\b(?:for|while|loop)\b")
}

fn retry_word_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"(?i)retr(?:y|ies|ied|ying)|attempt|backoff|\btries\b")
}

/// Names that are never a project's retry helper.
const NOT_HELPERS: &[&str] = &[
    "if",
    "for",
    "while",
    "switch",
    "catch",
    "return",
    "function",
    "def",
    "fun",
    "func",
    "print",
    "len",
    "str",
    "int",
    "dict",
    "list",
    "set",
    "tuple",
    "lambda",
    "partial",
    "new",
    "super",
    "this",
    "self",
    "await",
    "async",
    "typeof",
    "make",
    "append",
    "require",
    "import",
    "post",
    "patch",
    "put",
    "get",
    "delete",
    "request",
    "fetch",
    "send",
    "do",
    "then",
    "map",
    "call",
    "apply",
    "bind",
    "run",
    "execute",
    "submit",
    "go",
    "defer",
    "with",
    "elif",
    "and",
    "or",
    "not",
    "in",
    "is",
    "assert",
    "yield",
    "raise",
    "except",
    "synchronized",
    "try",
    "else",
];

pub(crate) fn is_candidate_name(name: &str) -> bool {
    !NOT_HELPERS.contains(&name) && !name.chars().all(|c| c.is_ascii_digit())
}

/// Line index of a file: byte offset -> 1-based line.
pub(crate) struct Lines(Vec<usize>);

impl Lines {
    pub(crate) fn new(text: &[u8]) -> Lines {
        Lines(std::iter::once(0).chain(memchr::memchr_iter(b'\n', text).map(|p| p + 1)).collect())
    }

    pub(crate) fn of(&self, offset: usize) -> u32 {
        self.0.partition_point(|&s| s <= offset) as u32
    }
}

/// One masked file with its bracket pairs and write tokens, computed once.
pub(crate) struct Code<'a> {
    pub(crate) text: &'a [u8],
    pub(crate) lines: Lines,
    /// (opening bracket offset, closing bracket offset), sorted by opening:
    /// a sorted list searched by halves, not a hash map (hashing every
    /// bracket of a file was a tenth of helper resolution's time).
    close: Vec<(usize, usize)>,
    /// (offset, verb in upper case) of every write token, in order.
    writes: Vec<(usize, &'static str)>,
}

impl<'a> Code<'a> {
    pub(crate) fn new(text: &'a [u8]) -> Code<'a> {
        let mut close = Vec::new();
        let mut stack: Vec<usize> = Vec::new();
        for (i, &c) in text.iter().enumerate() {
            match c {
                b'(' | b'[' | b'{' => stack.push(i),
                b')' | b']' | b'}' => {
                    if let Some(o) = stack.pop() {
                        close.push((o, i));
                    }
                }
                _ => {}
            }
        }
        close.sort_unstable();
        let writes = write_re()
            .captures_iter(text)
            .filter_map(|c| {
                let at = c.get(0)?.start();
                let verb = (1..=4).find_map(|g| c.get(g))?;
                let verb = if verb.as_bytes().eq_ignore_ascii_case(b"post") { "POST" } else { "PATCH" };
                Some((at, verb))
            })
            .collect();
        Code { text, lines: Lines::new(text), close, writes }
    }

    /// The closing bracket of the one opened at `open`, within [`MAX_SPAN`].
    pub(crate) fn closing(&self, open: usize) -> Option<usize> {
        let k = self.close.binary_search_by_key(&open, |&(o, _)| o).ok()?;
        Some(self.close[k].1).filter(|&c| c - open <= MAX_SPAN)
    }

    /// The write tokens within `from..to`.
    pub(crate) fn writes_in(&self, from: usize, to: usize) -> &[(usize, &'static str)] {
        let a = self.writes.partition_point(|&(at, _)| at < from);
        let b = self.writes.partition_point(|&(at, _)| at < to);
        &self.writes[a..b]
    }

    /// Whether the write token at `at`, inside the arguments of a call that
    /// start at `from`, is sent while the arguments are evaluated, before
    /// the called function runs. A helper handed a response (or a promise
    /// or coroutine of one) cannot send the request again; one handed a
    /// function, a method reference (`s.post`), a request to send
    /// (`Request('POST', ..)`) or the verb itself can. Eager: a call of the
    /// verb method (`s.post(..)`) or a verb argument of a call nested in the
    /// arguments (`client.body('post', ..)`, `fetch(u, {method: 'POST'})`)
    /// whose name does not build a request, with no function literal
    /// (`lambda`, `=>`, `function`, `func(`, `->`, `def`) before it.
    pub(crate) fn sent_before_the_call(&self, from: usize, at: usize) -> bool {
        static F: OnceLock<Regex> = OnceLock::new();
        let function_literal =
            re(&F, r"\blambda\b|=>|->|\bfunction\b|\bfunc\s*\(|\bdef\b|\bproc\b|\bProc\.new\b");
        let Some(between) = self.text.get(from..at) else { return false };
        if function_literal.is_match(between) {
            return false;
        }
        if self.text.get(at) == Some(&b'.') {
            // `.post` then `(`: called here. `.post` alone is a reference.
            let word_end =
                at + 1 + self.text[at + 1..].iter().take_while(|c| c.is_ascii_alphanumeric()).count();
            return self.text[word_end..].iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'(');
        }
        // The innermost call still open at `at`, if it opened after `from`.
        let mut open: Vec<usize> = Vec::new();
        for (i, &c) in between.iter().enumerate() {
            match c {
                b'(' | b'[' | b'{' => open.push(i),
                b')' | b']' | b'}' => {
                    open.pop();
                }
                _ => {}
            }
        }
        let Some(&paren) = open.iter().rev().find(|&&i| between[i] == b'(') else { return false };
        let callee_end = between[..paren].iter().rposition(|c| !c.is_ascii_whitespace()).map_or(0, |p| p + 1);
        let callee_start = between[..callee_end]
            .iter()
            .rposition(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
            .map_or(0, |p| p + 1);
        let callee = String::from_utf8_lossy(&between[callee_start..callee_end]).to_ascii_lowercase();
        !callee.is_empty()
            && !["request", "req", "build", "prepare", "new"].iter().any(|w| callee.contains(w))
    }

    /// Whether `from..to` (plus the `above` bytes before it, for decorators
    /// and annotations) reads as a retry.
    pub(crate) fn retries(&self, above: usize, from: usize, to: usize) -> bool {
        let body = &self.text[from..to];
        let head = &self.text[above..from];
        let lib = |t: &[u8]| {
            retry_lib_re().find_iter(t).any(|m| {
                let w = m.as_bytes().to_ascii_lowercase();
                // A predicate about retrying (`shouldRetry(`, `is_retryable(`) does not retry.
                !(w.starts_with(b"should")
                    || w.starts_with(b"is")
                    || w.starts_with(b"can")
                    || w.starts_with(b"_is"))
            })
        };
        lib(body) || lib(head) || (loop_re().is_match(body) && retry_word_re().is_match(body))
    }
}

/// A function (or class, or `const f = ...`) definition.
#[derive(Debug, Clone)]
pub(crate) struct Def {
    pub(crate) name: String,
    /// Offset of the name.
    pub(crate) at: usize,
    /// Where decorators/annotations above the definition start.
    pub(crate) above: usize,
    pub(crate) body: (usize, usize),
    pub(crate) retrying: bool,
}

fn def_re(family: Family) -> &'static Regex {
    static PY: OnceLock<Regex> = OnceLock::new();
    static JS: OnceLock<Regex> = OnceLock::new();
    static GO: OnceLock<Regex> = OnceLock::new();
    static JAVA: OnceLock<Regex> = OnceLock::new();
    match family {
        Family::Python => re(&PY, r"^([ \t]*)(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)"),
        Family::Js => re(
            &JS,
            r"\bfunction\s*\*?\s*(\w+)\s*[(<]|\b(?:const|let|var)\s+(\w+)\s*(?::[^=\n]{1,80})?=[^=>]|^[ \t]*(?:(?:async|static|public|private|protected|override)\s+)*(\w+)\s*\([^()\n]*\)\s*(?::[^{\n]{1,80})?\{",
        ),
        Family::Go => re(&GO, r"^func[ \t]*(?:\([^)\n]*\)[ \t]*)?(\w+)[ \t]*(?:\[[^\]\n]*\])?\("),
        Family::Java => re(
            &JAVA,
            r"^[ \t]*(?:(?:public|private|protected|static|final|synchronized|abstract|default|override|suspend|open|internal|inline|fun)\s+)*(?:<[^>\n]*>\s*)?(?:[\w.<>\[\]?,]+\s+)?(\w+)\s*\(",
        ),
    }
}

/// The definitions in `code` whose name `wanted` accepts.
pub(crate) fn definitions(family: Family, code: &Code, wanted: &dyn Fn(&str) -> bool) -> Vec<Def> {
    definitions_where(family, code, wanted, &|_, _| true)
}

/// [`definitions`] whose span (decorators start, body) passes `span`; the
/// others are dropped before their body is searched for a retry, the costly
/// part when a file holds many definitions and only a few were edited.
pub(crate) fn definitions_where(
    family: Family,
    code: &Code,
    wanted: &dyn Fn(&str) -> bool,
    span: &dyn Fn(usize, (usize, usize)) -> bool,
) -> Vec<Def> {
    let text = code.text;
    let mut out = Vec::new();
    for caps in def_re(family).captures_iter(text) {
        let group = match family {
            Family::Python => caps.get(2),
            _ => (1..=3).find_map(|g| caps.get(g)),
        };
        let Some(m) = group else { continue };
        let name = String::from_utf8_lossy(m.as_bytes()).into_owned();
        if !is_candidate_name(&name) || !wanted(&name) {
            continue;
        }
        let start = caps.get(0).map_or(m.start(), |c| c.start());
        let body = match family {
            Family::Python => python_body(code, start, caps.get(1).map_or(0, |i| i.len())),
            Family::Js if caps.get(2).is_some_and(|g| g.start() == m.start()) => {
                expression_body(code, m.end())
            }
            _ => braced_body(code, m.end()),
        };
        let Some(body) = body else { continue };
        let above = decorators_above(text, line_start(text, start));
        if !span(above, body) {
            continue;
        }
        out.push(Def { name, at: m.start(), above, body, retrying: code.retries(above, body.0, body.1) });
    }
    out
}

/// Whether `d` is a class (or struct, interface) rather than a function:
/// the word before its name says so.
pub(crate) fn is_class(code: &Code, d: &Def) -> bool {
    let before = &code.text[line_start(code.text, d.at)..d.at];
    let word = before.split(|c| !c.is_ascii_alphanumeric()).rfind(|w| !w.is_empty());
    matches!(word, Some(b"class" | b"struct" | b"interface" | b"type"))
}

/// Whether `d` is a Python method: its first parameter is `self` or `cls`.
/// Only `self.name(..)` (or `cls.name(..)`) in its own file calls it; a
/// `name(..)` on any other object is another type's method.
pub(crate) fn is_python_method(code: &Code, d: &Def) -> bool {
    let after = &code.text[(d.at + d.name.len()).min(code.text.len())..];
    let Some(params) = after
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .and_then(|i| (after[i] == b'(').then(|| &after[i + 1..]))
    else {
        return false;
    };
    let first = params.iter().position(|c| !c.is_ascii_whitespace()).map_or(&params[..0], |i| &params[i..]);
    ["self", "cls"].iter().any(|w| {
        first.starts_with(w.as_bytes())
            && !first.get(w.len()).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    })
}

fn line_start(text: &[u8], at: usize) -> usize {
    memchr::memrchr(b'\n', &text[..at.min(text.len())]).map_or(0, |p| p + 1)
}

/// The start of the decorators or annotations (lines starting with `@`)
/// right above the line starting at `start`, or `start` when there are none.
fn decorators_above(text: &[u8], start: usize) -> usize {
    let mut s = start;
    while s > 0 {
        let prev = line_start(text, s - 1);
        let line = &text[prev..s];
        if line.iter().find(|c| !c.is_ascii_whitespace()) != Some(&b'@') {
            break;
        }
        s = prev;
    }
    s
}

/// A Python body: the lines after the signature (which may span lines)
/// indented deeper than the definition.
fn python_body(code: &Code, def_start: usize, indent: usize) -> Option<(usize, usize)> {
    let text = code.text;
    let line_end = memchr::memchr(b'\n', &text[def_start..]).map_or(text.len(), |p| def_start + p);
    // A parameter list that continues on the next lines ends at its `)`.
    let sig_end = match memchr::memchr(b'(', &text[def_start..line_end]) {
        Some(p) => code.closing(def_start + p)?,
        None => def_start,
    };
    let first = memchr::memchr(b'\n', &text[sig_end..]).map(|p| sig_end + p + 1)?;
    let mut end = first;
    let mut at = first;
    while at < text.len() && at - first <= MAX_SPAN {
        let line_end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |p| at + p + 1);
        let line = &text[at..line_end];
        let blank = line.iter().all(|c| c.is_ascii_whitespace());
        if !blank {
            let ind = line.iter().take_while(|c| **c == b' ' || **c == b'\t').count();
            if ind <= indent {
                break;
            }
            end = line_end;
        }
        at = line_end;
    }
    (end > first).then_some((first, end))
}

/// A braced body: the first `{` after the parameter list, to its match.
fn braced_body(code: &Code, after_name: usize) -> Option<(usize, usize)> {
    let text = code.text;
    let mut i = after_name;
    // Skip the parameter list (and generic parameters) by their brackets.
    while i < text.len() && i - after_name <= MAX_SPAN {
        match text[i] {
            b'(' | b'[' => i = code.closing(i)? + 1,
            b'{' => {
                let c = code.closing(i)?;
                return Some((i, c + 1));
            }
            b';' => return None,
            b'=' if text.get(i + 1) != Some(&b'>') => return None,
            _ => i += 1,
        }
    }
    None
}

/// `const f = <expression>`: the expression, to a `;` or a line end outside
/// brackets (an arrow function's braced body included).
fn expression_body(code: &Code, after_name: usize) -> Option<(usize, usize)> {
    let text = code.text;
    let eq = after_name + memchr::memchr(b'=', text.get(after_name..)?)?;
    let mut i = eq + 1;
    let mut last = b'=';
    while i < text.len() && i - eq <= MAX_SPAN {
        let c = text[i];
        match c {
            b'(' | b'[' | b'{' => {
                i = code.closing(i)? + 1;
                last = c;
                continue;
            }
            b';' => return Some((eq + 1, i)),
            b'\n' if !matches!(last, b'=' | b'>' | b',' | b'(' | b'?' | b':' | b'|' | b'&' | b'+' | b'.') => {
                return Some((eq + 1, i));
            }
            _ => {}
        }
        if !c.is_ascii_whitespace() {
            last = c;
        }
        i += 1;
    }
    Some((eq + 1, i.min(text.len())))
}

/// A call `name(...)` with its argument span.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub(crate) name: String,
    pub(crate) at: usize,
    pub(crate) args: (usize, usize),
}

fn call_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"\b([A-Za-z_]\w*)[ \t]*\(")
}

/// Every call in `code` whose name `wanted` accepts.
pub(crate) fn calls(code: &Code, wanted: &dyn Fn(&str) -> bool) -> Vec<Call> {
    let mut out = Vec::new();
    for caps in call_re().captures_iter(code.text) {
        let (Some(all), Some(n)) = (caps.get(0), caps.get(1)) else { continue };
        let Ok(name) = std::str::from_utf8(n.as_bytes()) else { continue };
        if !is_candidate_name(name) || !wanted(name) {
            continue;
        }
        let open = all.end() - 1;
        let Some(close) = code.closing(open) else { continue };
        out.push(Call { name: name.to_string(), at: n.start(), args: (open + 1, close) });
    }
    out
}

/// A Python decorator `@name` / `@name(...)` and the function it decorates.
pub(crate) struct Decorated {
    pub(crate) name: String,
    /// Offset of the `@`.
    pub(crate) at: usize,
    /// Offset of the decorated function's name.
    pub(crate) def_at: usize,
    pub(crate) body: (usize, usize),
}

/// Python decorators and the functions they decorate.
pub(crate) fn decorated(code: &Code) -> Vec<Decorated> {
    static R: OnceLock<Regex> = OnceLock::new();
    let deco = re(&R, r"^([ \t]*)@(?:[\w]+\.)*(\w+)");
    static D: OnceLock<Regex> = OnceLock::new();
    let def = re(&D, r"\A(?:[ \t]*@[^\n]*\n|[ \t]*\n)*([ \t]*)(?:async[ \t]+)?def[ \t]+\w+");
    let mut out = Vec::new();
    for caps in deco.captures_iter(code.text) {
        let (Some(all), Some(name)) = (caps.get(0), caps.get(2)) else { continue };
        // The rest of the decorator (its arguments), then the def line.
        let mut i = all.end();
        if code.text.get(i) == Some(&b'(') {
            let Some(c) = code.closing(i) else { continue };
            i = c + 1;
        }
        let Some(nl) = memchr::memchr(b'\n', &code.text[i..]) else { continue };
        let rest = &code.text[i + nl + 1..];
        let Some(d) = def.captures(&rest[..rest.len().min(4096)]) else { continue };
        let def_start = i + nl + 1 + d.get(1).map_or(0, |g| g.start());
        let def_at = i + nl + 1 + d.get(0).map_or(0, |g| g.end()).saturating_sub(1);
        let indent = d.get(1).map_or(0, |g| g.len());
        let Some(body) = python_body(code, def_start, indent) else { continue };
        let name = String::from_utf8_lossy(name.as_bytes()).into_owned();
        if is_candidate_name(&name) {
            out.push(Decorated { name, at: name_offset(all.start(), all.as_bytes()), def_at, body });
        }
    }
    out
}

fn name_offset(start: usize, text: &[u8]) -> usize {
    start + text.iter().position(|c| *c == b'@').unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::rules::mask::{mask, View};

    fn masked(lang: Language, text: &str) -> Vec<u8> {
        mask(text, &lang.syntax(), View::Code)
    }

    fn defs(lang: Language, text: &str) -> Vec<(String, bool)> {
        let m = masked(lang, text);
        let code = Code::new(&m);
        definitions(Family::of(lang).unwrap(), &code, &|_| true)
            .into_iter()
            .map(|d| (d.name, d.retrying))
            .collect()
    }

    #[test]
    fn python_definitions_retry_by_loop_library_or_decorator() {
        let src = "def send_safely(fn, times=3):\n    for attempt in range(times):\n        try:\n            return fn()\n        except IOError:\n            pass\n\ndef plain(x):\n    return x + 1\n\n@tenacity.retry(stop=stop_after_attempt(3))\ndef fetch_it():\n    return 1\n";
        assert_eq!(
            defs(Language::Python, src),
            vec![("send_safely".into(), true), ("plain".into(), false), ("fetch_it".into(), true)]
        );
    }

    #[test]
    fn js_go_and_java_definitions_find_their_bodies() {
        let js = "export const appFetch = fetchRetry(fetch, {\n  retries: 3,\n});\nfunction plain(a) {\n  return a;\n}\nconst resilient = async (fn) => {\n  for (let attempt = 0; attempt < 3; attempt++) {\n    try { return await fn(); } catch (e) {}\n  }\n};\n";
        assert_eq!(
            defs(Language::TypeScript, js),
            vec![("appFetch".into(), true), ("plain".into(), false), ("resilient".into(), true)]
        );
        let go = "func (c *Client) sendResilient(req *http.Request) (*http.Response, error) {\n\tfor attempt := 0; attempt < c.max; attempt++ {\n\t}\n\treturn nil, nil\n}\nfunc plain() {}\n";
        assert_eq!(defs(Language::Go, go), vec![("sendResilient".into(), true), ("plain".into(), false)]);
        let java = "class A {\n  public Response resilient(Supplier<Response> s) {\n    while (attempt < maxAttempts) { attempt++; }\n    return null;\n  }\n  int plain(int a) { return a; }\n}\n";
        assert_eq!(defs(Language::Java, java), vec![("resilient".into(), true), ("plain".into(), false)]);
    }

    #[test]
    fn predicates_about_retrying_do_not_retry() {
        assert_eq!(
            defs(Language::Python, "def check(e):\n    return should_retry(e)\n"),
            vec![("check".into(), false)]
        );
    }

    #[test]
    fn calls_carry_their_argument_span_and_the_writes_in_it() {
        let src = "resilient(lambda: client.post(url, json=o))\nresilient(lambda: client.get(url))\n";
        let m = masked(Language::Python, src);
        let code = Code::new(&m);
        let found = calls(&code, &|n| n == "resilient");
        assert_eq!(found.len(), 2);
        assert_eq!(
            code.writes_in(found[0].args.0, found[0].args.1).iter().map(|w| w.1).collect::<Vec<_>>(),
            ["POST"]
        );
        assert!(code.writes_in(found[1].args.0, found[1].args.1).is_empty());
        // Writes as strings and constants, in every family's spelling.
        let m = masked(Language::Go, "x(\"POST\", http.MethodPatch, HttpMethod.POST, {method: 'post'})\n");
        assert_eq!(
            Code::new(&m).writes.iter().map(|w| w.1).collect::<Vec<_>>(),
            ["POST", "PATCH", "POST", "POST"]
        );
    }

    #[test]
    fn a_write_evaluated_in_the_arguments_is_sent_before_the_call() {
        let eager = |lang: Language, src: &str| {
            let m = masked(lang, src);
            let code = Code::new(&m);
            let call = calls(&code, &|n| n == "helper").into_iter().next().expect("a helper call");
            let writes = code.writes_in(call.args.0, call.args.1);
            assert_eq!(writes.len(), 1, "{src}");
            code.sent_before_the_call(call.args.0, writes[0].0)
        };
        for (lang, src) in [
            (Language::Python, "helper(s.post(url))\n"),
            (Language::Python, "helper(c.body('post', url=u))\n"),
            (Language::JavaScript, "helper(fetch(u, { method: 'POST' }))\n"),
            (Language::Go, "helper(client.Post(u, \"a\", b))\n"),
        ] {
            assert!(eager(lang, src), "{src}");
        }
        for (lang, src) in [
            (Language::Python, "helper(lambda: s.post(url))\n"),
            (Language::Python, "helper(s.post, url)\n"),
            (Language::Python, "helper(requests.Request('POST', url))\n"),
            (Language::Python, "helper('POST', url)\n"),
            (Language::JavaScript, "helper(() => fetch(u, { method: 'POST' }))\n"),
            (Language::JavaScript, "helper({ method: 'POST', url: u })\n"),
            (Language::Go, "helper(func() error { _, err := client.Post(u, \"a\", b); return err })\n"),
            (Language::Go, "helper(http.NewRequest(\"POST\", u, nil))\n"),
            (Language::Java, "helper(() -> client.post(u))\n"),
        ] {
            assert!(!eager(lang, src), "{src}");
        }
    }

    #[test]
    fn decorators_are_paired_with_the_function_they_decorate() {
        let src = "@own_retry(RetryConfig(max_retry=3))\n@other\ndef create(\n    order,\n) -> dict:\n    return session.post(URL, json=order)\n";
        let m = masked(Language::Python, src);
        let code = Code::new(&m);
        let d = decorated(&code);
        assert_eq!(d.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(), ["own_retry", "other"]);
        assert_eq!(code.writes_in(d[0].body.0, d[0].body.1).len(), 1);
        assert_eq!(code.lines.of(d[0].def_at), 3, "the decorated function's name");
    }
}
