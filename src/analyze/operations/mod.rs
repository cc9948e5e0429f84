//! The operation model outside Rust: for every operation a changed file
//! performs (an HTTP request, an SDK or RPC call that writes), the retry
//! that covers it, compared base against head.
//!
//! The Rust analyzer has had this model from the start; the other
//! analyzers compare library settings that exist on both sides, so a retry
//! that did not exist in the base had nothing to compare. Here a new retry
//! is a raise from one attempt (DESIGN, "A new retry is a raise from one
//! attempt"), in every grammar the tree-sitter front-end reads: Python,
//! JavaScript/TypeScript, Go, Java, Kotlin, C#, Ruby and PHP.
//!
//! - [`model`]: the one model (operations, retries, conditions);
//! - [`syntax`]: each grammar's node kinds, as tables;
//! - [`front`]: the one walker from trees to the model;
//! - [`clients`]: which requests a client-wide retry policy covers;
//! - [`tree`]: the unchanged files of the head tree read beside the change;
//! - [`data`]: what calls and libraries mean, from `rules/operations/model.yml`;
//! - [`compare`]: base against head, the decisions.
//!
//! The head's retries with a count or no bound are also the gate's head
//! policies, so `limits.max_attempts` holds in every language.

pub(crate) mod clients;
pub(crate) mod compare;
pub(crate) mod data;
pub(crate) mod front;
pub(crate) mod model;
pub(crate) mod syntax;
pub(crate) mod tree;

use std::collections::HashMap;

use super::{Analyzer, FileResult, HeadPolicy};
use crate::analyze::trees::defs::{FileTree, Index};
use crate::analyze::trees::eval::World;
use crate::analyze::trees::grammar::Grammar;
use crate::changeset::FileChange;
use crate::finding::{Kind, KindDoc, Note};
use model::Attempts;

/// Files larger than this are not modelled (a note says so).
pub(crate) const MAX_FILE_BYTES: usize = 2 * 1024 * 1024;

/// Bytes of one side's files modelled in all: time and memory grow with
/// them (docs/limits.md).
const MAX_TOTAL_BYTES: usize = 12 * 1024 * 1024;

/// Findings reported from one change; the rest are counted in a note.
const MAX_FINDINGS: usize = 1_000;

/// Every shape this analyzer reports, with its documentation.
pub const CHECKS: &[(&str, Kind, KindDoc)] = &[
    (
        compare::NEW_WRITE,
        Kind::RetryNonIdempotent,
        KindDoc {
            what: "A write (POST, PATCH, or an SDK/RPC call whose verb writes: create, send, submit, insert, publish, ...) that ran once in the base is retried in the head, with no idempotency key: a new retry decorator, wrapper, annotation or loop around it, a retry moved onto the function that performs it, or a call of it moved under a retry. A warning when the retry fires only on rate limiting, refused connections or conflicts, when the retry and every write it covers are in functions the base did not define (new code, not a call that ran once), and when the same retry was in the base and already re-sent writes (the call under it was replaced).",
            why: "A write whose answer was lost (a timeout, a reset, a 5xx) may have been applied; sending it again charges twice, sends the email twice, creates the order twice.",
            example: "def create(b): return requests.post(URL, json=b)  ->  @retry(stop=stop_after_attempt(3)) def create(b): ...",
            use_instead: "Send an Idempotency-Key the server honours and keep it across attempts, or retry only failures after which nothing was sent (refused connections, 429 with Retry-After).",
        },
    ),
    (
        compare::NEW_UNKNOWN,
        Kind::RetryNonIdempotent,
        KindDoc {
            what: "A request whose method retrygate cannot tell (a generic `send`/`Do`/`execute` of a request built elsewhere) ran once in the base and is retried in the head. A warning that names it.",
            why: "If it writes, the retry sends the write again; the reviewer has to look.",
            example: "resp, err := client.Do(req)   (now inside a for loop that goes round on err)",
            use_instead: "Retry only requests known to be idempotent, or send an idempotency key.",
        },
    ),
    (
        compare::NEW_UNBOUNDED,
        Kind::RetryUnbounded,
        KindDoc {
            what: "An operation that ran once in the base is retried in the head with no bound on attempts or time: `while True`/`for {}` that goes round on failure, tenacity without `stop`, retry-go `Attempts(0)`, cenkalti backoff with `MaxElapsedTime = 0`, a Ruby `rescue` that says `retry` unconditionally, a function that calls itself on failure.",
            why: "An unbounded retry never stops adding load to a dependency that is down, and hides the outage from whoever is waiting.",
            example: "while True:\n    try: return send(b)\n    except Exception: time.sleep(1)",
            use_instead: "Bound the attempts (three is plenty) and the total time.",
        },
    ),
    (
        compare::NEW_RAISED,
        Kind::RetryCountRaised,
        KindDoc {
            what: "A read, a model call or a request of unknown method that ran once in the base is retried in the head (a new decorator, wrapper, loop or helper around it) with more than four attempts (three retries): a retry raised from one attempt. A new retry of at most four attempts passes (with a warning when its delay has no randomness); a write newly retried is `op/new-retry-of-write` instead. A warning in functions the base did not have and in files added in bulk.",
            why: "Every new retry multiplies what an outage costs the dependency: a read retried ten times is ten times the load when it is slowest.",
            example: "resp, err := c.client.Do(req)  ->  for attempt := 1; attempt <= 5; attempt++ { resp, err = c.client.Do(req); if err == nil { break }; time.Sleep(time.Second) }",
            use_instead: "At most three retries (four attempts) with a random (full-jitter) delay, or a budget shared by the client.",
        },
    ),
    (
        compare::NEW_NO_JITTER,
        Kind::RetryWithoutJitter,
        KindDoc {
            what: "A new retry (of any operation) waits a delay with no randomness in it. A warning.",
            why: "Clients that failed together retry together, in waves.",
            example: "for i in range(3): ... time.sleep(2 ** i)",
            use_instead: "Full jitter: sleep a random time between 0 and the backoff.",
        },
    ),
    (
        compare::WIDENED,
        Kind::RetryNonIdempotent,
        KindDoc {
            what: "A write already retried only on failures after which nothing was written (429, refused connections, conflicts) is, in the head, also retried on timeouts, dropped connections, 5xx answers or any failure.",
            why: "After a timeout or a reset the server may have applied the write; retrying then applies it twice.",
            example: "retry=retry_if_exception_type(RateLimitError)  ->  retry=retry_if_exception_type((RateLimitError, Timeout))",
            use_instead: "Keep write retries to failures that prove the request was not processed, or add an idempotency key first.",
        },
    ),
    (
        compare::BOUND_REMOVED,
        Kind::RetryUnbounded,
        KindDoc {
            what: "A retry around an operation had a bound in the base (a count, a deadline) and has none in the head: a counted loop became `while True`, a counter check was deleted.",
            why: "An unbounded retry never stops adding load to a dependency that is down.",
            example: "for i in range(3): ...  ->  while True: ...",
            use_instead: "Keep the bound.",
        },
    ),
    (
        compare::COUNT_RAISED,
        Kind::RetryCountRaised,
        KindDoc {
            what: "A hand-written retry (a loop, a recursion, a project helper) around an operation makes more attempts in the head; the count is followed through names, imports and class fields to where it is written.",
            why: "Every extra attempt is another request from every client at the moment the dependency is failing.",
            example: "for attempt in range(MAX_TRIES)   (MAX_TRIES = 3 -> 8 in settings.py)",
            use_instead: "Keep the count at 3 attempts or fewer.",
        },
    ),
    (
        compare::JITTER_REMOVED,
        Kind::JitterRemoved,
        KindDoc {
            what: "A hand-written retry around an operation drew a random delay in the base and waits a fixed one in the head.",
            why: "Without jitter, clients that failed together retry together.",
            example: "time.sleep(base * 2 ** i + random.uniform(0, 1))  ->  time.sleep(base * 2 ** i)",
            use_instead: "Keep the random part of the delay.",
        },
    ),
    (
        compare::TIMEOUT_LOWERED,
        Kind::TimeoutLowered,
        KindDoc {
            what: "The timeout of a call that a retry covers (its own `timeout=` option, `AbortSignal.timeout(..)`, or the one timeout the function builds its client with), followed to its value, is lower in the head.",
            why: "A shorter timeout under a retry turns slow answers into more attempts, each of which the server may still be working on.",
            example: "@retry(...) def items(): return requests.get(URL, timeout=30)  ->  timeout=2",
            use_instead: "Keep the timeout above the dependency's slow answers; bound the retries by total time.",
        },
    ),
    (
        compare::RETRY_AFTER,
        Kind::RetryAfterIgnored,
        KindDoc {
            what: "A retry whose code read the `Retry-After` header in the base (in the retried function, the loop or the wrapped code) reads it nowhere in the head, around the same operation.",
            why: "The server's wait is replaced by the client's own, usually shorter: every client retries into the rate limit it was just told about (RFC 9110 10.2.3).",
            example: "if r.status_code == 429: time.sleep(int(r.headers['Retry-After']))   (deleted)",
            use_instead: "Keep honouring Retry-After (seconds and HTTP-date), with jitter on top.",
        },
    ),
];

