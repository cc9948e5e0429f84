//! A new retry is a raise from one attempt, through the binary on a real
//! git repository: a read (or a request of unknown method) that ran once
//! and is now retried more than four times is `retry-count-raised`; four
//! attempts pass (a warning when the delay has no randomness). A
//! transport that sends whatever method it is handed is judged a write. A
//! request retried through a `_retry_request` helper that calls it back is
//! recursion. A loop that waits for a job's state is a poll, not a retry.

use crate::common;

use common::{errors_of, scan_json as scan, Repo};
use serde_json::Value;

fn change(path: &str, base: &str, head: &str) -> Value {
    let repo = Repo::new();
    repo.write("README.md", "x\n");
    repo.write(path, base);
    repo.commit("base");
    repo.git(&["checkout", "-q", "-b", "change"]);
    repo.write(path, head);
    repo.commit("change");
    let (code, json) = scan(&repo);
    assert!(matches!(code, Some(0) | Some(1)), "scan failed: {json}");
    json
}

const GO_SEARCH_ONCE: &str = r#"package hf

import "net/http"

type Client struct{ client *http.Client }

func (c *Client) SearchModels(url string) (*http.Response, error) {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return nil, err
	}
	return c.client.Do(req)
}
"#;

fn go_search_retried(attempts: u32, jitter: bool) -> String {
    let delay = if jitter {
        "time.Sleep(time.Duration(rand.Int63n(int64(time.Second))))"
    } else {
        "time.Sleep(time.Second)"
    };
    format!(
        r#"package hf

import (
	"math/rand"
	"net/http"
	"time"
)

var _ = rand.Int63n

type Client struct{{ client *http.Client }}

func (c *Client) SearchModels(url string) (*http.Response, error) {{
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {{
		return nil, err
	}}
	var lastErr error
	for attempt := 1; attempt <= {attempts}; attempt++ {{
		resp, err := c.client.Do(req)
		if err == nil {{
			return resp, nil
		}}
		lastErr = err
		{delay}
	}}
	return nil, lastErr
}}
"#
    )
}

#[test]
fn a_read_newly_retried_five_times_is_a_raise_from_one_attempt() {
    let json = change("hf/client.go", GO_SEARCH_ONCE, &go_search_retried(5, true));
    let raised = errors_of(&json, "retry-count-raised");
    assert_eq!(raised.len(), 1, "{json}");
    let m = raised[0]["message"].as_str().unwrap_or("");
    assert!(m.contains("GET `c.client.Do`") && m.contains("from 1 to 5"), "{m}");
    assert_eq!(raised[0]["rule"], "op/new-retry-raised-from-one");
}

#[test]
fn a_small_new_retry_of_a_read_without_jitter_is_a_warning() {
    let json = change("hf/client.go", GO_SEARCH_ONCE, &go_search_retried(3, false));
    assert!(errors_of(&json, "retry-count-raised").is_empty(), "{json}");
    let warned = json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .any(|f| f["kind"] == "retry-without-jitter" && f["severity"] == "warning");
    assert!(warned, "{json}");
    // Five unjittered attempts are a raise, and the message says both.
    let json = change("hf/client.go", GO_SEARCH_ONCE, &go_search_retried(5, false));
    let raised = errors_of(&json, "retry-count-raised");
    assert_eq!(raised.len(), 1, "{json}");
    assert!(raised[0]["message"].as_str().unwrap_or("").contains("no randomness"), "{json}");
}

#[test]
fn a_read_newly_retried_four_times_with_jitter_passes() {
    let json = change("hf/client.go", GO_SEARCH_ONCE, &go_search_retried(4, true));
    let blocking: Vec<&Value> =
        json["findings"].as_array().expect("findings").iter().filter(|f| f["severity"] == "error").collect();
    assert!(blocking.is_empty(), "{json}");
}

const PY_TRANSPORT_ONCE: &str = r#"import requests


class Requestor:
    def __init__(self):
        self.session = requests.Session()

    def request_raw(self, method, url, data=None, remaining_retries=0):
        result = self.session.request(method, url, data=data, timeout=10)
        return result
