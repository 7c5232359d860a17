//! Upstream's `library.CostEstimator` (apiserver `pkg/cel/library/cost.go`): the static
//! estimate and the runtime cost of Kubernetes' library calls (and of the strings functions it
//! prices). Upstream keys some static estimates on the call having a receiver, so global calls
//! such as `isIP(s)` or `quantity(s)` keep cel-go's default cost of 1 there.

use crest_cel::ast::Literal;
use crest_cel::cost::{CallArg, CostEstimate, SizeEstimate};
use crest_cel::decls::CallEstimate;
use crest_cel::eval::ActualCostEstimator;
use crest_cel::types::Type;
use crest_cel::value::Value;

use super::{format, ip, quantity, semver, urls};

const STRING_TRAVERSAL: f64 = 0.1;
const REGEX_LENGTH: f64 = 0.25;
const MAX_NAME_FORMAT_REGEX_SIZE: f64 = 128.0;
const MAX_FORMAT_SIZE: u64 = 64;

/// cel-go's `multiplyByCostFactor`: rounded up, saturating.
fn factor(x: u64, f: f64) -> u64 {
    let v = (x as f64 * f).ceil();
    if v >= u64::MAX as f64 {
        u64::MAX
    } else {
        v as u64
    }
}

fn size_factor(s: SizeEstimate, f: f64) -> CostEstimate {
    CostEstimate {
        min: factor(s.min, f),
        max: factor(s.max, f),
    }
}

fn cost_factor(c: CostEstimate, f: f64) -> CostEstimate {
    CostEstimate {
        min: factor(c.min, f),
        max: factor(c.max, f),
    }
}

fn times(a: CostEstimate, b: CostEstimate) -> CostEstimate {
    CostEstimate {
        min: a.min.saturating_mul(b.min),
        max: a.max.saturating_mul(b.max),
    }
}

fn plus(a: CostEstimate, b: CostEstimate) -> CostEstimate {
    a.plus(b)
}

fn fixed(c: u64) -> Option<CallEstimate> {
    cost(CostEstimate::fixed(c))
}

fn cost(c: CostEstimate) -> Option<CallEstimate> {
    Some(CallEstimate {
        cost: c,
        result_size: None,
    })
}

fn with_size(c: CostEstimate, s: SizeEstimate) -> Option<CallEstimate> {
    Some(CallEstimate {
        cost: c,
        result_size: Some(s),
    })
}

fn opaque_name(t: &Type) -> Option<&str> {
    match t {
        Type::Opaque(n, _) => Some(n),
        _ => None,
    }
}

/// Member functions of the libraries (upstream's `target != nil` cases).
fn is_member(ids: &[String]) -> bool {
    !ids.is_empty()
        && ids
            .iter()
            .all(|id| !matches!(id.as_str(), "string_to_ip" | "ip_is_canonical"))
}

