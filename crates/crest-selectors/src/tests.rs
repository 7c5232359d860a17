use super::*;
use serde_json::json;

/// A resource as the selector sees it (what the server derives from its ResourceDef).
enum Res {
    Cr {
        namespaced: bool,
        selectable: Vec<String>,
    },
    Namespace,
    Default,
}

impl Res {
    fn labels(&self) -> FieldLabels<'_> {
        match self {
            Res::Cr {
                namespaced,
                selectable,
            } => FieldLabels::CustomResource {
                namespaced: *namespaced,
                selectable,
            },
            Res::Namespace => FieldLabels::Builtin {
                fields: &[
                    ("metadata.name", "metadata.name"),
                    ("status.phase", "status.phase"),
                ],
            },
            Res::Default => FieldLabels::Default,
        }
    }
}

fn shirts(namespaced: bool) -> Res {
    Res::Cr {
        namespaced,
        selectable: ["spec.color", "spec.size", "spec.count", "spec.on"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
    }
}

/// `ListFilter::parse` of a query's `labelSelector` and `fieldSelector`.
fn parse(pairs: &[(&str, &str)], d: &Res) -> Result<ListFilter, ApiError> {
    let get = |k: &str| {
        pairs
            .iter()
            .find(|(key, _)| *key == k)
            .map_or("", |(_, v)| *v)
    };
    ListFilter::parse(get("labelSelector"), get("fieldSelector"), d.labels())
}

fn label_err(s: &str) -> String {
    match parse_label_selector(s) {
        Ok(r) => panic!("{s:?} parsed: {r:?}"),
        Err(e) => e,
    }
}

fn label_matches(sel: &str, labels: Value) -> bool {
    let f = ListFilter {
        labels: parse_label_selector(sel).unwrap_or_else(|e| panic!("{sel:?}: {e}")),
        fields: vec![],
        top_fields: vec![],
    };
    f.matches(&json!({"metadata": {"labels": labels}}))
}

#[test]
fn label_operators() {
    let l = json!({"app": "web", "tier": "fe", "n": "5", "empty": ""});
    for (sel, want) in [
        ("", true),
        ("   ", true),
        ("app=web", true),
        ("app==web", true),
        ("app = web", true),
        ("app=db", false),
        ("app!=web", false),
        ("app!=db", true),
        ("missing!=x", true),
        ("app in (web, db)", true),
        ("app in (db)", false),
        ("app notin (web)", false),
        ("app notin (db,x)", true),
        ("missing notin (db)", true),
        ("missing in (db)", false),
        ("app", true),
        ("missing", false),
        ("!missing", true),
        ("!app", false),
        ("  app  ,  tier=fe  ", true),
        ("n>4", true),
        ("n>5", false),
        ("n<6", true),
        ("n < 5", false),
        ("app>1", false),
        ("missing<100", false),
        ("empty=", true),
        ("empty in ()", true),
        ("empty in (,x)", true),
        ("app in (in, notin, web)", true),
        ("in=x", false),
        ("app=web,tier notin (be),!missing,n gt 1", false),
    ] {
        if sel == "app=web,tier notin (be),!missing,n gt 1" {
            // `gt` is not an operator in the selector syntax, only `>`.
            assert_eq!(
                label_err(sel),
                "unable to parse requirement: found 'gt', expected: in, notin, =, ==, !=, gt, lt"
            );
            continue;
        }
        assert_eq!(label_matches(sel, l.clone()), want, "{sel}");
    }
}

#[test]
fn label_errors() {
    for (sel, want) in [
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        (",a", "found ',', expected: !, identifier, or 'end of string'"),
        ("a,", "found '', expected: identifier after ','"),
        ("a,,b", "found ',', expected: identifier after ','"),
        ("a=b c", "found 'c', expected: ',' or 'end of string'"),
        ("!a=b", "found '=', expected: ',' or 'end of string'"),
        ("a in b", "unable to parse requirement: found 'b' expected: '('"),
        ("a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'"),
        ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("a in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"),
        ("a in (b,=)", "unable to parse requirement: found '=', expected: ',', or identifier"),
        ("a=(b)", "unable to parse requirement: found '(', expected: identifier"),
        ("!", "unable to parse requirement: found '', expected: identifier"),
        ("a==!b", "unable to parse requirement: found '!', expected: identifier"),
        (
            "a>b",
            "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        (
            "-a=b",
            "unable to parse requirement: <nil>: Invalid value: \"-a\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        (
            "a=b$",
            "unable to parse requirement: values[0][a]: Invalid value: \"b$\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
    ] {
        assert_eq!(label_err(sel), want, "{sel}");
    }
    // Several invalid values: aggregated, indexed in sorted order.
    let e = label_err("k in (z$, a$)");
    assert!(
        e.starts_with("unable to parse requirement: [values[0][k]: Invalid value: \"a$\": "),
        "{e}"
    );
    assert!(e.contains(", values[1][k]: Invalid value: \"z$\": "), "{e}");
    assert!(e.ends_with("')]"), "{e}");
    // Negative numbers are integers but not label values.
    assert!(label_err("a>-1").starts_with(
        "unable to parse requirement: values[0][a]: Invalid value: \"-1\": a valid label"
    ));
}

#[test]
fn label_requirements_sorted_and_deduplicated() {
    let reqs = parse_label_selector("z, a in (c,b,c), !m").unwrap();
    let keys: Vec<&str> = reqs.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(keys, ["a", "m", "z"]);
    assert_eq!(reqs[0].values, ["b", "c"]);
    assert_eq!(reqs[1].op, LabelOp::DoesNotExist);
    assert_eq!(reqs[2].op, LabelOp::Exists);
}

#[test]
fn field_selector_syntax() {
    let terms = parse_field_selector("b=2,a!=1,c==3,,").unwrap();
    assert_eq!(
        terms,
        vec![
            Term {
                field: "a".into(),
                value: "1".into(),
                negated: true
            },
            Term {
                field: "b".into(),
                value: "2".into(),
                negated: false
            },
            Term {
                field: "c".into(),
                value: "3".into(),
                negated: false
            },
        ]
    );
    let t = parse_field_selector(r"x=a\,b\=c\\d").unwrap();
    assert_eq!(t[0].value, r"a,b=c\d");
    assert_eq!(parse_field_selector("x=").unwrap()[0].value, "");
    assert_eq!(parse_field_selector(r"x=b\,").unwrap()[0].value, "b,");
    assert_eq!(parse_field_selector(" x = y ").unwrap()[0].field, " x ");
    for (sel, want) in [
        ("a", "invalid selector: 'a'; can't understand 'a'"),
        ("x=1,a", "invalid selector: 'x=1,a'; can't understand 'a'"),
        (
            "a=b=c",
            "invalid field selector: unescaped character in value: 61",
        ),
        (
            "a==b=c",
            "invalid field selector: unescaped character in value: 61",
        ),
        (
            r"a=b\n",
            r"invalid field selector: invalid escape sequence: \n",
        ),
        (
            r"a=b\",
            r"invalid field selector: invalid escape sequence: \",
        ),
    ] {
        assert_eq!(parse_field_selector(sel).unwrap_err(), want, "{sel}");
    }
}

#[test]
fn field_labels_per_resource() {
    let err = |d: &Res, fs: &str| parse(&[("fieldSelector", fs)], d).unwrap_err().message;
    let ns = Res::Namespace;
    assert!(parse(&[("fieldSelector", "status.phase=Active")], &ns).is_ok());
    assert_eq!(
        err(&ns, "metadata.namespace=x"),
        "field label not supported: metadata.namespace"
    );
    let crd = Res::Default;
    assert!(parse(&[("fieldSelector", "metadata.namespace=")], &crd).is_ok());
    assert_eq!(
        err(&crd, "spec.group=x"),
        r#""spec.group" is not a known field selector: only "metadata.name", "metadata.namespace""#
    );
    let cluster = shirts(false);
    assert_eq!(
        err(&cluster, "metadata.namespace=x"),
        "field label not supported: metadata.namespace"
    );
    let namespaced = shirts(true);
    assert_eq!(
        err(&namespaced, "spec.foo=x"),
        "field label not supported: spec.foo"
    );
    // Sorted order: the first unsupported field of the sorted terms is reported.
    assert_eq!(err(&namespaced, "z=1,b=2"), "field label not supported: b");
    // The label selector is parsed first.
    let e = parse(
        &[("fieldSelector", "z=1"), ("labelSelector", "a b")],
        &namespaced,
    )
    .unwrap_err();
    assert_eq!(e.code, 400);
    assert!(e.message.starts_with("unable to parse requirement"));
}

#[test]
fn selectable_field_values() {
    let d = shirts(true);
    let obj = json!({
        "metadata": {"name": "example1", "namespace": "default", "labels": {"a": "1"}},
        "spec": {"color": "blue", "size": "S", "count": 3, "on": true},
    });
    let m = |fs: &str| {
        parse(&[("fieldSelector", fs)], &d)
            .unwrap_or_else(|e| panic!("{fs}: {}", e.message))
            .matches(&obj)
    };
    assert!(m("spec.color=blue"));
    assert!(!m("spec.color=green"));
    assert!(m("spec.color!=green"));
    assert!(m("spec.color=blue,spec.size=S"));
    assert!(!m("spec.color=blue,spec.size=M"));
    assert!(m("spec.count=3"));
    assert!(m("spec.on=true"));
    assert!(m("metadata.name=example1,metadata.namespace=default"));
    assert!(!m("metadata.namespace=other"));
    let bare = json!({"metadata": {"name": "x", "namespace": "default"}});
    let f = parse(&[("fieldSelector", "spec.color=")], &d).unwrap();
    assert!(f.matches(&bare));
    let f = parse(&[("fieldSelector", "spec.color!=")], &d).unwrap();
    assert!(!f.matches(&bare));
    let f = parse(
        &[
            ("fieldSelector", "metadata.name=x"),
            ("labelSelector", "!a"),
        ],
        &d,
    )
    .unwrap();
    assert_eq!(f.name(), Some("x"));
    assert!(f.has_selectors());
    assert!(f.matches(&bare));
    assert!(!f.matches(&obj));
    assert!(parse(&[], &d).unwrap().is_empty());
}

#[test]
fn go_formatting() {
    assert_eq!(go_sprint(&json!(1.5)), "1.5");
    assert_eq!(go_sprint(&json!(1e6)), "1e+06");
    assert_eq!(go_sprint(&json!(123456.0)), "123456");
    assert_eq!(go_sprint(&json!(1234567.0)), "1.234567e+06");
    assert_eq!(go_sprint(&json!(0.0001)), "0.0001");
    assert_eq!(go_sprint(&json!(0.00001)), "1e-05");
    assert_eq!(go_sprint(&json!(-2.5)), "-2.5");
    assert_eq!(go_sprint(&json!(-7)), "-7");
    assert_eq!(go_sprint(&json!(false)), "false");
    assert_eq!(go_sprint(&json!(null)), "");
    assert_eq!(go_sprint(&json!({"b": 1, "a": "x"})), "map[a:x b:1]");
    assert_eq!(go_sprint(&json!([1, "a", null])), "[1 a <nil>]");
    assert_eq!(go_quote("a\"b\u{1}\té"), "\"a\\\"b\\x01\\té\"");
}

#[test]
fn builtin_labels_read_first_non_empty_path() {
    let fields: &[(&str, &str)] = &[
        ("source", "source.component|reportingComponent"),
        ("regarding.name", "involvedObject.name"),
    ];
    let f = |sel: &str| {
        ListFilter::parse("", sel, FieldLabels::Builtin { fields }).expect("selector parses")
    };
    let legacy =
        json!({"metadata": {}, "source": {"component": "kubelet"}, "reportingComponent": "x"});
    let new = json!({"metadata": {}, "source": {}, "reportingComponent": "ctl", "involvedObject": {"name": "a"}});
    assert!(f("source=kubelet").matches(&legacy));
    assert!(!f("source=x").matches(&legacy));
    assert!(f("source=ctl").matches(&new));
    for obj in [&legacy, &new] {
        let bytes = serde_json::to_vec(obj).expect("json");
        for sel in [
            "source=kubelet",
            "source=ctl",
            "regarding.name=a",
            "regarding.name!=a",
        ] {
            assert_eq!(
                f(sel).matches_bytes(&bytes).expect("match"),
                f(sel).matches(obj),
                "{sel}"
            );
        }
    }
    assert!(f("regarding.name=a").matches(&new));
    let e = ListFilter::parse("", "involvedObject.name=a", FieldLabels::Builtin { fields })
        .expect_err("unsupported label");
    assert_eq!(e.message, "field label not supported: involvedObject.name");
}

/// Selectors of 30,000 distinct values or requirements (longer than the 64 KiB a request line
/// may carry, but a `ListFilter` is also what watches and deletecollection hold for the life of
/// a request, matched against every object): parsed and matched in linear time.
#[test]
fn thirty_thousand_values_and_requirements_in_linear_time() {
    const N: usize = 30_000;
    let start = std::time::Instant::now();
    let values: Vec<String> = (0..N).map(|i| format!("v{i}")).collect();
    let sel = format!("k in ({})", values.join(","));
    let f = ListFilter::parse(&sel, "", FieldLabels::Default).unwrap();
    for i in (0..N).step_by(7) {
        assert!(f.matches(&json!({"metadata": {"labels": {"k": format!("v{i}")}}})));
    }
    for _ in 0..N / 7 {
        assert!(!f.matches(&json!({"metadata": {"labels": {"k": "w"}}})));
    }
    let sel = format!("k notin ({})", values.join(","));
    let f = ListFilter::parse(&sel, "", FieldLabels::Default).unwrap();
    assert!(!f.matches(&json!({"metadata": {"labels": {"k": "v29999"}}})));
    assert!(f.matches(&json!({"metadata": {"labels": {"k": "w"}}})));

    let keys: Vec<String> = (0..N).map(|i| format!("k{i}")).collect();
    let f = ListFilter::parse(&keys.join(","), "", FieldLabels::Default).unwrap();
    let all: serde_json::Map<String, Value> = keys.iter().map(|k| (k.clone(), json!(""))).collect();
    assert!(f.matches(&json!({"metadata": {"labels": all}})));
    assert!(!f.matches(&json!({"metadata": {"labels": {"k0": ""}}})));

    let terms: Vec<String> = (0..N).map(|i| format!("metadata.name!=n{i}")).collect();
    let f = ListFilter::parse("", &terms.join(","), FieldLabels::Default).unwrap();
    assert!(f.matches(&json!({"metadata": {"name": "a"}})));
    assert!(!f.matches(&json!({"metadata": {"name": "n29999"}})));
    // Linear work over 30,000 entries takes well under a second even unoptimized; quadratic
    // work (9e8 steps) takes minutes.
    assert!(
        start.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
}
