#!/usr/bin/env python3
"""Generates crates/crest-codec/src/protobuf/messages.json: the wire layout (field numbers and
types) of the Kubernetes protobuf messages Crest reads and writes, joined with the JSON names of
the published OpenAPI definitions Crest serves.

The field numbers come from upstream's generated.proto files, as the kube-rs project's `k8s-pb`
crate (crates.io) carries them in its prost attributes; run with that crate's unpacked source:

    python3 crates/crest-codec/tools/gen_protobuf_messages.py \
        ~/.cargo/registry/src/*/k8s-pb-0.9.0/src ~/.cargo/registry/src/*/k8s-pb-0.7.0/src

(`cargo fetch` of a crate depending on k8s-pb = "=0.9.0" / "=0.7.0" unpacks them there; the
first source that has a message wins; 0.7.0 carries storagemigration.k8s.io/v1alpha1, which
Kubernetes 1.32 serves and later releases dropped.)

A message is kept when its OpenAPI definition is served (crates/crest-openapi/src/meta.json and
builtin/*.json) or it is one of the envelope/wire types in EXTRA; a field when its OpenAPI
property exists (fields newer than the served definitions are left out), or, for EXTRA messages,
always. Output: {"<proto full name>": {"def": "<openapi name or null>", "fields":
[[tag, "jsonName", "type", "ref", "flag"], ...]}} where type is one of string, bytes, bool,
int32, int64, double, message, prefixed with "[]" for repeated or "map:" for map<string, X>; ref
is the value message's proto full name for messages (else null); flag is "p" for a Go pointer,
"r" for a field without omitempty (required in the OpenAPI), else "".
"""
import glob
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPENAPI = os.path.join(ROOT, "..", "crest-openapi", "src")

EXTRA = {
    "k8s.io.apimachinery.pkg.runtime.Unknown",
    # serviceaccounts/token (kubectl create token sends and reads these as protobuf)
    "k8s.io.api.authentication.v1.TokenRequest",
    "k8s.io.api.authentication.v1.TokenRequestSpec",
    "k8s.io.api.authentication.v1.TokenRequestStatus",
    "k8s.io.api.authentication.v1.BoundObjectReference",
    # authorization.k8s.io/v1 reviews (kubectl auth can-i sends SelfSubjectAccessReview and
    # SelfSubjectRulesReview as protobuf); not served as resources, so no OpenAPI definitions
    "k8s.io.api.authorization.v1.SubjectAccessReview",
    "k8s.io.api.authorization.v1.SelfSubjectAccessReview",
    "k8s.io.api.authorization.v1.LocalSubjectAccessReview",
    "k8s.io.api.authorization.v1.SelfSubjectRulesReview",
    "k8s.io.api.authorization.v1.SubjectAccessReviewSpec",
    "k8s.io.api.authorization.v1.SelfSubjectAccessReviewSpec",
    "k8s.io.api.authorization.v1.SelfSubjectRulesReviewSpec",
    "k8s.io.api.authorization.v1.SubjectAccessReviewStatus",
    "k8s.io.api.authorization.v1.SubjectRulesReviewStatus",
    "k8s.io.api.authorization.v1.ResourceAttributes",
    "k8s.io.api.authorization.v1.NonResourceAttributes",
    "k8s.io.api.authorization.v1.FieldSelectorAttributes",
    "k8s.io.api.authorization.v1.LabelSelectorAttributes",
    "k8s.io.api.authorization.v1.ResourceRule",
    "k8s.io.api.authorization.v1.NonResourceRule",
    "k8s.io.api.authorization.v1.ExtraValue",
    "k8s.io.apimachinery.pkg.apis.meta.v1.FieldSelectorRequirement",
    "k8s.io.apimachinery.pkg.runtime.TypeMeta",
    "k8s.io.apimachinery.pkg.runtime.RawExtension",
    "k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent",
    "k8s.io.apimachinery.pkg.apis.meta.v1.Time",
    "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime",
    "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "k8s.io.apimachinery.pkg.apis.meta.v1.PartialObjectMetadata",
    "k8s.io.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList",
    "k8s.io.apimachinery.pkg.apis.meta.v1beta1.PartialObjectMetadataList",
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString",
    "k8s.io.apimachinery.pkg.api.resource.Quantity",
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSON",
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray",
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray",
}