"#;

const PY_TRANSPORT_RETRY_HELPER: &str = r#"import time

import requests


class Requestor:
    def __init__(self):
        self.session = requests.Session()

    def _retry_request(self, method, url, data, remaining_retries):
        time.sleep(0.5)
        return self.request_raw(method, url, data=data, remaining_retries=remaining_retries - 1)

    def request_raw(self, method, url, data=None, remaining_retries=3):
        try:
            result = self.session.request(method, url, data=data, timeout=10)
        except requests.exceptions.Timeout:
            if remaining_retries > 0:
                return self._retry_request(method, url, data, remaining_retries)
            raise
        if result.status_code >= 500 and remaining_retries > 0:
            return self._retry_request(method, url, data, remaining_retries)
        return result
"#;

#[test]
fn a_transport_retried_through_a_helper_that_calls_it_back_retries_every_method() {
    let json = change("sdk/requestor.py", PY_TRANSPORT_ONCE, PY_TRANSPORT_RETRY_HELPER);
    let writes = errors_of(&json, "retry-non-idempotent");
    assert_eq!(writes.len(), 1, "{json}");
    let m = writes[0]["message"].as_str().unwrap_or("");
    assert!(m.contains("any method it is handed") && m.contains("calls itself on failure"), "{m}");
}

#[test]
fn a_helper_not_named_as_a_retry_is_no_recursion() {
    // The same shape through `_log_failure`, which does not call back.
    let head = PY_TRANSPORT_RETRY_HELPER.replace("_retry_request", "_log_failure").replace(
        "return self.request_raw(method, url, data=data, remaining_retries=remaining_retries - 1)",
        "return None",
    );
    let json = change("sdk/requestor.py", PY_TRANSPORT_ONCE, &head);
    assert!(errors_of(&json, "retry-non-idempotent").is_empty(), "{json}");
    assert!(errors_of(&json, "retry-count-raised").is_empty(), "{json}");
}

const TS_TASK_ONCE: &str = r#"export class TaskClient {
  constructor(private httpRequest: { get(url: string): Promise<{ status: string }> }) {}

  async getTask(uid: number) {
    return this.httpRequest.get(`/tasks/${uid}`)
  }

  async waitForTask(uid: number, timeOutMs = 5000, intervalMs = 50) {
    return this.httpRequest.get(`/tasks/${uid}`)
  }
}
"#;

const TS_TASK_POLL: &str = r#"const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export class TaskClient {
  constructor(private httpRequest: { get(url: string): Promise<{ status: string }> }) {}

  async getTask(uid: number) {
    return this.httpRequest.get(`/tasks/${uid}`)
  }

  async waitForTask(uid: number, timeOutMs = 5000, intervalMs = 50) {
    for (let i = 0; i < 100; i++) {
      const response = await this.httpRequest.get(`/tasks/${uid}`)
      if (!["enqueued", "processing"].includes(response.status)) return response
      await sleep(intervalMs)
    }
    throw new Error("timeout")
  }
}
"#;

#[test]
fn a_loop_that_waits_for_a_jobs_state_is_a_poll_not_a_retry() {
    let json = change("src/task.ts", TS_TASK_ONCE, TS_TASK_POLL);
    assert!(errors_of(&json, "retry-count-raised").is_empty(), "{json}");
    // The same loop leaving on an HTTP status is a retry of the read.
    let retry = TS_TASK_POLL.replace(
        r#"if (!["enqueued", "processing"].includes(response.status)) return response"#,
        r#"if (response.status !== "503") return response"#,
    );
    let json = change("src/task.ts", TS_TASK_ONCE, &retry);
    assert_eq!(errors_of(&json, "retry-count-raised").len(), 1, "{json}");
}

const GO_DAEMON_ONCE: &str = r#"package engine

import (
	"fmt"
	"net/http"
	"os/exec"
)

func startDaemon(port int) (string, error) {
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	cmd := exec.Command("tool-daemon")
	if err := cmd.Start(); err != nil {
		return "", err
	}
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	return url, nil
}
"#;

