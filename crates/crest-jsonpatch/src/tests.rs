//! Table-driven cases. Every expected result below is what evanphx/json-patch v4.12.0 (and,
//! for the typed decoding, sigs.k8s.io/json) answered for the same document and patch, run in
//! Go: `OK: <the marshalled result>`, `ERR: <the error>`, `PANIC`, or `DECODE: <the error>`
//! (`DecodePatch`'s). Documents are written as Go encodes them (kube-apiserver's patcher gets
//! `runtime.Encode` of the object).

use super::*;
use serde_json::json;

const OBJ: &str = r#"{"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#;

/// (what, document, patch, v4's answer)
const CASES: &[(&str, &str, &str, &str)] = &[
    (
        "finalizer: the first one",
        OBJ,
        r#"[{"op":"test","path":"/metadata/finalizers","value":null},{"op":"add","path":"/metadata/finalizers","value":["x"]}]"#,
        r#"OK: {"metadata":{"finalizers":["x"],"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "finalizer: the first one, finalizers null",
        r#"{"metadata":{"finalizers":null,"name":"a"}}"#,
        r#"[{"op":"test","path":"/metadata/finalizers","value":null},{"op":"add","path":"/metadata/finalizers","value":["x"]}]"#,
        r#"OK: {"metadata":{"finalizers":["x"],"name":"a"}}"#,
    ),
    (
        "finalizer: the first one when another is there",
        r#"{"metadata":{"finalizers":["a"],"name":"a"}}"#,
        r#"[{"op":"test","path":"/metadata/finalizers","value":null},{"op":"add","path":"/metadata/finalizers","value":["x"]}]"#,
        r#"ERR: testing value /metadata/finalizers failed: test failed"#,
    ),
    (
        "finalizer: another one",
        r#"{"metadata":{"finalizers":["a"],"name":"a"}}"#,
        r#"[{"op":"test","path":"/metadata/finalizers","value":["a"]},{"op":"add","path":"/metadata/finalizers/-","value":"x"}]"#,
        r#"OK: {"metadata":{"finalizers":["a","x"],"name":"a"}}"#,
    ),
    (
        "finalizer: another one, raced",
        r#"{"metadata":{"finalizers":["a","b"],"name":"a"}}"#,
        r#"[{"op":"test","path":"/metadata/finalizers","value":["a"]},{"op":"add","path":"/metadata/finalizers/-","value":"x"}]"#,
        r#"ERR: testing value /metadata/finalizers failed: test failed"#,
    ),
    (
        "finalizer: removed",
        r#"{"metadata":{"finalizers":["a","x"],"name":"a"}}"#,
        r#"[{"op":"test","path":"/metadata/finalizers/1","value":"x"},{"op":"remove","path":"/metadata/finalizers/1"}]"#,
        r#"OK: {"metadata":{"finalizers":["a"],"name":"a"}}"#,
    ),
    (
        "finalizer: removed, index moved",
        r#"{"metadata":{"finalizers":["x"],"name":"a"}}"#,
        r#"[{"op":"test","path":"/metadata/finalizers/1","value":"x"},{"op":"remove","path":"/metadata/finalizers/1"}]"#,
        r#"ERR: error in test for path: '/metadata/finalizers/1': Unable to access invalid index: 1: invalid index referenced"#,
    ),
    (
        "test: missing member against a value",
        OBJ,
        r#"[{"op":"test","path":"/spec/nope","value":1}]"#,
        r#"ERR: testing value /spec/nope failed: test failed"#,
    ),
    (
        "test: missing member against {}",
        OBJ,
        r#"[{"op":"test","path":"/spec/nope","value":{}}]"#,
        r#"ERR: testing value /spec/nope failed: test failed"#,
    ),
    (
        "test: missing member without value",
        OBJ,
        r#"[{"op":"test","path":"/spec/nope"}]"#,
        r#"PANIC"#,
    ),
    (
        "test: null member against null",
        OBJ,
        r#"[{"op":"test","path":"/spec/z","value":null}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "test: null member without value",
        OBJ,
        r#"[{"op":"test","path":"/spec/z"}]"#,
        r#"PANIC"#,
    ),
    (
        "test: existing member without value",
        OBJ,
        r#"[{"op":"test","path":"/spec/n"}]"#,
        r#"ERR: testing value /spec/n failed: test failed"#,
    ),
    (
        "test: existing member against null",
        OBJ,
        r#"[{"op":"test","path":"/spec/s","value":null}]"#,
        r#"ERR: testing value /spec/s failed: test failed"#,
    ),
    (
        "test: missing parent",
        OBJ,
        r#"[{"op":"test","path":"/nope/a","value":null}]"#,
        r#"ERR: test operation does not apply: is missing path: /nope/a: missing value"#,
    ),
    (
        "test: through a scalar",
        OBJ,
        r#"[{"op":"test","path":"/spec/s/a","value":null}]"#,
        r#"ERR: test operation does not apply: is missing path: /spec/s/a: missing value"#,
    ),
    (
        "test: through null",
        OBJ,
        r#"[{"op":"test","path":"/spec/z/a","value":null}]"#,
        r#"ERR: test operation does not apply: is missing path: /spec/z/a: missing value"#,
    ),
    (
        "test: 1 is 1",
        OBJ,
        r#"[{"op":"test","path":"/spec/n","value":1}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "test: 1 is not 1.0",
        OBJ,
        r#"[{"op":"test","path":"/spec/n","value":1.0}]"#,
        r#"ERR: testing value /spec/n failed: test failed"#,
    ),
    (
        "test: 1 is not 1e0",
        OBJ,
        r#"[{"op":"test","path":"/spec/n","value":1e0}]"#,
        r#"ERR: testing value /spec/n failed: test failed"#,
    ),
    (
        "test: a string",
        OBJ,
        r#"[{"op":"test","path":"/spec/s","value":"x"}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "test: an escaped string is not the same",
        OBJ,
        r#"[{"op":"test","path":"/spec/s","value":"\u0078"}]"#,
        r#"ERR: testing value /spec/s failed: test failed"#,
    ),
    (
        "test: < is not the document's \\u003c",
        r#"{"spec":{"s":"\u003c"}}"#,
        r#"[{"op":"test","path":"/spec/s","value":"<"}]"#,
        r#"ERR: testing value /spec/s failed: test failed"#,
    ),
    (
        "test: \\u003c is the document's \\u003c",
        r#"{"spec":{"s":"\u003c"}}"#,
        r#"[{"op":"test","path":"/spec/s","value":"\u003c"}]"#,
        r#"OK: {"spec":{"s":"\u003c"}}"#,
    ),
    (
        "test: objects in any order",
        OBJ,
        r#"[{"op":"test","path":"/spec","value":{"z":null,"s":"x","n":1,"l":[1,2]}}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "test: objects, a member missing",
        OBJ,
        r#"[{"op":"test","path":"/spec","value":{"s":"x","n":1,"l":[1,2]}}]"#,
        r#"ERR: testing value /spec failed: test failed"#,
    ),
    (
        "test: objects, null against a missing member",
        OBJ,
        r#"[{"op":"test","path":"/spec","value":{"y":null,"s":"x","n":1,"l":[1,2]}}]"#,
        r#"ERR: testing value /spec failed: test failed"#,
    ),
    (
        "test: objects, null against a value",
        OBJ,
        r#"[{"op":"test","path":"/spec","value":{"z":1,"s":"x","n":1,"l":[1,2]}}]"#,
        r#"ERR: testing value /spec failed: test failed"#,
    ),
    (
        "test: arrays",
        OBJ,
        r#"[{"op":"test","path":"/spec/l","value":[1,2]}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "test: arrays in order",
        OBJ,
        r#"[{"op":"test","path":"/spec/l","value":[2,1]}]"#,
        r#"ERR: testing value /spec/l failed: test failed"#,
    ),
    (
        "test: an array with null",
        r#"{"a":[null]}"#,
        r#"[{"op":"test","path":"/a","value":[null]}]"#,
        r#"PANIC"#,
    ),
    (
        "test: an array against null items",
        r#"{"a":[1]}"#,
        r#"[{"op":"test","path":"/a","value":[null]}]"#,
        r#"PANIC"#,
    ),
    (
        "test: an array with null, other length",
        r#"{"a":[null]}"#,
        r#"[{"op":"test","path":"/a","value":[null,1]}]"#,
        r#"ERR: testing value /a failed: test failed"#,
    ),
    (
        "test: an array with null after a difference",
        r#"{"a":["x",null]}"#,
        r#"[{"op":"test","path":"/a","value":["y",null]}]"#,
        r#"ERR: testing value /a failed: test failed"#,
    ),
    (
        "test: an array against an object",
        OBJ,
        r#"[{"op":"test","path":"/spec/l","value":{}}]"#,
        r#"ERR: testing value /spec/l failed: test failed"#,
    ),
    (
        "test: an object against an array",
        OBJ,
        r#"[{"op":"test","path":"/spec","value":[]}]"#,
        r#"ERR: testing value /spec failed: test failed"#,
    ),
    (
        "test: a scalar against an object",
        OBJ,
        r#"[{"op":"test","path":"/spec/s","value":{}}]"#,
        r#"ERR: testing value /spec/s failed: test failed"#,
    ),
    (
        "test: bool",
        r#"{"a":true}"#,
        r#"[{"op":"test","path":"/a","value":true}]"#,
        r#"OK: {"a":true}"#,
    ),
    (
        "test: index",
        OBJ,
        r#"[{"op":"test","path":"/spec/l/1","value":2}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "test: negative index",
        OBJ,
        r#"[{"op":"test","path":"/spec/l/-1","value":2}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "test: negative index past the start",
        OBJ,
        r#"[{"op":"test","path":"/spec/l/-3","value":2}]"#,
        r#"ERR: error in test for path: '/spec/l/-3': Unable to access invalid index: -3: invalid index referenced"#,
    ),
    (
        "test: index past the end",
        OBJ,
        r#"[{"op":"test","path":"/spec/l/2","value":2}]"#,
        r#"ERR: error in test for path: '/spec/l/2': Unable to access invalid index: 2: invalid index referenced"#,
    ),
    (
        "test: - index",
        OBJ,
        r#"[{"op":"test","path":"/spec/l/-","value":2}]"#,
        r#"ERR: error in test for path: '/spec/l/-': strconv.Atoi: parsing "-": invalid syntax"#,
    ),
    (
        "test: index with spaces",
        OBJ,
        r#"[{"op":"test","path":"/spec/l/ 1","value":2}]"#,
        r#"ERR: error in test for path: '/spec/l/ 1': strconv.Atoi: parsing " 1": invalid syntax"#,
    ),
    (
        "test: huge index",
        OBJ,
        r#"[{"op":"test","path":"/spec/l/99999999999999999999","value":2}]"#,
        r#"ERR: error in test for path: '/spec/l/99999999999999999999': strconv.Atoi: parsing "99999999999999999999": value out of range"#,
    ),
    (
        "test: the whole document",
        r#"{"a":1}"#,
        r#"[{"op":"test","path":"","value":{"a":1}}]"#,
        r#"OK: {"a":1}"#,
    ),
    (
        "test: the whole document, different",
        r#"{"a":1}"#,
        r#"[{"op":"test","path":"","value":{"a":2}}]"#,
        r#"ERR: testing value  failed: test failed"#,
    ),
    (
        "test: the whole document without value",
        r#"{"a":1}"#,
        r#"[{"op":"test","path":""}]"#,
        r#"PANIC"#,
    ),
    (
        "test: no path",
        OBJ,
        r#"[{"op":"test","value":1}]"#,
        r#"ERR: test operation failed to decode path: operation missing path field: missing value"#,
    ),
    (
        "test: path not a string",
        OBJ,
        r#"[{"op":"test","path":1,"value":1}]"#,
        r#"ERR: test operation failed to decode path: json: cannot unmarshal number into Go value of type string"#,
    ),
    (
        "test: an added null",
        OBJ,
        r#"[{"op":"add","path":"/b","value":null},{"op":"test","path":"/b","value":null}]"#,
        r#"OK: {"b":null,"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "test: an added null in an object",
        OBJ,
        r#"[{"op":"add","path":"/spec/b","value":null},{"op":"test","path":"/spec","value":{"b":null,"z":null,"s":"x","n":1,"l":[1,2]}}]"#,
        r#"ERR: testing value /spec failed: test failed"#,
    ),
    (
        "test: an added value in an object",
        OBJ,
        r#"[{"op":"add","path":"/spec/b","value":1.0},{"op":"test","path":"/spec/b","value":1.0}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"b":1.0,"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "test: no slash",
        OBJ,
        r#"[{"op":"test","path":"spec","value":1}]"#,
        r#"ERR: test operation does not apply: is missing path: spec: missing value"#,
    ),
    (
        "test: first segment ignored",
        OBJ,
        r#"[{"op":"test","path":"x/spec/n","value":1}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "add: a member",
        OBJ,
        r#"[{"op":"add","path":"/spec/b","value":{"c":[1]}}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"b":{"c":[1]},"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "add: replaces a member",
        OBJ,
        r#"[{"op":"add","path":"/spec/n","value":2}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":2,"s":"x","z":null}}"#,
    ),
    (
        "add: missing parent",
        OBJ,
        r#"[{"op":"add","path":"/nope/a","value":1}]"#,
        r#"ERR: add operation does not apply: doc is missing path: "/nope/a": missing value"#,
    ),
    (
        "add: through a scalar",
        OBJ,
        r#"[{"op":"add","path":"/spec/s/a","value":1}]"#,
        r#"ERR: add operation does not apply: doc is missing path: "/spec/s/a": missing value"#,
    ),
    (
        "add: through null",
        OBJ,
        r#"[{"op":"add","path":"/spec/z/a","value":1}]"#,
        r#"ERR: add operation does not apply: doc is missing path: "/spec/z/a": missing value"#,
    ),
    (
        "add: the whole document",
        OBJ,
        r#"[{"op":"add","path":"","value":{}}]"#,
        r#"ERR: add operation does not apply: doc is missing path: "": missing value"#,
    ),
    (
        "add: key \"\"",
        OBJ,
        r#"[{"op":"add","path":"/","value":1}]"#,
        r#"OK: {"":1,"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "add: escapes",
        r#"{}"#,
        r#"[{"op":"add","path":"/a~1b","value":1},{"op":"add","path":"/m~0n","value":2},{"op":"add","path":"/~01","value":3},{"op":"add","path":"/~2","value":4}]"#,
        r#"OK: {"a/b":1,"m~n":2,"~1":3,"~2":4}"#,
    ),
    (
        "add: without value",
        OBJ,
        r#"[{"op":"add","path":"/spec/b"}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"b":null,"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "add: null value",
        OBJ,
        r#"[{"op":"add","path":"/spec/b","value":null}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"b":null,"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "add: no path",
        OBJ,
        r#"[{"op":"add","value":1}]"#,
        r#"ERR: add operation failed to decode path: missing value"#,
    ),
    (
        "add: path not a string",
        OBJ,
        r#"[{"op":"add","path":{},"value":1}]"#,
        r#"ERR: add operation failed to decode path: missing value"#,
    ),
    (
        "add: no slash",
        OBJ,
        r#"[{"op":"add","path":"spec","value":1}]"#,
        r#"ERR: add operation does not apply: doc is missing path: "spec": missing value"#,
    ),
    (
        "add: first segment ignored",
        OBJ,
        r#"[{"op":"add","path":"metadata/x","value":1}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null},"x":1}"#,
    ),
    (
        "add: - appends",
        OBJ,
        r#"[{"op":"add","path":"/spec/l/-","value":3}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2,3],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "add: len appends",
        OBJ,
        r#"[{"op":"add","path":"/spec/l/2","value":3}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2,3],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "add: past len",
        OBJ,
        r#"[{"op":"add","path":"/spec/l/3","value":3}]"#,
        r#"ERR: error in add for path: '/spec/l/3': Unable to access invalid index: 3: invalid index referenced"#,
    ),
    (
        "add: 0 inserts",
        OBJ,
        r#"[{"op":"add","path":"/spec/l/0","value":0}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[0,1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "add: -1 appends",
        OBJ,
        r#"[{"op":"add","path":"/spec/l/-1","value":3}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2,3],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "add: -2",
        OBJ,
        r#"[{"op":"add","path":"/spec/l/-2","value":3}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,3,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "add: -3 inserts first",
        OBJ,
        r#"[{"op":"add","path":"/spec/l/-3","value":0}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[0,1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "add: -4",
        OBJ,
        r#"[{"op":"add","path":"/spec/l/-4","value":0}]"#,
        r#"ERR: error in add for path: '/spec/l/-4': Unable to access invalid index: -4: invalid index referenced"#,
    ),
    (
        "add: 01",
        OBJ,
        r#"[{"op":"add","path":"/spec/l/01","value":9}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,9,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "add: +1",
        OBJ,
        r#"[{"op":"add","path":"/spec/l/+1","value":9}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,9,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "add: x",
        OBJ,
        r#"[{"op":"add","path":"/spec/l/x","value":9}]"#,
        r#"ERR: error in add for path: '/spec/l/x': value was not a proper array index: 'x': strconv.Atoi: parsing "x": invalid syntax"#,
    ),
    (
        "add: empty index",
        OBJ,
        r#"[{"op":"add","path":"/spec/l/","value":9}]"#,
        r#"ERR: error in add for path: '/spec/l/': value was not a proper array index: '': strconv.Atoi: parsing "": invalid syntax"#,
    ),
    (
        "add: huge index",
        OBJ,
        r#"[{"op":"add","path":"/spec/l/9223372036854775808","value":9}]"#,
        r#"ERR: error in add for path: '/spec/l/9223372036854775808': value was not a proper array index: '9223372036854775808': strconv.Atoi: parsing "9223372036854775808": value out of range"#,
    ),
    (
        "add: huge index then x",
        OBJ,
        r#"[{"op":"add","path":"/spec/l/99999999999999999999x","value":9}]"#,
        r#"ERR: error in add for path: '/spec/l/99999999999999999999x': value was not a proper array index: '99999999999999999999x': strconv.Atoi: parsing "99999999999999999999x": value out of range"#,
    ),
    (
        "add: index through an array",
        r#"{"a":[{},{}]}"#,
        r#"[{"op":"add","path":"/a/1/b","value":9}]"#,
        r#"OK: {"a":[{},{"b":9}]}"#,
    ),
    (
        "add: - through an array",
        r#"{"a":[{},{}]}"#,
        r#"[{"op":"add","path":"/a/-/b","value":9}]"#,
        r#"ERR: add operation does not apply: doc is missing path: "/a/-/b": missing value"#,
    ),
    (
        "add: -1 through an array",
        r#"{"a":[{},{"c":1}]}"#,
        r#"[{"op":"add","path":"/a/-1/b","value":9}]"#,
        r#"OK: {"a":[{},{"b":9,"c":1}]}"#,
    ),
    (
        "add: through an added null",
        OBJ,
        r#"[{"op":"add","path":"/b","value":null},{"op":"add","path":"/b/c","value":1}]"#,
        r#"PANIC"#,
    ),
    (
        "add: through an added value",
        OBJ,
        r#"[{"op":"add","path":"/b","value":{}},{"op":"add","path":"/b/c","value":1}]"#,
        r#"OK: {"b":{"c":1},"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "remove: a member",
        OBJ,
        r#"[{"op":"remove","path":"/spec/s"}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"z":null}}"#,
    ),
    (
        "remove: a null member",
        OBJ,
        r#"[{"op":"remove","path":"/spec/z"}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x"}}"#,
    ),
    (
        "remove: missing member",
        OBJ,
        r#"[{"op":"remove","path":"/spec/nope"}]"#,
        r#"ERR: error in remove for path: '/spec/nope': Unable to remove nonexistent key: nope: missing value"#,
    ),
    (
        "remove: missing parent",
        OBJ,
        r#"[{"op":"remove","path":"/nope/a"}]"#,
        r#"ERR: remove operation does not apply: doc is missing path: "/nope/a": missing value"#,
    ),
    (
        "remove: the whole document",
        OBJ,
        r#"[{"op":"remove","path":""}]"#,
        r#"ERR: remove operation does not apply: doc is missing path: "": missing value"#,
    ),
    (
        "remove: no path",
        OBJ,
        r#"[{"op":"remove"}]"#,
        r#"ERR: remove operation failed to decode path: missing value"#,
    ),
    (
        "remove: index",
        OBJ,
        r#"[{"op":"remove","path":"/spec/l/0"}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "remove: -1",
        OBJ,
        r#"[{"op":"remove","path":"/spec/l/-1"}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "remove: -2",
        OBJ,
        r#"[{"op":"remove","path":"/spec/l/-2"}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "remove: -3",
        OBJ,
        r#"[{"op":"remove","path":"/spec/l/-3"}]"#,
        r#"ERR: error in remove for path: '/spec/l/-3': Unable to access invalid index: -3: invalid index referenced"#,
    ),
    (
        "remove: len",
        OBJ,
        r#"[{"op":"remove","path":"/spec/l/2"}]"#,
        r#"ERR: error in remove for path: '/spec/l/2': Unable to access invalid index: 2: invalid index referenced"#,
    ),
    (
        "remove: -",
        OBJ,
        r#"[{"op":"remove","path":"/spec/l/-"}]"#,
        r#"ERR: error in remove for path: '/spec/l/-': strconv.Atoi: parsing "-": invalid syntax"#,
    ),
    (
        "remove: through an added null",
        OBJ,
        r#"[{"op":"add","path":"/b","value":null},{"op":"remove","path":"/b/c"}]"#,
        r#"PANIC"#,
    ),
    (
        "replace: a member",
        OBJ,
        r#"[{"op":"replace","path":"/spec/s","value":"y"}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"y","z":null}}"#,
    ),
    (
        "replace: a missing member adds it",
        OBJ,
        r#"[{"op":"replace","path":"/spec/nope","value":"y"}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"nope":"y","s":"x","z":null}}"#,
    ),
    (
        "replace: missing parent",
        OBJ,
        r#"[{"op":"replace","path":"/nope/a","value":1}]"#,
        r#"ERR: replace operation does not apply: doc is missing path: /nope/a: missing value"#,
    ),
    (
        "replace: index",
        OBJ,
        r#"[{"op":"replace","path":"/spec/l/1","value":3}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,3],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "replace: -1",
        OBJ,
        r#"[{"op":"replace","path":"/spec/l/-1","value":3}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,3],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "replace: len",
        OBJ,
        r#"[{"op":"replace","path":"/spec/l/2","value":3}]"#,
        r#"ERR: replace operation does not apply: doc is missing key: /spec/l/2: missing value"#,
    ),
    (
        "replace: -",
        OBJ,
        r#"[{"op":"replace","path":"/spec/l/-","value":3}]"#,
        r#"ERR: replace operation does not apply: doc is missing key: /spec/l/-: missing value"#,
    ),
    (
        "replace: without value",
        OBJ,
        r#"[{"op":"replace","path":"/spec/s"}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":null,"z":null}}"#,
    ),
    (
        "replace: the whole document",
        OBJ,
        r#"[{"op":"replace","path":"","value":{"x":1}}]"#,
        r#"OK: {"x":1}"#,
    ),
    (
        "replace: the whole document with an array",
        OBJ,
        r#"[{"op":"replace","path":"","value":[1]}]"#,
        r#"OK: [1]"#,
    ),
    (
        "replace: the whole document with a scalar",
        OBJ,
        r#"[{"op":"replace","path":"","value":1}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "replace: the whole document with null",
        OBJ,
        r#"[{"op":"replace","path":"","value":null}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "replace: the whole document without value",
        OBJ,
        r#"[{"op":"replace","path":""}]"#,
        r#"PANIC"#,
    ),
    (
        "replace: no path",
        OBJ,
        r#"[{"op":"replace","value":1}]"#,
        r#"ERR: replace operation failed to decode path: operation missing path field: missing value"#,
    ),
    (
        "replace: path not a string",
        OBJ,
        r#"[{"op":"replace","path":true,"value":1}]"#,
        r#"ERR: replace operation failed to decode path: json: cannot unmarshal bool into Go value of type string"#,
    ),
    (
        "move: a member",
        OBJ,
        r#"[{"op":"move","from":"/spec/s","path":"/metadata/s"}]"#,
        r#"OK: {"metadata":{"name":"a","s":"x"},"spec":{"l":[1,2],"n":1,"z":null}}"#,
    ),
    (
        "move: a null member",
        OBJ,
        r#"[{"op":"move","from":"/spec/z","path":"/metadata/z"}]"#,
        r#"OK: {"metadata":{"name":"a","z":null},"spec":{"l":[1,2],"n":1,"s":"x"}}"#,
    ),
    (
        "move: a missing member",
        OBJ,
        r#"[{"op":"move","from":"/spec/nope","path":"/metadata/s"}]"#,
        r#"ERR: error in move for path: 'nope': Unable to remove nonexistent key: nope: missing value"#,
    ),
    (
        "move: missing from parent",
        OBJ,
        r#"[{"op":"move","from":"/nope/a","path":"/metadata/s"}]"#,
        r#"ERR: move operation does not apply: doc is missing from path: /nope/a: missing value"#,
    ),
    (
        "move: from the whole document",
        OBJ,
        r#"[{"op":"move","from":"","path":"/metadata/s"}]"#,
        r#"ERR: move operation does not apply: doc is missing from path: : missing value"#,
    ),
    (
        "move: bad index",
        OBJ,
        r#"[{"op":"move","from":"/spec/l/5","path":"/metadata/s"}]"#,
        r#"ERR: error in move for path: '5': Unable to access invalid index: 5: invalid index referenced"#,
    ),
    (
        "move: - index",
        OBJ,
        r#"[{"op":"move","from":"/spec/l/-","path":"/metadata/s"}]"#,
        r#"ERR: error in move for path: '-': strconv.Atoi: parsing "-": invalid syntax"#,
    ),
    (
        "move: into its own child",
        OBJ,
        r#"[{"op":"move","from":"/spec","path":"/spec/x"}]"#,
        r#"ERR: move operation does not apply: doc is missing destination path: /spec/x: missing value"#,
    ),
    (
        "move: missing destination",
        OBJ,
        r#"[{"op":"move","from":"/spec/s","path":"/nope/s"}]"#,
        r#"ERR: move operation does not apply: doc is missing destination path: /nope/s: missing value"#,
    ),
    (
        "move: to -",
        OBJ,
        r#"[{"op":"move","from":"/spec/n","path":"/spec/l/-"}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2,1],"s":"x","z":null}}"#,
    ),
    (
        "move: within an array",
        OBJ,
        r#"[{"op":"move","from":"/spec/l/0","path":"/spec/l/1"}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[2,1],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "move: within an array, past the end",
        OBJ,
        r#"[{"op":"move","from":"/spec/l/0","path":"/spec/l/2"}]"#,
        r#"ERR: error in move for path: '/spec/l/2': Unable to access invalid index: 2: invalid index referenced"#,
    ),
    (
        "move: no from",
        OBJ,
        r#"[{"op":"move","path":"/x"}]"#,
        r#"ERR: move operation failed to decode from: operation, missing from field: missing value"#,
    ),
    (
        "move: no path",
        OBJ,
        r#"[{"op":"move","from":"/spec/s"}]"#,
        r#"ERR: move operation failed to decode path: operation missing path field: missing value"#,
    ),
    (
        "move: to itself",
        OBJ,
        r#"[{"op":"move","from":"/spec/s","path":"/spec/s"}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "copy: a member",
        OBJ,
        r#"[{"op":"copy","from":"/spec/l","path":"/metadata/l"}]"#,
        r#"OK: {"metadata":{"l":[1,2],"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "copy: a missing member copies null",
        OBJ,
        r#"[{"op":"copy","from":"/spec/nope","path":"/metadata/x"}]"#,
        r#"OK: {"metadata":{"name":"a","x":null},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "copy: a null member",
        OBJ,
        r#"[{"op":"copy","from":"/spec/z","path":"/metadata/x"}]"#,
        r#"OK: {"metadata":{"name":"a","x":null},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "copy: missing from parent",
        OBJ,
        r#"[{"op":"copy","from":"/nope/a","path":"/metadata/x"}]"#,
        r#"ERR: copy operation does not apply: doc is missing from path: /nope/a: missing value"#,
    ),
    (
        "copy: bad index",
        OBJ,
        r#"[{"op":"copy","from":"/spec/l/2","path":"/metadata/x"}]"#,
        r#"ERR: error in copy for from: '/spec/l/2': Unable to access invalid index: 2: invalid index referenced"#,
    ),
    (
        "copy: missing destination",
        OBJ,
        r#"[{"op":"copy","from":"/spec/s","path":"/nope/x"}]"#,
        r#"ERR: copy operation does not apply: doc is missing destination path: /nope/x: missing value"#,
    ),
    (
        "copy: to -",
        OBJ,
        r#"[{"op":"copy","from":"/spec/n","path":"/spec/l/-"}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2,1],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "copy: into its own child",
        OBJ,
        r#"[{"op":"copy","from":"/spec","path":"/spec/x"}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","x":{"l":[1,2],"n":1,"s":"x","z":null},"z":null}}"#,
    ),
    (
        "copy: no from",
        OBJ,
        r#"[{"op":"copy","path":"/x"}]"#,
        r#"ERR: copy operation failed to decode from: operation, missing from field: missing value"#,
    ),
    (
        "copy: no path",
        OBJ,
        r#"[{"op":"copy","from":"/spec/s"}]"#,
        r#"ERR: copy operation failed to decode path: missing value"#,
    ),
    (
        "copy: the whole document",
        OBJ,
        r#"[{"op":"copy","from":"","path":"/x"}]"#,
        r#"ERR: copy operation does not apply: doc is missing from path: : missing value"#,
    ),
    (
        "copy: an added null tests as {}",
        OBJ,
        r#"[{"op":"add","path":"/b","value":null},{"op":"copy","from":"/b","path":"/c"},{"op":"test","path":"/c","value":{}}]"#,
        r#"OK: {"b":null,"c":null,"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "copy: an added null tests as []",
        OBJ,
        r#"[{"op":"add","path":"/b","value":null},{"op":"copy","from":"/b","path":"/c"},{"op":"test","path":"/c","value":[]}]"#,
        r#"ERR: testing value /c failed: test failed"#,
    ),
    (
        "copy: an added null is not null",
        OBJ,
        r#"[{"op":"add","path":"/b","value":null},{"op":"copy","from":"/b","path":"/c"},{"op":"test","path":"/c","value":null}]"#,
        r#"ERR: testing value /c failed: test failed"#,
    ),
    (
        "copy: an added null is not {\"a\":1}",
        OBJ,
        r#"[{"op":"add","path":"/b","value":null},{"op":"copy","from":"/b","path":"/c"},{"op":"test","path":"/c","value":{"a":1}}]"#,
        r#"ERR: testing value /c failed: test failed"#,
    ),
    (
        "copy: an added null reads as a nil map",
        OBJ,
        r#"[{"op":"add","path":"/b","value":null},{"op":"copy","from":"/b","path":"/c"},{"op":"test","path":"/c/x","value":null}]"#,
        r#"OK: {"b":null,"c":null,"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "copy: an added null, removing from it",
        OBJ,
        r#"[{"op":"add","path":"/b","value":null},{"op":"copy","from":"/b","path":"/c"},{"op":"remove","path":"/c/x"}]"#,
        r#"ERR: error in remove for path: '/c/x': Unable to remove nonexistent key: x: missing value"#,
    ),
    (
        "copy: an added null, adding to it",
        OBJ,
        r#"[{"op":"add","path":"/b","value":null},{"op":"copy","from":"/b","path":"/c"},{"op":"add","path":"/c/x","value":1}]"#,
        r#"PANIC"#,
    ),
    (
        "copy: an added null, replacing in it",
        OBJ,
        r#"[{"op":"add","path":"/b","value":null},{"op":"copy","from":"/b","path":"/c"},{"op":"replace","path":"/c/x","value":1}]"#,
        r#"PANIC"#,
    ),
    (
        "copy: an added null, copied twice",
        OBJ,
        r#"[{"op":"add","path":"/b","value":null},{"op":"copy","from":"/b","path":"/c"},{"op":"copy","from":"/c","path":"/d"},{"op":"test","path":"/d","value":{}}]"#,
        r#"OK: {"b":null,"c":null,"d":null,"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "copy: a copied null compared in an object",
        r#"{}"#,
        r#"[{"op":"add","path":"/b","value":null},{"op":"copy","from":"/b","path":"/c"},{"op":"test","path":"","value":{"b":null,"c":null}}]"#,
        r#"ERR: testing value  failed: test failed"#,
    ),
    (
        "copy: keeps the patch's number form",
        OBJ,
        r#"[{"op":"add","path":"/b","value":1.0},{"op":"copy","from":"/b","path":"/c"},{"op":"test","path":"/c","value":1.0}]"#,
        r#"OK: {"b":1.0,"c":1.0,"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "copy: escapes the patch's <",
        OBJ,
        r#"[{"op":"add","path":"/b","value":"<"},{"op":"copy","from":"/b","path":"/c"},{"op":"test","path":"/c","value":"<"}]"#,
        r#"ERR: testing value /c failed: test failed"#,
    ),
    (
        "copy: an object with an added null",
        OBJ,
        r#"[{"op":"add","path":"/spec/b","value":null},{"op":"copy","from":"/spec","path":"/c"},{"op":"test","path":"/c","value":{"b":null,"z":null,"s":"x","n":1,"l":[1,2]}}]"#,
        r#"OK: {"c":{"b":null,"l":[1,2],"n":1,"s":"x","z":null},"metadata":{"name":"a"},"spec":{"b":null,"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "op: unknown",
        OBJ,
        r#"[{"op":"nope","path":"/a"}]"#,
        r#"ERR: Unexpected kind: nope"#,
    ),
    (
        "op: missing",
        OBJ,
        r#"[{"path":"/a"}]"#,
        r#"ERR: Unexpected kind: unknown"#,
    ),
    (
        "op: not a string",
        OBJ,
        r#"[{"op":1,"path":"/a"}]"#,
        r#"ERR: Unexpected kind: unknown"#,
    ),
    (
        "op: case",
        OBJ,
        r#"[{"op":"Add","path":"/a","value":1}]"#,
        r#"ERR: Unexpected kind: Add"#,
    ),
    (
        "op: null",
        OBJ,
        r#"[null]"#,
        r#"ERR: Unexpected kind: unknown"#,
    ),
    (
        "op: duplicate members, the last wins",
        OBJ,
        r#"[{"op":"add","op":"remove","path":"/spec/s"}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"z":null}}"#,
    ),
    (
        "op: fails after earlier ones",
        OBJ,
        r#"[{"op":"add","path":"/x","value":1},{"op":"remove","path":"/nope"}]"#,
        r#"ERR: error in remove for path: '/nope': Unable to remove nonexistent key: nope: missing value"#,
    ),
    (
        "patch: empty",
        OBJ,
        r#"[]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "patch: null",
        OBJ,
        r#"null"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "patch: an object",
        OBJ,
        r#"{"op":"add"}"#,
        r#"DECODE: json: cannot unmarshal object into Go value of type jsonpatch.Patch"#,
    ),
    (
        "patch: a string",
        OBJ,
        r#""x""#,
        r#"DECODE: json: cannot unmarshal string into Go value of type jsonpatch.Patch"#,
    ),
    (
        "patch: a number item",
        OBJ,
        r#"[1]"#,
        r#"DECODE: json: cannot unmarshal number into Go value of type jsonpatch.Operation"#,
    ),
    (
        "patch: an array item",
        OBJ,
        r#"[[]]"#,
        r#"DECODE: json: cannot unmarshal array into Go value of type jsonpatch.Operation"#,
    ),
    (
        "patch: unknown members are ignored",
        OBJ,
        r#"[{"op":"add","path":"/x","value":1,"nope":2}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null},"x":1}"#,
    ),
    (
        "doc: an array",
        r#"[1]"#,
        r#"[{"op":"add","path":"/0","value":0},{"op":"test","path":"/1","value":1}]"#,
        r#"OK: [0,1]"#,
    ),
    (
        "doc: null",
        r#"null"#,
        r#"[{"op":"test","path":"/a","value":null}]"#,
        r#"OK: null"#,
    ),
    (
        "doc: null, add",
        r#"null"#,
        r#"[{"op":"add","path":"/a","value":1}]"#,
        r#"PANIC"#,
    ),
    (
        "more: root array, -",
        r#"[1]"#,
        r#"[{"op":"add","path":"/-","value":2},{"op":"test","path":"","value":[1,2]},{"op":"remove","path":"/0"}]"#,
        r#"OK: [2]"#,
    ),
    (
        "more: empty key in an object",
        OBJ,
        r#"[{"op":"add","path":"/spec/","value":1},{"op":"test","path":"/spec/","value":1}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"":1,"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "more: escapes on the way",
        r#"{"a/b":{}}"#,
        r#"[{"op":"add","path":"/a~1b/c~0d","value":1}]"#,
        r#"OK: {"a/b":{"c~d":1}}"#,
    ),
    (
        "more: a numeric member",
        r#"{}"#,
        r#"[{"op":"add","path":"/0","value":1},{"op":"remove","path":"/0"}]"#,
        r#"OK: {}"#,
    ),
    (
        "more: copy to a bad index",
        OBJ,
        r#"[{"op":"copy","from":"/spec/n","path":"/spec/l/5"}]"#,
        r#"ERR: error while adding value during copy: Unable to access invalid index: 5: invalid index referenced"#,
    ),
    (
        "more: copy to x",
        OBJ,
        r#"[{"op":"copy","from":"/spec/n","path":"/spec/l/x"}]"#,
        r#"ERR: error while adding value during copy: value was not a proper array index: 'x': strconv.Atoi: parsing "x": invalid syntax"#,
    ),
    (
        "more: move to a bad index",
        OBJ,
        r#"[{"op":"move","from":"/spec/n","path":"/spec/l/-5"}]"#,
        r#"ERR: error in move for path: '/spec/l/-5': Unable to access invalid index: -5: invalid index referenced"#,
    ),
    (
        "more: move into an array from the end",
        OBJ,
        r#"[{"op":"move","from":"/spec/n","path":"/spec/l/-3"}]"#,
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,1,2],"s":"x","z":null}}"#,
    ),
    (
        "more: duplicate members in a value",
        r#"{}"#,
        r#"[{"op":"add","path":"/v","value":{"a":1,"a":2}},{"op":"test","path":"/v","value":{"a":2}}]"#,
        r#"OK: {"v":{"a":2}}"#,
    ),
    (
        "more: a copied document null",
        OBJ,
        r#"[{"op":"copy","from":"/spec/z","path":"/c"},{"op":"test","path":"/c","value":null}]"#,
        r#"OK: {"c":null,"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
    (
        "more: an object member null against absent",
        OBJ,
        r#"[{"op":"test","path":"/spec","value":{"s":"x","n":1,"l":[1,2]}}]"#,
        r#"ERR: testing value /spec failed: test failed"#,
    ),
    (
        "more: replaced document, then more",
        OBJ,
        r#"[{"op":"replace","path":"","value":{"a":{"b":1}}},{"op":"move","from":"/a/b","path":"/c"},{"op":"test","path":"","value":{"a":{},"c":1}}]"#,
        r#"OK: {"a":{},"c":1}"#,
    ),
    (
        "more: test against a number float",
        r#"{"f":1.5}"#,
        r#"[{"op":"test","path":"/f","value":1.5}]"#,
        r#"OK: {"f":1.5}"#,
    ),
    (
        "more: test exponent form",
        r#"{"f":1e-7}"#,
        r#"[{"op":"test","path":"/f","value":1e-7}]"#,
        r#"OK: {"f":1e-7}"#,
    ),
    (
        "more: test big number",
        r#"{"f":1e+21}"#,
        r#"[{"op":"test","path":"/f","value":1e+21}]"#,
        r#"OK: {"f":1e+21}"#,
    ),
    (
        "more: test nested arrays",
        r#"{"a":[[1],[2,{"x":[]}]]}"#,
        r#"[{"op":"test","path":"/a","value":[[1],[2,{"x":[]}]]}]"#,
        r#"OK: {"a":[[1],[2,{"x":[]}]]}"#,
    ),
    (
        "more: test whole document after an added null",
        r#"{}"#,
        r#"[{"op":"add","path":"/b","value":null},{"op":"test","path":"","value":{"b":null}}]"#,
        r#"ERR: testing value  failed: test failed"#,
    ),
    (
        "more: remove from a document array",
        r#"[1,2]"#,
        r#"[{"op":"remove","path":"/-1"}]"#,
        r#"OK: [1]"#,
    ),
    (
        "more: utf-8 as is",
        r#"{"s":"é"}"#,
        r#"[{"op":"test","path":"/s","value":"é"}]"#,
        r#"OK: {"s":"é"}"#,
    ),
    (
        "more: utf-8 escaped",
        r#"{"s":"é"}"#,
        r#"[{"op":"test","path":"/s","value":"\u00e9"}]"#,
        r#"ERR: testing value /s failed: test failed"#,
    ),
    (
        "more: line separator escaped",
        r#"{"s":"\u2028"}"#,
        r#"[{"op":"test","path":"/s","value":"\u2028"}]"#,
        r#"OK: {"s":"\u2028"}"#,
    ),
    (
        "more: line separator as is",
        r#"{"s":"\u2028"}"#,
        "[{\"op\":\"test\",\"path\":\"/s\",\"value\":\"\u{2028}\"}]",
        r#"ERR: testing value /s failed: test failed"#,
    ),
    (
        "more: whitespace in a value",
        OBJ,
        "[{\"op\":\"test\",\"path\":\"/spec/l\",\"value\":[ 1 ,\t 2 ]}]",
        r#"OK: {"metadata":{"name":"a"},"spec":{"l":[1,2],"n":1,"s":"x","z":null}}"#,
    ),
];

