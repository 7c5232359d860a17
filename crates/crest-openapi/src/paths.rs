//! The paths and operations of a resource, as apiextensions-apiserver's builder declares them
//! (and kube-openapi names them: operation ids and tags from the group-version).

use crate::{definition_name, Flavor, Resource};
use serde_json::{json, Map, Value};

const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";

/// Query parameters: name, type, description (upstream's option struct documentation).
const PARAMS: &[(&str, &str, &str)] = &[
    ("allowWatchBookmarks", "boolean", "allowWatchBookmarks requests watch events with type \"BOOKMARK\". Servers that do not implement bookmarks may ignore this flag and bookmarks are sent at the server's discretion. Clients should not assume bookmarks are returned at any specific interval, nor may they assume the server will send any BOOKMARK event during a session. If this is not a watch, this field is ignored."),
    ("continue", "string", "The continue option should be set when retrieving more results from the server. Since this value is server defined, clients may only use the continue value from a previous query result with identical query parameters (except for the value of continue) and the server may reject a continue value it does not recognize. If the specified continue value is no longer valid whether due to expiration (generally five to fifteen minutes) or a configuration change on the server, the server will respond with a 410 ResourceExpired error together with a continue token. If the client needs a consistent list, it must restart their list without the continue field. Otherwise, the client may send another list request with the token received with the 410 error, the server will respond with a list starting from the next key, but from the latest snapshot, which is inconsistent from the previous list results - objects that are created, modified, or deleted after the first list request will be included in the response, as long as their keys are after the \"next key\".\n\nThis field is not supported when watch is true. Clients may start a watch from the last resourceVersion value returned by the server and not miss any modifications."),
    ("dryRun", "string", "When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed"),
    ("fieldManager", "string", "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint."),
    ("fieldSelector", "string", "A selector to restrict the list of returned objects by their fields. Defaults to everything."),
    ("fieldValidation", "string", "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are silently dropped from the object, and will ignore all but the last duplicate field that the decoder encounters. This is the default behavior prior to v1.23. - Warn: This will send a warning via the standard warning response header for each unknown field that is dropped from the object, and for each duplicate field that is encountered. The request will still succeed if there are no other errors, and will only persist the last of any duplicate fields. This is the default in v1.23+ - Strict: This will fail the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are present. The error returned from the server will contain all unknown and duplicate fields encountered."),
    ("gracePeriodSeconds", "integer", "The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero indicates delete immediately. If this value is nil, the default grace period for the specified type will be used. Defaults to a per object value if not specified. zero means delete immediately."),
    ("ignoreStoreReadErrorWithClusterBreakingPotential", "boolean", "if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error. A resource is considered corrupt if it can not be retrieved from the underlying storage successfully because of a) its data can not be transformed e.g. decryption failure, or b) it fails to decode into an object. NOTE: unsafe deletion ignores finalizer constraints, skips precondition checks, and removes the object from the storage. WARNING: This may potentially break the cluster if the workload associated with the resource being unsafe-deleted relies on normal deletion flow. Use only if you REALLY know what you are doing. The default value is false, and the user must opt in to enable it"),
    ("labelSelector", "string", "A selector to restrict the list of returned objects by their labels. Defaults to everything."),
    ("limit", "integer", "limit is a maximum number of responses to return for a list call. If more items exist, the server will set the `continue` field on the list metadata to a value that can be used with the same initial query to retrieve the next set of results. Setting a limit may return fewer than the requested amount of items (up to zero items) in the event all requested objects are filtered out and clients should only use the presence of the continue field to determine whether more results are available. Servers may choose not to support the limit argument and will return all of the available results. If limit is specified and the continue field is empty, clients may assume that no more results are available. This field is not supported if watch is true.\n\nThe server guarantees that the objects returned when using continue will be identical to issuing a single list call without a limit - that is, no objects created, modified, or deleted after the first request is issued will be included in any subsequent continued requests. This is sometimes referred to as a consistent snapshot, and ensures that a client that is using limit to receive smaller chunks of a very large result can ensure they see all possible objects. If objects are updated during a chunked list the version of the object that was present at the time the first list result was calculated is returned."),
    ("orphanDependents", "boolean", "Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the dependent objects be orphaned. If true/false, the \"orphan\" finalizer will be added to/removed from the object's finalizers list. Either this field or PropagationPolicy may be set, but not both."),
    ("pretty", "string", "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget)."),
    ("propagationPolicy", "string", "Whether and how garbage collection will be performed. Either this field or OrphanDependents may be set, but not both. The default policy is decided by the existing finalizer set in the metadata.finalizers and the resource-specific default policy. Acceptable values are: 'Orphan' - orphan the dependents; 'Background' - allow the garbage collector to delete the dependents in the background; 'Foreground' - a cascading policy that deletes all dependents in the foreground."),
    ("resourceVersion", "string", "resourceVersion sets a constraint on what resource versions a request may be served from. See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset"),
    ("resourceVersionMatch", "string", "resourceVersionMatch determines how resourceVersion is applied to list calls. It is highly recommended that resourceVersionMatch be set for list calls where resourceVersion is set See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset"),
    ("sendInitialEvents", "boolean", "`sendInitialEvents=true` may be set together with `watch=true`. In that case, the watch stream will begin with synthetic events to produce the current state of objects in the collection. Once all such events have been sent, a synthetic \"Bookmark\" event  will be sent. The bookmark will report the ResourceVersion (RV) corresponding to the set of objects, and be marked with `\"k8s.io/initial-events-end\": \"true\"` annotation. Afterwards, the watch stream will proceed as usual, sending watch events corresponding to changes (subsequent to the RV) to objects watched."),
    ("timeoutSeconds", "integer", "Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or inactivity."),
    ("watch", "boolean", "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications. Specify resourceVersion."),
];

