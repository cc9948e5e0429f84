//! A project's own retry helpers resolved through the head tree of a real
//! git repository: the helper's definition lives in a file the change does
//! not touch, so only the tree can say whether it retries.

use crate::common;
use common::git;

use std::path::Path;
use std::process::Command;

/// Commits `unchanged` and `base` on main, then `head` on a branch.
fn repo(unchanged: &[(&str, &str)], changed: &[(&str, &str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    let put = |path: &str, text: &str| {
        let p = d.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    for (path, text) in unchanged {
        put(path, text);
    }
    for (path, base, _) in changed {
        put(path, base);
    }
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "base"]);
    git(d, &["checkout", "-q", "-b", "agent/change"]);
    for (path, _, head) in changed {
        put(path, head);
    }
    git(d, &["commit", "-q", "-am", "head"]);
    dir
}

fn scan(dir: &Path) -> Vec<serde_json::Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .args([
            "scan",
            "--repo",
            &dir.display().to_string(),
            "--base",
            "main",
            "--head",
            "HEAD",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    json["findings"].as_array().unwrap().clone()
}

const RETRYING: &str = "import time\n\n\ndef resilient(fn):\n    for attempt in range(5):\n        try:\n            return fn()\n        except IOError:\n            time.sleep(attempt)\n    return fn()\n";
const PLAIN: &str = "def resilient(fn):\n    return fn()\n";
const ORDERS_BASE: &str =
    "from lib.net import resilient\n\n\ndef create(s, o):\n    return resilient(lambda: s.get('/orders'))\n";
const ORDERS_HEAD: &str = "from lib.net import resilient\n\n\ndef create(s, o):\n    return resilient(lambda: s.post('/orders', json=o))\n";

#[test]
fn a_write_through_a_helper_defined_in_an_unchanged_file_that_retries_is_reported() {
    let dir = repo(&[("lib/net.py", RETRYING)], &[("app/orders.py", ORDERS_BASE, ORDERS_HEAD)]);
    let findings = scan(dir.path());
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert_eq!(
        (f["kind"].as_str(), f["rule"].as_str(), f["line"].as_u64()),
        (Some("retry-non-idempotent"), Some("python/retry-helper-write"), Some(5))
    );
    assert_eq!(
        f["message"],
        "a write is now sent through a retry helper: a POST through `resilient`, which retries (defined at lib/net.py:4)"
    );
}

#[test]
fn a_write_through_a_helper_that_does_not_retry_is_not_reported() {
    let dir = repo(&[("lib/net.py", PLAIN)], &[("app/orders.py", ORDERS_BASE, ORDERS_HEAD)]);
    assert!(scan(dir.path()).is_empty());
    // Two definitions of the name, one of which does not retry: ambiguous, not reported.
    let dir = repo(
        &[("lib/net.py", RETRYING), ("lib/other.py", PLAIN)],
        &[("app/orders.py", ORDERS_BASE, ORDERS_HEAD)],
    );
    assert!(scan(dir.path()).is_empty());
}

const CLIENT_BASE: &str = "export const appFetch = (url: string, init?: RequestInit) => fetch(url, init);\n";
const CLIENT_HEAD: &str =
    "import fetchRetry from 'fetch-retry';\n\nexport const appFetch = fetchRetry(fetch, { retries: 3 });\n";

#[test]
fn a_shared_wrapper_made_retrying_is_reported_with_the_writes_sent_through_it() {
    let orders = "import { appFetch } from './client';\n\nexport function create(o: object) {\n  return appFetch('/orders', { method: 'POST', body: JSON.stringify(o) });\n}\n";
    let dir = repo(&[("src/orders.ts", orders)], &[("src/client.ts", CLIENT_BASE, CLIENT_HEAD)]);
    let findings = scan(dir.path());
    let helper: Vec<_> = findings.iter().filter(|f| f["rule"] == "js/retry-helper-write").collect();
    assert_eq!(helper.len(), 1, "{findings:#?}");
    assert_eq!(helper[0]["line"], 3);
    assert_eq!(
        helper[0]["message"],
        "a write is now sent through a retry helper: `appFetch` now retries, and writes are sent through it: src/orders.ts:4 (POST)"
    );
}

#[test]
fn a_shared_wrapper_made_retrying_with_only_reads_through_it_is_not_reported() {
    let orders = "import { appFetch } from './client';\n\nexport function list() {\n  return appFetch('/orders');\n}\n";
    let dir = repo(&[("src/orders.ts", orders)], &[("src/client.ts", CLIENT_BASE, CLIENT_HEAD)]);
    let findings = scan(dir.path());
    assert!(findings.iter().all(|f| f["rule"] != "js/retry-helper-write"), "{findings:#?}");
}

#[test]
fn a_copy_of_an_unchanged_file_sends_nothing_new() {
    // `app/orders.py` already posts through the retrying helper; the change
    // adds a generated copy of it.
    let dir = repo(
        &[("lib/net.py", RETRYING), ("app/orders.py", ORDERS_HEAD)],
        &[("app/legacy/orders.py", "", ORDERS_HEAD)],
    );
    let findings = scan(dir.path());
    assert!(findings.iter().all(|f| f["rule"] != "python/retry-helper-write"), "{findings:#?}");
    // The same file added without the original: reported.
    let dir = repo(&[("lib/net.py", RETRYING)], &[("app/legacy/orders.py", "", ORDERS_HEAD)]);
    assert_eq!(scan(dir.path()).len(), 1);
}

#[test]
fn a_retrying_wrapper_moved_into_a_file_did_not_become_retrying() {
    let orders = "import { appFetch } from './client';\n\nexport function create(o: object) {\n  return appFetch('/orders', { method: 'POST', body: JSON.stringify(o) });\n}\n";
    // The retrying definition is new in this file (moved from elsewhere),
    // not a non-retrying one changed in place.
    let dir = repo(&[("src/orders.ts", orders)], &[("src/client.ts", "export const x = 1;\n", CLIENT_HEAD)]);
    let findings = scan(dir.path());
    assert!(findings.iter().all(|f| f["rule"] != "js/retry-helper-write"), "{findings:#?}");
}

#[test]
fn a_copy_is_not_new_for_the_name_based_rule_either() {
    let net = RETRYING.replace("resilient", "send_with_retry");
    let orders = ORDERS_HEAD.replace("resilient", "send_with_retry");
    let dir =
        repo(&[("lib/net.py", &net), ("app/orders.py", &orders)], &[("app/legacy/orders.py", "", &orders)]);
    let findings = scan(dir.path());
    assert!(findings.iter().all(|f| f["rule"] != "python/retry-helper-write"), "{findings:#?}");
    // Without the original, the name alone reports it.
    let dir = repo(&[("lib/net.py", &net)], &[("app/legacy/orders.py", "", &orders)]);
    let findings = scan(dir.path());
    // (The operation model reads the helper too, and adds a warning that
    // its new retry has no jitter.)
    let errors: Vec<&serde_json::Value> = findings.iter().filter(|f| f["severity"] == "error").collect();
    assert_eq!(errors.len(), 1, "{findings:#?}");
    assert_eq!(errors[0]["rule"], "python/retry-helper-write");
}

const CLIENT_GO: &str = "package api\n\nimport (\n\t\"net/http\"\n\t\"time\"\n)\n\ntype Client struct{ h *http.Client }\n\nfunc (c *Client) NewRequest(method, path string) (*http.Response, error) {\n\tvar err error\n\tfor attempt := 0; attempt < 5; attempt++ {\n\t\treq, _ := http.NewRequest(method, path, nil)\n\t\tif _, err = c.h.Do(req); err == nil {\n\t\t\treturn nil, nil\n\t\t}\n\t\ttime.Sleep(time.Second)\n\t}\n\treturn nil, err\n}\n";

#[test]
fn brand_new_writes_through_an_unchanged_retrying_client_are_one_finding_listing_them() {
    let base = "package api\n\nimport \"net/http\"\n\nfunc (c *Client) List() {\n\tc.NewRequest(http.MethodGet, \"items\")\n}\n";
    let head = format!(
        "{base}\nfunc (c *Client) Archive(id string) {{\n\tc.NewRequest(http.MethodPost, \"items/\"+id+\"/archive\")\n}}\n\nfunc (c *Client) Star(id string) {{\n\tc.NewRequest(http.MethodPost, \"items/\"+id+\"/star\")\n}}\n"
    );
    let dir = repo(&[("api/client.go", CLIENT_GO)], &[("api/items.go", base, &head)]);
    let findings = scan(dir.path());
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert_eq!((f["path"].as_str(), f["line"].as_u64()), (Some("api/items.go"), Some(10)));
    let msg = f["message"].as_str().unwrap();
    assert!(msg.contains("2 new writes through the retrying client defined in api/client.go"), "{msg}");
    assert!(msg.contains("api/items.go:10") && msg.contains("api/items.go:14"), "{msg}");
    assert_eq!(f["head"]["writes"].as_array().map(Vec::len), Some(2));
}

#[test]
fn an_existing_write_moved_into_a_branch_or_another_builder_is_not_new() {
    let base = "package api\n\nimport \"net/http\"\n\nfunc (c *Client) Create() {\n\tc.NewRequest(http.MethodPost, \"items\")\n}\n";
    let head = "package api\n\nimport \"net/http\"\n\nfunc (c *Client) Create(big bool) {\n\tif big {\n\t\tc.NewRequest(http.MethodPost, \"items\")\n\t} else {\n\t\tc.NewRequest(\n\t\t\thttp.MethodPost,\n\t\t\t\"items\",\n\t\t)\n\t}\n}\n";
    let dir = repo(&[("api/client.go", CLIENT_GO)], &[("api/items.go", base, head)]);
    assert!(scan(dir.path()).is_empty());
    // Renamed, the same request target is still the same write.
    let renamed = base.replace("Create()", "CreateItem()");
    let dir = repo(&[("api/client.go", CLIENT_GO)], &[("api/items.go", base, &renamed)]);
    assert!(scan(dir.path()).is_empty());
    // A GET that became a POST in place is new.
    let get = base.replace("MethodPost", "MethodGet");
    let dir = repo(&[("api/client.go", CLIENT_GO)], &[("api/items.go", &get, base)]);
    assert_eq!(scan(dir.path()).len(), 1);
}

/// A helper handed the response of a write (the write was sent when the
/// arguments were evaluated) cannot send it again: a long-running
/// operation's handler that polls it, or a promise awaited with retries.
#[test]
fn a_write_sent_before_the_helper_runs_is_not_sent_through_it() {
    let sent_first = [
        // Python: the POST's response is the argument.
        (
            "app/orders.py",
            "from lib.net import resilient\n\n\ndef create(s, o):\n    return resilient(s.get('/orders'))\n",
            "from lib.net import resilient\n\n\ndef create(s, o):\n    return resilient(s.post('/orders', json=o))\n",
        ),
        // Python: a client method sent with the verb as its argument.
        (
            "app/models.py",
            "from lib.net import resilient\n\n\ndef update(c, m):\n    return resilient(c.body('get', url='models'))\n",
            "from lib.net import resilient\n\n\ndef update(c, m):\n    return resilient(c.body('patch', url='models', json=m))\n",
        ),
    ];
    for (path, base, head) in sent_first {
        let dir = repo(&[("lib/net.py", RETRYING)], &[(path, base, head)]);
        let findings = scan(dir.path());
        assert!(findings.iter().all(|f| f["rule"] != "python/retry-helper-write"), "{path}: {findings:#?}");
    }
    // Handed what it can send again: a function, a method reference, a
    // request to send, or the verb itself. Each is reported.
    let resent = [
        "resilient(lambda: s.post('/orders', json=o))",
        "resilient(s.post, '/orders', json=o)",
        "resilient(requests.Request('POST', '/orders', json=o))",
        "resilient('POST', '/orders', json=o)",
    ];
    for call in resent {
        let head = format!(
            "import requests\nfrom lib.net import resilient\n\n\ndef create(s, o):\n    return {call}\n"
        );
        let base = "import requests\nfrom lib.net import resilient\n\n\ndef create(s, o):\n    return None\n";
        let dir = repo(&[("lib/net.py", RETRYING)], &[("app/orders.py", base, &head)]);
        let findings = scan(dir.path());
        assert!(findings.iter().any(|f| f["rule"] == "python/retry-helper-write"), "{call}: {findings:#?}");
    }
}

/// Through a helper whose name does not say retry (the pack's name-keyed
/// rule reads text, so it is the resolver that decides here).
#[test]
fn a_promise_of_a_write_handed_to_a_retrying_wrapper_is_not_resent() {
    let retrying = "export async function resilientCall<T>(fn: () => Promise<T>): Promise<T> {\n  for (let attempt = 0; attempt < 5; attempt++) {\n    try {\n      return await fn();\n    } catch (e) {\n      await new Promise((r) => setTimeout(r, 100 * attempt));\n    }\n  }\n  return fn();\n}\n";
    let base = "import { resilientCall } from './retry';\n\nexport function create(o: object) {\n  return resilientCall(() => fetch('/orders'));\n}\n";
    let eager = "import { resilientCall } from './retry';\n\nexport function create(o: object) {\n  return resilientCall(fetch('/orders', { method: 'POST', body: JSON.stringify(o) }));\n}\n";
    let deferred = "import { resilientCall } from './retry';\n\nexport function create(o: object) {\n  return resilientCall(() => fetch('/orders', { method: 'POST', body: JSON.stringify(o) }));\n}\n";
    let dir = repo(&[("src/retry.ts", retrying)], &[("src/orders.ts", base, eager)]);
    let findings = scan(dir.path());
    assert!(findings.iter().all(|f| f["rule"] != "js/retry-helper-write"), "{findings:#?}");
    let dir = repo(&[("src/retry.ts", retrying)], &[("src/orders.ts", base, deferred)]);
    let findings = scan(dir.path());
    assert!(findings.iter().any(|f| f["rule"] == "js/retry-helper-write"), "{findings:#?}");
}

/// A sending method made retrying inside a class: its sibling methods that
/// hand it a write verb are the writes sent through it (the class around
/// the helper is not the helper's own body).
#[test]
fn a_method_made_retrying_reports_the_writes_its_sibling_methods_send() {
    let base = "import requests\n\n\nclass Http:\n    def send_request(self, http_method, path, body=None):\n        return http_method(path, data=body)\n\n    def post(self, path, body=None):\n        return self.send_request(requests.post, path, body)\n\n    def get(self, path):\n        return self.send_request(requests.get, path)\n";
    let head = base.replace(
        "        return http_method(path, data=body)\n",
        "        for attempt in range(3):\n            try:\n                return http_method(path, data=body)\n            except OSError:\n                time.sleep(2)\n",
    );
    let head = format!("import time\n{head}");
    // Another class's method of the same name, called on another object:
    // not this method's caller.
    let other = "import requests\n\n\ndef upload(queue, body):\n    return queue.send_request(requests.post, '/jobs', body)\n";
    let dir = repo(&[("app/queue.py", other)], &[("app/http.py", base, &head)]);
    let findings = scan(dir.path());
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert_eq!((f["rule"].as_str(), f["line"].as_u64()), (Some("python/retry-helper-write"), Some(7)));
    let msg = f["message"].as_str().unwrap();
    assert!(msg.contains("`send_request` now retries") && msg.contains("app/http.py:14 (POST)"), "{msg}");
    assert!(!msg.contains("app/queue.py"), "{msg}");
    // The same class whose siblings only read: nothing to report.
    let reads_only = |t: &str| t.replace("requests.post", "requests.get");
    let dir = repo(&[], &[("app/http.py", &reads_only(base), &reads_only(&head))]);
    assert!(scan(dir.path()).is_empty());
}

/// A POST whose endpoint says nothing, sent by a function the project names
/// as a read (`query`, `run_search`, `rowCount`): a note that says why,
/// in Python and JS/TS; the same POST sent by any other function is a write.
#[test]
fn a_post_sent_by_a_function_named_as_a_read_is_a_warning_that_says_why() {
    let py = |name: &str| {
        format!("from lib.net import resilient\n\n\nclass Client:\n    def {name}(self, s, q):\n        path = '/v1/datasets/_apl'\n\n        @resilient\n        def _send():\n            return s.post(path, json=q)\n\n        return _send()\n")
    };
    // The function existed and posted once: the change sends it through
    // the retrying helper.
    let once = |name: &str| {
        format!("class Client:\n    def {name}(self, s, q):\n        path = '/v1/datasets/_apl'\n        return s.post(path, json=q)\n")
    };
    for (name, read) in [("query", true), ("run_search", true), ("ingest", false), ("query_and_store", false)]
    {
        let dir = repo(&[("lib/net.py", RETRYING)], &[("app/client.py", &once(name), &py(name))]);
        let findings = scan(dir.path());
        let f: Vec<_> = findings.iter().filter(|f| f["rule"] == "python/retry-helper-write").collect();
        assert_eq!(f.len(), 1, "{name}: {findings:#?}");
        let (severity, msg) = (f[0]["severity"].as_str().unwrap(), f[0]["message"].as_str().unwrap());
        if read {
            // A name alone lowers the error to a warning that says so, never to a note.
            assert_eq!(severity, "warning", "{name}: {msg}");
            assert!(msg.contains(&format!("it is sent by `{name}`, a function named as a read")), "{msg}");
            assert!(msg.contains("judged a read only by a name"), "{msg}");
        } else {
            assert_eq!(severity, "error", "{name}: {msg}");
        }
    }
    let retrying = "export async function resilientCall<T>(fn: () => Promise<T>): Promise<T> {\n  for (let attempt = 0; attempt < 5; attempt++) {\n    try {\n      return await fn();\n    } catch (e) {\n      await new Promise((r) => setTimeout(r, 100 * attempt));\n    }\n  }\n  return fn();\n}\n";
    let ts = |name: &str| {
        format!("import {{ resilientCall }} from './retry';\n\nexport async function {name}(q: object) {{\n  return resilientCall(() => http.post(endpoint, q));\n}}\n")
    };
    let ts_once = |name: &str| {
        format!("export async function {name}(q: object) {{\n  return http.post(endpoint, q);\n}}\n")
    };
    for (name, read) in [("rowCount", true), ("createRows", false)] {
        let dir = repo(&[("src/retry.ts", retrying)], &[("src/rows.ts", &ts_once(name), &ts(name))]);
        let findings = scan(dir.path());
        let f: Vec<_> = findings.iter().filter(|f| f["rule"] == "js/retry-helper-write").collect();
        assert_eq!(f.len(), 1, "{name}: {findings:#?}");
        assert_eq!(f[0]["severity"], if read { "warning" } else { "error" }, "{name}: {findings:#?}");
    }
}

/// A write in a function the base did not have, sent through the
/// project's retrying helper: new code, a warning that says so. The same
/// write in a function that existed and posted once blocks.
#[test]
fn a_write_in_a_new_function_through_a_retrying_helper_is_a_warning() {
    let head = "from lib.net import resilient\n\n\nclass Client:\n    def ingest(self, s, q):\n        @resilient\n        def _send():\n            return s.post('/v1/ingest', json=q)\n\n        return _send()\n";
    let dir = repo(&[("lib/net.py", RETRYING)], &[("app/client.py", "class Client:\n    pass\n", head)]);
    let findings = scan(dir.path());
    let f: Vec<_> = findings.iter().filter(|f| f["rule"] == "python/retry-helper-write").collect();
    assert_eq!(f.len(), 1, "{findings:#?}");
    assert_eq!(f[0]["severity"], "warning", "{findings:#?}");
    assert!(f[0]["message"].as_str().unwrap().contains("a function the base did not have"), "{findings:#?}");
    // In a file the change adds: a new client sending writes through the
    // retrying helper, which blocks.
    let dir = repo(&[("lib/net.py", RETRYING)], &[("app/other.py", "x = 1\n", "x = 2\n")]);
    std::fs::write(dir.path().join("app/new_client.py"), head).unwrap();
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "--amend", "--no-edit"]);
    let findings = scan(dir.path());
    let f: Vec<_> = findings.iter().filter(|f| f["rule"] == "python/retry-helper-write").collect();
    assert_eq!(f.len(), 1, "{findings:#?}");
    assert_eq!(f[0]["severity"], "error", "{findings:#?}");
    let base = "class Client:\n    def ingest(self, s, q):\n        return s.post('/v1/ingest', json=q)\n";
    let dir = repo(&[("lib/net.py", RETRYING)], &[("app/client.py", base, head)]);
    let findings = scan(dir.path());
    let f: Vec<_> = findings.iter().filter(|f| f["rule"] == "python/retry-helper-write").collect();
    assert_eq!(f.len(), 1, "{findings:#?}");
    assert_eq!(f[0]["severity"], "error", "{findings:#?}");
}

