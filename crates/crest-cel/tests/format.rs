//! `string.format` as current cel-go prints it (`ext/formatting_v2.go`, the strings extension's
//! formatter from version 4 on): every clause against every kind of argument, non-finite
//! doubles, precisions, the errors of evaluation, and what the checker's validation of literal
//! format strings accepts and rejects. Expectations are cel-go's (its `formatting_v2_test.go`
//! and Go's `fmt`/`strconv` output for the rest).

use crest_cel::env::Env;
use crest_cel::eval::Program;
use crest_cel::types::Type;
use crest_cel::value::Value;

fn env() -> Env {
    let mut env = Env::standard();
    env.add_variable("dynNum", Type::Dyn);
    env.add_variable("i", Type::Int);
    env.add_variable("s", Type::String);
    env
}

fn eval(src: &str) -> Result<Value, String> {
    let checked = env().compile(src).map_err(|e| format!("compile: {e}"))?;
    Program::new(&checked)
        .eval(&[("dynNum", Value::Double(2.5))])
        .map_err(|e| e.to_string())
}

/// `fmt.format(args)` evaluated twice: with the arguments behind `dyn(...)`, which the
/// checker's validation does not look into, and as the list literal itself when the checker
/// accepts it; both must agree.
fn format(fmt: &str, args: &str) -> Result<String, String> {
    let dynamic = eval(&format!("{fmt}.format(dyn([{args}]))"));
    let literal = eval(&format!("{fmt}.format([{args}])"));
    if let Ok(lit) = &literal {
        assert_eq!(&dynamic, &Ok(lit.clone()), "{fmt} with [{args}]");
    }
    match dynamic? {
        Value::String(s) => Ok(s.to_string()),
        other => Err(format!("not a string: {other}")),
    }
}

