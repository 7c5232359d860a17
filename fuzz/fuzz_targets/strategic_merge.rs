//! Strategic merge patch (crest-strategicpatch) over the published definitions of built-in
//! kinds: any original and patch (JSON, or byte programs, see `src/lib.rs`) must give a result or
//! an error, never a panic, and patching a result with an empty patch changes nothing.

#![no_main]

use libfuzzer_sys::fuzz_target;

const DEFINITIONS: &[&str] = &[
    "io.k8s.api.core.v1.Service",
    "io.k8s.api.core.v1.ConfigMap",
    "io.k8s.api.core.v1.Endpoints",
    "io.k8s.api.rbac.v1.ClusterRole",
    "io.k8s.api.coordination.v1.Lease",
];

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let parts = crest_fuzz::split(rest, 2);
    let (original, patch) = (crest_fuzz::value(parts[0]), crest_fuzz::value(parts[1]));
    let Some(meta) =
        crest_openapi::patch_meta(DEFINITIONS[usize::from(which) % DEFINITIONS.len()])
    else {
        return;
    };
    if let Ok(out) = crest_strategicpatch::apply(&original, &patch, &meta) {
        if out.is_object() {
            let again = crest_strategicpatch::apply(&out, &serde_json::json!({}), &meta);
            assert_eq!(again.ok().as_ref(), Some(&out), "an empty patch changed the object");
        }
    }
});
