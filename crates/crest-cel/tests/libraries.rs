//! The extension libraries Kubernetes enables (strings, sets, two-variable comprehensions,
//! optionals) and the opt-in ones: each expression must evaluate to true, or fail.

use crest_cel::env::Env;
use crest_cel::eval::{EmptyActivation, Program};
use crest_cel::value::Value;

fn env() -> Env {
    Env::standard()
        .with_library(&crest_cel::ext::math())
        .with_library(&crest_cel::ext::encoders())
}

fn eval(src: &str) -> Result<Value, String> {
    let checked = env().compile(src).map_err(|e| e.to_string())?;
    Program::new(&checked)
        .eval(&EmptyActivation)
        .map_err(|e| e.to_string())
}

#[test]
fn true_expressions() {
    let cases = [
        // Strings extension.
        "'tacocat'.charAt(3) == 'o' && 'tacocat'.charAt(7) == ''",
        "'ta©o©αT'.indexOf('©', 3) == 4 && 'tacocat'.lastIndexOf('a', 3) == 1",
        "'bananananana'.lastIndexOf('nana', 8) == 8",
        "'TacoCat'.lowerAscii() == 'tacocat' && 'TacoCÆt'.upperAscii() == 'TACOCÆT'",
        "'{0} days {0} hours'.replace('{0}', '2', 1).replace('{0}', '23') == '2 days 23 hours'",
        "'hello world events!'.split(' ', 0) == [] && 'o©o©o©o'.split('©', -1) == ['o', 'o', 'o', 'o']",
        "'ta©o©αT'.substring(2, 6) == '©o©α'",
        "' \\f\\n\\r\\t\\vtext  '.trim() == 'text'",
        "['x', 'y'].join('-') == 'x-y' && [].join() == ''",
        "'gums'.reverse() == 'smug'",
        "strings.quote('first\\nsecond') == '\"first\\\\nsecond\"'",
        // format
        "'%s, %d, %%'.format(['a', 5]) == 'a, 5, %'",
        "'%.2f'.format([1234.5]) == '1234.50'",
        "'%f'.format([2.5]) == '2.500000'",
        "'%e'.format([1052.032911275]) == '1.052033e+03'",
        "'%b %o %x %X'.format([5, 8, 255, 'hi']) == '101 10 ff 6869'",
        "'%s'.format([[1, 'a', 2.5, b'x']]) == '[1, a, 2.5, x]'",
        "'%s'.format([{'b': 1, 'a': [true]}]) == '{a: [true], b: 1}'",
        "'%s %s %s'.format([null, int, 1.5]) == 'null int 1.5'",
        "'%s'.format([duration('1m')]) == '60s'",
        // Sets.
        "sets.contains([1, 2, 3], [3, 1]) && !sets.contains([1], [2])",
        "sets.contains([1, 2.0], [1u, 2])",
        "sets.equivalent([1, 2, 2], [2, 1]) && !sets.equivalent([1], [1, 3])",
        "sets.intersects([1, 2], [2, 5]) && !sets.intersects([1], [])",
        // Two-variable comprehensions.
        "[1, 2, 3].all(i, v, v == i + 1)",
        "{'a': 1, 'b': 2}.exists(k, v, k == 'b' && v == 2)",
        "[5, 6].existsOne(i, v, i == 1)",
        "[1, 2, 3].transformList(i, v, v * i) == [0, 2, 6]",
        "[1, 2, 3].transformList(i, v, i > 0, v) == [2, 3]",
        "{'a': 1}.transformMap(k, v, v + 1) == {'a': 2}",
        "[1, 2].transformMapEntry(i, v, {string(v): i}) == {'1': 0, '2': 1}",
        // Optionals.
        "optional.of(1).orValue(2) == 1 && optional.none().orValue(2) == 2",
        "{'a': 1}[?'b'].hasValue() == false && {'a': {'b': 2}}.?a.?b.value() == 2",
        "[1, 2][?5].orValue(0) == 0",
        // Math and encoders.
        "math.greatest(1, 2.5, 3u) == 3u && math.least([4, -1]) == -1",
        "math.abs(-3) == 3 && math.round(-1.5) == -2.0 && math.bitShiftRight(-1024, 3) == 2305843009213693824",
        "base64.decode(base64.encode(b'hi')) == b'hi' && base64.decode('aGk') == b'hi'",
        // Lists extension (cel-go's documented examples).
        "[1, 2, 3, 4].slice(1, 3) == [2, 3] && [1, 2, 3, 4].slice(2, 4) == [3, 4]",
        "[1, 2].slice(2, 2) == [] && [1, 2].slice(0, 0) == []",
        "[1, [2, 3], [4]].flatten() == [1, 2, 3, 4]",
        "[1, [2, [3, 4]]].flatten() == [1, 2, [3, 4]]",
        "[1, 2, [], [], [3, 4]].flatten() == [1, 2, 3, 4]",
        "[1, [2, [3, [4]]]].flatten(2) == [1, 2, 3, [4]]",
        "[1, [2, [3, [4]]]].flatten(0) == [1, [2, [3, [4]]]]",
        "dyn([1, 2]).flatten() == [1, 2]",
        "[1, 2, 2, 3, 3, 3].distinct() == [1, 2, 3]",
        "['b', 'b', 'c', 'a', 'c'].distinct() == ['b', 'c', 'a']",
        "[1, 'b', 2, 'b'].distinct() == [1, 'b', 2]",
        "[1, 1.0, 1u, 2].distinct() == [1, 2]",
        "[5, 3, 1, 2].reverse() == [2, 1, 3, 5] && 'abc'.reverse() == 'cba'",
        "[3, 2, 1].sort() == [1, 2, 3] && ['b', 'c', 'a'].sort() == ['a', 'b', 'c']",
        "[duration('2s'), duration('1s')].sort() == [duration('1s'), duration('2s')]",
        "[b'b', b'a'].sort() == [b'a', b'b'] && [true, false].sort() == [false, true]",
        "[].sort() == [] && [[1]].sortBy(x, 1) == [[1]]",
        "[{'name': 'foo', 'score': 0}, {'name': 'bar', 'score': -10}, {'name': 'baz', 'score': 1000}].sortBy(e, e.score).map(e, e.name) == ['bar', 'foo', 'baz']",
        "['ccc', 'a', 'bb'].sortBy(s, -size(s)) == ['ccc', 'bb', 'a']",
        "[[2, 'b'], [1, 'a'], [2, 'a']].sortBy(p, p[0]) == [[1, 'a'], [2, 'b'], [2, 'a']]",
        "lists.range(5) == [0, 1, 2, 3, 4] && lists.range(0) == []",
        "[1, 2, 3].first() == optional.of(1) && [].last() == optional.none()",
        // Timestamps and durations.
        "timestamp('2024-01-02T03:04:05Z') + duration('1h') == timestamp('2024-01-02T04:04:05Z')",
        "duration('1h30m').getMinutes() == 90",
    ];
    for src in cases {
        assert_eq!(eval(src), Ok(Value::Bool(true)), "{src}");
    }
}

