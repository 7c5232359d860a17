//! The request body as the router sees it: hyper's, which on HTTP/2 outlives the handler when
//! the handler answers without reading it to its end.
//!
//! h2 resets a stream whose request body is dropped unread: with `NO_ERROR` once the response
//! is sent (RFC 9113 8.1: the server needs no more of the request), but with `CANCEL` while the
//! response is still being sent, which clients take as a failed request (curl: exit 92). An
//! early answer (401, 403, 413, 415, 429, a review that needs no body) used to drop the body
//! with the request, before hyper had sent the response. The body is now parked, and dropped
//! with the response body ([`Parked`]), after the response's last frame: the stream ends with
//! the `NO_ERROR` reset that Go's server sends too.

use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

/// Where an unread request body waits until the response is sent (held by the response body).
#[derive(Clone, Default)]
pub(crate) struct Parked(Arc<Mutex<Option<Incoming>>>);

/// What of an unread body is read before the answer goes out, at most: Go's HTTP/1.1 server
/// reads up to 256 KiB of a body its handler left (`maxPostHandlerReadBytes`).
const DRAIN_BYTES: usize = 256 * 1024;
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_millis(500);

impl Parked {
    /// Reads what is left of a body the handler did not read, up to [`DRAIN_BYTES`] and
    /// [`DRAIN_TIME`], so that a small body's stream is closed by the client before the answer
    /// (which then needs no reset at all: some clients, curl 7.88 among them, fail a request
    /// whose stream is reset even with NO_ERROR after a complete response). What is still
    /// unread after that stays parked, for the NO_ERROR reset.
    pub(crate) async fn drain(&self) {
        let taken = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        let Some(mut body) = taken else {
            return;
        };
        let read = async {
            use http_body_util::BodyExt as _;
            let mut n = 0;
            while let Some(Ok(frame)) = body.frame().await {
                n += frame.data_ref().map_or(0, Bytes::len);
                if n > DRAIN_BYTES {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(DRAIN_TIME, read).await;
        if !body.is_end_stream() {
            *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(body);
        }
    }
}

/// A request's body: hyper's, parked on drop if it was not read to its end (HTTP/2).
pub(crate) struct RequestBody {
    inner: Option<Incoming>,
    park: Option<Parked>,
}

impl RequestBody {
    /// A body dropped as usual (HTTP/1.1: hyper reads or closes past it itself).
    pub(crate) fn new(inner: Incoming) -> Self {
        RequestBody {
            inner: Some(inner),
            park: None,
        }
    }

    /// A body left in `park` if it is dropped unread.
    pub(crate) fn parked_in(inner: Incoming, park: Parked) -> Self {
        RequestBody {
            inner: Some(inner),
            park: Some(park),
        }
    }
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        match self.inner.as_mut() {
            Some(b) => Pin::new(b).poll_frame(cx),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(Body::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.inner
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), Body::size_hint)
    }
}

impl Drop for RequestBody {
    fn drop(&mut self) {
        if let (Some(inner), Some(park)) = (self.inner.take(), &self.park) {
            if !inner.is_end_stream() {
                *park.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(inner);
            }
        }
    }
}
