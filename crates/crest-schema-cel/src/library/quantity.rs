//! Kubernetes' quantity library (apiserver `library/quantity.go`) over a port of apimachinery's
//! `resource.Quantity`: the same parser (suffixes, the int64 fast path, rounding up to nano
//! units, the BinarySI cap) and the same two representations, because `isInteger`/`asInteger`
//! answer from the representation (`quantity("1.0").isInteger()` is false upstream).

use std::cmp::Ordering;
use std::sync::Arc;

use crest_cel::decls::{Library, Overload};
use crest_cel::eval::EvalError;
use crest_cel::types::Type;
use crest_cel::value::{OpaqueValue, Value};
use num_bigint::{BigInt, Sign};
use num_traits::{ToPrimitive, Zero};

pub const TYPE_NAME: &str = "kubernetes.Quantity";

const SPLIT_RE: &str = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";

pub fn err_format_wrong() -> String {
    format!("quantities must match the regular expression '{SPLIT_RE}'")
}
const ERR_NUMERIC: &str = "unable to parse numeric part of quantity";
/// The largest decimal exponent a parsed quantity may have (`1e100000` is fine; comparing
/// `1e2000000000` with `1` would build a number of two billion digits, as Go's inf.Dec does:
/// such quantities are refused, and a zero's exponent dropped).
const MAX_DIGITS: i64 = 100_000;
const ERR_SUFFIX: &str = "unable to parse quantity's suffix";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    DecimalExponent,
    BinarySI,
    DecimalSI,
}

/// apimachinery's two representations: `int64Amount` (value x 10^scale) and `inf.Dec`
/// (unscaled x 10^-scale).
#[derive(Debug, Clone)]
enum Amount {
    Int { value: i64, scale: i32 },
    Dec { unscaled: BigInt, scale: i32 },
}

#[derive(Debug, Clone)]
pub struct Quantity {
    amount: Amount,
    pub format: Format,
}

fn pow10(n: u32) -> BigInt {
    num_traits::pow(BigInt::from(10), n as usize)
}

/// value x 10^scale with overflow detection (`positiveScaleInt64`).
fn scale_i64(value: i64, scale: i32) -> Option<i64> {
    let mut v = value;
    for _ in 0..scale.max(0) {
        v = v.checked_mul(10)?;
    }
    Some(v)
}

impl Amount {
    /// As (unscaled, scale) with value = unscaled x 10^-scale.
    fn as_dec(&self) -> (BigInt, i32) {
        match self {
            Amount::Int { value, scale } => (BigInt::from(*value), -scale),
            Amount::Dec { unscaled, scale } => (unscaled.clone(), *scale),
        }
    }

    fn sign(&self) -> i64 {
        match self {
            Amount::Int { value, .. } => value.signum(),
            Amount::Dec { unscaled, .. } => match unscaled.sign() {
                Sign::Minus => -1,
                Sign::NoSign => 0,
                Sign::Plus => 1,
            },
        }
    }
}

fn dec_cmp(a: &(BigInt, i32), b: &(BigInt, i32)) -> Ordering {
    let s = a.1.max(b.1);
    let x = &a.0 * pow10((s - a.1) as u32);
    let y = &b.0 * pow10((s - b.1) as u32);
    x.cmp(&y)
}

fn dec_add(a: &(BigInt, i32), b: &(BigInt, i32)) -> (BigInt, i32) {
    let s = a.1.max(b.1);
    (
        &a.0 * pow10((s - a.1) as u32) + &b.0 * pow10((s - b.1) as u32),
        s,
    )
}

/// `int64Amount.Add`: false when the result does not fit (the caller falls back to Dec).
fn int_add(a: (i64, i32), b: (i64, i32)) -> Option<(i64, i32)> {
    if b.0 == 0 {
        return Some(a);
    }
    if a.0 == 0 {
        return Some(b);
    }
    match a.1.cmp(&b.1) {
        Ordering::Equal => Some((a.0.checked_add(b.0)?, a.1)),
        Ordering::Greater => Some((scale_i64(a.0, a.1 - b.1)?.checked_add(b.0)?, b.1)),
        Ordering::Less => Some((a.0.checked_add(scale_i64(b.0, b.1 - a.1)?)?, a.1)),
    }
}

impl Quantity {
    pub fn from_int(v: i64) -> Quantity {
        Quantity {
            amount: Amount::Int { value: v, scale: 0 },
            format: Format::DecimalExponent,
        }
    }

    pub fn sign(&self) -> i64 {
        self.amount.sign()
    }

    pub fn is_zero(&self) -> bool {
        self.sign() == 0
    }

    pub fn compare(&self, o: &Quantity) -> Ordering {
        dec_cmp(&self.amount.as_dec(), &o.amount.as_dec())
    }

