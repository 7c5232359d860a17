//! Issue 28 item 13: request headers up to Go's limit. kube-apiserver's Go server takes a request
//! head of up to `MaxHeaderBytes` (1 MiB) + 4096 bytes over HTTP/1.1, in any number of fields,
//! and answers `431` beyond; over HTTP/2 it advertises a header list of 1 MiB + 320 bytes. Crest
//! answered 431 to 101 fields and to heads over ~408 KiB over HTTP/1.1, and ended an HTTP/2
//! connection (GOAWAY `ENHANCE_YOUR_CALM`) at a header list over ~110 KB sent in 16 KiB frames
//! (as curl's nghttp2 and Go's transport send them).
//!
//! Raw clients over TLS (the default serving, with the admin's token), so that what is sent is
//! exactly what the test says: HTTP/1.1 with ALPN http/1.1, and HTTP/2 with ALPN h2 and header
//! blocks cut into 16 KiB HEADERS and CONTINUATION frames. curl where it can send such requests
//! itself: curl 7.88 sends only the first 128 KiB of a GET's head over TLS and then waits (for
//! any server: it sends the rest only for a request with a body), and over HTTP/2 no header
//! block over 64 KiB (nghttp2's own limit).

mod common;

use common::Server;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Go's limit on an HTTP/1.1 request head: `DefaultMaxHeaderBytes` + 4096.
const MAX_HEAD: usize = (1 << 20) + 4096;
/// What every exchange must take at most: an answer, never a hang.
const WITHIN: Duration = Duration::from_secs(20);
const PATH: &str = "/api/v1/namespaces/default/configmaps";

/// A TLS connection to `server` trusting its CA, offering `alpn`.
async fn tls(server: &Server, alpn: &[u8]) -> tokio_rustls::client::TlsStream<TcpStream> {
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
    config.alpn_protocols = vec![alpn.to_vec()];
    let port = server.base.rsplit(':').next().expect("port");
    let tcp = TcpStream::connect(format!("127.0.0.1:{port}"))
        .await
        .expect("connect");
    let stream = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("127.0.0.1").expect("name"), tcp)
        .await
        .expect("TLS handshake");
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(alpn));
    stream
}

/// Header fields, names and values.
type Fields = Vec<(String, String)>;

/// `count` fields `x-h<i>` whose lines (`name: value\r\n`) are `line` bytes each.
fn fields(count: usize, line: usize) -> Fields {
    (0..count)
        .map(|i| {
            let name = format!("x-h{i}");
            let value = "v".repeat(line - name.len() - 4);
            (name, value)
        })
        .collect()
}

// ---- HTTP/1.1 ----

