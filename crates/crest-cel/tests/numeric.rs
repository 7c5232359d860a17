//! Ordering and equality across int, uint and double as current cel-go computes them
//! (`common/types/compare.go`: exact, a double beyond the other kind's range is beyond all of
//! it, otherwise compared as big floats; NaN never equal and not orderable), also inside lists
//! and maps and for `in` (lists by equality; map keys as cel-go's `Find` converts a double or
//! an int/uint key), at the extremes of each kind.

use crest_cel::env::Env;
use crest_cel::eval::{EmptyActivation, Program};
use crest_cel::value::Value;

/// Evaluates `src` unchecked (dynamic dispatch, as cel-go's `disable_check`), and checked too
/// when the checker accepts it: both must agree.
fn eval(src: &str) -> Result<Value, String> {
    let env = Env::standard();
    let ast = crest_cel::parser::parse(src).map_err(|e| format!("parse: {e}"))?;
    let dynamic = Program::unchecked(&ast, &env)
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

/// `-2^63`, which has no literal of its own.
const MIN: &str = "(-9223372036854775807 - 1)";

#[test]
fn comparisons_at_the_extremes() {
    let cases: Vec<(String, bool)> = vec![
        // int vs double: 9223372036854775807.0 is 2^63, one above the largest int.
        ("9223372036854775807 < 9223372036854775807.0".into(), true),
        (
            "9223372036854775807 <= 9.223372036854775807e18".into(),
            true,
        ),
        (
            "9223372036854775807 >= 9.223372036854775807e18".into(),
            false,
        ),
        ("9223372036854775807.0 > 9223372036854775807".into(), true),
        ("9223372036854775807 > 9223372036854774784.0".into(), true),
        (format!("{MIN} == -9223372036854775808.0"), true),
        (format!("{MIN} <= -9223372036854775808.0"), true),
        (format!("{MIN} < -9223372036854775808.0"), false),
        (format!("{MIN} > -9223372036854777856.0"), true),
        (format!("-9223372036854775808.0 >= {MIN}"), true),
        // Beyond 2^53 ints are not rounded to doubles.
        ("9007199254740993 > 9007199254740992.0".into(), true),
        ("9007199254740992.0 < 9007199254740993".into(), true),
        ("9007199254740992 >= 9007199254740992.0".into(), true),
        ("-9007199254740993 < -9007199254740992.0".into(), true),
        ("100000000000000001 > 1e17".into(), true),
        ("1000000000000000001 > 1e18".into(), true),
        (
            "1 < 1.5 && 2 > 1.5 && -1 < -0.5 && 1 <= 1.0 && 1 >= 1.0".into(),
            true,
        ),
        ("1e300 > 9223372036854775807".into(), true),
        (format!("-1e300 < {MIN}"), true),
        ("double('Infinity') > 9223372036854775807".into(), true),
        (format!("double('-Infinity') < {MIN}"), true),
        // -0.0 is zero.
        (
            "0 <= -0.0 && 0 >= -0.0 && !(0 < -0.0) && !(-0.0 < 0) && -0.0 >= 0".into(),
            true,
        ),
        ("0u <= -0.0 && !(0u > -0.0) && -0.0 <= 0u".into(), true),
        ("-0.0 < 0.0".into(), false),
        // uint vs double: 18446744073709551615.0 is 2^64, one above the largest uint.
        (
            "18446744073709551615u < 18446744073709551615.0".into(),
            true,
        ),
        (
            "18446744073709551615u >= 18446744073709551616.0".into(),
            false,
        ),
        (
            "18446744073709551615u > 18446744073709549568.0".into(),
            true,
        ),
        (
            "18446744073709551616.0 > 18446744073709551615u".into(),
            true,
        ),
        ("9223372036854775808u <= 9223372036854775808.0".into(), true),
        ("9007199254740993u > 9007199254740992.0".into(), true),
        (
            "0u > -0.5 && 0u > -1e300 && 0u > double('-Infinity')".into(),
            true,
        ),
        ("1u < 1.0000000000000002".into(), true),
        ("double('Infinity') > 18446744073709551615u".into(), true),
        // int vs uint.
        ("-1 < 0u && 0u > -1".into(), true),
        (format!("{MIN} < 0u"), true),
        ("9223372036854775807 < 9223372036854775808u".into(), true),
        ("9223372036854775808u > 9223372036854775807".into(), true),
        ("9223372036854775807 <= 9223372036854775807u".into(), true),
        ("18446744073709551615u > 9223372036854775807".into(), true),
        ("-1 >= 18446744073709551615u".into(), false),
    ];
    for (src, want) in cases {
        assert_eq!(eval(&src), Ok(Value::Bool(want)), "{src}");
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
        (
            "dyn(9223372036854775807) == 9223372036854775807.0".into(),
            false,
        ),
        (
            "dyn(9223372036854775807) != 9223372036854775807.0".into(),
            true,
        ),
        ("dyn(9007199254740993) == 9007199254740992.0".into(), false),
        ("dyn(9007199254740992) == 9007199254740992.0".into(), true),
        (
            "dyn(18446744073709551615u) == 18446744073709551615.0".into(),
            false,
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
        // Lists: equality.
        ("dyn(1) in [1.0]".into(), true),
        ("dyn(1u) in [1]".into(), true),
        ("dyn(2.0) in [1, 2u]".into(), true),
        ("dyn(1.5) in [1, 2]".into(), false),
        (
            "dyn(9223372036854775807) in [9223372036854775807.0]".into(),
            false,
        ),
        (
            "dyn(9007199254740993) in [9007199254740992.0]".into(),
            false,
        ),
        (format!("dyn({MIN}) in [-9223372036854775808.0]"), true),
        ("dyn(-0.0) in [0u]".into(), true),
        ("double('NaN') in [double('NaN')]".into(), false),
        ("dyn('1') in [1]".into(), false),
        // Maps: keys found as cel-go's Find converts them (a double to an int strictly between
        // -2^63 and 2^63, else a uint below 2^64; an int to a uint and back).
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
