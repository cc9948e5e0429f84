//! What the operation model knows about calls and retry libraries, read
//! from `rules/operations/model.yml` (embedded at build time): HTTP method words,
//! senders, write verbs, idempotency-key spellings and the library forms
//! that retry the code they are given.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::Deserialize;

/// The bundled data file.
const TEXT: &str = include_str!("../../../rules/operations/model.yml");

/// Everything in `rules/operations/model.yml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Data {
    pub(crate) http_methods: HttpMethods,
    pub(crate) senders: Vec<Sender>,
    pub(crate) write_verbs: Vec<String>,
    /// First words of a call name that read, sent to a client or SDK.
    pub(crate) read_verbs: Vec<String>,
    pub(crate) local_objects: Vec<String>,
    pub(crate) computations: Vec<String>,
    /// Words of a receiver that say it leaves the process (a client, a
    /// connection, a producer, a known service's SDK): a write verb called
    /// on one is a remote write; on any other receiver it is a write by its
    /// name alone.
    pub(crate) remote_receivers: Vec<String>,
    pub(crate) local_receivers: Vec<String>,
    /// Standard-library modules and types: their write-named calls stay in
    /// the process or on its disk.
    pub(crate) stdlib_receivers: Vec<String>,
    pub(crate) idempotency_key: Vec<String>,
    pub(crate) wrappers: Vec<Wrapper>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HttpMethods {
    pub(crate) idempotent: Vec<String>,
    pub(crate) write: Vec<String>,
}

/// Calls that send a request whose method is an argument.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Sender {
    pub(crate) names: Vec<String>,
    /// `GET`, or `unknown`.
    pub(crate) default: String,
    /// Words one of which the receiver must contain; none: any receiver.
    #[serde(default)]
    pub(crate) receiver: Vec<String>,
}