/// An HTTP/1.1 GET of `PATH` as the admin with `fields` (and `Connection: close` unless
/// `keep_alive`), its head padded to `head_len` bytes by one more field if given.
fn h1_head(
    server: &Server,
    fields: &[(String, String)],
    head_len: Option<usize>,
    keep_alive: bool,
) -> Vec<u8> {
    let mut head = format!(
        "GET {PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\n{}",
        server.admin_token(),
        if keep_alive {
            ""
        } else {
            "Connection: close\r\n"
        }
    );
    for (n, v) in fields {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    if let Some(len) = head_len {
        let pad = len - head.len() - "x-pad: \r\n\r\n".len();
        head.push_str(&format!("x-pad: {}\r\n", "p".repeat(pad)));
    }
    head.push_str("\r\n");
    if let Some(len) = head_len {
        assert_eq!(head.len(), len);
    }
    head.into_bytes()
}

/// Sends `head` on a new HTTP/1.1 TLS connection (written while the answer is read, as a
/// client would) and reads until the server closes: (status, whole answer, time taken).
async fn h1_exchange(server: &Server, head: Vec<u8>) -> (u16, String, Duration) {
    let started = Instant::now();
    let (mut r, mut w) = tokio::io::split(tls(server, b"http/1.1").await);
    let writer = tokio::spawn(async move {
        let _ = w.write_all(&head).await;
        let _ = w.flush().await;
        w
    });
    let mut got = Vec::new();
    let read = tokio::time::timeout(WITHIN, r.read_to_end(&mut got)).await;
    assert!(read.is_ok(), "no answer within {WITHIN:?}");
    let _ = writer.await;
    let text = String::from_utf8_lossy(&got).into_owned();
    (status_of(&text), text, started.elapsed())
}

fn status_of(answer: &str) -> u16 {
    answer
        .strip_prefix("HTTP/1.1 ")
        .and_then(|s| s.get(..3))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "not an HTTP/1.1 answer: {:?}",
                &answer[..answer.len().min(200)]
            )
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http1_over_tls_serves_heads_up_to_gos_limit_and_answers_431_beyond() {
    let server = Server::start();
    let cases: Vec<(&str, Vec<u8>, u16)> = vec![
        (
            "one 200 KB field",
            h1_head(&server, &fields(1, 200_000), None, false),
            200,
        ),
        (
            "200 fields of 1 KB",
            h1_head(&server, &fields(200, 1000), None, false),
            200,
        ),
        (
            "900 fields of 1 KB",
            h1_head(&server, &fields(900, 1000), None, false),
            200,
        ),
        (
            "20,000 fields of 40 B",
            h1_head(&server, &fields(20_000, 40), None, false),
            200,
        ),
        (
            "one 900 KB field",
            h1_head(&server, &fields(1, 900_000), None, false),
            200,
        ),
        (
            "a head of exactly Go's limit",
            h1_head(&server, &[], Some(MAX_HEAD), false),
            200,
        ),
        (
            "a head of exactly Go's limit in 1 KB fields",
            h1_head(&server, &fields(1000, 1000), Some(MAX_HEAD), false),
            200,
        ),
        (
            "a head one byte over Go's limit",
            h1_head(&server, &[], Some(MAX_HEAD + 1), false),
            431,
        ),
        (
            "one 1.1 MiB field",
            h1_head(&server, &fields(1, 1_150_000), None, false),
            431,
        ),
        (
            "1,100 fields of 1 KB",
            h1_head(&server, &fields(1100, 1000), None, false),
            431,
        ),
        // More fields than an http::HeaderMap holds (Go would take them: no count limit).
        (
            "30,000 fields of 16 B",
            h1_head(&server, &fields(30_000, 16), None, false),
            431,
        ),
    ];
    for (what, head, want) in cases {
        let (status, answer, took) = h1_exchange(&server, head).await;
        assert_eq!(status, want, "{what}: {}", &answer[..answer.len().min(300)]);
        if want == 431 {
            // Go's answer, byte for byte.
            assert_eq!(
                answer,
                "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large",
                "{what}"
            );
        } else {
            assert!(
                answer.contains("\"kind\":\"ConfigMapList\""),
                "{what}: {answer}"
            );
        }
        eprintln!("{what}: {status} in {took:?}");
    }

    // On one kept-alive connection: a small request, one with 500 fields, then small ones
    // again and one with 2,000 fields: each answered, in order, on the same connection.
    let small = h1_head(&server, &[], None, true);
    let many = h1_head(&server, &fields(500, 100), None, true);
    let more = h1_head(&server, &fields(2000, 100), None, true);
    let last = h1_head(&server, &[], None, false);
    let mut all = Vec::new();
    for head in [&small, &many, &small, &more, &small, &last] {
        all.extend_from_slice(head);
    }
    let (_, answer, _) = h1_exchange(&server, all).await;
    assert_eq!(answer.matches("HTTP/1.1 200 OK").count(), 6, "{answer}");
    assert_eq!(
        answer.matches("\"kind\":\"ConfigMapList\"").count(),
        6,
        "{answer}"
    );
}

#[test]
fn curl_over_http1_tls_sends_large_headers_and_gets_answers() {
    let server = Server::start();
    let dir = tempfile::tempdir().expect("tempdir");
    // curl -H @FILE: one header line per line of the file.
    let file = |name: &str, fields: &[(String, String)]| {
        let path = dir.path().join(name);
        let text: String = fields.iter().map(|(n, v)| format!("{n}: {v}\n")).collect();
        std::fs::write(&path, text).expect("header file");
        format!("@{}", path.display())
    };
    let review = format!(
        "{}/apis/authentication.k8s.io/v1/selfsubjectreviews",
        server.base
    );
    let body = r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#;
    let cases = [
        ("one 200 KB field", file("one", &fields(1, 200_000))),
        ("200 fields of 1 KB", file("many", &fields(200, 1000))),
        ("900 fields of 1 KB", file("most", &fields(900, 1000))),
    ];
    for (what, headers) in &cases {
        let started = Instant::now();
        let out = server
            .curl(&[
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                "--http1.1",
                "--max-time",
                "20",
                "-H",
                headers,
                "-H",
                "Content-Type: application/json",
                "--data-binary",
                body,
                &review,
            ])
            .expect("curl");
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).as_ref()
            ),
            (Some(0), "201"),
            "{what}"
        );
        eprintln!("curl POST, {what}: 201 in {:?}", started.elapsed());
    }
    // A GET's head curl sends whole (up to 128 KiB over TLS), over HTTP/1.1; and over HTTP/2
    // a header block nghttp2 sends (up to 64 KiB).
    let list = format!("{}{PATH}", server.base);
    for (proto, headers) in [
        ("--http1.1", file("get1", &fields(1, 120_000))),
        ("--http1.1", file("get2", &fields(120, 1000))),
        ("--http2", file("get3", &fields(1, 60_000))),
        ("--http2", file("get4", &fields(60, 1000))),
    ] {
        let out = server
            .curl(&[
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                proto,
                "--max-time",
                "20",
                "-H",
                &headers,
                &list,
            ])
            .expect("curl");
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).as_ref()
            ),
            (Some(0), "200"),
            "curl {proto} GET with {headers}"
        );
    }
}

