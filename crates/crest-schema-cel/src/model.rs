//! CEL types of structural schema nodes (apiextensions `schema/cel/model` and apiserver
//! `cel/common` `SchemaDeclType`): objects with properties are message types resolved through a
//! [`Types`] registry, `additionalProperties` maps, arrays lists, int-or-string `dyn`, string
//! formats bytes/timestamp/duration. Every type carries the size bounds the cost estimator uses:
//! `maxItems`/`maxProperties`/`maxLength` when set, else what fits in a request.

use std::collections::HashMap;
use std::sync::Arc;

use crest_cel::cost::{CallArg, CostEstimate, CostEstimator, SizeEstimate};
use crest_cel::decls::CallEstimate;
use crest_cel::provider::TypeProvider;
use crest_cel::types::Type;
use crest_cel::value::ListKind;
use crest_schema::Structural;
use indexmap::IndexMap;

use crate::escape::escape;

/// kube-apiserver's request body limit, which bounds every unbounded size.
pub const MAX_REQUEST_SIZE_BYTES: u64 = 3 * 1024 * 1024;
const MIN_STRING_SIZE: u64 = 2;
const MIN_BOOL_SIZE: u64 = 4;
const MIN_NUMBER_SIZE: u64 = 1;
const MAX_DURATION_SIZE_JSON: u64 = 32;
const MIN_DURATION_SIZE_JSON: u64 = 3;
const JSON_DATE_SIZE: u64 = 12;
const MAX_DATETIME_SIZE_JSON: u64 = 32;
const MIN_DATETIME_SIZE_JSON: u64 = 12;

#[derive(Debug, Clone)]
pub enum DeclKind {
    Bool,
    Int,
    Double,
    String,
    Bytes,
    /// `format: date` (true) or `date-time`.
    Timestamp {
        date_only: bool,
    },
    Duration,
    /// x-kubernetes-int-or-string.
    Dyn,
    List {
        elem: Arc<DeclType>,
        /// How `x-kubernetes-list-type` makes the list's values behave (map-list keys
        /// escaped as the element maps hold them).
        list_type: ListKind,
    },
    Map {
        elem: Arc<DeclType>,
    },
    Object {
        name: String,
        /// Escaped name (shared by every value's map key) -> field, in schema order.
        fields: IndexMap<Arc<str>, Field>,
    },
}

#[derive(Debug, Clone)]
pub struct Field {
    /// The property's name in JSON.
    pub json_name: String,
    pub ty: Arc<DeclType>,
}

#[derive(Debug, Clone)]
pub struct DeclType {
    pub kind: DeclKind,
    /// Largest number of elements (items, properties, bytes of a string).
    pub max_elements: u64,
    /// Smallest JSON serialization of a value of this type.
    pub min_serialized_size: u64,
}

impl DeclType {
    fn simple(kind: DeclKind, min: u64, max: u64) -> DeclType {
        DeclType {
            kind,
            max_elements: max,
            min_serialized_size: min,
        }
    }

    /// The CEL type values of this type have.
    pub fn cel_type(&self) -> Type {
        match &self.kind {
            DeclKind::Bool => Type::Bool,
            DeclKind::Int => Type::Int,
            DeclKind::Double => Type::Double,
            DeclKind::String => Type::String,
            DeclKind::Bytes => Type::Bytes,
            DeclKind::Timestamp { .. } => Type::Timestamp,
            DeclKind::Duration => Type::Duration,
            DeclKind::Dyn => Type::Dyn,
            DeclKind::List { elem, .. } => Type::list(elem.cel_type()),
            DeclKind::Map { elem } => Type::map(Type::String, elem.cel_type()),
            DeclKind::Object { name, .. } => Type::Object(name.clone()),
        }
    }

    pub fn field(&self, escaped: &str) -> Option<&Field> {
        match &self.kind {
            DeclKind::Object { fields, .. } => fields.get(escaped),
            _ => None,
        }
    }

    pub fn elem(&self) -> Option<&Arc<DeclType>> {
        match &self.kind {
            DeclKind::List { elem, .. } | DeclKind::Map { elem } => Some(elem),
            _ => None,
        }
    }
}

/// The message types of one compilation: object type name -> its declaration.
#[derive(Debug, Default)]
pub struct Types {
    objects: HashMap<String, Arc<DeclType>>,
}

impl TypeProvider for Types {
    fn has_type(&self, name: &str) -> bool {
        self.objects.contains_key(name)
    }

    fn field_type(&self, name: &str, field: &str) -> Option<Type> {
        self.objects
            .get(name)?
            .field(field)
            .map(|f| f.ty.cel_type())
    }
}

