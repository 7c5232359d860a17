//! Issue 28 item 11: over HTTP/2, an answer sent before the request body is read (a review that
//! needs no body, 401, 403, 413, 415) ends its stream cleanly: curl 7.88 takes the CANCEL reset
//! h2 sends for a body dropped while the response is still being sent as a failed request
//! (exit 92); upstream's server resets with NO_ERROR after the response.

mod common;
use common::*;

/// curl over HTTP/2: (exit code, HTTP status).
fn curl_h2(s: &Server, args: &[&str]) -> (i32, String) {
    let mut all = vec!["-s", "-o", "/dev/null", "-w", "%{http_code}", "--http2"];
    all.extend_from_slice(args);
    let out = s.curl(&all).expect("curl");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn early_answers_with_an_unread_body_end_their_streams_cleanly() {
    let s = Server::start();
    let review = format!(
        "{}/apis/authentication.k8s.io/v1/selfsubjectreviews",
        s.base
    );
    let body = r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#;
    let big = "x".repeat(256 * 1024);
    for i in 0..10 {
        let (code, status) = curl_h2(
            &s,
            &[
                "-X",
                "POST",
                "-H",
                "Content-Type: application/json",
                "--data-binary",
                body,
                &review,
            ],
        );
        assert_eq!((code, status.as_str()), (0, "201"), "try {i}");
        // Impersonating: the same review as another user.
        let (code, status) = curl_h2(
            &s,
            &[
                "-X",
                "POST",
                "-H",
                "Content-Type: application/json",
                "-H",
                "Impersonate-User: someone",
                "-H",
                "Impersonate-Group: devs",
                "--data-binary",
                body,
                &review,
            ],
        );
        assert_eq!(
            (code, status.as_str()),
            (0, "201"),
            "impersonating, try {i}"
        );
    }
    let cms = format!("{}/api/v1/namespaces/default/configmaps", s.base);
    let big_file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(big_file.path(), &big).unwrap();
    let big = format!("@{}", big_file.path().display());
    // 401: a token nobody issued, with a body the server never reads.
    let (code, status) = curl_h2(
        &s,
        &[
            "-X",
            "POST",
            "-H",
            "Authorization: Bearer not-a-token",
            "-H",
            "Content-Type: application/json",
            "--data-binary",
            &big,
            &cms,
        ],
    );
    assert_eq!((code, status.as_str()), (0, "401"));
    // 403: anonymous may not create.
    let (code, status) = curl_h2(
        &s,
        &[
            "--anonymous",
            "-X",
            "POST",
            "-H",
            "Content-Type: application/json",
            "--data-binary",
            &big,
            &cms,
        ],
    );
    assert_eq!((code, status.as_str()), (0, "403"));
    // 415: a media type the resource does not take.
    let (code, status) = curl_h2(
        &s,
        &[
            "-X",
            "POST",
            "-H",
            "Content-Type: text/plain",
            "--data-binary",
            &big,
            &cms,
        ],
    );
    assert_eq!((code, status.as_str()), (0, "415"));
    // 413: a declared length over the limit.
    let huge = "x".repeat(4 * 1024 * 1024);
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), &huge).unwrap();
    let at = format!("@{}", file.path().display());
    let (code, status) = curl_h2(
        &s,
        &[
            "-X",
            "POST",
            "-H",
            "Content-Type: application/json",
            "--data-binary",
            &at,
            &cms,
        ],
    );
    assert_eq!((code, status.as_str()), (0, "413"));
}
