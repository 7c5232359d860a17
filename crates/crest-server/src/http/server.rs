//! Connections: the accept loop (with backoff when accepting fails), TLS with ALPN, HTTP/1.1 and
//! HTTP/2, handshake, header and idle timeouts, HTTP/2 limits, graceful shutdown.
//!
//! The bounds are kube-apiserver's (`SecureServingInfo.Serve` in k8s.io/apiserver
//! pkg/server/secure_serving.go, on Go's `net/http` and `x/net/http2` servers): a connection that
//! sends nothing, half a handshake or half a request is closed, an HTTP/2 connection without an
//! open stream is closed after the idle timeout with a GOAWAY, and one HTTP/2 connection cannot
//! claim more than its share of streams, buffers or control frames.

use crate::http::app::App;
use crate::http::request_body::{Parked, RequestBody};
use hyper::body::{Body, Frame, SizeHint};
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::sync::{watch, Notify};

/// How long connections may take and hold the server, and the limits of an HTTP/2 connection.
/// The defaults are kube-apiserver's.
#[derive(Clone, Debug)]
pub struct ConnectionLimits {
    /// How long a client may take to send a request's headers, the first or the next on a
    /// kept-alive HTTP/1.1 connection (kube-apiserver's `ReadHeaderTimeout`, 32 s); on a plain
    /// port also how long a new connection may take to send its first bytes. A connection that
    /// sends nothing, or half a request, is closed instead of held forever.
    pub read_header_timeout: Duration,
    /// How long a TLS handshake may take: 10 s, client-go's own `TLSHandshakeTimeout`, so no
    /// client gives up on a handshake the server still waits for. (Go's server bounds it by
    /// the smallest of its read, header and write timeouts, which for kube-apiserver is
    /// `ReadHeaderTimeout`, 32 s: longer than any Kubernetes client waits.)
    pub tls_handshake_timeout: Duration,
    /// How long an HTTP/2 connection may stay without an open stream before it is closed with a
    /// GOAWAY (kube-apiserver's `IdleTimeout`, 90 s). A watch holds its stream open, so a
    /// connection carrying one is never idle.
    pub http2_idle_timeout: Duration,
    /// The streams one HTTP/2 connection may have open at once (`SETTINGS_MAX_CONCURRENT_STREAMS`;
    /// kube-apiserver's `--http2-max-streams-per-connection`, 100 by default since the rapid
    /// reset fixes, as Go's client assumes). A client with more watches opens another connection.
    pub http2_max_streams: u32,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            read_header_timeout: Duration::from_secs(32),
            tls_handshake_timeout: Duration::from_secs(10),
            http2_idle_timeout: Duration::from_secs(90),
            http2_max_streams: 100,
        }
    }
}

/// The flow-control window of each HTTP/2 stream: kube-apiserver's `MaxReceiveBufferPerStream`
/// (256 KiB, "at least 99% of serialized resources in surveyed clusters were smaller"), down from
/// Go's 1 MiB so that the buffer a connection may fill is bounded by `max streams x 256 KiB`.
const HTTP2_STREAM_WINDOW: u32 = 256 * 1024;

/// The largest HTTP/2 frame a client may send: HTTP/2's default and least (16 KiB, RFC 9113
/// 6.5.2), not kube-apiserver's `MaxReadFrameSize` (256 KiB). h2 bounds the CONTINUATION frames
/// of one header block (CVE-2024-27316) by the header list size over this frame size, plus a
/// quarter: at 256 KiB that is 5, and clients split header blocks into 16 KiB frames (curl's
/// nghttp2 always; Go's transport and h2 until they have the server's settings), so a header
/// list over ~110 KB ended the connection (GOAWAY `ENHANCE_YOUR_CALM`). At 16 KiB it is 80: a
/// full header list in 16 KiB frames, and no more. Bodies then come in 16 KiB DATA frames, which
/// also bounds the buffer h2 needs to read one frame.
const HTTP2_MAX_FRAME_SIZE: u32 = 16 * 1024;

/// The largest header list an HTTP/2 client may send: Go's server advertises its
/// `MaxHeaderBytes` (kube-apiserver: 1 MiB) plus 32 bytes for each of ten typical fields
/// (x/net/http2 `adjustHTTP1MaxHeaderSize`), HTTP/2 counting 32 bytes per field on top of its
/// name and value. A request with a larger list (and at most 4 times that: h2 closes the
/// connection beyond) is answered `431` on its stream, which goes on; Go answers `431` too if
/// the list ends in the frame that crossed the limit, and closes the connection (GOAWAY) if
/// more frames follow or one field alone is longer than the limit.
const HTTP2_MAX_HEADER_LIST_SIZE: u32 = (1 << 20) + 10 * 32;