const LIST_OPTIONS: &[&str] = &[
    "allowWatchBookmarks",
    "continue",
    "fieldSelector",
    "labelSelector",
    "limit",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
    "watch",
];
const WRITE_OPTIONS: &[&str] = &["dryRun", "fieldManager", "fieldValidation"];
const DELETE_OPTION_PARAMS: &[&str] = &[
    "dryRun",
    "gracePeriodSeconds",
    "ignoreStoreReadErrorWithClusterBreakingPotential",
    "orphanDependents",
    "propagationPolicy",
];

fn query_param(name: &str, flavor: Flavor) -> Value {
    let (ty, desc) = PARAMS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, t, d)| (*t, *d))
        .unwrap_or(("string", ""));
    param(name, "query", ty, desc, false, flavor)
}

fn param(
    name: &str,
    location: &str,
    ty: &str,
    desc: &str,
    required: bool,
    flavor: Flavor,
) -> Value {
    let mut p = match flavor {
        Flavor::V2 => json!({"name": name, "in": location, "type": ty, "uniqueItems": true}),
        Flavor::V3 => {
            json!({"name": name, "in": location, "schema": {"type": ty, "uniqueItems": true}})
        }
    };
    if !desc.is_empty() {
        p["description"] = json!(desc);
    }
    if required {
        p["required"] = json!(true);
    }
    p
}

/// kube-openapi's `ToValidOperationID`: letters kept, anything else starts a capitalized word.
fn operation_id_part(s: &str, capitalize_first: bool) -> String {
    let mut out = String::new();
    let mut capitalize = capitalize_first;
    for (i, c) in s.chars().enumerate() {
        if c.is_alphabetic() || c == '_' || (i != 0 && c.is_numeric()) {
            if capitalize {
                out.extend(c.to_uppercase());
                capitalize = false;
            } else {
                out.push(c);
            }
        } else {
            capitalize = true;
        }
    }
    out
}

/// "a"/"an" as upstream `GetArticleForNoun`, padded with spaces.
fn article(noun: &str) -> &'static str {
    if !noun.ends_with("ss") && noun.ends_with('s') {
        return " ";
    }
    match noun.chars().next().map(|c| c.to_ascii_lowercase()) {
        Some('a' | 'e' | 'i' | 'o' | 'u') => " an ",
        _ => " a ",
    }
}

