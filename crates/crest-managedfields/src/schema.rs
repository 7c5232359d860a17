//! The type description merges follow, compiled once per resource version (the server caches
//! it): structured-merge-diff's `schema` (atoms: scalar, list, map/struct, with element
//! relationships) built as kube-openapi's `schemaconv` builds it from OpenAPI v3
//! (`ToSchemaFromOpenAPI`), for a CustomResourceDefinition's structural schema or a built-in
//! definition with its `$ref`s.
//!
//! Rules (as upstream): `type: object` with `properties` is a struct (unknown fields refused
//! unless `x-kubernetes-preserve-unknown-fields`, whose descendants then deduce their types),
//! `additionalProperties` a map, an object with neither a free-form (deduced) map;
//! `x-kubernetes-map-type: atomic` makes a map or struct atomic (also on a property that refers
//! to a definition). Lists: `x-kubernetes-list-type` atomic / set / map with
//! `x-kubernetes-list-map-keys`; without it, `x-kubernetes-patch-strategy: merge` makes a set,
//! or with `x-kubernetes-patch-merge-key` a map keyed by it; otherwise atomic. A schema without
//! `type` (int-or-string, preserve-unknown-fields) takes the form of its value. Strings with a
//! format, Quantity and RawExtension are untyped scalars. Deduced parts (unknown fields kept):
//! maps granular, lists atomic. A custom resource gets `apiVersion`, `kind` and `metadata` as
//! ObjectMeta (so do embedded resources), as apiextensions' OpenAPI builder adds them.

use serde_json::{Map, Value};
use std::collections::HashMap;

pub(crate) type TypeId = usize;

/// `__untyped_atomic_`: any value, as a whole.
pub(crate) const UNTYPED_ATOMIC: TypeId = 0;
/// `__untyped_deduced_`: any value; maps granular, lists atomic.
pub(crate) const DEDUCED: TypeId = 1;

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const RAW_EXTENSION: &str = "io.k8s.apimachinery.pkg.runtime.RawExtension";

/// What a scalar must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScalarKind {
    String,
    Numeric,
    Boolean,
    Untyped,
}

/// How the items of a list are told apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ListKind {
    Atomic,
    Set,
    Map(Vec<String>),
}

#[derive(Clone, Debug)]
pub(crate) struct ListType {
    pub(crate) elem: TypeId,
    pub(crate) kind: ListKind,
}

#[derive(Clone, Debug)]
pub(crate) struct Field {
    pub(crate) ty: TypeId,
    pub(crate) default: Option<Value>,
}

#[derive(Clone, Debug)]
pub(crate) struct MapType {
    /// Struct fields, sorted by name.
    pub(crate) fields: Vec<(String, Field)>,
    /// The type of other keys; `None`: other keys are not declared.
    pub(crate) elem: Option<TypeId>,
    pub(crate) atomic: bool,
}

impl MapType {
    pub(crate) fn field(&self, name: &str) -> Option<&Field> {
        self.fields
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
            .ok()
            .map(|i| &self.fields[i].1)
    }

    /// A lookup for keys asked in ascending order (as a JSON object's keys come): one pass
    /// over the sorted fields instead of a search per key.
    pub(crate) fn cursor(&self) -> FieldCursor<'_> {
        FieldCursor { map: self, i: 0 }
    }
}

/// See [`MapType::cursor`].
pub(crate) struct FieldCursor<'s> {
    map: &'s MapType,
    i: usize,
}

impl<'s> FieldCursor<'s> {
    /// The field named `key` (keys asked in ascending order; a smaller key than the previous
    /// one falls back to a search).
    pub(crate) fn field(&mut self, key: &str) -> Option<&'s Field> {
        let fields = &self.map.fields;
        if let Some((prev, _)) = self.i.checked_sub(1).and_then(|p| fields.get(p)) {
            if key < prev.as_str() {
                return self.map.field(key);
            }
        }
        while let Some((name, f)) = fields.get(self.i) {
            match name.as_str().cmp(key) {
                std::cmp::Ordering::Less => self.i += 1,
                std::cmp::Ordering::Equal => {
                    self.i += 1;
                    return Some(f);
                }
                std::cmp::Ordering::Greater => return None,
            }
        }
        None
    }

    /// The type of the value under `key`, `None` when not declared.
    pub(crate) fn type_of(&mut self, key: &str) -> Option<TypeId> {
        self.field(key).map(|f| f.ty).or(self.map.elem)
    }
}

