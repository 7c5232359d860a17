//! (schema, object, old object) through the request pipeline of a custom resource: compile the
//! schema, prune, drop non-nullable nulls, coerce embedded metadata, default, validate (create
//! and ratcheted update), list sets and maps, embedded ObjectMeta.

#![no_main]

use crest_api::field::FieldPath;
use crest_schema::{defaulting, listtype, objectmeta, pruning, validation, Structural};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn decode(obj: &mut Value, s: &Structural, drop_invalid: bool) {
    let root = FieldPath::root();
    let _ = pruning::prune(obj, s, true);
    defaulting::prune_non_nullable_nulls_without_defaults(obj, s);
    let _ = objectmeta::coerce(&root, obj, s, true, drop_invalid);
    defaulting::default(obj, s);
}

fuzz_target!(|data: &[u8]| {
    let parts = crest_fuzz::split(data, 3);
    let schema = crest_fuzz::value(parts[0]);
    let Ok(s) = Structural::from_json(&schema) else {
        return;
    };
    let root = FieldPath::root();
    let raw = crest_fuzz::value(parts[1]);
    let old_raw = crest_fuzz::value(parts[2]);

    // The object as it arrives, before any decoding step.
    let _ = validation::validate(&raw, &s, &root);
    let _ = listtype::validate_list_sets_and_maps(&root, &s, &raw);
    let _ = objectmeta::validate(&root, &raw, &s, true);

    let mut obj = raw.clone();
    decode(&mut obj, &s, false);
    let mut old = old_raw;
    decode(&mut old, &s, true);

    let _ = validation::validate(&obj, &s, &root);
    let _ = validation::validate_update(&obj, &old, &s, &root);
    let _ = validation::validate_update(&obj, &raw, &s, &root);
    let _ = listtype::validate_list_sets_and_maps(&root, &s, &obj);
    let _ = objectmeta::validate(&root, &obj, &s, true);

    // Below the root (no resource-root special cases).
    let mut sub = raw;
    let _ = pruning::prune(&mut sub, &s, false);
    let _ = objectmeta::coerce(&root, &mut sub, &s, false, true);
    let _ = objectmeta::validate(&root, &sub, &s, false);
});
