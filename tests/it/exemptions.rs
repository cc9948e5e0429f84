//! Every exemption is a door: what reads, what ships and what moved are
//! decided from evidence the change cannot choose (the request's endpoint,
//! the build's manifests, whether moved code still acts), and a judgement
//! that rests on a name alone never silently passes.
//!
//! Each door has a change that must block through it and a control in
//! which the same exemption rightly applies.

use crate::common::Repo;
use serde_json::Value;

/// `scan main..feature` after writing `base` on main and `head` on a branch.
fn scan(unchanged: &[(&str, &str)], base: &[(&str, &str)], head: &[(&str, &str)]) -> (i32, Value) {
    let repo = Repo::new();
    for (path, text) in unchanged.iter().chain(base) {
        repo.write(path, text);
    }
    repo.commit("base");
    repo.branch("feature");
    for (path, text) in head {
        repo.write(path, text);
    }
    repo.commit("head");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .args(["scan", "--repo", &repo.path().display().to_string(), "--base", "main", "--head", "feature"])
        .args(["--format", "json"])
        .output()
        .expect("run retrygate");
    let code = out.status.code().unwrap_or(-1);
    assert!(matches!(code, 0 | 1), "{}", String::from_utf8_lossy(&out.stderr));
    (code, serde_json::from_slice(&out.stdout).expect("JSON verdict"))
}

/// `(severity, kind, path, message)` of every finding.
fn findings(v: &Value) -> Vec<(String, String, String, String)> {
    v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or_default().to_string();
            (s("severity"), s("kind"), s("path"), s("message"))
        })
        .collect()
}

fn has(v: &Value, severity: &str, kind: &str) -> bool {
    findings(v).iter().any(|(s, k, _, _)| s == severity && k == kind)
}

// ---- what reads: the request, not a name -------------------------------

fn rust_crate(body: &str) -> [(&'static str, String); 2] {
    [
        ("Cargo.toml", "[package]\nname = \"svc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n".to_string()),
        (
            "src/lib.rs",
            format!(
                "use backon::{{ExponentialBuilder, Retryable}};\n\npub async fn call(c: &reqwest::Client) -> Result<reqwest::Response, reqwest::Error> {{\n{body}\n}}\n"
            ),
        ),
    ]
}

fn retried_post(url: &str) -> String {
    format!(
        "    (|| async {{ c.post(\"{url}\").send().await }})\n        .retry(ExponentialBuilder::default().with_jitter().with_max_times(3))\n        .await"
    )
}

fn once_post(url: &str) -> String {
    format!("    c.post(\"{url}\").send().await")
}

fn as_refs<'a>(files: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    files.iter().map(|(p, t)| (*p, t.as_str())).collect()
}

#[test]
fn a_retried_post_to_a_reset_token_endpoint_is_a_write_and_an_oauth_token_exchange_is_a_read() {
    for url in ["https://api.example.com/v1/users/reset-token", "https://api.example.com/v1/revoke_token"] {
        let (base, head) = (rust_crate(&once_post(url)), rust_crate(&retried_post(url)));
        let (code, v) = scan(&[], &as_refs(&base), &as_refs(&head));
        assert_eq!(code, 1, "{url}: {v}");
        assert!(has(&v, "error", "retry-non-idempotent"), "{url}: {v}");
    }
    for url in ["https://auth.example.com/oauth/token", "https://auth.example.com/v1/access-token"] {
        let (base, head) = (rust_crate(&once_post(url)), rust_crate(&retried_post(url)));
        let (code, v) = scan(&[], &as_refs(&base), &as_refs(&head));
        assert_eq!(code, 0, "{url}: {v}");
        let f = findings(&v);
        assert!(
            f.iter().any(|(s, k, _, m)| s == "note"
                && k == "retry-non-idempotent"
                && m.contains("token exchange")),
            "{url}: the note says why: {f:?}"
        );
    }
}

const PY_HELPER: &str = "import time\n\n\ndef resilient(fn):\n    for attempt in range(5):\n        try:\n            return fn()\n        except IOError:\n            time.sleep(attempt)\n    return fn()\n";

