//! (schema, object, old object) through the request pipeline of a custom resource, as the
//! server runs it: `CrSchema` (crest-apiextensions' `customresource`) compiles the schema (its
//! CEL rules included), decodes the request object (metadata as ObjectMeta, prune, drop
//! non-nullable nulls, coerce embedded metadata, default) and the stored old object, then
//! validates a create, a ratcheted update and a `/status` update. Below the root, the steps the
//! pipeline does not run at the root are exercised on their own.

#![no_main]

use crest_api::field::FieldPath;
use crest_apiextensions::customresource::CrSchema;
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

    // The object as it arrives, before any decoding step.
    let _ = cr.validate(&raw);

    let mut obj = raw.clone();
    if cr.decode_request(&mut obj).is_err() {
        return;
    }
    let mut old = old_raw;
    cr.decode_stored(&mut old);

    let _ = cr.validate(&obj);
    let _ = cr.validate_update(&obj, &old);
    let _ = cr.validate_update(&obj, &raw);
    let _ = cr.validate_list_types_ratcheted(&obj, &old);
    if let Some(status) = obj.get("status") {
        let _ = cr.validate_status_update(status, old.get("status"));
    }

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
