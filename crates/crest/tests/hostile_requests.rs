//! Requests from slow or hostile clients (issue 19): a request that is not a watch runs under
//! `--request-timeout` (reading its body included) and is answered 504 past it, as
//! kube-apiserver's timeout filter answers; `?timeout=` shortens it; watches are not cut; a body
//! sent one byte at a time costs memory in proportion to its bytes, over HTTP/1.1 and HTTP/2.

mod common;

use common::Server;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// kube-apiserver's timeout answer, byte for byte (Go's json.Encoder adds the newline).
const TIMEOUT_BODY: &str = "{\"metadata\":{},\"status\":\"Failure\",\"message\":\"Timeout: request did not complete within the allotted timeout\",\"reason\":\"Timeout\",\"details\":{},\"code\":504}\n";

fn addr(s: &Server) -> String {
    s.base.trim_start_matches("http://").to_string()
}

/// The head of a POST of a ConfigMap body of `len` bytes to `path`, as the admin.
fn post_head(s: &Server, path: &str, len: usize) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {len}\r\n\r\n",
        s.admin_token()
    )
}

/// Reads what the server sends until it closes the connection or `within` passes.
fn read_until_close(stream: &mut TcpStream, within: Duration) -> (String, bool) {
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("read timeout");
    let deadline = Instant::now() + within;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while Instant::now() < deadline {
        match stream.read(&mut buf) {
            Ok(0) => return (String::from_utf8_lossy(&got).into_owned(), true),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return (String::from_utf8_lossy(&got).into_owned(), true),
        }
    }
    (String::from_utf8_lossy(&got).into_owned(), false)
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .expect("VmRSS")
}

fn configmap_body(name: &str, payload: usize) -> Vec<u8> {
    format!(
        "{{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{{\"name\":\"{name}\"}},\"data\":{{\"a\":\"{}\"}}}}",
        "x".repeat(payload)
    )
    .into_bytes()
}

#[test]
fn a_body_that_stops_arriving_is_answered_504_at_the_request_timeout() {
    let s = Server::start_with(&["--plain-http", "--request-timeout", "2s"]);
    let body = configmap_body("stalled", 100);
    let mut stream = TcpStream::connect(addr(&s)).expect("connect");
    let started = Instant::now();
    stream
        .write_all(post_head(&s, "/api/v1/namespaces/default/configmaps", body.len()).as_bytes())
        .expect("head");
    stream.write_all(&body[..20]).expect("part of the body");
    let (answer, closed) = read_until_close(&mut stream, Duration::from_secs(30));
    let took = started.elapsed();
    assert!(
        answer.starts_with("HTTP/1.1 504 "),
        "a stalled body must get 504, got {answer:?}"
    );
    assert!(answer.ends_with(TIMEOUT_BODY), "{answer:?}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("content-type: text/plain; charset=utf-8"),
        "{answer:?}"
    );
    assert!(closed, "the connection must be closed after the 504");
    assert!(
        took >= Duration::from_millis(1900) && took < Duration::from_secs(20),
        "answered after {took:?}, the timeout is 2s"
    );
    // Nothing was created, and the server serves on.
    let out = s.curl(&[
        "-s",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &format!("{}/api/v1/namespaces/default/configmaps/stalled", s.base),
    ]);
    assert_eq!(String::from_utf8_lossy(&out.expect("curl").stdout), "404");
}