#[test]
fn waiting_for_a_process_the_function_started_is_no_retry() {
    let head = GO_DAEMON_ONCE.replace(
        "\tresp, err := http.Get(url)\n\tif err != nil {\n\t\treturn \"\", err\n\t}\n\tresp.Body.Close()\n\treturn url, nil\n",
        "\tfor i := 0; i < 20; i++ {\n\t\tresp, err := http.Get(url)\n\t\tif err == nil {\n\t\t\tresp.Body.Close()\n\t\t\treturn url, nil\n\t\t}\n\t\ttime.Sleep(time.Second)\n\t}\n\treturn \"\", fmt.Errorf(\"daemon did not start\")\n",
    );
    assert_ne!(head, GO_DAEMON_ONCE);
    let json = change("engine/daemon.go", GO_DAEMON_ONCE, &head);
    assert!(errors_of(&json, "retry-count-raised").is_empty(), "{json}");
    // The same loop against a service it did not start is a raise.
    let remote = |t: &str| t.replace("http://127.0.0.1:%d", "https://registry.example.com:%d");
    let json = change("engine/daemon.go", &remote(GO_DAEMON_ONCE), &remote(&head));
    assert_eq!(errors_of(&json, "retry-count-raised").len(), 1, "{json}");
}

/// A catch clause that rethrows as its last word still goes round when a
/// `continue` under a guard is in it (`except E as e: if retryable(e):
/// continue` then `raise`): the guard says what the retry fires on. A
/// write retried on a guard retrygate cannot read, or on a read timeout,
/// blocks; the same loop guarded by a connect timeout or a refused
/// connection is a warning that names it, in every language.
#[test]
fn a_guarded_continue_in_a_catch_that_rethrows_is_a_retry_on_what_the_guard_names() {
    let py_base = "import httpx\n\n\ndef create_order(client: httpx.Client, body: dict) -> dict:\n    return client.post(\"/orders\", json=body).json()\n";
    let py_head = |guard: &str| {
        format!("import time\n\nimport httpx\n\n\ndef create_order(client: httpx.Client, body: dict) -> dict:\n    for attempt in range(3):\n        try:\n            return client.post(\"/orders\", json=body).json()\n        except httpx.HTTPError as e:\n            if {guard}:\n                time.sleep(1)\n                continue\n            raise\n")
    };
    let ts_base = "export async function createOrder(body: unknown) {\n  const res = await fetch(\"https://api.example.com/orders\", { method: \"POST\", body: JSON.stringify(body) });\n  return res.json();\n}\n";
    let ts_head = |guard: &str| {
        format!("export async function createOrder(body: unknown) {{\n  for (let attempt = 0; attempt < 3; attempt++) {{\n    try {{\n      const res = await fetch(\"https://api.example.com/orders\", {{ method: \"POST\", body: JSON.stringify(body) }});\n      return res.json();\n    }} catch (e) {{\n      if ({guard}) {{\n        await new Promise((r) => setTimeout(r, 1000));\n        continue;\n      }}\n      throw e;\n    }}\n  }}\n}}\n")
    };
    let java_base = "package shop;\n\nimport org.springframework.web.client.RestTemplate;\n\npublic class Orders {\n    private final RestTemplate rest = new RestTemplate();\n\n    public String create(Object body) {\n        return rest.postForObject(\"https://api.example.com/orders\", body, String.class);\n    }\n}\n";
    let java_head = |guard: &str| {
        format!("package shop;\n\nimport org.springframework.web.client.RestTemplate;\nimport org.springframework.web.client.ResourceAccessException;\n\npublic class Orders {{\n    private final RestTemplate rest = new RestTemplate();\n\n    public String create(Object body) throws InterruptedException {{\n        for (int attempt = 0; attempt < 3; attempt++) {{\n            try {{\n                return rest.postForObject(\"https://api.example.com/orders\", body, String.class);\n            }} catch (ResourceAccessException e) {{\n                if ({guard}) {{\n                    Thread.sleep(1000);\n                    continue;\n                }}\n                throw e;\n            }}\n        }}\n        return null;\n    }}\n}}\n")
    };
    let cases: Vec<(&str, &str, String, bool)> = vec![
        ("app/orders.py", py_base, py_head("should_retry(e)"), true),
        ("app/orders.py", py_base, py_head("isinstance(e, httpx.ReadTimeout)"), true),
        ("app/orders.py", py_base, py_head("isinstance(e, httpx.ConnectTimeout)"), false),
        ("src/orders.ts", ts_base, ts_head("isTransient(e)"), true),
        ("src/orders.ts", ts_base, ts_head("String(e).includes(\"ECONNREFUSED\")"), false),
        ("src/main/java/shop/Orders.java", java_base, java_head("isTransient(e)"), true),
        (
            "src/main/java/shop/Orders.java",
            java_base,
            java_head("e.getCause() instanceof java.net.ConnectException"),
            false,
        ),
    ];
    for (path, base, head, blocks) in cases {
        let json = change(path, base, &head);
        let errors = errors_of(&json, "retry-non-idempotent");
        if blocks {
            assert!(
                !errors.is_empty(),
                "{path}: a write retried on a failure after which it may have been applied\n{head}\n{json:#}"
            );
        } else {
            assert!(errors.is_empty(), "{path}: retried only when nothing was sent\n{head}\n{json:#}");
            let warned = json["findings"].as_array().expect("findings").iter().any(|f| {
                f["kind"] == "retry-non-idempotent"
                    && f["severity"] == "warning"
                    && f["message"].as_str().is_some_and(|m| m.contains("refused connections"))
            });
            assert!(warned, "{path}: the warning names the condition\n{json:#}");
        }
    }
}

