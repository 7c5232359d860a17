//! The response library: bodies, rendering of payloads in the negotiated format, errors as
//! `meta/v1 Status`, and request bodies read under the size limit.

use crate::http::request_body::RequestBody;
use bytes::Bytes;
use crest_api::ApiError;
use crest_codec::negotiate::Output;
use http::{HeaderValue, Response, StatusCode};
use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Full};
use serde_json::Value;
use std::convert::Infallible;

/// Request bodies larger than this are refused with 413, as kube-apiserver does (3 MiB).
pub(crate) const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

pub(crate) type Body = UnsyncBoxBody<Bytes, Infallible>;

pub(crate) fn full(b: impl Into<Bytes>) -> Body {
    Full::new(b.into()).boxed_unsync()
}

/// A response payload: an object tree, or JSON bytes that need no re-encoding, or a protobuf
/// body already encoded.
pub(crate) enum Payload {
    Value(Value),
    Json(Bytes),
    Protobuf(Bytes),
}

/// Renders a payload per the negotiated output (JSON, pretty JSON or YAML).
pub(crate) fn render(
    status: StatusCode,
    payload: Payload,
    output: Output,
    pretty: bool,
) -> Response<Body> {
    let (bytes, ctype) = match (output.after_transform(), payload) {
        (_, Payload::Protobuf(b)) => (b, crest_codec::protobuf::CONTENT_TYPE),
        (Output::Protobuf, p) => {
            let encoded = match &p {
                Payload::Value(v) => crest_codec::protobuf::encode_object(v),
                // Cached JSON: transcoded without a tree.
                Payload::Json(b) => type_meta(b)
                    .and_then(|(av, kind)| crest_codec::protobuf::encode_json(&av, &kind, b)),
                Payload::Protobuf(b) => Some(b.to_vec()),
            };
            match (encoded, p) {
                (Some(b), _) => (Bytes::from(b), crest_codec::protobuf::CONTENT_TYPE),
                // Only kinds with a message negotiate protobuf; anything else stays JSON.
                (None, Payload::Json(b) | Payload::Protobuf(b)) => (b, "application/json"),
                (None, Payload::Value(v)) => (
                    Bytes::from(crest_codec::json::to_vec(&v)),
                    "application/json",
                ),
            }
        }
        (Output::Yaml, p) => {
            let v = match p {
                Payload::Value(v) => v,
                Payload::Json(b) | Payload::Protobuf(b) => {
                    serde_json::from_slice(&b).unwrap_or(Value::Null)
                }
            };
            (
                Bytes::from(serde_yaml_ng::to_string(&v).unwrap_or_default()),
                "application/yaml",
            )
        }
        (_, Payload::Json(b)) if !pretty => (b, "application/json"),
        // Indented as it is: the bytes are already in the order kube-apiserver writes.
        (_, Payload::Json(b)) => (
            Bytes::from(crest_codec::json::indent(&b)),
            "application/json",
        ),
        // A built-in kind in Go's field order, anything else sorted, as kube-apiserver's
        // typed and unstructured encoders write them.
        (_, Payload::Value(v)) => {
            let enc = if pretty {
                crest_codec::json::to_vec_pretty(&v)
            } else {
                crest_codec::json::to_vec(&v)
            };
            (Bytes::from(enc), "application/json")
        }
    };
    let mut resp = Response::new(full(bytes));
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(http::header::CONTENT_TYPE, HeaderValue::from_static(ctype));
    resp
}

/// The `apiVersion` and `kind` of an object's JSON (the rest skipped, not parsed into a tree).
fn type_meta(json: &[u8]) -> Option<(String, String)> {
    #[derive(serde::Deserialize)]
    struct TypeMeta {
        #[serde(rename = "apiVersion")]
        api_version: String,
        kind: String,
    }
    let tm: TypeMeta = serde_json::from_slice(json).ok()?;
    Some((tm.api_version, tm.kind))
}

