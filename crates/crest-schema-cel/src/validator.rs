//! Evaluating `x-kubernetes-validations` on custom resource writes (apiextensions `schema/cel`
//! `Validator`): a tree parallel to the structural schema holding only the nodes with rules
//! below them, compiled once per CRD version. Every rule runs at its node for every value
//! (list items, map values), with `oldSelf` correlated through object properties, map keys and
//! the keys of `x-kubernetes-list-type: map` lists; transition rules run only when there is an
//! old value (unless `optionalOldSelf`); failures of rules without `oldSelf` are ratcheted when
//! the value did not change: reported as warnings (upstream's `warning.AddWarning`), not errors.
//! A request has one cost budget; running out stops all rules.

use std::sync::Arc;

use crest_api::{FieldError, FieldPath};
use crest_cel::eval::Activation;
use crest_cel::value::Value;
use crest_schema::correlation::{map_key_text, OldItems};
use crest_schema::Structural;
use serde_json::Value as Json;

use crate::compile::{CompiledRule, NodeEnv, Rule, PER_CALL_LIMIT};
use crate::escape::escape;
use crate::model::{node_type, DeclType, Types};
use crate::values::to_cel;

/// The runtime cost budget of one request (apiserver `RuntimeCELCostBudget`).
pub const RUNTIME_COST_BUDGET: i64 = 10_000_000;
/// Longest message a `messageExpression` may produce.
const MAX_MESSAGE_EXPRESSION_BYTES: usize = 5 * 1024;

/// The compiled rules of one CRD version's schema.
pub struct Validator {
    root: Node,
}

struct Node {
    /// The schema's `type`, reported as the invalid value.
    schema_type: String,
    decl: Option<Arc<DeclType>>,
    rules: Vec<CompiledRule>,
    properties: Vec<(String, Node)>,
    items: Option<Box<Node>>,
    additional: Option<Box<Node>>,
    /// `x-kubernetes-map-type` lets old properties correlate with new ones.
    map_correlatable: bool,
    list_type: Option<String>,
    list_map_keys: Vec<String>,
}

/// Whether a map type correlates old and new values (granular, atomic or unset).
pub(crate) fn map_is_correlatable(map_type: Option<&str>) -> bool {
    matches!(map_type, None | Some("granular") | Some("atomic"))
}

pub(crate) fn has_rules(s: &Structural) -> bool {
    has_rules_at(s, 0)
}

fn has_rules_at(s: &Structural, depth: usize) -> bool {
    if depth > 300 {
        return false;
    }
    matches!(&s.extensions.x_validations, Some(Json::Array(a)) if !a.is_empty())
        || s.items
            .as_deref()
            .is_some_and(|i| has_rules_at(i, depth + 1))
        || s.additional_properties_schema()
            .is_some_and(|a| has_rules_at(a, depth + 1))
        || s.properties.values().any(|p| has_rules_at(p, depth + 1))
}

impl Validator {
    /// Compiles every rule of a CRD version's schema; None when it has none.
    pub fn new(schema: &Structural) -> Option<Validator> {
        Validator::for_schema(schema, true)
    }

    /// Compiles the rules of `schema` and below (upstream `NewValidator(s, isResourceRoot)`):
    /// `self` has `apiVersion`, `kind` and `metadata` when `resource_root`. None when there
    /// are no rules.
    pub fn for_schema(schema: &Structural, resource_root: bool) -> Option<Validator> {
        if !has_rules(schema) {
            return None;
        }
        let mut types = Types::default();
        let decl = types.declare(schema, resource_root, "selfType");
        let root = build(schema, decl, &Arc::new(types), 0)?;
        Some(Validator { root })
    }

    /// Upstream's `Validate(ctx, path, s, new, old, budget)` without ratcheting options: the
    /// value at `path`, every failure an error, the cost taken from `budget` (negative once it
    /// ran out, when an error says so).
    pub fn validate_at(
        &self,
        path: &FieldPath,
        new: &Json,
        old: Option<&Json>,
        budget: &mut i64,
    ) -> Vec<FieldError> {
        let mut out = Outcome::default();
        self.root
            .validate(path, new, old, Ratchet::default(), budget, &mut out);
        out.errors
    }

    /// Validates an object (create) or an update (`old`), with a fresh cost budget.
    pub fn validate(&self, new: &Json, old: Option<&Json>) -> Vec<FieldError> {
        self.evaluate(new, old).errors
    }