/// The type of a node with rules and the message types it compiles with: `decl`, from the
/// parent's type, with the parent's types; without one, the node typed from its own schema.
pub(crate) fn node_type(
    s: &Structural,
    decl: Option<Arc<DeclType>>,
    types: &Arc<Types>,
) -> (Option<Arc<DeclType>>, Arc<Types>) {
    match decl {
        Some(d) => (Some(d), types.clone()),
        None => {
            let mut t = Types::default();
            let d = t.declare(s, s.extensions.x_embedded_resource, "selfType");
            (d, Arc::new(t))
        }
    }
}

impl Types {
    /// The declaration of `s` (None when it has no CEL type: no `type` and not int-or-string),
    /// registering its object types under names rooted at `name`. `resource_root` adds
    /// `apiVersion`, `kind` and `metadata.name`/`generateName`, the only accessible metadata.
    pub fn declare(
        &mut self,
        s: &Structural,
        resource_root: bool,
        name: &str,
    ) -> Option<Arc<DeclType>> {
        self.declare_at(s, resource_root, name, 0)
    }

    fn declare_at(
        &mut self,
        s: &Structural,
        resource_root: bool,
        name: &str,
        depth: usize,
    ) -> Option<Arc<DeclType>> {
        // Structural schemas are bounded in depth already; this only guards the stack.
        if depth > 300 {
            return None;
        }
        let vv = s.value_validation.as_deref();
        if s.extensions.x_int_or_string {
            return Some(Arc::new(DeclType::simple(
                DeclKind::Dyn,
                1,
                MAX_REQUEST_SIZE_BYTES - 2,
            )));
        }
        let t = match s.generic.type_.as_str() {
            "array" => {
                let items = s.items.as_deref()?;
                let elem = self.declare_at(
                    items,
                    items.extensions.x_embedded_resource,
                    &format!("{name}.@idx"),
                    depth + 1,
                )?;
                let max = match vv.and_then(|v| v.max_items) {
                    Some(n) => n.max(0) as u64,
                    None => (MAX_REQUEST_SIZE_BYTES - 2) / (elem.min_serialized_size + 1),
                };
                let list_type = match s.list_type() {
                    Some("set") => ListKind::Set,
                    Some("map") => ListKind::Map(
                        s.extensions
                            .x_list_map_keys
                            .iter()
                            .map(|k| escape(k).unwrap_or_else(|| k.clone()).into())
                            .collect(),
                    ),
                    _ => ListKind::Ordered,
                };
                DeclType::simple(DeclKind::List { elem, list_type }, 2, max)
            }
            "object" => {
                if let Some(ap) = s.additional_properties_schema() {
                    let elem = self.declare_at(
                        ap,
                        ap.extensions.x_embedded_resource,
                        &format!("{name}.@elem"),
                        depth + 1,
                    )?;
                    let max = match vv.and_then(|v| v.max_properties) {
                        Some(n) => n.max(0) as u64,
                        None => (MAX_REQUEST_SIZE_BYTES - 2) / (elem.min_serialized_size + 6),
                    };
                    DeclType::simple(DeclKind::Map { elem }, 2, max)
                } else {
                    self.object(s, resource_root, name, depth)
                }
            }
            "string" => string_decl(s),
            "boolean" => DeclType::simple(DeclKind::Bool, MIN_BOOL_SIZE, 0),
            "number" => DeclType::simple(DeclKind::Double, MIN_NUMBER_SIZE, 0),
            "integer" => DeclType::simple(DeclKind::Int, MIN_NUMBER_SIZE, 0),
            _ => return None,
        };
        let t = Arc::new(t);
        if let DeclKind::Object { name, .. } = &t.kind {
            self.objects.insert(name.clone(), t.clone());
        }
        Some(t)
    }

