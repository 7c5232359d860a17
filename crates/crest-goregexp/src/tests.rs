use crate::parse::{self, Op, Tree, DOT_NL, FOLD_CASE, NON_GREEDY, PERL_X, UNICODE_GROUPS};
use crate::{check, compile, translate, ErrorCode};

/// Go's test `dump` of a parse tree (`regexp/syntax/parse_test.go`).
fn dump(tree: &Tree, id: usize, out: &mut String) {
    let n = tree.node(id);
    let name = match n.op {
        Op::NoMatch => "no",
        Op::EmptyMatch => "emp",
        Op::Literal => {
            if n.runes.len() > 1 {
                "str"
            } else {
                "lit"
            }
        }
        Op::CharClass => "cc",
        Op::AnyCharNotNL => "dnl",
        Op::AnyChar => "dot",
        Op::BeginLine => "bol",
        Op::EndLine => "eol",
        Op::BeginText => "bot",
        Op::EndText => "eot",
        Op::WordBoundary => "wb",
        Op::NoWordBoundary => "nwb",
        Op::Capture => "cap",
        Op::Star => "star",
        Op::Plus => "plus",
        Op::Quest => "que",
        Op::Repeat => "rep",
        Op::Concat => "cat",
        Op::Alternate => "alt",
        Op::LeftParen | Op::VerticalBar => "pseudo",
    };
    if matches!(n.op, Op::Star | Op::Plus | Op::Quest | Op::Repeat) && n.flags & NON_GREEDY != 0 {
        out.push('n');
    }
    out.push_str(name);
    if n.op == Op::Literal
        && n.flags & FOLD_CASE != 0
        && n.runes.iter().any(|&r| crate::unicode::simple_fold(r) != r)
    {
        out.push_str("fold");
    }
    out.push('{');
    match n.op {
        Op::EndText if n.flags & parse::WAS_DOLLAR == 0 => out.push_str(r"\z"),
        Op::Literal => out.extend(n.runes.iter().filter_map(|&r| char::from_u32(r))),
        Op::Concat | Op::Alternate => {
            for &s in &n.sub {
                dump(tree, s, out);
            }
        }
        Op::Star | Op::Plus | Op::Quest => dump(tree, n.sub[0], out),
        Op::Repeat => {
            out.push_str(&format!("{},{} ", n.min, n.max));
            dump(tree, n.sub[0], out);
        }
        Op::Capture => {
            if !n.name.is_empty() {
                out.push_str(&n.name);
                out.push(':');
            }
            dump(tree, n.sub[0], out);
        }
        Op::CharClass => {
            let parts: Vec<String> = n
                .runes
                .chunks(2)
                .map(|p| {
                    if p[0] == p[1] {
                        format!("{:#x}", p[0])
                    } else {
                        format!("{:#x}-{:#x}", p[0], p[1])
                    }
                })
                .collect();
            out.push_str(&parts.join(" "));
        }
        _ => {}
    }
    out.push('}');
}

fn parse_dump(re: &str, flags: u16) -> String {
    match parse::parse(re, flags) {
        Ok(tree) => {
            let mut s = String::new();
            dump(&tree, tree.root, &mut s);
            s
        }
        Err(e) => format!("error: {e}"),
    }
}

const TEST_FLAGS: u16 = crate::parse::CLASS_NL | DOT_NL | PERL_X | UNICODE_GROUPS;

