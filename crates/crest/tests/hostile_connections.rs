//! Hostile clients and resource faults at the connection level: connections that send nothing
//! (or half a handshake or request) are closed, idle HTTP/2 connections get a GOAWAY while one
//! carrying a watch stays open, HTTP/2 abuse (too many streams, rapid resets, CONTINUATION,
//! PING and SETTINGS floods) is limited without starving other clients, and running out of
//! file descriptors makes the accept loop back off and log at a bounded rate, then serve again.
//!
//! HTTP/2 is driven with raw frames (the abuse is what a well-behaved client library will not
//! send), over TLS with ALPN h2 and over plain TCP with the prior-knowledge preface. Every
//! server runs with short timeouts through `crest serve`'s hidden flags.

mod common;

use common::Server;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::net::TcpStream;

// ---- raw HTTP/2 ----

const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const SETTINGS: u8 = 0x4;
const PING: u8 = 0x6;
const GOAWAY: u8 = 0x7;
const CONTINUATION: u8 = 0x9;

const END_STREAM: u8 = 0x1;
const ACK: u8 = 0x1;
const END_HEADERS: u8 = 0x4;

const NO_ERROR: u32 = 0x0;
const REFUSED_STREAM: u32 = 0x7;
const CANCEL: u32 = 0x8;
const ENHANCE_YOUR_CALM: u32 = 0xb;

const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;
const SETTINGS_MAX_FRAME_SIZE: u16 = 0x5;
const SETTINGS_MAX_HEADER_LIST_SIZE: u16 = 0x6;

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Anything a test talks HTTP/2 over: TCP or TLS.
trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

#[derive(Debug)]
struct Frame {
    kind: u8,
    flags: u8,
    stream: u32,
    payload: Vec<u8>,
}

impl Frame {
    /// A GOAWAY's error code.
    fn goaway_code(&self) -> u32 {
        u32::from_be_bytes(self.payload[4..8].try_into().expect("GOAWAY payload"))
    }

    /// A RST_STREAM's error code.
    fn rst_code(&self) -> u32 {
        u32::from_be_bytes(self.payload[..4].try_into().expect("RST_STREAM payload"))
    }
}

#[derive(Debug)]
enum Next {
    Frame(Frame),
    Closed,
    TimedOut,
}

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len();
    let mut out = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
    out.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// An HPACK integer with an `n`-bit prefix after the pattern bits in `first`.
fn hpack_int(out: &mut Vec<u8>, n: u8, first: u8, mut value: usize) {
    let max = (1usize << n) - 1;
    if value < max {
        out.push(first | value as u8);
        return;
    }
    out.push(first | max as u8);
    value -= max;
    while value >= 128 {
        out.push((value % 128) as u8 | 0x80);
        value /= 128;
    }
    out.push(value as u8);
}

/// A header field "literal without indexing" whose name is static table entry `name_index`.
fn hpack_field(out: &mut Vec<u8>, name_index: usize, value: &str) {
    hpack_int(out, 4, 0x00, name_index);
    hpack_int(out, 7, 0x00, value.len());
    out.extend_from_slice(value.as_bytes());
}

/// The header block of a GET of `path` (with a bearer token), without Huffman coding or the
/// dynamic table so that every block stands alone.
fn get_request(path: &str, token: Option<&str>) -> Vec<u8> {
    let mut out = vec![0x82, 0x87]; // :method GET, :scheme https
    hpack_field(&mut out, 4, path); // :path
    hpack_field(&mut out, 1, "127.0.0.1"); // :authority
    if let Some(t) = token {
        hpack_field(&mut out, 23, &format!("Bearer {t}")); // authorization
    }
    out
}

/// Whether a response header block starts with `:status: 200` (static entry 8, which h2
/// always sends indexed).
fn is_200(block: &[u8]) -> bool {
    block.first() == Some(&0x88)
}

/// Reads frames from one half of a connection, keeping partial frames across timeouts.
struct FrameReader<R> {
    io: R,
    buf: Vec<u8>,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    fn parse(&mut self) -> Option<Frame> {
        if self.buf.len() < 9 {
            return None;
        }
        let len = (usize::from(self.buf[0]) << 16)
            | (usize::from(self.buf[1]) << 8)
            | usize::from(self.buf[2]);
        if self.buf.len() < 9 + len {
            return None;
        }
        let head: Vec<u8> = self.buf.drain(..9 + len).collect();
        Some(Frame {
            kind: head[3],
            flags: head[4],
            stream: u32::from_be_bytes(head[5..9].try_into().expect("4 bytes")) & 0x7fff_ffff,
            payload: head[9..].to_vec(),
        })
    }