#[test]
fn a_sender_named_as_a_read_does_not_outweigh_the_endpoint_it_writes() {
    // The endpoint is written, and it updates: the function's name says
    // nothing against it.
    let base = "def update_by_query(s, index, q):\n    return s.post(f'http://es:9200/{index}/_update_by_query', json=q)\n";
    let head = "from lib.net import resilient\n\n\ndef update_by_query(s, index, q):\n    return resilient(lambda: s.post(f'http://es:9200/{index}/_update_by_query', json=q))\n";
    let (code, v) = scan(&[("lib/net.py", PY_HELPER)], &[("app/index.py", base)], &[("app/index.py", head)]);
    assert_eq!(code, 1, "{v}");
    assert!(
        findings(&v)
            .iter()
            .all(|(s, _, p, m)| p != "app/index.py" || s != "note" || !m.contains("judged a read")),
        "{v}"
    );
    // The endpoint is not written: the name alone lowers the error to a
    // warning that says so, never to a note.
    let base = "def run_query(s, url, q):\n    return s.post(url, json=q)\n";
    let head = "from lib.net import resilient\n\n\ndef run_query(s, url, q):\n    return resilient(lambda: s.post(url, json=q))\n";
    let (_, v) = scan(&[("lib/net.py", PY_HELPER)], &[("app/index.py", base)], &[("app/index.py", head)]);
    let by_name: Vec<_> =
        findings(&v).into_iter().filter(|(_, _, _, m)| m.contains("judged a read only by a name")).collect();
    assert!(!by_name.is_empty(), "{v}");
    assert!(by_name.iter().all(|(s, _, _, _)| s == "warning"), "{by_name:?}");
    // A written read endpoint is a read, reported as a note that says why.
    let base = "def lookup(s, q):\n    return s.post('https://api.example.com/v1/logs/_search', json=q)\n";
    let head = "from lib.net import resilient\n\n\ndef lookup(s, q):\n    return resilient(lambda: s.post('https://api.example.com/v1/logs/_search', json=q))\n";
    let (_, v) = scan(&[("lib/net.py", PY_HELPER)], &[("app/index.py", base)], &[("app/index.py", head)]);
    assert!(
        findings(&v).iter().all(|(s, _, p, _)| p != "app/index.py" || s != "error"),
        "a POST to /_search is a read: {v}"
    );
}

// ---- what ships: the build, not a file name ------------------------------

const PY_ONCE: &str = "import requests\n\n\ndef upload_keys(user, keys):\n    return requests.post('https://keys.example.com/v1/keys/upload', json={'user': user, 'keys': keys})\n";
const PY_RETRIED: &str = "import requests\nfrom tenacity import retry, stop_after_attempt, wait_random_exponential\n\n\n@retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=10))\ndef upload_keys(user, keys):\n    return requests.post('https://keys.example.com/v1/keys/upload', json={'user': user, 'keys': keys})\n";

#[test]
fn a_module_named_like_an_e2e_test_ships_and_a_file_in_an_e2e_folder_does_not() {
    for path in ["handlers/e2e_keys.py", "crypto/e2e.py", "sync/keys_e2e.py"] {
        let (code, v) = scan(&[], &[(path, PY_ONCE)], &[(path, PY_RETRIED)]);
        assert_eq!(code, 1, "{path}: {v}");
        assert!(has(&v, "error", "retry-non-idempotent"), "{path}: {v}");
    }
    for path in ["e2e/upload_keys.py", "qa/e2e-tests/keys.py", "tests/test_keys.py"] {
        let (code, v) = scan(&[], &[(path, PY_ONCE)], &[(path, PY_RETRIED)]);
        assert_eq!(code, 0, "{path}: {v}");
        let f = findings(&v);
        assert!(f.iter().any(|(s, _, _, m)| s == "note" && m.contains("test code")), "{path}: {f:?}");
    }
}

