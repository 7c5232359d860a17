//! The CEL part of CRD schema validation (upstream `ValidateCustomResourceDefinitionOpenAPISchema`
//! with its `CELSchemaContext`): every rule of every node is compiled against the node's type,
//! `messageExpression`s too, their static cost multiplied by how often the node can occur
//! checked against the per-expression and per-CRD limits, and `oldSelf` refused where old
//! values cannot be correlated.

use std::sync::Arc;

use crest_api::{FieldError, FieldPath};
use crest_schema::Structural;

use crate::compile::{ErrorKind, NodeEnv, Rule};
use crate::escape::escape;
use crate::model::{node_type, DeclType, Types};
use crate::validator::map_is_correlatable;

/// Largest static cost of one expression (upstream `StaticEstimatedCostLimit`).
pub const STATIC_ESTIMATED_COST_LIMIT: u64 = 10_000_000;
/// Largest total static cost of a CRD's expressions (`StaticEstimatedCRDCostLimit`).
pub const STATIC_ESTIMATED_CRD_COST_LIMIT: u64 = 100_000_000;

/// The error detail for a cost over `limit`, as Kubernetes words it.
pub fn cost_error_message(cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_string()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!(
        "CEL rule exceeded budget by {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are used)"
    )
}

/// Checks the rules of a CRD's structurally valid `openAPIV3Schema` reported at `root`.
/// `schema_errors` are the errors the other checks found: as upstream, rules of a node with an
/// error at or below it are not compiled (their types may not make sense).
pub fn validate_schema_rules(
    schema: &Structural,
    root: &FieldPath,
    schema_errors: &[FieldError],
) -> Vec<FieldError> {
    let mut w = Walk {
        errs: vec![],
        error_paths: schema_errors.iter().map(|e| e.field.to_string()).collect(),
        total: 0,
        most_expensive: vec![],
    };
    let mut types = Types::default();
    let decl = types.declare(schema, true, "selfType");
    w.node(schema, root, decl, &Arc::new(types), Some(1), None, 0);
    if w.total > STATIC_ESTIMATED_CRD_COST_LIMIT {
        for (path, _) in &w.most_expensive {
            w.errs.push(FieldError::forbidden(
                path,
                "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
            ));
        }
        w.errs.push(FieldError::forbidden(
            root,
            cost_error_message(w.total, STATIC_ESTIMATED_CRD_COST_LIMIT),
        ));
    }
    w.errs
}

struct Walk {
    errs: Vec<FieldError>,
    error_paths: Vec<String>,
    total: u64,
    /// The (at most four) costliest expressions, for the per-CRD limit's errors.
    most_expensive: Vec<(FieldPath, u64)>,
}

impl Walk {
    fn has_schema_error_under(&self, path: &FieldPath) -> bool {
        let p = path.as_str();
        self.error_paths.iter().any(|e| {
            e.strip_prefix(p)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
        })
    }

    fn observe(&mut self, path: FieldPath, cost: u64) {
        self.total = self.total.saturating_add(cost);
        if cost < STATIC_ESTIMATED_COST_LIMIT / 100 {
            return;
        }
        self.most_expensive.push((path, cost));
        self.most_expensive.sort_by_key(|e| std::cmp::Reverse(e.1));
        self.most_expensive.truncate(4);
    }