/// (document, patch, AccumulatedCopySizeLimit, v4's answer)
const COPY_LIMITS: &[(&str, &str, u64, &str)] = &[
    (
        r#"{"d":["0123456789"]}"#,
        r#"[{"op":"copy","from":"/d","path":"/e"},{"op":"copy","from":"/d","path":"/d/-"},{"op":"copy","from":"/d","path":"/f"}]"#,
        0,
        r#"OK: {"d":["0123456789",["0123456789"]],"e":["0123456789"],"f":["0123456789",["0123456789"]]}"#,
    ),
    (
        r#"{"d":["0123456789"]}"#,
        r#"[{"op":"copy","from":"/d","path":"/e"},{"op":"copy","from":"/d","path":"/d/-"},{"op":"copy","from":"/d","path":"/f"}]"#,
        57,
        r#"OK: {"d":["0123456789",["0123456789"]],"e":["0123456789"],"f":["0123456789",["0123456789"]]}"#,
    ),
    (
        r#"{"d":["0123456789"]}"#,
        r#"[{"op":"copy","from":"/d","path":"/e"},{"op":"copy","from":"/d","path":"/d/-"},{"op":"copy","from":"/d","path":"/f"}]"#,
        56,
        r#"ERR: Unable to complete the copy, the accumulated size increase of copy is 57, exceeding the limit 56"#,
    ),
    (
        r#"{"s":"\u003c\u0026"}"#,
        r#"[{"op":"copy","from":"/s","path":"/t"},{"op":"copy","from":"/s","path":"/u"}]"#,
        28,
        r#"OK: {"s":"\u003c\u0026","t":"\u003c\u0026","u":"\u003c\u0026"}"#,
    ),
    (
        r#"{"s":"\u003c\u0026"}"#,
        r#"[{"op":"copy","from":"/s","path":"/t"},{"op":"copy","from":"/s","path":"/u"}]"#,
        27,
        r#"ERR: Unable to complete the copy, the accumulated size increase of copy is 28, exceeding the limit 27"#,
    ),
    (
        r#"{}"#,
        r#"[{"op":"add","path":"/b","value":"<&"},{"op":"copy","from":"/b","path":"/c"},{"op":"copy","from":"/b","path":"/d"}]"#,
        28,
        r#"OK: {"b":"\u003c\u0026","c":"\u003c\u0026","d":"\u003c\u0026"}"#,
    ),
    (
        r#"{}"#,
        r#"[{"op":"add","path":"/b","value":"<&"},{"op":"copy","from":"/b","path":"/c"},{"op":"copy","from":"/b","path":"/d"}]"#,
        27,
        r#"ERR: Unable to complete the copy, the accumulated size increase of copy is 28, exceeding the limit 27"#,
    ),
    (
        r#"{"z":null}"#,
        r#"[{"op":"copy","from":"/z","path":"/a"},{"op":"copy","from":"/nope","path":"/b"},{"op":"add","path":"/n","value":null},{"op":"copy","from":"/n","path":"/c"},{"op":"copy","from":"/n","path":"/d"},{"op":"copy","from":"/n","path":"/e"},{"op":"copy","from":"/n","path":"/f"}]"#,
        16,
        r#"OK: {"a":null,"b":null,"c":null,"d":null,"e":null,"f":null,"n":null,"z":null}"#,
    ),
    (
        r#"{"z":null}"#,
        r#"[{"op":"copy","from":"/z","path":"/a"},{"op":"copy","from":"/nope","path":"/b"},{"op":"add","path":"/n","value":null},{"op":"copy","from":"/n","path":"/c"},{"op":"copy","from":"/n","path":"/d"},{"op":"copy","from":"/n","path":"/e"},{"op":"copy","from":"/n","path":"/f"}]"#,
        15,
        r#"ERR: Unable to complete the copy, the accumulated size increase of copy is 16, exceeding the limit 15"#,
    ),
    (
        r#"{"o":{"a\u003c":[1,null,{"x":true}],"b":1.5}}"#,
        r#"[{"op":"copy","from":"/o","path":"/p"},{"op":"copy","from":"/o","path":"/q"}]"#,
        78,
        r#"OK: {"o":{"a\u003c":[1,null,{"x":true}],"b":1.5},"p":{"a\u003c":[1,null,{"x":true}],"b":1.5},"q":{"a\u003c":[1,null,{"x":true}],"b":1.5}}"#,
    ),
    (
        r#"{"o":{"a\u003c":[1,null,{"x":true}],"b":1.5}}"#,
        r#"[{"op":"copy","from":"/o","path":"/p"},{"op":"copy","from":"/o","path":"/q"}]"#,
        77,
        r#"ERR: Unable to complete the copy, the accumulated size increase of copy is 78, exceeding the limit 77"#,
    ),
    (
        r#"{}"#,
        r#"[{"op":"add","path":"/o","value":{"b" : [1.0, "\u0041"], "a":{}}},{"op":"copy","from":"/o","path":"/p"},{"op":"copy","from":"/o","path":"/q"}]"#,
        54,
        r#"OK: {"o":{"b":[1.0,"\u0041"],"a":{}},"p":{"b":[1.0,"\u0041"],"a":{}},"q":{"b":[1.0,"\u0041"],"a":{}}}"#,
    ),
    (
        r#"{}"#,
        r#"[{"op":"add","path":"/o","value":{"b" : [1.0, "\u0041"], "a":{}}},{"op":"copy","from":"/o","path":"/p"},{"op":"copy","from":"/o","path":"/q"}]"#,
        53,
        r#"ERR: Unable to complete the copy, the accumulated size increase of copy is 54, exceeding the limit 53"#,
    ),
];

