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