# Go pointer fields of the messages Crest decodes from protobuf requests (proto2 `optional`
# does not tell a Go pointer from a value, nor does the OpenAPI): present in Go's JSON exactly when
# set, zero values included. Every other message field is a Go struct value (always in the JSON);
# every other scalar is omitted when zero unless the OpenAPI lists it as required (no omitempty).
POINTERS = {
    "meta.v1.ObjectMeta": ["deletionTimestamp", "deletionGracePeriodSeconds"],
    "meta.v1.OwnerReference": ["controller", "blockOwnerDeletion"],
    "meta.v1.ManagedFieldsEntry": ["time", "fieldsV1"],
    "meta.v1.DeleteOptions": ["gracePeriodSeconds", "preconditions", "orphanDependents", "propagationPolicy"],
    "meta.v1.Preconditions": ["uid", "resourceVersion"],
    "meta.v1.ListMeta": ["remainingItemCount"],
    "meta.v1.Status": ["details"],
    "core.v1.ConfigMap": ["immutable"],
    "core.v1.Secret": ["immutable"],
    "core.v1.ServiceAccount": ["automountServiceAccountToken"],
    "core.v1.ServiceSpec": ["sessionAffinityConfig", "ipFamilyPolicy", "allocateLoadBalancerNodePorts",
                            "loadBalancerClass", "internalTrafficPolicy", "trafficDistribution"],
    "core.v1.SessionAffinityConfig": ["clientIP"],
    "core.v1.ClientIPConfig": ["timeoutSeconds"],
    "core.v1.ServicePort": ["appProtocol"],
    "core.v1.LoadBalancerIngress": ["ipMode"],
    "core.v1.PortStatus": ["error"],
    "core.v1.EndpointAddress": ["nodeName", "targetRef"],
    "core.v1.EndpointPort": ["appProtocol"],
    "core.v1.Event": ["series", "related"],
    "events.v1.Event": ["series", "related"],
    "discovery.v1.Endpoint": ["hostname", "nodeName", "zone", "targetRef", "hints"],
    "discovery.v1.EndpointConditions": ["ready", "serving", "terminating"],
    "discovery.v1.EndpointPort": ["name", "protocol", "port", "appProtocol"],
    "authentication.v1.TokenRequestSpec": ["expirationSeconds", "boundObjectRef"],
    "rbac.v1.ClusterRole": ["aggregationRule"],
    "authorization.v1.SubjectAccessReviewSpec": ["resourceAttributes", "nonResourceAttributes"],
    "authorization.v1.SelfSubjectAccessReviewSpec": ["resourceAttributes", "nonResourceAttributes"],
    "authorization.v1.ResourceAttributes": ["fieldSelector", "labelSelector"],
    "coordination.v1.LeaseSpec": ["holderIdentity", "leaseDurationSeconds", "acquireTime", "renewTime",
                                  "leaseTransitions", "strategy", "preferredHolder"],
    "apiextensions.v1.JSONSchemaProps": ["default", "maximum", "minimum", "maxLength", "minLength",
                                         "maxItems", "minItems", "multipleOf", "maxProperties",
                                         "minProperties", "items", "not", "additionalProperties",
                                         "additionalItems", "externalDocs", "example",
                                         "x-kubernetes-preserve-unknown-fields",
                                         "x-kubernetes-list-type", "x-kubernetes-map-type"],
    "apiextensions.v1.ValidationRule": ["reason", "optionalOldSelf"],
    "apiextensions.v1.CustomResourceDefinitionSpec": ["conversion"],
    "apiextensions.v1.CustomResourceDefinitionVersion": ["schema", "subresources", "deprecationWarning"],
    "apiextensions.v1.CustomResourceValidation": ["openAPIV3Schema"],
    "apiextensions.v1.CustomResourceSubresources": ["status", "scale"],
    "apiextensions.v1.CustomResourceSubresourceScale": ["labelSelectorPath"],
    "apiextensions.v1.CustomResourceConversion": ["webhook"],
    "apiextensions.v1.WebhookConversion": ["clientConfig"],
    "apiextensions.v1.WebhookClientConfig": ["url", "service"],
    "apiextensions.v1.ServiceReference": ["path", "port"],
}

