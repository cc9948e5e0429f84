//! Durations written by people: the one parser of every seconds value, from
//! a flag (`--timeout`, `--replay-timeout`) or an environment variable
//! (`RETRYGATE_REQUEST_DEADLINE`, `RETRYGATE_PUBLISH_DEADLINE`), so they all accept and refuse the same text.

use std::time::Duration;

/// The longest time any `--timeout`-like value accepts: a day. A replay or a
/// replay command that needs longer is misconfigured, and larger numbers
/// (`1e20`) do not fit the clocks they are added to.
pub(crate) const MAX_TIMEOUT_SECS: f64 = 24.0 * 60.0 * 60.0;

/// Seconds as a decimal number, above 0 and at most [`MAX_TIMEOUT_SECS`].
/// `inf`, `NaN`, negative and absurd values are refused with a message that
/// says what to write instead (on the command line, a usage error: exit 2).
pub fn parse_seconds(text: &str) -> Result<Duration, String> {
    let secs: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number of seconds; write e.g. 60 or 2.5"))?;
    if !secs.is_finite() {
        return Err(format!("'{text}' is not a finite number of seconds; write e.g. 60 or 2.5"));
    }
    if secs <= 0.0 {
        return Err(format!("{text} seconds is not a duration; give a number above 0, e.g. 60"));
    }
    if secs > MAX_TIMEOUT_SECS {
        return Err(format!(
            "{text} seconds is more than the {MAX_TIMEOUT_SECS} seconds (one day) retrygate accepts; give a shorter timeout"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_accept_decimals_and_refuse_what_no_clock_holds() {
        assert_eq!(parse_seconds("60").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_seconds("0.25").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_seconds("86400").unwrap(), Duration::from_secs(86_400));
        for (bad, why) in [
            ("1e20", "more than the 86400 seconds (one day)"),
            ("1e19", "more than the 86400 seconds"),
            ("86400.5", "more than the 86400 seconds"),
            ("inf", "not a finite number"),
            ("NaN", "not a finite number"),
            ("-5", "not a duration"),
            ("0", "not a duration"),
            ("soon", "not a number of seconds"),
        ] {
            let err = parse_seconds(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }
}
