//! Label and field selectors on list, watch and deletecollection.

use crate::request::Query;
use crate::resources::ResourceDef;
use crest_api::{meta, ApiError};
use serde_json::Value;

#[derive(Clone, Debug, PartialEq)]
enum Op {
    Exists,
    NotExists,
    In(Vec<String>),
    NotIn(Vec<String>),
}

#[derive(Clone, Debug, PartialEq)]
struct Requirement {
    key: String,
    op: Op,
}

/// Splits on commas that are not inside parentheses.
fn split_top(s: &str) -> Vec<&str> {
    let mut out = vec![];
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

fn parse_set(rest: &str, sel: &str) -> Result<Vec<String>, ApiError> {
    let rest = rest.trim();
    let inner = rest
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "unable to parse requirement: found '{rest}', expected: '('  in selector {sel:?}"
            ))
        })?;
    Ok(inner
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect())
}

fn invalid_label_selector(sel: &str, detail: &str) -> ApiError {
    ApiError::bad_request(format!("unable to parse requirement: {detail}: {sel}"))
}

fn parse_label_selector(sel: &str) -> Result<Vec<Requirement>, ApiError> {
    let mut reqs = vec![];
    if sel.trim().is_empty() {
        return Ok(reqs);
    }
    for part in split_top(sel) {
        let p = part.trim();
        if p.is_empty() {
            return Err(invalid_label_selector(
                sel,
                "found '', expected: !, identifier, or 'end of string'",
            ));
        }
        let req = if let Some(k) = p.strip_prefix('!') {
            Requirement {
                key: k.trim().into(),
                op: Op::NotExists,
            }
        } else if let Some((k, v)) = p.split_once("!=") {
            Requirement {
                key: k.trim().into(),
                op: Op::NotIn(vec![v.trim().into()]),
            }
        } else if let Some((k, v)) = p.split_once("==").or_else(|| p.split_once('=')) {
            Requirement {
                key: k.trim().into(),
                op: Op::In(vec![v.trim().into()]),
            }
        } else if let Some(idx) = p.find(" notin ") {
            Requirement {
                key: p[..idx].trim().into(),
                op: Op::NotIn(parse_set(&p[idx + 7..], sel)?),
            }
        } else if let Some(idx) = p.find(" in ") {
            Requirement {
                key: p[..idx].trim().into(),
                op: Op::In(parse_set(&p[idx + 4..], sel)?),
            }
        } else {
            Requirement {
                key: p.into(),
                op: Op::Exists,
            }
        };
        let key_errs = crest_api::validation::is_qualified_name(&req.key);
        if let Some(m) = key_errs.first() {
            return Err(ApiError::bad_request(format!(
                "unable to parse requirement: values[0][{}]: Invalid value: {:?}: {m}",
                req.key, req.key
            )));
        }
        for v in match &req.op {
            Op::In(vs) | Op::NotIn(vs) => vs.as_slice(),
            _ => &[],
        } {
            if let Some(m) = crest_api::validation::is_valid_label_value(v).first() {
                return Err(ApiError::bad_request(format!(
                    "unable to parse requirement: values[0][{}]: Invalid value: {v:?}: {m}",
                    req.key
                )));
            }
        }
        reqs.push(req);
    }
    Ok(reqs)
}

/// A parsed labelSelector + fieldSelector.
#[derive(Clone, Debug, Default)]
pub struct ListFilter {
    labels: Vec<Requirement>,
    /// (field path, value, negated)
    fields: Vec<(String, String, bool)>,
}

impl ListFilter {
    pub fn parse(q: &Query, def: &ResourceDef) -> Result<Self, ApiError> {
        let labels = parse_label_selector(q.get("labelSelector").unwrap_or(""))?;
        let mut fields = vec![];
        if let Some(fs) = q.get("fieldSelector").filter(|s| !s.trim().is_empty()) {
            for term in fs.split(',') {
                let term = term.trim();
                let (k, v, neg) = if let Some((k, v)) = term.split_once("!=") {
                    (k, v, true)
                } else if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('='))
                {
                    (k, v, false)
                } else {
                    return Err(ApiError::bad_request(format!(
                        "invalid selector: '{fs}'; can't understand '{term}'"
                    )));
                };
                let k = k.trim();
                let supported = matches!(k, "metadata.name")
                    || (k == "metadata.namespace"
                        && (def.api.namespaced || def.crd_name.is_some()))
                    || (k == "status.phase" && def.api.kind == "Namespace");
                if !supported {
                    return Err(ApiError::bad_request(format!(
                        "field label not supported: {k}"
                    )));
                }
                fields.push((k.to_string(), v.trim().to_string(), neg));
            }
        }
        Ok(ListFilter { labels, fields })
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }

    /// The single name a `metadata.name=X` selector pins, if any.
    pub fn name(&self) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _, neg)| k == "metadata.name" && !neg)
            .map(|(_, v, _)| v.as_str())
    }

    pub fn matches_bytes(&self, b: &[u8]) -> Result<bool, ApiError> {
        let v: Value = serde_json::from_slice(b).map_err(|e| ApiError::internal(e.to_string()))?;
        Ok(self.matches(&v))
    }

    pub fn matches(&self, obj: &Value) -> bool {
        let labels = meta::labels(obj);
        let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        let labels_ok = self.labels.iter().all(|r| match &r.op {
            Op::Exists => label(&r.key).is_some(),
            Op::NotExists => label(&r.key).is_none(),
            Op::In(vs) => label(&r.key).is_some_and(|v| vs.iter().any(|x| x == v)),
            Op::NotIn(vs) => label(&r.key).is_none_or(|v| !vs.iter().any(|x| x == v)),
        });
        labels_ok
            && self.fields.iter().all(|(k, v, neg)| {
                let actual = match k.as_str() {
                    "metadata.name" => meta::name(obj),
                    "metadata.namespace" => meta::namespace(obj),
                    "status.phase" => obj
                        .pointer("/status/phase")
                        .and_then(Value::as_str)
                        .unwrap_or(""),
                    _ => "",
                };
                (actual == v) != *neg
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_selectors() {
        let o = json!({"metadata": {"labels": {"app": "web", "tier": "fe"}}});
        let f = |s: &str| {
            ListFilter {
                labels: parse_label_selector(s).unwrap(),
                fields: vec![],
            }
            .matches(&o)
        };
        assert!(f("app=web"));
        assert!(f("app==web,tier"));
        assert!(!f("app!=web"));
        assert!(f("app in (web, db)"));
        assert!(!f("app notin (web)"));
        assert!(f("!missing"));
        assert!(!f("missing"));
        assert!(parse_label_selector("a b c").is_err());
    }
}
