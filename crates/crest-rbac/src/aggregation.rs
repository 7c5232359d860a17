//! ClusterRole aggregation: pkg/controller/clusterroleaggregation (`syncClusterRole`): the rules
//! of a ClusterRole with an `aggregationRule` are the rules of every other ClusterRole its
//! `clusterRoleSelectors` select, selector by selector, roles in name order, each rule once
//! (semantic equality, where an empty list equals a missing one).

use crate::rule::{rules_of, PolicyRule};
use serde_json::{Map, Value};

/// A `metav1.LabelSelector` as `LabelSelectorAsSelector` reads it; `None` when it is invalid
/// (an unknown operator, values where none may be or none where some must be).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LabelSelector {
    reqs: Vec<(String, Op, Vec<String>)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

impl LabelSelector {
    /// Parses a selector object; `None` if it is not a valid selector.
    pub(crate) fn parse(v: &Value) -> Option<Self> {
        let mut reqs = vec![];
        match v.get("matchLabels") {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) => {
                for (k, val) in m {
                    reqs.push((k.clone(), Op::In, vec![val.as_str()?.to_string()]));
                }
            }
            Some(_) => return None,
        }
        match v.get("matchExpressions") {
            None | Some(Value::Null) => {}
            Some(Value::Array(exprs)) => {
                for e in exprs {
                    let key = e.get("key").and_then(Value::as_str)?.to_string();
                    let values: Vec<String> = match e.get("values") {
                        None | Some(Value::Null) => vec![],
                        Some(Value::Array(a)) => a
                            .iter()
                            .map(|s| s.as_str().map(str::to_string))
                            .collect::<Option<_>>()?,
                        Some(_) => return None,
                    };
                    let op = match e.get("operator").and_then(Value::as_str)? {
                        "In" => Op::In,
                        "NotIn" => Op::NotIn,
                        "Exists" => Op::Exists,
                        "DoesNotExist" => Op::DoesNotExist,
                        _ => return None,
                    };
                    let needs_values = matches!(op, Op::In | Op::NotIn);
                    if needs_values == values.is_empty() {
                        return None;
                    }
                    reqs.push((key, op, values));
                }
            }
            Some(_) => return None,
        }
        Some(LabelSelector { reqs })
    }

    /// Whether these labels are selected (an empty selector selects everything).
    pub(crate) fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        self.reqs.iter().all(|(k, op, values)| {
            let v = labels.and_then(|l| l.get(k)).and_then(Value::as_str);
            match op {
                Op::In => v.is_some_and(|v| values.iter().any(|x| x == v)),
                Op::NotIn => !v.is_some_and(|v| values.iter().any(|x| x == v)),
                Op::Exists => v.is_some(),
                Op::DoesNotExist => v.is_none(),
            }
        })
    }
}

fn name(obj: &Value) -> &str {
    obj.get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn labels(obj: &Value) -> Option<&Map<String, Value>> {
    obj.get("metadata")
        .and_then(|m| m.get("labels"))
        .and_then(Value::as_object)
}

/// The rules one aggregated ClusterRole should have, or `None` if it has no aggregationRule or
/// a selector is invalid (the controller then leaves it alone).
pub(crate) fn aggregated_rules(role: &Value, all: &[Value]) -> Option<Vec<PolicyRule>> {
    let selectors = role
        .get("aggregationRule")?
        .get("clusterRoleSelectors")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut sorted: Vec<&Value> = all.iter().collect();
    sorted.sort_by(|a, b| name(a).cmp(name(b)));
    let mut out: Vec<PolicyRule> = vec![];
    for s in &selectors {
        let sel = LabelSelector::parse(s)?;
        for other in &sorted {
            if name(other) == name(role) || !sel.matches(labels(other)) {
                continue;
            }
            for r in rules_of(other) {
                if !out.contains(&r) {
                    out.push(r);
                }
            }
        }
    }
    Some(out)
}

/// What the aggregation controller would write: for every ClusterRole with an aggregationRule
/// whose rules differ from the aggregate, its name and new `rules` (as JSON, ready to set on
/// the object; the controller applies them with field manager
/// `clusterrole-aggregation-controller`). Run it after any ClusterRole changes, until it
/// returns nothing (an aggregated role may itself be aggregated).
pub fn aggregate(cluster_roles: &[Value]) -> Vec<(String, Vec<Value>)> {
    let mut out = vec![];
    for role in cluster_roles {
        let Some(rules) = aggregated_rules(role, cluster_roles) else {
            continue;
        };
        if rules != rules_of(role) {
            out.push((
                name(role).to_string(),
                rules.iter().map(PolicyRule::to_value).collect(),
            ));
        }
    }
    out
}

/// Applies [`aggregate`] to the roles in place until nothing changes (at most as many rounds
/// as there are roles), returning the names of the roles changed. Useful at startup over the
/// bootstrap roles, and in tests.
pub(crate) fn aggregate_in_place(cluster_roles: &mut [Value]) -> Vec<String> {
    let mut changed: Vec<String> = vec![];
    for _ in 0..=cluster_roles.len() {
        let updates = aggregate(cluster_roles);
        if updates.is_empty() {
            break;
        }
        for (n, rules) in updates {
            if let Some(r) = cluster_roles.iter_mut().find(|r| name(r) == n) {
                r["rules"] = Value::Array(rules);
            }
            if !changed.contains(&n) {
                changed.push(n);
            }
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cr(name: &str, labels: Value, rules: Value) -> Value {
        json!({"kind": "ClusterRole", "metadata": {"name": name, "labels": labels}, "rules": rules})
    }

    #[test]
    fn unions_in_name_order_without_duplicates() {
        let agg = json!({"metadata": {"name": "agg"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "1"}}, {"matchExpressions": [{"key": "y", "operator": "Exists"}]}]},
            "rules": []});
        let a = json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]});
        let b = json!({"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]});
        let c = json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": []});
        let roles = vec![
            agg,
            cr("zz", json!({"x": "1"}), json!([b])),
            cr("aa", json!({"x": "1"}), json!([a])),
            cr("mm", json!({"y": ""}), json!([c, b])),
            cr(
                "no",
                json!({"x": "2"}),
                json!([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]),
            ),
        ];
        let out = aggregate(&roles);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0, "agg");
        assert_eq!(
            out[0].1,
            vec![
                json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}),
                json!({"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}),
            ]
        );
    }

    #[test]
    fn selector_operators() {
        let l = json!({"a": "1", "b": "2"});
        let l = l.as_object();
        let sel = |v: Value| LabelSelector::parse(&v).unwrap().matches(l);
        assert!(sel(json!({})));
        assert!(sel(
            json!({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "3"]}]})
        ));
        assert!(!sel(
            json!({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]})
        ));
        assert!(sel(
            json!({"matchExpressions": [{"key": "c", "operator": "NotIn", "values": ["1"]}]})
        ));
        assert!(sel(
            json!({"matchExpressions": [{"key": "c", "operator": "DoesNotExist"}]})
        ));
        assert!(!sel(json!({"matchLabels": {"a": "1", "b": "3"}})));
        assert!(LabelSelector::parse(
            &json!({"matchExpressions": [{"key": "a", "operator": "In"}]})
        )
        .is_none());
        assert!(LabelSelector::parse(
            &json!({"matchExpressions": [{"key": "a", "operator": "Foo", "values": ["x"]}]})
        )
        .is_none());
    }
}