// ---- HTTP/2 ----

const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const SETTINGS: u8 = 0x4;
const GOAWAY: u8 = 0x7;
const CONTINUATION: u8 = 0x9;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const ACK: u8 = 0x1;

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// An HPACK integer with an `n`-bit prefix, the prefix's other bits `first`.
fn hpack_int(out: &mut Vec<u8>, first: u8, n: u32, mut v: usize) {
    let max = (1usize << n) - 1;
    if v < max {
        out.push(first | v as u8);
        return;
    }
    out.push(first | max as u8);
    v -= max;
    while v >= 128 {
        out.push((v % 128) as u8 | 0x80);
        v /= 128;
    }
    out.push(v as u8);
}

/// A header block: GET `PATH` over https as the admin with `fields`, every field a literal
/// without indexing and without Huffman coding (so the block is as long as the list).
fn h2_block(server: &Server, fields: &[(String, String)]) -> Vec<u8> {
    let mut b = vec![0x82, 0x87]; // :method GET, :scheme https (static table)
    for (index, value) in [(4, PATH.to_string()), (1, "127.0.0.1".to_string())] {
        hpack_int(&mut b, 0x00, 4, index); // :path, :authority: indexed name, literal value
        hpack_int(&mut b, 0x00, 7, value.len());
        b.extend_from_slice(value.as_bytes());
    }
    let token = format!("Bearer {}", server.admin_token());
    let auth = [("authorization".to_string(), token)];
    for (name, value) in auth.iter().chain(fields) {
        b.push(0x00);
        hpack_int(&mut b, 0x00, 7, name.len());
        b.extend_from_slice(name.as_bytes());
        hpack_int(&mut b, 0x00, 7, value.len());
        b.extend_from_slice(value.as_bytes());
    }
    b
}

/// The block as one HEADERS frame and CONTINUATION frames of 16 KiB, as curl (nghttp2) and Go's
/// transport cut header blocks.
fn h2_request(stream: u32, block: &[u8]) -> Vec<u8> {
    let chunks: Vec<&[u8]> = block.chunks(16 * 1024).collect();
    let mut out = Vec::new();
    for (i, chunk) in chunks.iter().enumerate() {
        let last = i + 1 == chunks.len();
        let (kind, flags) = if i == 0 {
            (HEADERS, END_STREAM)
        } else {
            (CONTINUATION, 0)
        };
        out.extend(frame(
            kind,
            flags | if last { END_HEADERS } else { 0 },
            stream,
            chunk,
        ));
    }
    out
}

/// The `:status` of a response header block (the first field, as every encoder puts it): a
/// static-table entry, or a literal with the `:status` name whose value may be Huffman-coded.
fn h2_status(block: &[u8]) -> u16 {
    let first = block[0];
    if first & 0x80 != 0 {
        return match first & 0x7f {
            8 => 200,
            9 => 204,
            10 => 206,
            11 => 304,
            12 => 400,
            13 => 404,
            14 => 500,
            i => panic!("static entry {i} is not a :status"),
        };
    }
    // Literal (with, without or never indexed) with name index 8 (`:status`).
    let name = if first & 0x40 != 0 {
        first & 0x3f
    } else {
        first & 0x0f
    };
    assert_eq!(name, 8, "first field is not :status: {block:02x?}");
    let (huffman, len) = (block[1] & 0x80 != 0, (block[1] & 0x7f) as usize);
    let value = &block[2..2 + len];
    let digits = if huffman {
        // HPACK's Huffman codes of the digits (RFC 7541 appendix B): 0-2 in 5 bits, 3-9 in 6.
        let mut bits = value
            .iter()
            .flat_map(|b| (0..8).rev().map(move |i| (b >> i) & 1));
        let mut out = String::new();
        while out.len() < 3 {
            let mut code = 0u8;
            for _ in 0..5 {
                code = code << 1 | bits.next().expect("digit bits");
            }
            if code <= 2 {
                out.push((b'0' + code) as char);
                continue;
            }
            code = code << 1 | bits.next().expect("digit bits");
            assert!((0x19..=0x1f).contains(&code), "not a digit: {code:#x}");
            out.push((b'3' + (code - 0x19)) as char);
        }
        out
    } else {
        String::from_utf8_lossy(value).into_owned()
    };
    digits.parse().expect("status")
}

/// What the server did with stream `id`: its status, or the GOAWAY code that ended the
/// connection instead.
#[derive(Debug, PartialEq)]
enum Outcome {
    Status(u16),
    GoAway(u32),
}