/// One type: the forms a value of it may take.
#[derive(Clone, Debug, Default)]
pub(crate) struct Atom {
    pub(crate) scalar: Option<ScalarKind>,
    pub(crate) list: Option<ListType>,
    pub(crate) map: Option<MapType>,
}

/// A compiled schema: the types of an object and of everything in it.
#[derive(Clone, Debug)]
pub struct Schema {
    pub(crate) nodes: Vec<Atom>,
    pub(crate) root: TypeId,
}

impl Schema {
    /// A schema deducing every type from the values (maps granular, lists atomic), as
    /// upstream's `DeducedParseableType`, used for custom resources without a schema.
    pub fn deduced() -> Schema {
        Schema {
            nodes: base_nodes(),
            root: DEDUCED,
        }
    }

    /// The schema of a custom resource version from its CRD's structural schema
    /// (`openAPIV3Schema`; `None` when the version has none: deduced), with `apiVersion`,
    /// `kind` and `metadata` (ObjectMeta, from `defs`, the published built-in definitions by
    /// name) added as apiextensions' OpenAPI builder adds them.
    pub fn from_crd(schema: Option<&Value>, defs: &Map<String, Value>) -> Result<Schema, String> {
        Schema::from_crd_with(schema, defs, false)
    }

    /// [`Schema::from_crd`] for a CRD whose `spec.preserveUnknownFields` is
    /// `preserve_unknown_fields`: when true (CRDs from v1beta1), fields the schema does not name
    /// are deduced rather than refused, as upstream's `NewTypeConverter(models,
    /// preserveUnknownFields)`.
    pub fn from_crd_with(
        schema: Option<&Value>,
        defs: &Map<String, Value>,
        preserve_unknown_fields: bool,
    ) -> Result<Schema, String> {
        let Some(schema) = schema else {
            return Ok(Schema::deduced());
        };
        let mut c = Compiler::new(defs);
        let root = c.compile_resource(schema, preserve_unknown_fields, 0);
        c.finish(root)
    }

    /// The schema of a built-in kind by its definition name in `defs` (e.g.
    /// `io.k8s.api.core.v1.ConfigMap`), the published OpenAPI v3 definitions by name.
    pub fn from_definition(name: &str, defs: &Map<String, Value>) -> Result<Schema, String> {
        if !defs.contains_key(name) {
            return Err(format!("no definition named {name:?}"));
        }
        let mut c = Compiler::new(defs);
        let root = c.named(name, 0);
        c.finish(root)
    }

    pub(crate) fn atom(&self, ty: TypeId) -> &Atom {
        &self.nodes[ty]
    }

    pub(crate) fn root(&self) -> TypeId {
        self.root
    }
}

fn base_nodes() -> Vec<Atom> {
    vec![
        Atom {
            scalar: Some(ScalarKind::Untyped),
            list: Some(ListType {
                elem: UNTYPED_ATOMIC,
                kind: ListKind::Atomic,
            }),
            map: Some(MapType {
                fields: Vec::new(),
                elem: Some(UNTYPED_ATOMIC),
                atomic: true,
            }),
        },
        Atom {
            scalar: Some(ScalarKind::Untyped),
            list: Some(ListType {
                elem: UNTYPED_ATOMIC,
                kind: ListKind::Atomic,
            }),
            map: Some(MapType {
                fields: Vec::new(),
                elem: Some(DEDUCED),
                atomic: false,
            }),
        },
    ]
}

const MAX_DEPTH: usize = 256;