    /// Validates as [`Validator::validate`], also returning the failures that were ratcheted.
    pub fn evaluate(&self, new: &Json, old: Option<&Json>) -> Outcome {
        let mut out = Outcome::default();
        let mut budget = RUNTIME_COST_BUDGET;
        let ratchet = match old {
            Some(o) => Ratchet {
                current: Some((new, o)),
                parent: None,
            },
            None => Ratchet::default(),
        };
        self.root
            .validate(&FieldPath::root(), new, old, ratchet, &mut budget, &mut out);
        out
    }
}

/// What the rules found in one request.
#[derive(Debug, Default)]
pub struct Outcome {
    pub errors: Vec<FieldError>,
    /// Ratcheted failures, as upstream words the warnings (`field.Error.Error()`).
    pub warnings: Vec<String>,
}

impl Outcome {
    /// A failure: an error, or a warning when ratcheted.
    fn fail(&mut self, e: FieldError, ratcheted: bool) {
        if ratcheted {
            self.warnings.push(e.to_string());
        } else {
            self.errors.push(e);
        }
    }
}

fn build(
    s: &Structural,
    decl: Option<Arc<DeclType>>,
    types: &Arc<Types>,
    depth: usize,
) -> Option<Node> {
    if depth > 300 || !has_rules(s) {
        return None;
    }
    let (decl, types) = node_type(s, decl, types);
    let types = &types;
    let rules = Rule::list(s);
    let compiled = match &decl {
        Some(d) if !rules.is_empty() => {
            let env = NodeEnv::new(types.clone(), d.clone());
            rules.iter().map(|r| env.compile(r, s)).collect()
        }
        _ => vec![],
    };
    let mut properties = vec![];
    for (name, ps) in &s.properties {
        let child = match escape(name) {
            Some(e) => match decl.as_ref().and_then(|d| d.field(&e)) {
                Some(f) => build(ps, Some(f.ty.clone()), types, depth + 1),
                // Fields without a CEL type are not validated.
                None => None,
            },
            // Not accessible from the parent: typed from its own schema.
            None => build(ps, None, types, depth + 1),
        };
        if let Some(c) = child {
            properties.push((name.clone(), c));
        }
    }
    let elem = decl.as_ref().and_then(|d| d.elem().cloned());
    let items = s
        .items
        .as_deref()
        .and_then(|i| build(i, elem.clone(), types, depth + 1))
        .map(Box::new);
    let additional = s
        .additional_properties_schema()
        .and_then(|a| build(a, elem, types, depth + 1))
        .map(Box::new);
    Some(Node {
        schema_type: s.generic.type_.clone(),
        decl,
        rules: compiled,
        properties,
        items,
        additional,
        map_correlatable: map_is_correlatable(s.extensions.x_map_type.as_deref()),
        list_type: s.extensions.x_list_type.clone(),
        list_map_keys: s.extensions.x_list_map_keys.clone(),
    })
}

/// Where the value being validated correlates with the old object (upstream
/// `ratchetingOptions`): the current node when it correlates, else the nearest ancestor that
/// did. An error is ratcheted when that node is unchanged.
#[derive(Clone, Copy, Default)]
struct Ratchet<'a> {
    current: Option<(&'a Json, &'a Json)>,
    parent: Option<(&'a Json, &'a Json)>,
}

impl<'a> Ratchet<'a> {
    fn should_ratchet(&self) -> bool {
        match (self.current, self.parent) {
            (Some((n, o)), _) => n == o,
            (None, Some((n, o))) => n == o,
            _ => false,
        }
    }

    fn key(self, field: &str) -> Ratchet<'a> {
        let Some((n, o)) = self.current else {
            return self;
        };
        if self.parent.is_none() && (field == "apiVersion" || field == "kind") {
            return Ratchet::default();
        }
        let current = match (n.get(field), o.get(field)) {
            (Some(nv), Some(ov)) if n.is_object() && o.is_object() => Some((nv, ov)),
            _ => None,
        };
        Ratchet {
            current,
            parent: self.current,
        }
    }

    /// The ratchets of a list's items (`index`), the old list indexed once for all of them.
    fn items(self, node: &Node) -> RatchetItems<'a> {
        let lists = self
            .current
            .and_then(|(n, o)| Some((n.as_array()?, o.as_array()?)));
        let old = lists.and_then(|(_, old)| match node.list_type.as_deref() {
            Some("map") => map_list_items(old, &node.list_map_keys),
            Some("set") => {
                let by_value: ItemKey<'a> = Box::new(|x: &Json| Some(x.to_string()));
                Some(OldItems::new(old, by_value))
            }
            _ => None,
        });
        RatchetItems {
            parent: self,
            new: lists.map(|(new, _)| new.as_slice()),
            old,
        }
    }
}

/// An item's identity in its list (see [`OldItems`]).
type ItemKey<'a> = Box<dyn Fn(&Json) -> Option<String> + 'a>;