/// A write sent through the project's own retry helper: the rule packs'
/// reading of the helper names every failure in its body (the `raise`
/// of an HTTP error included), the operation model reads the arm that goes
/// round. Where the model found the helper retries only refused
/// connections, the helper finding is a warning that says so; where it
/// goes round on read timeouts, both block.
#[test]
fn a_retry_helper_the_model_reads_as_refusals_only_does_not_block_its_callers() {
    let base = "import httpx\n\n\nclass Api:\n    def post(self, url, **kw):\n        return self._request(\"POST\", url, **kw)\n\n    def _request(self, method, url, **kw):\n        with httpx.Client() as client:\n            return client.request(method, url, **kw).json()\n";
    let head = |exc: &str| {
        format!("import time\n\nimport httpx\n\n\nclass Api:\n    def post(self, url, **kw):\n        return self._request(\"POST\", url, **kw)\n\n    def _request(self, method, url, **kw):\n        retries = 0\n        while retries < 4:\n            try:\n                with httpx.Client() as client:\n                    return client.request(method, url, **kw).json()\n            except httpx.HTTPError as e:\n                if isinstance(e, httpx.{exc}):\n                    retries += 1\n                    time.sleep(1)\n                    continue\n                raise httpx.HTTPStatusError(\"failed\", request=None, response=None)\n")
    };
    let refused = change("app/api.py", base, &head("ConnectTimeout"));
    assert!(errors_of(&refused, "retry-non-idempotent").is_empty(), "{refused:#}");
    let lowered = refused["findings"].as_array().expect("findings").iter().any(|f| {
        f["rule"].as_str().is_some_and(|r| r.ends_with("/retry-helper-write"))
            && f["severity"] == "warning"
            && f["message"]
                .as_str()
                .is_some_and(|m| m.contains("the operation model read the helper's retry"))
    });
    assert!(lowered, "{refused:#}");
    let timeouts = change("app/api.py", base, &head("ReadTimeout"));
    let rules: Vec<&str> =
        errors_of(&timeouts, "retry-non-idempotent").iter().filter_map(|f| f["rule"].as_str()).collect();
    assert!(rules.iter().any(|r| r.ends_with("/retry-helper-write")), "{timeouts:#}");
    assert!(rules.contains(&"op/new-retry-of-write"), "{timeouts:#}");
}

