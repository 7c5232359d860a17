//! How a DELETE treats dependents: the API server's half of garbage collection
//! (`deletionFinalizersForGarbageCollection`). The collector (`controllers::gc`) does the rest.

use crest_api::meta;
use serde_json::Value;
use std::collections::HashSet;

/// `metav1.FinalizerOrphanDependents`.
pub(crate) const ORPHAN_FINALIZER: &str = "orphan";
/// `metav1.FinalizerDeleteDependents`.
pub(crate) const FOREGROUND_FINALIZER: &str = "foregroundDeletion";

/// How a DELETE asked for dependents to be handled (`DeleteOptions.propagationPolicy` and the
/// deprecated `orphanDependents`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Cascade {
    pub orphan_dependents: Option<bool>,
    pub propagation: Option<Propagation>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Propagation {
    Orphan,
    Background,
    Foreground,
}

impl Propagation {
    pub(crate) fn parse(policy: &str) -> Option<Self> {
        match policy {
            "Orphan" => Some(Propagation::Orphan),
            "Background" => Some(Propagation::Background),
            "Foreground" => Some(Propagation::Foreground),
            _ => None,
        }
    }
}

/// Sets the `orphan` / `foregroundDeletion` finalizers of an object being deleted as the API
/// server does (`deletionFinalizersForGarbageCollection`); returns whether they changed. With
/// neither option, an object keeps the policy a previous DELETE chose, else Background.
pub(crate) fn apply_deletion_finalizers(obj: &mut Value, cascade: Cascade) -> bool {
    let current = meta::finalizers(obj);
    let has = |f: &str| current.iter().any(|c| c == f);
    let orphan = match (cascade.orphan_dependents, cascade.propagation) {
        (Some(o), _) => o,
        (None, Some(p)) => p == Propagation::Orphan,
        (None, None) => has(ORPHAN_FINALIZER),
    };
    let foreground = match (cascade.orphan_dependents, cascade.propagation) {
        (Some(true), _) => false,
        (_, Some(p)) => p == Propagation::Foreground,
        _ => has(FOREGROUND_FINALIZER),
    };
    let mut wanted: Vec<String> = current
        .iter()
        .filter(|f| *f != ORPHAN_FINALIZER && *f != FOREGROUND_FINALIZER)
        .cloned()
        .collect();
    if orphan {
        wanted.push(ORPHAN_FINALIZER.into());
    }
    if foreground {
        wanted.push(FOREGROUND_FINALIZER.into());
    }
    // Compared as sets, as upstream does (`sets.NewString(...).Equal`): hashing keeps a DELETE
    // of an object with 30,000 finalizers linear.
    fn as_set(l: &[String]) -> HashSet<&str> {
        l.iter().map(String::as_str).collect()
    }
    if as_set(&wanted) == as_set(&current) {
        return false;
    }
    meta::set(
        obj,
        "finalizers",
        Value::Array(wanted.into_iter().map(Value::String).collect()),
    );
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fins(v: &Value) -> Vec<String> {
        meta::finalizers(v)
    }

    #[test]
    fn deletion_finalizers_follow_the_options() {
        let mut o = json!({"metadata": {"name": "a", "finalizers": ["x"]}});
        assert!(!apply_deletion_finalizers(&mut o, Cascade::default()));
        let fg = Cascade {
            orphan_dependents: None,
            propagation: Some(Propagation::Foreground),
        };
        assert!(apply_deletion_finalizers(&mut o, fg));
        assert_eq!(fins(&o), ["x", "foregroundDeletion"]);
        // No options: the earlier choice stays.
        assert!(!apply_deletion_finalizers(&mut o, Cascade::default()));
        let orphan = Cascade {
            orphan_dependents: Some(true),
            propagation: None,
        };
        assert!(apply_deletion_finalizers(&mut o, orphan));
        assert_eq!(fins(&o), ["x", "orphan"]);
        let bg = Cascade {
            orphan_dependents: None,
            propagation: Some(Propagation::Background),
        };
        assert!(apply_deletion_finalizers(&mut o, bg));
        assert_eq!(fins(&o), ["x"]);
        // orphanDependents=false keeps an earlier foreground choice.
        let mut o = json!({"metadata": {"finalizers": ["foregroundDeletion"]}});
        let not_orphan = Cascade {
            orphan_dependents: Some(false),
            propagation: None,
        };
        assert!(!apply_deletion_finalizers(&mut o, not_orphan));
        // Compared as sets: a repeated finalizer is no change.
        let mut o = json!({"metadata": {"finalizers": ["orphan", "x", "orphan"]}});
        assert!(!apply_deletion_finalizers(&mut o, orphan));
        assert_eq!(fins(&o), ["orphan", "x", "orphan"]);
    }
}