    #[allow(clippy::too_many_arguments)]
    fn node(
        &mut self,
        s: &Structural,
        path: &FieldPath,
        decl: Option<Arc<DeclType>>,
        types: &Arc<Types>,
        cardinality: Option<u64>,
        uncorrelatable: Option<&FieldPath>,
        depth: usize,
    ) {
        if depth > 300 || !crate::validator::has_rules(s) {
            return;
        }
        let (decl, types) = node_type(s, decl, types);
        let types = &types;
        let rules = Rule::list(s);
        if !rules.is_empty() && !self.has_schema_error_under(path) {
            self.rules(
                s,
                &rules,
                path,
                decl.as_ref(),
                types,
                cardinality,
                uncorrelatable,
            );
        }
        let vv = s.value_validation.as_deref();
        let unc_props = uncorrelatable.cloned().or_else(|| {
            (!map_is_correlatable(s.extensions.x_map_type.as_deref())).then(|| path.clone())
        });
        for (name, ps) in &s.properties {
            // No type from the parent (a name CEL cannot access): typed from its own schema.
            let child = escape(name)
                .and_then(|e| decl.as_ref()?.field(&e))
                .map(|f| f.ty.clone());
            self.node(
                ps,
                &path.child("properties").key(name),
                child,
                types,
                cardinality,
                unc_props.as_ref(),
                depth + 1,
            );
        }
        let elem = decl.as_ref().and_then(|d| d.elem().cloned());
        if let Some(items) = s.items.as_deref() {
            let unc = uncorrelatable
                .cloned()
                .or_else(|| (s.list_type() != Some("map")).then(|| path.clone()));
            let card = times(cardinality, vv.and_then(|v| v.max_items));
            self.node(
                items,
                &path.child("items"),
                elem.clone(),
                types,
                card,
                unc.as_ref(),
                depth + 1,
            );
        }
        if let Some(ap) = s.additional_properties_schema() {
            let card = times(cardinality, vv.and_then(|v| v.max_properties));
            self.node(
                ap,
                &path.child("additionalProperties"),
                elem,
                types,
                card,
                uncorrelatable,
                depth + 1,
            );
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn rules(
        &mut self,
        s: &Structural,
        rules: &[Rule],
        path: &FieldPath,
        decl: Option<&Arc<DeclType>>,
        types: &Arc<Types>,
        cardinality: Option<u64>,
        uncorrelatable: Option<&FieldPath>,
    ) {
        let xv = path.child("x-kubernetes-validations");
        let Some(decl) = decl else {
            self.errs.push(FieldError::internal(
                &xv,
                "internal error: failed to retrieve type information for x-kubernetes-validations",
            ));
            return;
        };
        let env = NodeEnv::new(types.clone(), decl.clone());
        for (i, rule) in rules.iter().enumerate() {
            let cr = env.compile(rule, s);
            let rp = xv.index(i);
            let card = cardinality.unwrap_or(cr.max_cardinality);
            let cost = if cr.max_cost == 0 {
                0
            } else {
                cr.max_cost.saturating_mul(card)
            };
            if cost > STATIC_ESTIMATED_COST_LIMIT {
                self.errs.push(FieldError::forbidden(
                    &rp.child("rule"),
                    cost_error_message(cost, STATIC_ESTIMATED_COST_LIMIT),
                ));
            }
            self.observe(rp.child("rule"), cost);
            if let Some(e) = &cr.error {
                self.errs.push(match e.kind {
                    ErrorKind::Required => FieldError::required(&rp.child("rule"), &e.detail),
                    _ => FieldError::invalid_repr(&rp.child("rule"), &rule.go_repr(), &e.detail),
                });
            }
            if let Some(e) = &cr.message_expression_error {
                self.errs.push(FieldError::invalid_repr(
                    &rp.child("messageExpression"),
                    &rule.go_repr(),
                    &e.detail,
                ));
            } else if cr.message_expression.is_some() {
                let mc = cr.message_expression_max_cost;
                if mc > STATIC_ESTIMATED_COST_LIMIT {
                    self.errs.push(FieldError::forbidden(
                        &rp.child("messageExpression"),
                        cost_error_message(mc, STATIC_ESTIMATED_COST_LIMIT),
                    ));
                }
                self.observe(rp.child("messageExpression"), mc);
            }
            if cr.uses_old_self {
                if let Some(unc) = uncorrelatable {
                    self.errs.push(FieldError::invalid(
                        &rp.child("rule"),
                        rule.rule.as_str(),
                        format!(
                            "oldSelf cannot be used on the uncorrelatable portion of the schema within {unc}"
                        ),
                    ));
                }
            } else if let Some(b) = rule.optional_old_self {
                self.errs.push(FieldError::invalid(
                    &rp.child("optionalOldSelf"),
                    b,
                    "may not be set if oldSelf is not used in rule",
                ));
            }
        }
    }
}

fn times(c: Option<u64>, by: Option<i64>) -> Option<u64> {
    Some(c?.saturating_mul(by?.max(0) as u64))
}