/// The ratchets of one list's items.
struct RatchetItems<'a> {
    parent: Ratchet<'a>,
    new: Option<&'a [Json]>,
    /// The old items a new one correlates with: map lists by key, sets by value.
    old: Option<OldItems<'a, ItemKey<'a>>>,
}

impl<'a> RatchetItems<'a> {
    fn index(&self, i: usize) -> Ratchet<'a> {
        if self.parent.current.is_none() {
            return self.parent;
        }
        let current = match (self.new.and_then(|n| n.get(i)), &self.old) {
            (Some(item), Some(old)) => old.get(item).map(|ov| (item, ov)),
            _ => None,
        };
        Ratchet {
            current,
            parent: self.parent.current,
        }
    }
}

/// The items of a map-list indexed by their key values (none without keys): the item with the
/// same key values as a new item, in one lookup.
fn map_list_items<'a>(list: &'a [Json], keys: &[String]) -> Option<OldItems<'a, ItemKey<'a>>> {
    if keys.is_empty() {
        return None;
    }
    let keys = keys.to_vec();
    let by_key: ItemKey<'a> =
        Box::new(move |x: &Json| Some(map_key_text(keys.iter().map(|k| x.get(k)))));
    Some(OldItems::new(list, by_key))
}

struct Act {
    self_: Value,
    old: Option<Value>,
}

impl Activation for Act {
    fn resolve(&self, name: &str) -> Option<Value> {
        match name {
            "self" => Some(self.self_.clone()),
            "oldSelf" => self.old.clone(),
            _ => None,
        }
    }
}

fn rule_error_string(r: &Rule) -> &str {
    if !r.message.is_empty() {
        r.message.trim()
    } else {
        r.rule.trim()
    }
}

fn rule_message_or_default(r: &Rule) -> String {
    if r.message.is_empty() {
        format!("failed rule: {}", rule_error_string(r))
    } else {
        r.message.trim().to_string()
    }
}

const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";