/// A `Warning: 299` header value; the text as an RFC 7234 warn-text (a quoted string with `"` and
/// `\` escaped). `None` for a text a header cannot carry.
pub(crate) fn warning_header(text: &str) -> Option<HeaderValue> {
    let text = text.replace('\\', "\\\\").replace('"', "\\\"");
    HeaderValue::from_str(&format!("299 - \"{text}\"")).ok()
}

/// The text of a header [`warning_header`] made; `None` for any other form.
fn warning_text(v: &HeaderValue) -> Option<String> {
    let quoted = v
        .to_str()
        .ok()?
        .strip_prefix("299 - \"")?
        .strip_suffix('"')?;
    let mut out = String::with_capacity(quoted.len());
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        out.push(if c == '\\' { chars.next()? } else { c });
    }
    Some(out)
}

/// kube-apiserver's warning recorder limits (k8s.io/apiserver endpoints/filters/warning.go):
/// past 4 Ki characters of warning text in all, every warning is cut to 256 characters.
const WARNINGS_TOTAL_RUNES: usize = 4 * 1024;
const WARNING_ITEM_RUNES: usize = 256;

/// Applies kube-apiserver's warning recorder to a response's `Warning` headers, in their order:
/// a repeated text is sent once, and once the texts together pass 4 Ki characters each is cut
/// to 256 (and, past the limit again, later ones are dropped), so a request that provokes
/// thousands of warnings or one enormous one cannot make a header clients refuse.
pub(crate) fn limit_warnings(headers: &mut http::HeaderMap) {
    // Most answers carry no warning, or one short one: nothing to do, nothing allocated.
    let mut all = headers.get_all(http::header::WARNING).iter();
    match (all.next(), all.next()) {
        (None, _) => return,
        (Some(v), None) if v.len() <= WARNINGS_TOTAL_RUNES => return,
        _ => {}
    }
    let values: Vec<HeaderValue> = headers
        .get_all(http::header::WARNING)
        .iter()
        .cloned()
        .collect();
    let cut = |t: &str| -> String { t.chars().take(WARNING_ITEM_RUNES).collect() };
    let mut seen = std::collections::HashSet::new();
    let mut ordered: Vec<String> = vec![];
    let mut kept: Vec<String> = vec![];
    let mut written = 0usize;
    let mut truncating = false;
    for v in &values {
        let Some(text) = warning_text(v) else {
            continue;
        };
        if text.is_empty() || (truncating && written >= WARNINGS_TOTAL_RUNES) {
            continue;
        }
        if !seen.insert(text.clone()) {
            continue;
        }
        ordered.push(text.clone());
        let mut text = text;
        if truncating && text.chars().count() > WARNING_ITEM_RUNES {
            text = cut(&text);
        }
        let runes = text.chars().count();
        if written + runes <= WARNINGS_TOTAL_RUNES || truncating {
            written += runes;
            kept.push(text);
            continue;
        }
        // Over the limit: from now on every warning is cut, the earlier ones too.
        truncating = true;
        written = 0;
        kept.clear();
        for t in &ordered {
            let t = cut(t);
            written += t.chars().count();
            kept.push(t);
        }
    }
    headers.remove(http::header::WARNING);
    for t in kept {
        if let Some(v) = warning_header(&t) {
            headers.append(http::header::WARNING, v);
        }
    }
}

