//! Pruning of unknown fields (upstream `schema/pruning`).
//!
//! Removes every field the schema does not specify. `x-kubernetes-preserve-unknown-fields` keeps
//! unknown fields but still prunes inside specified children; inside
//! `x-kubernetes-embedded-resource` objects `apiVersion`, `kind` and `metadata` are kept.

use crate::structural::Structural;
use serde_json::Value;
use std::fmt::Write;

/// Prunes `obj` in place and returns the removed paths, sorted (`a.b`, `array[1].b`).
///
/// With `is_resource_root` the root is treated as an embedded resource: its `apiVersion`, `kind`
/// and `metadata` are kept. Otherwise they are removed without being reported, as upstream does.
pub fn prune(obj: &mut Value, s: &Structural, is_resource_root: bool) -> Vec<String> {
    let mut p = Pruner {
        path: String::new(),
        pruned: Vec::new(),
    };
    p.prune(obj, Some(s), is_resource_root);
    p.pruned.sort();
    p.pruned
}

/// Prunes against "no schema at all": every field of every object is removed.
pub fn prune_without_schema(obj: &mut Value, is_resource_root: bool) -> Vec<String> {
    let empty = Structural::default();
    let mut p = Pruner {
        path: String::new(),
        pruned: Vec::new(),
    };
    if is_resource_root {
        p.prune(obj, Some(&empty), true);
    } else {
        p.prune(obj, None, false);
    }
    p.pruned.sort();
    p.pruned
}

struct Pruner {
    /// The current path, built incrementally and truncated on the way back up.
    path: String,
    pruned: Vec<String>,
}

fn is_meta_field(k: &str) -> bool {
    matches!(k, "apiVersion" | "kind" | "metadata")
}

impl Pruner {
    fn push_key(&mut self, k: &str) -> usize {
        let len = self.path.len();
        if !self.path.is_empty() {
            self.path.push('.');
        }
        self.path.push_str(k);
        len
    }

    fn push_index(&mut self, i: usize) -> usize {
        let len = self.path.len();
        let _ = write!(self.path, "[{i}]");
        len
    }

    fn record(&mut self, k: &str) {
        let len = self.push_key(k);
        self.pruned.push(self.path.clone());
        self.path.truncate(len);
    }

    /// `embedded` overrides the schema's `x-kubernetes-embedded-resource` (the resource root).
    fn prune(&mut self, x: &mut Value, s: Option<&Structural>, embedded_root: bool) {
        if let Some(s) = s {
            if s.extensions.x_preserve_unknown_fields {
                self.skip_prune(x, s, embedded_root);
                return;
            }
        }
        match x {
            Value::Object(m) => {
                let Some(s) = s else {
                    let keys: Vec<String> = m.keys().cloned().collect();
                    for k in keys {
                        self.record(&k);
                    }
                    m.clear();
                    return;
                };
                let embedded = embedded_root || s.extensions.x_embedded_resource;
                let additional = s.generic.additional_properties.as_ref();
                let mut remove = Vec::new();
                for (k, v) in m.iter_mut() {
                    if embedded && is_meta_field(k) {
                        continue;
                    }
                    if let Some(prop) = s.properties.get(k) {
                        let len = self.push_key(k);
                        self.prune(v, Some(prop), false);
                        self.path.truncate(len);
                    } else if let Some(a) = additional {
                        let len = self.push_key(k);
                        self.prune(v, a.structural.as_deref(), false);
                        self.path.truncate(len);
                    } else {
                        if !is_meta_field(k) || !self.path.is_empty() {
                            self.record(k);
                        }
                        remove.push(k.clone());
                    }
                }
                for k in remove {
                    m.remove(&k);
                }
            }
            Value::Array(a) => {
                let items = s.and_then(|s| s.items.as_deref());
                for (i, v) in a.iter_mut().enumerate() {
                    let len = self.push_index(i);
                    self.prune(v, items, false);
                    self.path.truncate(len);
                }
            }
            _ => {}
        }
    }

    fn skip_prune(&mut self, x: &mut Value, s: &Structural, embedded_root: bool) {
        match x {
            Value::Object(m) => {
                let embedded = embedded_root || s.extensions.x_embedded_resource;
                for (k, v) in m.iter_mut() {
                    if embedded && is_meta_field(k) {
                        continue;
                    }
                    if let Some(prop) = s.properties.get(k) {
                        let len = self.push_key(k);
                        self.prune(v, Some(prop), false);
                        self.path.truncate(len);
                    } else if let Some(a) = s.generic.additional_properties.as_ref() {
                        let len = self.push_key(k);
                        self.prune(v, a.structural.as_deref(), false);
                        self.path.truncate(len);
                    }
                }
            }
            Value::Array(a) => {
                let Some(items) = s.items.as_deref() else {
                    return;
                };
                for (i, v) in a.iter_mut().enumerate() {
                    let len = self.push_index(i);
                    self.skip_prune(v, items, false);
                    self.path.truncate(len);
                }
            }
            _ => {}
        }
    }
}