#[test]
fn the_timeout_parameter_shortens_the_deadline_and_is_validated() {
    let s = Server::start_with(&["--plain-http"]);
    // `?timeout=1s` under the default minute: a stalled body is cut after a second.
    let body = configmap_body("short", 100);
    let mut stream = TcpStream::connect(addr(&s)).expect("connect");
    let started = Instant::now();
    stream
        .write_all(
            post_head(
                &s,
                "/api/v1/namespaces/default/configmaps?timeout=1s",
                body.len(),
            )
            .as_bytes(),
        )
        .expect("head");
    stream.write_all(&body[..10]).expect("part of the body");
    let (answer, _) = read_until_close(&mut stream, Duration::from_secs(30));
    assert!(answer.starts_with("HTTP/1.1 504 "), "{answer:?}");
    assert!(answer.ends_with(TIMEOUT_BODY), "{answer:?}");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );

    // A malformed timeout is a 400 naming Go's parse error, as upstream's WithRequestDeadline.
    let out = s
        .curl(&[
            "-s",
            "-w",
            "\n%{http_code}",
            &format!("{}/api/v1/namespaces?timeout=abc", s.base),
        ])
        .expect("curl");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').expect("code");
    assert_eq!(code, "400", "{text}");
    let status: serde_json::Value = serde_json::from_str(body).expect("Status");
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["reason"], "BadRequest");
    assert_eq!(
        status["message"],
        "invalid timeout specified in the request URL - time: invalid duration \"abc\""
    );
    // Zero, or more than the server's maximum, means the server's maximum.
    for t in ["0s", "10m", "30s"] {
        let out = s
            .curl(&[
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                &format!("{}/api/v1/namespaces?timeout={t}", s.base),
            ])
            .expect("curl");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "200", "timeout={t}");
    }
}

#[test]
fn watches_are_not_cut_by_the_request_timeout() {
    let s = Server::start_with(&["--plain-http", "--request-timeout", "1s"]);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let client = s.reqwest();
        let mut watch = client
            .get(format!(
                "{}/api/v1/namespaces/default/configmaps?watch=true",
                s.base
            ))
            .send()
            .await
            .expect("watch");
        assert_eq!(watch.status(), 200);
        // Well past the request timeout, the watch still delivers.
        tokio::time::sleep(Duration::from_secs(3)).await;
        let created = client
            .post(format!("{}/api/v1/namespaces/default/configmaps", s.base))
            .header("Content-Type", "application/json")
            .body(configmap_body("after", 1))
            .send()
            .await
            .expect("create");
        assert_eq!(created.status(), 201);
        let mut seen = String::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while !seen.contains("\"after\"") {
            let chunk = tokio::time::timeout_at(deadline, watch.chunk())
                .await
                .expect("the watch must deliver the event")
                .expect("watch stream")
                .expect("the watch must stay open past the request timeout");
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
        assert!(seen.contains("\"ADDED\""), "{seen}");
    });
}

/// Sends `body` to the create path one byte per TCP segment (a pause after each), and returns
/// the server's RSS growth (KiB) measured just before the last byte.
fn trickle_http1(s: &Server, name: &str, bytes: usize) -> (u64, String) {
    let body = configmap_body(name, bytes);
    let mut stream = TcpStream::connect(addr(s)).expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    stream
        .write_all(post_head(s, "/api/v1/namespaces/default/configmaps", body.len()).as_bytes())
        .expect("head");
    let before = rss_kib(s.pid());
    for b in &body[..body.len() - 1] {
        stream.write_all(std::slice::from_ref(b)).expect("a byte");
        std::thread::sleep(Duration::from_micros(50));
    }
    let grown = rss_kib(s.pid()).saturating_sub(before);
    stream
        .write_all(&body[body.len() - 1..])
        .expect("last byte");
    let (answer, _) = read_until_close(&mut stream, Duration::from_secs(5));
    (grown, answer)
}

#[test]
fn a_body_sent_a_byte_at_a_time_costs_memory_in_proportion_to_its_bytes() {
    let s = Server::start_with(&["--plain-http"]);
    // Warm up the allocator and the connection paths once.
    let _ = trickle_http1(&s, "warm", 2_000);
    const BYTES: usize = 30_000;
    let (grown, answer) = trickle_http1(&s, "trickled", BYTES);
    assert!(answer.starts_with("HTTP/1.1 201 "), "{answer:?}");
    // Kept frame by frame, 30,000 one-byte segments cost 60-120 MB; copied as they arrive,
    // about the body itself. 8 MiB leaves room for allocator noise on a busy machine.
    assert!(
        grown < 8 * 1024,
        "RSS grew {grown} KiB for a {BYTES}-byte body sent a byte at a time"
    );
}

/// An HTTP/2 connection to the plain-HTTP server `s` (prior knowledge), driven by its own task.
async fn h2_connect(s: &Server) -> h2::client::SendRequest<bytes::Bytes> {
    let tcp = tokio::net::TcpStream::connect(addr(s))
        .await
        .expect("connect");
    tcp.set_nodelay(true).expect("nodelay");
    let (client, conn) = h2::client::handshake(tcp).await.expect("h2 handshake");
    tokio::spawn(async move {
        let _ = conn.await;
    });
    client.ready().await.expect("ready")
}

