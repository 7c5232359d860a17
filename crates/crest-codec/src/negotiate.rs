//! Content negotiation: which representation a response takes (Accept) and how a request body
//! is decoded (Content-Type), as kube-apiserver's negotiation package decides.

use crest_api::ApiError;
use crest_gofmt::json_kind;
use serde_json::Value;

/// What a response is rendered as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    Json,
    Yaml,
    /// `meta.k8s.io/v1` (or v1beta1) Table.
    Table {
        v1beta1: bool,
    },
    /// `PartialObjectMetadata` / `PartialObjectMetadataList` (as protobuf when asked so).
    Metadata {
        v1beta1: bool,
        protobuf: bool,
    },
    /// `application/vnd.kubernetes.protobuf`: built-in kinds only.
    Protobuf,
    /// `apidiscovery.k8s.io/v2` (or v2beta1) APIGroupDiscoveryList.
    AggregatedDiscovery {
        v2beta1: bool,
    },
}

impl Output {
    /// The format a transformed object (Table, PartialObjectMetadata) is written in.
    pub fn after_transform(self) -> Output {
        match self {
            Output::Metadata { protobuf: true, .. } | Output::Protobuf => Output::Protobuf,
            Output::Yaml => Output::Yaml,
            _ => Output::Json,
        }
    }

    /// Whether the body is protobuf.
    pub fn is_protobuf(self) -> bool {
        self.after_transform() == Output::Protobuf
    }
}

/// What the endpoint can produce beyond plain JSON/YAML.
#[derive(Clone, Copy, Debug, Default)]
pub struct Capabilities {
    pub table: bool,
    pub metadata: bool,
    pub aggregated_discovery: bool,
    /// The resource's objects have protobuf messages (built-in kinds, not custom resources).
    pub protobuf: bool,
}

struct MediaRange<'a> {
    essence: String,
    params: Vec<(String, &'a str)>,
    q: f32,
}

fn parse_accept(accept: &str) -> Vec<MediaRange<'_>> {
    let mut out: Vec<MediaRange> = accept
        .split(',')
        .filter_map(|part| {
            let mut it = part.split(';');
            let essence = it.next()?.trim().to_ascii_lowercase();
            if essence.is_empty() {
                return None;
            }
            let mut params = vec![];
            let mut q = 1.0;
            for p in it {
                let Some((k, v)) = p.split_once('=') else {
                    continue;
                };
                let k = k.trim().to_ascii_lowercase();
                let v = v.trim().trim_matches('"');
                if k == "q" {
                    q = v.parse().unwrap_or(1.0);
                } else {
                    params.push((k, v));
                }
            }
            Some(MediaRange { essence, params, q })
        })
        .collect();
    // Stable: equal q keeps the client's order.
    out.sort_by(|a, b| b.q.partial_cmp(&a.q).unwrap_or(std::cmp::Ordering::Equal));
    out
}

/// Picks the response representation. `None` Accept means JSON.
pub fn negotiate(accept: Option<&str>, caps: Capabilities) -> Result<Output, ApiError> {
    let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else {
        return Ok(Output::Json);
    };
    for m in parse_accept(accept) {
        if m.q <= 0.0 {
            continue;
        }
        let param = |name: &str| m.params.iter().find(|(k, _)| k == name).map(|(_, v)| *v);
        let json_like = matches!(
            m.essence.as_str(),
            "application/json" | "application/*" | "*/*"
        );
        let protobuf = m.essence == "application/vnd.kubernetes.protobuf";
        if let Some(as_) = param("as") {
            // Tables are JSON (or YAML) only; PartialObjectMetadata takes protobuf too, for
            // custom resources as well (upstream's AllowsMediaTypeTransform).
            if m.essence != "application/json" && !(protobuf && as_.starts_with("PartialObject")) {
                continue;
            }
            let (g, v) = (param("g").unwrap_or(""), param("v").unwrap_or(""));
            match (as_, g, v) {
                ("Table", "meta.k8s.io", "v1" | "v1beta1") if caps.table => {
                    return Ok(Output::Table {
                        v1beta1: v == "v1beta1",
                    })
                }
                (
                    "PartialObjectMetadata" | "PartialObjectMetadataList",
                    "meta.k8s.io",
                    "v1" | "v1beta1",
                ) if caps.metadata => {
                    return Ok(Output::Metadata {
                        v1beta1: v == "v1beta1",
                        protobuf,
                    })
                }
                ("APIGroupDiscoveryList", "apidiscovery.k8s.io", "v2" | "v2beta1")
                    if caps.aggregated_discovery =>
                {
                    return Ok(Output::AggregatedDiscovery {
                        v2beta1: v == "v2beta1",
                    })
                }
                _ => continue,
            }
        }
        if json_like {
            return Ok(Output::Json);
        }
        if protobuf && caps.protobuf {
            return Ok(Output::Protobuf);
        }
        if matches!(
            m.essence.as_str(),
            "application/yaml" | "text/yaml" | "application/x-yaml"
        ) {
            return Ok(Output::Yaml);
        }
    }
    // Every serializer the endpoint has is listed, protobuf included: custom resources have
    // one too (for PartialObjectMetadata), their plain objects are only JSON or YAML.
    Err(ApiError::not_acceptable(
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf",
    ))
}

