"""The official Python client's DynamicClient (kubernetes.dynamic) against a running Crest,
through the kubeconfig Crest wrote: discovery of a new CRD's resource and its subresources,
create/get/list/merge patch, /scale and /status, server-side apply, a watch from a list's
resourceVersion, 404 and 409 as the client's typed errors, and a built-in kind. Each step prints
`ok <step>`; the first failure raises. Run by crates/crest/tests/python_client.rs."""

import json
import sys
import time

from kubernetes import client, config, dynamic
from kubernetes.client import api_client

cfg = client.Configuration()
config.load_kube_config(config_file=sys.argv[1], client_configuration=cfg)
dyn = dynamic.DynamicClient(api_client.ApiClient(cfg))
NS = "default"


def step(name):
    print("ok", name, flush=True)


crds = dyn.resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
crds.create(body={
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "crontabs.stable.example.com"},
    "spec": {
        "group": "stable.example.com", "scope": "Namespaced",
        "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "shortNames": ["ct"]},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "subresources": {
                "status": {},
                "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
            },
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {
                    "image": {"type": "string"}, "replicas": {"type": "integer"}}},
                "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}},
        }],
    },
})
deadline = time.time() + 10
while True:
    crd = crds.get(name="crontabs.stable.example.com")
    if any(c.type == "Established" and c.status == "True" for c in (crd.status.conditions or [])):
        break
    assert time.time() < deadline, "the CRD was not Established within 10s"
    time.sleep(0.05)
step("crd")

# Discovery of the new group (the client's cache has not seen it: it refreshes on a miss).
ct = dyn.resources.get(api_version="stable.example.com/v1", kind="CronTab")
assert ct.name == "crontabs" and ct.namespaced, ct
assert sorted(ct.subresources) == ["scale", "status"], list(ct.subresources)
assert ct.short_names == ["ct"], ct.short_names
step("discovery")

created = ct.create(namespace=NS, body={
    "apiVersion": "stable.example.com/v1", "kind": "CronTab",
    "metadata": {"name": "a"}, "spec": {"image": "x", "replicas": 1, "dropped": True}})
assert int(created.metadata.resourceVersion) > 0
assert created.spec.image == "x" and "dropped" not in created.spec.to_dict(), created
assert ct.get(name="a", namespace=NS).spec.image == "x"
patched = ct.patch(name="a", namespace=NS, body={"spec": {"image": "y"}},
                   content_type="application/merge-patch+json")
assert patched.spec.image == "y" and patched.metadata.generation == 2, patched
step("create, get, merge patch")

scale = ct.subresources["scale"]
s = scale.get(name="a", namespace=NS)
assert s.kind == "Scale" and s.apiVersion == "autoscaling/v1" and s.spec.replicas == 1, s
scale.patch(name="a", namespace=NS, body={"spec": {"replicas": 3}},
            content_type="application/merge-patch+json")
assert ct.get(name="a", namespace=NS).spec.replicas == 3
status = ct.subresources["status"]
status.patch(name="a", namespace=NS, body={"status": {"replicas": 3}, "spec": {"image": "ignored"}},
             content_type="application/merge-patch+json")
a = ct.get(name="a", namespace=NS)
assert a.status.replicas == 3 and a.spec.image == "y", a
step("scale and status")

listed = ct.get(namespace=NS)
assert [i.metadata.name for i in listed.items] == ["a"], listed
applied = ct.server_side_apply(namespace=NS, field_manager="py", body={
    "apiVersion": "stable.example.com/v1", "kind": "CronTab",
    "metadata": {"name": "b"}, "spec": {"image": "z"}})
assert [m.manager for m in applied.metadata.managedFields] == ["py"], applied.metadata.managedFields
assert applied.metadata.managedFields[0].operation == "Apply"
step("server-side apply")

events = [(e["type"], e["object"].metadata.name)
          for e in ct.watch(namespace=NS, resource_version=listed.metadata.resourceVersion, timeout=1)]
assert events == [("ADDED", "b")], events
step("watch from a list's resourceVersion")

try:
    ct.get(name="missing", namespace=NS)
    raise AssertionError("no error for a missing object")
except dynamic.exceptions.NotFoundError as e:
    status = json.loads(e.body)
    assert status["reason"] == "NotFound", status
    assert status["message"] == 'crontabs.stable.example.com "missing" not found', status
try:
    ct.create(namespace=NS, body={"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                                  "metadata": {"name": "a"}})
    raise AssertionError("no error for a duplicate")
except dynamic.exceptions.ConflictError as e:
    status = json.loads(e.body)
    assert status["reason"] == "AlreadyExists", status
    assert status["message"] == 'crontabs.stable.example.com "a" already exists', status
step("404 and 409")

ct.delete(name="a", namespace=NS)
cm = dyn.resources.get(api_version="v1", kind="ConfigMap")
cm.create(namespace=NS, body={"metadata": {"name": "c"}, "data": {"k": "v"}})
assert cm.get(namespace=NS, name="c").data.k == "v"
step("delete, built-in kind")
print("all ok", flush=True)