#[test]
fn a_crate_a_manifest_depends_on_with_a_dotted_key_ships() {
    let lib_once = "use backon::{ExponentialBuilder, Retryable};\npub async fn charge(c: &reqwest::Client) -> Result<reqwest::Response, reqwest::Error> {\n    (|| async { c.get(\"https://pay.example.com/v1/status\").send().await })\n        .retry(ExponentialBuilder::default().with_jitter().with_max_times(3))\n        .await\n}\n";
    let lib_post = lib_once.replace(
        "c.get(\"https://pay.example.com/v1/status\")",
        "c.post(\"https://pay.example.com/v1/charges\")",
    );
    let pkg = |name: &str, extra: &str| {
        format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n{extra}")
    };
    let workspace = "[workspace]\nmembers = [\"app\", \"payments-client\", \"itest\"]\n[workspace.dependencies]\npayments-client = { path = \"payments-client\" }\n";
    let itest = pkg("itest", "[dev-dependencies]\npayments-client = { workspace = true }\n");
    let client = pkg("payments-client", "");
    // The change to the client crate, with the app's manifest as given.
    let scan_with = |app_deps: &str| {
        let app = pkg("app", app_deps);
        let unchanged = [
            ("Cargo.toml", workspace),
            ("app/Cargo.toml", app.as_str()),
            ("app/src/main.rs", "fn main() {}\n"),
            ("itest/Cargo.toml", itest.as_str()),
            ("itest/src/lib.rs", "\n"),
            ("payments-client/Cargo.toml", client.as_str()),
        ];
        scan(
            &unchanged,
            &[("payments-client/src/lib.rs", lib_once)],
            &[("payments-client/src/lib.rs", &lib_post)],
        )
    };
    for app_deps in [
        "[dependencies]\npayments-client.workspace = true\n",
        "[dependencies]\npayments-client = { workspace = true }\n",
    ] {
        let (code, v) = scan_with(app_deps);
        assert_eq!(code, 1, "{app_deps}: {v}");
        assert!(has(&v, "error", "retry-non-idempotent"), "{app_deps}: {v}");
    }
    // Named only under [dev-dependencies]: test support, a note that says so.
    let (code, v) = scan_with("");
    assert_eq!(code, 0, "{v}");
    assert!(findings(&v).iter().any(|(s, _, _, m)| s == "note" && m.contains("test support")), "{v}");
}

// ---- what moved: it holds only if it still acts --------------------------

const GO_BASE: &str = "package pkg\n\nimport (\n\t\"net/http\"\n\t\"time\"\n)\n\nfunc Send(c *http.Client, req *http.Request) (*http.Response, error) {\n\tvar resp *http.Response\n\tvar err error\n\tfor attempt := 0; attempt < 3; attempt++ {\n\t\tresp, err = c.Do(req)\n\t\tif err == nil {\n\t\t\treturn resp, nil\n\t\t}\n\t\tif req.Method != http.MethodGet {\n\t\t\treturn resp, err\n\t\t}\n\t\ttime.Sleep(time.Second)\n\t}\n\treturn resp, err\n}\n";

fn go_head(helper: &str, call: &str) -> String {
    format!("package pkg\n\nimport (\n\t\"log\"\n\t\"net/http\"\n\t\"time\"\n)\n\n{helper}\nfunc Send(c *http.Client, req *http.Request) (*http.Response, error) {{\n\tvar resp *http.Response\n\tvar err error\n\tfor attempt := 0; attempt < 3; attempt++ {{\n\t\tresp, err = c.Do(req)\n\t\tif err == nil {{\n\t\t\treturn resp, nil\n\t\t}}\n{call}\n\t\ttime.Sleep(time.Second)\n\t}}\n\treturn resp, err\n}}\n")
}