/// Streams reset by the client before the server accepted them, at most, before the connection
/// is closed with GOAWAY `ENHANCE_YOUR_CALM` (the rapid reset attack, CVE-2023-44487): h2's
/// default, pinned here so that a dependency update cannot silently drop it.
const HTTP2_MAX_PENDING_ACCEPT_RESET_STREAMS: usize = 20;

/// Streams the server may reset for a client's protocol errors, at most, before it closes the
/// connection (CVE-2025-8671, "MadeYouReset"): hyper's default, pinned for the same reason.
const HTTP2_MAX_LOCAL_ERROR_RESET_STREAMS: usize = 1024;

/// How long a connection told to go away (GOAWAY) may take to close: then it is dropped. Go's
/// `goAwayTimeout`. h2 waits for the client to answer a PING after its first GOAWAY before it
/// closes; a client that never answers must not keep the connection.
const GOAWAY_CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

/// TCP keep-alive probes on every accepted connection, so that the connections (and watches) of
/// a peer that vanished without closing them are eventually dropped: kube-apiserver's
/// `tcpKeepAliveListener` sets this period (`defaultKeepAlivePeriod`, 3 minutes), as both the
/// idle time and the interval between probes.
const TCP_KEEPALIVE_PERIOD: Duration = Duration::from_secs(180);

/// Serves one plain-TCP connection with the protocol its first bytes announce: an HTTP/2
/// prior-knowledge preface gets HTTP/2, anything else HTTP/1.1.
async fn serve_tcp(
    app: Arc<App>,
    stream: tokio::net::TcpStream,
    limits: Arc<ConnectionLimits>,
    mut stop: watch::Receiver<()>,
) {
    let mut first = [0u8; 3];
    // A peer that connects and sends nothing must not hold a task forever.
    let peeked = tokio::select! {
        _ = stop.changed() => return,
        peeked = tokio::time::timeout(limits.read_header_timeout, stream.peek(&mut first)) => peeked,
    };
    let h2 = match peeked {
        Ok(n) => matches!(n, Ok(3) if &first == b"PRI"),
        Err(_) => {
            tracing::debug!("connection sent nothing: closed");
            return;
        }
    };
    serve_connection(app, stream, h2, None, &limits, stop);
}

/// Serves one TLS connection with the protocol negotiated by ALPN (h2 preferred, as
/// kube-apiserver offers it; clients without ALPN get HTTP/1.1).
async fn serve_tls(
    app: Arc<App>,
    stream: tokio::net::TcpStream,
    acceptor: tokio_rustls::TlsAcceptor,
    limits: Arc<ConnectionLimits>,
    mut stop: watch::Receiver<()>,
) {
    // A peer that never finishes its handshake must not hold a task forever.
    let accepted = tokio::select! {
        _ = stop.changed() => return,
        accepted = tokio::time::timeout(limits.tls_handshake_timeout, acceptor.accept(stream)) => accepted,
    };
    let stream = match accepted {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "TLS handshake failed");
            return;
        }
        Err(_) => {
            tracing::debug!("TLS handshake timed out");
            return;
        }
    };
    let tls = stream.get_ref().1;
    let h2 = tls.alpn_protocol() == Some(b"h2");
    // The client's leaf certificate (taken, not verified, in the handshake: the authenticator
    // verifies it against the CA per request), for every request on the connection.
    let peer = tls
        .peer_certificates()
        .and_then(|c| c.first())
        .map(|c| crate::http::app::PeerCertificate::new(c.as_ref()));
    serve_connection(app, stream, h2, peer, &limits, stop);
}

/// Each protocol runs in a task of its own type, so an HTTP/1.1 connection (every watch of a
/// plain-HTTP client) does not carry the size of an HTTP/2 connection's state: idle watches
/// cost less memory.
fn serve_connection<S>(
    app: Arc<App>,
    stream: S,
    h2: bool,
    peer: Option<crate::http::app::PeerCertificate>,
    limits: &ConnectionLimits,
    stop: watch::Receiver<()>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    if h2 {
        serve_http2(app, stream, peer, limits, stop);
    } else {
        serve_http1(app, stream, peer, limits, stop);
    }
}

