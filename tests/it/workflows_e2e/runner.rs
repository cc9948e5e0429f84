//! A small GitHub Actions runner for the workflows of this repository, test
//! code only. It runs a workflow's jobs in order (`needs`, `if`,
//! `always()`) on one event, the way github.com does for the parts these
//! workflows use:
//!
//! - the checkout each event gets: `refs/pull/N/merge` (a real merge commit
//!   in the test's origin) for `pull_request`, the default branch for
//!   `issue_comment` and `workflow_run`, the group's commit for
//!   `merge_group`; `fetch-depth` is honoured (1 unless the step says 0);
//! - `git` in steps reaches the origin through `https://github.com/…`,
//!   rewritten to the test's bare repository with git's `insteadOf`;
//! - the `github`, `env`, `inputs`, `steps`, `needs` and `runner` contexts,
//!   with `github.action_path`/`action_repository`/`action_ref` set for a
//!   composite action's own steps (`action_repository` empty for `./`);
//! - each job's token from its `permissions`: `checks: write` gets the
//!   Actions token, anything less (and every job of a fork's
//!   `pull_request` run) a token the fake API refuses writes with;
//! - `actions/upload-artifact`/`download-artifact` between the jobs of a run
//!   and across runs (`run-id`), `actions/cache/restore|save` scoped as
//!   GitHub scopes caches: a key saved under a pull request's merge ref is
//!   seen by that pull request's runs only, one saved on the default branch
//!   by every run;
//! - `uses: retrygate/retrygate@…` is this repository's own `action.yml`
//!   (nothing can be fetched here); `uses: ./` is the checkout's.
//!
//! Why not `wrkflw` (a crate that runs workflows without containers): it
//! fetches `uses:` actions from GitHub, which this sandbox and CI tests cannot
//! reach, and it has no notion of the fake API's per-job tokens, the merge
//! ref, or cache scopes, which are what these tests are about; emulating the
//! five actions here is less code than adapting it, and every rule above is
//! visible in one file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use serde_yaml::Value as Yaml;

use super::expr;
use crate::fake_github::{FakeGithub, ACTIONS_TOKEN, OWNER_REPO, READ_ONLY_TOKEN};

pub(super) const DEFAULT_BRANCH: &str = "main";

/// An event as GitHub delivers it to a run.
#[derive(Debug, Clone)]
pub(super) struct Event {
    pub name: String,
    pub payload: Value,
    /// `GITHUB_REF`: what the checkout gets, and the cache scope.
    pub git_ref: String,
    /// `GITHUB_SHA`.
    pub sha: String,
    /// A fork's `pull_request`: every token of the run is read-only.
    pub fork: bool,
    /// The head the runner's job check runs are made on.
    pub check_sha: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Conclusion {
    Success,
    Failure,
    Skipped,
}

#[derive(Debug)]
pub(super) struct JobResult {
    pub id: String,
    pub conclusion: Conclusion,
    /// stdout and stderr of every step, in order.
    pub log: String,
    pub outputs: HashMap<String, Value>,
}

#[derive(Debug)]
pub(super) struct RunResult {
    pub id: u64,
    pub jobs: Vec<JobResult>,
    /// The `concurrency.group` the run would queue in.
    pub concurrency: Option<String>,
}

impl RunResult {
    pub(super) fn job(&self, id: &str) -> &JobResult {
        self.jobs.iter().find(|j| j.id == id).unwrap_or_else(|| panic!("no job {id} in {:?}", self.jobs))
    }
}

struct CacheEntry {
    scope: String,
    key: String,
    dir: PathBuf,
}

/// The stand-in for GitHub's side: the origin repository, the fake API,
/// artifacts of each run, the cache service.
pub(super) struct World<'a> {
    pub fake: &'a FakeGithub,
    pub dir: tempfile::TempDir,
    /// `<dir>/server/`: `https://github.com/` for git.
    server: PathBuf,
    caches: Vec<CacheEntry>,
    artifacts: HashMap<(u64, String), PathBuf>,
    next_run: u64,
    /// One line per `cargo install` the Action ran (a source build).
    pub cargo_log: PathBuf,
    fake_cargo: PathBuf,
}

fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git").current_dir(dir).args(args).output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
    // Hard links: the binary is large, and nothing edits files in place.
    let st = Command::new("cp").arg("-al").arg(from).arg(to).status().expect("cp");
    assert!(st.success(), "cp -al {} {}", from.display(), to.display());
}

