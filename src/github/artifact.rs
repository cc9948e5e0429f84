//! The repository's Actions artifacts, listed and downloaded for the gate,
//! which decides which one holds the pull request's tool ledger
//! (`src/gate/ledger.rs`: a run on the head first, else an agent's run on
//! an earlier commit of the pull request).
//!
//! The calls (GitHub REST, "Actions artifacts"):
//!
//! 1. `GET /repos/{owner}/{repo}/actions/artifacts?name={ledger.artifact}`:
//!    every artifact of that name in this repository, each with the
//!    `workflow_run` that uploaded it (`id`, `head_sha`), listed newest
//!    first (`created_at`, then `id`);
//! 2. `GET /repos/{owner}/{repo}/actions/artifacts/{id}/zip` answers `302`
//!    with a short-lived signed `Location` (about a minute; `410` once the
//!    artifact has expired); the zip is fetched from there **without** the
//!    token (the URL carries its own signature; the token never leaves for
//!    another host), at most [`MAX_ZIP_BYTES`] bytes, within
//!    [`DOWNLOAD_TIMEOUT`]. An expired artifact, or one listed larger than
//!    that, is refused without a download.
//!
//! The bytes go to [`crate::ledger::artifact::verify_zip`], which reads the
//! ledger entry in memory; nothing is written to disk. Works from any job
//! whose token has `actions: read`, including a publishing job that runs no
//! pull-request code.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use octocrab::Octocrab;
use serde::Deserialize;

use super::client::{Api, ApiError, CONNECT_TIMEOUT, PER_PAGE, READ_TIMEOUT};
use crate::ledger::artifact::{ArtifactRef, ArtifactSource, ListedArtifact, MAX_ZIP_BYTES};

/// Longest the download of one artifact (redirect and zip) may take.
pub(crate) const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(120);

/// The Actions artifacts of one repository, as a place the gate looks for
/// the ledger.
#[derive(Clone)]
pub struct GithubArtifacts {
    api_url: String,
    token: String,
    repository: String,
    /// `GITHUB_SERVER_URL`, for links to the run that uploaded the artifact.
    server_url: Option<String>,
}

impl std::fmt::Debug for GithubArtifacts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("GithubArtifacts")
            .field("api_url", &self.api_url)
            .field("repository", &self.repository)
            .finish()
    }
}

impl GithubArtifacts {
    /// A client for `repository` (`owner/name`) at `api_url`; `server_url`
    /// is the web host its links point to.
    pub fn new(api_url: &str, token: &str, repository: &str, server_url: Option<&str>) -> GithubArtifacts {
        GithubArtifacts {
            api_url: api_url.to_string(),
            token: token.to_string(),
            repository: repository.to_string(),
            server_url: server_url.map(|s| s.trim_end_matches('/').to_string()),
        }
    }

    /// As an [`ArtifactSource`] for [`crate::gate::CheckInput::artifacts`].
    pub fn shared(self) -> Arc<dyn ArtifactSource> {
        Arc::new(self)
    }
}

impl GithubArtifacts {
    /// Runs `f` with an [`Api`] on a thread and a runtime of its own: the
    /// gate is synchronous and may be running inside the Action's runtime,
    /// where another runtime cannot be entered.
    fn with_api<T: Send>(
        &self,
        f: impl FnOnce(Api) -> std::pin::Pin<Box<dyn std::future::Future<Output = anyhow::Result<T>> + Send>>
            + Send,
    ) -> anyhow::Result<T> {
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let rt =
                        tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| {
                            anyhow::anyhow!("cannot start the async runtime for the artifact lookup: {e}")
                        })?;
                    // octocrab's client spawns onto the runtime it is built in.
                    rt.block_on(async {
                        let api = Api::new(&self.api_url, None, &self.token, &self.repository)?;
                        f(api).await
                    })
                })
                .join()
                .unwrap_or_else(|_| {
                    Err(anyhow::anyhow!(
                        "the artifact lookup panicked; this is a bug in retrygate, please report it"
                    ))
                })
        })
    }
}

impl ArtifactSource for GithubArtifacts {
    fn describe(&self) -> String {
        format!("the Actions artifacts of {}", self.repository)
    }

    fn list(&self, name: &str) -> anyhow::Result<Result<Vec<ListedArtifact>, String>> {
        let name = name.to_string();
        let server = self.server_url.clone();
        self.with_api(move |api| Box::pin(async move { list(&api, &name, server.as_deref()).await }))
    }

    fn download(&self, artifact: &ListedArtifact) -> anyhow::Result<Result<Vec<u8>, String>> {
        let a = artifact.clone();
        self.with_api(move |api| Box::pin(async move { fetch(&api, &a).await }))
    }
}

