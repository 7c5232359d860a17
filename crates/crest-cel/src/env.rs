//! The compilation environment: container, declared variables, functions and message types,
//! and the lookups the checker and the evaluator make in it. `Env::standard` (which needs the
//! extension libraries) and `Env::compile` (which needs the checker) are in `compile.rs`.

use std::collections::HashMap;
use std::sync::Arc;

use crate::ast::Ast;
use crate::decls::{standard, Functions, Library, Overload};
use crate::errors::Issues;
use crate::parser::{parse_with, ParserOptions};
use crate::provider::TypeProvider;
use crate::types::Type;

#[derive(Clone)]
pub struct Env {
    /// Namespace for name resolution (`a.b` makes `x` resolve as `a.b.x`, `a.x`, `x`).
    pub container: String,
    pub variables: HashMap<String, Type>,
    /// Shared with the programs compiled from this environment (their implementations).
    pub functions: Arc<Functions>,
    pub provider: Option<Arc<dyn TypeProvider>>,
    pub parser_options: ParserOptions,
}

/// Type names usable as identifiers, with the type they denote.
const BUILTIN_TYPES: &[&str] = &[
    "bool",
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
    "google.protobuf.Timestamp",
    "google.protobuf.Duration",
    "optional_type",
];

pub fn builtin_type(name: &str) -> Option<Type> {
    Some(match name {
        "bool" => Type::Bool,
        "int" => Type::Int,
        "uint" => Type::Uint,
        "double" => Type::Double,
        "string" => Type::String,
        "bytes" => Type::Bytes,
        "list" => Type::list(Type::Dyn),
        "map" => Type::map(Type::Dyn, Type::Dyn),
        "null_type" => Type::Null,
        "type" => Type::Type(None),
        "google.protobuf.Timestamp" => Type::Timestamp,
        "google.protobuf.Duration" => Type::Duration,
        "optional_type" => Type::optional(Type::Dyn),
        _ => return None,
    })
}

impl Env {
    /// The standard library, optionals and the strings extension only.
    pub fn bare() -> Env {
        Env {
            container: String::new(),
            variables: HashMap::new(),
            functions: Arc::new(standard()),
            provider: None,
            parser_options: ParserOptions::default(),
        }
    }

    pub fn with_container(mut self, container: &str) -> Env {
        self.container = container.to_string();
        self
    }

    pub fn add_variable(&mut self, name: &str, t: Type) {
        self.variables.insert(name.to_string(), t);
    }

    /// Declares a function overload without an implementation; the runtime must provide it
    /// (see `Program::with_function`).
    pub fn add_function(&mut self, name: &str, member: bool, params: Vec<Type>, result: Type) {
        Arc::make_mut(&mut self.functions).add(name, member, params, result);
    }

    /// Declares one overload of function `name` (with its implementation and cost functions).
    pub fn add_overload(&mut self, name: &str, overload: Overload) {
        Arc::make_mut(&mut self.functions).add_overload(name, overload);
    }

    /// Adds a library's functions and variables (cel-go `cel.Lib`).
    pub fn add_library(&mut self, lib: &Library) {
        let fns = Arc::make_mut(&mut self.functions);
        for (name, overloads) in &lib.functions {
            for o in overloads {
                fns.add_overload(name, o.clone());
            }
        }
        for (name, t) in &lib.variables {
            self.variables.insert(name.clone(), t.clone());
        }
        if lib.macros.iter().any(|m| m.starts_with("math.")) {
            self.parser_options.math_macros = true;
        }
        if lib.macros.iter().any(|m| m == "sortBy") {
            self.parser_options.lists_macros = true;
        }
    }

    pub fn with_library(mut self, lib: &Library) -> Env {
        self.add_library(lib);
        self
    }

    /// Names `name` may refer to in the container, most qualified first.
    pub fn candidate_names(&self, name: &str) -> Vec<String> {
        candidate_names(&self.container, name)
    }

    /// The type of identifier `name` (fully qualified): a variable or a type name.
    pub fn ident_type(&self, name: &str) -> Option<Type> {
        if let Some(t) = self.variables.get(name) {
            return Some(t.clone());
        }
        if BUILTIN_TYPES.contains(&name) {
            return builtin_type(name).map(Type::type_of);
        }
        if self.has_message_type(name) {
            return Some(Type::type_of(Type::Object(name.to_string())));
        }
        if self.enum_value(name).is_some() {
            return Some(Type::Int);
        }
        None
    }

    /// An enum constant of the message types (fully qualified name).
    pub fn enum_value(&self, name: &str) -> Option<i64> {
        self.provider.as_ref()?.enum_value(name)
    }

    pub fn has_message_type(&self, name: &str) -> bool {
        self.provider.as_ref().is_some_and(|p| p.has_type(name))
    }

    pub fn field_type(&self, message: &str, field: &str) -> Option<Type> {
        self.provider.as_ref()?.field_type(message, field)
    }

    pub fn parse(&self, src: &str) -> Result<Ast, Issues> {
        parse_with(src, &self.parser_options)
    }
}

pub fn candidate_names(container: &str, name: &str) -> Vec<String> {
    if let Some(abs) = name.strip_prefix('.') {
        return vec![abs.to_string()];
    }
    let mut out = Vec::new();
    let mut c = container;
    while !c.is_empty() {
        out.push(format!("{c}.{name}"));
        c = match c.rfind('.') {
            Some(i) => &c[..i],
            None => "",
        };
    }
    out.push(name.to_string());
    out
}