    /// The next frame, or the connection's end, or nothing within `within`.
    async fn next(&mut self, within: Duration) -> Next {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(f) = self.parse() {
                return Next::Frame(f);
            }
            let mut chunk = [0u8; 16384];
            match tokio::time::timeout_at(deadline, self.io.read(&mut chunk)).await {
                Err(_) => return Next::TimedOut,
                Ok(Ok(0)) | Ok(Err(_)) => return Next::Closed,
                Ok(Ok(n)) => self.buf.extend_from_slice(&chunk[..n]),
            }
        }
    }

    /// Reads until the connection ends (within `within`, else panics): the code of the
    /// GOAWAY it got on the way, if any.
    async fn until_closed(&mut self, within: Duration, what: &str) -> Option<u32> {
        let deadline = Instant::now() + within;
        let mut goaway = None;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next(left).await {
                Next::Frame(f) if f.kind == GOAWAY => goaway = Some(f.goaway_code()),
                Next::Frame(_) => {}
                Next::Closed => return goaway,
                Next::TimedOut => panic!("{what}: the connection is still open after {within:?}"),
            }
        }
    }
}

/// One raw HTTP/2 client connection.
struct H2 {
    reader: FrameReader<ReadHalf<Box<dyn Io>>>,
    writer: WriteHalf<Box<dyn Io>>,
}

impl H2 {
    fn new(io: Box<dyn Io>) -> H2 {
        let (r, w) = tokio::io::split(io);
        H2 {
            reader: FrameReader { io: r, buf: vec![] },
            writer: w,
        }
    }

    async fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.expect("write");
        self.writer.flush().await.expect("flush");
    }

    /// The client preface and empty SETTINGS; returns the server's SETTINGS (acknowledged).
    async fn handshake(&mut self) -> HashMap<u16, u32> {
        let mut hello = PREFACE.to_vec();
        hello.extend(frame(SETTINGS, 0, 0, &[]));
        self.send(&hello).await;
        match self.reader.next(Duration::from_secs(10)).await {
            Next::Frame(f) if f.kind == SETTINGS && f.flags & ACK == 0 => {
                self.send(&frame(SETTINGS, ACK, 0, &[])).await;
                f.payload
                    .chunks(6)
                    .map(|c| {
                        (
                            u16::from_be_bytes([c[0], c[1]]),
                            u32::from_be_bytes([c[2], c[3], c[4], c[5]]),
                        )
                    })
                    .collect()
            }
            other => panic!("expected the server's SETTINGS, got {other:?}"),
        }
    }

    /// Opens stream `id` with a GET of `path` (ending the stream: no body).
    async fn get(&mut self, id: u32, path: &str, token: Option<&str>) {
        let block = get_request(path, token);
        self.send(&frame(HEADERS, END_HEADERS | END_STREAM, id, &block))
            .await;
    }

    /// Opens a watch of ConfigMaps on stream `id` and reads its 200 response headers.
    async fn watch(&mut self, id: u32, token: &str) {
        self.get(
            id,
            "/api/v1/namespaces/default/configmaps?watch=1",
            Some(token),
        )
        .await;
        let headers = self.next_on(id).await;
        assert!(
            headers.kind == HEADERS && is_200(&headers.payload),
            "stream {id}: {headers:?}"
        );
    }

    /// The next frame of stream `id`, skipping connection frames (SETTINGS ACKs, PINGs,
    /// WINDOW_UPDATEs) and other streams'; panics on a GOAWAY, the end, or nothing in 10 s.
    async fn next_on(&mut self, id: u32) -> Frame {
        loop {
            match self.reader.next(Duration::from_secs(10)).await {
                Next::Frame(f) if f.kind == GOAWAY => panic!("unexpected GOAWAY: {f:?}"),
                Next::Frame(f) if f.stream == id => return f,
                Next::Frame(_) => {}
                other => panic!("stream {id}: expected a frame, got {other:?}"),
            }
        }
    }
}

fn port(server: &Server) -> u16 {
    server
        .base
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port in the server's URL")
}