/// The operation model as an analyzer.
#[derive(Debug, Default)]
pub struct OperationsAnalyzer {
    /// The repository at the head, for the unchanged files that import a
    /// changed constant (a loop's count in another file); `None` for a
    /// change built from texts.
    head: Option<crate::analyze::rules::helpers::RepoHead>,
}

impl OperationsAnalyzer {
    /// The analyzer for a change read from git.
    pub fn for_changeset(cs: &crate::changeset::ChangeSet) -> OperationsAnalyzer {
        let head = (cs.head.len() >= 40 && cs.head.bytes().any(|b| b != b'0'))
            .then(|| crate::changeset::Git::open(&cs.repo).ok())
            .flatten()
            .map(|git| crate::analyze::rules::helpers::RepoHead { git, rev: cs.head.clone() });
        OperationsAnalyzer { head }
    }
}

impl Analyzer for OperationsAnalyzer {
    fn name(&self) -> &str {
        "operation model"
    }

    fn wants(&self, path: &str) -> bool {
        Grammar::of_path(path).is_some()
    }

    fn analyze(&self, file: &FileChange) -> FileResult {
        self.analyze_set(&[file])
    }

    fn analyze_set(&self, files: &[&FileChange]) -> FileResult {
        let mut out = FileResult::default();
        let data = match data::DATA.as_ref() {
            Ok(d) => d,
            Err(e) => {
                out.notes.push(Note::blocking(None, format!("the operation model's data did not load ({e}); no retry outside Rust was modelled: this build is broken, report it")));
                return out;
            }
        };
        let (mut base, bn) = parse(files, |f| f.base.text());
        let (mut head, hn) = parse(files, |f| f.head.text());
        out.notes.extend(bn);
        out.notes.extend(hn);
        if head.is_empty() {
            return out;
        }
        // The change's own paths: the head tree's files read beside them are the others.
        let changed: std::collections::HashSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
        // Unchanged files that import a constant the change redefined
        // join both revisions with their one text.
        let sources = {
            let bw = World { files: base.iter().map(Index::of).collect() };
            let hw = World { files: head.iter().map(Index::of).collect() };
            let mut s = crate::analyze::trees::changed_constants(files, &bw, &hw);
            // The grammars the evaluator does not bind: a changed line that
            // binds a number to a name.
            for f in files {
                let new_grammar = Grammar::of_path(&f.path).is_some_and(|g| !g.reads_library_sites());
                if new_grammar && !s.iter().any(|x| x.path == f.path) && binds_a_number(f) {
                    s.push(*f);
                }
            }
            s
        };
        if let Some(tree) = self.head.as_ref().filter(|_| !sources.is_empty()) {
            let keep = |_: Grammar, text: &str| self::syntax::names_a_retry(text);
            match crate::analyze::trees::dependents::read_kept(tree, &sources, &changed, Grammar::of_path, &keep) {
                Ok((deps, _)) => {
                    for d in deps {
                        if let (Ok(b), Ok(h)) = (FileTree::new(&d.path, d.grammar, &d.text), FileTree::new(&d.path, d.grammar, &d.text)) {
                            base.push(b);
                            head.push(h);
                        }
                    }
                }
                Err(e) => out.notes.push(Note::blocking(None, format!("could not read the head tree to follow changed constants to the retries that import them ({e}); check that the head commit is in the repository, then run retrygate again"))),
            }
        }
        // A project helper or decorator named as a retry and defined in a
        // file the change does not touch: that file joins both revisions
        // with its one text, so what it retries is read, not guessed.
        if let Some(tree) = self.head.as_ref() {
            match tree::helper_definitions(tree, files, &changed) {
                Ok(found) => join_both(found, &mut base, &mut head),
                Err(e) => out.notes.push(Note::blocking(None, format!("could not read the head tree for the definition of a retry helper the change uses ({e}); check that the head commit is in the repository, then run retrygate again"))),
            }
        }
        // The callers of a sender that takes its method or its request as
        // a parameter say what it sends: the files that call one with a write method
        // join both revisions with their one text.
        if let Some(tree) = self.head.as_ref() {
            match tree::method_callers(tree, files, &changed) {
                Ok(found) => join_both(found, &mut base, &mut head),
                Err(e) => out.notes.push(Note::blocking(None, format!("could not read the head tree for the callers of a sender that takes its method as a parameter ({e}); check that the head commit is in the repository, then run retrygate again"))),
            }
        }
        // A retrying client built in a Go file covers its package: the
        // package's other files join both revisions with their one text.
        if let Some(tree) = self.head.as_ref() {
            match tree::package_siblings(tree, files, data) {
                Ok(siblings) => {
                    for (path, text) in siblings {
                        if let (Ok(b), Ok(h)) =
                            (FileTree::new(&path, Grammar::Go, &text), FileTree::new(&path, Grammar::Go, &text))
                        {
                            base.push(b);
                            head.push(h);
                        }
                    }
                }
                Err(e) => out.notes.push(Note::blocking(None, format!("could not read the head tree for the package of a new retrying client ({e}); check that the head commit is in the repository, then run retrygate again"))),
            }
        }
        let bw = World { files: base.iter().map(Index::of).collect() };
        let hw = World { files: head.iter().map(Index::of).collect() };
        let bm = front::model(&bw, data);
        let hm = front::model(&hw, data);
        let by_path: HashMap<&str, &FileChange> = files.iter().map(|f| (f.path.as_str(), *f)).collect();
        // A span of code is touched by lines added in it and by lines
        // deleted from it (a Retry-After read deleted adds no line).
        let deleted: HashMap<&str, std::collections::HashSet<u32>> = files
            .iter()
            .map(|f| {
                let pts = crate::changeset::deletion_points(
                    f.base.text().unwrap_or(""),
                    f.head.text().unwrap_or(""),
                );
                (f.path.as_str(), pts.into_iter().collect())
            })
            .collect();
        let added = |p: &str, l: u32| {
            by_path.get(p).is_some_and(|f| f.is_added(l)) || deleted.get(p).is_some_and(|d| d.contains(&l))
        };
        if bm.truncated || hm.truncated {
            out.notes.push(Note::blocking(
                None,
                format!(
                    "the change holds more than {} calls or {} retries in the files the operation model reads; it stopped there, so a new retry in the rest was not compared: review the change by hand and sign off, or split it",
                    front::MAX_CALLS,
                    front::MAX_RETRIES
                ),
            ));
        }
        let added_files = files.iter().filter(|f| f.base.text().is_none()).count();
        // A file added into a folder the base already had (a file of the
        // head tree there that the change did not add) is the project's
        // own code, however many files the change adds: a refactor into
        // new files, not code brought in from elsewhere.
        let settled_dirs: std::collections::HashSet<String> = if added_files > compare::BULK_FILES {
            let added: std::collections::HashSet<&str> =
                files.iter().filter(|f| f.base.text().is_none()).map(|f| f.path.as_str()).collect();
            match self.head.as_ref().map(|t| t.git.tree_files(&t.rev)) {
                Some(Ok(tree)) => tree
                    .into_iter()
                    .filter(|(p, _)| !added.contains(p.as_str()))
                    .map(|(p, _)| folder_of(&p).to_string())
                    .collect(),
                Some(Err(e)) => {
                    out.notes.push(Note::blocking(None, format!("could not list the head tree to tell the project's folders from code added in bulk ({e}); new retries in the files this change adds are said as warnings: check that the head commit is in the repository, then run retrygate again")));
                    std::collections::HashSet::new()
                }
                None => std::collections::HashSet::new(),
            }
        } else {
            std::collections::HashSet::new()
        };
        let new_file = |p: &str| {
            added_files > compare::BULK_FILES
                && by_path.get(p).is_some_and(|f| f.base.text().is_none())
                && !settled_dirs.contains(folder_of(p))
        };
        out.findings = compare::judge(&bm, &hm, &added, &new_file);
        if out.findings.len() > MAX_FINDINGS {
            let more = out.findings.len() - MAX_FINDINGS;
            out.findings.truncate(MAX_FINDINGS);
            out.notes.push(Note::blocking(
                None,
                format!("the operation model found {more} more retry findings than the {MAX_FINDINGS} it reports; review the change by hand"),
            ));
        }
        // The head's new or changed retries, for limits.max_attempts.
        for r in &hm.retries {
            if !(r.line..=r.end_line.min(r.line + 400)).any(|l| added(&r.path, l)) {
                continue;
            }
            let attempts = match r.attempts {
                Attempts::Count(n) => Some(n),
                Attempts::Unbounded => None,
                _ => continue,
            };
            out.head_policies.push(HeadPolicy {
                path: r.path.clone(),
                line: r.line,
                end_line: r.line,
                attempts,
                lib: r.form.show(),
            });
        }
        out
    }
}

