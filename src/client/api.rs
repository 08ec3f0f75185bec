//! The service as the client sees it: authenticated requests and their JSON answers.

use crate::config::ClientArgs;
use anyhow::Context;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use std::path::Path;
use url::Url;

/// The service, as one organization sees it.
pub struct Api {
    pub(super) base: Url,
    pub(super) token: String,
    pub(super) http: reqwest::Client,
}

impl Api {
    pub(super) fn new(client: &ClientArgs) -> Api {
        Api {
            base: client.url.clone(),
            token: client.token.clone(),
            http: reqwest::Client::new(),
        }
    }

    pub(super) fn url(&self, path: &str) -> anyhow::Result<Url> {
        self.base
            .join(path)
            .context("the service URL cannot be joined")
    }

    /// A JSON request; the answer's JSON, or the API's error as a sentence.
    pub(super) async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> anyhow::Result<Value> {
        let mut request = self
            .http
            .request(method, self.url(path)?)
            .bearer_auth(&self.token);
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let response = request
            .send()
            .await
            .with_context(|| format!("{} did not answer", self.base))?;
        answer(response).await
    }

    /// Uploads a local file (streamed); the upload's `src`.
    pub(super) async fn upload(&self, path: &Path) -> anyhow::Result<String> {
        let file = tokio::fs::File::open(path)
            .await
            .with_context(|| format!("opening {}", path.display()))?;
        let size = file.metadata().await?.len();
        let body = reqwest::Body::wrap_stream(tokio_util::io::ReaderStream::new(file));
        let response = self
            .http
            .post(self.url("/v1/uploads")?)
            .bearer_auth(&self.token)
            .header("content-length", size)
            .body(body)
            .send()
            .await
            .with_context(|| format!("uploading {}", path.display()))?;
        let doc = answer(response).await?;
        doc["attributes"]["src"]
            .as_str()
            .map(str::to_string)
            .context("the upload's answer has no src")
    }
}

/// The JSON of a successful answer; for an error, `<status> <code>: <detail>`.
pub(super) async fn answer(response: reqwest::Response) -> anyhow::Result<Value> {
    let status = response.status();
    let text = response.text().await?;
    let doc: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    if status.is_success() {
        return Ok(doc);
    }
    let error = &doc["errors"][0];
    match (error["code"].as_str(), error["detail"].as_str()) {
        (Some(code), Some(detail)) => anyhow::bail!("{status} {code}: {detail}"),
        _ if status == StatusCode::UNAUTHORIZED => anyhow::bail!("{status}: check the token"),
        _ => anyhow::bail!("{status}"),
    }
}
