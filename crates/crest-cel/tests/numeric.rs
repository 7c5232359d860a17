//! Ordering and equality across int, uint and double as cel-go computes them
//! (`common/types/compare.go`: int against uint exactly; a double against an int or uint beyond
//! that kind's range is beyond all of it, otherwise the integer is rounded to the nearest double
//! and the two doubles compared, so the largest int equals 2^63 as a double; NaN never equal
//! and not orderable), also inside lists and maps and for `in` (lists by equality; map keys as
//! cel-go's `Find` converts a double or an int/uint key, losslessly), at the extremes of each
//! kind.

use std::cmp::Ordering::{self, Equal as Eq, Greater as Gt, Less as Lt};

use crest_cel::env::Env;
use crest_cel::eval::{EmptyActivation, Program};
use crest_cel::value::Value;

/// Evaluates `src` unchecked (dynamic dispatch, as cel-go's `disable_check`), and checked too
/// when the checker accepts it: both must agree.
fn eval(src: &str) -> Result<Value, String> {
    eval_in(&Env::standard(), src)
}

fn eval_in(env: &Env, src: &str) -> Result<Value, String> {
    let ast = crest_cel::parser::parse(src).map_err(|e| format!("parse: {e}"))?;
    let dynamic = Program::unchecked(&ast, env)
        .eval(&EmptyActivation)
        .map_err(|e| e.to_string());
    if let Ok(checked) = env.compile(src) {
        let typed = Program::new(&checked)
            .eval(&EmptyActivation)
            .map_err(|e| e.to_string());
        assert_eq!(typed, dynamic, "checked and unchecked differ: {src}");
    }
    dynamic
}

/// `-2^63` as arithmetic (the table also writes it as the literal `-9223372036854775808`).
const MIN: &str = "(-9223372036854775807 - 1)";