    fn object(
        &mut self,
        s: &Structural,
        resource_root: bool,
        name: &str,
        depth: usize,
    ) -> DeclType {
        let required: &[String] = s
            .value_validation
            .as_deref()
            .map(|v| v.required.as_slice())
            .unwrap_or_default();
        let mut fields = IndexMap::new();
        // An object serializes at least as `{}` plus its required properties without defaults.
        let mut min = 2u64;
        for (prop, ps) in &s.properties {
            if resource_root && matches!(prop.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            let escaped = escape(prop);
            let Some(ft) = self.declare_at(
                ps,
                ps.extensions.x_embedded_resource,
                &format!("{name}.{}", escaped.as_deref().unwrap_or(prop)),
                depth + 1,
            ) else {
                continue;
            };
            // An inaccessible property still counts in the minimum size when required.
            if required.contains(prop) && ps.generic.default.is_none() {
                min += prop.len() as u64 + ft.min_serialized_size + 4;
            }
            if let Some(escaped) = escaped {
                fields.insert(
                    escaped.into(),
                    Field {
                        json_name: prop.clone(),
                        ty: ft,
                    },
                );
            }
        }
        if resource_root {
            let string = || {
                Arc::new(DeclType::simple(
                    DeclKind::String,
                    MIN_STRING_SIZE,
                    MAX_REQUEST_SIZE_BYTES - 2,
                ))
            };
            let meta_name = format!("{name}.metadata");
            let mut meta_fields = IndexMap::new();
            for f in ["name", "generateName"] {
                meta_fields.insert(
                    f.into(),
                    Field {
                        json_name: f.to_string(),
                        ty: string(),
                    },
                );
            }
            let meta = Arc::new(DeclType::simple(
                DeclKind::Object {
                    name: meta_name.clone(),
                    fields: meta_fields,
                },
                2,
                0,
            ));
            self.objects.insert(meta_name, meta.clone());
            for (f, ty) in [
                ("kind", string()),
                ("apiVersion", string()),
                ("metadata", meta),
            ] {
                fields.insert(
                    f.into(),
                    Field {
                        json_name: f.to_string(),
                        ty,
                    },
                );
            }
        }
        DeclType::simple(
            DeclKind::Object {
                name: name.to_string(),
                fields,
            },
            min,
            0,
        )
    }
}

fn string_decl(s: &Structural) -> DeclType {
    let vv = s.value_validation.as_deref();
    let max_length = vv.and_then(|v| v.max_length).map(|n| n.max(0) as u64);
    let format = vv.map(|v| v.format.as_str()).unwrap_or_default();
    match format {
        "byte" => {
            let max = max_length.unwrap_or(MAX_REQUEST_SIZE_BYTES - 2);
            return DeclType::simple(DeclKind::Bytes, MIN_STRING_SIZE, max);
        }
        "duration" => {
            let max = max_length.map_or(MAX_DURATION_SIZE_JSON, |n| n * 4);
            return DeclType::simple(DeclKind::Duration, MIN_DURATION_SIZE_JSON, max);
        }
        "date" => {
            let max = max_length.map_or(JSON_DATE_SIZE, |n| n * 4);
            return DeclType::simple(DeclKind::Timestamp { date_only: true }, JSON_DATE_SIZE, max);
        }
        "date-time" => {
            let max = max_length.map_or(MAX_DATETIME_SIZE_JSON, |n| n * 4);
            return DeclType::simple(
                DeclKind::Timestamp { date_only: false },
                MIN_DATETIME_SIZE_JSON,
                max,
            );
        }
        _ => {}
    }
    // maxLength counts code points; a code point is up to 4 bytes.
    let max = match max_length {
        Some(n) => n.saturating_mul(4),
        None => match vv.and_then(|v| v.enum_.as_ref()) {
            Some(values) if !values.is_empty() => values
                .iter()
                .filter_map(|v| v.as_str())
                .map(|s| s.len() as u64)
                .max()
                .unwrap_or(0),
            _ => MAX_REQUEST_SIZE_BYTES - 2,
        },
    };
    DeclType::simple(DeclKind::String, MIN_STRING_SIZE, max)
}

/// Sizes for the static cost estimator: a path from a variable through fields and
/// `@items`/`@values`/`@keys` resolves to that node's `max_elements`.
pub struct SizeEstimator {
    pub root: Arc<DeclType>,
}

impl CostEstimator for SizeEstimator {
    fn estimate_size(&self, path: &[String], _t: &Type) -> Option<SizeEstimate> {
        // As upstream's estimator, the variable is not looked at: every path starts at the
        // node (so comprehension accumulators get the node's own bound).
        let (_var, rest) = path.split_first()?;
        let mut cur: &DeclType = &self.root;
        for step in rest {
            cur = match step.as_str() {
                "@items" | "@values" => cur.elem()?,
                "@keys" => {
                    return match cur.kind {
                        DeclKind::Map { .. } => Some(SizeEstimate {
                            min: 0,
                            max: MAX_REQUEST_SIZE_BYTES - 2,
                        }),
                        _ => None,
                    }
                }
                f => &cur.field(f)?.ty,
            };
        }
        Some(SizeEstimate {
            min: 0,
            max: cur.max_elements,
        })
    }