/// (patch, the 400's message with fieldValidation Strict or Warn): sigs.k8s.io/json's first type
/// error decoding the body as `[]handlers.jsonPatchOp` (string `op`, `path`, `from`).
const TYPED_DECODING: &[(&str, &str)] = &[
    (r#"{"op":"add"}"#, "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"),
    (r#""x""#, "error decoding patch: json: cannot unmarshal string into Go value of type []handlers.jsonPatchOp"),
    ("5", "error decoding patch: json: cannot unmarshal number into Go value of type []handlers.jsonPatchOp"),
    ("[1]", "error decoding patch: json: cannot unmarshal number into Go value of type handlers.jsonPatchOp"),
    ("[true]", "error decoding patch: json: cannot unmarshal bool into Go value of type handlers.jsonPatchOp"),
    ("[[]]", "error decoding patch: json: cannot unmarshal array into Go value of type handlers.jsonPatchOp"),
    (r#"[null,{"op":5}]"#, "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string"),
    (r#"[{"op":"add","path":{}}]"#, "error decoding patch: json: cannot unmarshal object into Go struct field jsonPatchOp.path of type string"),
    (r#"[{"from":[1]}]"#, "error decoding patch: json: cannot unmarshal array into Go struct field jsonPatchOp.from of type string"),
    (r#"[{"op":"add","path":"/a","from":true}]"#, "error decoding patch: json: cannot unmarshal bool into Go struct field jsonPatchOp.from of type string"),
    // Each duplicate is decoded.
    (r#"[{"op":"x","op":3}]"#, "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string"),
    // The first error in the body.
    (r#"[{"op":"a"},2,{"path":1}]"#, "error decoding patch: json: cannot unmarshal number into Go value of type handlers.jsonPatchOp"),
    (r#"[{"path":1},2]"#, "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.path of type string"),
];

/// The answer in the tables' form.
fn outcome(doc: &str, patch: &str, typed_ops: bool, limit: u64) -> String {
    let doc: Value = serde_json::from_str(doc).expect("document");
    let p = match Patch::decode(patch.as_bytes(), typed_ops) {
        Ok(p) => p,
        Err(e) => return format!("DECODE: {e}"),
    };
    match p.apply(&doc, limit) {
        Ok(v) => format!("OK: {v}"),
        Err(ApplyError::Failed(m)) => format!("ERR: {m}"),
        Err(ApplyError::Panics(_)) => "PANIC".into(),
        Err(ApplyError::TooDeep) => "TOO DEEP".into(),
    }
}

/// Compares with v4's answer: results as JSON values (Go's output escapes `<` and keeps a
/// patch's number forms, which decode to the same values), the rest as text.
fn check(what: &str, got: &str, want: &str) {
    match (got.strip_prefix("OK: "), want.strip_prefix("OK: ")) {
        (Some(g), Some(w)) => {
            let g: Value = serde_json::from_str(g).expect("result");
            let w: Value = serde_json::from_str(w).expect("expected result");
            assert_eq!(g, w, "{what}");
        }
        _ => assert_eq!(got, want, "{what}"),
    }
}

#[test]
fn operations_as_v4_applies_them() {
    for (what, doc, patch, want) in CASES {
        // Without typed decoding: what DecodePatch and Apply answer.
        check(what, &outcome(doc, patch, false, 0), want);
    }
}

#[test]
fn copies_add_up_as_v4_counts_them() {
    for (doc, patch, limit, want) in COPY_LIMITS {
        check(
            &format!("{patch} within {limit}"),
            &outcome(doc, patch, false, *limit),
            want,
        );
    }
}

#[test]
fn typed_decoding_reports_the_first_type_error() {
    for (patch, want) in TYPED_DECODING {
        assert_eq!(
            Patch::decode(patch.as_bytes(), true).map(|p| p.len()),
            Err(DecodeError(want.to_string())),
            "{patch}"
        );
    }
    // Nulls, unknown members and members in other cases are no type errors (the unknown
    // ones are strict errors, reported by crest-codec).
    for ok in [
        "null",
        "[]",
        "[null]",
        r#"[{"value":1,"op":null,"path":null,"from":null}]"#,
        r#"[{"Op":3,"value":{"op":1}}]"#,
    ] {
        assert!(Patch::decode(ok.as_bytes(), true).is_ok(), "{ok}");
    }
    // Untyped, only the list and its items are checked, with DecodePatch's wording.
    assert_eq!(
        Patch::decode(br#"[{"op":5,"path":{}}]"#, false).map(|p| p.len()),
        Ok(1)
    );
    assert_eq!(
        Patch::decode(br#"[{"op":"a"},2]"#, false).map(|p| p.len()),
        Err(DecodeError(
            "json: cannot unmarshal number into Go value of type jsonpatch.Operation".into()
        ))
    );
    assert_eq!(
        Patch::decode(b"[1,", true).map(|p| p.len()),
        Err(DecodeError(
            "error decoding patch: EOF while parsing a value at line 1 column 3".into()
        ))
    );
}

/// kube-runtime's `finalizer()` (kube-runtime 5.0, `finalizer.rs`): the patches it sends to
/// add the first finalizer, another one, and to remove one.
#[test]
fn kube_runtime_finalizer_patches() {
    let first = br#"[{"op":"test","path":"/metadata/finalizers","value":null},{"op":"add","path":"/metadata/finalizers","value":["example.com/cleanup"]}]"#;
    let obj = json!({"apiVersion": "example.com/v1", "kind": "Thing",
        "metadata": {"name": "t", "namespace": "default", "resourceVersion": "5"},
        "spec": {}});
    let p = Patch::decode(first, true).expect("decodes");
    let added = p.apply(&obj, 0).expect("applies");
    assert_eq!(
        added["metadata"]["finalizers"],
        json!(["example.com/cleanup"])
    );
    // Sent again (another controller was first), the test fails: 422 for the client to retry.
    assert!(matches!(p.apply(&added, 0), Err(ApplyError::Failed(_))));

    let another = br#"[{"op":"test","path":"/metadata/finalizers","value":["example.com/cleanup"]},{"op":"add","path":"/metadata/finalizers/-","value":"example.com/other"}]"#;
    let two = Patch::decode(another, true)
        .expect("decodes")
        .apply(&added, 0)
        .expect("applies");
    assert_eq!(
        two["metadata"]["finalizers"],
        json!(["example.com/cleanup", "example.com/other"])
    );

    let remove = br#"[{"op":"test","path":"/metadata/finalizers/0","value":"example.com/cleanup"},{"op":"remove","path":"/metadata/finalizers/0"}]"#;
    let one = Patch::decode(remove, true)
        .expect("decodes")
        .apply(&two, 0)
        .expect("applies");
    assert_eq!(one["metadata"]["finalizers"], json!(["example.com/other"]));
    assert_eq!(
        Patch::decode(remove, true).expect("decodes").apply(&one, 0),
        Err(ApplyError::Failed(
            "testing value /metadata/finalizers/0 failed: test failed".into()
        ))
    );
}

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

/// MAX_NESTING is what serde_json (every decoder in Crest) reads back.
#[test]
fn max_nesting_is_what_serde_json_reads() {
    let depth = MAX_NESTING as usize;
    assert!(serde_json::from_str::<Value>(&nested(depth)).is_ok());
    assert!(serde_json::from_str::<Value>(&nested(depth + 1)).is_err());
}

#[test]
fn results_nest_no_deeper_than_storage_reads() {
    // {"a": [[...]]}: the document is one level, the value the rest.
    let doc = json!({});
    let add = |depth: usize| {
        let body = format!(r#"[{{"op":"add","path":"/a","value":{}}}]"#, nested(depth));
        Patch::decode(body.as_bytes(), true)
            .expect("decodes")
            .apply(&doc, 0)
    };
    let ok = add(MAX_NESTING as usize - 1).expect("127 levels");
    assert!(serde_json::from_str::<Value>(&ok.to_string()).is_ok());
    // A value nested as deep as a body may hold, two levels further down, is refused.
    let body = format!(
        r#"[{{"op":"add","path":"/a","value":{{"b":{{}}}}}},{{"op":"add","path":"/a/b/c","value":{}}}]"#,
        nested(MAX_NESTING as usize - 2)
    );
    assert!(serde_json::from_str::<Value>(&body).is_ok());
    let p = Patch::decode(body.as_bytes(), true).expect("decodes");
    assert_eq!(p.apply(&doc, 0), Err(ApplyError::TooDeep));

    // Moves and copies carry their heights: a deep value moved or copied under itself is
    // refused too, however many operations it takes.
    let deep = format!(
        r#"[{{"op":"add","path":"/a","value":{{"b":{}}}}}]"#,
        nested(100)
    );
    let base = Patch::decode(deep.as_bytes(), true)
        .expect("decodes")
        .apply(&doc, 0)
        .expect("102 levels");
    for op in [
        r#"[{"op":"add","path":"/n","value":{"y":{"z":{}}}},{"op":"move","from":"/a","path":"/n/y/z/a"},{"op":"move","from":"/n","path":"/a"}]"#,
        r#"[{"op":"add","path":"/n","value":{"y":{"z":{}}}},{"op":"copy","from":"/a","path":"/n/y/z/a"},{"op":"move","from":"/n","path":"/a"}]"#,
        r#"[{"op":"copy","from":"/a","path":"/a/c"}]"#,
    ] {
        let p = Patch::decode(op.as_bytes(), true).expect("decodes");
        let nests = |times: usize| {
            let mut cur = base.clone();
            for _ in 0..times {
                cur = p.apply(&cur, 0)?;
            }
            Ok::<_, ApplyError>(cur)
        };
        assert_eq!(nests(30).map(|_| ()), Err(ApplyError::TooDeep), "{op}");
    }
    // Moving it back up needs no walk and is fine.
    let up =
        br#"[{"op":"move","from":"/a/b","path":"/c"},{"op":"move","from":"/c","path":"/a/b"}]"#;
    let p = Patch::decode(up, true).expect("decodes");
    assert_eq!(p.apply(&base, 0), Ok(base.clone()));
}

#[test]
fn many_moves_of_a_large_value_stay_linear() {
    let big: Vec<Value> = (0..20_000)
        .map(|i| json!({"k": i, "v": [i, "x"]}))
        .collect();
    let doc = json!({"a": big, "b": {"c": {"d": {}}}});
    let ops: Vec<Value> = (0..2_500)
        .flat_map(|_| {
            [
                json!({"op": "move", "from": "/a", "path": "/b/c/d/a"}),
                json!({"op": "move", "from": "/b/c/d/a", "path": "/a"}),
            ]
        })
        .collect();
    let body = serde_json::to_vec(&ops).expect("json");
    let p = Patch::decode(&body, true).expect("decodes");
    let start = std::time::Instant::now();
    assert_eq!(p.apply(&doc, 0), Ok(doc.clone()));
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
fn errors_display_v4s_text() {
    let p = Patch::decode(br#"[{"op":"remove","path":"/x"}]"#, true).expect("decodes");
    let e = p.apply(&json!({}), 0).expect_err("fails");
    assert_eq!(
        e.to_string(),
        "error in remove for path: '/x': Unable to remove nonexistent key: x: missing value"
    );
    assert!(ApplyError::Panics("x").to_string().contains("panics"));
    assert!(ApplyError::TooDeep.to_string().contains("127"));
    assert_eq!(p.len(), 1);
    assert!(!p.is_empty());
}

#[test]
fn go_atoi() {
    for (s, want) in [
        ("0", Ok(0)),
        ("-0", Ok(0)),
        ("+7", Ok(7)),
        ("007", Ok(7)),
        ("9223372036854775807", Ok(i64::MAX)),
        ("-9223372036854775808", Ok(i64::MIN)),
        (
            "9223372036854775808",
            Err(r#"strconv.Atoi: parsing "9223372036854775808": value out of range"#),
        ),
        (
            "-9223372036854775809",
            Err(r#"strconv.Atoi: parsing "-9223372036854775809": value out of range"#),
        ),
        ("", Err(r#"strconv.Atoi: parsing "": invalid syntax"#)),
        ("-", Err(r#"strconv.Atoi: parsing "-": invalid syntax"#)),
        ("1_0", Err(r#"strconv.Atoi: parsing "1_0": invalid syntax"#)),
        ("0x1", Err(r#"strconv.Atoi: parsing "0x1": invalid syntax"#)),
        ("é", Err(r#"strconv.Atoi: parsing "é": invalid syntax"#)),
        (
            "\u{1}",
            Err(r#"strconv.Atoi: parsing "\x01": invalid syntax"#),
        ),
    ] {
        assert_eq!(apply::atoi(s), want.map_err(str::to_string), "{s:?}");
    }
}