/// An artifact as the list endpoint describes it.
#[derive(Debug, Clone, Deserialize)]
struct Listed {
    id: u64,
    name: String,
    #[serde(default)]
    size_in_bytes: u64,
    #[serde(default)]
    expired: bool,
    created_at: Option<String>,
    expires_at: Option<String>,
    workflow_run: Option<ListedRun>,
}

#[derive(Debug, Clone, Deserialize)]
struct ListedRun {
    id: Option<u64>,
    head_sha: Option<String>,
}

impl Listed {
    fn head_sha(&self) -> Option<&str> {
        self.workflow_run.as_ref().and_then(|r| r.head_sha.as_deref())
    }

    fn reference(&self, owner_repo: &str, server_url: Option<&str>) -> ArtifactRef {
        let run_id = self.workflow_run.as_ref().and_then(|r| r.id).unwrap_or(0);
        ArtifactRef {
            artifact_id: self.id,
            name: self.name.clone(),
            run_id,
            head_sha: self.head_sha().unwrap_or_default().to_string(),
            created_at: self.created_at.clone(),
            expires_at: self.expires_at.clone(),
            run_url: server_url
                .filter(|_| run_id != 0)
                .map(|s| format!("{}/{owner_repo}/actions/runs/{run_id}", s.trim_end_matches('/'))),
        }
    }
}

/// Every artifact named `name`, newest first. A token that may not read
/// Actions artifacts (no `actions: read`) gives `Ok(Err(why))`: the
/// artifact cannot be reached, which is a missing ledger with a hint, not a
/// failure to decide.
pub(crate) async fn list(
    api: &Api,
    name: &str,
    server_url: Option<&str>,
) -> anyhow::Result<Result<Vec<ListedArtifact>, String>> {
    let what = format!("listing the Actions artifacts named `{name}`");
    let route = api.repo_route(&format!(
        "/actions/artifacts?name={}&per_page={PER_PAGE}",
        crate::http::encode_component(name)
    ));
    let items = match api.get_all(&what, &route, Some("artifacts")).await {
        Ok(items) => items,
        Err(e) if e.is_forbidden() => {
            return Ok(Err(format!("could not be listed ({e}); give the job `permissions: actions: read`")))
        }
        Err(e) => return Err(e.into()),
    };
    let owner_repo = format!("{}/{}", api.owner, api.repo);
    let mut listed = Vec::with_capacity(items.len());
    for item in items {
        let a: Listed = serde_json::from_value(item)
            .map_err(|e| anyhow::anyhow!("{what}: an entry of GitHub's answer is not an artifact ({e})"))?;
        // The `name` filter is exact on GitHub; checked again all the same.
        if a.name == name {
            listed.push(a);
        }
    }
    Ok(Ok(newest(listed.iter().collect())
        .into_iter()
        .map(|a| ListedArtifact {
            artifact: a.reference(&owner_repo, server_url),
            expired: a.expired,
            size_in_bytes: a.size_in_bytes,
        })
        .collect()))
}

/// Downloads one listed artifact, refusing an expired or oversized one.
pub(crate) async fn fetch(api: &Api, listed: &ListedArtifact) -> anyhow::Result<Result<Vec<u8>, String>> {
    let a = &listed.artifact;
    if listed.expired {
        let when = a.expires_at.clone().unwrap_or_else(|| "an unknown date".into());
        return Ok(Err(format!(
            "expired on {when}; re-run the agent's workflow to upload it again, or commit the ledger"
        )));
    }
    if listed.size_in_bytes > MAX_ZIP_BYTES {
        return Ok(Err(format!(
            "is {} bytes, over the {} MiB an artifact zip may have; upload the ledger file alone",
            listed.size_in_bytes,
            MAX_ZIP_BYTES >> 20
        )));
    }
    match tokio::time::timeout(DOWNLOAD_TIMEOUT, download(api, a.artifact_id)).await {
        Err(_) => anyhow::bail!(
            "downloading {}: no complete answer within {}s; re-run the job",
            a.describe(),
            DOWNLOAD_TIMEOUT.as_secs()
        ),
        Ok(Ok(zip)) => Ok(Ok(zip)),
        Ok(Err(Download::Expired)) => Ok(Err("expired while it was being fetched (GitHub answered 410 Gone); re-run the agent's workflow to upload it again, or commit the ledger".to_string())),
        Ok(Err(Download::TooLarge)) => Ok(Err(format!(
            "sent more than the {} MiB an artifact zip may have (its listing said {} bytes); upload the ledger file alone",
            MAX_ZIP_BYTES >> 20,
            listed.size_in_bytes
        ))),
        Ok(Err(Download::Failed(e))) => Err(anyhow::anyhow!("downloading {}: {e}", a.describe())),
    }
}

