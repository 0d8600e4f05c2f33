//! One bounded GET, for documents the proxy loads in the background (a JWKS): bounded in time,
//! in size, and never following redirects.

use std::time::Duration;

use bytes::Bytes;
use http::Uri;
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

/// The body of `url`, or why not (status, timeout, too large).
pub async fn get(url: &Uri, max: usize, timeout: Duration) -> Result<Bytes, String> {
    let https =
        hyper_rustls::HttpsConnectorBuilder::new().with_webpki_roots().https_or_http().enable_http1().build();
    let client: Client<_, Empty<Bytes>> = Client::builder(TokioExecutor::new()).build(https);
    let req = http::Request::get(url.clone())
        .header(http::header::ACCEPT, "application/json")
        .body(Empty::new())
        .map_err(|e| e.to_string())?;
    let work = async {
        let resp = client.request(req).await.map_err(|e| format!("unreachable: {e}"))?;
        if !resp.status().is_success() {
            return Err(format!("answered HTTP {}", resp.status().as_u16()));
        }
        Limited::new(resp.into_body(), max)
            .collect()
            .await
            .map(|b| b.to_bytes())
            .map_err(|e| format!("reading the body failed ({e}; at most {max} bytes are read)"))
    };
    tokio::time::timeout(timeout, work).await.map_err(|_| format!("no answer within {timeout:?}"))?
}
