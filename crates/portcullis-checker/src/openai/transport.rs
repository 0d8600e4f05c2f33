//! The transport under async-openai: one attempt, only our headers, and a non-2xx answer kept
//! whole (status and body) as a [`Status`] error.

use async_openai::error::OpenAIError;
use async_openai::middleware::{HttpRequestFactory, ReqwestService};
use http::header::{HeaderMap, AUTHORIZATION, CONTENT_TYPE};
use tower::ServiceExt;

/// A non-2xx answer, whole: async-openai keeps only OpenAI-shaped errors' status.
#[derive(Debug, thiserror::Error)]
#[error("HTTP {code}: {body}")]
pub(super) struct Status {
    pub(super) code: u16,
    pub(super) body: String,
}

/// The transport: one attempt, only our headers, and a non-2xx answer as a [`Status`] error.
pub(super) async fn once(
    transport: ReqwestService,
    request: HttpRequestFactory,
    authorize: bool,
) -> Result<HttpResponse, OpenAIError> {
    let ours = HttpRequestFactory::new(move || {
        let request = request.clone();
        async move {
            let mut built = request.build().await?;
            keep_only_our_headers(built.headers_mut(), authorize);
            Ok(built)
        }
    });
    let response = transport.oneshot(ours).await?;
    let code = response.status().as_u16();
    if response.status().is_success() {
        return Ok(response);
    }
    let body = response.bytes().await.map_err(OpenAIError::Reqwest)?;
    Err(OpenAIError::Boxed(Box::new(Status { code, body: String::from_utf8_lossy(&body).into_owned() })))
}

/// `reqwest::Response`, named through the service: reqwest is async-openai's dependency, not ours.
type HttpResponse = <ReqwestService as tower::Service<HttpRequestFactory>>::Response;

pub(super) fn keep_only_our_headers(headers: &mut HeaderMap, authorize: bool) {
    let content_type = headers.remove(CONTENT_TYPE);
    let authorization = headers.remove(AUTHORIZATION).filter(|_| authorize);
    headers.clear();
    if let Some(v) = content_type {
        headers.insert(CONTENT_TYPE, v);
    }
    if let Some(v) = authorization {
        headers.insert(AUTHORIZATION, v);
    }
}
