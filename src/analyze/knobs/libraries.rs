//! What each retry library means, as data: one YAML file per library under
//! `rules/libraries/` (compiled into the binary by `build.rs`, so adding a
//! library is adding a file and its fixtures, with no change here).
//!
//! A library file says, for the files that use the library:
//! - `counts`: the calls and options whose value is its attempt or retry
//!   count (`stop_after_attempt(n)`, `retries: n`), with the library's
//!   default when the option is not given;
//! - `unbounded`: the calls that mean "no limit" (`stop_never`);
//! - `jitter`: the constructors that jitter (`on`) and those that do not
//!   (`off`), and the options that switch it, with their defaults;
//! - `timeouts`: options that are its per-attempt or total timeout;
//! - `defaults`: each default with the version and the source it comes from.
//!
//! The settings these describe join the floor's own ([`super::extract`]):
//! the same pairing and the same decisions ([`super::compare`]), read as
//! retry settings whatever their names say.

use std::sync::LazyLock;

use serde::Deserialize;

use super::names::Knob;
use super::value::{self, Value};

/// The bundled library files, as `(path, YAML)`; written by `build.rs`.
pub(crate) const BUNDLED: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/libraries.rs"));

/// One library's file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Library {
    /// Its name, as users know it (`tenacity`, `p-retry`).
    pub(crate) library: String,
    /// Languages it is used from (`python`, `javascript`, `typescript`, `go`,
    /// `java`, `kotlin`, `ruby`, `csharp`, `php`, `rust`).
    pub(crate) languages: Vec<String>,
    /// Words one of which a file's code holds when it uses the library (an
    /// import path, a package or type name).
    pub(crate) uses: Vec<String>,
    /// Where the facts below come from.
    pub(crate) source: String,
    #[serde(default)]
    pub(crate) counts: Vec<Entry>,
    #[serde(default)]
    pub(crate) unbounded: Vec<Entry>,
    #[serde(default)]
    pub(crate) jitter: Option<Jitter>,
    #[serde(default)]
    pub(crate) timeouts: Vec<Entry>,
    /// The options that say which HTTP methods are retried: a value of
    /// none (`None`, `null`, `nil`) means every method, a list that names
    /// POST or PATCH retries writes; `default: idempotent` says that
    /// leaving the option out retries only idempotent methods. A `call`
    /// entry is a request the library builds or sends and retries whatever
    /// its method (a library with no method filter): the method is the
    /// argument at `arg`, or `default` when the call fixes it (`Post`), and
    /// `within` names the qualifiers the call is written with
    /// (`retryablehttp.NewRequest`, not `http.NewRequest`). Read by the
    /// syntax-tree analyzer ([`crate::analyze::trees`]).
    #[serde(default)]
    pub(crate) methods: Vec<Entry>,
    #[serde(default)]
    pub(crate) defaults: Vec<Default>,
}

/// A call or an option that carries a setting.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Entry {
    /// A call whose argument is the value (`stop_after_attempt`), by the
    /// callee's last part.
    #[serde(default)]
    pub(crate) call: Option<String>,
    /// The argument's position (0-based) for `call`.
    #[serde(default)]
    pub(crate) arg: usize,
    /// An option (keyword argument, object or struct entry, setter) by name.
    #[serde(default)]
    pub(crate) option: Option<String>,
    /// Only inside these calls or holders (by last part), for `option`.
    #[serde(default)]
    pub(crate) within: Vec<String>,
    /// What the library does when the option is not given, as written in
    /// code (`10`, `true`, `unlimited`); see `defaults` for its source.
    #[serde(default)]
    pub(crate) default: Option<String>,
    /// The option this one is another spelling of (Spring's
    /// `maxAttemptsExpression` sets what `maxAttempts` does): both share
    /// one identity, so switching from one to the other compares values.
    #[serde(default)]
    pub(crate) same_as: Option<String>,
    /// What a value of 0 means when it is not a count of 0: `unlimited`
    /// (Temporal's `MaximumAttempts: 0`, retry-go's `Attempts(0)`).
    #[serde(default)]
    pub(crate) zero: Option<String>,
}

impl Entry {
    /// `v` as the library reads it: 0 is no limit where the library says so.
    pub(crate) fn meaning(&self, v: Value) -> Value {
        match (&v, self.zero.as_deref()) {
            (Value::Num { v: n, .. }, Some("unlimited")) if *n == 0.0 => Value::Unlimited,
            _ => v,
        }
    }
}

/// The library's jitter, by constructor and by option.
#[derive(Debug, Clone, Deserialize, std::default::Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct Jitter {
    /// Calls or names that make a jittered wait.
    #[serde(default)]
    pub(crate) on: Vec<String>,
    /// Calls or names that make a wait with no jitter.
    #[serde(default)]
    pub(crate) off: Vec<String>,
    /// Options whose value switches jitter (a boolean, a factor, a mode).
    #[serde(default)]
    pub(crate) options: Vec<Entry>,
}

/// A default, with where it comes from.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Default {
    /// The setting (`attempts`, `jitter`, `retries`, ...).
    pub(crate) setting: String,
    /// Its value when not given.
    pub(crate) value: String,
    /// The versions it holds for.
    pub(crate) version: String,
    /// The documentation or source file it comes from.
    pub(crate) source: String,
}

impl Library {
    /// Whether a file in `language` whose code holds `text` uses this library.
    pub(crate) fn used_by(&self, language: &str, text: &str) -> bool {
        self.languages.iter().any(|l| l == language) && self.uses.iter().any(|u| text.contains(u.as_str()))
    }