/// Request body formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyFormat {
    Json,
    Yaml,
    MergePatch,
    JsonPatch,
    StrategicMergePatch,
    ApplyPatch,
    Protobuf,
    Other,
}

pub fn body_format(content_type: Option<&str>) -> BodyFormat {
    let essence = content_type
        .and_then(|c| c.split(';').next())
        .map(|c| c.trim().to_ascii_lowercase())
        .unwrap_or_default();
    match essence.as_str() {
        "" | "application/json" | "*/*" => BodyFormat::Json,
        "application/yaml" | "text/yaml" | "application/x-yaml" => BodyFormat::Yaml,
        "application/merge-patch+json" => BodyFormat::MergePatch,
        "application/json-patch+json" => BodyFormat::JsonPatch,
        "application/strategic-merge-patch+json" => BodyFormat::StrategicMergePatch,
        "application/apply-patch+yaml" => BodyFormat::ApplyPatch,
        "application/vnd.kubernetes.protobuf" => BodyFormat::Protobuf,
        _ => BodyFormat::Other,
    }
}

/// Decodes a JSON or YAML object body with the decoder's message on failure.
pub fn decode_object(body: &[u8], yaml: bool) -> Result<Value, ApiError> {
    if !yaml {
        return decode_json_object(body).map(|(v, _)| v);
    }
    let v: Value = crate::yaml::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error converting YAML to JSON: {e}")))?;
    object_only(v, body)
}

/// A JSON request body as [`decode_object`] decodes it, and whether some object in it repeats a
/// key (false: [`crate::duplicates::Duplicates::json`] would find nothing).
pub fn decode_json_object(body: &[u8]) -> Result<(Value, bool), ApiError> {
    let (v, repeated) = crate::duplicates::json_value_noting_duplicates(body)
        .map_err(|e| ApiError::bad_request(json_error_message(&e)))?;
    Ok((object_only(v, body)?, repeated))
}

/// A body that is not a JSON object fails as upstream's TypeMeta decode fails.
fn object_only(v: Value, body: &[u8]) -> Result<Value, ApiError> {
    if !v.is_object() {
        let snippet = String::from_utf8_lossy(&body[..body.len().min(200)]).to_string();
        return Err(ApiError::bad_request(format!(
            "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}: {snippet}",
            json_kind(&v)
        )));
    }
    Ok(v)
}

pub fn json_error_message(e: &serde_json::Error) -> String {
    format!("couldn't get version/kind; json parse error: {e}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_get_asks_for_table() {
        let caps = Capabilities {
            table: true,
            metadata: true,
            aggregated_discovery: false,
            protobuf: false,
        };
        let a = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(
            negotiate(Some(a), caps).unwrap(),
            Output::Table { v1beta1: false }
        );
        assert_eq!(
            negotiate(Some(a), Capabilities::default()).unwrap(),
            Output::Json
        );
        assert!(negotiate(Some("application/vnd.kubernetes.protobuf"), caps).is_err());
        assert_eq!(
            negotiate(
                Some("application/vnd.kubernetes.protobuf, application/json"),
                caps
            )
            .unwrap(),
            Output::Json
        );
        assert_eq!(
            negotiate(Some("application/yaml"), caps).unwrap(),
            Output::Yaml
        );
    }

    #[test]
    fn protobuf_for_built_in_kinds_and_partial_metadata() {
        let builtin = Capabilities {
            table: true,
            metadata: true,
            aggregated_discovery: false,
            protobuf: true,
        };
        let custom = Capabilities {
            protobuf: false,
            ..builtin
        };
        // client-go's typed clients configured for protobuf.
        let typed = "application/vnd.kubernetes.protobuf, */*";
        assert_eq!(negotiate(Some(typed), builtin).unwrap(), Output::Protobuf);
        assert_eq!(negotiate(Some(typed), custom).unwrap(), Output::Json);
        let e = negotiate(Some("application/vnd.kubernetes.protobuf"), custom).unwrap_err();
        assert_eq!(
            e.message,
            "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        );
        let e = negotiate(Some("text/plain"), builtin).unwrap_err();
        assert_eq!(
            e.message,
            "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        );
        // client-go's metadata client, for any resource.
        let meta = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
        for caps in [builtin, custom] {
            assert_eq!(
                negotiate(Some(meta), caps).unwrap(),
                Output::Metadata {
                    v1beta1: false,
                    protobuf: true
                }
            );
        }
        // No protobuf Tables.
        let table =
            "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1,application/json";
        assert_eq!(negotiate(Some(table), builtin).unwrap(), Output::Json);
    }
}
