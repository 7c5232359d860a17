//! Kubernetes' regex library (apiserver `library/regex.go`): `find` and `findAll` on strings
//! (Go's regexp syntax and semantics, through `crest_goregexp`).

use std::sync::Arc;

use crest_cel::decls::{Library, Overload};
use crest_cel::eval::EvalError;
use crest_cel::types::Type;
use crest_cel::value::Value;
use regex::Regex;

/// The pattern compiled (cached, shared with `matches`), or cel-go's "Illegal regex" error.
fn compiled(pattern: &str) -> Result<Arc<Regex>, EvalError> {
    crest_cel::stdlib::compiled_regex(pattern)
        .map_err(|e| EvalError::new(format!("Illegal regex: {e}")))
}

/// Go's `FindAllString(s, n)`: all matches for a negative n, at most n otherwise.
fn find_all(s: &str, pattern: &str, n: i64) -> Result<Value, EvalError> {
    let re = compiled(pattern)?;
    let limit = usize::try_from(n).unwrap_or(usize::MAX);
    Ok(Value::list(
        re.find_iter(s)
            .take(limit)
            .map(|m| Value::string(m.as_str()))
            .collect(),
    ))
}

pub fn library() -> Library {
    let s = || Type::String;
    Library::new("kubernetes.regex")
        .function(
            "find",
            [
                Overload::member("string_find_string", vec![s(), s()], s()).implement(
                    |a| match a {
                        [Value::String(x), Value::String(p)] => Ok(Value::string(
                            compiled(p)?.find(x).map_or("", |m| m.as_str()),
                        )),
                        _ => Err(EvalError::new("no such overload")),
                    },
                ),
            ],
        )
        .function(
            "findAll",
            [
                Overload::member("string_find_all_string", vec![s(), s()], Type::list(s()))
                    .implement(|a| match a {
                        [Value::String(x), Value::String(p)] => find_all(x, p, -1),
                        _ => Err(EvalError::new("no such overload")),
                    }),
                Overload::member(
                    "string_find_all_string_int",
                    vec![s(), s(), Type::Int],
                    Type::list(s()),
                )
                .implement(|a| match a {
                    [Value::String(x), Value::String(p), Value::Int(n)] => find_all(x, p, *n),
                    _ => Err(EvalError::new("no such overload")),
                }),
            ],
        )
}