impl<'a> World<'a> {
    /// A world whose origin is a bare clone of `source` (a repository with
    /// the default branch `main`).
    pub(super) fn new(fake: &'a FakeGithub, source: &Path) -> World<'a> {
        let dir = tempfile::tempdir().expect("tempdir");
        let server = dir.path().join("server");
        let origin = server.join(format!("{OWNER_REPO}.git"));
        std::fs::create_dir_all(origin.parent().expect("parent")).expect("mkdir");
        git(dir.path(), &["clone", "-q", "--bare", &source.to_string_lossy(), &origin.to_string_lossy()])
            .expect("bare clone");
        git(&origin, &["config", "uploadpack.allowAnySHA1InWant", "true"]).expect("config");
        let cargo_log = dir.path().join("cargo.log");
        let fake_cargo = dir.path().join("cargo");
        // Builds nothing: the test binary stands in for what
        // `cargo install --locked --root R --path P` would install.
        std::fs::write(
            &fake_cargo,
            format!(
                "#!/usr/bin/env bash\nset -eu\nroot=''\nwhile [ $# -gt 0 ]; do [ \"$1\" = --root ] && root=\"$2\"; shift; done\nmkdir -p \"$root/bin\"\nln -f '{}' \"$root/bin/retrygate\"\necho \"install $root\" >> '{}'\n",
                env!("CARGO_BIN_EXE_retrygate"),
                cargo_log.display()
            ),
        )
        .expect("write cargo");
        Command::new("chmod").arg("+x").arg(&fake_cargo).status().expect("chmod");
        World {
            fake,
            dir,
            server,
            caches: Vec::new(),
            artifacts: HashMap::new(),
            next_run: 100,
            cargo_log,
            fake_cargo,
        }
    }

    pub(super) fn origin(&self) -> PathBuf {
        self.server.join(format!("{OWNER_REPO}.git"))
    }

    /// Pushes `sha` of `source` to `refname` of the origin.
    pub(super) fn push(&self, source: &Path, sha: &str, refname: &str) {
        git(source, &["push", "-q", "-f", &self.origin().to_string_lossy(), &format!("{sha}:{refname}")])
            .expect("push");
    }

    /// The source builds the Action has run so far.
    pub(super) fn builds(&self) -> usize {
        std::fs::read_to_string(&self.cargo_log).map_or(0, |s| s.lines().count())
    }

    pub(super) fn artifact(&self, run: u64, name: &str) -> Option<PathBuf> {
        self.artifacts.get(&(run, name.to_string())).cloned()
    }

    /// Runs `workflow` (a path under the crate) on `event`; `None` when the
    /// workflow does not listen to that event (or that activity type).
    /// `with_override` replaces a `with:` input of every step that has it.
    pub(super) fn run(
        &mut self,
        workflow: &Path,
        event: &Event,
        with_override: &[(&str, &str)],
    ) -> Option<RunResult> {
        let text =
            std::fs::read_to_string(workflow).unwrap_or_else(|e| panic!("{}: {e}", workflow.display()));
        let wf: Yaml = serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", workflow.display()));
        let on = &wf["on"];
        let listens = match on {
            Yaml::Mapping(m) => m.get(event.name.as_str()).map(|t| {
                t["types"].as_sequence().is_none_or(|types| {
                    let action = event.payload["action"].as_str().unwrap_or_default();
                    types.iter().any(|x| x.as_str() == Some(action))
                })
            }),
            _ => panic!("{}: `on` must be a mapping", workflow.display()),
        };
        if listens != Some(true) {
            return None;
        }
        self.next_run += 1;
        let run_id = self.next_run;
        let run_dir = self.dir.path().join(format!("run-{run_id}"));
        std::fs::create_dir_all(&run_dir).expect("mkdir");
        let event_path = run_dir.join("event.json");
        std::fs::write(&event_path, event.payload.to_string()).expect("event");
        let base_ctx = json!({
            "github": {
                "event_name": event.name, "event": event.payload, "ref": event.git_ref, "sha": event.sha,
                "repository": OWNER_REPO, "server_url": "https://github.com", "api_url": self.fake.url,
                "run_id": run_id.to_string(),
            },
            "env": {}, "inputs": {}, "steps": {}, "needs": {},
        });
        let concurrency = wf["concurrency"]
            .as_str()
            .map(str::to_string)
            .or_else(|| wf["concurrency"]["group"].as_str().map(str::to_string))
            .map(|g| expr::interpolate(&g, &base_ctx).unwrap_or_else(|e| panic!("concurrency: {e}")));
        let mut results: Vec<JobResult> = Vec::new();
        let jobs = wf["jobs"].as_mapping().expect("jobs");
        for (id, job) in jobs {
            let id = id.as_str().expect("job id").to_string();
            let needs: Vec<String> = match &job["needs"] {
                Yaml::String(s) => vec![s.clone()],
                Yaml::Sequence(s) => s.iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
                _ => Vec::new(),
            };
            let mut ctx = base_ctx.clone();
            let mut needs_ctx = serde_json::Map::new();
            let mut needs_failed = false;
            for n in &needs {
                let r = results
                    .iter()
                    .find(|r| &r.id == n)
                    .unwrap_or_else(|| panic!("{id} needs {n}, not run before"));
                needs_failed |= r.conclusion != Conclusion::Success;
                let result = match r.conclusion {
                    Conclusion::Success => "success",
                    Conclusion::Failure => "failure",
                    Conclusion::Skipped => "skipped",
                };
                needs_ctx.insert(n.clone(), json!({"result": result, "outputs": r.outputs}));
            }
            ctx["needs"] = Value::Object(needs_ctx);
            let go = expr::condition(job["if"].as_str(), &ctx, needs_failed)
                .unwrap_or_else(|e| panic!("{} job {id}: {e}", workflow.display()));
            if !go {
                results.push(JobResult {
                    id,
                    conclusion: Conclusion::Skipped,
                    log: String::new(),
                    outputs: HashMap::new(),
                });
                continue;
            }
            let perms = if job["permissions"].is_null() { &wf["permissions"] } else { &job["permissions"] };
            let token = if !event.fork && perms["checks"].as_str() == Some("write") {
                ACTIONS_TOKEN
            } else {
                READ_ONLY_TOKEN
            };
            ctx["github"]["token"] = json!(token);
            let name = job["name"].as_str().unwrap_or(&id).to_string();
            let check = self.fake.add_job_check_run(&name, &event.check_sha);
            let job_dir = run_dir.join(&id);
            let mut j = Job {
                world: self,
                run_id,
                ctx,
                event,
                event_path: event_path.clone(),
                workspace: job_dir.join("workspace"),
                temp: job_dir.join("temp"),
                dir: job_dir.clone(),
                failed: false,
                log: String::new(),
                counter: 0,
                with_override,
            };
            std::fs::create_dir_all(&j.workspace).expect("mkdir");
            std::fs::create_dir_all(&j.temp).expect("mkdir");
            for step in job["steps"].as_sequence().expect("steps") {
                j.step(step, None);
            }
            let conclusion = if j.failed { Conclusion::Failure } else { Conclusion::Success };
            let log = std::mem::take(&mut j.log);
            self.fake.with(|s| {
                if let Some(r) = s.check_runs.iter_mut().find(|r| r.id == check) {
                    r.status = "completed".into();
                    r.conclusion =
                        Some(if conclusion == Conclusion::Success { "success" } else { "failure" }.into());
                }
            });
            results.push(JobResult { id, conclusion, log, outputs: HashMap::new() });
        }
        Some(RunResult { id: run_id, jobs: results, concurrency })
    }
}

struct Job<'w, 'a> {
    world: &'w mut World<'a>,
    run_id: u64,
    ctx: Value,
    event: &'w Event,
    event_path: PathBuf,
    workspace: PathBuf,
    temp: PathBuf,
    dir: PathBuf,
    failed: bool,
    log: String,
    counter: usize,
    with_override: &'w [(&'w str, &'w str)],
}

/// A composite action's frame: its own `steps` and `inputs`, and the
/// `github.action_*` values its steps see.
struct Frame {
    steps: Value,
    inputs: Value,
    action_path: String,
    action_repository: String,
    action_ref: String,
}

impl Job<'_, '_> {
    fn context(&self, frame: Option<&Frame>) -> Value {
        let mut ctx = self.ctx.clone();
        ctx["runner"] = json!({"temp": self.temp.to_string_lossy(), "os": "Linux", "arch": "X64"});
        ctx["github"]["workspace"] = json!(self.workspace.to_string_lossy());
        if let Some(f) = frame {
            ctx["steps"] = f.steps.clone();
            ctx["inputs"] = f.inputs.clone();
            ctx["github"]["action_path"] = json!(f.action_path);
            ctx["github"]["action_repository"] = json!(f.action_repository);
            ctx["github"]["action_ref"] = json!(f.action_ref);
        }
        ctx
    }