    /// `AsInt64`: only the int64 representation converts.
    pub fn as_i64(&self) -> Option<i64> {
        match self.amount {
            Amount::Int { value, scale } if scale >= 0 => scale_i64(value, scale),
            _ => None,
        }
    }

    pub fn as_approximate_f64(&self) -> f64 {
        let (base, exp) = match &self.amount {
            Amount::Int { value, scale } => (*value as f64, *scale),
            Amount::Dec { unscaled, scale } => (unscaled.to_f64().unwrap_or(f64::NAN), -scale),
        };
        if exp == 0 {
            return base;
        }
        base * go_pow10(exp)
    }

    pub fn add(&self, y: &Quantity) -> Quantity {
        let mut q = self.clone();
        if let (
            Amount::Int { value, scale },
            Amount::Int {
                value: yv,
                scale: ys,
            },
        ) = (&self.amount, &y.amount)
        {
            if *value == 0 {
                q.format = y.format;
            }
            if let Some((v, s)) = int_add((*value, *scale), (*yv, *ys)) {
                q.amount = Amount::Int { value: v, scale: s };
                return q;
            }
        } else if self.is_zero() {
            q.format = y.format;
        }
        let (u, s) = dec_add(&self.amount.as_dec(), &y.amount.as_dec());
        q.amount = Amount::Dec {
            unscaled: u,
            scale: s,
        };
        q
    }

    pub fn sub(&self, y: &Quantity) -> Quantity {
        let mut q = self.clone();
        if self.is_zero() {
            q.format = y.format;
        }
        if let (
            Amount::Int { value, scale },
            Amount::Int {
                value: yv,
                scale: ys,
            },
        ) = (&self.amount, &y.amount)
        {
            if let Some((v, s)) = int_add((*value, *scale), (yv.wrapping_neg(), *ys)) {
                q.amount = Amount::Int { value: v, scale: s };
                return q;
            }
        }
        let (yu, ys) = y.amount.as_dec();
        let (u, s) = dec_add(&self.amount.as_dec(), &(-yu, ys));
        q.amount = Amount::Dec {
            unscaled: u,
            scale: s,
        };
        q
    }
}

/// Go's `math.Pow10`: exact powers of ten within range, 0 or +Inf beyond.
fn go_pow10(n: i32) -> f64 {
    if n < -323 {
        0.0
    } else if n > 308 {
        f64::INFINITY
    } else {
        format!("1e{n}").parse().unwrap_or(f64::NAN)
    }
}

struct Parsed<'a> {
    positive: bool,
    value: &'a str,
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

/// apimachinery `parseQuantityString`: sign, numerator (leading zeros stripped), optional
/// fraction, then a suffix of SI letters or an exponent.
fn scan(s: &str) -> Result<Parsed<'_>, String> {
    let b = s.as_bytes();
    let end = b.len();
    let mut p = Parsed {
        positive: true,
        value: "",
        num: "",
        denom: "",
        suffix: "",
    };
    let mut pos = 0;
    if pos < end {
        match b[0] {
            b'-' => {
                p.positive = false;
                pos += 1;
            }
            b'+' => pos += 1,
            _ => {}
        }
    }
    while pos < end && b[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        p.num = "0";
        p.value = "0";
        return Ok(p);
    }
    let start = pos;
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos >= end {
        p.num = &s[start..];
        p.value = s;
        return Ok(p);
    }
    p.num = if pos == start { "0" } else { &s[start..pos] };
    if b[pos] == b'.' {
        pos += 1;
        let ds = pos;
        while pos < end && b[pos].is_ascii_digit() {
            pos += 1;
        }
        p.denom = &s[ds..pos];
        if pos >= end {
            p.value = s;
            return Ok(p);
        }
    }
    p.value = &s[..pos];
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos < end && (b[pos] == b'-' || b[pos] == b'+') {
        pos += 1;
    }
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(err_format_wrong());
    }
    p.suffix = &s[suffix_start..];
    Ok(p)
}

/// `quantitySuffixer.interpret`: (base, exponent, format).
fn interpret(suffix: &str) -> Option<(u32, i32, Format)> {
    let bin = |e| Some((2, e, Format::BinarySI));
    let dec = |e| Some((10, e, Format::DecimalSI));
    match suffix {
        "Ki" => bin(10),
        "Mi" => bin(20),
        "Gi" => bin(30),
        "Ti" => bin(40),
        "Pi" => bin(50),
        "Ei" => bin(60),
        "n" => dec(-9),
        "u" => dec(-6),
        "m" => dec(-3),
        "" => dec(0),
        "k" => dec(3),
        "M" => dec(6),
        "G" => dec(9),
        "T" => dec(12),
        "P" => dec(15),
        "E" => dec(18),
        s if s.len() > 1 && (s.starts_with('e') || s.starts_with('E')) => {
            let e: i64 = go_parse_int(&s[1..])?;
            Some((10, e as i32, Format::DecimalExponent))
        }
        _ => None,
    }
}