# Fields without omitempty of the EXTRA messages (which have no OpenAPI `required` to tell).
REQUIRED = {
    "authorization.v1.SubjectAccessReviewStatus": ["allowed"],
    "authorization.v1.SubjectRulesReviewStatus": ["resourceRules", "nonResourceRules", "incomplete"],
    "authorization.v1.ResourceRule": ["verbs"],
    "authorization.v1.NonResourceRule": ["verbs"],
    "meta.v1.FieldSelectorRequirement": ["key", "operator"],
}

SCALARS = {"string", "bytes", "bool", "int32", "int64", "double"}


def norm(name):
    return re.sub(r"[^a-z0-9]", "", name.lower())


def openapi_name(proto):
    for a, b in (
        ("k8s.io.api.", "io.k8s.api."),
        ("k8s.io.apimachinery.", "io.k8s.apimachinery."),
        ("k8s.io.apiextensions_apiserver.", "io.k8s.apiextensions-apiserver."),
    ):
        if proto.startswith(a):
            return b + proto[len(a):]
    return None


def camel(snake):
    # Go initialisms prost split (`uID` -> `u_id`); the JSON name is `uid`.
    if snake == "u_id":
        return "uid"
    if snake == "non_resource_ur_ls":
        return "nonResourceURLs"
    parts = snake.removeprefix("r#").split("_")
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


def module_path(src, file):
    rel = os.path.relpath(os.path.dirname(file), src)
    return rel.split(os.sep)


def proto_package(mod):
    return "k8s.io." + ".".join(mod)


def resolve(mod, rust_type):
    """The module path and type name a Rust type path names, from module `mod`."""
    t = rust_type
    for w in ("::core::option::Option<", "::prost::alloc::vec::Vec<", "::prost::alloc::boxed::Box<"):
        t = t.replace(w, "")
    t = t.replace(">", "").strip()
    if "BTreeMap<" in t:
        t = t.split(",")[-1].strip()
    parts = t.split("::")
    here = list(mod)
    while parts and parts[0] == "super":
        parts.pop(0)
        here.pop()
    return here + parts[:-1], parts[-1]