/// Newest first: by `created_at` (GitHub's ISO 8601 UTC times sort as
/// text), then by id.
fn newest(mut v: Vec<&Listed>) -> Vec<&Listed> {
    v.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
    v
}

enum Download {
    Expired,
    TooLarge,
    Failed(String),
}

/// `GET …/artifacts/{id}/zip`, then the signed URL it redirects to.
async fn download(api: &Api, id: u64) -> Result<Vec<u8>, Download> {
    let route = api.repo_route(&format!("/actions/artifacts/{id}/zip"));
    let resp =
        api.crab()._get(route).await.map_err(|e| Download::Failed(format!("no answer from GitHub ({e})")))?;
    let status = resp.status().as_u16();
    match status {
        301 | 302 | 303 | 307 | 308 => {}
        // GitHub Enterprise Server may serve the zip itself.
        200 => return read_bounded(resp).await,
        410 => return Err(Download::Expired),
        _ => {
            let body = read_bounded(resp).await.unwrap_or_default();
            let message = super::client::error_message(&String::from_utf8_lossy(&body));
            let e = ApiError::Status { what: "the artifact download".into(), status, message };
            let hint = if e.is_forbidden() { "; give the job `permissions: actions: read`" } else { "" };
            return Err(Download::Failed(format!("{e}{hint}")));
        }
    }
    let location = resp
        .headers()
        .get(hyper::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .filter(|l| l.starts_with("https://") || l.starts_with("http://"))
        .ok_or_else(|| {
            Download::Failed(format!(
                "GitHub answered {status} without an absolute Location to download from"
            ))
        })?
        .to_string();
    // A client with no credentials: the signed URL is on another host, and
    // the token must not travel there.
    let anonymous = Octocrab::builder()
        .set_connect_timeout(Some(CONNECT_TIMEOUT))
        .set_read_timeout(Some(READ_TIMEOUT))
        .build()
        .map_err(|e| Download::Failed(format!("cannot build the download client: {e}")))?;
    let resp = anonymous
        ._get(location.as_str())
        .await
        .map_err(|e| Download::Failed(format!("no answer from the artifact storage ({e})")))?;
    match resp.status().as_u16() {
        200 => read_bounded(resp).await,
        s => Err(Download::Failed(format!(
            "the artifact storage answered {s}; re-run the job (the download link lives about a minute)"
        ))),
    }
}

/// The body, refused as soon as it passes [`MAX_ZIP_BYTES`] (whatever
/// `Content-Length` claims).
async fn read_bounded(
    resp: hyper::Response<http_body_util::combinators::BoxBody<Bytes, octocrab::Error>>,
) -> Result<Vec<u8>, Download> {
    let announced = resp
        .headers()
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|n| n > MAX_ZIP_BYTES) {
        return Err(Download::TooLarge);
    }
    let mut body = resp.into_body();
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| Download::Failed(format!("the download broke off ({e})")))?;
        if let Ok(data) = frame.into_data() {
            if (out.len() + data.len()) as u64 > MAX_ZIP_BYTES {
                return Err(Download::TooLarge);
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(id: u64, head: &str, created: &str, expired: bool) -> Listed {
        Listed {
            id,
            name: "tool-ledger".into(),
            size_in_bytes: 10,
            expired,
            created_at: Some(created.into()),
            expires_at: None,
            workflow_run: Some(ListedRun { id: Some(id * 10), head_sha: Some(head.into()) }),
        }
    }

    #[test]
    fn newest_sorts_by_creation_then_id() {
        let a = listed(1, "h", "2026-11-29T10:00:00Z", false);
        let b = listed(2, "h", "2026-11-29T11:00:00Z", false);
        let c = listed(3, "h", "2026-11-29T11:00:00Z", false);
        let ids: Vec<u64> = newest(vec![&a, &b, &c]).iter().map(|l| l.id).collect();
        assert_eq!(ids, [3, 2, 1]);
    }

    #[test]
    fn the_real_list_fixture_parses_and_links_the_run() {
        let text = include_str!("../../tests/fixtures/github/repository_artifacts.json");
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        let a: Listed = serde_json::from_value(v["artifacts"][0].clone()).unwrap();
        assert_eq!((a.id, a.head_sha()), (11, Some("328faa0536e6fef19753d9d91dc96a9931694ce3")));
        let r = a.reference("octo-org/octo-docs", Some("https://github.com/"));
        assert_eq!(r.run_url.as_deref(), Some("https://github.com/octo-org/octo-docs/actions/runs/2332938"));
        assert!(format!("{:?}", GithubArtifacts::new("u", "ghs_secret", "o/r", None))
            .find("ghs_secret")
            .is_none());
    }
}
