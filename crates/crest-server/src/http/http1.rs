//! HTTP/1.1 connections, with request heads up to Go's limit.
//!
//! Go's `net/http` server (kube-apiserver's, which sets `MaxHeaderBytes: 1 << 20`) reads a
//! request head of up to `MaxHeaderBytes + 4096` bytes (`initialReadLimitSize` in net/http
//! server.go: the 4096 are "bufio slop"), request line included, in any number of fields, and
//! answers `431` beyond it. hyper bounds the head by its read buffer (`max_buf_size`, here set
//! to Go's limit) and by a number of fields (`max_headers`, 100 by default). Its parser's field
//! array is on the stack at the default, but any other value is allocated and filled on every
//! parse, at a cost proportional to it (measured: +5 us per request at 1,024 fields, +13 ms at
//! the 262,144 that 1 MiB can hold, against 15 us for a whole GET served by hyper alone). So
//! every connection starts at hyper's default, and one whose request has more fields is served
//! on from that request on by a connection with room for them (`serve`): hyper's own `431`
//! for it is held back ([`H1Io`]), and the head hyper read is handed to the next one.

use bytes::Bytes;
use hyper_util::rt::TokioIo;
use std::io::IoSlice;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::sync::watch;

/// The largest request head (request line, fields, blank line) an HTTP/1.1 client may send: Go's
/// `DefaultMaxHeaderBytes` (1 MiB, kube-apiserver's `MaxHeaderBytes`) plus the 4096 bytes of
/// `initialReadLimitSize`: Go stops reading there and answers 431 if the head is not complete.
pub(crate) const MAX_HEAD_BYTES: usize = (1 << 20) + 4096;

/// The most fields a request may have. Go has no such limit (only the bytes), but every request
/// is parsed into an `http::HeaderMap`, which holds at most 24,576 entries (32,768 slots, three
/// quarters usable; hyper's parser panics if asked to reserve more), as h2 does for HTTP/2.
const MAX_FIELDS: usize = 24_576;

/// The fields hyper parses without allocating (its `DEFAULT_MAX_HEADERS`).
const HYPER_DEFAULT_FIELDS: usize = 100;

/// How long a connection that was answered 431 is kept after the answer: Go's
/// `rstAvoidanceDelay` (net/http server.go `closeWriteAndWait`), so that the client reads the
/// answer before the close resets the connection for the rest of its request.
const TOO_LARGE_LINGER: Duration = Duration::from_millis(500);

/// How long closing a connection (TLS close_notify, TCP FIN) may take.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

/// Go's 431 answer, byte for byte (net/http server.go `serve`: the status text as a plain-text
/// body, `Connection: close`, no length: the connection ends after it).
const TOO_LARGE_ANSWER: &[u8] = b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large";

/// The head of the answer hyper writes itself when a request head is too large (its automatic
/// response for `Parse::TooLarge`: no body, then it closes). Crest never answers 431 itself.
const HYPER_TOO_LARGE_HEAD: &[u8] =
    b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\n";

/// Serves one HTTP/1.1 connection until it ends or `stop` changes (then the request in flight
/// is answered and the connection closes).
pub(crate) async fn serve<S, F>(
    stream: S,
    service: F,
    read_header_timeout: Duration,
    stop: &mut watch::Receiver<()>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    F: hyper::service::HttpService<hyper::body::Incoming> + Clone + Unpin + Send + 'static,
    F::Future: Unpin + Send + 'static,
    F::ResBody: Send + 'static,
    <F::ResBody as hyper::body::Body>::Data: Send,
    <F::ResBody as hyper::body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    F::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut io = H1Io {
        prefix: Bytes::new(),
        inner: stream,
        held: None,
    };
    let mut max_fields = HYPER_DEFAULT_FIELDS;
    let mut stopping = false;
    loop {
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(read_header_timeout)
            .max_buf_size(MAX_HEAD_BYTES)
            // The buffer bound alone is loose (a read may fill the buffer's spare capacity
            // past it): the head itself is checked too.
            .max_header_size(MAX_HEAD_BYTES);
        if max_fields > HYPER_DEFAULT_FIELDS {
            builder.max_headers(max_fields);
        }
        let mut conn = builder.serve_connection(TokioIo::new(io), service.clone());
        let done = run(&mut conn, stop, &mut stopping).await;
        let parts = conn.into_parts();
        io = parts.io.into_inner();
        match done {
            Ok(()) => {
                // `poll_without_shutdown` leaves the close to the caller.
                let _ = tokio::time::timeout(CLOSE_TIMEOUT, io.inner.shutdown()).await;
                return;
            }
            // hyper answered (or could not) and the connection is done.
            Err(_) if io.held.is_none() => return,
            Err(e) => {
                io.held = None;
                if e.is_parse_too_large() {
                    if let Some(more) = more_fields(&parts.read_buf, max_fields) {
                        // More fields than this connection parses, within the bytes allowed:
                        // served again from the head's first byte, with room for them.
                        max_fields = more;
                        io.prefix = if io.prefix.is_empty() {
                            parts.read_buf
                        } else {
                            [&parts.read_buf[..], &io.prefix[..]].concat().into()
                        };
                        continue;
                    }
                }
                answer_too_large(io.inner).await;
                return;
            }
        }
    }
}