struct Route<'a> {
    path: String,
    method: &'static str,
    /// x-kubernetes-action
    action: &'static str,
    /// The operation verb of ids and descriptions: list, create, read, replace, patch, delete,
    /// deletecollection.
    verb: &'static str,
    sub: &'a str,
    sample: String,
    for_all_namespaces: bool,
}

fn description(verb: &str, sub: &str, kind: &str) -> String {
    let sub = if sub.is_empty() {
        String::new()
    } else {
        format!(" {sub} of")
    };
    match verb {
        "list" => format!("list{sub} objects of kind {kind}"),
        "read" | "replace" => format!("{verb}{sub} the specified {kind}"),
        "patch" => format!("partially update{sub} the specified {kind}"),
        "create" | "delete" => format!("{verb}{sub}{}{kind}", article(kind)),
        "deletecollection" => {
            let sub = if sub.is_empty() {
                sub
            } else {
                format!("{sub} a")
            };
            format!("delete collection of{sub} {kind}")
        }
        _ => format!("{verb}{sub} {kind}"),
    }
}

fn operation(r: &Resource, route: &Route, flavor: Flavor) -> Value {
    let group_id = if r.group.is_empty() {
        "core"
    } else {
        r.group.strip_suffix(".k8s.io").unwrap_or(r.group)
    };
    let namespaced = if r.namespaced && !route.for_all_namespaces {
        "Namespaced"
    } else {
        ""
    };
    let (verb, collection) = match route.verb {
        "deletecollection" => ("delete", "Collection"),
        v => (v, ""),
    };
    let mut sub_title = String::new();
    if let Some(c) = route.sub.chars().next() {
        sub_title.extend(c.to_uppercase());
        sub_title.push_str(&route.sub[c.len_utf8()..]);
    }
    let suffix = if route.for_all_namespaces {
        "ForAllNamespaces"
    } else {
        ""
    };
    let operation_id = format!(
        "{verb}{}{}{collection}{namespaced}{}{sub_title}{suffix}",
        operation_id_part(group_id, true),
        operation_id_part(r.version, true),
        r.kind
    );
    let tag = format!(
        "{}_{}",
        operation_id_part(group_id, false),
        operation_id_part(r.version, false)
    );

    let mut params: Vec<Value> = vec![];
    let option_params: &[&str] = match route.action {
        "list" | "deletecollection" => LIST_OPTIONS,
        "post" | "put" | "patch" => WRITE_OPTIONS,
        "delete" => DELETE_OPTION_PARAMS,
        _ => &[],
    };
    params.extend(option_params.iter().map(|p| query_param(p, flavor)));

    let produces = ["application/json", "application/yaml"];
    let consumes: &[&str] = if route.method == "patch" {
        &[
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/apply-patch+yaml",
        ]
    } else {
        &["application/json", "application/yaml"]
    };
    let body: Option<(String, bool)> = match route.action {
        "post" | "put" => Some((route.sample.clone(), true)),
        "patch" => Some((PATCH.to_string(), true)),
        "delete" => Some((DELETE_OPTIONS.to_string(), false)),
        _ => None,
    };
    let mut codes: Vec<(&str, &str)> = vec![("200", "OK")];
    match route.action {
        "post" => codes.extend([("201", "Created"), ("202", "Accepted")]),
        "put" => codes.push(("201", "Created")),
        "delete" => codes.push(("202", "Accepted")),
        _ => {}
    }
    let schema_ref = flavor.ref_to(&route.sample);
    let mut responses = Map::new();
    for (code, text) in codes {
        let resp = match flavor {
            Flavor::V2 => json!({"description": text, "schema": schema_ref}),
            Flavor::V3 => {
                let content: Map<String, Value> = produces
                    .iter()
                    .map(|ct| (ct.to_string(), json!({ "schema": schema_ref })))
                    .collect();
                json!({"description": text, "content": content})
            }
        };
        responses.insert(code.into(), resp);
    }
    responses.insert("401".into(), json!({"description": "Unauthorized"}));

    let mut op = json!({
        "description": description(route.verb, route.sub, r.kind),
        "operationId": operation_id,
        "tags": [tag],
        "responses": responses,
        "x-kubernetes-action": route.action,
        "x-kubernetes-group-version-kind": {"group": r.group, "kind": r.kind, "version": r.version},
    });
    match flavor {
        Flavor::V2 => {
            if let Some((name, required)) = body {
                let mut b = json!({"in": "body", "name": "body", "schema": flavor.ref_to(&name)});
                if required {
                    b["required"] = json!(true);
                }
                params.insert(0, b);
            }
            op["consumes"] = json!(consumes);
            op["produces"] = json!(produces);
            op["schemes"] = json!(["https"]);
        }
        Flavor::V3 => {
            if let Some((name, required)) = body {
                let content: Map<String, Value> = consumes
                    .iter()
                    .map(|ct| (ct.to_string(), json!({ "schema": flavor.ref_to(&name) })))
                    .collect();
                let mut b = json!({ "content": content });
                if required {
                    b["required"] = json!(true);
                }
                op["requestBody"] = b;
            }
        }
    }
    if !params.is_empty() {
        op["parameters"] = Value::Array(params);
    }
    op
}