def main():
    srcs = sys.argv[1:]
    defs = {}
    for f in [os.path.join(OPENAPI, "meta.json")] + sorted(glob.glob(os.path.join(OPENAPI, "builtin", "*.json"))):
        defs.update(json.load(open(f)))
    # proto messages: (package, rust name) -> (fields)
    messages = {}
    files = [(src, f) for src in srcs for f in sorted(glob.glob(os.path.join(src, "**", "mod.rs"), recursive=True))]
    for src, file in files:
        mod = module_path(src, file)
        text = open(file).read()
        for m in re.finditer(r"pub struct (\w+) \{(?:\}|(.*?)\n\})", text, re.S):
            name, body = m.group(1), (m.group(2) or "") + "\n"
            fields = []
            for fm in re.finditer(r"#\[prost\(([^\]]*)\)\]\s*pub (r#)?(\w+):\s*([^;]*?),\n", body, re.S):
                attr, fname, ftype = fm.group(1), fm.group(3), " ".join(fm.group(4).split())
                tag = int(re.search(r'tag = "(\d+)"', attr).group(1))
                kind = attr.split(",")[0].split("=")[0].strip()
                repeated = ", repeated" in attr
                ref = None
                if kind.startswith("btree_map"):
                    v = re.search(r'btree_map = "string, (\w+)"', attr).group(1)
                    if v == "message":
                        ref = resolve(mod, ftype)
                    kind = "map:" + v
                elif kind == "message":
                    ref = resolve(mod, ftype)
                if repeated:
                    kind = "[]" + kind
                fields.append((tag, fname, kind, ref))
            messages.setdefault((tuple(mod), name), fields)
    # proto full names by normalised name within a package (prost renames JSON -> Json)
    by_norm = {}
    for (mod, name) in messages:
        pkg = proto_package(list(mod))
        by_norm[(pkg, norm(name))] = (mod, name)
    def full(mod, rust_name):
        pkg = proto_package(list(mod))
        prefix = openapi_name(pkg + ".X")
        if prefix is None:
            return pkg + "." + rust_name
        prefix = prefix.rsplit(".", 1)[0]
        # the upstream spelling: the OpenAPI definition's, or for EXTRA the listed name
        for cand in list(defs) + [openapi_name(e) for e in EXTRA]:
            if cand and cand.rsplit(".", 1)[0] == prefix and norm(cand.rsplit(".", 1)[1]) == norm(rust_name):
                return pkg + "." + cand.rsplit(".", 1)[1]
        return pkg + "." + rust_name
    wanted = {}
    for (mod, name), fields in messages.items():
        fname = full(mod, name)
        oa = openapi_name(fname)
        if oa in defs or fname in EXTRA:
            wanted[fname] = ((mod, name), fields, oa if oa in defs else None)
    out = {}
    missing = set()
    for fname, ((mod, name), fields, oa) in sorted(wanted.items()):
        props = {}
        if oa and not (defs[oa].get("properties") or {}):
            oa_fields = None  # an opaque definition (Time, Quantity, ...): the wire fields
        else:
            oa_fields = oa
        if oa_fields:
            for p in (defs[oa].get("properties") or {}):
                props[norm(p)] = p
        entries = []
        short = fname
        for prefix in ("k8s.io.api.", "k8s.io.apimachinery.pkg.apis.", "k8s.io.apiextensions_apiserver.pkg.apis."):
            short = short.removeprefix(prefix)
        pointers = set(POINTERS.get(short, []))
        required = set(defs[oa].get("required") or []) if oa else set(REQUIRED.get(short, []))
        for tag, f, kind, ref in sorted(fields):
            if oa_fields:
                j = props.get(norm(f))
                if j is None:
                    continue
            else:
                j = camel(f)
            r = None
            if ref:
                r = full(ref[0], ref[1])
                if r not in wanted:
                    missing.add(r)
            flag = "p" if j in pointers else "r" if j in required else ""
            entries.append([tag, j, kind, r, flag])
        out[fname] = {"def": oa, "fields": entries}
    for short, names in POINTERS.items():
        found = [k for k in out if k.endswith("." + short)]
        got = {f[1] for k in found for f in out[k]["fields"] if f[4] == "p"}
        for n in names:
            if n not in got:
                print("pointer field not found:", short, n, file=sys.stderr)
    for m in sorted(missing):
        print("unresolved message reference:", m, file=sys.stderr)
    dest = os.path.join(ROOT, "src", "protobuf", "messages.json")
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(dest, "w") as fh:
        fh.write("{\n")
        items = sorted(out.items())
        for i, (k, v) in enumerate(items):
            fh.write(json.dumps(k) + ": " + json.dumps(v, separators=(",", ":")))
            fh.write(",\n" if i + 1 < len(items) else "\n")
        fh.write("}\n")
    print(f"{len(out)} messages -> {dest}", file=sys.stderr)


main()
