//! A transport's retry, through the binary on a real git repository: the
//! sender every request of a client goes through, whose method its callers
//! decide. A call handed a method and a URL is a request whatever it is
//! called; the method comes from the callers of the function that sends it
//! or of the one that retries it; a loop bound the files do not hold,
//! raised by a constant (`range(self.max_retries + 1)`), is a raise.

use crate::common;

use common::{errors_of, scan_json as scan, Repo};
use serde_json::Value;

/// Scans a change of `changed` over a base that also holds `context`
/// (unchanged by the change).
fn change(context: &[(&str, &str)], changed: &[(&str, &str, &str)]) -> (Option<i32>, Value) {
    let repo = Repo::new();
    repo.write("README.md", "x\n");
    for (p, t) in context {
        repo.write(p, t);
    }
    for (p, b, _) in changed {
        repo.write(p, b);
    }
    repo.commit("base");
    repo.git(&["checkout", "-q", "-b", "change"]);
    for (p, _, h) in changed {
        repo.write(p, h);
    }
    repo.commit("change");
    scan(&repo)
}

fn errors(json: &Value) -> usize {
    json["findings"].as_array().expect("findings").iter().filter(|f| f["severity"] == "error").count()
}

const PY_TRANSPORT_ONCE: &str = r#"from .settings import DEFAULTS


class Transport(object):
    def __init__(self, pool):
        self.pool = pool
        self.max_retries = DEFAULTS["max_retries"]

    def perform_request(self, method, url, params=None, body=None):
        connection = self.pool.get_connection()
        return connection.perform_request(method, url, params, body)
"#;

const PY_TRANSPORT_RETRIED: &str = r#"import time

from .settings import DEFAULTS


class Transport(object):
    def __init__(self, pool):
        self.pool = pool
        self.max_retries = DEFAULTS["max_retries"]

    def perform_request(self, method, url, params=None, body=None):
        for attempt in range(self.max_retries):
            connection = self.pool.get_connection()
            try:
                return connection.perform_request(method, url, params, body)
            except Exception:
                self.pool.mark_dead(connection)
                time.sleep(0.5)
        raise RuntimeError("no connection answered")
"#;

fn py_client(verb: &str) -> String {
    format!(
        r#"class Client(object):
    def __init__(self, transport):
        self.transport = transport

    def index(self, index, doc):
        return self.transport.perform_request('{verb}', '/%s/_doc' % index, body=doc)
"#
    )
}

#[test]
fn a_new_retry_in_a_transport_whose_callers_post_blocks() {
    let client = py_client("POST");
    let (code, json) =
        change(&[("es/client.py", &client)], &[("es/transport.py", PY_TRANSPORT_ONCE, PY_TRANSPORT_RETRIED)]);
    let found = errors_of(&json, "retry-non-idempotent");
    assert_eq!(code, Some(1), "{json}");
    assert!(
        found
            .iter()
            .any(|f| f["message"].as_str().unwrap_or("").contains("POST `connection.perform_request`")),
        "{json}"
    );
}

#[test]
fn a_new_retry_in_a_transport_whose_callers_only_read_does_not_block() {
    let client = py_client("GET");
    let (_, json) =
        change(&[("es/client.py", &client)], &[("es/transport.py", PY_TRANSPORT_ONCE, PY_TRANSPORT_RETRIED)]);
    assert_eq!(errors(&json), 0, "{json}");
    // Said, not silent: the method could not be told.
    assert!(
        json["findings"].as_array().expect("findings").iter().any(|f| f["kind"] == "retry-non-idempotent"
            && f["severity"] == "warning"
            && f["message"].as_str().unwrap_or("").contains("could not tell its method")),
        "{json}"
    );
}

#[test]
fn a_call_that_only_builds_a_request_is_not_one() {
    // `build_request(method, url)` makes a request object; nothing is sent.
    let base =
        "import time\n\ndef prepare(session, method, url):\n    return session.build_request(method, url)\n";
    let head = "import time\n\ndef prepare(session, method, url):\n    for attempt in range(3):\n        try:\n            return session.build_request(method, url)\n        except ValueError:\n            time.sleep(1)\n";
    let (_, json) = change(&[], &[("app/req.py", base, head)]);
    assert!(json["findings"].as_array().expect("findings").is_empty(), "{json}");
    // Nor is a constructor, or text made from a method and a URL.
    for call in ["Request(method, url)", "'%s %s' % (method, url) and str.format(method, url)"] {
        let head = head.replace("session.build_request(method, url)", call);
        let (_, json) = change(&[], &[("app/req.py", base, &head)]);
        assert_eq!(errors(&json), 0, "{call}: {json}");
    }
}

