//! What the operation model takes as evidence, through the binary on a real
//! git repository: a request given as data to a project's own sender, a Go
//! method's call on its own receiver whatever the receiver is named, a
//! request built by the caller and sent by a callee, retry conditions
//! widened past those the base already had, and a write judged by its
//! verb alone (said, not blocked on).

use crate::common;

use common::{scan_json as scan, Repo};
use serde_json::Value;

fn change(path: &str, base: Option<&str>, head: &str) -> (Option<i32>, Value) {
    let repo = Repo::new();
    repo.write("README.md", "x\n");
    if let Some(b) = base {
        repo.write(path, b);
    }
    repo.commit("base");
    repo.git(&["checkout", "-q", "-b", "change"]);
    repo.write(path, head);
    repo.commit("change");
    scan(&repo)
}

/// `(kind, severity)` of every finding, with the messages for failures.
fn has(json: &Value, kind: &str, severity: &str) -> bool {
    json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .any(|f| f["kind"] == kind && f["severity"] == severity)
}

fn errors(json: &Value) -> usize {
    json["findings"].as_array().expect("findings").iter().filter(|f| f["severity"] == "error").count()
}

const DISPATCH_ONCE: &str = r#"import { sendRequest } from './net'

export async function dispatch(url: string, body: string): Promise<void> {
    await sendRequest({ method: 'POST', url, data: body, timeout: 10000 })
}
"#;

fn dispatch_retried(method: &str) -> String {
    format!(
        r#"import {{ sendRequest }} from './net'

export async function dispatch(url: string, body: string): Promise<void> {{
    for (let attempt = 0; attempt < 3; attempt++) {{
        try {{
            await sendRequest({{ method: '{method}', url, data: body, timeout: 10000 }})
            return
        }} catch (err) {{
            await new Promise((r) => setTimeout(r, 1000 * attempt))
        }}
    }}
}}
"#
    )
}

#[test]
fn a_request_given_as_data_to_a_projects_sender_is_a_request_of_that_method() {
    let (code, json) = change("src/dispatch.ts", Some(DISPATCH_ONCE), &dispatch_retried("POST"));
    assert_eq!(code, Some(1), "{json:#}");
    assert!(has(&json, "retry-non-idempotent", "error"), "{json:#}");
    let f = &json["findings"][0];
    assert!(f["message"].as_str().unwrap_or_default().contains("POST `sendRequest`"), "{json:#}");
}

#[test]
fn a_get_given_as_data_retried_with_a_bound_does_not_block() {
    let (code, json) =
        change("src/dispatch.ts", Some(&DISPATCH_ONCE.replace("POST", "GET")), &dispatch_retried("GET"));
    assert_eq!(code, Some(0), "{json:#}");
    assert_eq!(errors(&json), 0, "{json:#}");
}

#[test]
fn a_log_line_that_describes_a_request_is_not_one() {
    let head = dispatch_retried("POST").replace("await sendRequest(", "logger.info(");
    let base = DISPATCH_ONCE.replace("await sendRequest(", "logger.info(");
    let (code, json) = change("src/dispatch.ts", Some(&base), &head);
    assert_eq!(code, Some(0), "{json:#}");
    assert_eq!(errors(&json), 0, "{json:#}");
}

const API_ONCE: &str = r#"package api

import "net/http"

type API struct{ client *http.Client }

func (a *API) Start(name string) error {
	req, err := http.NewRequest(http.MethodPost, "https://x/start/"+name, nil)
	if err != nil {
		return err
	}
	resp, err := a.do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return nil
}

func (a *API) do(req *http.Request) (*http.Response, error) {
	return a.client.Do(req)
}
"#;

/// The base's `Start`, its request now sent through a new `withRetry` on
/// the same receiver, five attempts on 5xx.
fn api_retried(method: &str) -> String {
    API_ONCE.replace("http.MethodPost", method).replace(
        "	resp, err := a.do(req)\n",
        "	resp, err := a.withRetry(func() (*http.Response, error) { return a.do(req) })\n",
    ) + r#"
func (a *API) withRetry(f func() (*http.Response, error)) (resp *http.Response, err error) {
	for i := 0; i < 3; i++ {
		resp, err = f()
		if err != nil {
			return nil, err
		}
		if resp.StatusCode < 500 {
			break
		}
		time.Sleep(100 * time.Millisecond * (time.Duration(i) + 1))
	}
	return resp, err
}
"#
}