async fn tcp(server: &Server) -> TcpStream {
    TcpStream::connect(("127.0.0.1", port(server)))
        .await
        .expect("connect")
}

/// A TLS connection to `server` trusting its CA, offering `alpn`.
async fn tls(server: &Server, alpn: &[&[u8]]) -> tokio_rustls::client::TlsStream<TcpStream> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName};
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(server.ca_path()).expect("ca.crt") {
        roots.add(cert.expect("CA certificate")).expect("CA");
    }
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let name = ServerName::try_from("127.0.0.1").expect("server name");
    let stream = connector
        .connect(name, tcp(server).await)
        .await
        .expect("TLS handshake");
    assert_eq!(
        stream.get_ref().1.alpn_protocol(),
        alpn.first().copied(),
        "negotiated protocol"
    );
    stream
}

async fn tls_h2(server: &Server) -> H2 {
    H2::new(Box::new(tls(server, &[b"h2"]).await))
}

async fn plain_h2(server: &Server) -> H2 {
    H2::new(Box::new(tcp(server).await))
}

/// The server answers a request on a new connection (within 10 s).
async fn assert_serving(server: &Server, what: &str) {
    let answered = tokio::time::timeout(
        Duration::from_secs(10),
        server.http("GET", "/readyz", &[], None),
    )
    .await;
    match answered {
        Ok((200, _, _)) => {}
        Ok((code, _, body)) => panic!("{what}: /readyz answered {code}: {body:?}"),
        Err(_) => panic!("{what}: /readyz not answered within 10s"),
    }
}

/// Reads (and drops) whatever comes until the peer closes; returns how long that took (panics
/// after `within`).
async fn closed_within<R: AsyncRead + Unpin>(mut io: R, within: Duration, what: &str) -> Duration {
    let started = Instant::now();
    let mut chunk = [0u8; 4096];
    loop {
        let left = within.saturating_sub(started.elapsed());
        match tokio::time::timeout(left, io.read(&mut chunk)).await {
            Err(_) => panic!("{what}: still open after {within:?}"),
            Ok(Ok(0)) | Ok(Err(_)) => return started.elapsed(),
            Ok(Ok(_)) => {}
        }
    }
}

/// Short timeouts so that the tests run in seconds.
const FAST: &[&str] = &[
    "--http2-idle-timeout",
    "1s",
    "--read-header-timeout",
    "1s",
    "--tls-handshake-timeout",
    "1s",
];