    fn eval_with(&self, step: &Yaml, ctx: &Value) -> HashMap<String, String> {
        let mut with = HashMap::new();
        if let Some(m) = step["with"].as_mapping() {
            for (k, v) in m {
                let k = k.as_str().expect("with key").to_string();
                let raw = match v {
                    Yaml::String(s) => s.clone(),
                    Yaml::Number(n) => n.to_string(),
                    Yaml::Bool(b) => b.to_string(),
                    _ => panic!("with.{k}: unsupported value"),
                };
                let raw =
                    self.with_override.iter().find(|(o, _)| *o == k).map_or(raw, |(_, v)| v.to_string());
                with.insert(k, expr::interpolate(&raw, ctx).unwrap_or_else(|e| panic!("with: {e}")));
            }
        }
        with
    }

    fn step(&mut self, step: &Yaml, frame: Option<&mut Frame>) {
        let ctx = self.context(frame.as_deref());
        let label = step["name"]
            .as_str()
            .or(step["uses"].as_str())
            .or(step["run"].as_str())
            .unwrap_or("step")
            .to_string();
        let go = expr::condition(step["if"].as_str(), &ctx, self.failed)
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        if !go {
            self.log.push_str(&format!("--- skipped: {label}\n"));
            return;
        }
        self.log.push_str(&format!("--- {label}\n"));
        let with = self.eval_with(step, &ctx);
        let result: Result<HashMap<String, String>, String> = if let Some(uses) = step["uses"].as_str() {
            let action = uses.split('@').next().unwrap_or_default();
            match action {
                "actions/checkout" => self.checkout(&with).map(|()| HashMap::new()),
                "actions/cache/restore" => Ok(self.cache_restore(&with)),
                "actions/cache/save" => self.cache_save(&with).map(|()| HashMap::new()),
                "actions/upload-artifact" => self.upload(&with).map(|()| HashMap::new()),
                "actions/download-artifact" => self.download(&with).map(|()| HashMap::new()),
                "retrygate/retrygate" => self.composite(
                    Path::new(env!("CARGO_MANIFEST_DIR")),
                    "retrygate/retrygate",
                    uses.split('@').nth(1).unwrap_or_default(),
                    with,
                ),
                "./" | "." => {
                    let path = self.workspace.clone();
                    self.composite(&path, "", "", with)
                }
                other => Err(format!("no emulation for `uses: {other}`")),
            }
        } else if let Some(run) = step["run"].as_str() {
            self.bash(run, step, &ctx)
        } else {
            Err("a step needs `uses` or `run`".into())
        };
        let outputs = match result {
            Ok(o) => {
                self.log.push_str("--- ok\n");
                Some(o)
            }
            Err(e) => {
                self.log.push_str(&format!("--- failed: {e}\n"));
                if step["continue-on-error"].as_bool() != Some(true) {
                    self.failed = true;
                }
                None
            }
        };
        if let Some(id) = step["id"].as_str() {
            let outs: serde_json::Map<String, Value> =
                outputs.unwrap_or_default().into_iter().map(|(k, v)| (k, Value::String(v))).collect();
            let entry = json!({"outputs": outs});
            match frame {
                Some(f) => f.steps[id] = entry,
                None => self.ctx["steps"][id] = entry,
            }
        }
    }

