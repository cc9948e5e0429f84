//! Sends one request to `$RETRYGATE_URL` through reqwest-retry's
//! `RetryTransientMiddleware` with `ExponentialBackoff::builder().build_with_max_retries(3)`.
//! Usage: `replay-client-reqwest-retry [GET|POST]`. Exits 0 on a 2xx answer.

use reqwest_middleware::ClientBuilder;
use reqwest_retry::{policies::ExponentialBackoff, RetryTransientMiddleware};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let url = std::env::var("RETRYGATE_URL").expect("RETRYGATE_URL is set by retrygate replay");
    let method = std::env::args().nth(1).unwrap_or_else(|| "GET".to_string());
    let policy = ExponentialBackoff::builder().build_with_max_retries(3);
    let client = ClientBuilder::new(reqwest::Client::new())
        .with(RetryTransientMiddleware::new_with_policy(policy))
        .build();
    let request = match method.as_str() {
        "POST" => client.post(format!("{url}/orders")).body("item=1"),
        _ => client.get(format!("{url}/items")),
    };
    match request.send().await {
        Ok(resp) if resp.status().is_success() => println!("ok {}", resp.status()),
        Ok(resp) => {
            eprintln!("gave up with {}", resp.status());
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