/// The static estimate of a call, None for cel-go's default.
pub fn estimate(function: &str, ids: &[String], args: &[CallArg<'_>]) -> Option<CallEstimate> {
    let has = |id: &str| ids.iter().any(|i| i == id);
    match function {
        "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
            let target = args.first()?;
            match target.ty {
                Type::List(elem) => {
                    let mut el = CostEstimate::fixed(1);
                    if matches!(**elem, Type::String | Type::Bytes) {
                        el = plus(el, size_factor(target.elem_size, STRING_TRAVERSAL));
                    }
                    let s = target.size;
                    cost(times(
                        CostEstimate {
                            min: s.min,
                            max: s.max,
                        },
                        el,
                    ))
                }
                _ => cost(size_factor(target.size, STRING_TRAVERSAL)),
            }
        }
        "url" if args.len() == 1 => {
            let s = args[0].size;
            with_size(size_factor(s, STRING_TRAVERSAL), s)
        }
        "replace" if args.len() >= 3 => {
            let (sz, from, to) = (args[0].size, args[1].size, args[2].size);
            let (mut count, mut retained) = (SizeEstimate::exact(0), SizeEstimate::exact(0));
            if from.min == 0 {
                count.max = sz.max.saturating_add(1);
                retained.max = sz.max;
            } else if to.max <= from.min {
                retained.max = sz.max;
            } else {
                count.max = (sz.max as f64 / from.min as f64).ceil() as u64;
            }
            if from.max == 0 {
                count.min = sz.min.saturating_add(1);
                retained.min = sz.min;
            } else if from.max <= to.min {
                retained.min = sz.min;
            } else {
                count.min = (sz.min as f64 / from.max as f64).ceil() as u64;
            }
            let size = SizeEstimate {
                min: count
                    .min
                    .saturating_mul(to.min)
                    .saturating_add(retained.min),
                max: count
                    .max
                    .saturating_mul(to.max)
                    .saturating_add(retained.max),
            };
            with_size(size_factor(sz, 2.0 * STRING_TRAVERSAL), size)
        }
        "split" if !args.is_empty() => {
            let sz = args[0].size;
            let max = match args.get(2).and_then(|a| a.literal) {
                Some(Literal::Int(n)) => *n as u64,
                _ => sz.max,
            };
            with_size(
                size_factor(sz, 2.0 * STRING_TRAVERSAL),
                SizeEstimate { min: 0, max },
            )
        }
        "join" if !args.is_empty() => {
            let list = args[0].size;
            let mut sz = match args[0].ty {
                Type::List(_) => SizeEstimate {
                    min: list.min.saturating_mul(args[0].elem_size.min),
                    max: list.max.saturating_mul(args[0].elem_size.max),
                },
                _ => SizeEstimate::exact(0),
            };
            if let Some(sep) = args.get(1) {
                sz.min = sz
                    .min
                    .saturating_add(sep.size.min.saturating_mul(list.min.saturating_sub(1)));
                sz.max = sz
                    .max
                    .saturating_add(sep.size.max.saturating_mul(list.max.saturating_sub(1)));
            }
            with_size(size_factor(sz, STRING_TRAVERSAL), sz)
        }
        "find" | "findAll" if args.len() >= 2 => {
            let sz = args[0].size;
            let str_cost = size_factor(
                SizeEstimate {
                    min: sz.min.saturating_add(1),
                    max: sz.max.saturating_add(1),
                },
                STRING_TRAVERSAL,
            );
            let re_cost = size_factor(args[1].size, REGEX_LENGTH);
            with_size(
                times(str_cost, re_cost),
                SizeEstimate {
                    min: 0,
                    max: sz.max,
                },
            )
        }
        "ip" if has("cidr_ip") => fixed(1),
        "masked"
        | "prefixLength"
        | "family"
        | "isUnspecified"
        | "isLoopback"
        | "isLinkLocalMulticast"
        | "isLinkLocalUnicast"
        | "isGlobalUnicast" => fixed(1),
        "containsIP" | "containsCIDR" if args.len() >= 2 && is_member(ids) => {
            let sz = SizeEstimate { min: 4, max: 16 };
            let mut c = size_factor(
                SizeEstimate {
                    min: sz.min * 2,
                    max: sz.max * 2,
                },
                STRING_TRAVERSAL,
            );
            if function == "containsCIDR" {
                c = plus(c, size_factor(sz, STRING_TRAVERSAL));
                c = plus(c, CostEstimate::fixed(1));
            }
            if has("cidr_contains_ip_string") || has("cidr_contains_cidr_string") {
                c = plus(c, size_factor(args[1].size, STRING_TRAVERSAL));
            }
            cost(c)
        }
        "validate" if args.len() >= 2 => cost(cost_factor(
            size_factor(args[1].size, STRING_TRAVERSAL),
            MAX_NAME_FORMAT_REGEX_SIZE * REGEX_LENGTH,
        )),
        "format.named" => fixed(1),
        "sign" | "asInteger" | "isInteger" | "asApproximateFloat" | "isGreaterThan"
        | "isLessThan" | "compareTo" | "add" | "sub" | "major" | "minor" | "patch"
            if !ids.is_empty()
                && ids
                    .iter()
                    .all(|i| i.starts_with("quantity_") || i.starts_with("semver_")) =>
        {
            fixed(1)
        }
        "getScheme" | "getHostname" | "getHost" | "getPort" | "getEscapedPath" | "getQuery" => {
            fixed(1)
        }
        "_==_" if args.len() == 2 && args[0].ty == args[1].ty => match opaque_name(args[0].ty)? {
            ip::IP_TYPE | ip::CIDR_TYPE | quantity::TYPE_NAME | semver::TYPE_NAME => fixed(1),
            format::TYPE_NAME => cost(size_factor(
                SizeEstimate {
                    min: 1,
                    max: MAX_FORMAT_SIZE,
                },
                STRING_TRAVERSAL,
            )),
            urls::TYPE_NAME => fixed(1),
            _ => None,
        },
        _ => None,
    }
}

