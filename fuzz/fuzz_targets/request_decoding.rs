//! The decoders of untrusted request bodies and query strings must answer every input (an
//! error is fine) without panicking, and within time linear in its size: Kubernetes protobuf for
//! the built-in kinds and DeleteOptions, YAML (the pre-check, the decoder and the duplicate-key
//! scan that strict field validation runs), label and field selectors, and Go regular
//! expressions (CRD `pattern`s and CEL `matches`). The first byte picks the decoder; the rest is
//! its input.

#![no_main]

use libfuzzer_sys::fuzz_target;

/// Built-in kinds Crest decodes from protobuf, by (group, version, kind).
const KINDS: &[(&str, &str, &str)] = &[
    ("", "v1", "ConfigMap"),
    ("", "v1", "Secret"),
    ("", "v1", "Service"),
    ("", "v1", "Event"),
    ("", "v1", "Namespace"),
    ("", "v1", "Endpoints"),
    ("coordination.k8s.io", "v1", "Lease"),
    ("rbac.authorization.k8s.io", "v1", "ClusterRole"),
    ("events.k8s.io", "v1", "Event"),
];

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    match which % 6 {
        0 => {
            let (group, version, kind) = KINDS[usize::from(which / 6) % KINDS.len()];
            let _ = crest_codec::protobuf::decode_object(rest, group, version, kind);
            let _ = crest_codec::protobuf::decode_stored(rest);
        }
        1 => {
            let _ = crest_codec::protobuf::decode_delete_options(rest);
            let _ = crest_codec::protobuf::summarize(rest);
        }
        2 => {
            let _ = crest_codec::yaml::from_slice(rest);
            let _ = crest_codec::duplicates::duplicate_fields_yaml(rest);
        }
        3 => {
            let s = String::from_utf8_lossy(rest);
            let (labels, fields) = s.split_once('\u{0}').unwrap_or((&s, ""));
            let selectable = ["spec.color".to_string()];
            let resource = crest_selectors::FieldLabels::CustomResource {
                namespaced: true,
                selectable: &selectable,
            };
            if let Ok(filter) = crest_selectors::ListFilter::parse(labels, fields, resource) {
                let obj = serde_json::json!({
                    "metadata": {"name": "a", "namespace": "b", "labels": {"x": "y", "a.b/c": "1"}},
                    "spec": {"color": "red"},
                });
                let _ = filter.matches(&obj);
            }
        }
        4 => {
            if let Ok(pattern) = std::str::from_utf8(rest) {
                if let Ok(re) = crest_goregexp::compile(pattern) {
                    let _ = re.is_match("abc-123 xyz");
                }
            }
        }
        _ => {
            let _ = crest_codec::duplicates::duplicate_fields_json(rest);
            let _ = crest_codec::duplicates::json_patch_strict_errors(rest);
        }
    }
});
