//! (schema, object, old object) through the request pipeline of a custom resource, as the
//! server runs it: `CrSchema` (crest-apiextensions' `customresource`) compiles the schema (its
//! CEL rules included), decodes the request object (metadata as ObjectMeta, prune, drop
//! non-nullable nulls, coerce embedded metadata, default) and the stored old object, then
//! validates a create, a ratcheted update and a `/status` update with the functions the server's
//! strategy calls (`customresource::validate`, `validate_status`), a scale subresource included.
//! Below the root, the steps the pipeline does not run at the root are exercised on their own.

#![no_main]

use crest_api::FieldPath;
use crest_apiextensions::customresource::{self, scale::ScalePaths, CrSchema};
use crest_schema::{objectmeta, pruning, Structural};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let parts = crest_fuzz::split(data, 3);
    let schema = crest_fuzz::value(parts[0]);
    let Some(cr) = CrSchema::compile(Some(&schema)) else {
        return;
    };
    let raw = crest_fuzz::value(parts[1]);
    let old_raw = crest_fuzz::value(parts[2]);

    let scale = ScalePaths::from_version(&serde_json::json!({"subresources": {"scale": {
        "specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.replicas",
        "labelSelectorPath": ".status.selector",
    }}}));
    let scale = scale.as_ref();
    let mut warnings = vec![];

    // The object as it arrives, before any decoding step.
    let _ = customresource::validate(Some(&cr), scale, &raw, None, &mut warnings);

    let mut obj = raw.clone();
    if cr.decode_request(&mut obj).is_err() {
        return;
    }
    let mut old = old_raw;
    cr.decode_stored(&mut old);

    // As the registry validates a create, an update, a /status update.
    let _ = customresource::validate(Some(&cr), scale, &obj, None, &mut warnings);
    let _ = customresource::validate(Some(&cr), scale, &obj, Some(&old), &mut warnings);
    let _ = customresource::validate(Some(&cr), None, &obj, Some(&raw), &mut warnings);
    let _ = customresource::validate_status(Some(&cr), scale, &obj, &old, &mut warnings);

    // Below the root (no resource-root special cases).
    let Ok(s) = Structural::from_json(&schema) else {
        return;
    };
    let root = FieldPath::root();
    let mut sub = raw;
    let _ = pruning::prune(&mut sub, &s, false);
    let _ = objectmeta::coerce(&root, &mut sub, &s, false, true);
    let _ = objectmeta::validate(&root, &sub, &s, false);
});
