//! The checkout client as it was before the incident: a 2.5 s timeout, two
//! retries of the cart read with jittered exponential backoff, and the
//! POST /checkout sent exactly once.

use std::thread::sleep;
use std::time::Duration;

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
                Ok(resp) => return resp.text(),
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