/// `strconv.ParseInt(s, 10, 64)`: an optional sign, then decimal digits.
fn go_parse_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `inf.Dec.SetString`: [sign] digits [. digits], at least one digit.
fn parse_dec(s: &str) -> Option<(BigInt, i32)> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let digits = format!("{int}{frac}");
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut u: BigInt = digits.parse().ok()?;
    if neg {
        u = -u;
    }
    Some((u, frac.len() as i32))
}

/// `resource.ParseQuantity`.
pub fn parse(s: &str) -> Result<Quantity, String> {
    if s.is_empty() {
        return Err(err_format_wrong());
    }
    if s == "0" {
        return Ok(Quantity {
            amount: Amount::Int { value: 0, scale: 0 },
            format: Format::DecimalSI,
        });
    }
    let p = scan(s)?;
    let (base, exponent, format) = interpret(p.suffix).ok_or(ERR_SUFFIX)?;
    let mut scale = 0i32;
    let mut mantissa = 1i64;
    let precision: i32 = match format {
        Format::DecimalExponent | Format::DecimalSI => {
            scale = exponent;
            18 - (p.num.len() + p.denom.len()) as i32
        }
        Format::BinarySI if exponent >= 0 && p.denom.is_empty() => {
            mantissa <<= exponent;
            15 - p.num.len() as i32 - (exponent as f32 * 3.0 / 10.0) as i32 - 1
        }
        Format::BinarySI => -1,
    };
    if precision >= 0 {
        // int32 arithmetic wraps in Go (an exponent of -2147483648 with a fraction).
        scale = scale.wrapping_sub(p.denom.len() as i32);
        if scale >= -9 {
            let shifted = format!("{}{}", p.num, p.denom);
            let value: i64 = go_parse_int(&shifted).ok_or(ERR_NUMERIC)?;
            if let Some(mut r) = value.checked_mul(mantissa) {
                if !p.positive {
                    r = -r;
                }
                // Comparing or adding scales this far apart would build 10^scale.
                if i64::from(scale).abs() > MAX_DIGITS {
                    if r != 0 {
                        return Err(ERR_NUMERIC.into());
                    }
                    scale = 0;
                }
                return Ok(Quantity {
                    amount: Amount::Int { value: r, scale },
                    format,
                });
            }
        }
    }
    let (mut u, mut sc) = parse_dec(p.value).ok_or(ERR_NUMERIC)?;
    if base == 10 {
        sc = sc.wrapping_sub(exponent);
    } else {
        u *= num_traits::pow(BigInt::from(2), exponent as usize);
    }
    let negative = u.sign() == Sign::Minus;
    if negative {
        u = -u;
    }
    let mut format = format;
    if !u.is_zero() {
        // Round up (away from zero) to nano units.
        if sc > 9 {
            let k = (sc - 9) as u32;
            if u64::from(k) >= u.bits() {
                // 0 < u < 2^bits <= 10^k: the value is below one nano unit and rounds up to
                // it (10^k is never built: k comes from the input and can be two billion).
                u = BigInt::from(1);
            } else {
                let d = pow10(k);
                let (q, r) = (&u / &d, &u % &d);
                u = if r.is_zero() { q } else { q + 1 };
            }
        } else {
            // Go keeps such a value unnormalized (and hangs comparing or printing it); a
            // value of more than MAX_DIGITS digits is refused instead of built.
            let k = 9 - i64::from(sc);
            if k > MAX_DIGITS {
                return Err(ERR_NUMERIC.into());
            }
            u *= pow10(k as u32);
        }
        sc = 9;
    }
    if format == Format::BinarySI {
        let max = (BigInt::from(i64::MAX), 0);
        if dec_cmp(&(u.clone(), sc), &max) == Ordering::Greater {
            (u, sc) = max;
        }
        if !u.is_zero() && dec_cmp(&(u.clone(), sc), &(BigInt::from(1), 0)) == Ordering::Less {
            format = Format::DecimalSI;
        }
    }
    if u.is_zero() && i64::from(sc).abs() > MAX_DIGITS {
        sc = 0;
    }
    if negative {
        u = -u;
    }
    Ok(Quantity {
        amount: Amount::Dec {
            unscaled: u,
            scale: sc,
        },
        format,
    })
}

