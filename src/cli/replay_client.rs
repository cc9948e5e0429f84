//! Built-in example clients, so the demo and the tests can replay known
//! behaviours from the binary alone (`retrygate replay-client --profile P`,
//! a hidden subcommand; the URL comes from `$RETRYGATE_URL`).
//!
//! | profile | retries | wait | Retry-After | POST |
//! |---|---|---|---|---|
//! | `storm` | 6 | constant 10 ms | ignored | retried blindly |
//! | `calm` | 2 | 50-250 ms jitter | ignored | retried blindly |
//! | `compliant` | 4 | exactly Retry-After, else 0.5 s x 2^k | honoured, no jitter | never retried |
//! | `reference` | 4 | Retry-After + jitter on top, else full jitter | honoured | retried with one Idempotency-Key |
//!
//! `storm` and `calm` are the postmortem's two clients; `compliant` is what
//! mainstream libraries do (correct alone, lockstep as a fleet); `reference`
//! is what retrygate asks for. Plain blocking HTTP/1.1 over a `TcpStream`
//! with `Connection: close`: the replay server is on loopback and these
//! clients need nothing more.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};

use retrygate::replay::retry_after::{self, RetryAfter};

use super::Exit;

/// The behaviours on offer; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Profile {
    Storm,
    Calm,
    Compliant,
    Reference,
}

/// `retrygate replay-client`.
#[derive(Debug, clap::Args)]
pub(crate) struct ClientArgs {
    /// Which behaviour to play.
    #[arg(long, value_enum, default_value = "reference")]
    pub profile: Profile,
    /// The request method.
    #[arg(long, default_value = "GET")]
    pub method: String,
    /// Base URL (set by `retrygate replay`).
    #[arg(long, env = "RETRYGATE_URL")]
    pub url: String,
    /// Path appended to the URL (default `/orders` for POST/PATCH, `/items` otherwise).
    #[arg(long)]
    pub path: Option<String>,
    /// Send no Idempotency-Key with POST/PATCH (the reference client then does not retry them).
    #[arg(long)]
    pub no_idempotency_key: bool,
    /// Read the retry cap from this file (one number), as a project's client reads a setting at
    /// run time; the profile's own cap when the file does not exist.
    #[arg(long, value_name = "FILE")]
    pub max_retries_from: Option<std::path::PathBuf>,
}

/// One answer, as far as a retry decision cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Answer {
    pub status: u16,
    pub retry_after: Option<String>,
}

