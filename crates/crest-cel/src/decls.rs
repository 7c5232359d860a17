//! Function declarations the checker resolves calls against: the standard library (cel-go
//! `stdlib`), optionals, and the strings extension. The runtime side is in `stdlib.rs`; both
//! are keyed by function name.

use std::collections::HashMap;

use crate::types::Type;
use crate::types::Type as T;

#[derive(Debug, Clone)]
pub struct Overload {
    pub id: String,
    /// For member overloads the first parameter is the receiver.
    pub params: Vec<Type>,
    pub result: Type,
    pub member: bool,
    pub type_params: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub struct FunctionDecl {
    pub name: String,
    pub overloads: Vec<Overload>,
}

/// All declared functions, by name.
#[derive(Debug, Clone, Default)]
pub struct Functions {
    pub by_name: HashMap<String, FunctionDecl>,
}

impl Functions {
    pub fn add(&mut self, name: &str, member: bool, params: Vec<Type>, result: Type) {
        let mut tps = Vec::new();
        for t in params.iter().chain(std::iter::once(&result)) {
            collect_params(t, &mut tps);
        }
        let decl = self
            .by_name
            .entry(name.to_string())
            .or_insert_with(|| FunctionDecl {
                name: name.to_string(),
                overloads: vec![],
            });
        let id = format!(
            "{}{}_{}",
            if member { "member_" } else { "" },
            name,
            params
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join("_")
        );
        decl.overloads.push(Overload {
            id,
            params,
            result,
            member,
            type_params: tps,
        });
    }

