//! Message types from outside the engine (cel-go `types.Provider`): the checker asks for
//! their fields' types, the evaluator for field defaults, enum values and construction.

use std::sync::Arc;

use indexmap::IndexMap;

use crate::types::Type;
use crate::value::{ObjectValue, Value};

/// Supplies message (object) types to the checker and evaluator: the Kubernetes binding maps
/// structural schemas onto this.
pub trait TypeProvider: Send + Sync {
    /// Whether `name` (fully qualified) is a message type.
    fn has_type(&self, name: &str) -> bool;
    /// The type of `field` in message `name`, None if there is no such field.
    fn field_type(&self, name: &str, field: &str) -> Option<Type>;

    /// The value an unset field reads as (protobuf defaults); None makes reading it an error
    /// ("no such field"), as Kubernetes objects need.
    fn field_default(&self, _name: &str, _field: &str) -> Option<Value> {
        None
    }

    /// The value of an enum constant named by its fully qualified name
    /// (`pkg.Message.Enum.VALUE`); enums are ints, as cel-go's legacy enums are.
    fn enum_value(&self, _name: &str) -> Option<i64> {
        None
    }

    /// Builds a message value from a literal's fields (`Type{f: v}`), e.g. to normalize or
    /// range-check them; the default keeps the fields as given.
    fn new_object(&self, name: &str, fields: IndexMap<String, Value>) -> Result<Value, String> {
        Ok(Value::Object(Arc::new(ObjectValue {
            type_name: name.to_string(),
            fields,
        })))
    }
}