/// Runs the client: exit 0 when it got a 2xx, 1 when it gave up.
pub(crate) fn run(args: ClientArgs) -> anyhow::Result<Exit> {
    let target = Target::parse(&args.url)?;
    let method = args.method.to_ascii_uppercase();
    let unsafe_method = method == "POST" || method == "PATCH";
    let path =
        args.path.clone().unwrap_or_else(|| if unsafe_method { "/orders" } else { "/items" }.to_string());
    let mut rng = Rng::seeded();
    let key = (unsafe_method && args.profile == Profile::Reference && !args.no_idempotency_key)
        .then(|| format!("{:016x}", rng.next_u64()));
    let may_retry = match args.profile {
        Profile::Storm | Profile::Calm => true,
        // RFC 9110 §9.2.2: a non-idempotent request is only replayed with a key.
        Profile::Compliant | Profile::Reference => !unsafe_method || key.is_some(),
    };
    let mut max_retries = match args.profile {
        Profile::Storm => 6,
        Profile::Calm => 2,
        Profile::Compliant | Profile::Reference => 4,
    };
    if let Some(file) = &args.max_retries_from {
        match std::fs::read_to_string(file) {
            Ok(text) => {
                max_retries = text.trim().parse().map_err(|_| {
                    anyhow::anyhow!(
                        "{}:1: the retry cap {:?} is not a whole number; write one number, e.g. 4",
                        file.display(),
                        text.trim()
                    )
                })?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => anyhow::bail!("cannot read the retry cap from {}: {e}", file.display()),
        }
    }
    let agent = format!("retrygate-replay-client/{:?}", args.profile).to_lowercase();
    let mut retries = 0;
    loop {
        let answer = target.send(&method, &path, key.as_deref(), &agent);
        match &answer {
            Ok(a) if (200..300).contains(&a.status) => {
                println!("{} after {}", a.status, retrygate::text::plural(retries, "retry", "retries"));
                return Ok(Exit::Pass);
            }
            Ok(a) => eprintln!("attempt {}: {}", retries + 1, a.status),
            Err(e) => eprintln!("attempt {}: {e}", retries + 1),
        }
        let retryable = match &answer {
            Ok(a) => matches!(a.status, 408 | 429 | 500 | 502 | 503 | 504),
            Err(_) => true,
        };
        if !retryable || !may_retry || retries >= max_retries {
            println!("gave up after {}", retrygate::text::plural(retries, "retry", "retries"));
            return Ok(Exit::Fail);
        }
        let ra = answer.ok().and_then(|a| a.retry_after);
        std::thread::sleep(wait_before_retry(
            args.profile,
            retries,
            ra.as_deref(),
            SystemTime::now(),
            &mut rng,
        ));
        retries += 1;
    }
}

/// How long `profile` waits before retry number `retry` (0-based), given the
/// answer's Retry-After. Pure, apart from the random numbers it is handed.
pub(crate) fn wait_before_retry(
    profile: Profile,
    retry: usize,
    retry_after: Option<&str>,
    now: SystemTime,
    rng: &mut Rng,
) -> Duration {
    let asked = retry_after.and_then(retry_after::parse).map(|ra| match ra {
        RetryAfter::Delay(d) => d,
        RetryAfter::Until { unix_ms } => {
            let now_ms = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as u64;
            Duration::from_millis(unix_ms.saturating_sub(now_ms))
        }
    });
    let exp = |base_ms: u64, cap_ms: u64| base_ms.saturating_mul(1 << retry.min(20)).min(cap_ms);
    match profile {
        Profile::Storm => Duration::from_millis(10),
        Profile::Calm => Duration::from_millis(50 + rng.below(201)),
        Profile::Compliant => asked.unwrap_or(Duration::from_millis(exp(500, 8_000))),
        Profile::Reference => match asked {
            // Jitter on top: never earlier than asked, and a fleet told the
            // same wait spreads over up to half of it (at least 0.5 s).
            Some(a) => {
                let spread_ms = (a.as_millis() as u64 / 2).max(500);
                a.saturating_add(Duration::from_millis(rng.below(spread_ms.saturating_add(1))))
            }
            // Full jitter: uniform in [0, min(cap, base * 2^retry)].
            None => Duration::from_millis(rng.below(exp(500, 8_000) + 1)),
        },
    }
}

/// `http://host:port/base` split for writing requests by hand.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    authority: String,
    base: String,
}

impl Target {
    fn parse(url: &str) -> anyhow::Result<Target> {
        let Some(rest) = url.strip_prefix("http://") else {
            bail!("replay-client: URL '{url}' must start with http:// (it is normally $RETRYGATE_URL)");
        };
        let (authority, base) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        if authority.is_empty() {
            bail!("replay-client: URL '{url}' has no host");
        }
        Ok(Target { authority: authority.to_string(), base: base.trim_end_matches('/').to_string() })
    }

    fn send(&self, method: &str, path: &str, key: Option<&str>, agent: &str) -> anyhow::Result<Answer> {
        let mut stream = TcpStream::connect(&self.authority)
            .with_context(|| format!("cannot connect to {}", self.authority))?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        let body = if method == "GET" || method == "HEAD" { "" } else { "item=1" };
        let mut req = format!(
            "{method} {}{path} HTTP/1.1\r\nHost: {}\r\nUser-Agent: {agent}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.base,
            self.authority,
            body.len()
        );
        if let Some(k) = key {
            req.push_str(&format!("Idempotency-Key: \"{k}\"\r\n"));
        }
        req.push_str("\r\n");
        req.push_str(body);
        stream.write_all(req.as_bytes())?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw)?;
        parse_response(&raw)
    }
}