#[test]
fn errors() {
    for (src, want) in [
        (
            "'%d'.format([true])",
            "decimal clause can only be used on ints, uints, and doubles",
        ),
        ("'%s %s'.format([1])", "index 1 out of range"),
        ("'%z'.format([1])", "unrecognized formatting clause"),
        ("'abc'.charAt(4)", "index out of range: 4"),
        ("math.abs(-9223372036854775807 - 1)", "overflow"),
        ("math.bitShiftLeft(1, -1)", "negative offset"),
        ("math.greatest(dyn([]))", "must not be empty"),
        (
            "[1, 2, 3].slice(2, 1)",
            "cannot slice(2, 1), start index must be less than or equal to end index",
        ),
        (
            "[1, 2, 3].slice(-1, 2)",
            "cannot slice(-1, 2), negative indexes not supported",
        ),
        (
            "[1, 2, 3].slice(1, 4)",
            "cannot slice(1, 4), list is length 3",
        ),
        (
            "[1, [2, [3, [4]]]].flatten(-1)",
            "level must be non-negative",
        ),
        ("[1, 'b'].sort()", "list elements must have the same type"),
        ("dyn([[1], [2]]).sort()", "list elements must be comparable"),
        (
            "[1, 2u].sortBy(x, x)",
            "list elements must have the same type",
        ),
        (
            "lists.range(-1)",
            "lists.range: size must be non-negative, got -1",
        ),
        (
            "lists.range(10000001)",
            "lists.range: size 10000001 exceeds maximum allowed (10000000)",
        ),
    ] {
        let e = eval(src).expect_err(src);
        assert!(e.contains(want), "{src}: {e}");
    }
    // Check-time failures.
    for (src, want) in [
        (
            "[[1, 2, 3]].sort()",
            "found no matching overload for 'sort' applied to 'list(list(int)).()'",
        ),
        ("[1].slice('a', 2)", "found no matching overload for 'slice'"),
        (
            "{'a': 1}.sortBy(x, x)",
            "sortBy can only be applied to a list, identifier, comprehension, call or select expression",
        ),
        ("[1].sortBy(x.y, x)", "argument must be a simple name"),
    ] {
        let e = env().compile(src).expect_err(src).to_string();
        assert!(e.contains(want), "{src}: {e}");
    }
    // Without the lists library, sortBy is an ordinary (undeclared) call.
    let e = Env::bare().compile("[1].sortBy(x, x)").unwrap_err();
    assert!(
        e.to_string().contains("undeclared reference to 'sortBy'"),
        "{e}"
    );
    // The math macros need the math library.
    let e = Env::standard().compile("math.greatest(1, 2)").unwrap_err();
    assert!(e.to_string().contains("undeclared reference"), "{e}");
}

