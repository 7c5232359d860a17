//! Connections: the accept loop, TLS with ALPN, HTTP/1.1 and HTTP/2, header and handshake
//! timeouts, graceful shutdown.

use super::App;
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::sync::Arc;
use std::time::Duration;

/// Serves one plain-TCP connection with the protocol its first bytes announce: an HTTP/2
/// prior-knowledge preface gets HTTP/2, anything else HTTP/1.1.
async fn serve_tcp(
    app: Arc<App>,
    stream: tokio::net::TcpStream,
    watcher: hyper_util::server::graceful::Watcher,
) {
    let mut first = [0u8; 3];
    // A peer that connects and sends nothing must not hold a task forever.
    let peeked = tokio::time::timeout(HEADER_READ_TIMEOUT, stream.peek(&mut first)).await;
    let h2 = match peeked {
        Ok(n) => matches!(n, Ok(3) if &first == b"PRI"),
        Err(_) => {
            tracing::debug!("connection sent nothing: closed");
            return;
        }
    };
    serve_connection(app, stream, h2, None, watcher);
}

/// Serves one TLS connection with the protocol negotiated by ALPN (h2 preferred, as
/// kube-apiserver offers it; clients without ALPN get HTTP/1.1).
async fn serve_tls(
    app: Arc<App>,
    stream: tokio::net::TcpStream,
    acceptor: tokio_rustls::TlsAcceptor,
    watcher: hyper_util::server::graceful::Watcher,
) {
    // A peer that never finishes its handshake must not hold a task forever.
    let accepted = tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await;
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
        .map(|c| super::PeerCertificate(Arc::from(c.as_ref())));
    serve_connection(app, stream, h2, peer, watcher);
}

const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an HTTP/1.1 client may take to send a request's headers, the first or the next on
/// a kept-alive connection (kube-apiserver's `ReadHeaderTimeout`): a connection that sends
/// nothing, or half a request, is closed instead of held forever.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(32);

/// HTTP/2 streams one connection may carry at once (kube-apiserver's
/// --http2-max-streams-per-connection default): a client's informers share one connection.
const HTTP2_MAX_STREAMS: u32 = 1000;

/// Each protocol runs in a task of its own type, so an HTTP/1.1 connection (every watch of a
/// plain-HTTP client) does not carry the size of an HTTP/2 connection's state: idle watches
/// cost less memory.
fn serve_connection<S>(
    app: Arc<App>,
    stream: S,
    h2: bool,
    peer: Option<super::PeerCertificate>,
    watcher: hyper_util::server::graceful::Watcher,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    // The request future is boxed: hyper keeps a slot of the service future's size for a
    // connection's (HTTP/1.1) or stream's (HTTP/2) whole life, and the pipeline's future is
    // 4 KiB, which every idle watch would otherwise carry after its headers are sent.
    let service =
        hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
            if let Some(p) = &peer {
                req.extensions_mut().insert(p.clone());
            }
            Box::pin(super::serve(app.clone(), req))
        });
    let io = TokioIo::new(stream);
    if h2 {
        let conn = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
            .max_concurrent_streams(HTTP2_MAX_STREAMS)
            .serve_connection(io, service);
        tokio::spawn(async move {
            let _ = watcher.watch(conn).await;
        });
    } else {
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(HEADER_READ_TIMEOUT)
            .serve_connection(io, service);
        tokio::spawn(async move {
            let _ = watcher.watch(conn).await;
        });
    }
}

pub(crate) async fn accept_loop(
    app: Arc<App>,
    listener: tokio::net::TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
) {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = app.shutdown.subscribe();
    loop {
        let (stream, _) = tokio::select! {
            _ = shutdown.changed() => break,
            accepted = listener.accept() => match accepted {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let watcher = graceful.watcher();
        match &tls {
            Some(acceptor) => tokio::spawn(serve_tls(app, stream, acceptor.clone(), watcher)),
            None => tokio::spawn(serve_tcp(app, stream, watcher)),
        };
    }
    let _ = tokio::time::timeout(Duration::from_secs(3), graceful.shutdown()).await;
}
