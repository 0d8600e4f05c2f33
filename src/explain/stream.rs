//! The live tap as server-sent events: one `decision` event per audit record (the same masked
//! JSON a line holds), a `lost` event saying how many this subscriber missed when it fell
//! behind, and a comment every 15 seconds of quiet so intermediaries keep the stream open. The
//! stream ends when the tap closes (shutdown) and is dropped when the subscriber hangs up.

use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::StatusCode;
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};

use crate::audit::tap::Subscription;
use crate::proxy::{BoxError, Resp};

/// Quiet this long, and a comment is sent.
const KEEPALIVE: Duration = Duration::from_secs(15);

/// The frames of one event: a `lost` event first when `lost` grew since the last one.
pub(super) fn frame(line: &str, lost: u64) -> String {
    let mut out = String::with_capacity(line.len() + 48);
    if lost > 0 {
        out.push_str(&format!("event: lost\ndata: {{\"lost\":{lost}}}\n\n"));
    }
    // A JSON line written by serde_json holds no raw newline: one `data:` line.
    out.push_str("event: decision\ndata: ");
    out.push_str(line);
    out.push_str("\n\n");
    out
}

struct State {
    sub: Subscription,
    /// How many lost events were already reported.
    told: u64,
}

pub(super) fn respond(sub: Subscription) -> Resp {
    let state = State { sub, told: 0 };
    let frames = futures_util::stream::unfold(state, |mut s| async move {
        let text = match tokio::time::timeout(KEEPALIVE, s.sub.next()).await {
            Err(_) => ": keep-alive\n\n".to_owned(),
            Ok(None) => return None,
            Ok(Some(line)) => {
                let lost = s.sub.lost.load(Ordering::Relaxed);
                let text = frame(&line, lost - s.told);
                s.told = lost;
                text
            }
        };
        Some((Ok::<_, BoxError>(Frame::data(Bytes::from(text))), s))
    });
    let mut resp = Resp::new(StreamBody::new(frames).boxed_unsync());
    *resp.status_mut() = StatusCode::OK;
    resp.headers_mut().insert(CONTENT_TYPE, http::HeaderValue::from_static("text/event-stream"));
    resp.headers_mut().insert(CACHE_CONTROL, http::HeaderValue::from_static("no-store"));
    resp
}

#[cfg(test)]
mod tests {
    use super::frame;

    #[test]
    fn an_event_is_one_data_line_and_a_loss_is_told_before_it() {
        assert_eq!(frame(r#"{"id":"X"}"#, 0), "event: decision\ndata: {\"id\":\"X\"}\n\n");
        assert_eq!(frame("{}", 3), "event: lost\ndata: {\"lost\":3}\n\nevent: decision\ndata: {}\n\n");
    }
}
