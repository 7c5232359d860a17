//! The first position of each identity in a list, so that merging lists looks elements up by
//! identity instead of scanning the list for each one: a patch of n entries into a list of m
//! entries costs O(n + m), not O(n * m) (a hostile 30,000-entry patch must not take a worker
//! for minutes). `serde_json::Value` hashes consistently with its equality (object entries
//! independently of their order, `0.0` and `-0.0` alike), so values are keys as they are.

use serde_json::Value;
use std::collections::HashMap;

/// The position of the first element of `list` with each identity (`identity` of an element;
/// elements without one are left out): what `list.iter().position(..)` finds, in O(1).
pub(crate) fn first_positions<'a>(
    list: &'a [Value],
    identity: impl Fn(&'a Value) -> Option<&'a Value>,
) -> HashMap<&'a Value, usize> {
    let mut index = HashMap::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        if let Some(id) = identity(v) {
            index.entry(id).or_insert(i);
        }
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn first_positions_keeps_the_first_of_duplicates() {
        let list = vec![
            json!({"k": "a"}),
            json!({"k": "b"}),
            json!({"k": "a"}),
            json!({}),
        ];
        let index = first_positions(&list, |v| v.get("k"));
        assert_eq!(index.len(), 2);
        assert_eq!(index[&json!("a")], 0);
        assert_eq!(index[&json!("b")], 1);
    }

    #[test]
    fn equal_values_are_one_key() {
        let a = json!({"x": 1, "y": [1, "a", null], "z": {"p": true, "q": -0.0}});
        let b = json!({"z": {"q": 0.0, "p": true}, "y": [1, "a", null], "x": 1});
        let set: std::collections::HashSet<&Value> = [&a, &b].into_iter().collect();
        assert_eq!(set.len(), 1);
        let distinct = [
            json!(1),
            json!(1.0),
            json!("1"),
            json!([1]),
            json!({"a": 1}),
        ];
        let set: std::collections::HashSet<&Value> = distinct.iter().collect();
        assert_eq!(set.len(), distinct.len());
    }
}
