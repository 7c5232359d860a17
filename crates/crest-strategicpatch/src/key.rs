//! JSON values as hash keys, so that merging lists looks elements up by identity instead of
//! scanning the list for each one: a patch of n entries into a list of m entries costs
//! O(n + m), not O(n * m) (a hostile 30,000-entry patch must not take a worker for minutes).

use serde_json::Value;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

/// A borrowed value hashed consistently with `serde_json::Value`'s equality: equal values hash
/// alike (an object's entries are combined independently of their order, as object equality
/// ignores it; `0.0` and `-0.0` are equal and hash alike), and `Eq` is the value's own.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Key<'a>(pub(crate) &'a Value);

impl PartialEq for Key<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl Eq for Key<'_> {}

impl Hash for Key<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_value(self.0, state);
    }
}

fn hash_value<H: Hasher>(v: &Value, state: &mut H) {
    match v {
        Value::Null => state.write_u8(0),
        Value::Bool(b) => {
            state.write_u8(1);
            b.hash(state);
        }
        Value::Number(n) => {
            state.write_u8(2);
            if let Some(u) = n.as_u64() {
                state.write_u8(0);
                u.hash(state);
            } else if let Some(i) = n.as_i64() {
                state.write_u8(1);
                i.hash(state);
            } else if let Some(f) = n.as_f64() {
                state.write_u8(2);
                // -0.0 == 0.0: one hash for both.
                let f = if f == 0.0 { 0.0 } else { f };
                f.to_bits().hash(state);
            }
        }
        Value::String(s) => {
            state.write_u8(3);
            s.hash(state);
        }
        Value::Array(a) => {
            state.write_u8(4);
            a.len().hash(state);
            for x in a {
                hash_value(x, state);
            }
        }
        Value::Object(m) => {
            state.write_u8(5);
            m.len().hash(state);
            // Each entry hashed on its own and the results summed: the same for any order.
            let mut sum: u64 = 0;
            for (k, x) in m {
                let mut h = DefaultHasher::new();
                k.hash(&mut h);
                hash_value(x, &mut h);
                sum = sum.wrapping_add(h.finish());
            }
            sum.hash(state);
        }
    }
}

/// The position of the first element of `list` with each identity (`identity` of an element;
/// elements without one are left out): what `list.iter().position(..)` finds, in O(1).
pub(crate) fn first_positions<'a>(
    list: &'a [Value],
    identity: impl Fn(&'a Value) -> Option<&'a Value>,
) -> HashMap<Key<'a>, usize> {
    let mut index = HashMap::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        if let Some(id) = identity(v) {
            index.entry(Key(id)).or_insert(i);
        }
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::HashSet;

    fn hash_of(v: &Value) -> u64 {
        let mut h = DefaultHasher::new();
        Key(v).hash(&mut h);
        h.finish()
    }

    #[test]
    fn equal_values_hash_alike() {
        let a = json!({"x": 1, "y": [1, "a", null], "z": {"p": true, "q": -0.0}});
        let b = json!({"z": {"q": 0.0, "p": true}, "y": [1, "a", null], "x": 1});
        assert_eq!(a, b);
        assert_eq!(hash_of(&a), hash_of(&b));
        let set: HashSet<Key<'_>> = [Key(&a), Key(&b)].into_iter().collect();
        assert_eq!(set.len(), 1);
    }

    #[test]
    fn different_values_are_different_keys() {
        let vals = [
            json!(1),
            json!(1.0),
            json!(-1),
            json!("1"),
            json!([1]),
            json!({"a": 1}),
            json!({"a": 2}),
            json!(null),
            json!(false),
        ];
        let set: HashSet<Key<'_>> = vals.iter().map(Key).collect();
        assert_eq!(set.len(), vals.len());
    }

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
        assert_eq!(index[&Key(&json!("a"))], 0);
        assert_eq!(index[&Key(&json!("b"))], 1);
    }
}