    /// Every entry with the knob it sets.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (Knob, &Entry)> {
        let jitter = self.jitter.iter().flat_map(|j| j.options.iter());
        self.counts
            .iter()
            .map(|e| (Knob::Count, e))
            .chain(self.unbounded.iter().map(|e| (Knob::Count, e)))
            .chain(jitter.map(|e| (Knob::Jitter, e)))
            .chain(self.timeouts.iter().map(|e| (Knob::Timeout, e)))
    }

    /// The key settings of `knob` share in this library, so that a count
    /// call and an unbounded call pair with each other.
    pub(crate) fn key(&self, knob: Knob, e: &Entry) -> String {
        // Calls that set a count share one key (`stop_after_attempt(5)` and
        // `stop_never` are two values of one setting); options are each their own.
        let what = match (&e.option, knob) {
            (Some(o), _) => e.same_as.clone().unwrap_or_else(|| o.clone()),
            (None, Knob::Count) => "attempts".to_string(),
            (None, _) => e.call.clone().unwrap_or_default(),
        };
        format!("{}.{}", self.library, what)
    }
}

impl Library {
    /// Where `e`'s default comes from: the `defaults` entry of its name,
    /// else the file's `source`.
    pub(crate) fn default_source(&self, e: &Entry) -> String {
        let name = e.option.as_deref().or(e.call.as_deref()).unwrap_or("");
        match self.defaults.iter().find(|d| d.setting == name || d.setting.ends_with(&format!(".{name}"))) {
            Some(d) => format!("{} {}: {}, {}", self.library, d.version, d.value, d.source),
            None => self.source.clone(),
        }
    }
}

/// `e.default` as a value, for comparing a newly given option with it.
pub(crate) fn default_value(e: &Entry) -> Option<Value> {
    e.default.as_deref().map(value::from_text)
}

/// A problem with a library file, naming it.
pub(crate) fn load(path: &str, text: &str) -> Result<Library, String> {
    crate::yaml::check(text).map_err(|r| format!("{path}: {r}"))?;
    let lib: Library = serde_yaml::from_str(text).map_err(|e| {
        let at = e.location().map(|l| format!(":{}", l.line())).unwrap_or_default();
        format!("{path}{at}: {e}; see CONTRIBUTING.md, \"Adding a retry library\"")
    })?;
    let check = |e: &Entry, what: &str| -> Result<(), String> {
        match (&e.call, &e.option) {
            (Some(_), None) | (None, Some(_)) => Ok(()),
            _ => Err(format!("{path}: each {what} entry names exactly one of `call` or `option`")),
        }
    };
    for e in lib.counts.iter().chain(&lib.unbounded) {
        check(e, "counts/unbounded")?;
    }
    for e in lib.jitter.iter().flat_map(|j| &j.options) {
        check(e, "jitter.options")?;
    }
    for e in &lib.timeouts {
        check(e, "timeouts")?;
    }
    for e in &lib.methods {
        check(e, "methods")?;
        if e.call.is_some() && e.within.is_empty() {
            return Err(format!(
                "{path}: a methods `call` entry names the qualifiers it is written with in `within` (`within: [retryablehttp]`), so that another package's call of the same name is not read as the library's"
            ));
        }
    }
    if lib.uses.is_empty() || lib.languages.is_empty() {
        return Err(format!("{path}: `uses` and `languages` must each name at least one"));
    }
    Ok(lib)
}

/// The bundled libraries. A bundled file that does not load is a build
/// defect the unit test below catches; at run time it is left out with
/// its reason, never guessed at.
pub(crate) static LIBRARIES: LazyLock<(Vec<Library>, Vec<String>)> = LazyLock::new(|| {
    let mut libs = Vec::new();
    let mut errors = Vec::new();
    for (path, text) in BUNDLED {
        match load(path, text) {
            Ok(l) => libs.push(l),
            Err(e) => errors.push(e),
        }
    }
    (libs, errors)
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_library_loads() {
        assert!(!BUNDLED.is_empty());
        assert!(LIBRARIES.1.is_empty(), "{:?}", LIBRARIES.1);
        assert_eq!(LIBRARIES.0.len(), BUNDLED.len());
    }

    #[test]
    fn a_bad_file_is_refused_with_its_name_and_line() {
        let e = load(
            "rules/libraries/x.yml",
            "library: x\nlanguages: [python]\nuses: [x]\nsource: s\nbogus: 1\n",
        )
        .unwrap_err();
        assert!(e.starts_with("rules/libraries/x.yml"), "{e}");
        assert!(e.contains("bogus"), "{e}");
        let e = load(
            "l.yml",
            "library: x\nlanguages: [python]\nuses: [x]\nsource: s\ncounts: [{call: a, option: b}]\n",
        )
        .unwrap_err();
        assert!(e.contains("exactly one of `call` or `option`"), "{e}");
        let e = load("l.yml", "library: x\nlanguages: []\nuses: [x]\nsource: s\n").unwrap_err();
        assert!(e.contains("at least one"), "{e}");
        let e = load(
            "l.yml",
            "library: x\nlanguages: [go]\nuses: [x]\nsource: s\nmethods: [{call: NewRequest}]\n",
        )
        .unwrap_err();
        assert!(e.contains("names the qualifiers it is written with in `within`"), "{e}");
    }
}
