// The official Kubernetes JavaScript client (@kubernetes/client-node) against a running Crest,
// through the kubeconfig Crest wrote (HTTPS, its own CA, a bearer token). Each step prints
// `ok <step>`; the first failure prints `FAILED <step>: <why>` and exits 1. Run by
// crates/crest/tests/javascript_client.rs.
import * as k8s from '@kubernetes/client-node';
import assert from 'node:assert/strict';

const kc = new k8s.KubeConfig();
kc.loadFromFile(process.env.KUBECONFIG);
const core = kc.makeApiClient(k8s.CoreV1Api);
const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
const custom = kc.makeApiClient(k8s.CustomObjectsApi);
const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
const objects = k8s.KubernetesObjectApi.makeApiClient(kc);

const group = 'stable.example.com';
const version = 'v1';
const plural = 'crontabs';
const namespace = 'js';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function step(name, f) {
  try {
    await f();
    console.log(`ok ${name}`);
  } catch (e) {
    const body = e && e.body ? ` body=${typeof e.body === 'string' ? e.body : JSON.stringify(e.body)}` : '';
    console.log(`FAILED ${name}: ${e && e.stack ? e.stack : e}${body}`);
    process.exit(1);
  }
}

/// The Status of a failed call, as the client hands it over (ApiException.body is its JSON).
async function failure(call) {
  try {
    await call();
  } catch (e) {
    assert.ok(e instanceof k8s.ApiException, `not an ApiException: ${e}`);
    return { code: e.code, status: typeof e.body === 'string' ? JSON.parse(e.body) : e.body };
  }
  assert.fail('the call succeeded');
}

/// Waits for `pred` (bounded), polling.
async function eventually(what, pred, ms = 10000) {
  const until = Date.now() + ms;
  for (;;) {
    if (await pred()) return;
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

await step('version', async () => {
  const v = await kc.makeApiClient(k8s.VersionApi).getCode();
  assert.equal(v.major, '1');
  assert.ok(v.gitVersion.startsWith('v1.'), v.gitVersion);
});

await step('namespace', async () => {
  const ns = await core.createNamespace({ body: { metadata: { name: namespace } } });
  assert.equal(ns.metadata.name, namespace);
  assert.equal(ns.status.phase, 'Active');
});

await step('crd', async () => {
  await ext.createCustomResourceDefinition({
    body: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${plural}.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural, singular: 'crontab', kind: 'CronTab', shortNames: ['ct'] },
        versions: [{
          name: version, served: true, storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    cronSpec: { type: 'string', pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$' },
                    image: { type: 'string' },
                    // The client's model names it `_default` (`default` is reserved in its generator).
                    replicas: { type: 'integer', minimum: 1, maximum: 10, _default: 1 },
                  },
                },
                status: { type: 'object', properties: { ready: { type: 'boolean' } } },
              },
            },
          },
        }],
      },
    },
  });
  await eventually('the CRD to be Established', async () => {
    const crd = await ext.readCustomResourceDefinition({ name: `${plural}.${group}` });
    return (crd.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True');
  });
});

// An informer on CronTabs from before the first one exists: it must see the add, the updates
// and the delete below.
const seen = [];
const informer = k8s.makeInformer(
  kc,
  `/apis/${group}/${version}/namespaces/${namespace}/${plural}`,
  () => custom.listNamespacedCustomObject({ group, version, namespace, plural }),
);
informer.on('add', (o) => seen.push(`add ${o.metadata.name}`));
informer.on('update', (o) => seen.push(`update ${o.metadata.name} ${o.spec?.image}`));
informer.on('delete', (o) => seen.push(`delete ${o.metadata.name}`));
informer.on('error', (e) => seen.push(`error ${e}`));
await step('informer start', () => informer.start());

await step('create custom object (defaulted, pruned)', async () => {
  const created = await custom.createNamespacedCustomObject({
    group, version, namespace, plural,
    body: {
      apiVersion: `${group}/${version}`, kind: 'CronTab',
      metadata: { name: 'cron-1', labels: { app: 'js' } },
      spec: { cronSpec: '* * * * */5', image: 'img:1', unknownField: 'dropped' },
    },
  });
  assert.equal(created.spec.replicas, 1, JSON.stringify(created));
  assert.equal(created.spec.unknownField, undefined);
  assert.ok(Number(created.metadata.resourceVersion) > 0);
  assert.ok(created.metadata.uid);
});

await step('invalid custom object is 422 Invalid with field causes', async () => {
  const { code, status } = await failure(() => custom.createNamespacedCustomObject({
    group, version, namespace, plural,
    body: {
      apiVersion: `${group}/${version}`, kind: 'CronTab',
      metadata: { name: 'cron-bad' },
      spec: { cronSpec: 'nope', replicas: 11 },
    },
  }));
  assert.equal(code, 422);
  assert.equal(status.kind, 'Status');
  assert.equal(status.reason, 'Invalid');
  assert.equal(status.details.name, 'cron-bad');
  const fields = status.details.causes.map((c) => c.field).sort();
  assert.deepEqual(fields, ['spec.cronSpec', 'spec.replicas']);
});

await step('get, list with a label selector', async () => {
  const got = await custom.getNamespacedCustomObject({ group, version, namespace, plural, name: 'cron-1' });
  assert.equal(got.spec.image, 'img:1');
  const list = await custom.listNamespacedCustomObject({ group, version, namespace, plural, labelSelector: 'app=js' });
  assert.deepEqual(list.items.map((o) => o.metadata.name), ['cron-1']);
  const none = await custom.listNamespacedCustomObject({ group, version, namespace, plural, labelSelector: 'app=other' });
  assert.equal(none.items.length, 0);
});