/// Drives a connection until hyper is done with it; once `stop` changes, gracefully.
async fn run<I, F>(
    conn: &mut hyper::server::conn::http1::Connection<I, F>,
    stop: &mut watch::Receiver<()>,
    stopping: &mut bool,
) -> hyper::Result<()>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin,
    F: hyper::service::HttpService<hyper::body::Incoming> + Unpin,
    F::Future: Unpin,
    F::ResBody: 'static,
    <F::ResBody as hyper::body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    F::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    if !*stopping {
        tokio::select! {
            done = std::future::poll_fn(|cx| conn.poll_without_shutdown(cx)) => return done,
            _ = stop.changed() => *stopping = true,
        }
    }
    Pin::new(&mut *conn).graceful_shutdown();
    std::future::poll_fn(|cx| conn.poll_without_shutdown(cx)).await
}

/// The number of fields a connection must parse for the request head at the start of `buf`,
/// which hyper refused as too large while parsing `max_fields`: `None` if it was refused for
/// its bytes (or has more fields than any connection parses).
fn more_fields(buf: &[u8], max_fields: usize) -> Option<usize> {
    let (complete, fields) = fields_in_head(buf);
    let needed = if complete {
        fields
    } else if buf.len() < MAX_HEAD_BYTES && fields <= MAX_FIELDS {
        // Cut short by the count before its end arrived: twice as many, or more.
        fields.max(max_fields.saturating_mul(2)).min(MAX_FIELDS)
    } else {
        return None;
    };
    let more = needed.next_power_of_two().min(MAX_FIELDS);
    (needed > max_fields && needed <= MAX_FIELDS).then_some(more)
}

/// Whether the request head at the start of `buf` is complete, and its fields (so far).
fn fields_in_head(buf: &[u8]) -> (bool, usize) {
    // Each line before the empty one that ends the head (with or without its CR, as httparse
    // reads it), but the request line, is a field.
    let mut lines = 0;
    for (i, _) in buf.iter().enumerate().filter(|(_, &b)| b == b'\n') {
        let rest = &buf[i + 1..];
        if rest.starts_with(b"\n") || rest.starts_with(b"\r\n") {
            return (true, lines);
        }
        lines += 1;
    }
    (false, lines.saturating_sub(1))
}

/// Answers a request whose head is too large as Go does, then closes the connection: the answer,
/// the end of the writing side (TLS close_notify, TCP FIN), and what the client still sends
/// read and dropped for `TOO_LARGE_LINGER` (Go sleeps as long) before the close.
async fn answer_too_large<S>(mut io: S)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let answered = tokio::time::timeout(CLOSE_TIMEOUT, async {
        io.write_all(TOO_LARGE_ANSWER).await?;
        io.shutdown().await
    })
    .await;
    if !matches!(answered, Ok(Ok(()))) {
        return;
    }
    let _ = tokio::time::timeout(TOO_LARGE_LINGER, async {
        let mut buf = [0u8; 8192];
        while matches!(io.read(&mut buf).await, Ok(n) if n > 0) {}
    })
    .await;
}