/// The ordering of `lhs` against `rhs` in cel-go (None: a NaN, unordered and unequal). Each row
/// is checked with every operator, both ways round, with and without `dyn` on either side.
/// Doubles near 2^63 are 1024 apart below it and 2048 above it; near 2^64, 2048 and 4096. The
/// double literals in the cel-spec cases (`9223372036854777857.0`, `18446744073709553665.0`,
/// `18446744073709590000.0`, `-9223372036854775809.0`) are the doubles they round to.
const TABLE: &[(&str, &str, Option<Ordering>)] = &[
    // int against double near 2^63: the int is rounded to a double first.
    ("9223372036854775807", "9223372036854775808.0", Some(Eq)),
    ("9223372036854775807", "9223372036854775807.0", Some(Eq)),
    ("9223372036854775807", "9.223372036854775807e18", Some(Eq)),
    ("9223372036854775807", "9223372036854774784.0", Some(Gt)),
    ("9223372036854775807", "9223372036854777856.0", Some(Lt)),
    ("9223372036854775807", "9223372036854777857.0", Some(Lt)),
    // 2^63 - 512 rounds up to 2^63 (ties to even), 2^63 - 513 down to 2^63 - 1024.
    ("9223372036854775296", "9223372036854775808.0", Some(Eq)),
    ("9223372036854775295", "9223372036854775808.0", Some(Lt)),
    ("9223372036854775295", "9223372036854774784.0", Some(Eq)),
    // int against double near -2^63.
    ("-9223372036854775808", "-9223372036854775808.0", Some(Eq)),
    ("-9223372036854775808", "-9223372036854775809.0", Some(Eq)),
    ("-9223372036854775808", "-9223372036854777856.0", Some(Gt)),
    ("-9223372036854775808", "-9223372036854777857.0", Some(Gt)),
    ("-9223372036854775807", "-9223372036854775808.0", Some(Eq)),
    ("-9223372036854775807", "-9223372036854774784.0", Some(Lt)),
    // int against double near 2^53.
    ("9007199254740993", "9007199254740992.0", Some(Eq)),
    ("9007199254740993", "9007199254740994.0", Some(Lt)),
    ("9007199254740995", "9007199254740996.0", Some(Eq)),
    ("-9007199254740993", "-9007199254740992.0", Some(Eq)),
    ("100000000000000001", "1e17", Some(Eq)),
    ("9007199254740992", "9007199254740992.0", Some(Eq)),
    // int against small, zero, huge and infinite doubles.
    ("0", "0.0", Some(Eq)),
    ("0", "-0.0", Some(Eq)),
    ("0", "5e-324", Some(Lt)),
    ("0", "-5e-324", Some(Gt)),
    ("1", "1.0000000000000002", Some(Lt)),
    ("1", "0.9999999999999999", Some(Gt)),
    ("1", "1.5", Some(Lt)),
    ("-1", "-0.5", Some(Lt)),
    ("9223372036854775807", "1e300", Some(Lt)),
    ("-9223372036854775808", "-1e300", Some(Gt)),
    ("9223372036854775807", "double('Infinity')", Some(Lt)),
    ("-9223372036854775808", "double('-Infinity')", Some(Gt)),
    ("0", "double('NaN')", None),
    ("9223372036854775807", "double('NaN')", None),
    ("-9223372036854775808", "double('NaN')", None),
    // uint against double near 2^64: the uint is rounded to a double first.
    ("18446744073709551615u", "18446744073709551616.0", Some(Eq)),
    ("18446744073709551615u", "18446744073709551615.0", Some(Eq)),
    ("18446744073709551615u", "18446744073709549568.0", Some(Gt)),
    ("18446744073709551615u", "18446744073709555712.0", Some(Lt)),
    ("18446744073709551615u", "18446744073709553665.0", Some(Lt)),
    ("18446744073709551615u", "18446744073709590000.0", Some(Lt)),
    // 2^64 - 1024 rounds up to 2^64 (ties to even), 2^64 - 1025 down to 2^64 - 2048.
    ("18446744073709550592u", "18446744073709551616.0", Some(Eq)),
    ("18446744073709550591u", "18446744073709551616.0", Some(Lt)),
    ("18446744073709550591u", "18446744073709549568.0", Some(Eq)),
    // uint against double near 2^63 and 2^53.
    ("9223372036854775808u", "9223372036854775808.0", Some(Eq)),
    ("9223372036854775807u", "9223372036854775808.0", Some(Eq)),
    ("9223372036854775807u", "-1.0", Some(Gt)),
    ("9007199254740993u", "9007199254740992.0", Some(Eq)),
    // uint against negative, zero, huge and infinite doubles.
    ("0u", "0.0", Some(Eq)),
    ("0u", "-0.0", Some(Eq)),
    ("0u", "5e-324", Some(Lt)),
    ("0u", "-5e-324", Some(Gt)),
    ("0u", "-0.5", Some(Gt)),
    ("0u", "-1e300", Some(Gt)),
    ("0u", "double('-Infinity')", Some(Gt)),
    ("18446744073709551615u", "-1.0", Some(Gt)),
    ("1u", "1.0000000000000002", Some(Lt)),
    ("18446744073709551615u", "1e300", Some(Lt)),
    ("18446744073709551615u", "double('Infinity')", Some(Lt)),
    ("0u", "double('NaN')", None),
    ("18446744073709551615u", "double('NaN')", None),
    // int against uint: exact. With the rows above, 9223372036854775807 and
    // 9223372036854775808u both equal 2^63 as a double but not each other.
    ("-1", "0u", Some(Lt)),
    ("-1", "18446744073709551615u", Some(Lt)),
    ("-9223372036854775808", "0u", Some(Lt)),
    ("0", "0u", Some(Eq)),
    ("1", "0u", Some(Gt)),
    ("9223372036854775807", "9223372036854775807u", Some(Eq)),
    ("9223372036854775807", "9223372036854775808u", Some(Lt)),
    ("9223372036854775807", "18446744073709551615u", Some(Lt)),
    // Within a kind.
    ("9223372036854775807", "-9223372036854775808", Some(Gt)),
    ("18446744073709551615u", "0u", Some(Gt)),
    ("-0.0", "0.0", Some(Eq)),
    ("9223372036854775807.0", "9223372036854775808.0", Some(Eq)),
    ("9223372036854774784.0", "9223372036854775808.0", Some(Lt)),
    ("double('Infinity')", "double('Infinity')", Some(Eq)),
    ("double('-Infinity')", "-1e308", Some(Lt)),
    ("double('NaN')", "double('NaN')", None),
    ("double('NaN')", "0.0", None),
];