#[test]
fn string_clause() {
    let cases: &[(&str, &str, &str)] = &[
        ("'no substitution'", "", "no substitution"),
        (
            "'str is %s and some more'",
            "'filler'",
            "str is filler and some more",
        ),
        ("'%% and also %%'", "", "% and also %"),
        ("'%%%s%%'", "'text'", "%text%"),
        ("'%s%%'", "'percent on the right'", "percent on the right%"),
        (
            "'%d %d %d, %s %s %s'",
            "1, 2, 3, 'A', 'B', 'C'",
            "1 2 3, A B C",
        ),
        (
            "'\\u0025\\u0025escaped \\u0025s\\u0025\\u0025'",
            "'percent'",
            "%escaped percent%",
        ),
        ("'héllo %s wörld'", "'ünïcode'", "héllo ünïcode wörld"),
        // Scalars.
        ("'%s'", "true", "true"),
        ("'%s %s'", "true, false", "true false"),
        ("'%s'", "999999999999", "999999999999"),
        ("'%s'", "-9223372036854775807 - 1", "-9223372036854775808"),
        ("'%s'", "18446744073709551615u", "18446744073709551615"),
        ("'%s'", "'a string'", "a string"),
        ("'%s'", "''", ""),
        ("'null: %s'", "null", "null: null"),
        ("'some bytes: %s'", "b'xyz'", "some bytes: xyz"),
        ("'%s'", "b'\\xffa'", "\u{fffd}a"),
        ("'%s'", "b'\\xf0\\x9f\\x98'", "\u{fffd}\u{fffd}\u{fffd}"),
        // Doubles: Go's shortest 'f' form, never an exponent.
        ("'%s'", "2.71", "2.71"),
        ("'%s'", "0.000000002", "0.000000002"),
        ("'%s'", "1e21", "1000000000000000000000"),
        ("'%s'", "1.0", "1"),
        ("'%s'", "-0.0", "-0"),
        ("'%s'", "123456789.125", "123456789.125"),
        ("'%s'", "double('NaN')", "NaN"),
        ("'%s'", "double('Infinity')", "Infinity"),
        ("'%s'", "double('-Infinity')", "-Infinity"),
        // Types, timestamps (UTC, RFC 3339 with the nanoseconds trimmed), durations (seconds).
        ("'type is %s'", "type('test string')", "type is string"),
        (
            "'%s %s %s %s %s %s'",
            "type(1), type(1u), type(null), type([]), type({}), type(type(1))",
            "int uint null_type list map type",
        ),
        (
            "'%s %s'",
            "type(timestamp('2023-02-03T23:31:20Z')), type(duration('1s'))",
            "google.protobuf.Timestamp google.protobuf.Duration",
        ),
        ("'%s'", "int", "int"),
        (
            "'%s'",
            "timestamp('2023-02-03T23:31:20+00:00')",
            "2023-02-03T23:31:20Z",
        ),
        (
            "'%s'",
            "timestamp('2023-02-03T23:31:20.12345+01:00')",
            "2023-02-03T22:31:20.12345Z",
        ),
        (
            "'%s'",
            "timestamp('0001-01-01T00:00:00Z')",
            "0001-01-01T00:00:00Z",
        ),
        ("'%s'", "duration('1h45m47s')", "6347s"),
        ("'%s'", "duration('2ns')", "0.000000002s"),
        ("'%s'", "duration('-1.5s')", "-1.5s"),
        ("'%s'", "duration('1.000000001s')", "1.000000001s"),
        ("'%s'", "duration('0s')", "0s"),
        ("'%s'", "duration('2562047h')", "9223369200s"),
        // Lists and maps: elements formatted as %s, nothing quoted; map entries in the order of
        // their formatted keys.
        ("'%s'", "[]", "[]"),
        ("'%s'", "{}", "{}"),
        ("'%s'", "[2.71]", "[2.71]"),
        ("'%s'", "[0.000000002]", "[0.000000002]"),
        (
            "'%s'",
            "[double('NaN'), double('+Infinity'), double('-Infinity')]",
            "[NaN, Infinity, -Infinity]",
        ),
        (
            "'%s'",
            "['abc', 3.14, null, [9, 8, 7, 6], timestamp('2023-02-03T23:31:20Z')]",
            "[abc, 3.14, null, [9, 8, 7, 6], 2023-02-03T23:31:20Z]",
        ),
        ("'list: %s'", "[[1, 2, [3.0, 4]]]", "list: [[1, 2, [3, 4]]]"),
        ("'%s'", "[b'a', 'b', \"c\\\"\"]", "[a, b, c\"]"),
        (
            "'%s'",
            "{'key1': b'xyz', 'key5': null, 'key2': duration('2h'), 'key4': true, 'key3': 2.71828}",
            "{key1: xyz, key2: 7200s, key3: 2.71828, key4: true, key5: null}",
        ),
        (
            "'map with multiple key types: %s'",
            "{1: 'value1', uint(2): 'value2', true: double('NaN')}",
            "map with multiple key types: {1: value1, 2: value2, true: NaN}",
        ),
        ("'%s'", "{10: 'a', 9: 'b', -1: 'c'}", "{-1: c, 10: a, 9: b}"),
        (
            "'%s'",
            "{'b': [1, {'z': 0, 'a': 1}], 'a': {}}",
            "{a: {}, b: [1, {a: 1, z: 0}]}",
        ),
        ("'%s'", "[optional.none()].size()", "1"),
        ("'%s'", "dynNum", "2.5"),
    ];
    for (fmt, args, want) in cases {
        assert_eq!(
            format(fmt, args).as_deref(),
            Ok(*want),
            "{fmt} with [{args}]"
        );
    }
}

