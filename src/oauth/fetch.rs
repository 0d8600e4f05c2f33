//! A small HTTP client for OAuth documents and token requests: every exchange bounded in time
//! (connect, and the whole exchange) and in size (the answer is read by hand, frame by frame,
//! up to [`MAX_DOCUMENT`] bytes), with no connection pool — these requests are rare, and a
//! pooled connection would tie one worker's runtime to another's.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

/// The largest metadata document, token response or relayed OAuth answer read.
pub const MAX_DOCUMENT: usize = 64 << 10;
/// The longest any one exchange (connect, head and body) may take.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// A bounded client.
#[derive(Clone)]
pub struct Fetcher {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    timeout: Duration,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher").field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

/// A whole answer.
#[derive(Debug)]
pub struct Fetched {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// Why an exchange failed; says where, never what was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("{url} could not be reached ({why})")]
    Unreachable { url: String, why: String },
    #[error("{url} did not answer within {secs}s")]
    Timeout { url: String, secs: u64 },
    #[error("{url} sent more than {limit} bytes")]
    TooLarge { url: String, limit: usize },
}

impl Fetcher {
    pub fn new(connect_timeout: Duration) -> Fetcher {
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_connect_timeout(Some(connect_timeout.min(FETCH_TIMEOUT)));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_webpki_roots()
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new()).pool_max_idle_per_host(0).build(https);
        Fetcher { client, timeout: FETCH_TIMEOUT }
    }

    /// A GET asking for JSON.
    pub async fn get_json(&self, url: &Uri) -> Result<Fetched, FetchError> {
        let req = Request::get(url.clone())
            .header(http::header::ACCEPT, "application/json")
            .body(Full::new(Bytes::new()))
            .expect("a GET of a parsed URI is a valid request");
        self.send(req).await
    }

    /// Sends `req`; the answer is read whole, bounded.
    pub async fn send(&self, req: Request<Full<Bytes>>) -> Result<Fetched, FetchError> {
        let url = redacted_url(req.uri());
        let exchange = async {
            let resp = self.client.request(req).await.map_err(|e| FetchError::Unreachable {
                url: url.clone(),
                why: if e.is_connect() { "connection failed".into() } else { "the exchange failed".into() },
            })?;
            let (parts, mut body) = resp.into_parts();
            let mut read = BytesMut::new();
            while let Some(frame) = body.frame().await {
                let frame = frame.map_err(|_| FetchError::Unreachable {
                    url: url.clone(),
                    why: "the answer broke off".into(),
                })?;
                if let Ok(data) = frame.into_data() {
                    if read.len() + data.len() > MAX_DOCUMENT {
                        return Err(FetchError::TooLarge { url: url.clone(), limit: MAX_DOCUMENT });
                    }
                    read.extend_from_slice(&data);
                }
            }
            Ok(Fetched { status: parts.status, headers: parts.headers, body: read.freeze() })
        };
        match tokio::time::timeout(self.timeout, exchange).await {
            Ok(r) => r,
            Err(_) => Err(FetchError::Timeout { url, secs: self.timeout.as_secs() }),
        }
    }
}

/// A URL as it may appear in an error: scheme, authority and path, no query (a query could
/// carry a code or a state).
pub fn redacted_url(u: &Uri) -> String {
    format!("{}://{}{}", u.scheme_str().unwrap_or("http"), u.authority().map_or("", |a| a.as_str()), u.path())
}