    fn bash(&mut self, script: &str, step: &Yaml, ctx: &Value) -> Result<HashMap<String, String>, String> {
        self.counter += 1;
        let output_file = self.dir.join(format!("output-{}", self.counter));
        std::fs::write(&output_file, "").map_err(|e| e.to_string())?;
        let script_file = self.dir.join(format!("step-{}.sh", self.counter));
        std::fs::write(&script_file, script).map_err(|e| e.to_string())?;
        let cwd = match step["working-directory"].as_str() {
            Some(w) => self.workspace.join(expr::interpolate(w, ctx)?),
            None => self.workspace.clone(),
        };
        let origin_url = format!("file://{}/", self.world.server.display());
        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&script_file)
            .current_dir(&cwd)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", std::env::var("HOME").unwrap_or_default())
            .env("CI", "true")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_EVENT_NAME", &self.event.name)
            .env("GITHUB_EVENT_PATH", &self.event_path)
            .env("GITHUB_REPOSITORY", OWNER_REPO)
            .env("GITHUB_SERVER_URL", "https://github.com")
            .env("GITHUB_API_URL", &self.world.fake.url)
            .env("GITHUB_GRAPHQL_URL", format!("{}/graphql", self.world.fake.url))
            .env("GITHUB_RUN_ID", self.run_id.to_string())
            .env("GITHUB_SHA", &self.event.sha)
            .env("GITHUB_REF", &self.event.git_ref)
            .env("GITHUB_WORKSPACE", &self.workspace)
            .env("GITHUB_OUTPUT", &output_file)
            .env("GITHUB_STEP_SUMMARY", self.dir.join("summary.md"))
            .env("RUNNER_TEMP", &self.temp)
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            // git reaches github.com's repository at the test's origin.
            .env("GIT_CONFIG_COUNT", "1")
            .env("GIT_CONFIG_KEY_0", format!("url.{origin_url}.insteadOf"))
            .env("GIT_CONFIG_VALUE_0", "https://github.com/")
            // The Action's source build, without building.
            .env("RETRYGATE_CARGO", &self.world.fake_cargo);
        if let Some(m) = step["env"].as_mapping() {
            for (k, v) in m {
                let v = match v {
                    Yaml::String(s) => s.clone(),
                    Yaml::Number(n) => n.to_string(),
                    Yaml::Bool(b) => b.to_string(),
                    _ => String::new(),
                };
                cmd.env(k.as_str().expect("env key"), expr::interpolate(&v, ctx)?);
            }
        }
        let out = cmd.output().map_err(|e| e.to_string())?;
        self.log.push_str(&String::from_utf8_lossy(&out.stdout));
        self.log.push_str(&String::from_utf8_lossy(&out.stderr));
        let outputs = parse_outputs(&std::fs::read_to_string(&output_file).map_err(|e| e.to_string())?);
        match out.status.code() {
            Some(0) => Ok(outputs),
            code => Err(format!("exit {code:?}")),
        }
    }

