#!/usr/bin/env python3
"""Generates crates/crest-codec/src/json/fields.json: the JSON fields of the Go structs of the
built-in kinds in their Go declaration order, which is the order kube-apiserver's typed JSON
encoder (encoding/json of the Go struct) writes them in.

Run with the unpacked Go sources of the release Crest follows (Kubernetes 1.32: the v0.32.x tags
of k8s.io/api, k8s.io/apimachinery and k8s.io/apiextensions-apiserver), one argument per Go
package, `<import path>=<directory>`:

    python3 crates/crest-codec/tools/gen_go_fields.py \
        k8s.io/api/core/v1=$API/core/v1 ... \
        k8s.io/apimachinery/pkg/apis/meta/v1=$APIMACHINERY/pkg/apis/meta/v1 ...

(`git archive v0.32.9 core/v1 ... | tar -x` of each repository gives the directories.)

Only the struct declarations are read: each field's JSON name (its `json:"..."` tag; embedded
structs tagged `,inline` or untagged have their fields inlined), and its type when it leads to
another struct (directly, through a pointer, a slice, a `map[string]` or a named slice/map
type). Types with their own MarshalJSON are leaves (Time, MicroTime, Duration, IntOrString,
Quantity, FieldsV1, apiextensions' JSON), except the ones whose JSON holds a struct again:
runtime.RawExtension (an embedded object: the encoder looks up its own kind) and the
apiextensions JSONSchemaPropsOr* unions.

Output: {"<import path>.<Type>": [field, ...]} with a field either "jsonName" (a leaf) or
["jsonName", "<import path>.<Type>" | "*" (embedded object) | "|" (a JSONSchemaPropsOr* union),
"" | "[]" | "map"]. Only the types reachable from a struct that embeds TypeMeta are written.
"""
import json
import os
import re
import sys

LEAVES = {
    "k8s.io/apimachinery/pkg/apis/meta/v1.Time",
    "k8s.io/apimachinery/pkg/apis/meta/v1.MicroTime",
    "k8s.io/apimachinery/pkg/apis/meta/v1.Duration",
    "k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1",
    "k8s.io/apimachinery/pkg/util/intstr.IntOrString",
    "k8s.io/apimachinery/pkg/api/resource.Quantity",
    "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSON",
}
EMBEDDED = {"k8s.io/apimachinery/pkg/runtime.RawExtension"}
UNIONS = {
    "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSONSchemaPropsOrArray",
    "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSONSchemaPropsOrBool",
    "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSONSchemaPropsOrStringArray",
}
# Structs without TypeMeta that are written as whole documents: /version, watch events.
EXTRA_ROOTS = [
    "k8s.io/apimachinery/pkg/version.Info",
    "k8s.io/apimachinery/pkg/apis/meta/v1.WatchEvent",
]
TYPEMETA = {
    "k8s.io/apimachinery/pkg/apis/meta/v1.TypeMeta",
    "k8s.io/apimachinery/pkg/runtime.TypeMeta",
}

# package -> {type name -> ("struct", [fields]) | ("alias", expr, imports)}
packages = {}


def strip_comments(src):
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    out = []
    for line in src.split("\n"):
        # A `//` outside a string or a struct tag starts a comment.
        in_str = None
        cut = len(line)
        i = 0
        while i < len(line):
            c = line[i]
            if in_str:
                if c == "\\" and in_str == '"':
                    i += 1
                elif c == in_str:
                    in_str = None
            elif c in "\"`":
                in_str = c
            elif line.startswith("//", i):
                cut = i
                break
            i += 1
        out.append(line[:cut])
    return "\n".join(out)


def imports_of(src):
    imps = {}
    for block in re.findall(r"^import\s*\((.*?)\)", src, flags=re.S | re.M):
        for line in block.split("\n"):
            m = re.match(r'\s*(\w+)?\s*"([^"]+)"', line)
            if m:
                imps[m.group(1) or m.group(2).rsplit("/", 1)[-1]] = m.group(2)
    for m in re.finditer(r'^import\s+(\w+)?\s*"([^"]+)"', src, flags=re.M):
        imps[m.group(1) or m.group(2).rsplit("/", 1)[-1]] = m.group(2)
    return imps


def parse_package(path, directory):
    types = packages.setdefault(path, {})
    for fn in sorted(os.listdir(directory)):
        if not fn.endswith(".go") or fn.endswith("_test.go") or fn.startswith("zz_generated"):
            continue
        if fn.startswith("generated.") or fn.endswith("_fuzz.go"):
            continue
        src = strip_comments(open(os.path.join(directory, fn)).read())
        imps = imports_of(src)
        for m in re.finditer(r"^type\s+(\w+)\s+struct\s*\{", src, flags=re.M):
            body, depth, i = [], 1, m.end()
            start = i
            while depth and i < len(src):
                if src[i] == "{":
                    depth += 1
                elif src[i] == "}":
                    depth -= 1
                i += 1
            body = src[start : i - 1]
            types[m.group(1)] = ("struct", fields_of(body), imps)
        for m in re.finditer(r"^type\s+(\w+)\s*=?\s*([^\s{][^\n]*)$", src, flags=re.M):
            if m.group(2).startswith("struct") or m.group(2).startswith("interface"):
                continue
            types.setdefault(m.group(1), ("alias", m.group(2).strip(), imps))
        # Grouped declarations: type ( A = b.A ... )
        for block in re.findall(r"^type\s*\((.*?)^\)", src, flags=re.S | re.M):
            for line in block.split("\n"):
                m = re.match(r"\s*(\w+)\s*=?\s*(\S.*)$", line)
                if m and not m.group(2).startswith(("struct", "interface")):
                    types.setdefault(m.group(1), ("alias", m.group(2).strip(), imps))