/// The Status response of an error (JSON, or YAML or protobuf when that is what the client
/// takes).
pub(crate) fn error_response(e: &ApiError, output: Output) -> Response<Body> {
    let status = StatusCode::from_u16(e.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let output = output.after_transform();
    let mut resp = render(status, Payload::Value(e.to_status()), output, false);
    if e.code == 504 || e.code == 429 || e.code == 503 {
        resp.headers_mut()
            .insert(http::header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    resp
}

/// How much of a too-large body is read and discarded before the 413 is sent, and for how
/// long: a client still writing its body when the server answers and closes would otherwise
/// see a broken pipe instead of the 413 (nginx's lingering close does the same). Beyond these
/// bounds the connection is simply closed, so a hostile client cannot hold it.
const DRAIN_MAX_BYTES: u64 = 16 * 1024 * 1024;
const DRAIN_MAX_TIME: std::time::Duration = std::time::Duration::from_secs(5);

/// Reads the request body, enforcing the size limit (413, after draining what the client is
/// still sending, within bounds).
pub(crate) async fn read_body(mut body: RequestBody) -> Result<Bytes, ApiError> {
    use hyper::body::Body as _;
    let limit = MAX_BODY_BYTES as u64;
    let declared = body.size_hint().lower();
    let mut buf = bytes::BytesMut::new();
    // Too large: set once the body (declared or read) passes the limit; from then on frames
    // are discarded until the drain bounds.
    let mut too_large = (declared > limit).then(|| tokio::time::Instant::now() + DRAIN_MAX_TIME);
    if declared > DRAIN_MAX_BYTES {
        return Err(ApiError::too_large(MAX_BODY_BYTES));
    }
    let mut discarded = 0u64;
    loop {
        let next = match too_large {
            Some(deadline) => match tokio::time::timeout_at(deadline, body.frame()).await {
                Ok(next) => next,
                Err(_) => break,
            },
            None => body.frame().await,
        };
        let Some(frame) = next else { break };
        let frame = match frame {
            Ok(f) => f,
            Err(_) if too_large.is_some() => break,
            Err(e) => {
                return Err(ApiError::bad_request(format!(
                    "error reading request body: {e}"
                )))
            }
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if too_large.is_some() {
            discarded += data.len() as u64;
            if discarded > DRAIN_MAX_BYTES {
                break;
            }
        } else if (buf.len() + data.len()) as u64 > limit {
            too_large = Some(tokio::time::Instant::now() + DRAIN_MAX_TIME);
            discarded = (buf.len() + data.len()) as u64;
            buf = bytes::BytesMut::new();
        } else {
            buf.extend_from_slice(&data);
        }
    }
    if too_large.is_some() {
        return Err(ApiError::too_large(MAX_BODY_BYTES));
    }
    Ok(buf.freeze())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(h: &http::HeaderMap) -> Vec<String> {
        h.get_all(http::header::WARNING)
            .iter()
            .filter_map(warning_text)
            .collect()
    }

    #[test]
    fn warnings_are_deduplicated_and_cut_as_kube_apiserver_cuts_them() {
        let mut h = http::HeaderMap::new();
        for t in ["a \"quoted\" \\ text", "b", "a \"quoted\" \\ text"] {
            h.append(http::header::WARNING, warning_header(t).unwrap());
        }
        limit_warnings(&mut h);
        assert_eq!(texts(&h), vec!["a \"quoted\" \\ text", "b"]);

        // One enormous warning is cut to 256 characters, those before it too.
        let mut h = http::HeaderMap::new();
        h.append(
            http::header::WARNING,
            warning_header(&"x".repeat(300)).unwrap(),
        );
        h.append(
            http::header::WARNING,
            warning_header(&"y".repeat(45_000)).unwrap(),
        );
        limit_warnings(&mut h);
        let t = texts(&h);
        assert_eq!(t.len(), 2);
        assert_eq!(t[0], "x".repeat(256));
        assert_eq!(t[1], "y".repeat(256));

        // Thousands of distinct warnings: cut, and dropped past the limit again.
        let mut h = http::HeaderMap::new();
        for i in 0..5_000 {
            h.append(
                http::header::WARNING,
                warning_header(&format!("warning number {i} {}", "z".repeat(300))).unwrap(),
            );
        }
        limit_warnings(&mut h);
        let t = texts(&h);
        let total: usize = t.iter().map(|t| t.chars().count()).sum();
        assert!(
            t.len() < 30 && total <= 4096 + 256,
            "{} warnings, {total}",
            t.len()
        );
        assert!(t.iter().all(|t| t.chars().count() <= 256));
    }
}