fn serve_http1<S>(
    app: Arc<App>,
    stream: S,
    peer: Option<crate::http::app::PeerCertificate>,
    limits: &ConnectionLimits,
    mut stop: watch::Receiver<()>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    // The request future is boxed: hyper keeps a slot of the service future's size for a
    // connection's whole life, and the pipeline's future is 4 KiB, which every idle watch would
    // otherwise carry after its headers are sent.
    let service =
        hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
            if let Some(p) = &peer {
                req.extensions_mut().insert(p.clone());
            }
            let req = req.map(RequestBody::new);
            Box::pin(crate::http::router::serve(app.clone(), req))
        });
    let read_header_timeout = limits.read_header_timeout;
    tokio::spawn(async move {
        // When the server stops, the request in flight is answered, then the connection closes.
        crate::http::http1::serve(stream, service, read_header_timeout, &mut stop).await;
        // Held until here: the accept loop's shutdown waits for every connection's receiver.
        drop(stop);
    });
}

fn serve_http2<S>(
    app: Arc<App>,
    stream: S,
    peer: Option<crate::http::app::PeerCertificate>,
    limits: &ConnectionLimits,
    mut stop: watch::Receiver<()>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let streams = Arc::new(OpenStreams::default());
    let counted = streams.clone();
    // Each stream counts as open from its request until its response body is finished or
    // dropped (a watch's while its events stream), or until hyper drops the request future
    // (the client reset the stream). The future is boxed as for HTTP/1.1: hyper keeps a slot
    // of its size for each stream's life.
    let service =
        hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
            let open = OpenStream::new(counted.clone());
            if let Some(p) = &peer {
                req.extensions_mut().insert(p.clone());
            }
            // An unread request body goes with the response body (see `request_body`).
            let parked = Parked::default();
            let req = req.map(|b| RequestBody::parked_in(b, parked.clone()));
            let response = crate::http::router::serve(app.clone(), req);
            Box::pin(async move {
                let mut response = response.await?;
                parked.drain().await;
                // `Connection: close` cannot travel over HTTP/2; as Go's server does, it ends
                // the connection instead: a GOAWAY once this response is sent (kube-apiserver
                // sets it for unauthenticated clients, UnauthenticatedHTTP2DOSMitigation).
                if response
                    .headers_mut()
                    .remove(http::header::CONNECTION)
                    .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"close"))
                {
                    open.0.goaway.notify_one();
                }
                Ok::<_, std::convert::Infallible>(response.map(|body| CountedBody {
                    body,
                    _open: open,
                    _request_body: parked,
                }))
            })
        });
    let max_streams = match limits.http2_max_streams {
        0 => ConnectionLimits::default().http2_max_streams,
        n => n,
    };
    // The connection window holds a full stream window for every stream (kube-apiserver's
    // `MaxReceiveBufferPerConnection`), within HTTP/2's largest window.
    let connection_window = HTTP2_STREAM_WINDOW
        .saturating_mul(max_streams)
        .min((1 << 31) - 1);
    // h2 answers a SETTINGS or PING before it reads the next frame, so a flood of either from a
    // client that does not read the answers stops at the socket's buffers instead of queueing
    // in memory (Go closes such a connection after 10,000 queued control frames); CONTINUATION
    // floods (CVE-2024-27316) end in GOAWAY after the frames the header list size allows.
    let conn = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
        .max_concurrent_streams(max_streams)
        .max_frame_size(HTTP2_MAX_FRAME_SIZE)
        .initial_stream_window_size(HTTP2_STREAM_WINDOW)
        .initial_connection_window_size(connection_window)
        .max_header_list_size(HTTP2_MAX_HEADER_LIST_SIZE)
        .max_pending_accept_reset_streams(HTTP2_MAX_PENDING_ACCEPT_RESET_STREAMS)
        .max_local_error_reset_streams(HTTP2_MAX_LOCAL_ERROR_RESET_STREAMS)
        .serve_connection(TokioIo::new(stream), service);
    let idle_timeout = limits.http2_idle_timeout;
    tokio::spawn(async move {
        let mut conn = std::pin::pin!(conn);
        let (idle, asked) = tokio::select! {
            _ = conn.as_mut() => return,
            _ = stop.changed() => (false, false),
            _ = streams.idle_for(idle_timeout) => (true, false),
            _ = streams.goaway.notified() => (false, true),
        };
        // GOAWAY: the client opens no more streams here; the open ones finish.
        conn.as_mut().graceful_shutdown();
        if asked {
            // The open streams finish (the answer that asked for the GOAWAY among them); then
            // the connection ends even if the client does not answer the GOAWAY, as Go's
            // server closes it a second after its last stream.
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = streams.idle_for(GOAWAY_CLOSE_TIMEOUT) => {}
                _ = stop.changed() => {}
            }
        } else if idle {
            tracing::debug!("idle HTTP/2 connection closed");
            // No stream is open, so nothing is lost if the client does not answer in time.
            let _ = tokio::time::timeout(GOAWAY_CLOSE_TIMEOUT, conn).await;
        } else {
            // The server is stopping: the accept loop bounds how long it waits.
            let _ = conn.await;
        }
        // Held until here: the accept loop's shutdown waits for every connection's receiver.
        drop(stop);
    });
}

