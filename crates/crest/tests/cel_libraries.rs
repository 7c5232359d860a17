//! Kubernetes' CEL libraries in validation rules through kubectl: lists, regex, URLs,
//! quantities, IPs and CIDRs, formats, set/map list semantics, their error wording, and the
//! cost of library calls at CRD write.

mod common;
use common::*;
use serde_json::{json, Value};

fn gadget_crd(schema: &str) -> String {
    crd_with_schema("lib.example.com", "gadgets", "Gadget", schema)
}

fn apply(s: &Server, name: &str, spec: Value) -> (bool, String) {
    let obj = json!({
        "apiVersion": "lib.example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": name},
        "spec": spec,
    });
    let (ok, _, err) = s.kubectl_stdin(&["apply", "-f", "-"], Some(&obj.to_string()));
    (ok, err)
}

const SCHEMA: &str = r#"          type: object
          properties:
            spec:
              type: object
              x-kubernetes-validations:
                - rule: "!has(self.names) || self.names.isSorted()"
                  message: "names must be sorted"
                - rule: "!has(self.tags) || self.tags == ['a', 'b'] || size(self.tags) != 2"
                  message: "two tags must be a and b"
                - rule: "!has(self.tags) || size(self.tags + self.tags) == size(self.tags)"
                - rule: "!has(self.ports) || size(self.ports + self.ports) == size(self.ports)"
                - rule: "!has(self.limits) || self.limits.map(l, quantity(l)).all(q, q.isLessThan(quantity('1Gi')))"
                  message: "every limit must be under 1Gi"
              properties:
                names:
                  type: array
                  maxItems: 10
                  items: {type: string, maxLength: 20}
                tags:
                  type: array
                  maxItems: 10
                  x-kubernetes-list-type: set
                  items: {type: string, maxLength: 10}
                ports:
                  type: array
                  maxItems: 10
                  x-kubernetes-list-type: map
                  x-kubernetes-list-map-keys: [name]
                  items:
                    type: object
                    required: [name]
                    properties:
                      name: {type: string, maxLength: 10}
                      port: {type: integer}
                limits:
                  type: array
                  maxItems: 10
                  items: {type: string, maxLength: 20}
                endpoint:
                  type: string
                  maxLength: 200
                  x-kubernetes-validations:
                    - rule: "isURL(self) && url(self).getScheme() == 'https'"
                      message: "endpoint must be an https URL"
                    - rule: "url(self).getHostname() != 'localhost'"
                memory:
                  type: string
                  maxLength: 20
                  x-kubernetes-validations:
                    - rule: "quantity(self).isLessThan(quantity('1Gi'))"
                address:
                  type: string
                  maxLength: 50
                  x-kubernetes-validations:
                    - rule: "isIP(self) && ip(self).family() == 4"
                      message: "address must be an IPv4 address"
                network:
                  type: string
                  maxLength: 50
                  x-kubernetes-validations:
                    - rule: "cidr(self).containsIP('10.0.0.1')"
                      message: "network must contain 10.0.0.1"
                code:
                  type: string
                  maxLength: 50
                  x-kubernetes-validations:
                    - rule: "self.find('[0-9]+') == '42'"
                    - rule: "self.findAll('[a-z]+').size() <= 2"
                label:
                  type: string
                  maxLength: 100
                  x-kubernetes-validations:
                    - rule: "!format.dns1123Label().validate(self).hasValue()"
                      messageExpression: "format.dns1123Label().validate(self).value()[0]""#;