struct Compiler<'a> {
    defs: &'a Map<String, Value>,
    nodes: Vec<Atom>,
    named: HashMap<String, TypeId>,
    errors: Vec<String>,
}

fn ext_bool(s: &Value, name: &str) -> bool {
    s.get(name).and_then(Value::as_bool) == Some(true)
}

fn ref_name(s: &Value) -> Option<&str> {
    let r = s
        .get("$ref")
        .or_else(|| match s.get("allOf").and_then(Value::as_array) {
            Some(all) if all.len() == 1 => all[0].get("$ref"),
            _ => None,
        })
        .and_then(Value::as_str)?;
    Some(r.rsplit('/').next().unwrap_or(r))
}

impl<'a> Compiler<'a> {
    fn new(defs: &'a Map<String, Value>) -> Self {
        Compiler {
            defs,
            nodes: base_nodes(),
            named: HashMap::new(),
            errors: Vec::new(),
        }
    }

    fn finish(self, root: TypeId) -> Result<Schema, String> {
        if self.errors.is_empty() {
            Ok(Schema {
                nodes: self.nodes,
                root,
            })
        } else {
            Err(self.errors.join("\n"))
        }
    }

    fn push(&mut self, a: Atom) -> TypeId {
        self.nodes.push(a);
        self.nodes.len() - 1
    }

    fn map_relationship(&mut self, s: &Value) -> Option<bool> {
        match s.get("x-kubernetes-map-type").and_then(Value::as_str) {
            None => None,
            Some("atomic") => Some(true),
            Some("granular") => Some(false),
            Some(other) => {
                self.errors.push(format!("unknown map type {other}"));
                None
            }
        }
    }

    fn named(&mut self, name: &str, depth: usize) -> TypeId {
        if name == QUANTITY || name == RAW_EXTENSION {
            return self.push(Atom {
                scalar: Some(ScalarKind::Untyped),
                ..Atom::default()
            });
        }
        if let Some(&id) = self.named.get(name) {
            return id;
        }
        let Some(def) = self.defs.get(name) else {
            return DEDUCED;
        };
        let id = self.push(Atom::default());
        self.named.insert(name.to_string(), id);
        let atom = self.parse(def, false, depth + 1);
        self.nodes[id] = atom;
        id
    }

    /// A property's type (upstream's `makeOpenAPIRef`).
    fn type_ref(&mut self, s: &Value, preserve: bool, depth: usize) -> TypeId {
        if depth > MAX_DEPTH {
            return DEDUCED;
        }
        if let Some(name) = ref_name(s) {
            let id = self.named(name, depth);
            return match self.map_relationship(s) {
                Some(atomic) if self.nodes[id].map.is_some() => {
                    let mut a = self.nodes[id].clone();
                    if let Some(m) = a.map.as_mut() {
                        m.atomic = atomic;
                    }
                    self.push(a)
                }
                _ => id,
            };
        }
        let atom = self.parse(s, preserve, depth + 1);
        self.push(atom)
    }

    /// A custom resource (root or embedded): TypeMeta and ObjectMeta added.
    fn compile_resource(&mut self, s: &Value, preserve: bool, depth: usize) -> TypeId {
        let mut with_meta = s.clone();
        if let Some(obj) = with_meta.as_object_mut() {
            obj.entry("type").or_insert_with(|| Value::from("object"));
            let props = obj
                .entry("properties")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(props) = props.as_object_mut() {
                props.insert("apiVersion".into(), serde_json::json!({"type": "string"}));
                props.insert("kind".into(), serde_json::json!({"type": "string"}));
                // Without the published ObjectMeta: a free-form (deduced) map.
                let meta = if self.defs.contains_key(OBJECT_META) {
                    serde_json::json!({"$ref": format!("#/components/schemas/{OBJECT_META}")})
                } else {
                    serde_json::json!({"type": "object"})
                };
                props.insert("metadata".into(), meta);
            }
        }
        let atom = self.parse(&with_meta, preserve, depth + 1);
        self.push(atom)
    }