    /// Kubernetes' library estimator first (it needs element sizes), then the size-based
    /// costs below.
    fn estimate_call_args(
        &self,
        function: &str,
        ids: &[String],
        args: &[CallArg<'_>],
    ) -> Option<CallEstimate> {
        crate::library::cost::estimate(function, ids, args).or_else(|| {
            let sizes: Vec<SizeEstimate> = args.iter().map(|a| a.size).collect();
            self.estimate_call(function, ids, &sizes)
        })
    }

    /// cel-go's call costs for the functions whose cost depends on sizes (its checker's
    /// `functionCost` and Kubernetes' library estimator); others keep the engine's default.
    fn estimate_call(
        &self,
        function: &str,
        ids: &[String],
        sizes: &[SizeEstimate],
    ) -> Option<CallEstimate> {
        let of = |kinds: &[&str]| ids.iter().any(|id| kinds.iter().any(|k| id.contains(k)));
        let traversal = |s: SizeEstimate| CostEstimate {
            min: tenth(s.min),
            max: tenth(s.max),
        };
        let cost_only = |cost| {
            Some(CallEstimate {
                cost,
                result_size: None,
            })
        };
        match (function, sizes) {
            ("_==_" | "_!=_", [l, r]) => cost_only(traversal(smallest(*l, *r))),
            ("_<_" | "_<=_" | "_>_" | "_>=_", [l, r]) if of(&["string", "bytes"]) => {
                cost_only(traversal(smallest(*l, *r)))
            }
            ("_+_", [l, r]) if of(&["string", "bytes", "list"]) => {
                let size = SizeEstimate {
                    min: l.min.saturating_add(r.min),
                    max: l.max.saturating_add(r.max),
                };
                Some(CallEstimate {
                    cost: traversal(size),
                    result_size: Some(size),
                })
            }
            ("contains", [s, sub]) => {
                let (a, b) = (traversal(*s), traversal(*sub));
                cost_only(CostEstimate {
                    min: a.min.saturating_mul(b.min),
                    max: a.max.saturating_mul(b.max),
                })
            }
            ("startsWith" | "endsWith", [_, prefix]) => cost_only(traversal(*prefix)),
            ("matches", [s, re]) => {
                let a = traversal(SizeEstimate {
                    min: s.min.saturating_add(1),
                    max: s.max.saturating_add(1),
                });
                let b = CostEstimate {
                    min: quarter(re.min),
                    max: quarter(re.max),
                };
                cost_only(CostEstimate {
                    min: a.min.saturating_mul(b.min),
                    max: a.max.saturating_mul(b.max),
                })
            }
            ("@in", [_, container]) if of(&["list"]) => cost_only(CostEstimate {
                min: container.min,
                max: container.max,
            }),
            ("lowerAscii" | "upperAscii" | "trim" | "substring", [s, ..]) => Some(CallEstimate {
                cost: traversal(*s),
                result_size: Some(*s),
            }),
            ("string", [s]) if of(&["bytes"]) => Some(CallEstimate {
                cost: traversal(*s),
                result_size: Some(*s),
            }),
            // A number, bool, timestamp or duration prints in a few dozen bytes (so
            // `"max " + string(self.max)` stays cheap); string(string) stays unbounded.
            ("string", [_]) if of(&["int", "uint", "double", "bool", "Timestamp", "Duration"]) => {
                Some(CallEstimate {
                    cost: CostEstimate { min: 1, max: 1 },
                    result_size: Some(SizeEstimate { min: 1, max: 40 }),
                })
            }
            ("bytes", [s]) if of(&["string"]) => Some(CallEstimate {
                cost: traversal(*s),
                result_size: Some(*s),
            }),
            _ => None,
        }
    }
}

/// cel-go's traversal cost factor (0.1, rounded up).
fn tenth(n: u64) -> u64 {
    n / 10 + u64::from(n % 10 != 0)
}

/// cel-go's regex length cost factor (0.25, rounded up).
fn quarter(n: u64) -> u64 {
    n / 4 + u64::from(n % 4 != 0)
}

/// Equality traverses the smaller operand; comparing anything non-empty costs at least 1.
fn smallest(l: SizeEstimate, r: SizeEstimate) -> SizeEstimate {
    let max = l.max.min(r.max);
    SizeEstimate {
        min: u64::from(max > 0),
        max,
    }
}

/// How many times a node of this minimum size can occur in one request (upstream
/// `maxCardinality`), for rules under unbounded lists and maps.
pub fn max_cardinality(min_serialized_size: u64) -> u64 {
    MAX_REQUEST_SIZE_BYTES / (min_serialized_size + 1)
}
