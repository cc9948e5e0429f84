//! End-to-end scans of real git repositories through the binary: the
//! incident patch, moved and renamed files, and hostile input that must end
//! in a blocking verdict rather than a crash or a silent pass.

use crate::common;

use std::process::Output;

use common::Repo;
use serde_json::Value;

fn scan(repo: &Repo, head: &str) -> (Output, Value) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .args(["scan", "--repo"])
        .arg(repo.path())
        .args(["--base", "main", "--head", head, "--format", "json"])
        .output()
        .expect("run retrygate");
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, json)
}

fn kinds(json: &Value) -> Vec<String> {
    json["findings"].as_array().unwrap().iter().map(|f| f["kind"].as_str().unwrap().to_string()).collect()
}

const RETRY_FILE: &str = "use backon::{ExponentialBuilder, Retryable};\n\
const MAX_RETRIES: usize = 2;\n\
async fn fetch(c: &reqwest::Client) -> reqwest::Result<reqwest::Response> {\n\
    (|| async { c.get(\"https://api/x\").send().await })\n\
        .retry(ExponentialBuilder::default().with_jitter().with_max_times(MAX_RETRIES))\n\
        .await\n\
}\n";

#[test]
fn the_incident_patch_is_blocked_with_its_four_errors() {
    let repo = Repo::new();
    repo.write("src/checkout.rs", common::BEFORE);
    repo.commit("base");
    repo.branch("claude/faster");
    repo.write("src/checkout.rs", common::AGENT_PATCH);
    repo.commit("make it faster");
    let (out, json) = scan(&repo, "claude/faster");
    assert_eq!(out.status.code(), Some(1), "blocked");
    assert_eq!(json["verdict"], "block");
    let k = kinds(&json);
    for want in ["timeout-lowered", "jitter-removed", "retry-count-raised", "retry-non-idempotent"] {
        assert!(k.iter().any(|x| x == want), "missing {want} in {k:?}");
    }
    let raised =
        json["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "retry-count-raised").unwrap();
    assert_eq!(raised["base"]["attempts"], 3);
    assert_eq!(raised["head"]["attempts"], 7);
    assert_eq!(raised["path"], "src/checkout.rs");
}

#[test]
fn a_git_rename_of_retry_code_is_not_new_code() {
    let repo = Repo::new();
    repo.write("src/client.rs", RETRY_FILE);
    repo.commit("base");
    repo.branch("pr");
    repo.rename("src/client.rs", "src/net/client.rs");
    repo.commit("move");
    let (out, json) = scan(&repo, "pr");
    assert_eq!(out.status.code(), Some(0), "{json}");
    assert!(kinds(&json).is_empty(), "{json}");
}

#[test]
fn a_renamed_file_with_a_raised_count_is_still_caught() {
    let repo = Repo::new();
    repo.write("src/client.rs", RETRY_FILE);
    repo.commit("base");
    repo.branch("pr");
    repo.rename("src/client.rs", "src/net/client.rs");
    repo.write("src/net/client.rs", RETRY_FILE.replace("= 2;", "= 6;"));
    repo.commit("move and raise");
    let (out, json) = scan(&repo, "pr");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(kinds(&json), ["retry-count-raised"]);
    assert_eq!(json["findings"][0]["path"], "src/net/client.rs");
}

#[test]
fn deeply_nested_rust_blocks_with_a_note_instead_of_overflowing() {
    let repo = Repo::new();
    repo.write("src/deep.rs", "fn retry_me() {}\n");
    repo.commit("base");
    repo.branch("pr");
    let deep = format!("fn retry_me() {{ let x = {}1{}; }}\n", "(".repeat(100_000), ")".repeat(100_000));
    repo.write("src/deep.rs", deep);
    repo.commit("deep");
    let (out, json) = scan(&repo, "pr");
    assert_eq!(out.status.code(), Some(1), "a file the gate cannot read blocks");
    let note = json["notes"].as_array().unwrap().iter().find(|n| n["path"] == "src/deep.rs").expect("a note");
    assert_eq!(note["blocking"], true);
    assert!(note["message"].as_str().unwrap().contains("nest deeper"), "{note}");
}

#[test]
fn a_50_mib_single_line_file_blocks_with_a_note() {
    let repo = Repo::new();
    repo.write("src/gen.rs", "const RETRIES: u32 = 1;\n");
    repo.commit("base");
    repo.branch("pr");
    let mut big = String::from("const RETRIES: &[u8] = &[");
    while big.len() < 50 * 1024 * 1024 {
        big.push_str("1,");
    }
    big.push_str("];");
    repo.write("src/gen.rs", big);
    repo.commit("huge");
    let (out, json) = scan(&repo, "pr");
    assert_eq!(out.status.code(), Some(1));
    let notes: Vec<&Value> =
        json["notes"].as_array().unwrap().iter().filter(|n| n["path"] == "src/gen.rs").collect();
    assert!(
        notes.iter().any(|n| n["message"].as_str().unwrap().contains("over the 2 MiB limit")),
        "{notes:?}"
    );
    assert!(notes.iter().any(|n| n["blocking"] == true), "{notes:?}");
}

#[test]
fn invalid_rust_is_a_blocking_note_and_other_files_are_still_analysed() {
    let repo = Repo::new();
    repo.write("src/broken.rs", "fn retry() {}\n");
    repo.write("src/client.rs", RETRY_FILE);
    repo.commit("base");
    repo.branch("pr");
    repo.write("src/broken.rs", "fn retry( {\n");
    repo.write("src/client.rs", RETRY_FILE.replace("= 2;", "= 5;"));
    repo.commit("break one, raise the other");
    let (out, json) = scan(&repo, "pr");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(kinds(&json), ["retry-count-raised"]);
    let note = json["notes"].as_array().unwrap().iter().find(|n| n["path"] == "src/broken.rs").expect("note");
    let msg = note["message"].as_str().unwrap();
    assert!(msg.contains("could not parse the head version (line 1"), "{msg}");
    assert_eq!(note["blocking"], true);
}

#[test]
fn non_utf8_rust_is_analysed_with_a_note() {
    let repo = Repo::new();
    repo.write("src/client.rs", RETRY_FILE);
    repo.commit("base");
    repo.branch("pr");
    let mut bytes = RETRY_FILE.replace("= 2;", "= 4;").into_bytes();
    bytes.extend_from_slice(b"// caf\xe9\n");
    repo.write("src/client.rs", bytes);
    repo.commit("latin-1 comment");
    let (out, json) = scan(&repo, "pr");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(kinds(&json), ["retry-count-raised"]);
    let note = &json["notes"][0];
    assert!(note["message"].as_str().unwrap().contains("not valid UTF-8"), "{note}");
    assert_eq!(note["blocking"], false);
}

#[test]
fn a_benign_change_passes_with_exit_0() {
    let repo = Repo::new();
    repo.write("src/client.rs", RETRY_FILE);
    repo.commit("base");
    repo.branch("pr");
    repo.write("src/client.rs", RETRY_FILE.replace("= 2;", "= 1;"));
    repo.write("README.md", "# docs\n");
    repo.commit("fewer retries");
    let (out, json) = scan(&repo, "pr");
    assert_eq!(out.status.code(), Some(0), "{json}");
    assert_eq!(json["verdict"], "pass");
}

#[test]
fn git_variables_from_a_hook_do_not_redirect_the_scan() {
    // Inside a git hook GIT_DIR points at the hook's repository; `--repo`
    // must still decide which repository is read.
    let other = Repo::new();
    other.write("x.txt", "x\n");
    other.commit("other");
    let repo = Repo::new();
    repo.write("src/client.rs", RETRY_FILE);
    repo.commit("base");
    repo.branch("pr");
    repo.write("src/client.rs", RETRY_FILE.replace("= 2;", "= 7;"));
    repo.commit("raise");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .args(["scan", "--repo"])
        .arg(repo.path())
        .args(["--base", "main", "--head", "pr", "--format", "json"])
        .env("GIT_DIR", other.path().join(".git"))
        .env("GIT_OBJECT_DIRECTORY", other.path().join(".git/objects"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(kinds(&json), ["retry-count-raised"]);
}

#[test]
fn a_retrying_client_built_in_one_go_file_covers_the_writes_of_its_package() {
    // The provider builds the package's client; the API calls are in a
    // file the change does not touch.
    let calls = "package dns\n\nimport \"net/http\"\n\nfunc (c *Client) AddRecord(body io.Reader) error {\n\treq, _ := http.NewRequest(http.MethodPost, c.base+\"/records\", body)\n\t_, err := c.HTTPClient.Do(req)\n\treturn err\n}\n";
    let provider = |build: &str| {
        format!("package dns\n\nimport \"net/http\"\n\ntype Client struct {{\n\tbase       string\n\tHTTPClient *http.Client\n}}\n\nfunc NewClient(base string) *Client {{\n{build}}}\n")
    };
    let plain = provider("\treturn &Client{base: base, HTTPClient: &http.Client{}}\n");
    let retrying = provider("\trc := retryablehttp.NewClient()\n\trc.RetryMax = 5\n\treturn &Client{base: base, HTTPClient: rc.StandardClient()}\n");
    let repo = Repo::new();
    repo.write("providers/dns/internal/client.go", calls);
    repo.write("providers/dns/internal/provider.go", &plain);
    repo.commit("base");
    repo.branch("feature");
    repo.write("providers/dns/internal/provider.go", &retrying);
    repo.commit("retry the provider's requests");
    let (out, json) = scan(&repo, "feature");
    assert_eq!(out.status.code(), Some(1), "{json:#}");
    let f = json["findings"].as_array().unwrap();
    let write = f.iter().find(|f| f["rule"] == "op/new-retry-of-write").unwrap_or_else(|| panic!("{json:#}"));
    assert_eq!(write["path"], "providers/dns/internal/provider.go");
    assert!(write["message"].as_str().unwrap().contains("AddRecord"), "{write}");

    // A package that only reads through it, with a small bound: no error
    // (more than four attempts would be a raise from one).
    let retrying_small =
        provider("\trc := retryablehttp.NewClient()\n\trc.RetryMax = 3\n\treturn &Client{base: base, HTTPClient: rc.StandardClient()}\n");
    let repo = Repo::new();
    repo.write("providers/dns/internal/client.go", calls.replace("http.MethodPost", "http.MethodGet"));
    repo.write("providers/dns/internal/provider.go", &plain);
    repo.commit("base");
    repo.branch("feature");
    repo.write("providers/dns/internal/provider.go", &retrying_small);
    repo.commit("retry the provider's reads");
    let (_, json) = scan(&repo, "feature");
    let errors: Vec<&Value> =
        json["findings"].as_array().unwrap().iter().filter(|f| f["severity"] == "error").collect();
    assert!(errors.is_empty(), "{json:#}");
}

#[test]
fn a_project_retry_decorator_defined_in_an_unchanged_file_is_read_there() {
    let helper = "import functools\nimport random\nimport time\n\n\ndef with_retries(max_attempts=3):\n    def deco(fn):\n        @functools.wraps(fn)\n        def inner(*args, **kwargs):\n            for attempt in range(max_attempts):\n                try:\n                    return fn(*args, **kwargs)\n                except Exception:\n                    if attempt == max_attempts - 1:\n                        raise\n                    time.sleep(random.uniform(0, 2 ** attempt))\n        return inner\n    return deco\n";
    let api = "import requests\n\n\ndef create_order(body):\n    return requests.post(\"https://shop.example/orders\", json=body, timeout=10)\n\n\ndef get_order(order_id):\n    return requests.get(f\"https://shop.example/orders/{order_id}\", timeout=10)\n";
    let decorated = |f: &str| {
        api.replace("import requests\n", "import requests\n\nfrom shop.utils.retry import with_retries\n")
            .replace(&format!("def {f}("), &format!("@with_retries(max_attempts=4)\ndef {f}("))
    };
    for (decorated_fn, blocks) in [("create_order", true), ("get_order", false)] {
        let repo = Repo::new();
        repo.write("shop/utils/retry.py", helper);
        repo.write("shop/api.py", api);
        // The Python rule pack reads helpers too; off here, so the
        // operation model is what must read the unchanged file.
        repo.write(".github/retrygate.yml", "rules: { disable: [python/retry-helper-write] }\n");
        repo.commit("base");
        repo.branch("feature");
        repo.write("shop/api.py", decorated(decorated_fn));
        repo.commit("retry");
        let (out, json) = scan(&repo, "feature");
        let errors: Vec<&Value> =
            json["findings"].as_array().unwrap().iter().filter(|f| f["severity"] == "error").collect();
        if blocks {
            assert_eq!(out.status.code(), Some(1), "{json:#}");
            assert_eq!(errors.len(), 1, "{json:#}");
            assert_eq!(errors[0]["rule"], "op/new-retry-of-write", "{json:#}");
            assert!(errors[0]["message"].as_str().unwrap().contains("with_retries"), "{json:#}");
        } else {
            assert!(errors.is_empty(), "a read retried with jitter passes: {json:#}");
        }
    }
}

#[test]
fn a_new_file_among_many_is_judged_as_the_projects_own_code_when_its_folder_was_there() {
    let sender = "import requests, time\n\n\ndef create_order(body):\n    for attempt in range(3):\n        try:\n            return requests.post(\"https://shop.example/orders\", json=body, timeout=10)\n        except requests.RequestException:\n            time.sleep(1 + attempt)\n";
    let run = |folder: &str| {
        let repo = Repo::new();
        repo.write("shop/__init__.py", "");
        repo.write("shop/orders.py", "def total(o):\n    return sum(o)\n");
        repo.commit("base");
        repo.branch("feature");
        for i in 0..6 {
            repo.write(&format!("{folder}/part{i}.py"), format!("X{i} = {i}\n"));
        }
        repo.write(&format!("{folder}/sender.py"), sender);
        repo.commit("add files");
        let (_, json) = scan(&repo, "feature");
        let f = json["findings"].as_array().unwrap().clone();
        f.into_iter().find(|f| f["rule"] == "op/new-retry-of-write").unwrap_or_else(|| panic!("{json:#}"))
    };
    // Seven new files in a folder the base had: the project's own code.
    let own = run("shop");
    assert_eq!(own["severity"], "error", "{own}");
    // The same files in a new folder: code added in bulk, said as a warning.
    let bulk = run("clients/payments");
    assert_eq!(bulk["severity"], "warning", "{bulk}");
    assert!(bulk["message"].as_str().unwrap().contains("code added in bulk"), "{bulk}");
}