    fn parse(&mut self, s: &Value, preserve: bool, depth: usize) -> Atom {
        let preserve = preserve || ext_bool(s, "x-kubernetes-preserve-unknown-fields");
        if depth > MAX_DEPTH {
            return self.nodes[DEDUCED].clone();
        }
        match s.get("type").and_then(Value::as_str).unwrap_or("") {
            "" => Atom {
                scalar: Some(ScalarKind::Untyped),
                list: Some(self.parse_list(s, preserve, depth)),
                map: Some(self.parse_object(s, preserve, depth)),
            },
            "object" => Atom {
                map: Some(self.parse_object(s, preserve, depth)),
                ..Atom::default()
            },
            "array" => Atom {
                list: Some(self.parse_list(s, preserve, depth)),
                ..Atom::default()
            },
            "integer" | "number" => scalar(ScalarKind::Numeric),
            "boolean" => scalar(ScalarKind::Boolean),
            "string" => match s.get("format").and_then(Value::as_str).unwrap_or("") {
                "" | "byte" => scalar(ScalarKind::String),
                _ => scalar(ScalarKind::Untyped),
            },
            other => {
                self.errors.push(format!("unrecognized type: '{other}'"));
                scalar(ScalarKind::Untyped)
            }
        }
    }

    fn parse_object(&mut self, s: &Value, preserve: bool, depth: usize) -> MapType {
        let props = s.get("properties").and_then(Value::as_object);
        let mut fields = Vec::new();
        if let Some(props) = props {
            for (name, p) in props {
                let ty = if ext_bool(p, "x-kubernetes-embedded-resource") && ref_name(p).is_none() {
                    self.compile_resource(p, preserve, depth + 1)
                } else {
                    self.type_ref(p, preserve, depth + 1)
                };
                fields.push((
                    name.clone(),
                    Field {
                        ty,
                        default: p.get("default").cloned(),
                    },
                ));
            }
        }
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        let no_props = props.is_none_or(|p| p.is_empty());
        let elem = match s.get("additionalProperties") {
            None if preserve || no_props => Some(DEDUCED),
            None => None,
            Some(Value::Bool(true)) => Some(DEDUCED),
            Some(Value::Bool(false)) => None,
            Some(ap @ Value::Object(_)) => Some(self.type_ref(ap, preserve, depth + 1)),
            Some(_) => None,
        };
        MapType {
            fields,
            elem,
            atomic: self.map_relationship(s).unwrap_or(false),
        }
    }

    fn parse_list(&mut self, s: &Value, preserve: bool, depth: usize) -> ListType {
        let kind = match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
            Some("atomic") => ListKind::Atomic,
            Some("set") => ListKind::Set,
            Some("map") => {
                let keys = s
                    .get("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect::<Vec<_>>()
                    })
                    .unwrap_or_default();
                if keys.is_empty() {
                    ListKind::Set
                } else {
                    ListKind::Map(keys)
                }
            }
            Some(other) => {
                self.errors.push(format!("unknown list type {other}"));
                ListKind::Atomic
            }
            None => match s.get("x-kubernetes-patch-strategy").and_then(Value::as_str) {
                Some("merge") | Some("merge,retainKeys") => {
                    match s
                        .get("x-kubernetes-patch-merge-key")
                        .and_then(Value::as_str)
                    {
                        Some(k) => ListKind::Map(vec![k.to_string()]),
                        None => ListKind::Set,
                    }
                }
                Some("retainKeys") | None => ListKind::Atomic,
                Some(other) => {
                    self.errors.push(format!("unknown patch strategy {other}"));
                    ListKind::Atomic
                }
            },
        };
        let elem = match s.get("items") {
            Some(items @ Value::Object(_)) => {
                if ext_bool(items, "x-kubernetes-embedded-resource") && ref_name(items).is_none() {
                    self.compile_resource(items, preserve, depth + 1)
                } else {
                    self.type_ref(items, preserve, depth + 1)
                }
            }
            Some(_) => {
                self.errors
                    .push("structural schema arrays must have exactly one member subtype".into());
                DEDUCED
            }
            None => UNTYPED_ATOMIC,
        };
        ListType { elem, kind }
    }
}

