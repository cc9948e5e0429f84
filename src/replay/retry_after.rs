//! The `Retry-After` header in both forms of RFC 9110 §10.2.3, as the replay
//! server writes it: the HTTP-date in each of the three formats a recipient
//! must accept (§5.6.7). Reading a header back into "wait N ms" or "wait
//! until this time" is [`crate::http::parse_retry_after`], re-exported here
//! as [`parse`].
//!
//! `httpdate` only writes IMF-fixdate, so the two obsolete formats are
//! rearranged from it here.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::scenario::DateFormat;

/// Reading a header back is shared with the GitHub client's own retries,
/// so it lives in [`crate::http`].
pub use crate::http::{parse_retry_after as parse, RetryAfter};

/// The last moment an HTTP-date can name (9999-12-31 23:59:59 UTC): its
/// year has four digits.
pub(crate) const LAST_HTTP_DATE_S: u64 = 253_402_300_799;

/// The HTTP-date for `ahead_s` seconds after `now`, rounded up to a whole
/// second so a client never has to come back earlier than `ahead_s`. A date
/// past year 9999 is written as the last one there is, never a panic.
pub(crate) fn date_ahead(now: SystemTime, ahead_s: u64, format: DateFormat) -> String {
    let since = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    let round_up = u64::from(since.subsec_nanos() > 0);
    let secs = since.as_secs().saturating_add(ahead_s).saturating_add(round_up).min(LAST_HTTP_DATE_S);
    format_date(UNIX_EPOCH + Duration::from_secs(secs), format)
}

/// Formats `t` (whole seconds) as an HTTP-date in `format`.
pub(crate) fn format_date(t: SystemTime, format: DateFormat) -> String {
    // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"
    let imf = httpdate::fmt_http_date(t);
    match format {
        DateFormat::ImfFixdate => imf,
        DateFormat::Rfc850 | DateFormat::Asctime => {
            let parts: Vec<&str> = imf.split(' ').collect();
            let [wd, day, mon, year, time, _gmt] = parts[..] else { return imf };
            let wd = wd.trim_end_matches(',');
            match format {
                // "Sunday, 06-Nov-94 08:49:37 GMT"
                DateFormat::Rfc850 => {
                    format!("{}, {day}-{mon}-{} {time} GMT", long_weekday(wd), &year[year.len() - 2..])
                }
                // "Sun Nov  6 08:49:37 1994"
                _ => format!("{wd} {mon} {:>2} {time} {year}", day.trim_start_matches('0')),
            }
        }
    }
}

fn long_weekday(short: &str) -> &'static str {
    match short {
        "Mon" => "Monday",
        "Tue" => "Tuesday",
        "Wed" => "Wednesday",
        "Thu" => "Thursday",
        "Fri" => "Friday",
        "Sat" => "Saturday",
        _ => "Sunday",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Sun, 06 Nov 1994 08:49:37 GMT, RFC 9110's own example.
    const T: u64 = 784_111_777;

    #[test]
    fn formats_all_three_date_forms() {
        let t = UNIX_EPOCH + Duration::from_secs(T);
        assert_eq!(format_date(t, DateFormat::ImfFixdate), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(format_date(t, DateFormat::Rfc850), "Sunday, 06-Nov-94 08:49:37 GMT");
        assert_eq!(format_date(t, DateFormat::Asctime), "Sun Nov  6 08:49:37 1994");
    }

    #[test]
    fn a_date_past_year_9999_is_the_last_one_not_a_panic() {
        let now = UNIX_EPOCH + Duration::from_millis(T * 1000 + 300);
        let d = date_ahead(now, i64::MAX as u64, DateFormat::ImfFixdate);
        assert_eq!(d, "Fri, 31 Dec 9999 23:59:59 GMT");
        assert_eq!(parse(&d), Some(RetryAfter::Until { unix_ms: LAST_HTTP_DATE_S * 1000 }));
        assert_eq!(date_ahead(now, u64::MAX, DateFormat::Asctime), "Fri Dec 31 23:59:59 9999");
    }

    #[test]
    fn date_ahead_rounds_up_to_a_whole_second() {
        let now = UNIX_EPOCH + Duration::from_millis(T * 1000 + 300);
        let d = date_ahead(now, 2, DateFormat::ImfFixdate);
        assert_eq!(parse(&d), Some(RetryAfter::Until { unix_ms: (T + 3) * 1000 }));
        let exact = UNIX_EPOCH + Duration::from_secs(T);
        let d = date_ahead(exact, 2, DateFormat::Asctime);
        assert_eq!(parse(&d), Some(RetryAfter::Until { unix_ms: (T + 2) * 1000 }));
    }
}
