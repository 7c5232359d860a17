//! Defaulting (upstream `schema/defaulting`): `default` values and non-nullable nulls.

use crate::structural::Structural;
use serde_json::Value;

/// `x == null` for a non-nullable schema.
fn is_non_nullable_null(x: &Value, s: Option<&Structural>) -> bool {
    x.is_null() && s.is_some_and(|s| !s.generic.nullable)
}

/// Applies `default` values of `s` to `obj` (upstream `Default`): missing fields and `null`s of
/// non-nullable fields get their default; a default at the root never replaces a value.
pub fn default(obj: &mut Value, s: &Structural) {
    match obj {
        Value::Object(m) => {
            for (k, prop) in &s.properties {
                let Some(d) = &prop.generic.default else {
                    continue;
                };
                match m.get_mut(k) {
                    None => {
                        m.insert(k.clone(), d.clone());
                    }
                    Some(v) if is_non_nullable_null(v, Some(prop)) => *v = d.clone(),
                    Some(_) => {}
                }
            }
            let additional = s.additional_properties_schema();
            for (k, v) in m.iter_mut() {
                if let Some(prop) = s.properties.get(k) {
                    default(v, prop);
                } else if s.generic.additional_properties.is_some() {
                    // Upstream copies the (possibly absent) default; absent means null stays.
                    if let Some(a) = additional {
                        if is_non_nullable_null(v, Some(a)) {
                            if let Some(d) = &a.generic.default {
                                *v = d.clone();
                            }
                        }
                        default(v, a);
                    }
                }
            }
        }
        Value::Array(a) => {
            let Some(items) = s.items.as_deref() else {
                return;
            };
            for v in a.iter_mut() {
                if is_non_nullable_null(v, Some(items)) {
                    if let Some(d) = &items.generic.default {
                        *v = d.clone();
                    }
                }
                default(v, items);
            }
        }
        _ => {}
    }
}

/// Removes `null` values of specified, non-nullable fields that have no default (upstream
/// `PruneNonNullableNullsWithoutDefaults`); nulls with a default are left for [`default`].
pub fn prune_non_nullable_nulls_without_defaults(obj: &mut Value, s: &Structural) {
    prune_nulls(obj, Some(s));
}

fn schema_for_field<'a>(field: &str, s: Option<&'a Structural>) -> Option<&'a Structural> {
    let s = s?;
    if let Some(p) = s.properties.get(field) {
        return Some(p);
    }
    s.additional_properties_schema()
}

fn prune_nulls(obj: &mut Value, s: Option<&Structural>) {
    match obj {
        Value::Object(m) => {
            m.retain(|k, v| {
                let schema = schema_for_field(k, s);
                let drop = v.is_null()
                    && schema.is_some_and(|s| !s.generic.nullable && s.generic.default.is_none());
                if !drop {
                    prune_nulls(v, schema);
                }
                !drop
            });
        }
        Value::Array(a) => {
            let items = s.and_then(|s| s.items.as_deref());
            for v in a.iter_mut() {
                prune_nulls(v, items);
            }
        }
        _ => {}
    }
}
