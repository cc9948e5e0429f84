//! The one model every front-end fills: the operations a file performs and
//! the retry that covers each of them. Nothing here knows a language.

use std::collections::BTreeSet;

/// What an operation does to the other side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Method {
    /// An HTTP read or an idempotent method (GET, HEAD, OPTIONS, PUT, DELETE).
    Idempotent(String),
    /// POST, PATCH, or an SDK/RPC call whose verb writes (`create`, `send`).
    Write(String),
    /// A request whose method could not be told from the code.
    Unknown,
}

impl Method {
    pub(crate) fn writes(&self) -> bool {
        matches!(self, Method::Write(_))
    }
}

/// A call that leaves the process.
#[derive(Debug, Clone)]
pub(crate) struct Operation {
    /// The function the call is written in (`Class.method`, `func`,
    /// `<module>`): with the callee and method, the operation's identity,
    /// which survives moves between lines and files.
    pub(crate) function: String,
    /// The callee as written, without whitespace (`requests.post`).
    pub(crate) callee: String,
    pub(crate) method: Method,
    pub(crate) path: String,
    pub(crate) line: u32,
    /// Whether an `Idempotency-Key` (any spelling) is sent with it.
    pub(crate) keyed: bool,
    /// Its per-attempt timeout, where the call or its function sets one
    /// the model computes (in the unit written).
    pub(crate) timeout: Option<f64>,
    /// Where that timeout is written.
    pub(crate) timeout_at: Option<(String, u32)>,
    /// A model call judged by its receiver's name (`chat.completions`):
    /// retrying it re-bills but repeats no side effect.
    pub(crate) computes: bool,
    /// A write judged by its verb alone: nothing about its receiver (a
    /// client's name or type, a known service) shows the call leaves the
    /// process. Said, not blocked on.
    pub(crate) named_only: bool,
    /// A request handed its method as a value (`session.request(method,
    /// url)`): when no caller in the files passes a method, it sends any
    /// method it is handed, and is judged a write.
    pub(crate) any_method: bool,
    /// The URL or path the call names as a string literal (its first
    /// argument that holds a `/`), when it names one.
    pub(crate) target: Option<String>,
}

impl Operation {
    /// The identity compared between base and head.
    pub(crate) fn key(&self) -> (String, String) {
        (self.function.clone(), self.callee.clone())
    }

    /// How a message names it: `POST requests.post in create_order`.
    pub(crate) fn show(&self) -> String {
        let m = match &self.method {
            Method::Idempotent(m) | Method::Write(m) => format!("{m} "),
            Method::Unknown => "a request of unknown method, ".to_string(),
        };
        format!("{m}`{}` in {}", self.callee, self.function)
    }
}

/// How many attempts a retry makes in all.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Attempts {
    Count(f64),
    /// Bounded by a count or a deadline the model could not compute.
    Bounded,
    Unbounded,
    /// Neither a bound nor its absence could be read.
    Unknown,
}

impl Attempts {
    pub(crate) fn show(self) -> String {
        match self {
            Attempts::Count(n) => format!("{} attempts", n as u64),
            Attempts::Bounded => "a bound retrygate could not compute".to_string(),
            Attempts::Unbounded => "no bound".to_string(),
            Attempts::Unknown => "an unread bound".to_string(),
        }
    }
}

/// The failures a retry fires on, by what they say about a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Condition {
    /// 429 or a throttling error: the server did not process the request.
    RateLimited,
    /// The connection was refused: nothing was sent.
    Refused,
    /// A conflict (409, optimistic locking): the write was rejected.
    Conflict,
    /// 401, 403 or 407: the server refused the request's credentials and
    /// did not act on it (a retry after refreshing a token).
    AuthRefused,
    /// A timeout: the write may have happened.
    Timeout,
    /// A reset or dropped connection: the write may have happened.
    Reset,
    /// A 5xx answer: the write may have happened.
    ServerError,
    /// Any failure.
    Any,
}

impl Condition {
    /// Whether a write may have been applied when this failure is seen.
    pub(crate) fn after_write(self) -> bool {
        matches!(self, Condition::Timeout | Condition::Reset | Condition::ServerError | Condition::Any)
    }

    pub(crate) fn word(self) -> &'static str {
        match self {
            Condition::RateLimited => "rate limiting",
            Condition::Refused => "refused connections",
            Condition::Conflict => "conflicts",
            Condition::AuthRefused => "refused credentials (401/403)",
            Condition::Timeout => "timeouts",
            Condition::Reset => "dropped connections",
            Condition::ServerError => "5xx answers",
            Condition::Any => "any failure",
        }
    }
}

/// The kind of code that retries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Form {
    /// A retry library's decorator, wrapper, annotation or option.
    Library(String),
    /// A loop whose failure path goes round again.
    Loop,
    /// A function that calls itself on failure.
    Recursion,
    /// A project's own function that retries the callable it is given.
    Helper(String),
}

impl Form {
    pub(crate) fn show(&self) -> String {
        match self {
            Form::Library(l) => format!("a {l} retry"),
            Form::Loop => "a retry loop".to_string(),
            Form::Recursion => "a function that calls itself on failure".to_string(),
            Form::Helper(h) => format!("the retrying helper `{h}`"),
        }
    }
}

/// One retry: where it is written and what it does.
#[derive(Debug, Clone)]
pub(crate) struct Retry {
    pub(crate) form: Form,
    /// The function the retry is written in, for its identity.
    pub(crate) function: String,
    pub(crate) path: String,
    pub(crate) line: u32,
    pub(crate) end_line: u32,
    pub(crate) attempts: Attempts,
    /// `None` when it could not be read.
    pub(crate) jitter: Option<bool>,
    pub(crate) conditions: BTreeSet<Condition>,
    /// Where the count was written, when it was followed to another place.
    pub(crate) count_at: Option<(String, u32)>,
    /// Whether the retried code reads the `Retry-After` header.
    pub(crate) reads_retry_after: bool,
    /// The lines of the function the retry is written in (a decorated
    /// function's whole definition): an edit there may change the retry.
    pub(crate) scope: (u32, u32),
    /// Where a project helper that does the retrying is defined, or the
    /// lines a library policy's settings were read from (its call, or the
    /// statement that builds a policy apart): an edit there changes it.
    pub(crate) origin: Option<(String, u32, u32)>,
    /// The helper parameter that holds the count, when the count is one.
    pub(crate) count_param: Option<usize>,
    /// The count's expression as written, while a helper is read.
    pub(crate) count_text: Option<String>,
    /// A loop bound the model could not compute, as a name and what is
    /// added to it (`range(self.max_retries + 1)`: `self.max_retries`,
    /// +1; `i <= n`: `n`, +1): the same name with more added is a raise
    /// whatever the name holds.
    pub(crate) bound_sym: Option<(String, f64)>,
}

impl Retry {
    /// Whether it fires on a failure after which a write may have happened.
    pub(crate) fn fires_after_write(&self) -> bool {
        self.conditions.is_empty() || self.conditions.iter().any(|c| c.after_write())
    }
}

/// An operation and the retries that re-run it (none: it runs once).
#[derive(Debug, Clone)]
pub(crate) struct Covered {
    pub(crate) op: Operation,
    pub(crate) retries: Vec<Retry>,
}