#[test]
fn a_go_methods_call_on_its_own_receiver_is_followed_with_the_callers_request_method() {
    let (code, json) = change("api/api.go", Some(API_ONCE), &api_retried("http.MethodPost"));
    assert_eq!(code, Some(1), "{json:#}");
    assert!(has(&json, "retry-non-idempotent", "error"), "{json:#}");
}

#[test]
fn a_go_get_sent_through_the_same_helper_does_not_block() {
    let (code, json) = change(
        "api/api.go",
        Some(&API_ONCE.replace("http.MethodPost", "http.MethodGet")),
        &api_retried("http.MethodGet"),
    );
    assert_eq!(code, Some(0), "{json:#}");
    assert_eq!(errors(&json), 0, "{json:#}");
}

const ORDERS: &str = r#"import requests
from tenacity import retry, stop_after_attempt, retry_if_exception_type, wait_random_exponential


@retry(stop=stop_after_attempt(3), wait=wait_random_exponential(1), retry=retry_if_exception_type(requests.Timeout))
def create(body):
    return requests.post("https://x/orders", json=body, timeout=10)
"#;

#[test]
fn conditions_widened_past_those_the_base_retried_block_on_a_write() {
    let head = ORDERS.replace("(requests.Timeout)", "((requests.Timeout, requests.ConnectionError))");
    let (code, json) = change("app/orders.py", Some(ORDERS), &head);
    assert_eq!(code, Some(1), "{json:#}");
    assert!(has(&json, "retry-non-idempotent", "error"), "{json:#}");
    let msg = json["findings"][0]["message"].as_str().unwrap_or_default().to_string();
    assert!(msg.contains("dropped connections"), "{msg}");
}

#[test]
fn conditions_narrowed_do_not_block() {
    let base = ORDERS.replace("(requests.Timeout)", "((requests.Timeout, requests.ConnectionError))");
    let (code, json) = change("app/orders.py", Some(&base), ORDERS);
    assert_eq!(code, Some(0), "{json:#}");
    assert_eq!(errors(&json), 0, "{json:#}");
}

fn registry(receiver: &str) -> (String, String) {
    let base = format!(
        r#"class Recorder:
    def record(self, entry):
        self.{receiver}.create_entry(entry)
"#
    );
    let head = format!(
        r#"import time


class Recorder:
    def record(self, entry):
        for attempt in range(3):
            try:
                self.{receiver}.create_entry(entry)
                return
            except Exception:
                time.sleep(1)
"#
    );
    (base, head)
}

#[test]
fn a_write_verb_on_a_receiver_nothing_shows_to_be_a_client_is_said_not_blocked() {
    let (base, head) = registry("manager");
    let (code, json) = change("app/recorder.py", Some(&base), &head);
    assert_eq!(code, Some(0), "{json:#}");
    assert!(has(&json, "retry-non-idempotent", "warning"), "{json:#}");
    let msg = json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["kind"] == "retry-non-idempotent")
        .and_then(|f| f["message"].as_str())
        .unwrap_or_default()
        .to_string();
    assert!(msg.contains("by the call's name alone"), "{msg}");
}

#[test]
fn the_same_write_verb_on_a_client_blocks() {
    let (base, head) = registry("api_client");
    let (code, json) = change("app/recorder.py", Some(&base), &head);
    assert_eq!(code, Some(1), "{json:#}");
    assert!(has(&json, "retry-non-idempotent", "error"), "{json:#}");
}

const TOOLS_CLIENT: &str = r#"class ToolClient:
    def __init__(self, session):
        self.session = session

    def call_tool(self, name, arguments):
        return self.session.call_tool(name, arguments)
"#;

const ADAPTER_ONCE: &str = r#"from tools.client import ToolClient

_clients = {}


def run_tool(server, name, arguments):
    client = _clients[server]
    return client.call_tool(name, arguments)
"#;

const ADAPTER_RETRIED: &str = r#"import time

from tools.client import ToolClient

_clients = {}


def run_tool(server, name, arguments):
    for attempt in range(3):
        try:
            client = _clients[server]
            return client.call_tool(name, arguments)
        except ConnectionError:
            time.sleep(1)
"#;