#[test]
fn lists_costs() {
    use crest_cel::cost::{estimate_cost, CostEstimate, NoSizes};
    let est = |src: &str| estimate_cost(&env().compile(src).unwrap(), &NoSizes);
    // cel-go's: result size (end - start) + call + list creation, plus the literal's 10 + 10.
    assert_eq!(
        est("[1, 2, 3, 4].slice(1, 3)"),
        CostEstimate::fixed(10 + 2 + 11)
    );
    assert_eq!(est("lists.range(5)"), CostEstimate::fixed(5 + 11));
    // distinct: 2 x size^2; sort of strings: 2.1 x size^2.
    assert_eq!(
        est("[1, 2, 3].distinct()"),
        CostEstimate::fixed(10 + 18 + 11)
    );
    assert_eq!(est("['a', 'b'].sort()"), CostEstimate::fixed(10 + 8 + 11));
    assert_eq!(est("[[1], 2].flatten(2)"), CostEstimate::fixed(20 + 4 + 11));
    let run = |src: &str| {
        let checked = env().compile(src).unwrap();
        Program::new(&checked)
            .eval_with_limit(&EmptyActivation, None)
            .cost
    };
    assert_eq!(run("lists.range(5)"), 1 + 5 + 10);
    assert_eq!(run("[3, 1, 2].sort()"), 10 + 18 + 11);
    assert_eq!(run("[1, 2, 3].reverse()"), 10 + 3 + 11);
}

/// cel-go's compile-time `format` validation: literal format strings with list literals.
#[test]
fn format_checked_at_compile() {
    let compile_err = |src: &str| {
        let mut env = env();
        env.add_variable("d", crest_cel::types::Type::Dyn);
        env.add_variable("i", crest_cel::types::Type::Int);
        env.compile(src).expect_err(src).to_string()
    };
    for (src, want) in [
        (
            "'%d'.format([true])",
            "ERROR: <input>:1:14: error during formatting: decimal clause can only be used on ints, uints, and doubles, was given bool\n | '%d'.format([true])\n | .............^",
        ),
        (
            "'%s %s'.format(['abc'])",
            "ERROR: <input>:1:15: index 1 out of range",
        ),
        (
            "'%s %s'.format(['abc', 'def', 'ghi'])",
            "ERROR: <input>:1:15: too many arguments supplied to string.format (expected 2, got 3)",
        ),
        ("'filler %'.format([])", "unexpected end of string"),
        (
            "'%j'.format([123])",
            "could not parse formatting clause: unrecognized formatting clause \"j\"",
        ),
        (
            "'%.3'.format([1.0])",
            "could not parse formatting clause: error while parsing precision: could not find end of precision specifier",
        ),
        (
            "'%.f'.format([1.0])",
            "strconv.Atoi: parsing \"\": invalid syntax",
        ),
        (
            "'%f'.format(['NaN'])",
            "fixed-point clause can only be used on ints, uints, and doubles, was given string",
        ),
        (
            "'%e'.format([true])",
            "scientific clause can only be used on ints, uints, and doubles, was given bool",
        ),
        (
            "'%b'.format(['x'])",
            "only ints, uints, and bools can be formatted as binary, was given string",
        ),
        (
            "'%x'.format([1.0])",
            "only ints, uints, bytes, and strings can be formatted as hex, was given double",
        ),
        (
            "'%o'.format([[1]])",
            "octal clause can only be used on ints and uints, was given list",
        ),
        (
            "'%s'.format([optional.none()])",
            "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given optional_type",
        ),
        // Members of list and map literals are checked too, at the member.
        (
            "'%s'.format([[1, optional.of(2)]])",
            "ERROR: <input>:1:29: error during formatting: string clause",
        ),
    ] {
        let e = compile_err(src);
        assert!(e.contains(want), "{src}:\n{e}\nwant: {want}");
    }
    // What is not known statically, or not a literal, is left to evaluation.
    let mut env = env();
    env.add_variable("d", crest_cel::types::Type::Dyn);
    env.add_variable(
        "l",
        crest_cel::types::Type::list(crest_cel::types::Type::Dyn),
    );
    env.add_variable("f", crest_cel::types::Type::String);
    for src in [
        "'%d %s %f %x'.format([d, d, 1, b'ab'])",
        "'%d %d'.format(l)",
        "f.format([1, 2])",
        "'%s %s %s %s %s'.format([[1, 'a'], {'k': [2.0]}, null, int, duration('1s')])",
        "'100%% %.2f'.format([1.0])",
    ] {
        assert!(env.compile(src).is_ok(), "{src}");
    }
}