fn h2_post(s: &Server) -> http::Request<()> {
    http::Request::post(format!("{}/api/v1/namespaces/default/configmaps", s.base))
        .header("authorization", format!("Bearer {}", s.admin_token()))
        .header("content-type", "application/json")
        .body(())
        .expect("request")
}

#[test]
fn an_http2_body_sent_one_byte_per_frame_costs_memory_in_proportion_to_its_bytes() {
    let s = Server::start_with(&["--plain-http", "--request-timeout", "5s"]);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let pid = s.pid();
    rt.block_on(async {
        // A body of one-byte DATA frames, each flushed on its own. The server either takes it
        // (201) or, when such frames pile up faster than the request reads them, ends the
        // connection with ENHANCE_YOUR_CALM (h2's budget for framing overhead): either way its
        // memory follows the bytes, not the frames.
        const BYTES: usize = 30_000;
        let body = configmap_body("h2-trickled", BYTES);
        let mut client = h2_connect(&s).await;
        let (response, mut stream) = client.send_request(h2_post(&s), false).expect("send");
        let before = rss_kib(pid);
        let mut refused = None;
        for (i, b) in body.iter().enumerate() {
            let last = i == body.len() - 1;
            if last {
                let grown = rss_kib(pid).saturating_sub(before);
                assert!(
                    grown < 8 * 1024,
                    "RSS grew {grown} KiB for a {BYTES}-byte body in one-byte frames"
                );
            }
            stream.reserve_capacity(1);
            let mut sent = Ok(());
            while stream.capacity() == 0 {
                match futures::future::poll_fn(|cx| stream.poll_capacity(cx)).await {
                    Some(Ok(_)) => {}
                    Some(Err(e)) => {
                        sent = Err(e);
                        break;
                    }
                    None => break,
                }
            }
            let sent =
                sent.and_then(|()| stream.send_data(bytes::Bytes::copy_from_slice(&[*b]), last));
            if let Err(e) = sent {
                refused = Some(e);
                break;
            }
            if i % 64 == 0 {
                tokio::task::yield_now().await;
            }
        }
        match refused {
            None => {
                let response = response.await.expect("response");
                assert_eq!(response.status(), 201);
            }
            Some(e) => {
                let grown = rss_kib(pid).saturating_sub(before);
                assert!(grown < 8 * 1024, "RSS grew {grown} KiB");
                // The upload ended early: the server's h2 guard against framing overhead
                // (GOAWAY ENHANCE_YOUR_CALM; the client library reports it as an inactive
                // stream) or an answer to the part it read. Either way nothing was created.
                let _ = tokio::time::timeout(Duration::from_secs(10), response).await;
                eprintln!("one-byte frames ended the upload: {e}");
            }
        }

        // A stream whose body stops arriving is answered 504 at the deadline; the connection
        // carries other streams on.
        let mut client = h2_connect(&s).await;
        let started = Instant::now();
        let (response, mut stream) = client.send_request(h2_post(&s), false).expect("send");
        stream
            .send_data(bytes::Bytes::from_static(b"{\"apiVersion\":"), false)
            .expect("data");
        let response = tokio::time::timeout(Duration::from_secs(30), response)
            .await
            .expect("answered")
            .expect("response");
        assert_eq!(response.status(), 504);
        let mut body = response.into_body();
        let mut text = Vec::new();
        while let Some(chunk) = body.data().await {
            text.extend_from_slice(&chunk.expect("chunk"));
        }
        assert_eq!(String::from_utf8_lossy(&text), TIMEOUT_BODY);
        assert!(started.elapsed() >= Duration::from_millis(4900));
        drop(stream);
        let req = http::Request::get(format!("{}/api/v1/namespaces/default", s.base))
            .header("authorization", format!("Bearer {}", s.admin_token()))
            .body(())
            .expect("request");
        let mut client = client.ready().await.expect("ready");
        let (response, _) = client.send_request(req, true).expect("send");
        assert_eq!(response.await.expect("response").status(), 200);
    });
}