/// `actualSize`: the size of sized values (strings in code points), else 1.
fn actual_size(v: &Value) -> u64 {
    match v {
        Value::String(s) => s.chars().count() as u64,
        Value::Bytes(b) => b.len() as u64,
        Value::List(l) => l.len() as u64,
        Value::Map(m) => m.len() as u64,
        _ => 1,
    }
}

/// `traversalCost`: a walk of the value's tree (strings a tenth of their bytes, rounded down).
fn traversal(v: &Value) -> u64 {
    match v {
        Value::String(s) => (s.len() as f64 * STRING_TRAVERSAL) as u64,
        Value::Bytes(b) => (b.len() as f64 * STRING_TRAVERSAL) as u64,
        Value::List(l) => l.iter().map(traversal).fold(0, u64::saturating_add),
        Value::Map(m) => m
            .entries
            .values()
            .map(|(k, v)| traversal(k).saturating_add(traversal(v)))
            .fold(0, u64::saturating_add),
        _ => 1,
    }
}

/// Upstream's `CallCost`, as the runtime cost of library calls.
pub struct LibraryCosts;

impl ActualCostEstimator for LibraryCosts {
    fn call_cost(
        &self,
        function: &str,
        overload_id: &str,
        args: &[Value],
        result: &Value,
    ) -> Option<u64> {
        let size = |i: usize| args.get(i).map_or(1, actual_size);
        let opaque = |v: Option<&Value>| matches!(v, Some(Value::Opaque(_)));
        match function {
            "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
                Some(args.first().map_or(0, traversal))
            }
            "url" | "lowerAscii" | "upperAscii" | "substring" | "trim" if !args.is_empty() => {
                Some(factor(size(0), STRING_TRAVERSAL))
            }
            "replace" | "split" if !args.is_empty() => {
                Some(factor(size(0), 2.0 * STRING_TRAVERSAL))
            }
            "join" if !args.is_empty() => Some(factor(actual_size(result), 2.0 * STRING_TRAVERSAL)),
            "find" | "findAll" if args.len() >= 2 => Some(
                factor(size(0).saturating_add(1), STRING_TRAVERSAL)
                    .saturating_mul(factor(size(1), REGEX_LENGTH)),
            ),
            "cidr" | "isIP" | "isCIDR" | "quantity" | "isQuantity" | "semver" | "isSemver"
                if !args.is_empty() =>
            {
                Some(factor(size(0), STRING_TRAVERSAL))
            }
            "ip" if overload_id == "cidr_ip" || opaque(args.first()) => Some(1),
            "ip" => Some(factor(size(0), STRING_TRAVERSAL)),
            "ip.isCanonical" => Some(factor(size(0), 2.0 * STRING_TRAVERSAL)),
            "masked"
            | "prefixLength"
            | "family"
            | "isUnspecified"
            | "isLoopback"
            | "isLinkLocalMulticast"
            | "isLinkLocalUnicast"
            | "isGlobalUnicast" => Some(1),
            "containsIP" | "containsCIDR" if args.len() >= 2 => {
                let cidr = size(0);
                let mut c = factor(cidr * 2, STRING_TRAVERSAL);
                if function == "containsCIDR" {
                    c += factor(cidr, STRING_TRAVERSAL) + 1;
                }
                if matches!(args[1], Value::String(_)) {
                    c += factor(size(1), STRING_TRAVERSAL);
                }
                Some(c)
            }
            "validate" if args.len() >= 2 => {
                let Value::Opaque(o) = &args[0] else {
                    return None;
                };
                let f = o.as_any().downcast_ref::<format::NamedFormat>()?;
                Some(
                    factor(size(1).saturating_add(1), STRING_TRAVERSAL)
                        .saturating_mul(factor(f.max_regex_size, REGEX_LENGTH)),
                )
            }
            "format.named" => Some(1),
            "sign" | "asInteger" | "isInteger" | "asApproximateFloat" | "isGreaterThan"
            | "isLessThan" | "compareTo" | "add" | "sub" | "major" | "minor" | "patch"
                if overload_id.starts_with("quantity_")
                    || overload_id.starts_with("semver_")
                    || opaque(args.first()) =>
            {
                Some(1)
            }
            "getScheme" | "getHostname" | "getHost" | "getPort" | "getEscapedPath" | "getQuery" => {
                Some(1)
            }
            "_==_" if opaque(args.first()) => Some(1),
            _ => None,
        }
    }
}
