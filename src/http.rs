//! HTTP details that both the GitHub client ([`crate::github`]) and the 429
//! replay ([`crate::replay`]) need, written once here so that neither has to
//! depend on the other: reading a `Retry-After` header, and percent-encoding
//! the parts of a URL.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// What a `Retry-After` value asks for (RFC 9110 §10.2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryAfter {
    /// delay-seconds: wait this long after the response.
    Delay(Duration),
    /// HTTP-date: do not come back before this moment (Unix ms).
    Until {
        /// The moment, in milliseconds since the Unix epoch.
        unix_ms: u64,
    },
}

impl RetryAfter {
    /// How long to wait from `now`: the delay itself, or the time left until
    /// the date (zero for a date already past).
    pub(crate) fn wait_from(self, now: SystemTime) -> Duration {
        match self {
            RetryAfter::Delay(d) => d,
            RetryAfter::Until { unix_ms } => {
                let now_ms = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_millis();
                Duration::from_millis(
                    u64::try_from(u128::from(unix_ms).saturating_sub(now_ms)).unwrap_or(u64::MAX),
                )
            }
        }
    }
}

/// Parses a `Retry-After` value, surrounding white space ignored.
///
/// - delay-seconds is `1*DIGIT` (RFC 9110); a leading `+` is taken too,
///   because the GitHub client always read it with Rust's integer parser,
///   which takes one. A number too large for `u64` is the longest wait there
///   is, not "no answer": a server that says "much later" must not be
///   retried sooner.
/// - anything else must be an HTTP-date in one of the three formats a
///   recipient must accept (IMF-fixdate, rfc850, asctime; RFC 9110 §5.6.7).
///
/// `None` for anything else (a fraction, a sign other than one `+`, words).
pub fn parse_retry_after(value: &str) -> Option<RetryAfter> {
    let v = value.trim();
    let digits = v.strip_prefix('+').unwrap_or(v);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        let secs = digits.parse::<u64>().unwrap_or(u64::MAX);
        return Some(RetryAfter::Delay(Duration::from_secs(secs)));
    }
    let t = httpdate::parse_http_date(v).ok()?;
    let unix_ms = t.duration_since(UNIX_EPOCH).ok()?.as_millis();
    Some(RetryAfter::Until { unix_ms: u64::try_from(unix_ms).unwrap_or(u64::MAX) })
}

/// Bytes kept as they are in a query value or a single path segment: RFC
/// 3986's unreserved set (letters, digits, `-`, `.`, `_`, `~`).
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// The unreserved set and `/`: a repository path keeps its directories.
const PATH: &AsciiSet = &COMPONENT.remove(b'/');

/// Percent-encodes one URL component (a query value, a login in a route):
/// every byte outside the unreserved set, `/` included, as `%XX`.
pub(crate) fn encode_component(s: &str) -> String {
    utf8_percent_encode(s, COMPONENT).to_string()
}

/// Percent-encodes a repository-relative path for a URL, keeping `/`:
/// spaces, `%`, `#`, `?` and non-ASCII bytes become `%XX`, so the path
/// resolves to the same file on every viewer.
pub fn encode_path(s: &str) -> String {
    utf8_percent_encode(s, PATH).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Sun, 06 Nov 1994 08:49:37 GMT, RFC 9110's own example.
    const T: u64 = 784_111_777;

    #[test]
    fn delay_seconds_with_white_space_and_a_plus_sign() {
        assert_eq!(parse_retry_after("1"), Some(RetryAfter::Delay(Duration::from_secs(1))));
        assert_eq!(parse_retry_after(" 120 "), Some(RetryAfter::Delay(Duration::from_secs(120))));
        assert_eq!(parse_retry_after("0"), Some(RetryAfter::Delay(Duration::ZERO)));
        assert_eq!(parse_retry_after("+5"), Some(RetryAfter::Delay(Duration::from_secs(5))));
    }

    #[test]
    fn all_three_date_forms_name_the_same_instant() {
        for v in
            ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"]
        {
            assert_eq!(parse_retry_after(v), Some(RetryAfter::Until { unix_ms: T * 1000 }), "{v}");
        }
    }

    #[test]
    fn garbage_is_no_answer() {
        for bad in
            ["", "   ", "1.5", "-1", "+", "++1", "+-1", "1 2", "soon", "Sun, 06 Nov 1994", "0x10", "١٢"]
        {
            assert_eq!(parse_retry_after(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_huge_delay_is_the_longest_wait_not_no_answer() {
        assert_eq!(
            parse_retry_after("18446744073709551615"),
            Some(RetryAfter::Delay(Duration::from_secs(u64::MAX)))
        );
        let huge = "9".repeat(400);
        assert_eq!(parse_retry_after(&huge), Some(RetryAfter::Delay(Duration::from_secs(u64::MAX))));
        assert_eq!(
            parse_retry_after("Fri, 31 Dec 9999 23:59:59 GMT"),
            Some(RetryAfter::Until { unix_ms: 253_402_300_799_000 })
        );
    }

    #[test]
    fn wait_from_counts_to_the_date_and_never_below_zero() {
        let now = UNIX_EPOCH + Duration::from_secs(T);
        let at = |s: u64| RetryAfter::Until { unix_ms: s * 1000 };
        assert_eq!(at(T + 5).wait_from(now), Duration::from_secs(5));
        assert_eq!(at(T - 5).wait_from(now), Duration::ZERO);
        assert_eq!(RetryAfter::Delay(Duration::from_secs(7)).wait_from(now), Duration::from_secs(7));
        assert_eq!(
            RetryAfter::Until { unix_ms: u64::MAX }.wait_from(now).as_millis(),
            u128::from(u64::MAX - T * 1000)
        );
    }

    #[test]
    fn a_component_keeps_only_the_unreserved_set() {
        assert_eq!(encode_component("tool-ledger_v2.~x"), "tool-ledger_v2.~x");
        assert_eq!(encode_component("tool ledger/v2&x"), "tool%20ledger%2Fv2%26x");
        assert_eq!(encode_component("claude[bot]"), "claude%5Bbot%5D");
        assert_eq!(encode_component("é%"), "%C3%A9%25");
    }

    #[test]
    fn a_path_keeps_its_slashes() {
        assert_eq!(encode_path("src/a b/#1?.rs"), "src/a%20b/%231%3F.rs");
        assert_eq!(encode_path("docs/ré sumé.md"), "docs/r%C3%A9%20sum%C3%A9.md");
        assert_eq!(encode_path("plain/path-1_2.~rs"), "plain/path-1_2.~rs");
    }
}