#[test]
fn a_loop_bound_raised_by_a_constant_is_a_raise() {
    let head = PY_TRANSPORT_RETRIED.replace("range(self.max_retries)", "range(self.max_retries + 1)");
    let client = py_client("GET");
    let (code, json) =
        change(&[("es/client.py", &client)], &[("es/transport.py", PY_TRANSPORT_RETRIED, &head)]);
    let found = errors_of(&json, "retry-count-raised");
    assert_eq!(code, Some(1), "{json}");
    assert_eq!(found.len(), 1, "{json}");
    let msg = found[0]["message"].as_str().unwrap_or("");
    assert!(msg.contains("from `self.max_retries` to `self.max_retries` + 1 attempts"), "{msg}");
}

#[test]
fn a_loop_bound_lowered_or_rewritten_is_not_a_raise() {
    let client = py_client("GET");
    // One fewer: `range(1, n)` goes round n - 1 times.
    let fewer = PY_TRANSPORT_RETRIED.replace("range(self.max_retries)", "range(1, self.max_retries)");
    let (_, json) =
        change(&[("es/client.py", &client)], &[("es/transport.py", PY_TRANSPORT_RETRIED, &fewer)]);
    assert!(errors_of(&json, "retry-count-raised").is_empty(), "{json}");
    // One fewer in Go: `i < n - 1`.
    let go = |header: &str| {
        format!(
            "package api\n\nimport (\n\t\"net/http\"\n\t\"time\"\n)\n\ntype Client struct {{\n\tc       *http.Client\n\tretries int\n}}\n\nfunc (c *Client) Get(url string) (*http.Response, error) {{\n\tvar err error\n\tfor {header} {{\n\t\tresp, e := c.c.Get(url)\n\t\tif e == nil {{\n\t\t\treturn resp, nil\n\t\t}}\n\t\terr = e\n\t\ttime.Sleep(time.Second)\n\t}}\n\treturn nil, err\n}}\n"
        )
    };
    let (_, json) = change(
        &[],
        &[("api/client.go", &go("i := 0; i < c.retries; i++"), &go("i := 0; i < c.retries-1; i++"))],
    );
    assert!(errors_of(&json, "retry-count-raised").is_empty(), "{json}");
    let (code, json) = change(
        &[],
        &[("api/client.go", &go("i := 0; i < c.retries; i++"), &go("i := 0; i <= c.retries; i++"))],
    );
    assert_eq!(code, Some(1), "{json}");
    assert_eq!(errors_of(&json, "retry-count-raised").len(), 1, "{json}");
}

const GO_DO_ONCE: &str = r#"package cloud

import (
	"net/http"
	"time"
)

type Client struct {
	client   *http.Client
	retries  int
	interval time.Duration
}

func (c *Client) Do(req *http.Request, v interface{}) error {
	_, err := c.do(req, v)
	return err
}

func (c *Client) do(req *http.Request, v interface{}) (bool, error) {
	resp, err := c.client.Do(req)
	if err != nil {
		return true, err
	}
	defer resp.Body.Close()
	return resp.StatusCode >= 500, nil
}
"#;

const GO_DO_RETRIED: &str = r#"package cloud

import (
	"net/http"
	"time"
)

type Client struct {
	client   *http.Client
	retries  int
	interval time.Duration
}

func (c *Client) Do(req *http.Request, v interface{}) error {
	var err error
	for i := 1; i <= c.retries; i++ {
		retry, e := c.do(req, v)
		err = e
		if retry {
			time.Sleep(c.interval)
			continue
		}
		return err
	}
	return err
}

func (c *Client) do(req *http.Request, v interface{}) (bool, error) {
	resp, err := c.client.Do(req)
	if err != nil {
		return true, err
	}
	defer resp.Body.Close()
	return resp.StatusCode >= 500, nil
}
"#;

fn go_runs(verb: &str) -> String {
    format!(
		"package cloud\n\nimport \"net/http\"\n\nfunc (c *Client) StartRun(url string) error {{\n\treq, err := http.NewRequest(\"{verb}\", url, nil)\n\tif err != nil {{\n\t\treturn err\n\t}}\n\treturn c.Do(req, nil)\n}}\n"
	)
}

#[test]
fn a_new_retry_in_do_reached_through_a_helper_takes_its_callers_method() {
    let runs = go_runs("POST");
    let (code, json) = change(&[("cloud/runs.go", &runs)], &[("cloud/client.go", GO_DO_ONCE, GO_DO_RETRIED)]);
    assert_eq!(code, Some(1), "{json}");
    let found = errors_of(&json, "retry-non-idempotent");
    assert!(
        found.iter().any(|f| f["message"].as_str().unwrap_or("").contains("POST `c.client.Do`")),
        "{json}"
    );
}

#[test]
fn a_new_retry_in_do_whose_callers_only_get_does_not_block() {
    let runs = go_runs("GET");
    let (_, json) = change(&[("cloud/runs.go", &runs)], &[("cloud/client.go", GO_DO_ONCE, GO_DO_RETRIED)]);
    assert_eq!(errors(&json), 0, "{json}");
}