/// The folder of a path (`""` at the top).
fn folder_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// Whether an added line of `f` binds a name to a number (`MAX = 3`,
/// `const int Max = 3;`).
fn binds_a_number(f: &FileChange) -> bool {
    let Some(text) = f.head.text() else { return false };
    text.lines().enumerate().any(|(i, l)| {
        f.is_added(i as u32 + 1) && {
            let t = l.trim();
            t.contains('=')
                && t.split('=').nth(1).is_some_and(|r| {
                    r.trim().trim_end_matches([';', ',']).replace('_', "").parse::<f64>().is_ok()
                })
        }
    })
}

/// Unchanged files read from the head tree join both revisions with their
/// one text (a file that does not parse is left out: it is context only).
fn join_both(found: Vec<(String, Grammar, String)>, base: &mut Vec<FileTree>, head: &mut Vec<FileTree>) {
    for (path, g, text) in found {
        if let (Ok(b), Ok(h)) = (FileTree::new(&path, g, &text), FileTree::new(&path, g, &text)) {
            base.push(b);
            head.push(h);
        }
    }
}

/// One side's files as trees; a file that cannot be parsed is a blocking
/// note only where it holds a retry word (it may hide a new retry).
fn parse<'a>(
    files: &[&'a FileChange],
    text: impl Fn(&'a FileChange) -> Option<&'a str>,
) -> (Vec<FileTree>, Vec<Note>) {
    let mut trees = Vec::new();
    let mut notes = Vec::new();
    let mut total = 0usize;
    for f in files {
        let (Some(g), Some(t)) = (Grammar::of_path(&f.path), text(f)) else { continue };
        total += t.len();
        if total > MAX_TOTAL_BYTES {
            notes.push(Note::blocking(
                Some(&f.path),
                format!("the change's files in the operation model's languages pass {} MiB in all; this one and those after it were not modelled, so a new retry here was not compared: review it by hand and sign off, or split the change", MAX_TOTAL_BYTES / (1024 * 1024)),
            ));
            continue;
        }
        if t.len() > MAX_FILE_BYTES {
            notes.push(Note::info(
                Some(&f.path),
                format!("larger than {} MiB: the operation model did not read it; a new retry there may be missed", MAX_FILE_BYTES / (1024 * 1024)),
            ));
            continue;
        }
        match FileTree::new(&f.path, g, t) {
            Ok(tree) => trees.push(tree),
            Err(e) if t.to_ascii_lowercase().contains("retr") => notes.push(Note::blocking(
                Some(&f.path),
                format!("could not build a syntax tree ({e}), and the file mentions retries: what its retries cover was not compared; review it by hand and sign off"),
            )),
            Err(_) => {}
        }
    }
    (trees, notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changeset::ChangeSet;

    fn scan(path: &str, base: &str, head: &str) -> Vec<crate::finding::Finding> {
        let cs = ChangeSet::from_files(vec![FileChange::from_texts(path, Some(base), Some(head))]);
        let files: Vec<&FileChange> = cs.files.iter().collect();
        OperationsAnalyzer::default().analyze_set(&files).findings
    }

    fn errors(f: &[crate::finding::Finding]) -> Vec<&str> {
        f.iter().filter(|f| f.severity == crate::finding::Severity::Error).map(|f| f.rule.as_str()).collect()
    }

    #[test]
    fn a_retry_another_file_still_makes_is_not_the_one_a_new_retry_moved() {
        let retried = "import time\nimport requests\n\ndef deliver(b):\n    for i in range(3):\n        try:\n            return requests.post('https://hooks.example.com/a', json=b)\n        except requests.ConnectionError:\n            time.sleep(1)\n";
        let now = "import time\nimport requests\n\ndef notify(b):\n    for i in range(3):\n        try:\n            return requests.post('https://hooks.example.com/b', json=b)\n        except requests.ConnectionError:\n            time.sleep(1)\n";
        let run = |other_head: Option<&str>| {
            let cs = ChangeSet::from_files(vec![
                FileChange::from_texts("app/hooks.py", Some(retried), other_head),
                FileChange::from_texts("app/notify.py", Some("import requests\n"), Some(now)),
            ]);
            let files: Vec<&FileChange> = cs.files.iter().collect();
            OperationsAnalyzer::default().analyze_set(&files).findings
        };
        // The other file keeps its retried POST (in a renamed function):
        // the new function's retry is new.
        // (A warning: `notify` is a function the base did not have.)
        let rules = |f: Vec<crate::finding::Finding>| -> Vec<String> {
            f.into_iter().filter(|f| f.kind == Kind::RetryNonIdempotent).map(|f| f.rule).collect()
        };
        let kept = retried.replace("def deliver", "def deliver_all");
        assert_eq!(rules(run(Some(&kept))), vec![compare::NEW_WRITE]);
        // The other file lost it: the retry moved here, nothing new.
        assert!(rules(run(Some("import requests\n"))).is_empty());
    }

    #[test]
    fn a_new_retrying_client_covers_the_writes_sent_through_it() {
        // Go: the package's client becomes a go-retryablehttp one (every
        // method, 5 retries); its POST is now re-sent after a 5xx.
        let base = "package p\n\nimport \"net/http\"\n\ntype C struct{ hc *http.Client }\n\nfunc New() *C {\n\treturn &C{hc: &http.Client{}}\n}\n\nfunc (c *C) Create(body io.Reader) error {\n\t_, err := c.hc.Post(\"https://api.example/records\", \"application/json\", body)\n\treturn err\n}\n";
        let head = base.replace(
            "\treturn &C{hc: &http.Client{}}\n",
            "\trc := retryablehttp.NewClient()\n\trc.RetryMax = 5\n\treturn &C{hc: rc.StandardClient()}\n",
        );
        let f = scan("p/client.go", base, &head);
        assert_eq!(errors(&f), [compare::NEW_WRITE], "{f:#?}");
        let e = f.iter().find(|f| f.rule == compare::NEW_WRITE).unwrap();
        assert_eq!(e.line, 8, "at the client it builds: {e:#?}");
        assert!(
            e.message.contains("go-retryablehttp client") && e.message.contains("6 attempts"),
            "{}",
            e.message
        );
        // The package-level http.Post does not go through any client.
        let plain = base.replace("c.hc.Post", "http.Post");
        let f = scan(
            "p/client.go",
            &plain,
            &plain.replace(
                "\treturn &C{hc: &http.Client{}}\n",
                "\trc := retryablehttp.NewClient()\n\treturn &C{hc: rc.StandardClient()}\n",
            ),
        );
        assert!(errors(&f).is_empty(), "{f:#?}");

        // Python: urllib3's Retry retries POST only when told to.
        let base = "import requests\n\nclass Api:\n    def __init__(self):\n        self.session = requests.Session()\n\n    def create(self, b):\n        return self.session.post('https://api.example/o', json=b)\n";
        let mount = |opts: &str| {
            base.replace(
                "        self.session = requests.Session()\n",
                &format!("        self.session = requests.Session()\n        self.session.mount('https://', HTTPAdapter(max_retries=Retry(total=5{opts})))\n"),
            )
            .replace("import requests\n", "import requests\nfrom requests.adapters import HTTPAdapter\nfrom urllib3.util import Retry\n")
        };
        let f = scan("api.py", base, &mount(", allowed_methods=None"));
        assert_eq!(errors(&f), [compare::NEW_WRITE], "{f:#?}");
        let f = scan("api.py", base, &mount(""));
        assert!(errors(&f).is_empty(), "the default retries only idempotent methods: {f:#?}");

        // C#: the standard resilience handler retries every method, unless
        // told not to retry unsafe ones.
        let base = "class Orders {\n    public Orders(IServiceCollection s) {\n        s.AddHttpClient(\"orders\");\n    }\n    public Task Create(HttpContent c) {\n        return _http.PostAsync(\"https://api.example/orders\", c);\n    }\n}\n";
        let head = base.replace(
            "s.AddHttpClient(\"orders\");",
            "s.AddHttpClient(\"orders\").AddStandardResilienceHandler();",
        );
        let f = scan("Orders.cs", base, &head);
        assert_eq!(errors(&f), [compare::NEW_WRITE], "{f:#?}");
        let narrowed = head.replace(
            "AddStandardResilienceHandler();",
            "AddStandardResilienceHandler(o => o.Retry.DisableForUnsafeHttpMethods());",
        );
        let f = scan("Orders.cs", base, &narrowed);
        assert!(errors(&f).is_empty(), "{f:#?}");
    }

    #[test]
    fn faradays_retry_middleware_covers_a_post_only_when_told_to() {
        let base = "class Api\n  def initialize\n    @conn = Faraday.new(url: BASE) do |f|\n      f.request :json\n    end\n  end\n\n  def create(order)\n    @conn.post('/orders', order)\n  end\nend\n";
        let with = |opts: &str| {
            base.replace(
                "      f.request :json\n",
                &format!("      f.request :json\n      f.request :retry, max: 3{opts}\n"),
            )
        };
        let f = scan("lib/api.rb", base, &with(", methods: %i[get post]"));
        assert_eq!(errors(&f), [compare::NEW_WRITE], "{f:#?}");
        let f = scan("lib/api.rb", base, &with(""));
        assert!(errors(&f).is_empty(), "the default retries only idempotent methods: {f:#?}");
        // Another middleware is no retry.
        let f = scan(
            "lib/api.rb",
            base,
            &base.replace(
                "f.request :json",
                "f.request :json\n      f.request :authorization, 'Bearer', TOKEN",
            ),
        );
        assert!(f.is_empty(), "{f:#?}");
    }

    #[test]
    fn a_reactive_retry_after_a_write_covers_it() {
        // Java: Reactor's retryWhen after a WebClient POST.
        let base = "class Orders {\n    Mono<Order> create(Order o) {\n        return webClient.post().uri(\"/orders\").bodyValue(o).retrieve().bodyToMono(Order.class);\n    }\n}\n";
        let head = base.replace(
            "bodyToMono(Order.class);",
            "bodyToMono(Order.class)\n            .retryWhen(Retry.fixedDelay(3, Duration.ofSeconds(1)));",
        );
        let f = scan("Orders.java", base, &head);
        assert_eq!(errors(&f), [compare::NEW_WRITE], "{f:#?}");
        assert!(f.iter().any(|f| f.message.contains("4 attempts")), "{f:#?}");
        // ... and a read retried with Reactor's jittered backoff passes.
        let read = base.replace("webClient.post()", "webClient.get()").replace(".bodyValue(o)", "");
        let f = scan(
            "Orders.java",
            &read,
            &read.replace(
                "bodyToMono(Order.class);",
                "bodyToMono(Order.class).retryWhen(Retry.backoff(3, Duration.ofMillis(200)));",
            ),
        );
        assert!(f.is_empty(), "{f:#?}");
        // TypeScript: Angular's HttpClient POST piped through retry() with
        // no count retries forever.
        let base = "export class Api {\n  create(o: Order) {\n    return this.http.post('/api/orders', o);\n  }\n}\n";
        let head = base
            .replace("this.http.post('/api/orders', o);", "this.http.post('/api/orders', o).pipe(retry());");
        let f = scan("api.service.ts", base, &head);
        let rules = errors(&f);
        assert!(rules.contains(&compare::NEW_WRITE) && rules.contains(&compare::NEW_UNBOUNDED), "{f:#?}");
    }

    #[test]
    fn a_package_named_as_a_retry_that_is_given_code_retries_it() {
        // A project's own retry package, called with a generic method name.
        let base = "package notify\n\nfunc (p Pipe) Announce(ctx context.Context, body []byte) error {\n\treq, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))\n\tif err != nil {\n\t\treturn err\n\t}\n\t_, err = p.client.Do(req)\n\treturn err\n}\n";
        let head = "package notify\n\nfunc (p Pipe) Announce(ctx context.Context, body []byte) error {\n\treturn retrier.Do(ctx, p.cfg, func() error {\n\t\treq, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))\n\t\tif err != nil {\n\t\t\treturn err\n\t\t}\n\t\t_, err = p.client.Do(req)\n\t\treturn err\n\t})\n}\n";
        let f = scan("notify/notify.go", base, head);
        assert_eq!(errors(&f), [compare::NEW_WRITE], "{f:#?}");
        // A package whose name says nothing of retrying: no retry.
        let f = scan("notify/notify.go", base, &head.replace("retrier.Do", "tracing.Do"));
        assert!(errors(&f).is_empty(), "{f:#?}");
    }

    #[test]
    fn a_new_tenacity_retry_of_a_post_is_an_error_and_of_a_get_is_not() {
        let base = "import requests\n\ndef create(b):\n    return requests.post('https://x/o', json=b)\n";
        let head = "import requests\nfrom tenacity import retry, stop_after_attempt, wait_fixed\n\n@retry(wait=wait_fixed(1), stop=stop_after_attempt(3))\ndef create(b):\n    return requests.post('https://x/o', json=b)\n";
        let f = scan("app/c.py", base, head);
        assert!(
            f.iter().any(|f| f.rule == compare::NEW_WRITE && f.severity == crate::finding::Severity::Error),
            "{f:#?}"
        );
        let get_head = head
            .replace("requests.post", "requests.get")
            .replace("wait_fixed(1)", "wait_random_exponential()")
            .replace("wait_fixed", "wait_random_exponential");
        let get_base = base.replace("requests.post", "requests.get");
        let f = scan("app/c.py", &get_base, &get_head);
        assert!(f.iter().all(|f| f.severity != crate::finding::Severity::Error), "{f:#?}");
    }

    /// A retried write in a function the base did not define is new code:
    /// said as a warning. The same retry added to a function that existed
    /// (the call ran once there) blocks.
    #[test]
    fn a_retried_write_in_a_new_function_is_a_warning() {
        let base = "import requests\n\ndef read(u):\n    return requests.get(u)\n";
        let head = "import requests\nfrom tenacity import retry, stop_after_attempt\n\ndef read(u):\n    return requests.get(u)\n\n@retry(stop=stop_after_attempt(3))\ndef create(b):\n    return requests.post('https://x/o', json=b)\n";
        let f = scan("app/c.py", base, head);
        let new = f.iter().find(|f| f.rule == compare::NEW_WRITE).expect("a finding for the new retry");
        assert_eq!(new.severity, crate::finding::Severity::Warning, "{f:#?}");
        assert!(new.message.contains("a function the base did not have"), "{}", new.message);
        let base_with_create =
            format!("{base}\ndef create(b):\n    return requests.post('https://x/o', json=b)\n");
        let f = scan("app/c.py", &base_with_create, head);
        assert!(
            f.iter().any(|f| f.rule == compare::NEW_WRITE && f.severity == crate::finding::Severity::Error),
            "{f:#?}"
        );
        // The same new function in a file the change adds: a new retrying
        // client for writes, which blocks.
        let cs = ChangeSet::from_files(vec![FileChange::from_texts("app/new_client.py", None, Some(head))]);
        let files: Vec<&FileChange> = cs.files.iter().collect();
        let f = OperationsAnalyzer::default().analyze_set(&files).findings;
        assert!(
            f.iter().any(|f| f.rule == compare::NEW_WRITE && f.severity == crate::finding::Severity::Error),
            "{f:#?}"
        );
        // A new function's retry with no bound still blocks.
        let forever = "import requests, time\n\ndef read(u):\n    return requests.get(u)\n\ndef create(b):\n    while True:\n        try:\n            return requests.post('https://x/o', json=b)\n        except Exception:\n            time.sleep(1)\n";
        let f = scan("app/c.py", base, forever);
        assert!(
            f.iter()
                .any(|f| f.rule == compare::NEW_UNBOUNDED && f.severity == crate::finding::Severity::Error),
            "{f:#?}"
        );
    }

    #[test]
    fn a_bare_call_of_a_methods_own_name_is_a_self_call_only_where_the_language_makes_it_one() {
        // PHP: inside the method `redirect`, `redirect()` is Laravel's
        // helper; `$this->redirect()` is the method again.
        let base = "<?php\nclass Callback {\n    public function redirect() {\n        $r = Http::asForm()->post($this->url, $this->form);\n        return $r;\n    }\n}\n";
        let head = |call: &str| {
            format!("<?php\nclass Callback {{\n    public function redirect() {{\n        try {{\n            $r = Http::asForm()->post($this->url, $this->form);\n            return $r;\n        }} catch (\\Exception $e) {{\n            return {call};\n        }}\n    }}\n}}\n")
        };
        assert!(errors(&scan("app/Callback.php", base, &head("redirect()->route('home')"))).is_empty());
        assert!(
            errors(&scan("app/Callback.php", base, &head("$this->redirect()"))).contains(&compare::NEW_WRITE)
        );
        // Python: a method reaches itself through `self`; a module
        // function by its bare name.
        let m = |call: &str| {
            format!("import requests\n\nclass C:\n    def send(self, b):\n        try:\n            return requests.post('https://x/o', json=b)\n        except Exception:\n            return {call}\n")
        };
        let base_m = "import requests\n\nclass C:\n    def send(self, b):\n        return requests.post('https://x/o', json=b)\n";
        assert!(errors(&scan("app/c.py", base_m, &m("send(b)"))).is_empty());
        assert!(errors(&scan("app/c.py", base_m, &m("self.send(b)"))).contains(&compare::NEW_WRITE));
        let base_f = "import requests\n\ndef send(b):\n    return requests.post('https://x/o', json=b)\n";
        let head_f = "import requests\n\ndef send(b):\n    try:\n        return requests.post('https://x/o', json=b)\n    except Exception:\n        return send(b)\n";
        assert!(errors(&scan("app/c.py", base_f, head_f)).contains(&compare::NEW_WRITE));
    }

    #[test]
    fn a_write_swapped_under_a_retry_the_base_had_is_a_warning_and_one_put_under_a_retry_of_reads_blocks() {
        let body = |call: &str| {
            format!("import requests, httpx, time\n\ndef push(b):\n    for i in range(3):\n        try:\n            return {call}\n        except Exception:\n            time.sleep(1 + i)\n")
        };
        // The transport under the retry is swapped: requests -> httpx.
        let f = scan(
            "app/p.py",
            &body("requests.post('https://x/o', json=b)"),
            &body("httpx.post('https://x/o', json=b)"),
        );
        let w = f.iter().find(|f| f.rule == compare::NEW_WRITE).expect("the new write is said");
        assert_eq!(w.severity, crate::finding::Severity::Warning, "{f:#?}");
        assert!(w.message.contains("the same retry was in the base"), "{}", w.message);
        // The base retried a read; the head retries a write in its place.
        let f = scan(
            "app/p.py",
            &body("requests.get('https://x/o')"),
            &body("requests.post('https://x/o', json=b)"),
        );
        assert!(errors(&f).contains(&compare::NEW_WRITE), "{f:#?}");
        // A loop with no bound in the base: the new call under it is not a
        // new unbounded retry; a bounded one made endless still is.
        let forever = |call: &str| {
            format!("import requests, httpx, time\n\ndef push(b):\n    while True:\n        try:\n            return {call}\n        except Exception:\n            time.sleep(1)\n")
        };
        let f =
            scan("app/p.py", &forever("requests.get('https://x/a')"), &forever("httpx.get('https://x/a')"));
        assert!(!errors(&f).contains(&compare::NEW_UNBOUNDED), "{f:#?}");
        let f = scan("app/p.py", &body("requests.get('https://x/a')"), &forever("httpx.get('https://x/a')"));
        assert!(errors(&f).contains(&compare::NEW_UNBOUNDED), "{f:#?}");
    }

    #[test]
    fn a_queued_jobs_tries_property_retries_its_handle() {
        let job = |prop: &str| {
            format!("<?php\nnamespace App\\Jobs;\n\nuse Illuminate\\Contracts\\Queue\\ShouldQueue;\nuse Illuminate\\Support\\Facades\\Http;\n\nclass SendToSlack implements ShouldQueue\n{{\n{prop}    public function __construct(public string $text) {{}}\n\n    public function handle(): void\n    {{\n        Http::post($this->webhook, ['text' => $this->text]);\n    }}\n}}\n")
        };
        let path = "app/Jobs/SendToSlack.php";
        assert!(errors(&scan(path, &job(""), &job(""))).is_empty());
        let f = scan(path, &job(""), &job("    public $tries = 5;\n\n"));
        assert!(errors(&f).contains(&compare::NEW_WRITE), "{f:#?}");
        let f = scan(path, &job("    public $tries = 3;\n"), &job("    public int $tries = 6;\n"));
        assert!(errors(&f).contains(&compare::COUNT_RAISED), "{f:#?}");
        let f = scan(path, &job("    public $tries = 3;\n"), &job("    public $tries = 0;\n"));
        assert!(errors(&f).contains(&compare::BOUND_REMOVED), "{f:#?}");
        // A class that is not a queued job: the property is only a field.
        let plain = job("    public $tries = 5;\n\n")
            .replace(" implements ShouldQueue", "")
            .replace("use Illuminate\\Contracts\\Queue\\ShouldQueue;\n", "");
        assert!(errors(&scan(
            path,
            &job("")
                .replace(" implements ShouldQueue", "")
                .replace("use Illuminate\\Contracts\\Queue\\ShouldQueue;\n", ""),
            &plain
        ))
        .is_empty());
    }

    #[test]
    fn task_queue_decorators_that_retry_cover_the_task() {
        let task = |dec: &str| {
            format!("import requests\n{dec}\ndef notify(b):\n    return requests.post('https://x/hooks', json=b)\n")
        };
        let path = "app/tasks.py";
        let base = task("@app.task(bind=True)");
        assert!(errors(&scan(path, &base, &task("@app.task(bind=True, acks_late=True)"))).is_empty());
        let f = scan(path, &base, &task("@app.task(bind=True, autoretry_for=(Exception,), max_retries=5)"));
        assert!(errors(&f).contains(&compare::NEW_WRITE), "{f:#?}");
        let f = scan(path, &task("@broker.task"), &task("@broker.task(retry_on_error=True, max_retries=3)"));
        assert!(errors(&f).contains(&compare::NEW_WRITE), "{f:#?}");
        let f = scan(path, &task("@broker.task"), &task("@broker.task(retry_on_error=False)"));
        assert!(errors(&f).is_empty(), "{f:#?}");
        let dram = |dec: &str| format!("import dramatiq\n{}", task(dec));
        let f = scan(path, &dram(""), &dram("@dramatiq.actor"));
        assert!(errors(&f).contains(&compare::NEW_WRITE), "{f:#?}");
    }

    #[test]
    fn a_value_built_by_a_constructor_or_kept_in_process_is_not_a_write() {
        let py = |call: &str| {
            format!("import time\n\ndef push(stub, b):\n    for i in range(3):\n        try:\n            return {call}\n        except Exception:\n            time.sleep(1 + i)\n")
        };
        let base = "def push(stub, b):\n    return None\n";
        // A message type built in the retried code: nothing is sent.
        assert!(errors(&scan("app/p.py", base, &py("types.SendMessageSuccessResponse(result=b)"))).is_empty());
        // A gRPC stub's CapWords method is a call out.
        assert!(errors(&scan("app/p.py", base, &py("stub.SendMessage(b)"))).contains(&compare::NEW_WRITE));
        // A factory of an in-process object, and a stream controller.
        let cs = |call: &str| {
            format!("class Probe {{\n    async Task Sample(DbConnection conn) {{\n        while (sw.Elapsed < limit) {{\n            try {{\n                {call};\n                return;\n            }} catch (Exception) {{\n                await Task.Delay(1000);\n            }}\n        }}\n    }}\n}}\n")
        };
        let base_cs = "class Probe {\n    async Task Sample(DbConnection conn) {\n    }\n}\n";
        assert!(errors(&scan("src/Probe.cs", base_cs, &cs("var cmd = conn.CreateCommand()"))).is_empty());
        assert!(errors(&scan("src/Probe.cs", base_cs, &cs("await ordersClient.CreateOrderAsync(o)")))
            .contains(&compare::NEW_WRITE));
        // The same verb on a receiver nothing shows to be a client is a
        // write by its name alone: said, not blocked on.
        assert!(errors(&scan("src/Probe.cs", base_cs, &cs("await orders.CreateOrderAsync(o)"))).is_empty());
        // A factory on a type named for a value builds it; a resource
        // type's create (an SDK's `Customer.create`) sends.
        let java = |call: &str| {
            format!("class Sync {{\n    void run(Params p) {{\n        for (int i = 0; i < 3; i++) {{\n            try {{\n                {call};\n                return;\n            }} catch (IOException e) {{\n                sleep(1000L * (i + 1));\n            }}\n        }}\n    }}\n}}\n")
        };
        let base_java = "class Sync {\n    void run(Params p) {\n    }\n}\n";
        assert!(errors(&scan(
            "src/Sync.java",
            base_java,
            &java("RequestBody body = RequestBody.create(json, JSON)")
        ))
        .is_empty());
        let stripe = |s: String| format!("import com.stripe.model.Customer;\n\n{s}");
        assert!(errors(&scan(
            "src/Sync.java",
            &stripe(base_java.to_string()),
            &stripe(java("Customer.create(p)"))
        ))
        .contains(&compare::NEW_WRITE));
    }

    #[test]
    fn a_flag_the_failure_path_sets_and_a_leaving_test_reads_bounds_the_retry() {
        let base = "import requests\n\ndef fetch(u):\n    return requests.get(u)\n";
        // Once: the except arm sets the flag, the next failure raises.
        let once = "import requests\n\ndef fetch(u):\n    retried = False\n    while True:\n        try:\n            return requests.get(u)\n        except requests.ConnectionError:\n            if retried:\n                raise\n            retried = True\n";
        let f = scan("app/f.py", base, once);
        assert!(!errors(&f).contains(&compare::NEW_UNBOUNDED), "{f:#?}");
        // A flag the failure path sets that no leaving test reads is no
        // bound: the failures go round forever.
        let forever = "import requests, time, logging\n\ndef fetch(u):\n    warned = False\n    while True:\n        try:\n            return requests.get(u)\n        except requests.ConnectionError:\n            if not warned:\n                logging.warning('retrying %s', u)\n            warned = True\n            time.sleep(1)\n";
        let f = scan("app/f.py", base, forever);
        assert!(errors(&f).contains(&compare::NEW_UNBOUNDED), "{f:#?}");
    }

    #[test]
    fn a_self_call_that_passes_a_flag_is_bounded() {
        let base = "import requests\n\nclass S:\n    def call(self, b, retried=False):\n        return requests.post(self.url, json=b)\n";
        let head = |again: &str| {
            format!("import requests\n\nclass S:\n    def call(self, b, retried=False):\n        try:\n            return requests.post(self.url, json=b)\n        except requests.ConnectionError:\n            self.reset()\n            return {again}\n")
        };
        let f = scan("app/s.py", base, &head("self.call(b, retried=True)"));
        assert!(!errors(&f).contains(&compare::NEW_UNBOUNDED), "{f:#?}");
        let f = scan("app/s.py", base, &head("self.call(b)"));
        assert!(errors(&f).contains(&compare::NEW_UNBOUNDED), "{f:#?}");
    }

    #[test]
    fn a_go_loop_is_bounded_by_a_select_case_that_leaves_on_a_deadline_not_by_its_sleep() {
        let base = "package dep\n\nfunc (c *Client) Wait(ctx context.Context, name string) error {\n\t_, err := c.http.Get(c.base + \"/deployments/\" + name)\n\treturn err\n}\n";
        let head = |setup: &str, case: &str| {
            format!("package dep\n\nfunc (c *Client) Wait(ctx context.Context, name string) error {{\n{setup}\tfor {{\n\t\t_, err := c.http.Get(c.base + \"/deployments/\" + name)\n\t\tif err != nil {{\n\t\t\tselect {{\n\t\t\tcase {case}:\n\t\t\t\treturn fmt.Errorf(\"waiting for %s: %w\", name, err)\n\t\t\tcase <-time.After(500 * time.Millisecond):\n\t\t\t}}\n\t\t\tcontinue\n\t\t}}\n\t\treturn nil\n\t}}\n}}\n")
        };
        let deadline = head(
            "\tctx, cancel := context.WithTimeout(ctx, 30*time.Second)\n\tdefer cancel()\n",
            "<-ctx.Done()",
        );
        let f = scan("dep/wait.go", base, &deadline);
        assert!(!errors(&f).contains(&compare::NEW_UNBOUNDED), "{f:#?}");
        // The caller's context alone: retried until someone cancels it (the
        // `time.After` case is the sleep, it does not leave).
        let f = scan("dep/wait.go", base, &head("", "<-ctx.Done()"));
        assert!(errors(&f).contains(&compare::NEW_UNBOUNDED), "{f:#?}");
    }

    #[test]
    fn a_nested_function_under_a_retry_decorator_or_one_held_in_a_name_retries_its_body() {
        let base = "import httpx\n\n\ndef evaluate(slug, data):\n    params = {'url': f'https://app/api/{slug}', 'json': data}\n    try:\n        with httpx.Client(timeout=900) as client:\n            response = client.post(**params)\n    except Exception as e:\n        return handle(e)\n    return response.json()\n";
        let head = |held: &str, deco: &str| {
            format!("import httpx\nfrom tenacity import retry, stop_after_attempt, wait_random\n{held}\n\ndef evaluate(slug, data):\n    params = {{'url': f'https://app/api/{{slug}}', 'json': data}}\n\n    {deco}\n    def _post():\n        with httpx.Client(timeout=900) as client:\n            return client.post(**params)\n\n    try:\n        response = _post()\n    except Exception as e:\n        return handle(e)\n    return response.json()\n")
        };
        let direct =
            scan("app/ev.py", base, &head("", "@retry(stop=stop_after_attempt(3), wait=wait_random(0, 1))"));
        let w = direct.iter().find(|f| f.rule == compare::NEW_WRITE).expect("the nested retry is seen");
        assert_eq!(
            w.severity,
            crate::finding::Severity::Error,
            "the outer function is the base's: {direct:#?}"
        );
        let held = scan(
            "app/ev.py",
            base,
            &head(
                "\n_retry_call = retry(stop=stop_after_attempt(3), wait=wait_random(0, 1))\n",
                "@_retry_call",
            ),
        );
        assert!(errors(&held).contains(&compare::NEW_WRITE), "{held:#?}");
        // A name bound to something else is no retry.
        let other = scan(
            "app/ev.py",
            base,
            &head("\n_retry_call = functools.lru_cache(maxsize=1)\n", "@_retry_call"),
        );
        assert!(errors(&other).is_empty(), "{other:#?}");
    }

    #[test]
    fn a_counted_loop_with_a_failure_arm_that_does_not_count_is_unbounded() {
        let base =
            "import requests\n\ndef upload(batch, max_retries=3):\n    requests.put(URL, json=batch)\n";
        let head = |limited: &str| {
            format!("import requests, time\n\ndef upload(batch, max_retries=3):\n    attempt = 0\n    while attempt < max_retries:\n        try:\n            requests.put(URL, json=batch)\n            break\n        except RateLimited as ex:\n            time.sleep(ex.retry_after_s){limited}\n        except Exception as e:\n            if attempt == max_retries - 1:\n                raise e\n            attempt += 1\n")
        };
        let f = scan("app/up.py", base, &head(""));
        assert!(errors(&f).contains(&compare::NEW_UNBOUNDED), "{f:#?}");
        // Counted in every arm: bounded.
        let f = scan("app/up.py", base, &head("\n            attempt += 1"));
        assert!(!errors(&f).contains(&compare::NEW_UNBOUNDED), "{f:#?}");
        // A limit given by the caller, not computed here.
        let f = scan(
            "app/up.py",
            &base.replace("max_retries=3", "max_retries"),
            &head("").replace("max_retries=3", "max_retries"),
        );
        assert!(errors(&f).contains(&compare::NEW_UNBOUNDED), "{f:#?}");
    }
}