/// Go's `parseTests` (the Go 1.23 subset: no category aliases, names are case-sensitive).
#[test]
fn parse_trees_as_go() {
    let cases: &[(&str, &str)] = &[
        ("a", "lit{a}"),
        ("a.", "cat{lit{a}dot{}}"),
        ("a.b", "cat{lit{a}dot{}lit{b}}"),
        ("ab", "str{ab}"),
        ("a.b.c", "cat{lit{a}dot{}lit{b}dot{}lit{c}}"),
        ("abc", "str{abc}"),
        ("a|^", "alt{lit{a}bol{}}"),
        ("a|b", "cc{0x61-0x62}"),
        ("(a)", "cap{lit{a}}"),
        ("(a)|b", "alt{cap{lit{a}}lit{b}}"),
        ("a*", "star{lit{a}}"),
        ("a+", "plus{lit{a}}"),
        ("a?", "que{lit{a}}"),
        ("a{2}", "rep{2,2 lit{a}}"),
        ("a{2,3}", "rep{2,3 lit{a}}"),
        ("a{2,}", "rep{2,-1 lit{a}}"),
        ("a*?", "nstar{lit{a}}"),
        ("a+?", "nplus{lit{a}}"),
        ("a??", "nque{lit{a}}"),
        ("a{2}?", "nrep{2,2 lit{a}}"),
        ("a{2,3}?", "nrep{2,3 lit{a}}"),
        ("a{2,}?", "nrep{2,-1 lit{a}}"),
        ("x{1001", "str{x{1001}"),
        ("x{9876543210", "str{x{9876543210}"),
        ("x{9876543210,", "str{x{9876543210,}"),
        ("x{2,1", "str{x{2,1}"),
        ("x{1,9876543210", "str{x{1,9876543210}"),
        ("", "emp{}"),
        ("|", "emp{}"),
        ("|x|", "alt{emp{}lit{x}emp{}}"),
        (".", "dot{}"),
        ("^", "bol{}"),
        ("$", "eol{}"),
        (r"\|", "lit{|}"),
        (r"\(", "lit{(}"),
        (r"\)", "lit{)}"),
        (r"\*", "lit{*}"),
        (r"\+", "lit{+}"),
        (r"\?", "lit{?}"),
        ("{", "lit{{}"),
        ("}", "lit{}}"),
        (r"\.", "lit{.}"),
        (r"\^", "lit{^}"),
        (r"\$", "lit{$}"),
        (r"\\", r"lit{\}"),
        ("[ace]", "cc{0x61 0x63 0x65}"),
        ("[abc]", "cc{0x61-0x63}"),
        ("[a-z]", "cc{0x61-0x7a}"),
        ("[a]", "lit{a}"),
        (r"\-", "lit{-}"),
        ("-", "lit{-}"),
        (r"\_", "lit{_}"),
        ("abc|def", "alt{str{abc}str{def}}"),
        ("abc|def|ghi", "alt{str{abc}str{def}str{ghi}}"),
        ("[[:lower:]]", "cc{0x61-0x7a}"),
        ("[^[:lower:]]", "cc{0x0-0x60 0x7b-0x10ffff}"),
        ("[[:^lower:]]", "cc{0x0-0x60 0x7b-0x10ffff}"),
        ("(?i)[[:lower:]]", "cc{0x41-0x5a 0x61-0x7a 0x17f 0x212a}"),
        ("(?i)[a-z]", "cc{0x41-0x5a 0x61-0x7a 0x17f 0x212a}"),
        (
            "(?i)[^[:lower:]]",
            "cc{0x0-0x40 0x5b-0x60 0x7b-0x17e 0x180-0x2129 0x212b-0x10ffff}",
        ),
        (
            "(?i)[[:^lower:]]",
            "cc{0x0-0x40 0x5b-0x60 0x7b-0x17e 0x180-0x2129 0x212b-0x10ffff}",
        ),
        (r"\d", "cc{0x30-0x39}"),
        (r"\D", "cc{0x0-0x2f 0x3a-0x10ffff}"),
        (r"\s", "cc{0x9-0xa 0xc-0xd 0x20}"),
        (r"\S", "cc{0x0-0x8 0xb 0xe-0x1f 0x21-0x10ffff}"),
        (r"\w", "cc{0x30-0x39 0x41-0x5a 0x5f 0x61-0x7a}"),
        (r"\W", "cc{0x0-0x2f 0x3a-0x40 0x5b-0x5e 0x60 0x7b-0x10ffff}"),
        (
            r"(?i)\w",
            "cc{0x30-0x39 0x41-0x5a 0x5f 0x61-0x7a 0x17f 0x212a}",
        ),
        (
            r"(?i)\W",
            "cc{0x0-0x2f 0x3a-0x40 0x5b-0x5e 0x60 0x7b-0x17e 0x180-0x2129 0x212b-0x10ffff}",
        ),
        (r"[^\\]", "cc{0x0-0x5b 0x5d-0x10ffff}"),
        (r"\p{Braille}", "cc{0x2800-0x28ff}"),
        (r"\P{Braille}", "cc{0x0-0x27ff 0x2900-0x10ffff}"),
        (r"\p{^Braille}", "cc{0x0-0x27ff 0x2900-0x10ffff}"),
        (r"\P{^Braille}", "cc{0x2800-0x28ff}"),
        (
            r"\pZ",
            "cc{0x20 0xa0 0x1680 0x2000-0x200a 0x2028-0x2029 0x202f 0x205f 0x3000}",
        ),
        (r"[\p{Braille}]", "cc{0x2800-0x28ff}"),
        (r"[\P{Braille}]", "cc{0x0-0x27ff 0x2900-0x10ffff}"),
        (r"[\p{^Braille}]", "cc{0x0-0x27ff 0x2900-0x10ffff}"),
        (r"[\P{^Braille}]", "cc{0x2800-0x28ff}"),
        (
            r"[\pZ]",
            "cc{0x20 0xa0 0x1680 0x2000-0x200a 0x2028-0x2029 0x202f 0x205f 0x3000}",
        ),
        (r"\p{Any}", "dot{}"),
        (r"\p{^Any}", "cc{}"),
        (r"[\012-\234]\141", "cat{cc{0xa-0x9c}lit{a}}"),
        (r"[\x{41}-\x7a]\x61", "cat{cc{0x41-0x7a}lit{a}}"),
        ("a{,2}", "str{a{,2}}"),
        (r"\.\^\$\\", r"str{.^$\}"),
        ("[a-zABC]", "cc{0x41-0x43 0x61-0x7a}"),
        ("[^a]", "cc{0x0-0x60 0x62-0x10ffff}"),
        ("[α-ε☺]", "cc{0x3b1-0x3b5 0x263a}"),
        ("a*{", "cat{star{lit{a}}lit{{}}"),
        ("(?:ab)*", "star{str{ab}}"),
        ("(ab)*", "star{cap{str{ab}}}"),
        ("ab|cd", "alt{str{ab}str{cd}}"),
        ("a(b|c)d", "cat{lit{a}cap{cc{0x62-0x63}}lit{d}}"),
        ("(?:a)", "lit{a}"),
        ("(?:ab)(?:cd)", "str{abcd}"),
        (
            "(?:a+b+)(?:c+d+)",
            "cat{plus{lit{a}}plus{lit{b}}plus{lit{c}}plus{lit{d}}}",
        ),
        (
            "(?:a+|b+)|(?:c+|d+)",
            "alt{plus{lit{a}}plus{lit{b}}plus{lit{c}}plus{lit{d}}}",
        ),
        ("(?:a|b)|(?:c|d)", "cc{0x61-0x64}"),
        ("a|.", "dot{}"),
        (".|a", "dot{}"),
        (
            "(?:[abc]|A|Z|hello|world)",
            "alt{cc{0x41 0x5a 0x61-0x63}str{hello}str{world}}",
        ),
        ("(?:[abc]|A|Z)", "cc{0x41 0x5a 0x61-0x63}"),
        (r"\Q+|*?{[\E", "str{+|*?{[}"),
        (r"\Q+\E+", "plus{lit{+}}"),
        (r"\Qab\E+", "cat{lit{a}plus{lit{b}}}"),
        (r"\Q\\E", r"lit{\}"),
        (r"\Q\\\E", r"str{\\}"),
        ("(?m)^", "bol{}"),
        ("(?m)$", "eol{}"),
        ("(?-m)^", "bot{}"),
        ("(?-m)$", "eot{}"),
        (r"(?m)\A", "bot{}"),
        (r"(?m)\z", r"eot{\z}"),
        (r"(?-m)\A", "bot{}"),
        (r"(?-m)\z", r"eot{\z}"),
        ("(?P<name>a)", "cap{name:lit{a}}"),
        ("(?<name>a)", "cap{name:lit{a}}"),
        ("[Aa]", "litfold{A}"),
        (r"[\x{100}\x{101}]", "litfold{Ā}"),
        ("[Δδ]", "litfold{Δ}"),
        ("abcde", "str{abcde}"),
        ("[Aa][Bb]cd", "cat{strfold{AB}str{cd}}"),
        (
            "abc|abd|aef|bcx|bcy",
            "alt{cat{lit{a}alt{cat{lit{b}cc{0x63-0x64}}str{ef}}}cat{str{bc}cc{0x78-0x79}}}",
        ),
        (
            "ax+y|ax+z|ay+w",
            "cat{lit{a}alt{cat{plus{lit{x}}lit{y}}cat{plus{lit{x}}lit{z}}cat{plus{lit{y}}lit{w}}}}",
        ),
        ("(?:.)", "dot{}"),
        ("(?:x|(?:xa))", "cat{lit{x}alt{emp{}lit{a}}}"),
        ("(?:.|(?:.a))", "cat{dot{}alt{emp{}lit{a}}}"),
        ("(?:A(?:A|a))", "cat{lit{A}litfold{A}}"),
        ("(?:A|a)", "litfold{A}"),
        ("A|(?:A|a)", "litfold{A}"),
        ("(?s).", "dot{}"),
        ("(?-s).", "dnl{}"),
        ("(?:(?:^).)", "cat{bol{}dot{}}"),
        ("(?-s)(?:(?:^).)", "cat{bol{}dnl{}}"),
        (r"[\s\S]a", "cat{cc{0x0-0x10ffff}lit{a}}"),
        ("abc|abd", "cat{str{ab}cc{0x63-0x64}}"),
        ("a(?:b)c|abd", "cat{str{ab}cc{0x63-0x64}}"),
        ("abc|x|abd", "alt{str{abc}lit{x}str{abd}}"),
        ("(?i)abc|ABD", "cat{strfold{AB}cc{0x43-0x44 0x63-0x64}}"),
        ("[ab]c|[ab]d", "cat{cc{0x61-0x62}cc{0x63-0x64}}"),
        (".c|.d", "cat{dot{}cc{0x63-0x64}}"),
        (
            "x{2}|x{2}[0-9]",
            "cat{rep{2,2 lit{x}}alt{emp{}cc{0x30-0x39}}}",
        ),
        (
            "x{2}y|x{2}[0-9]y",
            "cat{rep{2,2 lit{x}}alt{lit{y}cat{cc{0x30-0x39}lit{y}}}}",
        ),
        (
            "a.*?c|a.*?b",
            "cat{lit{a}alt{cat{nstar{dot{}}lit{c}}cat{nstar{dot{}}lit{b}}}}",
        ),
    ];
    let mut failures = vec![];
    for (re, want) in cases {
        let got = parse_dump(re, TEST_FLAGS);
        if got != *want {
            failures.push(format!("{re:?}: got {got}, want {want}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn parse_trees_with_other_flags() {
    // Go's foldcaseTests, matchnlTests and nomatchnlTests.
    let cases: &[(&str, u16, &str)] = &[
        ("AbCdE", FOLD_CASE, "strfold{ABCDE}"),
        ("[Aa]", FOLD_CASE, "litfold{A}"),
        ("a", FOLD_CASE, "litfold{A}"),
        (
            "A[F-g]",
            FOLD_CASE,
            "cat{litfold{A}cc{0x41-0x7a 0x17f 0x212a}}",
        ),
        (
            "[[:upper:]]",
            FOLD_CASE,
            "cc{0x41-0x5a 0x61-0x7a 0x17f 0x212a}",
        ),
        (
            "[[:lower:]]",
            FOLD_CASE,
            "cc{0x41-0x5a 0x61-0x7a 0x17f 0x212a}",
        ),
        (".", crate::parse::CLASS_NL | DOT_NL, "dot{}"),
        ("\n", crate::parse::CLASS_NL | DOT_NL, "lit{\n}"),
        (
            "[^a]",
            crate::parse::CLASS_NL | DOT_NL,
            "cc{0x0-0x60 0x62-0x10ffff}",
        ),
        ("[a\\n]", crate::parse::CLASS_NL | DOT_NL, "cc{0xa 0x61}"),
        (".", 0, "dnl{}"),
        ("\n", 0, "lit{\n}"),
        ("[^a]", 0, "cc{0x0-0x9 0xb-0x60 0x62-0x10ffff}"),
        ("[a\\n]", 0, "cc{0xa 0x61}"),
    ];
    for (re, flags, want) in cases {
        assert_eq!(parse_dump(re, *flags), *want, "{re:?}");
    }
    // POSIX syntax: no Perl extensions.
    for re in ["a++", "a**", "a?*", "a+*", "a{1}*", ".{1}{2}.{3}"] {
        assert!(parse::parse(re, 0).is_ok(), "{re}");
        assert!(check(re).is_err(), "{re}");
    }
    for re in [r"[a-b-c]", r"\Qabc\E", "(?:a)", "(?P<name>a)"] {
        assert!(check(re).is_ok(), "{re}");
        assert!(parse::parse(re, 0).is_err(), "{re}");
    }
}

/// Go's `invalidRegexps` and more, with the message `regexp.Compile` returns.
#[test]
fn errors_as_go_words_them() {
    let many = |s: &str, n: usize| s.repeat(n);
    let deep_parens = many("(", 1000) + &many(")", 1000);
    let deep_stars = many("(?:", 1000) + &many(")*", 1000);
    let long1 = format!("({}){{1000}}", many("(xx?)", 1000));
    let long2 = many("(xx?){1000}", 1000);
    let runes = many(r"\pL", 27000);
    let cases: Vec<(&str, ErrorCode, &str)> = vec![
        // Go's regexp badRe.
        ("*", ErrorCode::MissingRepeatArgument, "*"),
        ("+", ErrorCode::MissingRepeatArgument, "+"),
        ("?", ErrorCode::MissingRepeatArgument, "?"),
        ("(abc", ErrorCode::MissingParen, "(abc"),
        ("abc)", ErrorCode::UnexpectedParen, "abc)"),
        ("x[a-z", ErrorCode::MissingBracket, "[a-z"),
        ("[z-a]", ErrorCode::InvalidCharRange, "z-a"),
        ("abc\\", ErrorCode::TrailingBackslash, ""),
        ("a**", ErrorCode::InvalidRepeatOp, "**"),
        ("a*+", ErrorCode::InvalidRepeatOp, "*+"),
        ("\\x", ErrorCode::InvalidEscape, "\\x"),
        (&runes, ErrorCode::Large, &runes),
        // Go's invalidRegexps.
        ("(", ErrorCode::MissingParen, "("),
        (")", ErrorCode::UnexpectedParen, ")"),
        ("(a", ErrorCode::MissingParen, "(a"),
        ("a)", ErrorCode::UnexpectedParen, "a)"),
        ("(a))", ErrorCode::UnexpectedParen, "(a))"),
        ("(a|b|", ErrorCode::MissingParen, "(a|b|"),
        ("a|b|)", ErrorCode::UnexpectedParen, "a|b|)"),
        ("(a|b|))", ErrorCode::UnexpectedParen, "(a|b|))"),
        ("(a|b", ErrorCode::MissingParen, "(a|b"),
        ("a|b)", ErrorCode::UnexpectedParen, "a|b)"),
        ("(a|b))", ErrorCode::UnexpectedParen, "(a|b))"),
        ("[a-z", ErrorCode::MissingBracket, "[a-z"),
        ("([a-z)", ErrorCode::MissingBracket, "[a-z)"),
        ("[a-z)", ErrorCode::MissingBracket, "[a-z)"),
        ("([a-z]))", ErrorCode::UnexpectedParen, "([a-z]))"),
        ("x{1001}", ErrorCode::InvalidRepeatSize, "{1001}"),
        (
            "x{9876543210}",
            ErrorCode::InvalidRepeatSize,
            "{9876543210}",
        ),
        ("x{2,1}", ErrorCode::InvalidRepeatSize, "{2,1}"),
        (
            "x{1,9876543210}",
            ErrorCode::InvalidRepeatSize,
            "{1,9876543210}",
        ),
        ("(?P<name>a", ErrorCode::MissingParen, "(?P<name>a"),
        ("(?P<name>", ErrorCode::MissingParen, "(?P<name>"),
        ("(?P<name", ErrorCode::InvalidNamedCapture, "(?P<name"),
        ("(?P<x y>a)", ErrorCode::InvalidNamedCapture, "(?P<x y>"),
        ("(?P<>a)", ErrorCode::InvalidNamedCapture, "(?P<>"),
        ("(?<name>a", ErrorCode::MissingParen, "(?<name>a"),
        ("(?<name>", ErrorCode::MissingParen, "(?<name>"),
        ("(?<name", ErrorCode::InvalidNamedCapture, "(?<name"),
        ("(?<x y>a)", ErrorCode::InvalidNamedCapture, "(?<x y>"),
        ("(?<>a)", ErrorCode::InvalidNamedCapture, "(?<>"),
        ("[a-Z]", ErrorCode::InvalidCharRange, "a-Z"),
        ("(?i)[a-Z]", ErrorCode::InvalidCharRange, "a-Z"),
        ("\\Q\\E*", ErrorCode::MissingRepeatArgument, "*"),
        ("a{100000}", ErrorCode::InvalidRepeatSize, "{100000}"),
        ("a{100000,}", ErrorCode::InvalidRepeatSize, "{100000,}"),
        (
            "((((((((((x{2}){2}){2}){2}){2}){2}){2}){2}){2}){2})",
            ErrorCode::InvalidRepeatSize,
            "{2}",
        ),
        (
            "(?:[a-z]{4}){0,251}",
            ErrorCode::InvalidRepeatSize,
            "{0,251}",
        ),
        (&deep_parens, ErrorCode::NestingDepth, &deep_parens),
        (&deep_stars, ErrorCode::NestingDepth, &deep_stars),
        (&long1, ErrorCode::Large, &long1),
        (&long2, ErrorCode::Large, &long2),
        // Perl-only: stacked repetitions.
        ("a++", ErrorCode::InvalidRepeatOp, "++"),
        ("a?*", ErrorCode::InvalidRepeatOp, "?*"),
        ("a{1}*", ErrorCode::InvalidRepeatOp, "{1}*"),
        (".{1}{2}.{3}", ErrorCode::InvalidRepeatOp, "{1}{2}"),
        ("a*?*", ErrorCode::InvalidRepeatOp, "*?*"),
        ("a{2}?+", ErrorCode::InvalidRepeatOp, "{2}?+"),
        ("x+??", ErrorCode::InvalidRepeatOp, "+??"),
        // Repetition without an operand.
        ("a|*", ErrorCode::MissingRepeatArgument, "*"),
        ("(*a)", ErrorCode::MissingRepeatArgument, "*"),
        ("(?i)*", ErrorCode::MissingRepeatArgument, "*"),
        ("{2}", ErrorCode::MissingRepeatArgument, "{2}"),
        ("a|{1,2}?", ErrorCode::MissingRepeatArgument, "{1,2}?"),
        ("**", ErrorCode::MissingRepeatArgument, "*"),
        // Perl flags and groups.
        ("(?x)a", ErrorCode::InvalidPerlOp, "(?x"),
        ("(?", ErrorCode::InvalidPerlOp, "(?"),
        ("(?i", ErrorCode::InvalidPerlOp, "(?i"),
        ("(?i-)", ErrorCode::InvalidPerlOp, "(?i-)"),
        ("(?-)", ErrorCode::InvalidPerlOp, "(?-)"),
        ("(?--i)", ErrorCode::InvalidPerlOp, "(?--"),
        ("(?P=name)", ErrorCode::InvalidPerlOp, "(?P"),
        ("(?'name'x)", ErrorCode::InvalidPerlOp, "(?'"),
        ("(?=x)", ErrorCode::InvalidPerlOp, "(?="),
        ("(?!x)", ErrorCode::InvalidPerlOp, "(?!"),
        ("(?<=x)", ErrorCode::InvalidNamedCapture, "(?<=x)"),
        ("(?<!x)", ErrorCode::InvalidNamedCapture, "(?<!x)"),
        ("(?P<n-m>x)", ErrorCode::InvalidNamedCapture, "(?P<n-m>"),
        ("(?P<é>x)", ErrorCode::InvalidNamedCapture, "(?P<é>"),
        ("(?P>x)", ErrorCode::InvalidPerlOp, "(?P"),
        ("(?#comment)", ErrorCode::InvalidPerlOp, "(?#"),
        ("(?i)(?z)", ErrorCode::InvalidPerlOp, "(?z"),
        // Escapes.
        ("\\8", ErrorCode::InvalidEscape, "\\8"),
        ("\\1", ErrorCode::InvalidEscape, "\\1"),
        ("(a)\\1", ErrorCode::InvalidEscape, "\\1"),
        ("\\18", ErrorCode::InvalidEscape, "\\1"),
        ("\\Z", ErrorCode::InvalidEscape, "\\Z"),
        ("\\C", ErrorCode::InvalidEscape, "\\C"),
        ("\\é", ErrorCode::InvalidEscape, "\\é"),
        ("\\G", ErrorCode::InvalidEscape, "\\G"),
        ("\\k<a>", ErrorCode::InvalidEscape, "\\k"),
        ("\\e", ErrorCode::InvalidEscape, "\\e"),
        ("\\cA", ErrorCode::InvalidEscape, "\\c"),
        ("\\u0041", ErrorCode::InvalidEscape, "\\u"),
        ("\\X", ErrorCode::InvalidEscape, "\\X"),
        ("\\R", ErrorCode::InvalidEscape, "\\R"),
        ("\\h", ErrorCode::InvalidEscape, "\\h"),
        ("[\\b]", ErrorCode::InvalidEscape, "\\b"),
        ("[\\B]", ErrorCode::InvalidEscape, "\\B"),
        ("[\\A]", ErrorCode::InvalidEscape, "\\A"),
        ("[\\Q]", ErrorCode::InvalidEscape, "\\Q"),
        ("\\x{110000}", ErrorCode::InvalidEscape, "\\x{110000"),
        ("\\x{}", ErrorCode::InvalidEscape, "\\x{}"),
        ("\\x{12", ErrorCode::InvalidEscape, "\\x{12"),
        ("\\x{1g}", ErrorCode::InvalidEscape, "\\x{1g"),
        ("\\xg1", ErrorCode::InvalidEscape, "\\xg1"),
        ("\\x1", ErrorCode::InvalidEscape, "\\x1"),
        ("\\x1g", ErrorCode::InvalidEscape, "\\x1g"),
        ("[\\x]", ErrorCode::InvalidEscape, "\\x]"),
        ("a\\", ErrorCode::TrailingBackslash, ""),
        ("[a\\", ErrorCode::TrailingBackslash, ""),
        // Unicode classes.
        ("\\p{Foo}", ErrorCode::InvalidCharRange, "\\p{Foo}"),
        ("\\pX", ErrorCode::InvalidCharRange, "\\pX"),
        ("\\p{greek}", ErrorCode::InvalidCharRange, "\\p{greek}"),
        ("\\p{Letter}", ErrorCode::InvalidCharRange, "\\p{Letter}"),
        ("\\p{IsGreek}", ErrorCode::InvalidCharRange, "\\p{IsGreek}"),
        ("\\p{Greek", ErrorCode::InvalidCharRange, "\\p{Greek"),
        ("a\\p{Greek", ErrorCode::InvalidCharRange, "\\p{Greek"),
        ("\\p", ErrorCode::InvalidCharRange, "\\p"),
        ("\\P", ErrorCode::InvalidCharRange, "\\P"),
        ("\\p{}", ErrorCode::InvalidCharRange, "\\p{}"),
        ("\\p{^}", ErrorCode::InvalidCharRange, "\\p{^}"),
        ("\\pé", ErrorCode::InvalidCharRange, "\\pé"),
        ("[\\p{Foo}]", ErrorCode::InvalidCharRange, "\\p{Foo}"),
        ("[\\pX-z]", ErrorCode::InvalidCharRange, "\\pX"),
        // Classes.
        ("[[:foo:]]", ErrorCode::InvalidCharRange, "[:foo:]"),
        ("[[:^foo:]]", ErrorCode::InvalidCharRange, "[:^foo:]"),
        ("[[:ALPHA:]]", ErrorCode::InvalidCharRange, "[:ALPHA:]"),
        ("[[:alpha:]", ErrorCode::MissingBracket, "[[:alpha:]"),
        ("[", ErrorCode::MissingBracket, "["),
        ("[]", ErrorCode::MissingBracket, "[]"),
        ("[^]", ErrorCode::MissingBracket, "[^]"),
        ("[]a", ErrorCode::MissingBracket, "[]a"),
        ("a[b-", ErrorCode::MissingBracket, "[b-"),
        ("[a-\\", ErrorCode::TrailingBackslash, ""),
        ("[9-0]", ErrorCode::InvalidCharRange, "9-0"),
        ("[a-\\x00]", ErrorCode::InvalidCharRange, "a-\\x00"),
        ("[é-a]", ErrorCode::InvalidCharRange, "é-a"),
        // Order: the first error Go meets.
        ("a**(", ErrorCode::InvalidRepeatOp, "**"),
        ("[z-a](", ErrorCode::InvalidCharRange, "z-a"),
        ("(a{1001}", ErrorCode::InvalidRepeatSize, "{1001}"),
        ("(?x)\\8", ErrorCode::InvalidPerlOp, "(?x"),
        ("x{2}{3}", ErrorCode::InvalidRepeatOp, "{2}{3}"),
    ];
    let mut failures = vec![];
    for (re, code, expr) in &cases {
        let want = format!("error parsing regexp: {}: `{}`", code.as_str(), expr);
        match check(re) {
            Ok(()) => failures.push(format!("{re:?}: accepted, want {want}")),
            Err(e) => {
                if e.code != *code || e.expr != *expr {
                    let shown: String = e.to_string().chars().take(200).collect();
                    failures.push(format!("{re:?}: got {shown}, want {want}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn valid_go_patterns() {
    let deep_ok = "(".repeat(999) + &")".repeat(999);
    let stars_ok = "(?:".repeat(999) + &")*".repeat(999);
    let bars = format!("({})", "|".repeat(12345));
    let cases = [
        "^[a-z]$",
        "my-finalizer",
        "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
        "a{",
        "{",
        "a{,5}",
        "x{abc}",
        "a{01}",
        "a{1,02}",
        "[[]",
        "[]a]",
        "[^]a]",
        "[a-]",
        "[-a]",
        "[a-b-c]",
        "[[:alpha:]_]",
        "[[:^digit:]]",
        "[[:alpha:]-z]",
        "[\\d-z]",
        "\\pL\\p{Greek}\\P{^Han}\\pN\\p{Lu}\\p{Nd}\\p{Zs}\\p{Cs}\\p{C}\\p{Common}\\p{Inherited}",
        "(?i)abc",
        "(?i:a)(?-s:b)(?U)c*(?msU-i:d)",
        "(?i)(?-i)a",
        "(?P<name>x)(?<other>y)(?P<name>z)",
        "(?P<_1>x)",
        "\\Qa.b*\\E+",
        "\\Q*",
        "\\Q",
        "a*?",
        "a{2}?",
        "(a{500}){2}",
        "(?:[a-z]{4}){0,250}",
        "((((((((((x{2}){2}){2}){2}){2}){2}){2}){2}){2}))",
        "a{1000}",
        "a{1000,}",
        "a{0,1000}",
        "(a{1000}){0}",
        "^*",
        "[\\d-a]",
        "\\x41\\x{263a}\\0\\012\\377\\x{10FFFF}",
        "[\\d\\s\\-]",
        "\\<\\>\\_\\!\\@\\#",
        "\\a\\f\\t\\n\\r\\v",
        "(a|)",
        "()",
        "(|)",
        "\\A\\b\\B\\z",
        "$^",
        ".*",
        "\\p{Any}\\P{Any}",
        "[\\p{Any}]",
        "[\\x{D800}-\\x{DFFF}]",
        "\\x{D800}",
        "(?i)\\x{212A}",
        "[\u{10000}-\u{10FFFF}]",
        "é+",
        "a{2}{",
        "a*{",
        "[\\\\]",
        "[\\]]",
        "[\\[]",
        &deep_ok,
        &stars_ok,
        &bars,
    ];
    for re in cases {
        let shown: String = re.chars().take(60).collect();
        assert_eq!(check(re), Ok(()), "{shown}");
        // Every pattern Go accepts compiles to a matcher.
        assert!(compile(re).is_ok(), "{shown}: {:?}", translate(re));
    }
}

#[test]
fn matching_has_go_semantics() {
    let cases: &[(&str, &str, bool)] = &[
        // \d, \w, \s and \b are ASCII in Go.
        (r"^\d+$", "123", true),
        (r"^\d+$", "١٢٣", false),
        (r"^\w+$", "a_B9", true),
        (r"^\w+$", "é", false),
        (r"^\s$", "\u{b}", false),
        (r"^\s$", "\u{c}", true),
        (r"^\s$", "\u{a0}", false),
        (r"\bfoo\b", "éfooé", true),
        (r"\Bfoo", "éfoo", false),
        (r"^[[:alpha:]]+$", "abcXYZ", true),
        (r"^[[:alpha:]]+$", "é", false),
        (r"^[[:^alpha:]]+$", "é1", true),
        (r"^\pL+$", "éαж", true),
        (r"^\p{Greek}+$", "αβγ", true),
        (r"^\p{Greek}+$", "abc", false),
        (r"^\PL+$", "123", true),
        (r"^\p{^L}+$", "123", true),
        // $ is the end of text unless (?m); . excludes \n unless (?s); [^a] matches \n.
        ("a$", "a\n", false),
        ("(?m)a$", "a\nb", true),
        ("(?m)^b", "a\nb", true),
        ("^b", "a\nb", false),
        ("a.b", "a\nb", false),
        ("(?s)a.b", "a\nb", true),
        ("a[^x]b", "a\nb", true),
        // Case folding.
        ("(?i)k", "\u{212A}", true),
        ("(?i)s", "\u{17F}", true),
        ("(?i)straße", "STRAßE", true),
        ("(?i)[a-c]+", "ABC", true),
        ("(?i:a)b", "Ab", true),
        ("(?i:a)b", "AB", false),
        ("[Kk]", "\u{212A}", false),
        // Literals and quoting.
        (r"\Qa.b\E", "a.b", true),
        (r"\Qa.b\E", "axb", false),
        (r"\Q*", "*", true),
        ("a{,2}", "a{,2}", true),
        ("x{abc}", "x{abc}", true),
        ("[[]", "[", true),
        ("[]a]", "]", true),
        ("[a-]", "-", true),
        (r"\x{263a}", "☺", true),
        (r"\101", "A", true),
        // Groups, repeats, alternation.
        ("(?P<a>x)(?P<a>y)", "xy", true),
        ("^(ab|cd)+$", "abcdab", true),
        ("^a{2,3}$", "aaaa", false),
        ("^(?:a{2}){2}$", "aaaa", true),
        ("^abc|abd$", "abd", true),
        ("^(?:abc|abd)$", "abx", false),
        (r"\p{^Any}", "a", false),
        (r"[\x{D800}-\x{DFFF}]", "a", false),
        ("^$", "", true),
        ("", "x", true),
    ];
    for (re, s, want) in cases {
        let m = compile(re).unwrap_or_else(|e| panic!("{re}: {e}"));
        assert_eq!(m.is_match(s), *want, "{re} on {s:?}: {:?}", translate(re));
    }
    // Leftmost-first and non-greedy as Go.
    let find = |re: &str, s: &str| compile(re).ok()?.find(s).map(|m| m.as_str().to_string());
    assert_eq!(find("a+?", "aaa").as_deref(), Some("a"));
    assert_eq!(find("(?U)a+", "aaa").as_deref(), Some("a"));
    assert_eq!(find("(?U)a+?", "aaa").as_deref(), Some("aaa"));
    assert_eq!(find("a|ab", "ab").as_deref(), Some("a"));
}

#[test]
fn folding_data_matches_go() {
    use crate::unicode::simple_fold;
    // Go's simpleFoldTests: each string is an orbit in SimpleFold order.
    for orbit in [
        "Aa",
        "δΔ",
        "Kk\u{212A}",
        "Ssſ",
        "ρϱΡ",
        "\u{345}\u{399}\u{3B9}\u{1FBE}",
        "İ",
        "ı",
        "\u{13b0}\u{ab80}",
    ] {
        let runes: Vec<u32> = orbit.chars().map(|c| c as u32).collect();
        for (i, &r) in runes.iter().enumerate() {
            assert_eq!(
                simple_fold(r),
                runes[(i + 1) % runes.len()],
                "{orbit} at {i}"
            );
        }
    }
    // minFold and maxFold are the extremes of the folding runes.
    assert_eq!(simple_fold(0x40), 0x40);
    assert_ne!(
        simple_fold(crate::unicode::MIN_FOLD),
        crate::unicode::MIN_FOLD
    );
    assert_ne!(
        simple_fold(crate::unicode::MAX_FOLD),
        crate::unicode::MAX_FOLD
    );
    for r in crate::unicode::MAX_FOLD + 1..0x20000 {
        assert_eq!(simple_fold(r), r, "{r:#x}");
    }
}

/// Random patterns over the syntax's characters: the parser never panics, and every pattern
/// Go accepts becomes a `regex` crate expression that compiles.
#[test]
fn random_patterns_parse_and_translate() {
    const ALPHABET: &[&str] = &[
        "a",
        "b",
        "K",
        "é",
        "\u{212A}",
        "☺",
        "(",
        ")",
        "(?",
        "(?:",
        "(?i)",
        "(?P<n>",
        "(?<",
        "|",
        "*",
        "+",
        "?",
        "{",
        "}",
        "{2}",
        "{1,3}",
        "{0,}",
        ",",
        "[",
        "]",
        "[^",
        "[:",
        ":]",
        "[:alpha:]",
        "-",
        "^",
        "$",
        ".",
        "\\",
        "\\d",
        "\\pL",
        "\\p{Greek}",
        "\\P",
        "\\Q",
        "\\E",
        "\\x{263a}",
        "\\1",
        "\\b",
        "\\z",
        "0",
        "9",
        ">",
        "<",
        "U",
        "s",
        "m",
        "i",
    ];
    let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut accepted = 0;
    for _ in 0..20_000 {
        let len = (next() % 12) as usize;
        let pattern: String = (0..len)
            .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize])
            .collect();
        if check(&pattern).is_ok() {
            accepted += 1;
            if let Err(e) = compile(&pattern) {
                panic!("{pattern:?} -> {:?}: {e}", translate(&pattern));
            }
        }
    }
    assert!(accepted > 1000, "{accepted}");
}