#[test]
fn numeric_clauses() {
    let cases: &[(&str, &str, &str)] = &[
        // %d: ints, uints and doubles (as %s writes them).
        ("'%d'", "0", "0"),
        ("'%d %d'", "-5, uint(64)", "-5 64"),
        ("'%d'", "-9223372036854775807 - 1", "-9223372036854775808"),
        ("'%d'", "18446744073709551615u", "18446744073709551615"),
        ("'%d'", "2.5", "2.5"),
        ("'%d'", "1e21", "1000000000000000000000"),
        ("'%d'", "-0.0", "-0"),
        (
            "'NaN: %d, infinity: %d, -infinity: %d'",
            "double('NaN'), double('Infinity'), double('-Infinity')",
            "NaN: NaN, infinity: Infinity, -infinity: -Infinity",
        ),
        // %f: ints and uints as doubles; exact rounding, ties to even; no grouping.
        ("'%.3f'", "1.2345", "1.234"),
        ("'%.3f + %.2f'", "1, 1u", "1.000 + 1.00"),
        ("'%f'", "2.71828", "2.718280"),
        ("'%f'", "1234567.891", "1234567.891000"),
        ("'%.0f %.0f %.0f'", "0.5, 1.5, 2.5", "0 2 2"),
        ("'%.2f'", "0.125", "0.12"),
        ("'%.1f'", "-0.04", "-0.0"),
        ("'%f'", "-0.0", "-0.000000"),
        ("'%.0f'", "1e21", "1000000000000000000000"),
        ("'%f'", "9223372036854775807", "9223372036854775808.000000"),
        ("'%.2f'", "18446744073709551615u", "18446744073709551616.00"),
        (
            "'%.100f'",
            "1.0",
            "1.0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        ),
        ("'%.1f'", "dynNum", "2.5"),
        (
            "'%f %f %f'",
            "double('NaN'), double('Infinity'), double('-Infinity')",
            "NaN Infinity -Infinity",
        ),
        ("'%.2f'", "double('-Infinity')", "-Infinity"),
        // %e: Go's d.dddddde±XX.
        ("'%.6e'", "1052.032911275", "1.052033e+03"),
        ("'%.4e'", "1052u", "1.0520e+03"),
        ("'%.5e'", "1052", "1.05200e+03"),
        ("'%e'", "2.71828", "2.718280e+00"),
        ("'%e'", "0.0", "0.000000e+00"),
        ("'%e'", "-0.0", "-0.000000e+00"),
        ("'%.0e'", "1e-300", "1e-300"),
        ("'%.2e'", "-123456.0", "-1.23e+05"),
        ("'%e'", "-9223372036854775807 - 1", "-9.223372e+18"),
        (
            "'%e %e %e'",
            "double('NaN'), double('Infinity'), double('-Infinity')",
            "NaN Infinity -Infinity",
        ),
        // %b: ints (signed), uints, bools.
        ("'this is 5 in binary: %b'", "5", "this is 5 in binary: 101"),
        ("'%b'", "-5", "-101"),
        ("'%b'", "uint(64)", "1000000"),
        ("'%b %b'", "true, false", "1 0"),
        ("'%b'", "0", "0"),
        (
            "'%b'",
            "-9223372036854775807 - 1",
            "-1000000000000000000000000000000000000000000000000000000000000000",
        ),
        // %x / %X: ints (signed), uints, strings and bytes (each byte, two digits).
        ("'%x is 30 in hexadecimal'", "30", "1e is 30 in hexadecimal"),
        ("'%X'", "30", "1E"),
        ("'%x'", "-30", "-1e"),
        ("'%X'", "uint(6000)", "1770"),
        ("'%x'", "-9223372036854775807 - 1", "-8000000000000000"),
        ("'%X'", "18446744073709551615u", "FFFFFFFFFFFFFFFF"),
        ("'%x'", "'Hello world!'", "48656c6c6f20776f726c6421"),
        ("'%X'", "'Hello world!'", "48656C6C6F20776F726C6421"),
        ("'%x'", "'é'", "c3a9"),
        ("'%x'", "''", ""),
        ("'%x'", "b'byte string'", "6279746520737472696e67"),
        ("'%x'", "b'\\x00\\x00byte string\\x00'", "00006279746520737472696e6700"),
        ("'%X'", "b'\\xff\\x0a'", "FF0A"),
        // %o: ints (signed) and uints.
        ("'%o'", "11", "13"),
        ("'%o'", "-11", "-13"),
        ("'%o'", "uint(65535)", "177777"),
        ("'%o'", "-9223372036854775807 - 1", "-1000000000000000000000"),
        // A precision before any clause is read and ignored where it does not apply.
        ("'%.2d %.3s %.1x'", "7, 'abc', 255", "7 abc ff"),
    ];
    for (fmt, args, want) in cases {
        assert_eq!(
            format(fmt, args).as_deref(),
            Ok(*want),
            "{fmt} with [{args}]"
        );
    }
}

#[test]
fn evaluation_errors() {
    let clause_err =
        |what: &str, given: &str| format!("error during formatting: {what}, was given {given}");
    let string_what = "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps";
    let decimal = "decimal clause can only be used on ints, uints, and doubles";
    let fixed = "fixed-point clause can only be used on ints, uints, and doubles";
    let scientific = "scientific clause can only be used on ints, uints, and doubles";
    let binary = "only ints, uints, and bools can be formatted as binary";
    let hex = "only ints, uints, bytes, and strings can be formatted as hex";
    let octal = "octal clause can only be used on ints and uints";
    let cases: Vec<(&str, &str, String)> = vec![
        ("'%a'", "1", "could not parse formatting clause: unrecognized formatting clause \"a\"".into()),
        ("'double is %E'", "0.5", "could not parse formatting clause: unrecognized formatting clause \"E\"".into()),
        ("'%q'", "'x'", "could not parse formatting clause: unrecognized formatting clause \"q\"".into()),
        ("'%é'", "1", "could not parse formatting clause: unrecognized formatting clause \"Ã\"".into()),
        ("'%d %d %d'", "0, 1", "index 2 out of range".into()),
        ("'%s'", "", "index 0 out of range".into()),
        // The argument is fetched first, then the end of the string is noticed.
        ("'filler %'", "", "index 0 out of range".into()),
        ("'filler %'", "1", "unexpected end of string".into()),
        ("'%.'", "1", "could not parse formatting clause: error while parsing precision: could not find end of precision specifier".into()),
        ("'%.34'", "5.0", "could not parse formatting clause: error while parsing precision: could not find end of precision specifier".into()),
        ("'%.f'", "1.0", "could not parse formatting clause: error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing \"\": invalid syntax".into()),
        ("'%.9999999f'", "3.14", "could not parse formatting clause: error while parsing precision: precision 9999999 exceeds maximum allowed precision 100".into()),
        ("'%.101e'", "3.14", "could not parse formatting clause: error while parsing precision: precision 101 exceeds maximum allowed precision 100".into()),
        ("'%.99999999999999999999f'", "3.14", "could not parse formatting clause: error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing \"99999999999999999999\": value out of range".into()),
        ("'string is %b'", "'abc'", clause_err(binary, "string")),
        ("'%d'", "duration('30m2s')", clause_err(decimal, "google.protobuf.Duration")),
        ("'%d'", "'1'", clause_err(decimal, "string")),
        ("'octal: %o'", "'a string'", clause_err(octal, "string")),
        ("'%o'", "1.0", clause_err(octal, "double")),
        ("'double is %x'", "0.5", clause_err(hex, "double")),
        ("'%x'", "true", clause_err(hex, "bool")),
        ("'%f'", "'NaN'", clause_err(fixed, "string")),
        ("'%e'", "'Infinity'", clause_err(scientific, "string")),
        ("'%f'", "timestamp('2023-02-03T23:31:20Z')", clause_err(fixed, "google.protobuf.Timestamp")),
        ("'null: %d'", "null", clause_err(decimal, "null_type")),
        ("'null: %e'", "null", clause_err(scientific, "null_type")),
        ("'null: %f'", "null", clause_err(fixed, "null_type")),
        ("'null: %x'", "null", clause_err(hex, "null_type")),
        ("'null: %X'", "null", clause_err(hex, "null_type")),
        ("'null: %b'", "null", clause_err(binary, "null_type")),
        ("'null: %o'", "null", clause_err(octal, "null_type")),
        ("'%b'", "[1]", clause_err(binary, "list")),
        ("'%d'", "{1: 2}", clause_err(decimal, "map")),
        ("'%s'", "optional.none()", clause_err(string_what, "optional_type")),
        ("'%s'", "[1, 2, optional.of(1)]", clause_err(string_what, "optional_type")),
        ("'%s'", "{1: 'a', 2: optional.none()}", clause_err(string_what, "optional_type")),
        ("'%s'", "[[{'k': [optional.none()]}]]", clause_err(string_what, "optional_type")),
        // An error in a later clause fails the whole call.
        ("'%s %d'", "'ok', 'bad'", clause_err(decimal, "string")),
    ];
    for (fmt, args, want) in cases {
        let src = format!("{fmt}.format(dyn([{args}]))");
        assert_eq!(eval(&src), Err(want.clone()), "{src}");
    }
}

/// cel-go's `stringFormatValidatorV2`: a literal format string applied to a list literal is
/// parsed when the expression is checked, each clause's argument checked by its static type
/// (`dyn` passes), and extra arguments rejected; messages are evaluation's, at the argument (or
/// the element of a list or map literal) at fault, else at the call.
#[test]
fn checked_at_compile() {
    let compile_err = |src: &str| match env().compile(src) {
        Ok(_) => panic!("{src} compiled"),
        Err(e) => e.to_string(),
    };
    let exact = [
        (
            "'%d'.format([true])",
            "ERROR: <input>:1:14: error during formatting: decimal clause can only be used on ints, uints, and doubles, was given bool\n | '%d'.format([true])\n | .............^",
        ),
        (
            "'%s %s'.format(['abc'])",
            "ERROR: <input>:1:15: index 1 out of range\n | '%s %s'.format(['abc'])\n | ..............^",
        ),
        (
            "'%s %s'.format(['abc', 'def', 'ghi'])",
            "ERROR: <input>:1:15: too many arguments supplied to string.format (expected 2, got 3)\n | '%s %s'.format(['abc', 'def', 'ghi'])\n | ..............^",
        ),
        (
            "'%s'.format([[1, optional.of(2)]])",
            "ERROR: <input>:1:29: error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given optional_type\n | '%s'.format([[1, optional.of(2)]])\n | ............................^",
        ),
        (
            "'%.9999999f'.format([3.14])",
            "ERROR: <input>:1:20: could not parse formatting clause: error while parsing precision: precision 9999999 exceeds maximum allowed precision 100\n | '%.9999999f'.format([3.14])\n | ...................^",
        ),
    ];
    for (src, want) in exact {
        assert_eq!(compile_err(src), want, "{src}");
    }
    for (src, want) in [
        ("'filler %'.format([])", "unexpected end of string"),
        ("'filler %'.format([1])", "unexpected end of string"),
        ("'%j'.format([123])", "could not parse formatting clause: unrecognized formatting clause \"j\""),
        ("'%.34'.format([5.0])", "could not parse formatting clause: error while parsing precision: could not find end of precision specifier"),
        ("'int is %d'.format([null])", "decimal clause can only be used on ints, uints, and doubles, was given null_type"),
        ("'double is %f'.format([true])", "fixed-point clause can only be used on ints, uints, and doubles, was given bool"),
        ("'%f'.format(['NaN'])", "fixed-point clause can only be used on ints, uints, and doubles, was given string"),
        ("'double is %e'.format([true])", "scientific clause can only be used on ints, uints, and doubles, was given bool"),
        ("'string is %b'.format(['a string'])", "only ints, uints, and bools can be formatted as binary, was given string"),
        ("'%x is a double'.format([2.5])", "only ints, uints, bytes, and strings can be formatted as hex, was given double"),
        ("'%X is a double'.format([2.5])", "only ints, uints, bytes, and strings can be formatted as hex, was given double"),
        ("'an octal: %o'.format([3.14])", "octal clause can only be used on ints and uints, was given double"),
        ("'%o'.format([[1]])", "octal clause can only be used on ints and uints, was given list"),
        ("'%d'.format([duration('1s')])", "was given google.protobuf.Duration"),
        ("'%s'.format([optional.none()])", "was given optional_type"),
        ("'%s'.format([{'k': optional.none()}])", "was given optional_type"),
        ("'%s'.format([{optional.none(): 1}])", "was given optional_type"),
        // A precision that does not parse is reported whatever the argument.
        ("'%.f'.format([1.0])", "strconv.Atoi: parsing \"\": invalid syntax"),
    ] {
        let e = compile_err(src);
        assert!(e.contains(want), "{src}:\n{e}\nwant: {want}");
    }
    // What evaluation would accept, what is not known statically, and what is not a literal
    // format string with a list literal, is left to evaluation.
    let mut env = env();
    env.add_variable("l", Type::list(Type::Dyn));
    for src in [
        "'%d %f %e %s'.format([1.5, 1, 2u, 1.0])",
        "'%d %s %f %x %b %o'.format([dynNum, dynNum, dynNum, dynNum, dynNum, dynNum])",
        "'%d %d'.format(l)",
        "s.format([1, 2])",
        "'%s %s %s %s %s'.format([[1, 'a'], {'k': [2.0]}, null, int, duration('1s')])",
        "'100%% %.2f %.100e'.format([1.0, i])",
        "'%x %X %x %X'.format([i, 1u, 'a', b'b'])",
        "'%b %b %b'.format([true, i, 1u])",
        "'%s'.format([[[optional.none()]].size()])",
        "'no clauses'.format([])",
    ] {
        assert!(
            env.compile(src).is_ok(),
            "{src}: {:?}",
            env.compile(src).err().map(|e| e.to_string())
        );
    }
}

#[test]
fn hostile_inputs_do_not_panic() {
    for src in [
        "'%'.format([])",
        "'%%%'.format([1])",
        "'%.'.format([1])",
        "'%.1'.format([1])",
        "'%\\xff'.format(dyn([1]))",
        "'%.18446744073709551616f'.format(dyn([1.0]))",
        "'%.100f'.format([1.7976931348623157e308])",
        "'%.100e'.format([5e-324])",
        "'%s'.format(dyn([{1: {2: {3: [b'\\xc0', '\\u2028', double('NaN')]}}}]))",
    ] {
        let _ = eval(src);
    }
    assert_eq!(
        format("'%.100f'", "1.7976931348623157e308").map(|s| s.len()),
        Ok(309 + 1 + 100)
    );
}

/// `string(double)` is cel-go's `fmt.Sprintf("%g", d)`: Go's shortest digits, with an exponent
/// (signed, two digits at least) below 1e-4 and from 1e6 on.
#[test]
fn string_of_double_is_go_percent_g() {
    for (d, want) in [
        ("123.456", "123.456"),
        ("-4.5e-3", "-0.0045"),
        ("0.0001", "0.0001"),
        ("0.00001", "1e-05"),
        ("123456.0", "123456"),
        ("1e6", "1e+06"),
        ("1234567.0", "1.234567e+06"),
        ("1e21", "1e+21"),
        ("1e100", "1e+100"),
        ("-0.0", "-0"),
        ("9223372036854775807.0", "9.223372036854776e+18"),
        ("double('NaN')", "NaN"),
        ("double('Infinity')", "+Inf"),
        ("double('-Infinity')", "-Inf"),
    ] {
        let src = format!("string({d})");
        assert_eq!(eval(&src), Ok(Value::string(want)), "{src}");
    }
}

/// `strings.quote` is cel-go's own quoting, not Go's `strconv.Quote`: only CEL's escape
/// sequences are escaped; every other character (controls, U+00A0, zero-width and format
/// characters) is kept as it is.
#[test]
fn strings_quote_is_cel_go_quote() {
    for (input, want) in [
        (
            "'single-quote with \"double quote\"'",
            "\"single-quote with \\\"double quote\\\"\"",
        ),
        (
            "\"two escape sequences \\a\\n\"",
            "\"two escape sequences \\a\\n\"",
        ),
        ("'\\b\\f\\r\\t\\v\\\\'", "\"\\b\\f\\r\\t\\v\\\\\""),
        (
            "'\\u00a0\\u200b\\ufeff\\x01\\x7f'",
            "\"\u{a0}\u{200b}\u{feff}\u{1}\u{7f}\"",
        ),
        ("'日本'", "\"日本\""),
    ] {
        let src = format!("strings.quote({input})");
        assert_eq!(eval(&src), Ok(Value::string(want)), "{src}");
    }
}