/// A library form that retries the code it is given.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Wrapper {
    pub(crate) library: String,
    /// Where its facts come from (checked present by the data's test).
    #[serde(rename = "source")]
    pub(crate) _source: String,
    pub(crate) languages: Vec<String>,
    pub(crate) form: Vec<String>,
    pub(crate) names: Vec<String>,
    pub(crate) attempts: AttemptsSpec,
    pub(crate) jitter: JitterSpec,
    pub(crate) conditions: ConditionsSpec,
    /// `file` when the policy is built apart from where it runs the code
    /// (a Polly policy field): jitter and conditions are read in the file.
    #[serde(default)]
    pub(crate) scope: Option<String>,
    /// A client-wide policy (`form: [client]`): the requests it retries
    /// when nothing says otherwise, `every` method or only `idempotent`
    /// ones.
    #[serde(default)]
    pub(crate) methods: Option<String>,
    /// Words in its own call that make a client-wide policy
    /// retry every method (`allowed_methods=None`).
    #[serde(default)]
    pub(crate) methods_every: Vec<String>,
    /// Words that keep a client-wide policy to idempotent methods
    /// (`DisableForUnsafeHttpMethods()`).
    #[serde(default)]
    pub(crate) methods_idempotent: Vec<String>,
    /// Receivers whose requests do not go through any client a policy is
    /// installed on (a plain library's module-level functions).
    #[serde(default)]
    pub(crate) bypass: Vec<String>,
    /// Words one of which the file must contain for a name to be this
    /// library's (`Retry(` is urllib3's only where urllib3 is imported).
    #[serde(default)]
    pub(crate) uses: Vec<String>,
    /// Whether the operation model compares its count and jitter between
    /// base and head: the libraries no file of `rules/libraries/` describes.
    #[serde(default)]
    pub(crate) compare_settings: bool,
    /// Words one of which the call itself must contain (`request :retry`,
    /// not `request :json`).
    #[serde(default)]
    pub(crate) site: Vec<String>,
    /// Calls that derive the retrying client a project sends through
    /// (`StandardClient`): only what they return is covered; the library's
    /// own calls are its library file's to judge.
    #[serde(default)]
    pub(crate) through: Vec<String>,
    /// The client it configures cannot be told from its line (a builder
    /// block's middleware): it covers every request of its file.
    #[serde(default)]
    pub(crate) unbound: bool,
    /// The policy is installed on the client given as its first argument
    /// (`axiosRetry(api, {..})`), which is the client it covers.
    #[serde(default)]
    pub(crate) on_first_argument: bool,
    /// `form: [class]`: the method the framework runs for the class, which
    /// the class-level declaration retries (a job's `perform`, `handle`).
    #[serde(default)]
    pub(crate) runs: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AttemptsSpec {
    /// Fields whose value is the number of attempts, set where the policy
    /// is built or anywhere in the file (client-go's `wait.Backoff{Steps: 5}`).
    #[serde(default)]
    pub(crate) attempt_fields: Vec<String>,
    /// Calls whose first computable argument is the count.
    #[serde(default)]
    pub(crate) calls: Vec<String>,
    /// The same calls anywhere in the file (a policy built apart).
    #[serde(default)]
    pub(crate) calls_in_file: Vec<String>,
    /// Options whose value is the number of attempts.
    #[serde(default)]
    pub(crate) options: Vec<String>,
    /// Options whose value is the number of retries (one attempt more).
    #[serde(default)]
    pub(crate) retry_options: Vec<String>,
    /// Whether the `calls` count retries rather than attempts.
    #[serde(default)]
    pub(crate) retries_call: bool,
    /// The positional argument that is the count.
    #[serde(default)]
    pub(crate) positional: Option<usize>,
    /// Whether the positional count counts retries (one attempt more).
    #[serde(default)]
    pub(crate) positional_retries: bool,
    /// Fields assigned a count of retries in the enclosing function, after
    /// the client is built (`c.RetryMax = 5`, `RetryMax: 5`).
    #[serde(default)]
    pub(crate) retry_fields: Vec<String>,
    /// Words in the arguments that mean no bound.
    #[serde(default)]
    pub(crate) unbounded: Vec<String>,
    /// Words in the enclosing function that mean no bound.
    #[serde(default)]
    pub(crate) unbounded_in_function: Vec<String>,
    /// Words in the file that mean no bound.
    #[serde(default)]
    pub(crate) unbounded_in_file: Vec<String>,
    /// Words in the arguments that bound it by time.
    #[serde(default)]
    pub(crate) deadline: Vec<String>,
    /// What a count of 0 means: `unlimited`, or nothing said.
    #[serde(default)]
    pub(crate) zero: Option<String>,
    /// The count when none is written: a number, `unlimited` or `bounded`.
    pub(crate) default: serde_yaml::Value,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct JitterSpec {
    #[serde(default)]
    pub(crate) on: Vec<String>,
    #[serde(default)]
    pub(crate) off: Vec<String>,
    /// Pairs `[word, unless]`: the first written without the second
    /// jitters (Spring's `maxDelay` without `multiplier`).
    #[serde(default)]
    pub(crate) on_without: Vec<Vec<String>>,
    pub(crate) default: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConditionsSpec {
    #[serde(default)]
    pub(crate) options: Vec<String>,
    #[serde(default)]
    pub(crate) positional: Option<usize>,
    /// Calls whose text says what it retries on (`RetryIf(..)`,
    /// Polly's `Handle<..>()`).
    #[serde(default)]
    pub(crate) calls: Vec<String>,
    /// A form's name that fixes what it retries on (`RetryOnConflict`).
    #[serde(default)]
    pub(crate) names: BTreeMap<String, String>,
    /// Fields set in the function that builds it whose value says what it
    /// retries on (go-retryablehttp's `c.CheckRetry = ..`, the .NET
    /// handler's `o.Retry.ShouldHandle = ..`): the value's text is read.
    #[serde(default)]
    pub(crate) fields: Vec<String>,
    /// Names of the library's own predicates, with the failures each
    /// retries on (`DefaultRetryPolicy: "refused, reset, timeout, 500, 429"`).
    #[serde(default)]
    pub(crate) words: BTreeMap<String, String>,
    /// Failures it retries on whatever the options say (urllib3 re-sends
    /// after a refused connection always, after a read error unless
    /// `read=0`): each unless its `off` text is in the call.
    #[serde(default)]
    pub(crate) also: Vec<AlsoSpec>,
    /// Calls in the retried code that end the retry with the failure they
    /// are given (cenkalti's `backoff.Permanent(err)`, async-retry's
    /// `bail(err)`): the failures a branch hands to one are not retried.
    #[serde(default)]
    pub(crate) stops: Vec<String>,
    /// Calls that mark a failure as one to retry, all others ending the
    /// retry (sethvargo/go-retry's `retry.RetryableError(err)`).
    #[serde(default)]
    pub(crate) marks: Vec<String>,
    pub(crate) default: String,
}

/// One entry of [`ConditionsSpec::also`].
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AlsoSpec {
    pub(crate) on: String,
    #[serde(default)]
    pub(crate) off: Option<String>,
}

impl Wrapper {
    /// Whether a file's text says it uses this library (`uses`), or the
    /// library needs no such word.
    pub(crate) fn used_in(&self, text: &str) -> bool {
        self.uses.is_empty() || self.uses.iter().any(|u| text.contains(u.as_str()))
    }

    /// Whether `callee` (as written, whitespace removed) names this form:
    /// the whole callee, or its last segment when the name has one segment.
    pub(crate) fn names_callee(&self, callee: &str) -> bool {
        let last = super::syntax::last_segment(callee);
        self.names.iter().any(|n| {
            n == callee
                || (!n.contains('.') && n == last && !self.claimed_by_another(callee))
                || self.names_qualified(n, callee)
        })
    }

    /// Whether a dotted name of this wrapper names `callee` (`stamina.retry`).
    fn names_qualified(&self, n: &str, callee: &str) -> bool {
        n.contains('.') && (callee.ends_with(&format!(".{n}")) || super::syntax::last_two(callee) == n)
    }

    /// Whether another library names `callee` by its qualified name: then
    /// a bare name of this one (tenacity's `retry`) is not what
    /// `stamina.retry` calls.
    fn claimed_by_another(&self, callee: &str) -> bool {
        DATA.as_ref().is_ok_and(|d| {
            d.wrappers
                .iter()
                .any(|w| w.library != self.library && w.names.iter().any(|n| w.names_qualified(n, callee)))
        })
    }
}

/// The data, parsed once. The file is part of the build and its test
/// checks it parses, so a failure here is a broken build, said as such.
pub(crate) static DATA: LazyLock<Result<Data, String>> = LazyLock::new(|| {
    crate::yaml::check(TEXT).map_err(|e| format!("rules/operations/model.yml: {e}")).and_then(|()| {
        serde_yaml::from_str::<Data>(TEXT).map_err(|e| format!("rules/operations/model.yml: {e}"))
    })
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_data_parses_and_every_wrapper_says_its_source() {
        let data = DATA.as_ref().unwrap();
        assert!(data.wrappers.len() >= 10);
        for w in &data.wrappers {
            assert!(!w._source.is_empty() && !w.names.is_empty(), "{}", w.library);
            for f in &w.form {
                assert!(
                    ["decorator", "annotation", "call", "block", "iterator", "chain", "client", "class"]
                        .contains(&f.as_str()),
                    "{}: unknown form {f}",
                    w.library
                );
            }
        }
        assert!(data.write_verbs.iter().any(|v| v == "create"));
        // A client-wide policy says which methods it retries.
        for w in data.wrappers.iter().filter(|w| w.form.iter().any(|f| f == "client")) {
            assert!(
                matches!(w.methods.as_deref(), Some("every" | "idempotent")),
                "{}: a client form needs `methods: every` or `idempotent`",
                w.library
            );
        }
    }
}
