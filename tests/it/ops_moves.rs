//! Retries that arrive by a route other than a decorator or loop around
//! the call: a write moved out of a function the base had into a new
//! retrying helper that function now calls, and a Temporal activity's
//! per-attempt timeout (StartToCloseTimeout) lowered. Through the binary
//! on a real git repository.

use crate::common;

use common::{scan_json as scan, Repo};
use serde_json::Value;

/// `(kind, severity)` of every finding.
fn kinds(json: &Value) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or_default().to_string();
            (s("kind"), s("severity"))
        })
        .collect();
    all.sort();
    all
}

const CLOUD_BASE: &str = r#"import httpx


class Cloud:
    def __init__(self, url):
        self._api = httpx.AsyncClient(base_url=url)

    async def create_vm(self, body):
        resp = await self._api.post("/v1/vms", json=body)
        resp.raise_for_status()
        return resp.json()
"#;

/// A retrying POST helper (five attempts on 503).
const POST_WITH_RETRY: &str = r#"
    async def _post_with_retry(self, path, body):
        for attempt in range(5):
            resp = await self._api.post(path, json=body)
            if resp.status_code != 503:
                return resp
            await asyncio.sleep(2 ** attempt)
        return resp
"#;

/// The base's `create_vm` posted once; the head moves the post into a new
/// `_post_with_retry` that `create_vm` now calls.
fn cloud_moved() -> String {
    let moved = CLOUD_BASE
        .replace("self._api.post(\"/v1/vms\", json=body)", "self._post_with_retry(\"/v1/vms\", body)");
    format!("import asyncio\n\n{moved}{POST_WITH_RETRY}")
}

/// The same helper, added beside a `create_vm` that still posts once
/// itself and does not call it: new code, said as a warning.
fn cloud_new_helper() -> String {
    format!("import asyncio\n\n{CLOUD_BASE}{POST_WITH_RETRY}")
}

fn change(base: &str, head: &str, path: &str) -> (Option<i32>, Value) {
    let repo = Repo::new();
    repo.write(path, base);
    repo.commit("base");
    repo.git(&["checkout", "-q", "-b", "change"]);
    repo.write(path, head);
    repo.commit("change");
    scan(&repo)
}

#[test]
fn a_write_moved_from_a_function_the_base_had_into_a_new_retrying_helper_blocks() {
    let (code, json) = change(CLOUD_BASE, &cloud_moved(), "sdk/cloud.py");
    assert_eq!(code, Some(1), "{json:#}");
    assert!(kinds(&json).contains(&("retry-non-idempotent".to_string(), "error".to_string())), "{json:#}");
    let f = json["findings"]
        .as_array()
        .and_then(|fs| fs.iter().find(|f| f["kind"] == "retry-non-idempotent"))
        .expect("a retry-non-idempotent finding");
    let message = f["message"].as_str().unwrap_or_default();
    assert!(message.contains("ran once in the base"), "{message}");
    assert!(!message.contains("new code"), "{message}");
}

#[test]
fn a_new_retrying_helper_nothing_the_base_had_calls_is_new_code_and_only_warns() {
    let (code, json) = change(CLOUD_BASE, &cloud_new_helper(), "sdk/cloud.py");
    assert_eq!(code, Some(0), "{json:#}");
    let f = json["findings"]
        .as_array()
        .and_then(|fs| fs.iter().find(|f| f["kind"] == "retry-non-idempotent"))
        .expect("a retry-non-idempotent warning");
    assert_eq!(f["severity"], "warning", "{json:#}");
    assert!(f["message"].as_str().unwrap_or_default().contains("new code"), "{json:#}");
}

fn activity(timeout: &str) -> String {
    format!(
        "package workflows\n\nimport (\n\t\"time\"\n\n\t\"go.temporal.io/sdk/workflow\"\n)\n\nfunc SyncFlow(ctx workflow.Context) error {{\n\tctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{{\n\t\tStartToCloseTimeout: {timeout},\n\t}})\n\treturn workflow.ExecuteActivity(ctx, \"Normalize\").Get(ctx, nil)\n}}\n"
    )
}

#[test]
fn a_temporal_activity_start_to_close_timeout_lowered_blocks_and_raised_passes() {
    let (code, json) =
        change(&activity("5 * time.Minute"), &activity("30 * time.Second"), "flow/workflows/sync.go");
    assert_eq!(code, Some(1), "{json:#}");
    assert_eq!(kinds(&json), [("timeout-lowered".to_string(), "error".to_string())], "{json:#}");
    let message = json["findings"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("StartToCloseTimeout"), "{message}");

    let (code, json) =
        change(&activity("30 * time.Second"), &activity("5 * time.Minute"), "flow/workflows/sync.go");
    assert_eq!(code, Some(0), "{json:#}");
    assert!(kinds(&json).is_empty(), "{json:#}");
}

fn py_activity(seconds: u32) -> String {
    format!(
        "from datetime import timedelta\nfrom temporalio import workflow\n\n\n@workflow.defn\nclass Sync:\n    @workflow.run\n    async def run(self, x):\n        return await workflow.execute_activity(normalize, x, start_to_close_timeout=timedelta(seconds={seconds}))\n"
    )
}

#[test]
fn a_python_temporal_activity_timeout_lowered_blocks() {
    let (code, json) = change(&py_activity(120), &py_activity(20), "wf/sync.py");
    assert_eq!(code, Some(1), "{json:#}");
    assert_eq!(kinds(&json), [("timeout-lowered".to_string(), "error".to_string())], "{json:#}");
}

fn slack(call: &str, retried: bool) -> String {
    let body = if retried {
        format!(
            "        for attempt in range(3):\n            try:\n                await asyncio.to_thread({call}, **kwargs)\n                return\n            except Exception:\n                await asyncio.sleep(2 ** attempt)\n        raise RuntimeError(\"send failed\")\n"
        )
    } else {
        format!("        await asyncio.to_thread({call}, **kwargs)\n")
    };
    format!(
        "import asyncio\n\n\nclass SlackChannel:\n    def __init__(self, client):\n        self._web_client = client\n\n    async def send(self, msg):\n        kwargs = {{\"channel\": msg.chat_id, \"text\": msg.text}}\n{body}"
    )
}

#[test]
fn a_write_handed_to_a_thread_runner_is_the_call_a_new_loop_retries() {
    let post = "self._web_client.chat_postMessage";
    let (code, json) = change(&slack(post, false), &slack(post, true), "channels/slack.py");
    assert_eq!(code, Some(1), "{json:#}");
    let f = json["findings"]
        .as_array()
        .and_then(|fs| fs.iter().find(|f| f["kind"] == "retry-non-idempotent"))
        .expect("a retry-non-idempotent finding");
    assert_eq!(f["severity"], "error", "{json:#}");
    assert!(f["message"].as_str().unwrap_or_default().contains("chat_postMessage"), "{json:#}");

    // A read handed the same way, retried the same way: no write repeated.
    let read = "self._web_client.conversations_history";
    let (code, json) = change(&slack(read, false), &slack(read, true), "channels/slack.py");
    assert_eq!(code, Some(0), "{json:#}");
    assert!(!kinds(&json).iter().any(|(_, s)| s == "error"), "{json:#}");
}