#[test]
fn library_rules_accept_and_reject_with_kubectl() {
    let s = Server::start();
    s.install_crd(&gadget_crd(SCHEMA));
    let valid = json!({
        "names": ["a", "b", "c"],
        "tags": ["b", "a"],
        "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}],
        "limits": ["512Mi", "0.5Gi", "100M"],
        "endpoint": "https://example.com:8443/path",
        "memory": "500Mi",
        "address": "10.1.2.3",
        "network": "10.0.0.0/8",
        "code": "x42y",
        "label": "my-label",
    });
    let (ok, err) = apply(&s, "g", valid.clone());
    assert!(ok, "{err}");

    let cases: Vec<(Value, &str)> = vec![
        (json!({"names": ["b", "a"]}), r#"spec: Invalid value: "object": names must be sorted"#),
        (json!({"tags": ["a", "c"]}), "two tags must be a and b"),
        (json!({"limits": ["2Gi"]}), "every limit must be under 1Gi"),
        (
            json!({"endpoint": "http://example.com"}),
            r#"spec.endpoint: Invalid value: "string": endpoint must be an https URL"#,
        ),
        (
            json!({"endpoint": "https://localhost/"}),
            r#"spec.endpoint: Invalid value: "string": failed rule: url(self).getHostname() != 'localhost'"#,
        ),
        (
            json!({"endpoint": "../relative"}),
            r#"URL parse error during conversion from string: parse "../relative": invalid URI for request evaluating rule: url(self).getHostname() != 'localhost'"#,
        ),
        (
            json!({"memory": "2Gi"}),
            r#"spec.memory: Invalid value: "string": failed rule: quantity(self).isLessThan(quantity('1Gi'))"#,
        ),
        (
            json!({"memory": "bad"}),
            r#"quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' evaluating rule: quantity(self).isLessThan(quantity('1Gi'))"#,
        ),
        (json!({"address": "::1"}), "address must be an IPv4 address"),
        (json!({"address": "010.1.2.3"}), "address must be an IPv4 address"),
        (json!({"network": "192.168.0.0/16"}), "network must contain 10.0.0.1"),
        (
            json!({"network": "10.0.0.1"}),
            r#"network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("10.0.0.1"): no '/'"#,
        ),
        (
            json!({"code": "x41y"}),
            r#"spec.code: Invalid value: "string": failed rule: self.find('[0-9]+') == '42'"#,
        ),
        (json!({"code": "a42b c d"}), "failed rule: self.findAll('[a-z]+').size() <= 2"),
        (
            json!({"label": "Not_A_Label"}),
            "spec.label: Invalid value: \"string\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'",
        ),
    ];
    for (i, (patch, want)) in cases.into_iter().enumerate() {
        let mut spec = valid.clone();
        for (k, v) in patch.as_object().into_iter().flatten() {
            spec[k] = v.clone();
        }
        let (ok, err) = apply(&s, &format!("bad{i}"), spec.clone());
        assert!(!ok, "{spec} was accepted");
        assert!(err.contains(want), "missing {want:?} in:\n{err}");
    }
}

#[test]
fn library_call_costs_at_crd_write() {
    let s = Server::start();
    let forbidden = "Forbidden: CEL rule exceeded budget by more than 100x";
    // Unbounded strings in an unbounded list: isSorted prices every string comparison.
    let unbounded = r#"          type: object
          properties:
            spec:
              type: object
              properties:
                names:
                  type: array
                  items: {type: string}
                  x-kubernetes-validations:
                    - rule: "self.isSorted()""#;
    let (ok, _, err) = s.kubectl_stdin(&["apply", "-f", "-"], Some(&gadget_crd(unbounded)));
    assert!(!ok, "unbounded isSorted was accepted");
    assert!(
        err.contains("x-kubernetes-validations[0].rule: ") && err.contains(forbidden),
        "{err}"
    );
    // Bounded, the same rule is cheap; so are regexes over bounded strings.
    let bounded = r#"          type: object
          properties:
            spec:
              type: object
              properties:
                names:
                  type: array
                  maxItems: 100
                  items: {type: string, maxLength: 64}
                  x-kubernetes-validations:
                    - rule: "self.isSorted()"
                    - rule: "self.all(n, n.find('[a-z]+') != '')""#;
    let (ok, _, err) = s.kubectl_stdin(&["apply", "-f", "-"], Some(&gadget_crd(bounded)));
    assert!(ok, "{err}");
    // findAll over an unbounded string with an unbounded pattern.
    let regex = r#"          type: object
          properties:
            spec:
              type: object
              properties:
                text:
                  type: string
                pattern:
                  type: string
              x-kubernetes-validations:
                - rule: "self.text.findAll(self.pattern).size() > 0""#;
    let (ok, _, err) = s.kubectl_stdin(&["apply", "-f", "-"], Some(&gadget_crd(regex)));
    assert!(!ok, "unbounded findAll was accepted");
    assert!(err.contains(forbidden), "{err}");
}

/// The semver library (1.33): strict parsing and `normalize`, accessors, comparisons, and
/// blang/semver's parse errors as runtime errors.
#[test]
fn semver_rules_with_kubectl() {
    let s = Server::start();
    let schema = r#"          type: object
          properties:
            spec:
              type: object
              x-kubernetes-validations:
                - rule: "!has(self.minVersion) || semver(self.version, true).compareTo(semver(self.minVersion)) >= 0"
                  message: "version must not be below minVersion"
              properties:
                version:
                  type: string
                  maxLength: 64
                  x-kubernetes-validations:
                    - rule: "isSemver(self, true)"
                      message: "version must be a semantic version"
                    - rule: "!isSemver(self, true) || semver(self, true).major() >= 1"
                      messageExpression: "'major version ' + string(semver(self, true).major()) + ' is not supported'"
                minVersion:
                  type: string
                  maxLength: 64
                strict:
                  type: string
                  maxLength: 64
                  x-kubernetes-validations:
                    - rule: "semver(self).isLessThan(semver('2.0.0')) && semver(self).patch() >= 0""#;
    s.install_crd(&gadget_crd(schema));
    let valid = json!({"version": "v1.2", "minVersion": "1.2.0-rc.1", "strict": "1.9.9-alpha+b1"});
    let (ok, err) = apply(&s, "ok", valid.clone());
    assert!(ok, "{err}");
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({"version": "1.x"}),
            r#"spec.version: Invalid value: "string": version must be a semantic version"#,
        ),
        (
            json!({"version": "0.9.0"}),
            r#"spec.version: Invalid value: "string": major version 0 is not supported"#,
        ),
        (
            json!({"minVersion": "1.2.1"}),
            r#"spec: Invalid value: "object": version must not be below minVersion"#,
        ),
        (
            json!({"strict": "2.0.0"}),
            r#"spec.strict: Invalid value: "string": failed rule: semver(self).isLessThan(semver('2.0.0'))"#,
        ),
        (
            json!({"strict": "v1.0"}),
            "No Major.Minor.Patch elements found evaluating rule: semver(self).isLessThan",
        ),
        (
            json!({"strict": "01.0.0"}),
            r#"Major number must not contain leading zeroes "01" evaluating rule"#,
        ),
    ];
    for (i, (patch, want)) in cases.into_iter().enumerate() {
        let mut spec = valid.clone();
        for (k, v) in patch.as_object().into_iter().flatten() {
            spec[k] = v.clone();
        }
        let (ok, err) = apply(&s, &format!("bad{i}"), spec.clone());
        assert!(!ok, "{spec} was accepted");
        assert!(err.contains(want), "missing {want:?} in:\n{err}");
    }
}