impl Node {
    fn validate<'a>(
        &self,
        path: &FieldPath,
        obj: &'a Json,
        old: Option<&'a Json>,
        ratchet: Ratchet<'a>,
        budget: &mut i64,
        out: &mut Outcome,
    ) {
        if obj.is_null() {
            return;
        }
        let old = old.filter(|o| !o.is_null());
        self.validate_expressions(path, obj, old, ratchet, budget, out);
        if *budget < 0 {
            return;
        }
        match obj {
            Json::Array(items) => {
                let Some(node) = &self.items else {
                    return;
                };
                // Only map lists correlate items with old items for oldSelf.
                let old_items = match (self.list_type.as_deref(), old) {
                    (Some("map"), Some(Json::Array(o))) => map_list_items(o, &self.list_map_keys),
                    _ => None,
                };
                let ratchets = ratchet.items(self);
                for (i, item) in items.iter().enumerate() {
                    let old_item = old_items.as_ref().and_then(|o| o.get(item));
                    node.validate(
                        &path.index(i),
                        item,
                        old_item,
                        ratchets.index(i),
                        budget,
                        out,
                    );
                    if *budget < 0 {
                        return;
                    }
                }
            }
            Json::Object(m) => {
                let old_map = if self.map_correlatable {
                    old.and_then(Json::as_object)
                } else {
                    None
                };
                // Map values first, then the properties with rules.
                let values = self.additional.iter().flat_map(|node| {
                    m.iter()
                        .map(move |(k, v)| (node.as_ref(), path.key(k), k, v))
                });
                let properties = self
                    .properties
                    .iter()
                    .filter_map(|(k, node)| Some((node, path.child(k), k, m.get(k)?)));
                for (node, child_path, k, v) in values.chain(properties) {
                    node.validate(
                        &child_path,
                        v,
                        old_map.and_then(|o| o.get(k)),
                        ratchet.key(k),
                        budget,
                        out,
                    );
                    if *budget < 0 {
                        return;
                    }
                }
            }
            _ => {}
        }
    }

    fn validate_expressions(
        &self,
        path: &FieldPath,
        obj: &Json,
        old: Option<&Json>,
        ratchet: Ratchet<'_>,
        budget: &mut i64,
        out: &mut Outcome,
    ) {
        if self.rules.is_empty() {
            return;
        }
        let Some(decl) = &self.decl else {
            return;
        };
        let ty = self.schema_type.as_str();
        if *budget <= 0 {
            out.errors
                .push(FieldError::invalid(path, ty, OUT_OF_BUDGET));
            *budget = -1;
            return;
        }
        let self_val = to_cel(obj, decl);
        let old_val = old.map(|o| to_cel(o, decl));
        let plain = Act {
            self_: self_val.clone(),
            old: old_val.clone(),
        };
        let optional = Act {
            self_: self_val,
            old: Some(Value::Optional(old_val.map(Arc::new))),
        };
        for compiled in &self.rules {
            let rule = &compiled.rule;
            if let Some(e) = &compiled.error {
                out.errors.push(FieldError::invalid(
                    path,
                    ty,
                    format!("rule compile error: {e}"),
                ));
                continue;
            }
            let Some(program) = &compiled.program else {
                continue;
            };
            let optional_old_self = rule.optional_old_self == Some(true);
            if compiled.uses_old_self && old.is_none() && !optional_old_self {
                continue;
            }
            let act = if optional_old_self { &optional } else { &plain };
            let ev = program.eval_with_limit(act, Some(PER_CALL_LIMIT));
            if ev.cost > i64::MAX as u64 || ev.cost as i64 > *budget {
                out.errors
                    .push(FieldError::invalid(path, ty, OUT_OF_BUDGET));
                *budget = -1;
                return;
            }
            *budget -= ev.cost as i64;
            let passed = match ev.result {
                Ok(Value::Bool(true)) => true,
                Ok(_) => false,
                Err(e) => {
                    let msg = e.to_string();
                    if msg.starts_with("no such overload") {
                        out.errors.push(FieldError::invalid(path, ty, format!(
                            "'{msg}': call arguments did not match a supported operator, function or macro signature for rule: {}",
                            rule_error_string(rule)
                        )));
                    } else if e.cancelled {
                        out.errors.push(FieldError::invalid(path, ty, format!(
                            "'{msg}': no further validation rules will be run due to call cost exceeds limit for rule: {}",
                            rule_error_string(rule)
                        )));
                        *budget = -1;
                        return;
                    } else {
                        out.errors.push(FieldError::invalid(
                            path,
                            ty,
                            format!("{msg} evaluating rule: {}", rule_error_string(rule)),
                        ));
                    }
                    continue;
                }
            };
            if passed {
                continue;
            }
            let err_path = match &compiled.normalized_field_path {
                Some(p) if !p.is_empty() => path.child(p),
                _ => path.clone(),
            };
            let ratcheted = !compiled.uses_old_self && ratchet.should_ratchet();
            let mut detail = None;
            if let Some(msg_prog) = &compiled.message_expression {
                match eval_message(msg_prog, &rule.message_expression, act, budget) {
                    Ok(m) => detail = Some(m),
                    Err(MessageError::Fatal(m)) => {
                        out.fail(FieldError::invalid(&err_path, ty, m), ratcheted);
                        *budget = -1;
                        return;
                    }
                    // Logged upstream; the static message is used instead.
                    Err(MessageError::Fallback) => {}
                }
            }
            let detail = detail.unwrap_or_else(|| rule_message_or_default(rule));
            let e = match rule.reason.as_deref() {
                Some("FieldValueForbidden") => FieldError::forbidden(&err_path, detail),
                Some("FieldValueRequired") => FieldError::required(&err_path, detail),
                Some("FieldValueDuplicate") => FieldError::duplicate(&err_path, ty),
                _ => FieldError::invalid(&err_path, ty, detail),
            };
            out.fail(e, ratcheted);
        }
    }
}

enum MessageError {
    /// Evaluation must stop (out of budget); the error is reported.
    Fatal(String),
    /// The message expression failed; the rule's message is used.
    Fallback,
}

fn eval_message(
    prog: &crest_cel::eval::Program,
    src: &str,
    act: &Act,
    budget: &mut i64,
) -> Result<String, MessageError> {
    let ev = prog.eval_with_limit(act, Some(PER_CALL_LIMIT));
    if ev.cost > i64::MAX as u64 || ev.cost as i64 > *budget {
        return Err(MessageError::Fatal(
            "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run".into(),
        ));
    }
    match ev.result {
        Err(e) if e.cancelled => Err(MessageError::Fatal(format!(
            "no further validation rules will be run due to call cost exceeds limit for messageExpression: {}",
            crest_gofmt::go_quote(src)
        ))),
        Err(_) => {
            *budget -= ev.cost as i64;
            Err(MessageError::Fallback)
        }
        Ok(Value::String(s)) => {
            *budget -= ev.cost as i64;
            let t = s.trim();
            if t.is_empty() || t.len() > MAX_MESSAGE_EXPRESSION_BYTES || t.contains('\n') {
                return Err(MessageError::Fallback);
            }
            Ok(t.to_string())
        }
        Ok(_) => {
            *budget -= ev.cost as i64;
            Err(MessageError::Fallback)
        }
    }
}