/// The streams open on one HTTP/2 connection, and a signal when the count leaves or reaches
/// zero (the connection becomes busy or idle).
#[derive(Default)]
struct OpenStreams {
    count: AtomicUsize,
    changed: Notify,
    /// An answer asked for the connection to end (`Connection: close`).
    goaway: Notify,
}

impl OpenStreams {
    /// Returns once no stream has been open for `timeout` (Go's HTTP/2 server's idle timer:
    /// started when the last stream closes, stopped when one opens).
    async fn idle_for(&self, timeout: Duration) {
        loop {
            // Registered before the count is read, so that a change in between is not missed.
            let changed = self.changed.notified();
            let mut changed = std::pin::pin!(changed);
            changed.as_mut().enable();
            if self.count.load(Ordering::SeqCst) == 0 {
                if tokio::time::timeout(timeout, changed).await.is_err() {
                    return;
                }
            } else {
                changed.await;
            }
        }
    }
}

/// One open stream of an HTTP/2 connection, counted until dropped.
struct OpenStream(Arc<OpenStreams>);

impl OpenStream {
    fn new(streams: Arc<OpenStreams>) -> Self {
        if streams.count.fetch_add(1, Ordering::SeqCst) == 0 {
            streams.changed.notify_waiters();
        }
        OpenStream(streams)
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.changed.notify_waiters();
        }
    }
}

/// A response body that keeps its stream counted as open until it is finished or dropped.
struct CountedBody<B> {
    body: B,
    _open: OpenStream,
    /// The request's body if it was dropped unread: dropped after this body, so that h2
    /// resets the stream with NO_ERROR, not CANCEL.
    _request_body: Parked,
}

impl<B: Body + Unpin> Body for CountedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The first pause after accepting fails, doubled after each failure up to
/// [`ACCEPT_BACKOFF_MAX`]: Go's `http.Server.Serve` retries `Accept` so, rather than spinning
/// while the process is out of file descriptors.
const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(5);
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// At most one warning per this interval while accepting keeps failing (the others are counted
/// in the next one), so that running out of descriptors does not also fill the disk with logs.
const ACCEPT_ERROR_LOG_INTERVAL: Duration = Duration::from_secs(10);

/// The state of a failing accept: how long to pause next, and what was logged.
#[derive(Default)]
struct AcceptBackoff {
    delay: Option<Duration>,
    /// Failures since the last success.
    failures: u64,
    /// Failures not logged since the last warning.
    unlogged: u64,
    last_logged: Option<Instant>,
}

impl AcceptBackoff {
    /// Records a failure at `now`; returns how long to pause before accepting again, and
    /// whether to log it (with the number of failures not logged before it).
    fn failed(&mut self, now: Instant) -> (Duration, Option<u64>) {
        let delay = match self.delay {
            None => ACCEPT_BACKOFF_MIN,
            Some(d) => (d * 2).min(ACCEPT_BACKOFF_MAX),
        };
        self.delay = Some(delay);
        self.failures += 1;
        let log = match self.last_logged {
            Some(at) if now.saturating_duration_since(at) < ACCEPT_ERROR_LOG_INTERVAL => {
                self.unlogged += 1;
                None
            }
            _ => {
                self.last_logged = Some(now);
                Some(std::mem::take(&mut self.unlogged))
            }
        };
        (delay, log)
    }