fn scalar(k: ScalarKind) -> Atom {
    Atom {
        scalar: Some(k),
        ..Atom::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn list_and_map_types() {
        let crd = json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["port", "protocol"],
                            "items": {"type": "object", "properties": {
                                "port": {"type": "integer"},
                                "protocol": {"type": "string", "default": "TCP"}}}},
                        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                        "args": {"type": "array", "items": {"type": "string"}},
                        "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                            "additionalProperties": {"type": "string"}},
                        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "port": {"x-kubernetes-int-or-string": true},
                    }
                }
            }
        });
        let s = Schema::from_crd(Some(&crd), &Map::new()).unwrap();
        let root = s.atom(s.root()).map.as_ref().unwrap();
        assert!(root.field("apiVersion").is_some() && root.field("kind").is_some());
        let spec = s.atom(root.field("spec").unwrap().ty).map.as_ref().unwrap();
        assert!(spec.elem.is_none());
        let ports = s
            .atom(spec.field("ports").unwrap().ty)
            .list
            .as_ref()
            .unwrap();
        assert_eq!(
            ports.kind,
            ListKind::Map(vec!["port".into(), "protocol".into()])
        );
        let item = s.atom(ports.elem).map.as_ref().unwrap();
        assert_eq!(item.field("protocol").unwrap().default, Some(json!("TCP")));
        let tags = s
            .atom(spec.field("tags").unwrap().ty)
            .list
            .as_ref()
            .unwrap();
        assert_eq!(tags.kind, ListKind::Set);
        let args = s
            .atom(spec.field("args").unwrap().ty)
            .list
            .as_ref()
            .unwrap();
        assert_eq!(args.kind, ListKind::Atomic);
        assert!(
            s.atom(spec.field("selector").unwrap().ty)
                .map
                .as_ref()
                .unwrap()
                .atomic
        );
        let free = s.atom(spec.field("free").unwrap().ty).map.as_ref().unwrap();
        assert_eq!(free.elem, Some(DEDUCED));
        let port = s.atom(spec.field("port").unwrap().ty);
        assert!(port.scalar.is_some() && port.list.is_some() && port.map.is_some());
    }

    #[test]
    fn patch_strategy_makes_associative_lists() {
        let defs: Map<String, Value> = serde_json::from_value(json!({
            "T": {"type": "object", "properties": {
                "a": {"type": "array", "items": {"type": "string"}, "x-kubernetes-patch-strategy": "merge"},
                "b": {"type": "array", "items": {"$ref": "#/components/schemas/I"},
                      "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name"},
                "c": {"type": "array", "items": {"type": "string"}, "x-kubernetes-patch-strategy": "retainKeys"},
                "r": {"allOf": [{"$ref": "#/components/schemas/I"}], "x-kubernetes-map-type": "atomic"},
                "t": {"$ref": "#/components/schemas/T"},
            }},
            "I": {"type": "object", "properties": {"name": {"type": "string"}}},
        }))
        .unwrap();
        let s = Schema::from_definition("T", &defs).unwrap();
        let t = s.atom(s.root()).map.as_ref().unwrap();
        let kind = |n: &str| {
            s.atom(t.field(n).unwrap().ty)
                .list
                .as_ref()
                .unwrap()
                .kind
                .clone()
        };
        assert_eq!(kind("a"), ListKind::Set);
        assert_eq!(kind("b"), ListKind::Map(vec!["name".into()]));
        assert_eq!(kind("c"), ListKind::Atomic);
        assert!(
            s.atom(t.field("r").unwrap().ty)
                .map
                .as_ref()
                .unwrap()
                .atomic
        );
        // Recursive definitions refer to themselves.
        assert_eq!(t.field("t").unwrap().ty, s.root());
    }
}