def fields_of(body):
    fields = []
    depth = 0
    for line in body.split("\n"):
        line = line.strip()
        if not line:
            continue
        if depth:
            depth += line.count("{") - line.count("}")
            continue
        if "struct {" in line or "struct{" in line:
            depth = line.count("{") - line.count("}")
        m = re.match(r"^(?:([\w, ]+?)\s+)?([^\s`]+)\s*(?:`([^`]*)`)?$", line)
        if not m:
            continue
        names, typ, tag = m.group(1), m.group(2), m.group(3) or ""
        jt = re.search(r'json:"([^"]*)"', tag)
        jname = jt.group(1).split(",")[0] if jt else None
        inline = jt is not None and ",inline" in jt.group(1)
        if jname == "-":
            continue
        if names is None:
            # Embedded: inlined unless it has a name of its own.
            fields.append((jname if jname and not inline else None, typ, True))
        else:
            for n in names.split(","):
                n = n.strip()
                if n[:1].isupper():
                    fields.append((jname or n, typ, False))
    return fields


def resolve(pkg, imps, name):
    """A type expression's base to `<import path>.<Type>`."""
    if "." in name:
        alias, t = name.split(".", 1)
        return imps.get(alias, alias) + "." + t
    return pkg + "." + name


def classify(pkg, imps, expr, seen=()):
    """(ref, card) of a type expression: ref a struct's full name, "*", "|", or None (leaf)."""
    card = ""
    e = expr.lstrip("*")
    if e.startswith("[]"):
        card, e = "[]", e[2:].lstrip("*")
    elif e.startswith("map[string]"):
        card, e = "map", e[len("map[string]") :].lstrip("*")
    elif e.startswith("map["):
        # map[SomeStringType]X
        k, _, rest = e[4:].partition("]")
        card, e = "map", rest.lstrip("*")
    if e.startswith(("[]", "map[", "interface", "func", "chan")) or not re.match(r"^[\w.]+$", e):
        return None, ""
    if e in ("string", "bool", "byte", "int", "int32", "int64", "uint", "uint32", "uint64",
             "float32", "float64"):
        return None, ""
    full = resolve(pkg, imps, e)
    if full in LEAVES:
        return None, ""
    if full in EMBEDDED:
        return "*", card
    if full in UNIONS:
        return "|", card
    tpkg, tname = full.rsplit(".", 1)
    decl = packages.get(tpkg, {}).get(tname)
    if decl is None:
        return None, ""
    if decl[0] == "struct":
        return full, card
    if card or full in seen:
        return None, ""
    # A named type: its underlying type decides (`type ConditionList []Condition`).
    return classify(tpkg, decl[2], decl[1], seen + (full,))


def flatten(full, seen=()):
    """The JSON fields of a struct in declaration order: [(json, ref, card)]."""
    pkg, name = full.rsplit(".", 1)
    decl = packages[pkg][name]
    out = []
    for jname, typ, embedded in decl[1]:
        if embedded and jname is None:
            base = resolve(pkg, decl[2], typ.lstrip("*"))
            bpkg, bname = base.rsplit(".", 1)
            bdecl = packages.get(bpkg, {}).get(bname)
            if base in TYPEMETA:
                out += [("kind", None, ""), ("apiVersion", None, "")]
            elif bdecl and bdecl[0] == "struct" and base not in seen:
                out += flatten(base, seen + (full,))
            continue
        if embedded:
            jname = jname
        ref, card = classify(pkg, decl[2], typ)
        out.append((jname, ref, card))
    return out


def main(args):
    for a in args:
        path, directory = a.split("=", 1)
        parse_package(path, directory)
    # Aliases to structs (meta/v1beta1's `type Table = v1.Table`) are served as their target.
    roots = []
    for pkg, types in packages.items():
        for name, decl in types.items():
            if decl[0] == "struct":
                if any(
                    e and jn is None and resolve(pkg, decl[2], t) in TYPEMETA
                    for jn, t, e in decl[1]
                ):
                    roots.append(pkg + "." + name)
    out = {}
    todo = list(roots) + [r for r in EXTRA_ROOTS if r.rsplit(".", 1)[1] in packages.get(r.rsplit(".", 1)[0], {})]
    while todo:
        t = todo.pop()
        if t in out or t in ("*", "|"):
            continue
        fields = flatten(t)
        out[t] = [f[0] if f[1] is None else [f[0], f[1], f[2]] for f in fields]
        for _, ref, _ in fields:
            if ref and ref not in out and ref not in ("*", "|"):
                todo.append(ref)
    aliases = {}
    for pkg, types in packages.items():
        for name, decl in types.items():
            if decl[0] == "alias":
                ref, card = classify(pkg, decl[2], decl[1])
                if ref and not card and ref in out:
                    aliases[pkg + "." + name] = ref
    lines = ["{"]
    items = sorted(out.items())
    for i, (k, v) in enumerate(items):
        sep = "," if i + 1 < len(items) or aliases else ""
        lines.append(json.dumps(k) + ": " + json.dumps(v, separators=(",", ":")) + sep)
    al = sorted(aliases.items())
    for i, (k, v) in enumerate(al):
        sep = "," if i + 1 < len(al) else ""
        lines.append(json.dumps(k) + ": " + json.dumps(v) + sep)
    lines.append("}")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
