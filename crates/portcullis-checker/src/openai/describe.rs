//! Asking the server what its context window is, once per client: `GET /props` (llama.cpp, at
//! the server's root and under `base_url`) and `GET {base_url}/models` (vLLM), side by side,
//! within a short bound; the smallest window any of them names.

use std::time::Duration;

use async_openai::error::OpenAIError;
use async_openai::middleware::{HttpRequestFactory, ReqwestService};
use http::header::AUTHORIZATION;
use serde_json::Value;
use tower::ServiceExt;

use crate::context::{self, Source};

/// A description is a few kilobytes (llama.cpp's carries the chat template); more is not one.
const MAX_DESCRIPTION_BYTES: usize = 1 << 20;
/// The most the first check waits for the description, whatever the model's own timeout.
pub(super) const DESCRIBE_WITHIN: Duration = Duration::from_secs(2);

/// Where to ask, for a `base_url` like `http://host:8080/v1`: `/props` at the root and under
/// the base (the same URL when the base has no `/v1`), and the base's `/models`.
pub(super) fn urls(base_url: &str) -> Vec<(Source, String)> {
    let base = base_url.trim_end_matches('/');
    let root = base.strip_suffix("/v1").unwrap_or(base);
    let mut urls = vec![(Source::Props, format!("{root}/props"))];
    if root != base {
        urls.push((Source::Props, format!("{base}/props")));
    }
    urls.push((Source::Models, format!("{base}/models")));
    urls
}

/// The smallest window the server's descriptions name, with where it came from; `None` when
/// none names one within `within` (no answer, an error status, garbage, another shape).
pub(super) async fn described(
    transport: &ReqwestService,
    base_url: &str,
    key: Option<&str>,
    model: &str,
    within: Duration,
) -> Option<(u32, Source)> {
    let asks = urls(base_url).into_iter().map(|(source, url)| async move {
        let doc = get_json(transport.clone(), url, key.map(str::to_owned)).await?;
        let n = match source {
            Source::Props => context::from_props(&doc),
            _ => context::from_models(&doc, model),
        };
        n.map(|n| (n, source))
    });
    let all = tokio::time::timeout(within, futures_util::future::join_all(asks)).await.ok()?;
    all.into_iter().flatten().min_by_key(|(n, _)| *n)
}

/// One GET through the client's transport (one attempt, our headers only); the body as JSON
/// when the answer is a 2xx of at most [`MAX_DESCRIPTION_BYTES`].
async fn get_json(transport: ReqwestService, url: String, key: Option<String>) -> Option<Value> {
    let request = HttpRequestFactory::new(move || {
        let (url, key) = (url.clone(), key.clone());
        async move {
            let mut builder = http::Request::get(url);
            if let Some(key) = key {
                builder = builder.header(AUTHORIZATION, format!("Bearer {key}"));
            }
            let request =
                builder.body(Vec::new()).map_err(|e| OpenAIError::InvalidArgument(e.to_string()))?;
            request.try_into().map_err(OpenAIError::Reqwest)
        }
    });
    let mut response = transport.oneshot(request).await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.ok()? {
        if body.len() + chunk.len() > MAX_DESCRIPTION_BYTES {
            return None;
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn props_are_asked_at_the_root_and_under_the_base() {
        let at = |base: &str| urls(base).into_iter().map(|(_, u)| u).collect::<Vec<_>>();
        assert_eq!(
            at("http://127.0.0.1:8080/v1/"),
            [
                "http://127.0.0.1:8080/props",
                "http://127.0.0.1:8080/v1/props",
                "http://127.0.0.1:8080/v1/models"
            ]
        );
        assert_eq!(at("http://h:1"), ["http://h:1/props", "http://h:1/models"]);
    }
}
