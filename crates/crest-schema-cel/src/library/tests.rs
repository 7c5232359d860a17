//! Upstream's library examples (doc comments and `*_test.go` cases) through the base
//! environment.

use crest_cel::cost::{estimate_cost, CallArg, CostEstimator, SizeEstimate};
use crest_cel::decls::CallEstimate;
use crest_cel::eval::{EmptyActivation, Program};
use crest_cel::types::Type;
use crest_cel::value::Value;

use super::{base_env, runtime_costs};

fn eval(expr: &str) -> Result<Value, String> {
    let checked = base_env().compile(expr).map_err(|e| e.to_string())?;
    Program::new(&checked)
        .with_cost_estimator(runtime_costs())
        .eval(&EmptyActivation)
        .map_err(|e| e.to_string())
}

fn yes(expr: &str) {
    assert_eq!(eval(expr), Ok(Value::Bool(true)), "{expr}");
}

fn err(expr: &str, want: &str) {
    match eval(expr) {
        Err(e) => assert!(e.contains(want), "{expr}: {e}"),
        Ok(v) => panic!("{expr}: want error {want}, got {v}"),
    }
}

#[test]
fn lists() {
    for e in [
        "[1, 2, 3].isSorted()",
        "['a', 'b', 'b', 'c'].isSorted()",
        "![2.0, 1.0].isSorted()",
        "[1].isSorted() && [].isSorted()",
        "[1, 3].sum() == 4",
        "[1.0, 3.0].sum() == 4.0",
        "[duration('1m'), duration('1s')].sum() == duration('1m1s')",
        "[1, 3].min() == 1 && [1, 3].max() == 3",
        "[1, 2, 2, 3].indexOf(2) == 1",
        "['a', 'b', 'b', 'c'].lastIndexOf('b') == 2",
        "[1.0].indexOf(1.1) == -1",
        "'abcb'.indexOf('b') == 1",
    ] {
        yes(e);
    }
    err("[].min()", "min called on empty list");
    err("[9223372036854775807, 1].sum()", "overflow");
}

#[test]
fn regex() {
    yes("'abc 123'.find('[0-9]+') == '123'");
    yes("'abc 123'.find('xyz') == ''");
    yes("'123 abc 456'.findAll('[0-9]+') == ['123', '456']");
    yes("'123 abc 456'.findAll('[0-9]+', 1) == ['123']");
    yes("'123 abc 456'.findAll('xyz') == []");
    err(
        "'x'.find('(')",
        "Illegal regex: error parsing regexp: missing closing ): `(`",
    );
    err(
        "'x'.findAll('[[:foo:]]')",
        "Illegal regex: error parsing regexp: invalid character class range: `[:foo:]`",
    );
    // Go's syntax and semantics, not the regex crate's.
    yes("'a[b'.find('[[]') == '['");
    yes("'x١2'.findAll('\\\\d') == ['2']");
}

#[test]
fn urls() {
    for e in [
        "isURL('https://user:pass@example.com:80/path?query=val#fragment')",
        "isURL('/absolute-path')",
        "!isURL('https://a:b:c/')",
        "!isURL('../relative-path')",
        "url('/path').getScheme() == ''",
        "url('https://example.com/').getScheme() == 'https'",
        "url('https://example.com:80/').getHost() == 'example.com:80'",
        "url('https://example.com/').getHost() == 'example.com'",
        "url('https://[::1]:80/').getHost() == '[::1]:80'",
        "url('https://[::1]/').getHost() == '[::1]'",
        "url('/path').getHost() == ''",
        "url('https://example.com:80/').getHostname() == 'example.com'",
        "url('https://127.0.0.1:80/').getHostname() == '127.0.0.1'",
        "url('https://[::1]:80/').getHostname() == '::1'",
        "url('https://example.com:80/').getPort() == '80'",
        "url('https://example.com/').getPort() == ''",
        "url('https://example.com/path').getEscapedPath() == '/path'",
        "url('https://example.com/path with spaces/').getEscapedPath() == '/path%20with%20spaces/'",
        "url('https://example.com').getEscapedPath() == ''",
        "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery() == {'k1': ['a'], 'k2': ['b', 'c']}",
        "url('https://example.com/path?key with spaces=value with spaces').getQuery() == {'key with spaces': ['value with spaces']}",
        "url('https://example.com/path?').getQuery() == {}",
        "url('https://example.com/path').getQuery() == {}",
        "url('https://example.com/x') == url('https://example.com/x')",
    ] {
        yes(e);
    }
    err(
        "url('../relative-path')",
        "URL parse error during conversion from string: parse \"../relative-path\": invalid URI for request",
    );
    err(
        "url('https://a:b:c/')",
        "URL parse error during conversion from string: parse \"https://a:b:c/\": invalid port \":c\" after host",
    );
    // Go's strconv.Quote in the messages: a cut UTF-8 sequence as \xNN bytes, a no-break
    // space as \u00a0 (crest-gofmt).
    err(
        "url('https://example.com/%€')",
        "URL parse error during conversion from string: parse \"https://example.com/%€\": invalid URL escape \"%\\xe2\\x82\"",
    );
    err(
        "url('https://example.com/\\u00a0\\u200b%zz')",
        "URL parse error during conversion from string: parse \"https://example.com/\\u00a0\\u200b%zz\": invalid URL escape \"%zz\"",
    );
}