/// Rust, as the other languages: a read the base performed once in a
/// function, retried there in the head past four attempts, is a raise from
/// one attempt, whatever the retry's form (backon, tokio-retry, a hand
/// loop). Four attempts or fewer pass; a write is `retry-non-idempotent`
/// alone; a function the base did not have ran nothing once.
#[test]
fn rust_a_new_retry_of_a_read_past_four_attempts_is_a_raise_from_one() {
    let base = "pub async fn flags(c: &reqwest::Client) -> reqwest::Result<reqwest::Response> {\n    c.get(\"https://api.example.com/flags\").send().await\n}\n";
    let backon = |n: u32, verb: &str| {
        format!("use backon::{{ExponentialBuilder, Retryable}};\n\npub async fn flags(c: &reqwest::Client) -> reqwest::Result<reqwest::Response> {{\n    (|| async {{ c.{verb}(\"https://api.example.com/flags\").send().await }})\n        .retry(ExponentialBuilder::default().with_jitter().with_max_times({n}))\n        .await\n}}\n")
    };
    let tokio_retry = "use tokio_retry::strategy::{jitter, ExponentialBackoff};\nuse tokio_retry::Retry;\n\npub async fn flags(c: &reqwest::Client) -> reqwest::Result<reqwest::Response> {\n    let strategy = ExponentialBackoff::from_millis(100).map(jitter).take(6);\n    Retry::spawn(strategy, || async { c.get(\"https://api.example.com/flags\").send().await }).await\n}\n";
    let hand = "pub async fn flags(c: &reqwest::Client) -> reqwest::Result<reqwest::Response> {\n    let mut attempt = 0;\n    loop {\n        match c.get(\"https://api.example.com/flags\").send().await {\n            Ok(r) => return Ok(r),\n            Err(e) if attempt >= 8 => return Err(e),\n            Err(_) => attempt += 1,\n        }\n        tokio::time::sleep(std::time::Duration::from_millis(100)).await;\n    }\n}\n";
    for head in [backon(6, "get"), tokio_retry.to_string(), hand.to_string()] {
        let json = change("src/lib.rs", base, &head);
        let raised = errors_of(&json, "retry-count-raised");
        assert_eq!(raised.len(), 1, "{head}\n{json:#}");
        assert!(
            raised[0]["message"]
                .as_str()
                .is_some_and(|m| m.contains("the base performed `GET /flags` once in this function")),
            "{json:#}"
        );
    }
    let small = change("src/lib.rs", base, &backon(3, "get"));
    assert!(errors_of(&small, "retry-count-raised").is_empty(), "{small:#}");
    let write_base = base.replace("c.get(", "c.post(");
    let write = change("src/lib.rs", &write_base, &backon(6, "post"));
    assert!(errors_of(&write, "retry-count-raised").is_empty(), "{write:#}");
    assert!(!errors_of(&write, "retry-non-idempotent").is_empty(), "{write:#}");
    let other = base.replace("pub async fn flags", "pub async fn other");
    let new_fn = change(
        "src/lib.rs",
        &other,
        &format!(
            "{other}\n{}",
            backon(6, "get").replace("use backon::{ExponentialBuilder, Retryable};\n\n", "")
        ),
    );
    assert!(errors_of(&new_fn, "retry-count-raised").is_empty(), "{new_fn:#}");
}