/// `a op b` as cel-go evaluates it, given the ordering of `a` against `b`.
fn expected(op: &str, o: Option<Ordering>) -> Result<Value, String> {
    let b = match (op, o) {
        ("==", o) => o == Some(Eq),
        ("!=", o) => o != Some(Eq),
        (_, None) => return Err("NaN values cannot be ordered".to_string()),
        ("<", Some(o)) => o == Lt,
        ("<=", Some(o)) => o != Gt,
        (">", Some(o)) => o == Gt,
        (_, Some(o)) => o != Lt,
    };
    Ok(Value::Bool(b))
}

#[test]
fn ordering_and_equality_table() {
    let env = Env::standard();
    let mut failures = vec![];
    for (lhs, rhs, order) in TABLE {
        for (a, b, o) in [(lhs, rhs, *order), (rhs, lhs, order.map(Ordering::reverse))] {
            for op in ["<", "<=", ">", ">=", "==", "!="] {
                let want = expected(op, o);
                for src in [
                    format!("{a} {op} {b}"),
                    format!("dyn({a}) {op} {b}"),
                    format!("{a} {op} dyn({b})"),
                    format!("dyn({a}) {op} dyn({b})"),
                ] {
                    let got = eval_in(&env, &src);
                    if got != want {
                        failures.push(format!("{src}: got {got:?}, want {want:?}"));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The cel-spec `comparisons` cases near 2^63 and 2^64 under `dyn`, verbatim.
#[test]
fn cel_spec_lossy_comparisons() {
    for (src, want) in [
        ("dyn(9223372036854775807) < 9223372036854775808.0", false),
        ("dyn(9223372036854775807) < 9223372036854777857.0", true),
        ("dyn(-9223372036854775808) < -9223372036854775809.0", false),
        ("dyn(18446744073709551615u) < 18446744073709590000.0", true),
        ("dyn(18446744073709553665.0) < 18446744073709551615u", false),
        ("dyn(9223372036854775808.0) < 9223372036854775807", false),
        ("dyn(-9223372036854775809.0) < -9223372036854775808", false),
        ("dyn(9223372036854775807) > 9223372036854775808.0", false),
        ("dyn(-9223372036854775808) > -9223372036854775809.0", false),
        ("dyn(-9223372036854775808) > -9223372036854777857.0", true),
        ("dyn(18446744073709551615u) > 18446744073709590000.0", false),
        ("dyn(18446744073709553665.0) > 18446744073709551615u", true),
        ("dyn(9223372036854775808.0) > 9223372036854775807", false),
        ("dyn(-9223372036854775809.0) > -9223372036854775808", false),
        ("dyn(9223372036854775807) <= 9223372036854775808.0", true),
        ("dyn(-9223372036854775808) <= -9223372036854775809.0", true),
        ("dyn(-9223372036854775808) <= -9223372036854777857.0", false),
        ("dyn(18446744073709551615u) <= 18446744073709590000.0", true),
        (
            "dyn(18446744073709553665.0) <= 18446744073709551615u",
            false,
        ),
        ("dyn(9223372036854775808.0) <= 9223372036854775807", true),
        ("dyn(-9223372036854775809.0) <= -9223372036854775808", true),
        ("dyn(9223372036854775807) >= 9223372036854775808.0", true),
        ("dyn(9223372036854775807) >= 9223372036854777857.0", false),
        ("dyn(-9223372036854775808) >= -9223372036854775809.0", true),
        ("dyn(-9223372036854775808) >= -9223372036854777857.0", true),
        (
            "dyn(18446744073709551615u) >= 18446744073709553665.0",
            false,
        ),
        ("dyn(18446744073709553665.0) >= 18446744073709551615u", true),
        ("dyn(9223372036854775808.0) >= 9223372036854775807", true),
        ("dyn(-9223372036854775809.0) >= -9223372036854775808", true),
    ] {
        assert_eq!(eval(src), Ok(Value::Bool(want)), "{src}");
    }
}

#[test]
fn equality_across_kinds() {
    let cases: Vec<(String, bool)> = vec![
        ("dyn(1) == 1.0".into(), true),
        ("dyn(1u) == 1".into(), true),
        ("dyn(1u) == 1.0".into(), true),
        ("dyn(1) == 1.5".into(), false),
        ("dyn(0) == -0.0 && dyn(0u) == -0.0".into(), true),
        // Lossy: the int or uint is rounded to a double.
        (
            "dyn(9223372036854775807) == 9223372036854775807.0".into(),
            true,
        ),
        (
            "dyn(9223372036854775807) != 9223372036854775807.0".into(),
            false,
        ),
        ("dyn(9007199254740993) == 9007199254740992.0".into(), true),
        ("dyn(9007199254740992) == 9007199254740992.0".into(), true),
        (
            "dyn(18446744073709551615u) == 18446744073709551615.0".into(),
            true,
        ),
        (
            "dyn(9223372036854775808u) == 9223372036854775808.0".into(),
            true,
        ),
        (
            "dyn(9223372036854775807) == 9223372036854775807u".into(),
            true,
        ),
        ("dyn(-1) == 18446744073709551615u".into(), false),
        (format!("dyn({MIN}) == -9223372036854775808.0"), true),
        ("dyn(1) == '1'".into(), false),
        ("dyn(1) != '1'".into(), true),
        ("dyn(0) == false || dyn(0) == null".into(), false),
        // NaN equals nothing, itself included.
        ("double('NaN') == double('NaN')".into(), false),
        ("double('NaN') != double('NaN')".into(), true),
        (
            "dyn(double('NaN')) == 1 || dyn(1u) == double('NaN')".into(),
            false,
        ),
        // Inside lists and maps.
        ("[1, 2] == dyn([1.0, 2u])".into(), true),
        (
            "[9007199254740993] == dyn([9007199254740992.0])".into(),
            true,
        ),
        (
            "[9007199254740993] == dyn([9007199254740994.0])".into(),
            false,
        ),
        ("{1: 'a'} == dyn({1u: 'a'})".into(), true),
        ("{'a': 1} == dyn({'a': 1.0})".into(), true),
        ("{'a': [1u]} == dyn({'a': [1.0]})".into(), true),
        ("[double('NaN')] == [double('NaN')]".into(), false),
        ("{'k': double('NaN')} != {'k': double('NaN')}".into(), true),
    ];
    for (src, want) in cases {
        assert_eq!(eval(&src), Ok(Value::Bool(want)), "{src}");
    }
}

#[test]
fn membership_across_kinds() {
    let cases: Vec<(String, bool)> = vec![
        // Lists: equality (lossy, as `==`).
        ("dyn(1) in [1.0]".into(), true),
        ("dyn(1u) in [1]".into(), true),
        ("dyn(2.0) in [1, 2u]".into(), true),
        ("dyn(1.5) in [1, 2]".into(), false),
        (
            "dyn(9223372036854775807) in [9223372036854775807.0]".into(),
            true,
        ),
        ("dyn(9007199254740993) in [9007199254740992.0]".into(), true),
        (
            "dyn(9007199254740993) in [9007199254740994.0]".into(),
            false,
        ),
        (format!("dyn({MIN}) in [-9223372036854775808.0]"), true),
        ("dyn(-0.0) in [0u]".into(), true),
        ("double('NaN') in [double('NaN')]".into(), false),
        ("dyn('1') in [1]".into(), false),
        // Maps: keys found as cel-go's Find converts them, losslessly (a double to an int
        // strictly between -2^63 and 2^63, else a uint below 2^64; an int to a uint and back),
        // so unlike `==` a double finds no key it only equals after rounding.
        ("dyn(1.0) in {1: 'a'}".into(), true),
        ("dyn(1.0) in {1u: 'a'}".into(), true),
        ("dyn(1u) in {1: 'a'}".into(), true),
        ("dyn(1) in {1u: 'a'}".into(), true),
        ("dyn(-1) in {18446744073709551615u: 'a'}".into(), false),
        ("dyn(1.5) in {1: 'a'}".into(), false),
        ("dyn(-0.0) in {0: 'a'}".into(), true),
        (
            "dyn(9223372036854775808.0) in {9223372036854775808u: 'a'}".into(),
            true,
        ),
        (
            "dyn(9223372036854775807.0) in {9223372036854775807: 'a'}".into(),
            false,
        ),
        (
            "dyn(18446744073709551615.0) in {18446744073709551615u: 'a'}".into(),
            false,
        ),
        (
            format!("dyn(-9223372036854775808.0) in {{{MIN}: 'a'}}"),
            false,
        ),
        (
            format!("dyn(-9223372036854775807.0) in {{{MIN}: 'a'}}"),
            false,
        ),
        (
            "dyn(-9223372036854774784.0) in {-9223372036854774784: 'a'}".into(),
            true,
        ),
        ("dyn(double('NaN')) in {1: 'a'}".into(), false),
        ("dyn(double('Infinity')) in {1: 'a'}".into(), false),
        ("dyn(null) in {1: 'a'}".into(), false),
        ("dyn('1') in {1: 'a'}".into(), false),
        (
            "{1: 'x'}[dyn(1.0)] == 'x' && {1u: 'x'}[dyn(1)] == 'x' && {1: 'x'}[dyn(1u)] == 'x'"
                .into(),
            true,
        ),
    ];
    for (src, want) in cases {
        assert_eq!(eval(&src), Ok(Value::Bool(want)), "{src}");
    }
    for (src, want) in [
        (
            format!("{{{MIN}: 'a'}}[dyn(-9223372036854775808.0)]"),
            "no such key",
        ),
        ("{1: 'a'}[dyn(1.5)]".to_string(), "no such key"),
    ] {
        let got = eval(&src);
        assert!(matches!(&got, Err(e) if e.contains(want)), "{src}: {got:?}");
    }
}

#[test]
fn nan_cannot_be_ordered() {
    let nan = "double('NaN')";
    for src in [
        format!("{nan} < 1.0"),
        format!("1.0 > {nan}"),
        format!("{nan} <= {nan}"),
        format!("{nan} >= 0"),
        format!("1 < {nan}"),
        format!("1u >= {nan}"),
        format!("dyn({nan}) < 1"),
        format!("dyn({nan}) > 0u"),
        // NaN on the left has no order with anything, not even a string.
        format!("dyn({nan}) < dyn('a')"),
    ] {
        assert_eq!(
            eval(&src),
            Err("NaN values cannot be ordered".to_string()),
            "{src}"
        );
    }
    // A string on the left has no overload for a double.
    let got = eval(&format!("dyn('a') < dyn({nan})"));
    assert!(
        matches!(&got, Err(e) if e.starts_with("no such overload")),
        "{got:?}"
    );
    // Errors are absorbed by || and && as usual.
    assert_eq!(eval(&format!("{nan} < 1.0 || true")), Ok(Value::Bool(true)));
    assert_eq!(
        eval(&format!("false && {nan} < 1.0")),
        Ok(Value::Bool(false))
    );
}

#[test]
fn conversions_at_the_extremes() {
    for (src, want) in [
        ("uint(-0.0) == 0u", Ok(Value::Bool(true))),
        ("uint(0.9) == 0u", Ok(Value::Bool(true))),
        (
            "uint(18446744073709549568.0) == 18446744073709549568u",
            Ok(Value::Bool(true)),
        ),
        (
            "int(-9223372036854774784.0) == -9223372036854774784",
            Ok(Value::Bool(true)),
        ),
    ] {
        assert_eq!(eval(src), want, "{src}");
    }
    for (src, want) in [
        ("uint(-0.5)", "range error converting double to uint"),
        ("uint(-1.0)", "range error converting double to uint"),
        (
            "uint(18446744073709551615.0)",
            "range error converting double to uint",
        ),
        (
            "int(9223372036854775807.0)",
            "range error converting double to int",
        ),
        (
            "int(-9223372036854775808.0)",
            "range error converting double to int",
        ),
    ] {
        assert_eq!(eval(src), Err(want.to_string()), "{src}");
    }
}