#[test]
fn a_get_only_guard_moved_into_a_helper_holds_only_if_the_helper_still_decides() {
    // Moved into a function that only logs: the guard is gone.
    let logs = go_head(
        "func logMethod(req *http.Request) {\n\tif req.Method != http.MethodGet {\n\t\tlog.Printf(\"retrying %s\", req.Method)\n\t}\n}\n",
        "\t\tlogMethod(req)",
    );
    let (code, v) = scan(&[], &[("pkg/client.go", GO_BASE)], &[("pkg/client.go", &logs)]);
    assert_eq!(code, 1, "{v}");
    assert!(has(&v, "error", "retry-non-idempotent"), "{v}");
    // Moved into a function whose answer decides whether to go round: held.
    let decides = go_head(
        "func idempotent(req *http.Request) bool {\n\tlog.Printf(\"method %s\", req.Method)\n\treturn req.Method == http.MethodGet\n}\n",
        "\t\tif !idempotent(req) {\n\t\t\treturn resp, err\n\t\t}",
    );
    let (code, v) = scan(&[], &[("pkg/client.go", GO_BASE)], &[("pkg/client.go", &decides)]);
    assert_eq!(code, 0, "{v}");
    assert!(!has(&v, "error", "retry-non-idempotent"), "{v}");
}

// ---- POSTs that read, by their protocol -----------------------------------

fn py_rpc(method: &str, retried: bool) -> String {
    let deco = if retried {
        "from tenacity import retry, stop_after_attempt, wait_random_exponential\n\n\n@retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=10))\n"
    } else {
        "\n\n"
    };
    format!("import requests\n{deco}def rpc(url, params):\n    payload = {{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"{method}\", \"params\": params}}\n    return requests.post(url, json=payload).json()\n")
}

#[test]
fn a_json_rpc_read_sent_as_post_is_a_read_and_a_transaction_is_a_write() {
    for method in ["eth_call", "getAccountInfo", "simulateTransaction"] {
        let (code, v) = scan(
            &[],
            &[("chain/rpc.py", &py_rpc(method, false))],
            &[("chain/rpc.py", &py_rpc(method, true))],
        );
        assert_eq!(code, 0, "{method}: {v}");
        assert!(!has(&v, "error", "retry-non-idempotent"), "{method}: {v}");
    }
    for method in ["eth_sendRawTransaction", "sendTransaction"] {
        let (code, v) = scan(
            &[],
            &[("chain/rpc.py", &py_rpc(method, false))],
            &[("chain/rpc.py", &py_rpc(method, true))],
        );
        assert_eq!(code, 1, "{method}: {v}");
        assert!(has(&v, "error", "retry-non-idempotent"), "{method}: {v}");
    }
}

#[test]
fn a_graphql_query_sent_as_post_is_a_read_and_a_mutation_is_a_write() {
    let ts = |doc: &str, retried: bool| {
        let call = format!("fetch(GRAPHQL_URL, {{ method: \"POST\", headers: {{ \"content-type\": \"application/json\" }}, body: JSON.stringify({{ query: `{doc}`, variables: {{ id }} }}) }})");
        if retried {
            format!("export async function run(id: string) {{\n  for (let attempt = 0; attempt < 3; attempt++) {{\n    try {{\n      return await {call};\n    }} catch (e) {{\n      await new Promise((r) => setTimeout(r, 400));\n    }}\n  }}\n  throw new Error(\"gave up\");\n}}\n")
        } else {
            format!("export async function run(id: string) {{\n  return await {call};\n}}\n")
        }
    };
    let query = "query Run($id: ID!) { run(id: $id) { status } }";
    let (code, v) = scan(&[], &[("web/run.ts", &ts(query, false))], &[("web/run.ts", &ts(query, true))]);
    assert!(!has(&v, "error", "retry-non-idempotent"), "{v}");
    assert_eq!(code, 0, "{v}");
    let mutation = "mutation Cancel($id: ID!) { cancelRun(id: $id) { id } }";
    let (code, v) =
        scan(&[], &[("web/run.ts", &ts(mutation, false))], &[("web/run.ts", &ts(mutation, true))]);
    assert_eq!(code, 1, "{v}");
    assert!(has(&v, "error", "retry-non-idempotent"), "{v}");
}
