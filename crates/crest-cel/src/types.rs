//! CEL's static types (cel-go `common/types.Type`), as the checker uses and prints them.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Type {
    Dyn,
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Timestamp,
    Duration,
    /// `google.protobuf.Any`.
    Any,
    List(Box<Type>),
    Map(Box<Type>, Box<Type>),
    /// A message type, resolved through a [`TypeProvider`](crate::provider::TypeProvider).
    Object(String),
    /// A parameterized opaque type (`optional_type(T)`, extension types).
    Opaque(String, Vec<Type>),
    TypeParam(String),
    /// `type(T)`: the type of a type value; `Type(None)` is the bare `type`.
    Type(Option<Box<Type>>),
    Error,
}

impl Type {
    pub fn list(t: Type) -> Type {
        Type::List(Box::new(t))
    }

    pub fn map(k: Type, v: Type) -> Type {
        Type::Map(Box::new(k), Box::new(v))
    }

    pub fn optional(t: Type) -> Type {
        Type::Opaque("optional_type".to_string(), vec![t])
    }

    pub fn type_of(t: Type) -> Type {
        Type::Type(Some(Box::new(t)))
    }

    pub fn param(name: &str) -> Type {
        Type::TypeParam(name.to_string())
    }

    pub fn is_dyn_or_error(&self) -> bool {
        matches!(self, Type::Dyn | Type::Error)
    }

    /// The element of `optional_type(T)`.
    pub fn optional_elem(&self) -> Option<&Type> {
        match self {
            Type::Opaque(n, p) if n == "optional_type" && p.len() == 1 => Some(&p[0]),
            _ => None,
        }
    }

    /// Name of the runtime type value of values of this type (what `type(x)` returns).
    pub fn runtime_name(&self) -> String {
        match self {
            Type::Dyn => "dyn".into(),
            Type::Null => "null_type".into(),
            Type::Bool => "bool".into(),
            Type::Int => "int".into(),
            Type::Uint => "uint".into(),
            Type::Double => "double".into(),
            Type::String => "string".into(),
            Type::Bytes => "bytes".into(),
            Type::Timestamp => "google.protobuf.Timestamp".into(),
            Type::Duration => "google.protobuf.Duration".into(),
            Type::Any => "google.protobuf.Any".into(),
            Type::List(_) => "list".into(),
            Type::Map(..) => "map".into(),
            Type::Object(n) => n.clone(),
            Type::Opaque(n, _) => n.clone(),
            Type::TypeParam(n) => n.clone(),
            Type::Type(_) => "type".into(),
            Type::Error => "*error*".into(),
        }
    }

    /// Substitutes every type parameter for which `f` returns a type.
    pub fn map_params(&self, f: &mut impl FnMut(&str) -> Option<Type>) -> Type {
        match self {
            Type::TypeParam(n) => f(n).unwrap_or_else(|| self.clone()),
            Type::List(e) => Type::list(e.map_params(f)),
            Type::Map(k, v) => Type::map(k.map_params(f), v.map_params(f)),
            Type::Opaque(n, ps) => {
                Type::Opaque(n.clone(), ps.iter().map(|p| p.map_params(f)).collect())
            }
            Type::Type(Some(t)) => Type::type_of(t.map_params(f)),
            _ => self.clone(),
        }
    }

    /// Whether type parameter `name` occurs in this type.
    pub fn mentions(&self, name: &str) -> bool {
        match self {
            Type::TypeParam(n) => n == name,
            Type::List(e) => e.mentions(name),
            Type::Map(k, v) => k.mentions(name) || v.mentions(name),
            Type::Opaque(_, ps) => ps.iter().any(|p| p.mentions(name)),
            Type::Type(Some(t)) => t.mentions(name),
            _ => false,
        }
    }
}

impl fmt::Display for Type {
    /// cel-go's `FormatCELType`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::List(e) => write!(f, "list({e})"),
            Type::Map(k, v) => write!(f, "map({k}, {v})"),
            Type::Opaque(n, ps) if !ps.is_empty() => {
                let ps: Vec<String> = ps.iter().map(|p| p.to_string()).collect();
                write!(f, "{n}({})", ps.join(", "))
            }
            Type::Type(Some(t)) => write!(f, "type({t})"),
            t => f.write_str(&t.runtime_name()),
        }
    }
}