fn fast_with(extra: &[&'static str]) -> Vec<&'static str> {
    FAST.iter().chain(extra).copied().collect()
}

// ---- unauthenticated HTTP/2 ----

#[tokio::test]
async fn an_unauthenticated_http2_connection_carries_one_request_then_goaway() {
    let server = Server::start_with(FAST);
    let token = server.admin_token();
    // Anonymous (a 200 from /healthz) and failed authentication (a 401): the answer arrives,
    // then a GOAWAY, and the connection ends (kube-apiserver's
    // UnauthenticatedHTTP2DOSMitigation).
    for (what, credentials) in [("anonymous", None), ("a bad token", Some("not-a-token"))] {
        let mut h2 = tls_h2(&server).await;
        h2.handshake().await;
        h2.get(1, "/healthz", credentials).await;
        // The GOAWAY may come ahead of the answer (a graceful one: the request is still
        // served); the answer comes all the same.
        let mut goaway = None;
        let response = loop {
            match h2.reader.next(Duration::from_secs(10)).await {
                Next::Frame(f) if f.kind == GOAWAY => goaway = Some(f.goaway_code()),
                Next::Frame(f) if f.stream == 1 => break f,
                Next::Frame(_) => {}
                other => panic!("{what}: expected the answer, got {other:?}"),
            }
        };
        assert_eq!(response.kind, HEADERS, "{what}: {response:?}");
        assert_eq!(
            is_200(&response.payload),
            credentials.is_none(),
            "{what}: {response:?}"
        );
        let code = h2
            .reader
            .until_closed(Duration::from_secs(10), what)
            .await
            .or(goaway);
        assert_eq!(code, Some(NO_ERROR), "{what}: closed without a GOAWAY");
    }
    // Authenticated: the connection carries request after request.
    let mut h2 = tls_h2(&server).await;
    h2.handshake().await;
    for id in [1, 3, 5] {
        h2.get(id, "/healthz", Some(&token)).await;
        let response = h2.next_on(id).await;
        assert!(
            response.kind == HEADERS && is_200(&response.payload),
            "request {id}: {response:?}"
        );
    }
    match h2.reader.next(Duration::from_millis(1500)).await {
        Next::TimedOut => {}
        Next::Frame(f) if f.kind != GOAWAY => {}
        other => panic!("an authenticated connection must stay open: {other:?}"),
    }
    assert_serving(&server, "after unauthenticated HTTP/2 clients").await;
}

// ---- idle connections ----

#[tokio::test]
async fn an_idle_http2_connection_gets_a_goaway_and_is_closed_over_tls_and_plain_tcp() {
    for plain in [false, true] {
        let server = if plain {
            Server::start_with(&fast_with(&["--plain-http"]))
        } else {
            Server::start_with(FAST)
        };
        let what = if plain {
            "prior-knowledge h2"
        } else {
            "TLS h2"
        };
        let started = Instant::now();
        let mut h2 = if plain {
            plain_h2(&server).await
        } else {
            tls_h2(&server).await
        };
        let settings = h2.handshake().await;
        // kube-apiserver's HTTP/2 settings by default, but for the frame size: HTTP/2's
        // default, 16 KiB, so that a full header list fits the CONTINUATION frames h2 allows.
        assert_eq!(
            settings.get(&SETTINGS_MAX_CONCURRENT_STREAMS),
            Some(&100),
            "{settings:?}"
        );
        assert_eq!(
            settings.get(&SETTINGS_MAX_FRAME_SIZE),
            Some(&(16 * 1024)),
            "{settings:?}"
        );
        assert_eq!(
            settings.get(&SETTINGS_INITIAL_WINDOW_SIZE),
            Some(&(256 * 1024)),
            "{settings:?}"
        );
        assert_eq!(
            settings.get(&SETTINGS_MAX_HEADER_LIST_SIZE),
            Some(&((1 << 20) + 320)),
            "{settings:?}"
        );
        // A request, then nothing: the connection is idle once its stream is done. The client
        // does not answer the server's PINGs either, so the close does not wait for it.
        // As the admin: an anonymous request would end the connection at once (below).
        h2.get(1, "/readyz", Some(&server.admin_token())).await;
        let response = h2.next_on(1).await;
        assert_eq!(response.kind, HEADERS, "{response:?}");
        let code = h2.reader.until_closed(Duration::from_secs(15), what).await;
        assert_eq!(code, Some(NO_ERROR), "{what}: closed without a GOAWAY");
        let took = started.elapsed();
        assert!(
            took >= Duration::from_secs(1),
            "{what}: closed after {took:?}, before the idle timeout"
        );

        // A connection that never sends its preface is closed as well.
        let silent: Box<dyn Io> = if plain {
            // On the plain port the protocol is not known until the first bytes: the header
            // timeout closes it.
            Box::new(tcp(&server).await)
        } else {
            Box::new(tls(&server, &[b"h2"]).await)
        };
        closed_within(
            silent,
            Duration::from_secs(15),
            "a connection without a preface",
        )
        .await;
        assert_serving(&server, what).await;
    }
}

#[tokio::test]
async fn an_http2_connection_carrying_a_watch_is_not_idle_until_the_watch_ends() {
    let server = Server::start_with(FAST);
    let token = server.admin_token();
    let mut h2 = tls_h2(&server).await;
    h2.handshake().await;
    h2.watch(1, &token).await;

    // Three idle timeouts pass: the watch keeps the connection (no GOAWAY, no close).
    let quiet_until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < quiet_until {
        match h2.reader.next(quiet_until - Instant::now()).await {
            Next::TimedOut => break,
            Next::Frame(f) if f.kind != GOAWAY => {}
            other => panic!("a connection with a watch open was closed: {other:?}"),
        }
    }
    // And the watch still delivers.
    let cm =
        serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "seen"}});
    let (code, _) = server
        .http_json(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            "application/json",
            Some(&cm),
        )
        .await;
    assert_eq!(code, 201);
    let event = h2.next_on(1).await;
    assert_eq!(event.kind, DATA, "{event:?}");
    assert!(
        String::from_utf8_lossy(&event.payload).contains("\"seen\""),
        "{event:?}"
    );

    // The client cancels the watch: now the connection is idle, and closed.
    let cancel = frame(RST_STREAM, 0, 1, &CANCEL.to_be_bytes());
    h2.send(&cancel).await;
    let code = h2
        .reader
        .until_closed(Duration::from_secs(15), "after the watch ended")
        .await;
    assert_eq!(code, Some(NO_ERROR));
}