impl OpaqueValue for Quantity {
    fn type_name(&self) -> &str {
        TYPE_NAME
    }
    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        other
            .as_any()
            .downcast_ref::<Quantity>()
            .is_some_and(|o| self.compare(o) == Ordering::Equal)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

pub fn ty() -> Type {
    Type::Opaque(TYPE_NAME.into(), vec![])
}

fn q(v: &Value) -> Result<&Quantity, EvalError> {
    match v {
        Value::Opaque(o) => o
            .as_any()
            .downcast_ref::<Quantity>()
            .ok_or_else(|| EvalError::new("no such overload")),
        _ => Err(EvalError::new("no such overload")),
    }
}

fn wrap(x: Quantity) -> Value {
    Value::Opaque(Arc::new(x))
}

fn unary(
    id: &str,
    member: bool,
    result: Type,
    f: impl Fn(&Quantity) -> Result<Value, EvalError> + Send + Sync + 'static,
) -> Overload {
    let o = if member {
        Overload::member(id, vec![ty()], result)
    } else {
        Overload::global(id, vec![ty()], result)
    };
    o.implement(move |a| match a {
        [x] => f(q(x)?),
        _ => Err(EvalError::new("no such overload")),
    })
}

fn binary(
    id: &str,
    other: Type,
    result: Type,
    f: impl Fn(&Quantity, &Value) -> Result<Value, EvalError> + Send + Sync + 'static,
) -> Overload {
    Overload::member(id, vec![ty(), other], result).implement(move |a| match a {
        [x, y] => f(q(x)?, y),
        _ => Err(EvalError::new("no such overload")),
    })
}

fn int_arg(v: &Value) -> Result<Quantity, EvalError> {
    match v {
        Value::Int(i) => Ok(Quantity::from_int(*i)),
        _ => Err(EvalError::new("no such overload")),
    }
}

pub fn library() -> Library {
    let cmp = |x: &Quantity, y: &Value| -> Result<Ordering, EvalError> { Ok(x.compare(q(y)?)) };
    Library::new("kubernetes.quantity")
        .function(
            "quantity",
            [
                Overload::global("string_to_quantity", vec![Type::String], ty()).implement(|a| {
                    match a {
                        [Value::String(s)] => parse(s).map(wrap).map_err(EvalError::new),
                        _ => Err(EvalError::new("no such overload")),
                    }
                }),
            ],
        )
        .function(
            "isQuantity",
            [
                Overload::global("is_quantity_string", vec![Type::String], Type::Bool).implement(
                    |a| match a {
                        [Value::String(s)] => Ok(Value::Bool(parse(s).is_ok())),
                        _ => Err(EvalError::new("no such overload")),
                    },
                ),
            ],
        )
        // A global function upstream: `sign(q)`, not `q.sign()`.
        .function(
            "sign",
            [unary("quantity_sign", false, Type::Int, |x| {
                Ok(Value::Int(x.sign()))
            })],
        )
        .function(
            "isGreaterThan",
            [binary(
                "quantity_is_greater_than",
                ty(),
                Type::Bool,
                move |x, y| Ok(Value::Bool(cmp(x, y)? == Ordering::Greater)),
            )],
        )
        .function(
            "isLessThan",
            [binary(
                "quantity_is_less_than",
                ty(),
                Type::Bool,
                move |x, y| Ok(Value::Bool(cmp(x, y)? == Ordering::Less)),
            )],
        )
        .function(
            "compareTo",
            [binary(
                "quantity_compare_to",
                ty(),
                Type::Int,
                move |x, y| Ok(Value::Int(cmp(x, y)? as i64)),
            )],
        )
        .function(
            "asApproximateFloat",
            [unary("quantity_get_float", true, Type::Double, |x| {
                Ok(Value::Double(x.as_approximate_f64()))
            })],
        )
        .function(
            "asInteger",
            [unary("quantity_get_int", true, Type::Int, |x| {
                x.as_i64()
                    .map(Value::Int)
                    .ok_or_else(|| EvalError::new("cannot convert value to integer"))
            })],
        )
        .function(
            "isInteger",
            [unary("quantity_is_integer", true, Type::Bool, |x| {
                Ok(Value::Bool(x.as_i64().is_some()))
            })],
        )
        .function(
            "add",
            [
                binary("quantity_add", ty(), ty(), |x, y| Ok(wrap(x.add(q(y)?)))),
                binary("quantity_add_int", Type::Int, ty(), |x, y| {
                    Ok(wrap(x.add(&int_arg(y)?)))
                }),
            ],
        )
        .function(
            "sub",
            [
                binary("quantity_sub", ty(), ty(), |x, y| Ok(wrap(x.sub(q(y)?)))),
                binary("quantity_sub_int", Type::Int, ty(), |x, y| {
                    Ok(wrap(x.sub(&int_arg(y)?)))
                }),
            ],
        )
}