struct H2 {
    io: tokio_rustls::client::TlsStream<TcpStream>,
    settings: Vec<(u16, u32)>,
}

impl H2 {
    async fn connect(server: &Server) -> H2 {
        let mut io = tls(server, b"h2").await;
        let mut hello = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        hello.extend(frame(SETTINGS, 0, 0, &[]));
        io.write_all(&hello).await.expect("preface");
        let mut h2 = H2 {
            io,
            settings: vec![],
        };
        let (kind, _, _, payload) = h2.read_frame().await.expect("server SETTINGS");
        assert_eq!(kind, SETTINGS);
        h2.settings = payload
            .chunks(6)
            .map(|c| {
                (
                    u16::from_be_bytes([c[0], c[1]]),
                    u32::from_be_bytes([c[2], c[3], c[4], c[5]]),
                )
            })
            .collect();
        h2.io
            .write_all(&frame(SETTINGS, ACK, 0, &[]))
            .await
            .expect("SETTINGS ACK");
        h2
    }

    async fn read_frame(&mut self) -> Option<(u8, u8, u32, Vec<u8>)> {
        let mut head = [0u8; 9];
        self.io.read_exact(&mut head).await.ok()?;
        let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
        let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
        let mut payload = vec![0u8; len];
        self.io.read_exact(&mut payload).await.ok()?;
        Some((head[3], head[4], stream, payload))
    }

    /// Sends a GET with `fields` on stream `id` (written while the answer is read) and waits
    /// for the answer's status or a GOAWAY.
    async fn get(&mut self, server: &Server, id: u32, fields: &[(String, String)]) -> Outcome {
        let request = h2_request(id, &h2_block(server, fields));
        let (mut r, mut w) = tokio::io::split(&mut self.io);
        let write = async {
            let _ = w.write_all(&request).await;
            let _ = w.flush().await;
        };
        let read = async {
            loop {
                let mut head = [0u8; 9];
                if r.read_exact(&mut head).await.is_err() {
                    return Outcome::GoAway(u32::MAX); // closed without a GOAWAY
                }
                let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
                let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
                let mut payload = vec![0u8; len];
                if r.read_exact(&mut payload).await.is_err() {
                    return Outcome::GoAway(u32::MAX);
                }
                match head[3] {
                    HEADERS if stream == id => return Outcome::Status(h2_status(&payload)),
                    GOAWAY => {
                        return Outcome::GoAway(u32::from_be_bytes([
                            payload[4], payload[5], payload[6], payload[7],
                        ]))
                    }
                    RST_STREAM if stream == id => panic!("stream {id} reset: {payload:?}"),
                    _ => {} // SETTINGS ACK, WINDOW_UPDATE, PING, DATA of earlier streams
                }
            }
        };
        let both = async { tokio::join!(write, read).1 };
        let outcome = tokio::time::timeout(WITHIN, both).await;
        let outcome =
            outcome.unwrap_or_else(|_| panic!("stream {id}: no answer within {WITHIN:?}"));
        outcome
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_over_tls_serves_header_lists_up_to_gos_limit_and_answers_431_beyond() {
    let server = Server::start();
    let cases: Vec<(&str, Fields, Outcome)> = vec![
        ("one 200 KB field", fields(1, 200_000), Outcome::Status(200)),
        (
            "200 fields of 1 KB",
            fields(200, 1000),
            Outcome::Status(200),
        ),
        (
            "900 fields of 1 KB",
            fields(900, 1000),
            Outcome::Status(200),
        ),
        ("one 900 KB field", fields(1, 900_000), Outcome::Status(200)),
        // Over the list size: answered 431 on the stream.
        (
            "one 1.1 MiB field",
            fields(1, 1_150_000),
            Outcome::Status(431),
        ),
        (
            "1,100 fields of 1 KB",
            fields(1100, 1000),
            Outcome::Status(431),
        ),
    ];
    // Each on a connection of its own (the answers' HPACK state starts afresh), then a small
    // request on the same connection: it goes on after either answer.
    for (what, fields, want) in cases {
        let mut h2 = H2::connect(&server).await;
        let started = Instant::now();
        let got = h2.get(&server, 1, &fields).await;
        assert_eq!(got, want, "{what}");
        eprintln!("{what}: {got:?} in {:?}", started.elapsed());
        let next = h2.get(&server, 3, &[]).await;
        assert_eq!(next, Outcome::Status(200), "a small request after {what}");
    }
    // Go's list size (1 MiB + 10 x 32) and frames clients can fill their header blocks to.
    let h2 = H2::connect(&server).await;
    assert!(
        h2.settings.contains(&(0x6, (1 << 20) + 320)),
        "{:?}",
        h2.settings
    );
    assert!(h2.settings.contains(&(0x5, 16 * 1024)), "{:?}", h2.settings);
}