#[tokio::test]
async fn connections_that_send_nothing_or_half_a_handshake_or_request_are_closed() {
    let server = Server::start_with(FAST);
    // No ClientHello at all; half of one (a record header promising more).
    closed_within(
        tcp(&server).await,
        Duration::from_secs(15),
        "TLS, nothing sent",
    )
    .await;
    let mut half = tcp(&server).await;
    half.write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01])
        .await
        .expect("write");
    let took = closed_within(half, Duration::from_secs(15), "TLS, half a ClientHello").await;
    assert!(
        took >= Duration::from_millis(900),
        "closed after {took:?}, before the handshake timeout"
    );
    // HTTP/1.1 after the handshake: nothing, or half a request's headers.
    closed_within(
        tls(&server, &[b"http/1.1"]).await,
        Duration::from_secs(15),
        "TLS HTTP/1.1, nothing sent",
    )
    .await;
    let mut half = tls(&server, &[b"http/1.1"]).await;
    half.write_all(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .expect("write");
    half.flush().await.expect("flush");
    closed_within(
        half,
        Duration::from_secs(15),
        "TLS HTTP/1.1, half the headers",
    )
    .await;
    assert_serving(&server, "after the silent connections").await;

    let plain = Server::start_with(&fast_with(&["--plain-http"]));
    closed_within(
        tcp(&plain).await,
        Duration::from_secs(15),
        "plain, nothing sent",
    )
    .await;
    let mut half = tcp(&plain).await;
    half.write_all(b"GET /readyz HTTP/1.1\r\nHost:")
        .await
        .expect("write");
    closed_within(
        half,
        Duration::from_secs(15),
        "plain HTTP/1.1, half the headers",
    )
    .await;
    assert_serving(&plain, "plain, after the silent connections").await;
}

