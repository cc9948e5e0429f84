//! The checkout client after the coding agent was asked to "make checkout
//! faster": timeout cut to 800 ms, six retries with a constant 10 ms sleep,
//! and the POST /checkout wrapped in the same retry loop.

use std::thread::sleep;
use std::time::Duration;

const TIMEOUT_MS: u64 = 800;
const MAX_RETRIES: u32 = 6;

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
        for attempt in 0..=MAX_RETRIES {
            match self.http.get(format!("https://shop.example/cart/{id}")).send() {
                Ok(resp) => return resp.text(),
                Err(e) if attempt == MAX_RETRIES => return Err(e),
                Err(_) => sleep(Duration::from_millis(10)),
            }
        }
        unreachable!("the loop returns on its last attempt")
    }

    /// Places the order, now "resilient".
    pub fn submit(&self, order: &Order) -> reqwest::Result<reqwest::blocking::Response> {
        for attempt in 0..=MAX_RETRIES {
            match self.http.post("https://shop.example/checkout").json(order).send() {
                Ok(resp) => return Ok(resp),
                Err(e) if attempt == MAX_RETRIES => return Err(e),
                Err(_) => sleep(Duration::from_millis(10)),
            }
        }
        unreachable!("the loop returns on its last attempt")
    }
}
