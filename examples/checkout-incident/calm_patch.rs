//! The checkout client as the agent's second attempt leaves it: the 2.5 s
//! timeout kept, the cart read still bounded at two retries, a 429 answered
//! by waiting at least its Retry-After with jitter on top (so a fleet of
//! clients spreads out instead of returning in lockstep), and the
//! POST /checkout still sent exactly once.

use std::thread::sleep;
use std::time::Duration;

use reqwest::header::RETRY_AFTER;
use reqwest::StatusCode;

const TIMEOUT_MS: u64 = 2500;
const MAX_RETRIES: u32 = 2;

pub struct Checkout {
    http: reqwest::blocking::Client,
}

impl Checkout {
    pub fn new() -> reqwest::Result<Checkout> {
        let http = reqwest::blocking::Client::builder().timeout(Duration::from_millis(TIMEOUT_MS)).build()?;
        Ok(Checkout { http })
    }

    /// Reads the cart; a GET is safe to repeat.
    pub fn cart(&self, id: &str) -> reqwest::Result<String> {
        let mut cap_ms = 100;
        for attempt in 0..=MAX_RETRIES {
            match self.http.get(format!("https://shop.example/cart/{id}")).send() {
                Ok(resp) if resp.status() == StatusCode::TOO_MANY_REQUESTS && attempt < MAX_RETRIES => {
                    // At least what the server asked for, plus jitter on top.
                    let asked_ms = retry_after_ms(&resp).unwrap_or(0);
                    sleep(Duration::from_millis(asked_ms + rand::random::<u64>() % cap_ms));
                    cap_ms *= 2;
                }
                Ok(resp) => return resp.error_for_status()?.text(),
                Err(e) if attempt == MAX_RETRIES => return Err(e),
                Err(_) => {
                    // Full jitter: sleep a random time below an exponential cap.
                    sleep(Duration::from_millis(rand::random::<u64>() % cap_ms));
                    cap_ms *= 2;
                }
            }
        }
        unreachable!("the loop returns on its last attempt")
    }

    /// Places the order. Not retried: a repeated POST can charge twice.
    pub fn submit(&self, order: &Order) -> reqwest::Result<reqwest::blocking::Response> {
        self.http.post("https://shop.example/checkout").json(order).send()
    }
}

/// The delta-seconds form of Retry-After, in milliseconds.
fn retry_after_ms(resp: &reqwest::blocking::Response) -> Option<u64> {
    let secs: u64 = resp.headers().get(RETRY_AFTER)?.to_str().ok()?.trim().parse().ok()?;
    Some(secs.saturating_mul(1000))
}