#[tokio::test]
async fn accepted_connections_have_tcp_keepalive_so_vanished_peers_are_dropped() {
    let server = Server::start_with(&["--plain-http"]);
    let mut conn = tcp(&server).await;
    // Answered, so the server has accepted it (and keeps it alive for the next request).
    conn.write_all(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .expect("write");
    let mut answer = [0u8; 12];
    conn.read_exact(&mut answer).await.expect("answer");
    assert_eq!(&answer, b"HTTP/1.1 200");
    let out = std::process::Command::new("ss")
        .args(["-tnoH", "state", "established"])
        .arg(format!("( sport = :{} )", port(&server)))
        .output()
        .unwrap_or_else(|e| panic!("ss (iproute2) is required for this test: {e}"));
    let sockets = String::from_utf8_lossy(&out.stdout);
    // kube-apiserver's period: 3 minutes before the first probe (`timer:(keepalive,2min59sec,0)`).
    assert!(
        sockets.contains("timer:(keepalive,2min") || sockets.contains("timer:(keepalive,3min"),
        "the server's side of the connection has no 3-minute keep-alive timer: {sockets}"
    );
}

// ---- HTTP/2 abuse ----

#[tokio::test]
async fn streams_beyond_the_limit_are_refused_and_the_connection_goes_on() {
    let server = Server::start_with(&fast_with(&["--http2-max-streams-per-connection", "3"]));
    let token = server.admin_token();
    let mut h2 = tls_h2(&server).await;
    let settings = h2.handshake().await;
    assert_eq!(
        settings.get(&SETTINGS_MAX_CONCURRENT_STREAMS),
        Some(&3),
        "{settings:?}"
    );
    // Three watches hold the three streams.
    for id in [1, 3, 5] {
        h2.watch(id, &token).await;
    }
    // A fourth is refused (the client may retry it), without harm to the connection.
    let watch = "/api/v1/namespaces/default/configmaps?watch=1";
    h2.get(7, watch, Some(&token)).await;
    let refused = h2.next_on(7).await;
    assert_eq!(refused.kind, RST_STREAM, "{refused:?}");
    assert_eq!(refused.rst_code(), REFUSED_STREAM, "{refused:?}");
    // Once one ends, a new stream is served.
    h2.send(&frame(RST_STREAM, 0, 1, &CANCEL.to_be_bytes()))
        .await;
    let mut served = false;
    for attempt in 0..50u32 {
        let id = 9 + 2 * attempt;
        h2.get(id, "/readyz", Some(&token)).await;
        let f = h2.next_on(id).await;
        if f.kind == HEADERS {
            assert!(is_200(&f.payload), "{f:?}");
            served = true;
            break;
        }
        // The cancel may not be processed yet: refused again, retried.
        assert_eq!(
            (f.kind, f.rst_code()),
            (RST_STREAM, REFUSED_STREAM),
            "{f:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(served, "no stream was served after one of the three ended");
}

#[tokio::test]
async fn rapid_reset_and_continuation_floods_end_in_goaway() {
    let server = Server::start_with(FAST);
    // Rapid reset (CVE-2023-44487): requests cancelled as soon as they are sent.
    let mut h2 = tls_h2(&server).await;
    h2.handshake().await;
    // Authenticated: an anonymous answer would end the connection with a GOAWAY of its own.
    let token = server.admin_token();
    let mut flood = vec![];
    for i in 0..2000u32 {
        let id = 1 + 2 * i;
        flood.extend(frame(
            HEADERS,
            END_HEADERS | END_STREAM,
            id,
            &get_request("/readyz", Some(&token)),
        ));
        flood.extend(frame(RST_STREAM, 0, id, &CANCEL.to_be_bytes()));
    }
    // The server may close before it has read it all.
    let _ = h2.writer.write_all(&flood).await;
    let code = h2
        .reader
        .until_closed(Duration::from_secs(30), "rapid reset")
        .await;
    assert_eq!(code, Some(ENHANCE_YOUR_CALM), "rapid reset");
    assert_serving(&server, "after the rapid reset flood").await;

    // CONTINUATION flood (CVE-2024-27316): a header block that never ends.
    let mut h2 = continuation_flood(&server).await;
    let code = h2
        .reader
        .until_closed(Duration::from_secs(30), "CONTINUATION flood")
        .await;
    assert_eq!(code, Some(ENHANCE_YOUR_CALM), "CONTINUATION flood");
    assert_serving(&server, "after the CONTINUATION flood").await;
}

/// A TLS h2 connection that has sent a HEADERS frame followed by 10,000 CONTINUATION frames,
/// none of which ends the header block.
async fn continuation_flood(server: &Server) -> H2 {
    let mut h2 = tls_h2(server).await;
    h2.handshake().await;
    let mut flood = frame(HEADERS, 0, 1, &[0x82]);
    for _ in 0..10_000 {
        // Each a valid fragment (`accept-encoding: gzip, deflate`, static entry 16), so that
        // only their number is wrong.
        flood.extend(frame(CONTINUATION, 0, 1, &[0x90]));
    }
    let _ = h2.writer.write_all(&flood).await;
    let _ = h2.writer.flush().await;
    h2
}

/// The resident memory of a process, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS")
}

#[tokio::test]
async fn ping_and_settings_floods_neither_starve_the_server_nor_pile_up() {
    let server = Server::start_with(&fast_with(&["--plain-http"]));
    let token = server.admin_token();
    let rss_before = rss_kib(server.pid());
    for (kind, one) in [
        ("PING", frame(PING, 0, 0, b"floodfld")),
        (
            "SETTINGS",
            frame(SETTINGS, 0, 0, &[0x00, 0x04, 0x00, 0x00, 0xff, 0xff]),
        ),
    ] {
        for with_watch in [false, true] {
            let what = format!("{kind} flood, watch open: {with_watch}");
            let mut h2 = plain_h2(&server).await;
            h2.handshake().await;
            if with_watch {
                h2.watch(1, &token).await;
            }
            // 8.5 MB of control frames whose answers the client does not read: h2 answers each
            // before it reads the next, so once the answers fill the sockets the server stops
            // reading instead of queueing them.
            let flood: Vec<u8> = one
                .iter()
                .copied()
                .cycle()
                .take(one.len() * 500_000)
                .collect();
            let H2 {
                mut reader,
                mut writer,
            } = h2;
            let writing = tokio::spawn(async move {
                let sent =
                    tokio::time::timeout(Duration::from_secs(120), writer.write_all(&flood)).await;
                // Then the watch ends, and the connection has no stream left.
                if with_watch && matches!(sent, Ok(Ok(()))) {
                    let _ = writer
                        .write_all(&frame(RST_STREAM, 0, 1, &CANCEL.to_be_bytes()))
                        .await;
                }
                writer
            });
            tokio::time::sleep(Duration::from_secs(2)).await;
            assert_serving(&server, &what).await;
            let grown = rss_kib(server.pid()).saturating_sub(rss_before);
            assert!(grown < 32 * 1024, "{what}: the server grew by {grown} KiB");
            // Without a stream the connection is idle: it is closed after the idle timeout,
            // with a GOAWAY if the server could still write one (its answers are not read, so
            // the GOAWAY may be stuck behind them: the connection is dropped anyway). With the
            // watch, the client reads everything, the flood is answered, the watch ends and
            // then the connection is idle.
            let closed = reader.until_closed(Duration::from_secs(120), &what).await;
            if with_watch {
                assert_eq!(closed, Some(NO_ERROR), "{what}");
            } else {
                assert!(
                    matches!(closed, None | Some(NO_ERROR)),
                    "{what}: GOAWAY {closed:?}"
                );
            }
            let _ = tokio::time::timeout(Duration::from_secs(10), writing).await;
        }
    }
    assert_serving(&server, "after the floods").await;
}

// ---- out of file descriptors ----

/// CPU time (user + system) of a process, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .expect("stat")
        .1
        .split_whitespace()
        .collect();
    // utime and stime are fields 14 and 15 of stat(5); 3 is the first after the name.
    fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime")
}

/// The start of a log, for failure messages (a runaway log may be huge).
fn head(log: &str) -> &str {
    let mut end = log.len().min(4096);
    while !log.is_char_boundary(end) {
        end -= 1;
    }
    &log[..end]
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("/proc/PID/fd")
        .count()
}

#[tokio::test]
async fn out_of_descriptors_the_accept_loop_backs_off_logs_little_and_recovers() {
    let server = Server::start_with_log(&["--plain-http"], "warn,crest_server::http::server=info");
    let pid = server.pid();
    // Only a few descriptors more than the server has open.
    let limit = open_fds(pid) + 8;
    let prlimit = std::process::Command::new("prlimit")
        .arg("--pid")
        .arg(pid.to_string())
        .arg(format!("--nofile={limit}:{limit}"))
        .output()
        .unwrap_or_else(|e| panic!("prlimit (util-linux) is required for this test: {e}"));
    assert!(
        prlimit.status.success(),
        "prlimit failed: {}",
        String::from_utf8_lossy(&prlimit.stderr)
    );
    // More connections than it can take: the kernel completes them, the server cannot accept
    // them (EMFILE) until descriptors are free.
    let mut held = vec![];
    for _ in 0..64 {
        held.push(tcp(&server).await);
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    while !server.log().contains("accept failed") {
        assert!(
            Instant::now() < deadline,
            "the server never ran out of descriptors:\n{}",
            head(&server.log())
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Out of descriptors for a while: the accept loop pauses (up to a second) instead of
    // spinning, and does not log every failure.
    let (log_before, cpu_before, at) = (server.log().len(), cpu_ticks(pid), Instant::now());
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (log_after, cpu_after, held_for) = (server.log().len(), cpu_ticks(pid), at.elapsed());
    let log = server.log();
    let warnings = log.matches("accept failed").count();
    assert!(
        warnings <= 2,
        "{warnings} warnings in {held_for:?}:\n{}",
        head(&log)
    );
    assert!(
        log_after - log_before < 4096,
        "the log grew by {} bytes",
        log_after - log_before
    );
    // Clock ticks are 1/100 s (USER_HZ): under half a second of CPU in three seconds; a
    // spinning loop takes a whole core.
    let cpu = cpu_after - cpu_before;
    assert!(
        cpu < 50,
        "{cpu} ticks of CPU in {held_for:?} while out of descriptors"
    );
    assert!(log.contains("retry_in_ms"), "{}", head(&log));

    // Descriptors free again: the server serves at once (within its longest pause).
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let answered = tokio::time::timeout(
            Duration::from_secs(5),
            server.http("GET", "/readyz", &[], None),
        )
        .await;
        if let Ok((200, _, _)) = answered {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the server did not serve again:\n{}",
            head(&server.log())
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let log = server.log();
    assert!(
        log.contains("accepting connections again"),
        "{}",
        head(&log)
    );
}
