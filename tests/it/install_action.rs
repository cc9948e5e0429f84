//! `scripts/install-action.sh`, the Action's install step, run for real with
//! bash, curl and tar against a loopback HTTP server that serves release
//! archives built here. The three promises: a listed archive whose SHA-256
//! matches is installed; a mismatching one is refused (exit 1, nothing
//! installed); a missing one falls back to the source build, which is cached.
//! The source build is a stub `cargo` (through the script's `RETRYGATE_CARGO`
//! override) that records its arguments, so the test sees the exact
//! `cargo install --locked ... --path` call without compiling anything.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

const VERSION: &str = "9.8.7";
const ASSET: &str = "retrygate-v9.8.7-x86_64-unknown-linux-musl.tar.gz";

/// A loopback HTTP/1.1 server: serves `files` by path, 404 otherwise, and
/// records every requested path.
struct Server {
    base: String,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start(files: HashMap<String, Vec<u8>>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                // Drain the headers.
                let mut header = String::new();
                while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
                    header.clear();
                }
                let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
                seen.lock().unwrap().push(path.clone());
                let response = match files.get(&path) {
                    Some(body) => {
                        let mut r = format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nContent-Type: application/gzip\r\nConnection: close\r\n\r\n",
                            body.len()
                        )
                        .into_bytes();
                        r.extend_from_slice(body);
                        r
                    }
                    None => {
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec()
                    }
                };
                let _ = stream.write_all(&response);
            }
        });
        Server { base: format!("http://127.0.0.1:{port}/releases/download"), requests }
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