/// Every path of the resource with its operations; parameters shared by all operations of a
/// path (name, namespace, pretty) are declared on the path, as kube-openapi hoists them.
pub(crate) fn paths(r: &Resource, flavor: Flavor) -> Map<String, Value> {
    let base = if r.group.is_empty() {
        format!("/api/{}", r.version)
    } else {
        format!("/apis/{}/{}", r.group, r.version)
    };
    let name = match r.schema {
        super::ObjectSchema::BuiltIn => super::builtin_definition_name,
        super::ObjectSchema::Custom(_) => definition_name,
    };
    let kind_def = name(r.group, r.version, r.kind);
    let list_def = name(r.group, r.version, r.list_kind);
    let mut routes: Vec<Route> = vec![];
    let mut root = format!("{base}/{}", r.plural);
    let route = |path: String, method, action, verb, sub, sample: &str| Route {
        path,
        method,
        action,
        verb,
        sub,
        sample: sample.to_string(),
        for_all_namespaces: false,
    };
    if r.namespaced {
        let mut all = route(root.clone(), "get", "list", "list", "", &list_def);
        all.for_all_namespaces = true;
        routes.push(all);
        root = format!("{base}/namespaces/{{namespace}}/{}", r.plural);
    }
    let item = format!("{root}/{{name}}");
    routes.push(route(root.clone(), "get", "list", "list", "", &list_def));
    routes.push(route(root.clone(), "post", "post", "create", "", &kind_def));
    routes.push(route(
        root.clone(),
        "delete",
        "deletecollection",
        "deletecollection",
        "",
        STATUS,
    ));
    routes.push(route(item.clone(), "get", "get", "read", "", &kind_def));
    routes.push(route(item.clone(), "put", "put", "replace", "", &kind_def));
    routes.push(route(
        item.clone(),
        "delete",
        "delete",
        "delete",
        "",
        STATUS,
    ));
    routes.push(route(
        item.clone(),
        "patch",
        "patch",
        "patch",
        "",
        &kind_def,
    ));
    for (enabled, sub, sample) in [
        (r.status, "status", kind_def.as_str()),
        (r.scale, "scale", SCALE),
    ] {
        if enabled {
            let p = format!("{item}/{sub}");
            routes.push(route(p.clone(), "get", "get", "read", sub, sample));
            routes.push(route(p.clone(), "put", "put", "replace", sub, sample));
            routes.push(route(p, "patch", "patch", "patch", sub, sample));
        }
    }

    let mut out: Map<String, Value> = Map::new();
    for rt in &routes {
        let entry = out.entry(rt.path.clone()).or_insert_with(|| {
            let mut common = vec![];
            if rt.path.contains("{name}") {
                let desc = format!("name of the {}", r.kind);
                common.push(param("name", "path", "string", &desc, true, flavor));
            }
            if rt.path.contains("{namespace}") {
                let desc = "object name and auth scope, such as for teams and projects";
                common.push(param("namespace", "path", "string", desc, true, flavor));
            }
            common.push(query_param("pretty", flavor));
            json!({ "parameters": common })
        });
        entry[rt.method] = operation(r, rt, flavor);
    }
    out
}