    /// Records a success; returns the number of failures before it, if any.
    fn succeeded(&mut self) -> Option<u64> {
        self.delay = None;
        self.unlogged = 0;
        self.last_logged = None;
        match std::mem::take(&mut self.failures) {
            0 => None,
            n => Some(n),
        }
    }
}

pub(crate) async fn accept_loop(
    app: Arc<App>,
    listener: tokio::net::TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    limits: ConnectionLimits,
) {
    let limits = Arc::new(limits);
    // Every connection task holds a receiver until it ends: a value sent here asks them to
    // finish, and the sender sees when the last one is gone.
    let (stop, _) = watch::channel(());
    let mut shutdown = app.shutdown.subscribe();
    let mut backoff = AcceptBackoff::default();
    loop {
        let accepted = tokio::select! {
            _ = shutdown.changed() => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => {
                if let Some(failures) = backoff.succeeded() {
                    tracing::info!(failures, "accepting connections again");
                }
                stream
            }
            Err(e) => {
                let (delay, log) = backoff.failed(Instant::now());
                if let Some(suppressed) = log {
                    tracing::warn!(
                        error = %e,
                        retry_in_ms = delay.as_millis() as u64,
                        suppressed,
                        "accept failed"
                    );
                }
                tokio::select! {
                    _ = shutdown.changed() => break,
                    _ = tokio::time::sleep(delay) => continue,
                }
            }
        };
        let _ = stream.set_nodelay(true);
        let keepalive = socket2::TcpKeepalive::new()
            .with_time(TCP_KEEPALIVE_PERIOD)
            .with_interval(TCP_KEEPALIVE_PERIOD);
        let _ = socket2::SockRef::from(&stream).set_tcp_keepalive(&keepalive);
        let (app, limits, conn_stop) = (app.clone(), limits.clone(), stop.subscribe());
        match &tls {
            Some(acceptor) => {
                tokio::spawn(serve_tls(app, stream, acceptor.clone(), limits, conn_stop))
            }
            None => tokio::spawn(serve_tcp(app, stream, limits, conn_stop)),
        };
    }
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(3), stop.closed()).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_backoff_doubles_from_5ms_to_1s_and_resets_after_a_success() {
        let mut b = AcceptBackoff::default();
        let now = Instant::now();
        let delays: Vec<u64> = (0..10)
            .map(|_| b.failed(now).0.as_millis() as u64)
            .collect();
        assert_eq!(delays, [5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
        assert_eq!(b.succeeded(), Some(10));
        assert_eq!(b.succeeded(), None);
        assert_eq!(b.failed(now).0, ACCEPT_BACKOFF_MIN);
    }

    #[test]
    fn accept_errors_are_logged_once_per_interval_with_the_count_of_the_others() {
        let mut b = AcceptBackoff::default();
        let start = Instant::now();
        assert_eq!(b.failed(start).1, Some(0));
        for _ in 0..1000 {
            assert_eq!(b.failed(start + Duration::from_secs(1)).1, None);
        }
        assert_eq!(b.failed(start + ACCEPT_ERROR_LOG_INTERVAL).1, Some(1000));
        assert_eq!(b.failed(start + ACCEPT_ERROR_LOG_INTERVAL).1, None);
        // After a success, the next failure is logged at once.
        b.succeeded();
        assert_eq!(
            b.failed(start + ACCEPT_ERROR_LOG_INTERVAL).1,
            Some(0),
            "first failure after a success"
        );
    }

    #[tokio::test]
    async fn a_connection_is_idle_only_without_open_streams_for_the_whole_timeout() {
        let streams = Arc::new(OpenStreams::default());
        let timeout = Duration::from_millis(200);
        // Idle from the start.
        tokio::time::timeout(Duration::from_secs(5), streams.idle_for(timeout))
            .await
            .expect("idle without streams");
        // An open stream keeps it busy however long it lasts.
        let open = OpenStream::new(streams.clone());
        assert!(
            tokio::time::timeout(timeout * 3, streams.idle_for(timeout))
                .await
                .is_err(),
            "busy while a stream is open"
        );
        // Once it closes, the timer starts again.
        let waiting = tokio::spawn({
            let streams = streams.clone();
            async move {
                let started = Instant::now();
                streams.idle_for(timeout).await;
                started.elapsed()
            }
        });
        tokio::time::sleep(timeout * 2).await;
        drop(open);
        let waited = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("idle after the stream closed")
            .expect("task");
        assert!(waited >= timeout * 3, "{waited:?}");
    }
}