fn write_exec(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A release archive as release.yml packs it: one executable `retrygate` at
/// the top. Here a shell script that says where it came from.
fn archive(dir: &Path, says: &str) -> Vec<u8> {
    let stage = dir.join(format!("stage-{says}"));
    std::fs::create_dir_all(&stage).unwrap();
    write_exec(&stage.join("retrygate"), &format!("#!/bin/sh\necho 'retrygate {VERSION} ({says})'\n"));
    let out = dir.join(format!("{says}.tar.gz"));
    let st =
        Command::new("tar").arg("-czf").arg(&out).arg("-C").arg(&stage).arg("retrygate").status().unwrap();
    assert!(st.success());
    std::fs::read(out).unwrap()
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A scratch runner: the action's source (Cargo.toml, Cargo.lock, src/,
/// dist/sha256sums.txt), RUNNER_TEMP, the step-output file, and a stub cargo.
struct Runner {
    _tmp: tempfile::TempDir,
    action: PathBuf,
    temp: PathBuf,
    output: PathBuf,
    cargo: PathBuf,
    cargo_log: PathBuf,
    work: PathBuf,
}

impl Runner {
    fn new(sums: &str) -> Runner {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        let action = root.join("action");
        std::fs::create_dir_all(action.join("dist")).unwrap();
        std::fs::create_dir_all(action.join("src")).unwrap();
        std::fs::write(
            action.join("Cargo.toml"),
            format!("[package]\nname = \"retrygate\"\nversion = \"{VERSION}\"\n"),
        )
        .unwrap();
        std::fs::write(action.join("Cargo.lock"), "version = 4\n").unwrap();
        std::fs::write(action.join("src/main.rs"), "fn main() {}\n").unwrap();
        std::fs::write(action.join("dist/sha256sums.txt"), format!("# header comment\n{sums}")).unwrap();
        let temp = root.join("runner-temp");
        std::fs::create_dir_all(&temp).unwrap();
        let cargo_log = root.join("cargo.log");
        let cargo = root.join("stub-cargo");
        // Records its arguments and leaves a binary where `--root` says, as
        // `cargo install` would.
        write_exec(
            &cargo,
            &format!(
                "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nwhile [ $# -gt 0 ]; do [ \"$1\" = --root ] && root=\"$2\"; shift; done\n\
                 mkdir -p \"$root/bin\"\nprintf '#!/bin/sh\\necho retrygate {VERSION} '\\''(built from source)'\\''\\n' > \"$root/bin/retrygate\"\nchmod 755 \"$root/bin/retrygate\"\n",
                cargo_log.display()
            ),
        );
        let work = root.join("work");
        std::fs::create_dir_all(&work).unwrap();
        Runner { output: root.join("github-output"), _tmp: tmp, action, temp, cargo, cargo_log, work }
    }

    fn run(&self, phase: &str, base: &str, extra: &[(&str, &str)]) -> Output {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install-action.sh");
        let mut cmd = Command::new("bash");
        cmd.arg(script).arg(phase).current_dir(&self.work);
        for var in ["GITHUB_SERVER_URL", "ACTION_REPOSITORY", "PREBUILT_BIN", "RETRYGATE_DOWNLOAD_BASE"] {
            cmd.env_remove(var);
        }
        cmd.env("ACTION_PATH", &self.action)
            .env("ACTION_REF", "v9.8.7")
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            .env("RUNNER_TEMP", &self.temp)
            .env("GITHUB_OUTPUT", &self.output)
            .env("RETRYGATE_DOWNLOAD_BASE", base)
            .env("RETRYGATE_CARGO", &self.cargo);
        for (k, v) in extra {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }

    /// The step outputs written so far, last value of each key.
    fn outputs(&self) -> HashMap<String, String> {
        let text = std::fs::read_to_string(&self.output).unwrap_or_default();
        text.lines().filter_map(|l| l.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn cargo_calls(&self) -> Vec<String> {
        std::fs::read_to_string(&self.cargo_log).unwrap_or_default().lines().map(str::to_string).collect()
    }

    fn prebuilt_bin(&self) -> PathBuf {
        self.temp.join("retrygate-bin/retrygate")
    }

    fn cache_dir(&self) -> PathBuf {
        self.temp.join("retrygate-cargo")
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn run_bin(path: &str) -> String {
    text(&Command::new(path).output().unwrap().stdout)
}

#[test]
fn a_listed_archive_that_matches_is_installed_and_no_source_build_runs() {
    let dir = tempfile::tempdir().unwrap();
    let good = archive(dir.path(), "test archive");
    let runner = Runner::new(&format!("{}  {ASSET}\n", sha256_hex(&good)));
    let server = Server::start(HashMap::from([(format!("/releases/download/v{VERSION}/{ASSET}"), good)]));

    let out = runner.run("prebuilt", &server.base, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(&format!("retrygate installed (prebuilt {ASSET}, SHA-256 verified)")));
    assert_eq!(server.requests(), [format!("/releases/download/v{VERSION}/{ASSET}")]);
    let bin = runner.outputs()["bin"].clone();
    assert_eq!(Path::new(&bin), runner.prebuilt_bin());
    assert_eq!(run_bin(&bin), "retrygate 9.8.7 (test archive)\n");

    // The second step hands the verified binary on and builds nothing.
    let out = runner.run("source", &server.base, &[("PREBUILT_BIN", &bin)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(runner.outputs()["bin"], bin);
    assert_eq!(runner.outputs()["built"], "false");
    assert!(runner.cargo_calls().is_empty(), "{:?}", runner.cargo_calls());
}

#[test]
fn a_mismatching_archive_is_refused_and_nothing_is_installed() {
    let dir = tempfile::tempdir().unwrap();
    let listed = archive(dir.path(), "the released one");
    let served = archive(dir.path(), "a replaced one");
    let runner = Runner::new(&format!("{}  {ASSET}\n", sha256_hex(&listed)));
    let server =
        Server::start(HashMap::from([(format!("/releases/download/v{VERSION}/{ASSET}"), served.clone())]));

    let out = runner.run("prebuilt", &server.base, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!(
            "{ASSET} has SHA-256 {}, but dist/sha256sums.txt at this ref lists {}; refusing to run it",
            sha256_hex(&served),
            sha256_hex(&listed)
        )),
        "{err}"
    );
    assert!(!runner.prebuilt_bin().exists());
    assert!(!runner.outputs().contains_key("bin"));
    // No download left behind either.
    let left: Vec<_> = std::fs::read_dir(&runner.temp).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.iter().all(|n| !n.to_string_lossy().starts_with("retrygate-download")), "{left:?}");
    assert!(runner.cargo_calls().is_empty());
}

#[test]
fn a_listed_archive_that_is_missing_falls_back_to_the_source_build() {
    let dir = tempfile::tempdir().unwrap();
    let good = archive(dir.path(), "never served");
    let runner = Runner::new(&format!("{}  {ASSET}\n", sha256_hex(&good)));
    let server = Server::start(HashMap::new());

    let out = runner.run("prebuilt", &server.base, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("could not download"), "{}", text(&out.stdout));
    assert_eq!(server.requests(), [format!("/releases/download/v{VERSION}/{ASSET}")]);
    assert!(!runner.outputs().contains_key("bin"));
    assert_eq!(runner.outputs()["cache-dir"], runner.cache_dir().display().to_string());

    let out = runner.run("source", &server.base, &[("PREBUILT_BIN", "")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        runner.cargo_calls(),
        [format!(
            "install --locked --quiet --root {} --path {}",
            runner.cache_dir().display(),
            runner.action.display()
        )]
    );
    assert_eq!(runner.outputs()["built"], "true");
    let bin = runner.outputs()["bin"].clone();
    assert_eq!(Path::new(&bin), runner.cache_dir().join("bin/retrygate"));
    assert_eq!(run_bin(&bin), "retrygate 9.8.7 (built from source)\n");
    assert!(!runner.prebuilt_bin().exists());
}

#[test]
fn an_archive_not_listed_is_never_downloaded_and_the_source_build_runs() {
    let dir = tempfile::tempdir().unwrap();
    let good = archive(dir.path(), "unlisted");
    // Listed for another target only.
    let runner =
        Runner::new(&format!("{}  retrygate-v9.8.7-aarch64-apple-darwin.tar.gz\n", sha256_hex(&good)));
    let server = Server::start(HashMap::from([(format!("/releases/download/v{VERSION}/{ASSET}"), good)]));

    let out = runner.run("prebuilt", &server.base, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(&format!("{ASSET} is not listed in dist/sha256sums.txt at this ref")));
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    let out = runner.run("source", &server.base, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(runner.cargo_calls().len(), 1);
    assert_eq!(runner.outputs()["built"], "true");
}

#[test]
fn a_runner_without_a_prebuilt_target_builds_from_source() {
    let runner = Runner::new("");
    let server = Server::start(HashMap::new());
    let out = runner.run("prebuilt", &server.base, &[("RUNNER_ARCH", "ARM")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("no prebuilt binary for Linux-ARM"), "{}", text(&out.stdout));
    assert!(server.requests().is_empty());
    assert!(runner.outputs()["cache-key"].starts_with("retrygate-source-Linux-ARM-v9.8.7-lock-"));
}

#[test]
fn a_windows_runner_is_refused_with_what_to_do_before_anything_runs() {
    let runner = Runner::new("");
    let server = Server::start(HashMap::new());
    for phase in ["prebuilt", "source"] {
        let out = runner.run(phase, &server.base, &[("RUNNER_OS", "Windows")]);
        assert_eq!(out.status.code(), Some(2), "{phase}");
        let err = text(&out.stderr);
        assert!(
            err.contains("::error title=retrygate install::retrygate does not run on Windows runners; set 'runs-on: ubuntu-latest'"),
            "{phase}: {err}"
        );
    }
    assert!(server.requests().is_empty(), "nothing downloaded");
    assert!(runner.cargo_calls().is_empty(), "nothing built");
}

#[test]
fn a_restored_cache_is_used_without_building_again() {
    let runner = Runner::new("");
    let cached = runner.cache_dir().join("bin");
    std::fs::create_dir_all(&cached).unwrap();
    write_exec(&cached.join("retrygate"), "#!/bin/sh\necho 'retrygate 9.8.7 (cached)'\n");
    let out = runner.run("source", "http://127.0.0.1:9/unused", &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("from the cache of an earlier source build"));
    assert!(runner.cargo_calls().is_empty());
    assert_eq!(runner.outputs()["built"], "false");
    assert_eq!(run_bin(&runner.outputs()["bin"]), "retrygate 9.8.7 (cached)\n");
}

#[test]
fn the_cache_key_follows_the_ref_the_lock_file_and_the_source() {
    let runner = Runner::new("");
    let base = "http://127.0.0.1:9/unused";
    let key = |extra: &[(&str, &str)]| {
        let out = runner.run("prebuilt", base, extra);
        assert!(out.status.success(), "{}", text(&out.stderr));
        runner.outputs()["cache-key"].clone()
    };
    let first = key(&[]);
    assert!(first.starts_with("retrygate-source-Linux-X64-v9.8.7-lock-"), "{first}");
    assert_eq!(key(&[]), first, "the same source gives the same key");
    assert_ne!(key(&[("ACTION_REF", "v9.8.8")]), first);
    std::fs::write(runner.action.join("Cargo.lock"), "version = 4\n# changed\n").unwrap();
    let lock_changed = key(&[]);
    assert_ne!(lock_changed, first);
    std::fs::write(runner.action.join("src/main.rs"), "fn main() { println!(); }\n").unwrap();
    assert_ne!(key(&[]), lock_changed, "a moved ref such as `main` with new source gets a new key");
}

#[test]
fn a_plain_http_download_base_other_than_loopback_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let good = archive(dir.path(), "x");
    let runner = Runner::new(&format!("{}  {ASSET}\n", sha256_hex(&good)));
    let out = runner.run("prebuilt", "http://example.com/releases/download", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(
            "download base 'http://example.com/releases/download' must be an https:// URL (plain http only for http://127.0.0.1)"
        ),
        "{}",
        text(&out.stderr)
    );
    assert!(!runner.prebuilt_bin().exists());
}

#[test]
fn an_archive_without_the_binary_is_refused_even_when_its_sum_matches() {
    let dir = tempfile::tempdir().unwrap();
    let stage = dir.path().join("stage");
    std::fs::create_dir_all(&stage).unwrap();
    std::fs::write(stage.join("README"), "no binary here\n").unwrap();
    let out = dir.path().join("bad.tar.gz");
    assert!(Command::new("tar")
        .arg("-czf")
        .arg(&out)
        .arg("-C")
        .arg(&stage)
        .arg("README")
        .status()
        .unwrap()
        .success());
    let bad = std::fs::read(&out).unwrap();
    let runner = Runner::new(&format!("{}  {ASSET}\n", sha256_hex(&bad)));
    let server = Server::start(HashMap::from([(format!("/releases/download/v{VERSION}/{ASSET}"), bad)]));
    let out = runner.run("prebuilt", &server.base, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("holds no regular file named retrygate"), "{}", text(&out.stderr));
    assert!(!runner.prebuilt_bin().exists());
}

#[test]
fn the_script_refuses_an_unknown_phase_and_a_missing_runner_environment() {
    let runner = Runner::new("");
    let out = runner.run("install", "http://127.0.0.1:9/unused", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("usage: install-action.sh prebuilt|source"));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install-action.sh");
    let out = Command::new("bash").arg(script).arg("prebuilt").env_remove("RUNNER_TEMP").output().unwrap();
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("RUNNER_TEMP is not set"), "{}", text(&out.stderr));
}

/// release.yml builds exactly the archives the script looks for, and only its
/// upload job can write.
#[test]
fn the_release_workflow_builds_the_archives_the_script_installs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let wf: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(root.join(".github/workflows/release.yml")).unwrap())
            .unwrap();
    assert_eq!(wf["on"]["push"]["tags"][0], "v[0-9]+.[0-9]+.[0-9]+");
    assert_eq!(wf["permissions"], serde_yaml::Value::Mapping(Default::default()));
    let mut targets: Vec<String> = wf["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|e| e["target"].as_str().unwrap().to_string())
        .collect();
    targets.sort();
    let script = std::fs::read_to_string(root.join("scripts/install-action.sh")).unwrap();
    let mut known: Vec<String> = script
        .lines()
        .filter_map(|l| l.trim().split_once(") target=").map(|(_, t)| t.trim_end_matches(" ;;").to_string()))
        .filter(|t| !t.starts_with('"'))
        .collect();
    known.sort();
    assert_eq!(targets, known);
    assert_eq!(
        targets,
        [
            "aarch64-apple-darwin",
            "aarch64-unknown-linux-musl",
            "x86_64-apple-darwin",
            "x86_64-unknown-linux-musl"
        ]
    );
    // The archive name the pack step writes is the one the script downloads.
    let build = serde_yaml::to_string(&wf["jobs"]["build"]).unwrap();
    assert!(build.contains("bash scripts/release.sh pack \"$TARGET\" \"$TAG\""), "{build}");
    let release_sh = std::fs::read_to_string(root.join("scripts/release.sh")).unwrap();
    assert!(release_sh.contains("archive=\"$out/retrygate-${tag}-${target}.tar.gz\""));
    assert!(script.contains("asset=\"retrygate-v${version}-${target}.tar.gz\""));
    // Least privilege: the build jobs read; only the upload job writes, and no sums file is uploaded.
    let jobs = wf["jobs"].as_mapping().unwrap();
    for (name, job) in jobs {
        let contents = job["permissions"]["contents"].as_str().unwrap();
        let want = if name == "upload" { "write" } else { "read" };
        assert_eq!(contents, want, "job {name:?}");
        assert_eq!(job["permissions"].as_mapping().unwrap().len(), 1, "job {name:?}");
    }
    let upload = serde_yaml::to_string(&wf["jobs"]["upload"]).unwrap();
    assert!(upload.contains("gh release upload \"$TAG\" retrygate-\"$TAG\"-*.tar.gz"), "{upload}");
    for line in upload.lines().filter(|l| l.contains("gh release upload")) {
        assert!(!line.contains("sha256"), "a sums file next to the archives: {line}");
    }
}

#[test]
fn a_local_action_without_a_repository_builds_from_source_without_downloading() {
    let dir = tempfile::tempdir().unwrap();
    let good = archive(dir.path(), "y");
    let runner = Runner::new(&format!("{}  {ASSET}\n", sha256_hex(&good)));
    // No download base override and no ACTION_REPOSITORY: `uses: ./`.
    let out = runner.run("prebuilt", "", &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout)
            .contains(&format!("the action has no repository to download {ASSET} from (a local action)")),
        "{}",
        text(&out.stdout)
    );
    assert!(!runner.outputs().contains_key("bin"));
}

/// Runs `scripts/release.sh`, the steps release.yml runs, in the repository.
fn release(args: &[&str]) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/release.sh");
    Command::new("bash").arg(script).args(args).output().unwrap()
}

#[test]
fn the_release_steps_check_the_tag_pack_the_real_binary_and_the_action_installs_it() {
    // The tag check, both ways, against this repository's Cargo.toml.
    let version = env!("CARGO_PKG_VERSION");
    let ok = release(&["check-tag", &format!("v{version}")]);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
    let bad = release(&["check-tag", "v0.0.0-nope"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        text(&bad.stderr).contains(&format!(
            "tag v0.0.0-nope but Cargo.toml says version {version}; bump Cargo.toml first"
        )),
        "{}",
        text(&bad.stderr)
    );
    assert_eq!(release(&["publish"]).status.code(), Some(2), "an unknown step is a usage error");

    // This build's binary is dynamically linked: packing it as a Linux musl
    // archive is refused, with what to do.
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    let bin = env!("CARGO_BIN_EXE_retrygate");
    let musl = release(&["pack", "x86_64-unknown-linux-musl", "v9.8.7", bin, out]);
    assert_eq!(musl.status.code(), Some(1));
    assert!(text(&musl.stderr)
        .contains("is not statically linked, but x86_64-unknown-linux-musl archives must be"));
    assert!(std::fs::read_dir(out_dir.path()).unwrap().next().is_none(), "nothing half-written");

    // Packed under a macOS target's name (the archive's name is only a label
    // here; the binary inside is this build's, so it runs on this machine).
    let target = "aarch64-apple-darwin";
    let asset = format!("retrygate-v{VERSION}-{target}.tar.gz");
    let packed = release(&["pack", target, &format!("v{VERSION}"), bin, out]);
    assert_eq!(packed.status.code(), Some(0), "{}", text(&packed.stderr));
    let archive_path = out_dir.path().join(&asset);
    assert_eq!(text(&packed.stdout).trim(), archive_path.to_str().unwrap());
    let listing = Command::new("tar").arg("-tzvf").arg(&archive_path).output().unwrap();
    let listing = text(&listing.stdout);
    assert_eq!(listing.lines().count(), 1, "one file: {listing}");
    assert!(listing.contains("rwxr-xr-x 0/0") && listing.trim_end().ends_with(" retrygate"), "{listing}");
    // Packing the same binary again gives the same bytes: the sum a
    // maintainer computes is the one the workflow printed.
    let bytes = std::fs::read(&archive_path).unwrap();
    let again = tempfile::tempdir().unwrap();
    release(&["pack", target, &format!("v{VERSION}"), bin, again.path().to_str().unwrap()]);
    assert_eq!(std::fs::read(again.path().join(&asset)).unwrap(), bytes, "reproducible archive");

    // The sums, in dist/sha256sums.txt's format.
    let sums = release(&["sums", out]);
    assert_eq!(sums.status.code(), Some(0), "{}", text(&sums.stderr));
    assert_eq!(text(&sums.stdout), format!("{}  {asset}\n", sha256_hex(&bytes)));
    let empty = tempfile::tempdir().unwrap();
    let none = release(&["sums", empty.path().to_str().unwrap()]);
    assert_eq!(none.status.code(), Some(1));
    assert!(text(&none.stderr).contains("no retrygate-v*.tar.gz archives in"));

    // The Action installs that archive from a release server and runs it.
    let runner = Runner::new(&text(&sums.stdout));
    let server = Server::start(HashMap::from([(format!("/releases/download/v{VERSION}/{asset}"), bytes)]));
    let out = runner.run("prebuilt", &server.base, &[("RUNNER_OS", "macOS"), ("RUNNER_ARCH", "ARM64")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(&format!("retrygate installed (prebuilt {asset}, SHA-256 verified)")));
    let installed = runner.outputs()["bin"].clone();
    let version_line = text(&Command::new(&installed).arg("--version").output().unwrap().stdout);
    assert_eq!(version_line, format!("retrygate {version}\n"), "the installed binary is the packed one");
}