/// An HTTP/1.1 connection's stream as hyper sees it: first the bytes a previous hyper
/// connection on it read but did not serve (the head of the request it handed on), then the
/// stream; and hyper's automatic 431 held back instead of written, for `serve` to decide on.
struct H1Io<S> {
    prefix: Bytes,
    inner: S,
    held: Option<Vec<u8>>,
}

impl<S: AsyncWrite + Unpin> H1Io<S> {
    /// Whether `buf` is the whole of hyper's automatic 431 answer.
    fn is_hypers_too_large(&self, buf: &[u8]) -> bool {
        self.held.is_none()
            && buf.len() < 256
            && buf.starts_with(HYPER_TOO_LARGE_HEAD)
            && buf.ends_with(b"\r\n\r\n")
    }

    /// Writes what was held, if hyper wrote after it after all (so it was not the last word).
    fn poll_release(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while let Some(held) = self.held.as_mut() {
            if held.is_empty() {
                self.held = None;
                break;
            }
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, held))?;
            if n == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            held.drain(..n);
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for H1Io<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if !self.prefix.is_empty() {
            let n = self.prefix.len().min(buf.remaining());
            let chunk = self.prefix.split_to(n);
            buf.put_slice(&chunk);
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for H1Io<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if self.is_hypers_too_large(buf) {
            self.held = Some(buf.to_vec());
            return Poll::Ready(Ok(buf.len()));
        }
        ready!(self.poll_release(cx))?;
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let mut nonempty = bufs.iter().filter(|b| !b.is_empty());
        if let (Some(first), None) = (nonempty.next(), nonempty.next()) {
            if self.is_hypers_too_large(first) {
                self.held = Some(first.to_vec());
                return Poll::Ready(Ok(first.len()));
            }
        }
        ready!(self.poll_release(cx))?;
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        // What is held stays held: hyper flushes right after its 431.
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        ready!(self.poll_release(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::{fields_in_head, more_fields, MAX_FIELDS, MAX_HEAD_BYTES};

    #[test]
    fn fields_are_counted_up_to_the_end_of_the_head() {
        assert_eq!(fields_in_head(b"GET / HTTP/1.1\r\n\r\n"), (true, 0));
        assert_eq!(
            fields_in_head(b"GET / HTTP/1.1\r\nA: b\r\nC: d\r\n\r\nbody"),
            (true, 2)
        );
        assert_eq!(fields_in_head(b"GET / HTTP/1.1\nA: b\n\n"), (true, 1));
        assert_eq!(
            fields_in_head(b"GET / HTTP/1.1\r\nA: b\r\nC: d\r\n"),
            (false, 2)
        );
        assert_eq!(fields_in_head(b"GET / HTTP/1.1\r\nA: b\r\n\r"), (false, 1));
    }

    #[test]
    fn a_head_refused_for_its_fields_gets_room_for_them_and_one_refused_for_its_bytes_none() {
        let head = |n: usize, end: &str| {
            let mut h = "GET / HTTP/1.1\r\n".to_string();
            for i in 0..n {
                h.push_str(&format!("x-{i}: v\r\n"));
            }
            h.push_str(end);
            h.into_bytes()
        };
        assert_eq!(more_fields(&head(150, "\r\n"), 100), Some(256));
        assert_eq!(more_fields(&head(150, "\r\n"), 256), None);
        // Cut short: at least twice the fields.
        assert_eq!(more_fields(&head(150, ""), 100), Some(256));
        assert_eq!(more_fields(&head(600, ""), 256), Some(1024));
        assert_eq!(more_fields(&head(MAX_FIELDS + 1, "\r\n"), 100), None);
        assert_eq!(more_fields(&head(20_000, "\r\n"), 100), Some(MAX_FIELDS));
        assert_eq!(more_fields(&head(20_000, ""), 16_384), Some(MAX_FIELDS));
        assert_eq!(more_fields(&head(20_000, ""), MAX_FIELDS), None);
        let mut full = head(10, "");
        full.resize(MAX_HEAD_BYTES, b'v');
        assert_eq!(more_fields(&full, 100), None);
    }
}