#[test]
fn writes_beside_a_retrying_client_the_change_adds_are_one_finding_that_lists_them() {
    let client = "import time\nimport httpx\n\n\nclass Api:\n    def _request(self, method, path, **kw):\n        for attempt in range(3):\n            try:\n                return httpx.request(method, self.base + path, **kw)\n            except httpx.HTTPError:\n                time.sleep(attempt)\n        return httpx.request(method, self.base + path, **kw)\n\n    def create_agent(self, body):\n        return self._request('POST', '/agents', json=body)\n\n    def create_server(self, body):\n        return self._request('POST', '/servers', json=body)\n\n    def rename(self, name):\n        return self._request('PATCH', '/agents/me', json={'name': name})\n";
    let dir = repo(&[], &[("app/__init__.py", "", "# the API client\n")]);
    let d = dir.path();
    std::fs::write(d.join("app/api_client.py"), client).unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "a new client"]);
    let findings = scan(d);
    let helper: Vec<_> = findings.iter().filter(|f| f["rule"] == "python/retry-helper-write").collect();
    assert_eq!(helper.len(), 1, "{findings:#?}");
    let message = helper[0]["message"].as_str().unwrap();
    assert!(
        message.contains("3 new writes through the retrying client defined in app/api_client.py"),
        "{message}"
    );
    assert_eq!(helper[0]["head"]["writes"].as_array().map(Vec::len), Some(3), "{:#?}", helper[0]);
}