#[test]
fn a_method_that_delegates_to_the_same_name_on_another_object_is_followed_to_the_call() {
    let repo = Repo::new();
    repo.write("tools/client.py", TOOLS_CLIENT);
    repo.write("tools/adapter.py", ADAPTER_ONCE);
    repo.commit("base");
    repo.git(&["checkout", "-q", "-b", "change"]);
    // The client file is touched too, so the change reads it.
    repo.write("tools/client.py", format!("{TOOLS_CLIENT}\n\n# the session is the server's\n"));
    repo.write("tools/adapter.py", ADAPTER_RETRIED);
    repo.commit("change");
    let (code, json) = scan(&repo);
    assert_eq!(code, Some(1), "{json:#}");
    assert!(has(&json, "retry-non-idempotent", "error"), "{json:#}");
    let msg = json["findings"][0]["message"].as_str().unwrap_or_default().to_string();
    assert!(msg.contains("session.call_tool"), "{msg}");
}

const VIEW_ONCE: &str = r#"package x

class Masker(private val mainHandler: Handler) {
    fun arm(view: View) {
        mainHandler.post { mask(view) }
    }
}
"#;

const VIEW_REPEATED: &str = r#"package x

class Masker(private val mainHandler: Handler) {
    fun arm(view: View) {
        for (attempt in 0 until 5) {
            try {
                mainHandler.post { mask(view) }
                return
            } catch (e: Exception) {
                Thread.sleep(100)
            }
        }
    }
}
"#;

#[test]
fn a_post_named_call_on_no_client_with_no_url_is_said_not_blocked() {
    let (code, json) = change("app/src/main/java/x/Masker.kt", Some(VIEW_ONCE), VIEW_REPEATED);
    assert_eq!(code, Some(0), "{json:#}");
    assert_eq!(errors(&json), 0, "{json:#}");
}

#[test]
fn the_same_loop_around_a_clients_post_blocks() {
    let swap = |s: &str| {
        s.replace("mainHandler: Handler", "httpClient: HttpClient")
            .replace("mainHandler.post { mask(view) }", "httpClient.post(\"/masks\") { setBody(view.id) }")
    };
    let (code, json) = change("app/src/main/java/x/Masker.kt", Some(&swap(VIEW_ONCE)), &swap(VIEW_REPEATED));
    assert_eq!(code, Some(1), "{json:#}");
    assert!(has(&json, "retry-non-idempotent", "error"), "{json:#}");
}

const UPLOAD_ONCE: &str = r#"package x;

import io.smallrye.mutiny.Uni;

public class Files {
    private final FileClient client;

    public Files(FileClient client) { this.client = client; }

    public Uni<Void> upload(String id, byte[] body) {
        return client.postAsync(id, body);
    }
}
"#;

#[test]
fn a_mutiny_retry_is_bounded_by_the_at_most_chained_after_it() {
    let head = UPLOAD_ONCE.replace(
        "return client.postAsync(id, body);",
        "return client.postAsync(id, body).onFailure().retry().withBackOff(Duration.ofMillis(100)).atMost(3);",
    );
    let (code, json) = change("src/main/java/x/Files.java", Some(UPLOAD_ONCE), &head);
    assert_eq!(code, Some(1), "{json:#}");
    assert!(has(&json, "retry-non-idempotent", "error"), "{json:#}");
    assert!(!has(&json, "retry-unbounded", "error"), "{json:#}");
    let msg = json["findings"][0]["message"].as_str().unwrap_or_default().to_string();
    assert!(msg.contains("(4 attempts)"), "{msg}");
}

#[test]
fn a_mutiny_retry_said_indefinitely_is_unbounded() {
    let head = UPLOAD_ONCE.replace(
        "return client.postAsync(id, body);",
        "return client.postAsync(id, body).onFailure().retry().indefinitely();",
    );
    let (code, json) = change("src/main/java/x/Files.java", Some(UPLOAD_ONCE), &head);
    assert_eq!(code, Some(1), "{json:#}");
    assert!(has(&json, "retry-unbounded", "error"), "{json:#}");
}

#[test]
fn a_setuptools_build_copy_is_not_the_projects_code() {
    let base = "import requests\n\n\ndef create(b):\n    return requests.post('https://x/orders', json=b)\n";
    let head = "import time\n\nimport requests\n\n\ndef create(b):\n    for i in range(3):\n        try:\n            return requests.post('https://x/orders', json=b)\n        except Exception:\n            time.sleep(1)\n";
    let (code, json) = change("sdk/build/lib/orders/client.py", Some(base), head);
    assert_eq!(code, Some(0), "{json:#}");
    assert_eq!(errors(&json), 0, "{json:#}");
    // The same change in the package's source blocks.
    let (code, json) = change("sdk/orders/client.py", Some(base), head);
    assert_eq!(code, Some(1), "{json:#}");
}