    fn composite(
        &mut self,
        path: &Path,
        repository: &str,
        git_ref: &str,
        with: HashMap<String, String>,
    ) -> Result<HashMap<String, String>, String> {
        let file = path.join("action.yml");
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let action: Yaml = serde_yaml::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        let mut frame = Frame {
            steps: json!({}),
            inputs: json!({}),
            action_path: path.to_string_lossy().into_owned(),
            action_repository: repository.into(),
            action_ref: git_ref.into(),
        };
        let ctx = self.context(Some(&frame));
        let mut inputs = serde_json::Map::new();
        for (k, v) in action["inputs"].as_mapping().into_iter().flatten() {
            let k = k.as_str().expect("input").to_string();
            let value = match with.get(&k) {
                Some(v) => v.clone(),
                None => expr::interpolate(v["default"].as_str().unwrap_or_default(), &ctx)?,
            };
            inputs.insert(k, Value::String(value));
        }
        if let Some(unknown) = with.keys().find(|k| !inputs.contains_key(*k)) {
            return Err(format!("unexpected input `{unknown}` for {}", file.display()));
        }
        frame.inputs = Value::Object(inputs);
        let failed_before = self.failed;
        for step in action["runs"]["steps"].as_sequence().ok_or("runs.steps")? {
            self.step(step, Some(&mut frame));
        }
        let ctx = self.context(Some(&frame));
        let mut outputs = HashMap::new();
        for (k, v) in action["outputs"].as_mapping().into_iter().flatten() {
            outputs.insert(
                k.as_str().expect("output").to_string(),
                expr::interpolate(v["value"].as_str().unwrap_or_default(), &ctx)?,
            );
        }
        if self.failed && !failed_before {
            // The composite step failed: the job's status comes from the
            // step's own `continue-on-error`, decided by the caller.
            self.failed = false;
            return Err("a step of the action failed".into());
        }
        Ok(outputs)
    }

    fn checkout(&mut self, with: &HashMap<String, String>) -> Result<(), String> {
        let want =
            with.get("ref").filter(|r| !r.is_empty()).cloned().unwrap_or_else(|| self.event.git_ref.clone());
        let url = format!("file://{}", self.world.origin().display());
        let ws = &self.workspace;
        git(ws, &["init", "-q"])?;
        git(ws, &["remote", "add", "origin", &format!("https://github.com/{OWNER_REPO}")])?;
        let depth: u32 =
            with.get("fetch-depth").map_or(Ok(1), |d| d.parse()).map_err(|e| format!("fetch-depth: {e}"))?;
        // The wanted ref alone first: FETCH_HEAD is then the commit to check out.
        let depth_arg = format!("--depth={}", depth.max(1));
        let mut args = vec!["fetch", "-q", "--no-tags"];
        if depth > 0 {
            args.push(&depth_arg);
        }
        args.extend([url.as_str(), want.as_str()]);
        git(ws, &args)?;
        git(ws, &["checkout", "-q", "--detach", "FETCH_HEAD"])?;
        if depth == 0 {
            git(ws, &["fetch", "-q", "--no-tags", &url, "+refs/heads/*:refs/remotes/origin/*"])?;
        }
        self.log.push_str(&format!("checked out {want} at {}\n", git(ws, &["rev-parse", "HEAD"])?));
        Ok(())
    }