    pub fn get(&self, name: &str) -> Option<&FunctionDecl> {
        self.by_name.get(name)
    }
}

fn collect_params(t: &Type, out: &mut Vec<String>) {
    match t {
        Type::TypeParam(n) if !out.contains(n) => out.push(n.clone()),
        Type::List(e) => collect_params(e, out),
        Type::Map(k, v) => {
            collect_params(k, out);
            collect_params(v, out);
        }
        Type::Opaque(_, ps) => ps.iter().for_each(|p| collect_params(p, out)),
        Type::Type(Some(t)) => collect_params(t, out),
        _ => {}
    }
}

/// The standard declarations plus optionals and the strings extension.
pub fn standard() -> Functions {
    use T::{Bool, Bytes, Double, Duration, Dyn, Int, String, Timestamp, Uint};
    let mut f = Functions::default();
    let a = || T::param("A");
    let b = || T::param("B");
    let la = || T::list(T::param("A"));
    let mab = || T::map(T::param("A"), T::param("B"));
    let opt_a = || T::optional(T::param("A"));

    f.add("_?_:_", false, vec![Bool, a(), a()], a());
    for op in ["_&&_", "_||_"] {
        f.add(op, false, vec![Bool, Bool], Bool);
    }
    f.add("!_", false, vec![Bool], Bool);
    f.add("@not_strictly_false", false, vec![Bool], Bool);
    f.add("-_", false, vec![Int], Int);
    f.add("-_", false, vec![Double], Double);
    for op in ["_==_", "_!=_"] {
        f.add(op, false, vec![a(), a()], Bool);
    }
    let numeric = [Int, Uint, Double];
    for op in ["_<_", "_<=_", "_>_", "_>=_"] {
        for t in [Bool, String, Bytes, Timestamp, Duration] {
            f.add(op, false, vec![t.clone(), t], Bool);
        }
        // Cross-type numeric comparisons (cel-go enables them by default).
        for x in &numeric {
            for y in &numeric {
                f.add(op, false, vec![x.clone(), y.clone()], Bool);
            }
        }
    }
    for t in [Int, Uint, Double, String, Bytes] {
        f.add("_+_", false, vec![t.clone(), t.clone()], t);
    }
    f.add("_+_", false, vec![la(), la()], la());
    f.add("_+_", false, vec![Timestamp, Duration], Timestamp);
    f.add("_+_", false, vec![Duration, Timestamp], Timestamp);
    f.add("_+_", false, vec![Duration, Duration], Duration);
    for t in [Int, Uint, Double] {
        f.add("_-_", false, vec![t.clone(), t.clone()], t.clone());
        f.add("_*_", false, vec![t.clone(), t.clone()], t.clone());
        f.add("_/_", false, vec![t.clone(), t.clone()], t);
    }
    f.add("_-_", false, vec![Timestamp, Timestamp], Duration);
    f.add("_-_", false, vec![Timestamp, Duration], Timestamp);
    f.add("_-_", false, vec![Duration, Duration], Duration);
    f.add("_%_", false, vec![Int, Int], Int);
    f.add("_%_", false, vec![Uint, Uint], Uint);
    f.add("_[_]", false, vec![la(), Int], a());
    f.add("_[_]", false, vec![mab(), a()], b());
    f.add("@in", false, vec![a(), la()], Bool);
    f.add("@in", false, vec![a(), mab()], Bool);
    for t in [String, Bytes, la(), mab()] {
        f.add("size", false, vec![t.clone()], Int);
        f.add("size", true, vec![t], Int);
    }
    for name in ["contains", "startsWith", "endsWith", "matches"] {
        f.add(name, true, vec![String, String], Bool);
    }
    f.add("matches", false, vec![String, String], Bool);

    // Conversions.
    for t in [Int, Uint, Double, String, Timestamp] {
        f.add("int", false, vec![t], Int);
    }
    for t in [Int, Uint, Double, String] {
        f.add("uint", false, vec![t], Uint);
    }
    for t in [Int, Uint, Double, String] {
        f.add("double", false, vec![t], Double);
    }
    for t in [Int, Uint, Double, Bool, String, Bytes, Timestamp, Duration] {
        f.add("string", false, vec![t], String);
    }
    for t in [Bytes, String] {
        f.add("bytes", false, vec![t], Bytes);
    }
    for t in [Bool, String] {
        f.add("bool", false, vec![t], Bool);
    }
    for t in [Timestamp, String, Int] {
        f.add("timestamp", false, vec![t], Timestamp);
    }
    for t in [Duration, String] {
        f.add("duration", false, vec![t], Duration);
    }
    f.add("dyn", false, vec![a()], Dyn);
    f.add("type", false, vec![a()], T::type_of(a()));

    // Timestamp and duration accessors.
    for name in [
        "getFullYear",
        "getMonth",
        "getDayOfYear",
        "getDayOfMonth",
        "getDate",
        "getDayOfWeek",
        "getHours",
        "getMinutes",
        "getSeconds",
        "getMilliseconds",
    ] {
        f.add(name, true, vec![Timestamp], Int);
        f.add(name, true, vec![Timestamp, String], Int);
    }
    for name in ["getHours", "getMinutes", "getSeconds", "getMilliseconds"] {
        f.add(name, true, vec![Duration], Int);
    }

    // Optionals (cel-go `OptionalTypes`).
    f.add("optional.of", false, vec![a()], opt_a());
    f.add("optional.ofNonZeroValue", false, vec![a()], opt_a());
    f.add("optional.none", false, vec![], opt_a());
    f.add("hasValue", true, vec![opt_a()], Bool);
    f.add("value", true, vec![opt_a()], a());
    f.add("or", true, vec![opt_a(), opt_a()], opt_a());
    f.add("orValue", true, vec![opt_a(), a()], a());
    f.add("_[?_]", false, vec![la(), Int], opt_a());
    f.add("_[?_]", false, vec![mab(), a()], T::optional(b()));
    f.add("_[?_]", false, vec![T::optional(la()), Int], opt_a());
    f.add(
        "_[?_]",
        false,
        vec![T::optional(mab()), a()],
        T::optional(b()),
    );
    f.add("_[_]", false, vec![T::optional(la()), Int], opt_a());
    f.add(
        "_[_]",
        false,
        vec![T::optional(mab()), a()],
        T::optional(b()),
    );
    f.add("optional.unwrap", false, vec![T::list(opt_a())], la());
    f.add("unwrapOpt", true, vec![T::list(opt_a())], la());
    f.add("first", true, vec![la()], opt_a());
    f.add("last", true, vec![la()], opt_a());

    // Strings extension (cel-go `ext.Strings`, as Kubernetes enables it).
    f.add("charAt", true, vec![String, Int], String);
    f.add("indexOf", true, vec![String, String], Int);
    f.add("indexOf", true, vec![String, String, Int], Int);
    f.add("lastIndexOf", true, vec![String, String], Int);
    f.add("lastIndexOf", true, vec![String, String, Int], Int);
    f.add("lowerAscii", true, vec![String], String);
    f.add("upperAscii", true, vec![String], String);
    f.add("replace", true, vec![String, String, String], String);
    f.add("replace", true, vec![String, String, String, Int], String);
    f.add("split", true, vec![String, String], T::list(String));
    f.add("split", true, vec![String, String, Int], T::list(String));
    f.add("substring", true, vec![String, Int], String);
    f.add("substring", true, vec![String, Int, Int], String);
    f.add("trim", true, vec![String], String);
    f.add("join", true, vec![T::list(String)], String);
    f.add("join", true, vec![T::list(String), String], String);
    f.add("reverse", true, vec![String], String);
    f.add("strings.quote", false, vec![String], String);
    f.add("format", true, vec![String, T::list(Dyn)], String);

    // Two-variable comprehension helper (transformMap / transformMapEntry).
    f.add("cel.@mapInsert", false, vec![mab(), a(), b()], mab());
    f.add("cel.@mapInsert", false, vec![mab(), mab()], mab());
    f
}