#[test]
fn quantity() {
    for e in [
        "isQuantity('20') && isQuantity('20M') && isQuantity('20Mi')",
        "!isQuantity('20Mo') && !isQuantity('10Mm') && !isQuantity('200K') && !isQuantity('1,3G')",
        "isQuantity('1.3G') && isQuantity('10000k')",
        "quantity('200M') == quantity('200M')",
        "quantity('200M') == quantity('0.2G') && quantity('0.2G') == quantity('200M')",
        "quantity('2M') == quantity('0.002G') && quantity('2000k') == quantity('2M')",
        "quantity('200M') != quantity('0.3G')",
        "quantity('50M').isLessThan(quantity('50Mi'))",
        "quantity('50M').isLessThan(quantity('100M'))",
        "!quantity('100M').isLessThan(quantity('50M'))",
        "quantity('50Mi').isGreaterThan(quantity('50M'))",
        "quantity('150Mi').isGreaterThan(quantity('100Mi'))",
        "quantity('200M').compareTo(quantity('0.2G')) == 0",
        "quantity('50M').compareTo(quantity('50Mi')) == -1",
        "quantity('50Mi').compareTo(quantity('50M')) == 1",
        "quantity('50k').add(quantity('20')) == quantity('50.02k')",
        "!quantity('50k').add(20).isLessThan(quantity('50020'))",
        "quantity('50k').sub(quantity('20')) == quantity('49.98k')",
        "quantity('50k').sub(20) == quantity('49980')",
        "quantity('50k').add(20).sub(quantity('100k')).asInteger() == -49980",
        "quantity('50k').add(20).sub(quantity('100k')).sub(-50000).asInteger() == 20",
        "quantity('50k').asInteger() == 50000",
        "!quantity('9999999999999999999999999999999999999G').isInteger()",
        "quantity('50').isInteger() && quantity('50000000G').isInteger()",
        "!quantity('1.5').isInteger()",
        "quantity('50.703k').asApproximateFloat() == 50703.0",
        "quantity('50k').sub(20000).asApproximateFloat() == 30000.0",
        "sign(quantity('-50k')) == -1 && sign(quantity('0')) == 0 && sign(quantity('1m')) == 1",
        "quantity('1Gi').isGreaterThan(quantity('1G'))",
        "quantity('0.5Mi') == quantity('524288')",
        "quantity('1n') == quantity('0.000000001')",
        "quantity('0.0000000001').isGreaterThan(quantity('0'))",
        "quantity('1e3') == quantity('1k')",
    ] {
        yes(e);
    }
    err("quantity('10Mo')", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    err("quantity('10Mm')", "unable to parse quantity's suffix");
    err(
        "quantity('bad')",
        "quantities must match the regular expression",
    );
    err(
        "quantity('9999999999999999999999999999999999999G').asInteger()",
        "cannot convert value to integer",
    );
    assert!(base_env()
        .compile("isQuantity([1, 2, 3])")
        .unwrap_err()
        .to_string()
        .contains("found no matching overload for 'isQuantity' applied to '(list(int))'"));
}

#[test]
fn ip_and_cidr() {
    for e in [
        "isIP('1.2.3.4') && isIP('::1') && !isIP('1.2.3') && !isIP('01.2.3.4')",
        "!isIP('::ffff:1.2.3.4') && !isIP('fe80::1%eth0') && !isIP('1.2.3.4/32')",
        "ip('127.0.0.1').family() == 4 && ip('::1').family() == 6",
        "ip('0.0.0.0').isUnspecified() && !ip('127.0.0.1').isUnspecified() && ip('::').isUnspecified()",
        "ip('127.0.0.1').isLoopback() && !ip('192.168.0.1').isLoopback() && ip('::1').isLoopback()",
        "!ip('2001:db8::abcd').isLoopback()",
        "ip('224.0.0.1').isLinkLocalMulticast() && !ip('224.0.1.1').isLinkLocalMulticast()",
        "ip('ff02::1').isLinkLocalMulticast() && !ip('fd00::1').isLinkLocalMulticast()",
        "ip('169.254.169.254').isLinkLocalUnicast() && !ip('192.168.0.1').isLinkLocalUnicast()",
        "ip('fe80::1').isLinkLocalUnicast() && !ip('fd80::1').isLinkLocalUnicast()",
        "ip('192.168.0.1').isGlobalUnicast() && !ip('255.255.255.255').isGlobalUnicast()",
        "ip('2001:db8::abcd').isGlobalUnicast() && !ip('ff00::1').isGlobalUnicast()",
        "ip.isCanonical('127.0.0.1') && !ip.isCanonical('2001:DB8::1') && ip.isCanonical('2001:db8::1')",
        "string(ip('2001:db8:0:0:0:0:0:1')) == '2001:db8::1'",
        "ip('127.0.0.1') == ip('127.0.0.1') && ip('127.0.0.1') != ip('::1')",
        "isCIDR('192.168.0.0/24') && !isCIDR('192.168.0.0') && !isCIDR('192.168.0.0/33')",
        "cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))",
        "!cidr('192.168.0.0/24').containsIP(ip('192.168.1.1'))",
        "cidr('192.168.0.0/24').containsIP('192.168.0.1')",
        "!cidr('192.168.0.0/24').containsIP('192.168.1.1')",
        "cidr('192.168.0.0/16').containsCIDR(cidr('192.168.10.0/24'))",
        "!cidr('192.168.1.0/24').containsCIDR(cidr('192.168.2.0/24'))",
        "cidr('192.168.0.0/16').containsCIDR('192.168.10.0/24')",
        "!cidr('192.168.1.0/24').containsCIDR('192.168.2.0/24')",
        "cidr('192.168.0.1/24').ip() == ip('192.168.0.1')",
        "cidr('192.168.0.1/24').ip().family() == 4 && cidr('::1/128').ip().family() == 6",
        "cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24')",
        "cidr('192.168.0.0/24') == cidr('192.168.0.0/24').masked()",
        "cidr('192.168.0.1/24') != cidr('192.168.0.1/24').masked()",
        "cidr('192.168.0.0/16').prefixLength() == 16 && cidr('::1/128').prefixLength() == 128",
        "string(cidr('192.168.0.0/24')) == '192.168.0.0/24'",
    ] {
        yes(e);
    }
    err(
        "ip('1.2.3')",
        "IP Address \"1.2.3\" parse error during conversion from string: ParseAddr(\"1.2.3\"): IPv4 address too short",
    );
    err(
        "ip('01.2.3.4')",
        "ParseAddr(\"01.2.3.4\"): IPv4 field has octet with leading zero",
    );
    err(
        "ip('::ffff:1.2.3.4')",
        "IPv4-mapped IPv6 address \"::ffff:1.2.3.4\" is not allowed",
    );
    err(
        "ip('fe80::1%eth0')",
        "IP address \"fe80::1%eth0\" with zone value is not allowed",
    );
    err(
        "cidr('1.2.3.4')",
        "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"1.2.3.4\"): no '/'",
    );
    err(
        "cidr('192.168.0.0/24').containsIP('bad')",
        "no such overload",
    );
}

#[test]
fn formats() {
    for e in [
        "format.dns1123Label().validate('my-label-name') == optional.none()",
        "format.dns1123Subdomain().validate('apiextensions.k8s.io') == optional.none()",
        "format.dns1035Label().validate('my-label-name') == optional.none()",
        "format.qualifiedName().validate('apiextensions.k8s.io/v1beta1') == optional.none()",
        "format.dns1123LabelPrefix().validate('my-label-prefix-') == optional.none()",
        "format.dns1123SubdomainPrefix().validate('mysubdomain.prefix.-') == optional.none()",
        "format.dns1035LabelPrefix().validate('my-label-prefix-') == optional.none()",
        "format.uri().validate('http://example.com') == optional.none()",
        "format.uuid().validate('123e4567-e89b-12d3-a456-426614174000') == optional.none()",
        "format.byte().validate('aGVsbG8=') == optional.none()",
        "format.date().validate('2021-01-01') == optional.none()",
        "format.datetime().validate('2021-01-01T00:00:00Z') == optional.none()",
        "format.named('dns1123Label').hasValue() && !format.named('nope').hasValue()",
        "format.dns1123Label().validate('Bad_Label').hasValue()",
        "format.uuid().validate('x') == optional.of(['does not match the UUID format'])",
        "format.named('labelValue').value().validate('a b').value().size() == 1",
    ] {
        yes(e);
    }
    assert_eq!(
        eval("format.dns1123Label().validate('Bad_Label').value()[0]"),
        Ok(Value::string("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"))
    );
}

/// No sizes known; calls priced by the library estimator.
struct LibOnly;

impl CostEstimator for LibOnly {
    fn estimate_size(&self, _: &[String], _: &Type) -> Option<SizeEstimate> {
        None
    }
    fn estimate_call_args(
        &self,
        function: &str,
        ids: &[String],
        args: &[CallArg<'_>],
    ) -> Option<CallEstimate> {
        super::cost::estimate(function, ids, args)
    }
}

#[test]
fn static_costs() {
    let cost = |e: &str| {
        let c = base_env().compile(e).unwrap();
        estimate_cost(&c, &LibOnly)
    };
    // Library accessors are nominal; global parsers keep cel-go's call cost of 1.
    assert_eq!(cost("isIP('1.2.3.4')").max, 1);
    assert_eq!(cost("quantity('1Gi').isInteger()").max, 2);
    assert_eq!(cost("ip('::1').family() == 6").max, 3);
    // find: (size + 1) * 0.1 times the regex length * 0.25.
    assert_eq!(cost("'abcdefghij'.find('[0-9]+')").max, 4);
    // A list literal's string elements have no known size: unbounded, as upstream.
    assert!(cost("['a', 'b'].isSorted()").max > 1 << 60);
    // The literal costs 10, the call one per element.
    assert_eq!(cost("[1, 2].isSorted()").max, 12);
    // Format validation: ceil(size * 0.1) * 32.
    assert_eq!(cost("format.dns1123Label().validate('abc')").max, 33);
    assert_eq!(cost("quantity('1') == quantity('1')").max, 3);
}

/// Upstream's `semver_test.go` cases and doc examples, and blang/semver's parse errors.
#[test]
fn semver() {
    for e in [
        "semver('1.2.3') == semver('1.2.3')",
        "isSemver('1.2.3-beta.1+build.1')",
        "!isSemver('') && !isSemver('v1.0.0') && !isSemver(' 1.0.0') && !isSemver('1. 0.0')",
        "!isSemver('1.0.0 ') && !isSemver('01.01.01') && !isSemver('1') && !isSemver('1.1')",
        "!isSemver('', true) && !isSemver(' 1.0.0', true) && !isSemver('1. 0.0', true)",
        "!isSemver('1.0.0 ', true)",
        "isSemver('v1.0.0', true) && isSemver('01.01.01', true)",
        "isSemver('1', true) && isSemver('1.1', true)",
        "semver('v01.01', true) == semver('1.1.0')",
        "semver('v1.0.0', true) == semver('1.0.0') && semver('1.0', true) == semver('1.0.0')",
        "semver('01.01.01', true) == semver('1.1.1')",
        "semver('0.1.0-alpha.1') != semver('0.1.0')",
        "!(semver('1.2.3') == semver('1.0.0'))",
        "semver('1.0.0').isLessThan(semver('1.2.3'))",
        "!semver('1.0.0').isLessThan(semver('1.0.0'))",
        "semver('1.2.3').isGreaterThan(semver('1.0.0'))",
        "!semver('1.0.0').isGreaterThan(semver('1.0.0'))",
        "semver('1.2.3').compareTo(semver('1.2.3')) == 0",
        "semver('1.0.0').compareTo(semver('1.2.3')) == -1",
        "semver('1.2.3').compareTo(semver('1.0.0')) == 1",
        "semver('1.2.3').compareTo(semver('0.1.2')) == 1",
        "semver('1.2.3').major() == 1 && semver('1.2.3').minor() == 2",
        "semver('1.2.3').patch() == 3",
        // Precedence (semver.org 11): prerelease below release, numeric below alphanumeric,
        // more identifiers above fewer; build metadata ignored.
        "semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1'))",
        "semver('1.0.0-alpha.1').isLessThan(semver('1.0.0-alpha.beta'))",
        "semver('1.0.0-beta.2').isLessThan(semver('1.0.0-beta.11'))",
        "semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))",
        "semver('1.0.0+a') == semver('1.0.0+b')",
    ] {
        yes(e);
    }
    err("semver('v1.0')", "No Major.Minor.Patch elements found");
    err("semver('200K')", "No Major.Minor.Patch elements found");
    err("semver('Three')", "No Major.Minor.Patch elements found");
    err("semver('')", "Version string empty");
    err(
        "semver('01.0.0')",
        "Major number must not contain leading zeroes \"01\"",
    );
    err(
        "semver('1.x.0')",
        "Invalid character(s) found in minor number \"x\"",
    );
    err(
        "semver('1.0.0-01')",
        "Numeric PreRelease version must not contain leading zeroes \"01\"",
    );
    err("semver('1.0.0-a..b')", "Prerelease is empty");
    err(
        "semver('1.0.0+a_b')",
        "Invalid character(s) found in build meta data \"a_b\"",
    );
    err(
        "semver('1..0')",
        "strconv.ParseUint: parsing \"\": invalid syntax",
    );
    err(
        "semver('99999999999999999999.0.0')",
        "strconv.ParseUint: parsing \"99999999999999999999\": value out of range",
    );
    err(
        "semver('1.0-rc', true)",
        "short version cannot contain PreRelease/Build meta data",
    );
    assert!(base_env()
        .compile("isSemver([1, 2, 3])")
        .unwrap_err()
        .to_string()
        .contains("found no matching overload for 'isSemver' applied to '(list(int))'"));
}

#[test]
fn semver_costs() {
    let cost = |e: &str| {
        let c = base_env().compile(e).unwrap();
        estimate_cost(&c, &LibOnly)
    };
    // Global parsers keep cel-go's call cost; accessors and comparisons are nominal.
    assert_eq!(cost("isSemver('1.0.0')").max, 1);
    assert_eq!(cost("semver('1.0.0').major()").max, 2);
    assert_eq!(cost("semver('1.0.0').isLessThan(semver('2.0.0'))").max, 3);
    assert_eq!(cost("semver('1.0.0') == semver('1.0.0')").max, 3);
    // Runtime: parsing is ceil(size * 0.1), accessors and comparisons 1.
    let actual = |e: &str| {
        let c = base_env().compile(e).unwrap();
        Program::new(&c)
            .with_cost_estimator(runtime_costs())
            .eval_with_limit(&EmptyActivation, None)
            .cost
    };
    assert_eq!(actual("isSemver('1.0.0-alpha.10')"), 2);
    assert_eq!(actual("semver('1.0.0').patch()"), 2);
    assert_eq!(actual("semver('1.0.0').compareTo(semver('1.0.0'))"), 3);
}

#[test]
fn quantity_exponents_never_overflow_or_explode() {
    // Go wraps int32 exponents; comparing or adding scales two billion apart would build
    // 10^2000000000: refused at parse (it panicked, or hung).
    yes("quantity('1e-2000000000') == quantity('1n')");
    yes("quantity('0e2000000000') == quantity('0')");
    yes("quantity('1e100000').isGreaterThan(quantity('1'))");
    // (Go reads 1.5e-2147483648 as 15e2147483647, its exponent wrapped.)
    for q in [
        "1.5e-2147483648",
        "1e2000000000",
        "15e2147483647",
        "1.5e2000000000",
        "1e100001",
    ] {
        err(
            &format!("quantity('{q}').isGreaterThan(quantity('1'))"),
            "unable to parse numeric part of quantity",
        );
    }
}