    fn scopes(&self) -> [String; 2] {
        [self.event.git_ref.clone(), format!("refs/heads/{DEFAULT_BRANCH}")]
    }

    fn cache_restore(&mut self, with: &HashMap<String, String>) -> HashMap<String, String> {
        let key = &with["key"];
        let path = PathBuf::from(&with["path"]);
        let hit = self.scopes().iter().find_map(|scope| {
            self.world.caches.iter().find(|c| &c.scope == scope && &c.key == key).map(|c| c.dir.clone())
        });
        let mut out = HashMap::new();
        match hit {
            Some(dir) => {
                if path.exists() {
                    std::fs::remove_dir_all(&path).ok();
                }
                copy_dir(&dir, &path);
                self.log.push_str(&format!("cache restored from key {key}\n"));
                out.insert("cache-hit".into(), "true".into());
            }
            None => {
                self.log.push_str(&format!("cache not found for key {key}\n"));
                out.insert("cache-hit".into(), "false".into());
            }
        }
        out
    }

    fn cache_save(&mut self, with: &HashMap<String, String>) -> Result<(), String> {
        let key = with["key"].clone();
        let path = PathBuf::from(&with["path"]);
        let scope = self.event.git_ref.clone();
        if self.world.caches.iter().any(|c| c.scope == scope && c.key == key) {
            self.log.push_str(&format!("cache {key} already exists in {scope}; not saved\n"));
            return Ok(());
        }
        if !path.exists() {
            return Err(format!("cache path {} does not exist", path.display()));
        }
        let n = self.world.caches.len();
        let dir = self.world.dir.path().join(format!("cache-{n}"));
        copy_dir(&path, &dir);
        self.log.push_str(&format!("cache saved with key {key} in {scope}\n"));
        self.world.caches.push(CacheEntry { scope, key, dir });
        Ok(())
    }

    fn upload(&mut self, with: &HashMap<String, String>) -> Result<(), String> {
        let name = with["name"].clone();
        let path = PathBuf::from(&with["path"]);
        if !path.exists() {
            return match with.get("if-no-files-found").map(String::as_str) {
                Some("error") => {
                    Err(format!("no files were found with the provided path: {}", path.display()))
                }
                _ => Ok(()),
            };
        }
        let dir = self.world.dir.path().join(format!("artifact-{}-{name}", self.run_id));
        if path.is_dir() {
            copy_dir(&path, &dir);
        } else {
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
            std::fs::copy(&path, dir.join(path.file_name().ok_or("file name")?))
                .map_err(|e| e.to_string())?;
        }
        self.world.artifacts.insert((self.run_id, name), dir);
        Ok(())
    }

    fn download(&mut self, with: &HashMap<String, String>) -> Result<(), String> {
        let name = &with["name"];
        let run: u64 = match with.get("run-id").filter(|r| !r.is_empty()) {
            Some(r) => r.parse().map_err(|e| format!("run-id {r}: {e}"))?,
            None => self.run_id,
        };
        let dir = self
            .world
            .artifacts
            .get(&(run, name.clone()))
            .ok_or_else(|| format!("Artifact not found for name: {name} (run {run})"))?;
        let to = PathBuf::from(&with["path"]);
        std::fs::create_dir_all(&to).map_err(|e| e.to_string())?;
        for entry in std::fs::read_dir(dir).map_err(|e| e.to_string())? {
            let entry = entry.map_err(|e| e.to_string())?;
            std::fs::copy(entry.path(), to.join(entry.file_name())).map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

/// `$GITHUB_OUTPUT`: `key=value` lines and `key<<DELIM` blocks.
fn parse_outputs(text: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((k, delim)) = line.split_once("<<") {
            let mut v = Vec::new();
            for l in lines.by_ref() {
                if l == delim {
                    break;
                }
                v.push(l);
            }
            out.insert(k.to_string(), v.join("\n"));
        } else if let Some((k, v)) = line.split_once('=') {
            out.insert(k.to_string(), v.to_string());
        }
    }
    out
}