/// A new wait for a service to come up repeats a GET of its health
/// endpoint: judged by the request's endpoint (named in the message), a
/// warning, not a block. The same loop around any other GET blocks, and so
/// does a wait whose loop also sends a write.
#[test]
fn a_new_wait_on_a_health_endpoint_is_a_warning_that_names_the_endpoint() {
    let py_base = |target: &str| {
        format!("import requests\n\n\ndef wait_until_ready(base: str) -> None:\n    requests.get(base + \"{target}\", timeout=2)\n")
    };
    let py_head = |target: &str| {
        format!("import time\n\nimport requests\n\n\ndef wait_until_ready(base: str) -> None:\n    while True:\n        try:\n            requests.get(base + \"{target}\", timeout=2)\n            return\n        except requests.RequestException:\n            time.sleep(1)\n")
    };
    let ts_base = |target: &str| {
        format!("export async function waitReady(base: string) {{\n  await fetch(`${{base}}{target}`);\n}}\n")
    };
    let ts_head = |target: &str| {
        format!("export async function waitReady(base: string) {{\n  for (let i = 0; i < 30; i++) {{\n    try {{\n      await fetch(`${{base}}{target}`);\n      return;\n    }} catch (e) {{\n      await new Promise((r) => setTimeout(r, 1000));\n    }}\n  }}\n}}\n")
    };
    for (path, base, head, kind) in [
        (
            "app/ready.py",
            py_base("/v1/.well-known/ready"),
            py_head("/v1/.well-known/ready"),
            "retry-unbounded",
        ),
        ("src/ready.ts", ts_base("/healthz"), ts_head("/healthz"), "retry-count-raised"),
    ] {
        let json = change(path, &base, &head);
        assert!(errors_of(&json, kind).is_empty(), "{json:#}");
        let said = json["findings"].as_array().expect("findings").iter().any(|f| {
            f["kind"] == kind
                && f["severity"] == "warning"
                && f["message"].as_str().is_some_and(|m| m.contains("a GET or HEAD of the health endpoint"))
        });
        assert!(said, "{json:#}");
        let other = change(
            path,
            &base.replace("ready", "objects").replace("healthz", "objects"),
            &head.replace("ready", "objects").replace("healthz", "objects"),
        );
        assert_eq!(errors_of(&other, kind).len(), 1, "{other:#}");
    }
}

/// A function that calls itself again after refreshing its credentials
/// retries only what the server refused (401/403): the write was not
/// acted on, so it is a warning that names the condition. The same call
/// back on a 5xx, or with no guard, blocks.
#[test]
fn a_retry_after_refreshed_credentials_is_a_warning_and_one_after_a_5xx_blocks() {
    let ts_base = "export class Client {\n  async requestAsync(url: string): Promise<Response> {\n    return fetch(url, { method: \"POST\" });\n  }\n}\n";
    let ts_head = |guard: &str| {
        format!("export class Client {{\n  async requestAsync(url: string, retry = false): Promise<Response> {{\n    try {{\n      const res = await fetch(url, {{ method: \"POST\" }});\n      if (!res.ok) throw new HttpError(res.status);\n      return res;\n    }} catch (e) {{\n      const status = (e as HttpError).status;\n      if ({guard}) {{\n        await this.refreshToken();\n        return this.requestAsync(url, true);\n      }}\n      throw e;\n    }}\n  }}\n}}\n")
    };
    let py_base = "import requests\n\n\nclass Api:\n    def send(self, body):\n        return self.session.post(\"https://api.example.com/v1/messages\", json=body)\n";
    let py_head = |guard: &str| {
        format!("import requests\n\n\nclass Api:\n    def send(self, body, retried=False):\n        try:\n            resp = self.session.post(\"https://api.example.com/v1/messages\", json=body)\n            resp.raise_for_status()\n            return resp\n        except requests.HTTPError as e:\n            status = e.response.status_code\n            if {guard}:\n                self.refresh()\n                return self.send(body, retried=True)\n            raise\n")
    };
    let cases = [
        ("src/client.ts", ts_base, ts_head("!retry && (status === 401 || status === 403)"), false),
        ("src/client.ts", ts_base, ts_head("!retry && status >= 500"), true),
        ("app/api.py", py_base, py_head("status == 401 and not retried"), false),
        ("app/api.py", py_base, py_head("not retried"), true),
    ];
    for (path, base, head, blocks) in cases {
        let json = change(path, base, &head);
        let errors = errors_of(&json, "retry-non-idempotent");
        assert_eq!(!errors.is_empty(), blocks, "{head}\n{json:#}");
        if !blocks {
            let said = json["findings"].as_array().expect("findings").iter().any(|f| {
                f["severity"] == "warning"
                    && f["message"].as_str().is_some_and(|m| m.contains("refused credentials (401/403)"))
            });
            assert!(said, "{json:#}");
        }
    }
}