/// Reads the status and Retry-After from a raw HTTP/1.1 response.
fn parse_response(raw: &[u8]) -> anyhow::Result<Answer> {
    let text = String::from_utf8_lossy(raw);
    let head = text.split("\r\n\r\n").next().unwrap_or("");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .with_context(|| format!("not an HTTP response: '{status_line}'"))?;
    let retry_after = lines.find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.trim().eq_ignore_ascii_case("retry-after").then(|| value.trim().to_string())
    });
    Ok(Answer { status, retry_after })
}

/// A small xorshift generator: jitter needs spread, not cryptography, and a
/// dependency for it would outweigh these lines.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    /// Seeded from the clock and the process id, so concurrent clients differ.
    pub(crate) fn seeded() -> Rng {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos() as u64;
        Rng::from_seed(nanos ^ ((std::process::id() as u64) << 32))
    }

    /// A generator with a fixed seed, for tests.
    pub(crate) fn from_seed(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(unix_s: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(unix_s)
    }

    #[test]
    fn reference_waits_at_least_retry_after_with_jitter_on_top() {
        let mut rng = Rng::from_seed(7);
        let waits: Vec<Duration> =
            (0..50).map(|_| wait_before_retry(Profile::Reference, 0, Some("1"), at(0), &mut rng)).collect();
        assert!(waits.iter().all(|w| *w >= Duration::from_secs(1) && *w <= Duration::from_millis(1500)));
        assert!(waits.iter().max().unwrap().as_millis() - waits.iter().min().unwrap().as_millis() > 200);
    }

    #[test]
    fn reference_honours_all_three_date_forms() {
        let mut rng = Rng::from_seed(3);
        for d in
            ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"]
        {
            let w = wait_before_retry(Profile::Reference, 0, Some(d), at(784_111_777 - 2), &mut rng);
            assert!(w >= Duration::from_secs(2) && w <= Duration::from_secs(3), "{d}: {w:?}");
            let w = wait_before_retry(Profile::Compliant, 0, Some(d), at(784_111_777 - 2), &mut rng);
            assert_eq!(w, Duration::from_secs(2), "{d}");
        }
    }

    #[test]
    fn storm_and_calm_ignore_retry_after() {
        let mut rng = Rng::from_seed(5);
        assert_eq!(
            wait_before_retry(Profile::Storm, 3, Some("1"), at(0), &mut rng),
            Duration::from_millis(10)
        );
        for _ in 0..50 {
            let w = wait_before_retry(Profile::Calm, 0, Some("1"), at(0), &mut rng);
            assert!(w >= Duration::from_millis(50) && w <= Duration::from_millis(250), "{w:?}");
        }
    }

    #[test]
    fn without_retry_after_compliant_doubles_and_reference_uses_full_jitter() {
        let mut rng = Rng::from_seed(9);
        assert_eq!(wait_before_retry(Profile::Compliant, 2, None, at(0), &mut rng), Duration::from_secs(2));
        for _ in 0..50 {
            assert!(
                wait_before_retry(Profile::Reference, 1, None, at(0), &mut rng) <= Duration::from_secs(1)
            );
        }
    }

    #[test]
    fn parses_targets_and_responses() {
        let t = Target::parse("http://127.0.0.1:8080/c/3").unwrap();
        assert_eq!(t, Target { authority: "127.0.0.1:8080".into(), base: "/c/3".into() });
        let e = Target::parse("https://x/c/0").unwrap_err().to_string();
        assert!(e.contains("must start with http://"), "{e}");
        let a =
            parse_response(b"HTTP/1.1 429 Too Many Requests\r\nretry-after: 1\r\ncontent-length: 0\r\n\r\n")
                .unwrap();
        assert_eq!(a, Answer { status: 429, retry_after: Some("1".into()) });
        let e = parse_response(b"garbage").unwrap_err().to_string();
        assert!(e.contains("not an HTTP response"), "{e}");
    }
}