await step('not found is 404 NotFound', async () => {
  const { code, status } = await failure(() =>
    custom.getNamespacedCustomObject({ group, version, namespace, plural, name: 'missing' }));
  assert.equal(code, 404);
  assert.equal(status.reason, 'NotFound');
  assert.equal(status.message, 'crontabs.stable.example.com "missing" not found');
  assert.deepEqual(status.details, { name: 'missing', group, kind: 'crontabs' });
});

await step('patch: JSON patch (the default) and merge patch', async () => {
  const jp = await custom.patchNamespacedCustomObject({
    group, version, namespace, plural, name: 'cron-1',
    body: [{ op: 'replace', path: '/spec/image', value: 'img:2' }],
  });
  assert.equal(jp.spec.image, 'img:2');
  const mp = await custom.patchNamespacedCustomObject(
    { group, version, namespace, plural, name: 'cron-1', body: { spec: { image: 'img:3' } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
  assert.equal(mp.spec.image, 'img:3');
  assert.equal(mp.spec.replicas, 1);
});

await step('status subresource', async () => {
  const cur = await custom.getNamespacedCustomObject({ group, version, namespace, plural, name: 'cron-1' });
  cur.status = { ready: true };
  cur.spec.image = 'ignored-by-status';
  const updated = await custom.replaceNamespacedCustomObjectStatus({
    group, version, namespace, plural, name: 'cron-1', body: cur,
  });
  assert.equal(updated.status.ready, true);
  assert.equal(updated.spec.image, 'img:3');
});

await step('conflict is 409 Conflict', async () => {
  const cur = await custom.getNamespacedCustomObject({ group, version, namespace, plural, name: 'cron-1' });
  cur.metadata.resourceVersion = '1';
  const { code, status } = await failure(() => custom.replaceNamespacedCustomObject({
    group, version, namespace, plural, name: 'cron-1', body: cur,
  }));
  assert.equal(code, 409);
  assert.equal(status.reason, 'Conflict');
});

await step('KubernetesObjectApi: discovery, create, server-side apply, read', async () => {
  const cm = {
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { name: 'settings', namespace },
    data: { a: '1' },
  };
  await objects.create(cm);
  const applied = await objects.patch(
    { apiVersion: `${group}/${version}`, kind: 'CronTab', metadata: { name: 'cron-2', namespace }, spec: { cronSpec: '0 * * * *', image: 'img:applied' } },
    undefined, undefined, 'js-client', true, k8s.PatchStrategy.ServerSideApply,
  );
  assert.equal(applied.spec.image, 'img:applied');
  assert.ok(applied.metadata.managedFields.some((m) => m.manager === 'js-client' && m.operation === 'Apply'));
  const read = await objects.read({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace } });
  assert.equal(read.data.a, '1');
});

await step('Watch: ADDED, MODIFIED, DELETED of ConfigMaps from a resourceVersion', async () => {
  const list = await core.listNamespacedConfigMap({ namespace });
  const events = [];
  const watch = new k8s.Watch(kc);
  let ended = null;
  const req = await watch.watch(
    `/api/v1/namespaces/${namespace}/configmaps`,
    { resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: true },
    (type, obj) => events.push(`${type} ${obj.metadata?.name ?? ''}`),
    (err) => { ended = err ?? 'done'; },
  );
  await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'watched' }, data: { x: '1' } } });
  await core.patchNamespacedConfigMap(
    { name: 'watched', namespace, body: { data: { x: '2' } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch),
  );
  await core.deleteNamespacedConfigMap({ name: 'watched', namespace });
  await eventually('the watch events', () => events.includes('DELETED watched'));
  // The watch was still open (its done callback fires on the abort below).
  assert.equal(ended, null);
  req.abort();
  const mine = events.filter((e) => !e.startsWith('BOOKMARK'));
  assert.deepEqual(mine, ['ADDED watched', 'MODIFIED watched', 'DELETED watched']);
});

await step('Lease', async () => {
  const lease = await coordination.createNamespacedLease({
    namespace,
    body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'js', leaseDurationSeconds: 15, acquireTime: new k8s.V1MicroTime() } },
  });
  assert.equal(lease.spec.holderIdentity, 'js');
  // Sent by the client's V1MicroTime, read back as Go's MicroTime text (microseconds).
  assert.match(String(lease.spec.acquireTime), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
});

await step('delete custom object', async () => {
  await custom.deleteNamespacedCustomObject({ group, version, namespace, plural, name: 'cron-1' });
  await eventually('cron-1 gone', async () => (await failure(() =>
    custom.getNamespacedCustomObject({ group, version, namespace, plural, name: 'cron-1' }))).code === 404);
});

await step('informer saw add, updates and delete', async () => {
  await eventually('the informer', () => seen.includes('delete cron-1'));
  // No error before stopping (stopping aborts its watch, which it reports as one).
  assert.ok(!seen.some((s) => s.startsWith('error')), seen.join('\n'));
  await informer.stop();
  const cron1 = seen.filter((s) => s.includes('cron-1'));
  assert.equal(cron1[0], 'add cron-1');
  assert.ok(cron1.includes('update cron-1 img:3'), cron1.join('\n'));
  assert.equal(cron1[cron1.length - 1], 'delete cron-1');
  assert.ok(seen.includes('add cron-2'), seen.join('\n'));
});

console.log('all ok');
process.exit(0);
