package clientgo

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	eventsv1 "k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/pager"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func namespace(t *testing.T, cs kubernetes.Interface, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cs.CoreV1().Namespaces().Create(ctxT(t), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	return name
}

// protobufClient is a typed clientset speaking protobuf, as kube components configure it.
func protobufClient(t *testing.T) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(config)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestTypedBuiltinsOverProtobuf(t *testing.T) {
	cs := protobufClient(t)
	ctx := ctxT(t)
	ns := namespace(t, cs, "typed")
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("ConfigMap: %v", err)
	}
	s, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"p": "w"}}, metav1.CreateOptions{})
	if err != nil || string(s.Data["p"]) != "w" {
		t.Fatalf("Secret: %v %v", err, s)
	}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("ServiceAccount: %v", err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "robot", &authenticationv1TokenRequest, metav1.CreateOptions{})
	if err != nil || tr.Status.Token == "" {
		t.Fatalf("TokenRequest: %v", err)
	}
	// The token authenticates as the ServiceAccount (and RBAC refuses it a list).
	saCfg := rest.AnonymousClientConfig(config)
	saCfg.BearerToken = tr.Status.Token
	saClient := kubernetes.NewForConfigOrDie(saCfg)
	_, err = saClient.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	want := fmt.Sprintf(`configmaps is forbidden: User "system:serviceaccount:%s:robot" cannot list resource "configmaps" in API group "" in the namespace "%s"`, ns, ns)
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("the ServiceAccount's list: %v, want %q", err, want)
	}
	svc, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	if err != nil || svc.Spec.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Fatalf("Service: %v %+v", err, svc)
	}
	if _, err := cs.CoreV1().Endpoints(ns).Create(ctx, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.1.2.3"}}, Ports: []corev1.EndpointPort{{Port: 80}}}}}, metav1.CreateOptions{}); err != nil { //nolint:staticcheck
		t.Fatalf("Endpoints: %v", err)
	}
	if _, err := cs.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "web-1"}, AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.1.2.3"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("EndpointSlice: %v", err)
	}
	if _, err := cs.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l"}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("me")}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("Lease: %v", err)
	}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "reader"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("Role: %v", err)
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "robot-reads"}, RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "reader"}, Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "robot", Namespace: ns}}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("RoleBinding: %v", err)
	}
	// Now the ServiceAccount may list.
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := saClient.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) >= 1, nil
	}); err != nil {
		t.Errorf("the bound ServiceAccount still cannot list: %v", err)
	}
	got, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{})
	if err != nil || got.Data["k"] != "v" {
		t.Fatalf("get over protobuf: %v %v", err, got)
	}
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "cm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after delete: %v", err)
	}
}

func TestPagerAndSelectors(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(config)
	ctx := ctxT(t)
	ns := namespace(t, cs, "paging")
	for i := 0; i < 25; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i), Labels: map[string]string{"parity": []string{"even", "odd"}[i%2]}}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().ConfigMaps(ns).List(ctx, opts)
	})
	p.PageSize = 10
	n := 0
	if err := p.EachListItem(ctx, metav1.ListOptions{LabelSelector: "parity=odd"}, func(runtime.Object) error { n++; return nil }); err != nil {
		t.Fatalf("pager: %v", err)
	}
	if n != 12 {
		t.Errorf("odd ConfigMaps paged: %d, want 12", n)
	}
	l, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=cm-07"})
	if err != nil || len(l.Items) != 1 {
		t.Errorf("field selector: %v %d", err, len(l.Items))
	}
	_, err = cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{FieldSelector: "data.k=v"})
	if !apierrors.IsBadRequest(err) {
		t.Errorf("unsupported field selector: %v, want BadRequest", err)
	}
}

func TestRetryOnConflict(t *testing.T) {
	// Eight writers at once: no client-side throttling, and a backoff with room for the
	// conflicts they cause each other.
	cfg := rest.CopyConfig(config)
	cfg.QPS, cfg.Burst = 1000, 1000
	cs := kubernetes.NewForConfigOrDie(cfg)
	backoff := wait.Backoff{Steps: 100, Duration: 5 * time.Millisecond, Factor: 1.1, Jitter: 1, Cap: 100 * time.Millisecond}
	ctx := ctxT(t)
	ns := namespace(t, cs, "conflicts")
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "counter"}, Data: map[string]string{"n": ""}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stale := cm.DeepCopy()
	cm.Data["n"] = "x"
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	stale.Data["n"] = "y"
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: %v, want Conflict", err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := retry.RetryOnConflict(backoff, func() error {
				cur, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "counter", metav1.GetOptions{})
				if err != nil {
					return err
				}
				cur.Data["n"] += "+"
				_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, cur, metav1.UpdateOptions{})
				return err
			}); err != nil {
				t.Errorf("RetryOnConflict: %v", err)
			}
		}()
	}
	wg.Wait()
	got, _ := cs.CoreV1().ConfigMaps(ns).Get(ctx, "counter", metav1.GetOptions{})
	if got.Data["n"] != "x++++++++" {
		t.Errorf("counter %q, want eight increments", got.Data["n"])
	}
}

func TestServerSideApplyConflicts(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(config)
	ctx := ctxT(t)
	ns := namespace(t, cs, "apply")
	a := corev1ac.ConfigMap("shared", ns).WithData(map[string]string{"owner": "a"})
	if _, err := cs.CoreV1().ConfigMaps(ns).Apply(ctx, a, metav1.ApplyOptions{FieldManager: "a"}); err != nil {
		t.Fatalf("apply a: %v", err)
	}
	b := corev1ac.ConfigMap("shared", ns).WithData(map[string]string{"owner": "b"})
	_, err := cs.CoreV1().ConfigMaps(ns).Apply(ctx, b, metav1.ApplyOptions{FieldManager: "b"})
	if !apierrors.IsConflict(err) {
		t.Fatalf("apply b: %v, want Conflict", err)
	}
	want := `Apply failed with 1 conflict: conflict with "a": .data.owner`
	if err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
	got, err := cs.CoreV1().ConfigMaps(ns).Apply(ctx, b, metav1.ApplyOptions{FieldManager: "b", Force: true})
	if err != nil || got.Data["owner"] != "b" {
		t.Fatalf("forced apply: %v", err)
	}
	// Extract what b owns.
	ex, err := corev1ac.ExtractConfigMap(got, "b")
	if err != nil || ex.Data["owner"] != "b" {
		t.Errorf("extract: %v %+v", err, ex)
	}
}

var cronTabGVR = schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"}

func installCronTabs(t *testing.T) {
	t.Helper()
	ctx := ctxT(t)
	ext := apiextclient.NewForConfigOrDie(config)
	min, max := 1.0, 10.0
	crd := &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "crontabs.stable.example.com"},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: "stable.example.com",
			Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{Plural: "crontabs", Singular: "crontab", Kind: "CronTab", ShortNames: []string{"ct"}},
			Versions: []apiextv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextv1.CustomResourceSubresources{
					Status: &apiextv1.CustomResourceSubresourceStatus{},
					Scale:  &apiextv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"},
				},
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
							"cronSpec": {Type: "string"},
							"replicas": {Type: "integer", Minimum: &min, Maximum: &max},
						}},
						"status": {Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
							"replicas": {Type: "integer"},
						}},
					},
				}},
			}},
		},
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create CRD: %v", err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextv1.Established && c.Status == apiextv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("CRD not established: %v", err)
	}
}

func TestDiscoveryAndTheDeferredRESTMapper(t *testing.T) {
	dc := discovery.NewDiscoveryClientForConfigOrDie(config)
	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	gk := schema.GroupKind{Group: "stable.example.com", Kind: "CronTab"}
	if _, err := mapper.RESTMapping(gk, "v1"); err == nil {
		// Another test may have installed it already: fine, but it must then map.
		t.Log("CronTab already mappable")
	}
	installCronTabs(t)
	mapper.Reset()
	m, err := mapper.RESTMapping(gk, "v1")
	if err != nil {
		t.Fatalf("RESTMapping after the CRD: %v", err)
	}
	if m.Resource != cronTabGVR || m.Scope.Name() != meta.RESTScopeNameNamespace {
		t.Errorf("mapping %+v", m)
	}
	// Short names resolve through the mapper, as kubectl does.
	shortcuts := restmapper.NewShortcutExpander(mapper, cached, nil)
	r, err := shortcuts.ResourceFor(schema.GroupVersionResource{Resource: "ct"})
	if err != nil || r != cronTabGVR {
		t.Errorf("short name ct: %v %v", r, err)
	}
	groups, resources, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("ServerGroupsAndResources: %v", err)
	}
	found := false
	for _, g := range groups {
		if g.Name == "stable.example.com" {
			found = true
		}
	}
	if !found || len(resources) == 0 {
		t.Errorf("discovery misses the CRD's group")
	}
	if _, err := dc.ServerPreferredResources(); err != nil {
		t.Errorf("ServerPreferredResources: %v", err)
	}
}

func TestDynamicClientStatusAndScale(t *testing.T) {
	installCronTabs(t)
	ctx := ctxT(t)
	dyn := dynamic.NewForConfigOrDie(config)
	cs := kubernetes.NewForConfigOrDie(config)
	ns := namespace(t, cs, "dynamic")
	obj := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "stable.example.com/v1", "kind": "CronTab",
		"metadata": map[string]interface{}{"name": "ct"},
		"spec":     map[string]interface{}{"cronSpec": "* * * * *", "replicas": int64(2)},
	}}
	created, err := dyn.Resource(cronTabGVR).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	_ = unstructured.SetNestedField(created.Object, int64(2), "status", "replicas")
	st, err := dyn.Resource(cronTabGVR).Namespace(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("UpdateStatus: %v", err)
	}
	if r, _, _ := unstructured.NestedInt64(st.Object, "status", "replicas"); r != 2 {
		t.Errorf("status.replicas %d", r)
	}
	scale, err := dyn.Resource(cronTabGVR).Namespace(ns).Get(ctx, "ct", metav1.GetOptions{}, "scale")
	if err != nil {
		t.Fatalf("get scale: %v", err)
	}
	if scale.GetKind() != "Scale" || scale.GetAPIVersion() != "autoscaling/v1" {
		t.Errorf("scale kind %s %s", scale.GetAPIVersion(), scale.GetKind())
	}
	patch := []byte(`{"spec":{"replicas":5}}`)
	if _, err := dyn.Resource(cronTabGVR).Namespace(ns).Patch(ctx, "ct", types.MergePatchType, patch, metav1.PatchOptions{}, "scale"); err != nil {
		t.Fatalf("patch scale: %v", err)
	}
	got, _ := dyn.Resource(cronTabGVR).Namespace(ns).Get(ctx, "ct", metav1.GetOptions{})
	if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); r != 5 {
		t.Errorf("spec.replicas after scaling: %d, want 5", r)
	}
	// Beyond the schema's maximum: Invalid, with the field path.
	_, err = dyn.Resource(cronTabGVR).Namespace(ns).Patch(ctx, "ct", types.MergePatchType, []byte(`{"spec":{"replicas":50}}`), metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) {
		t.Errorf("replicas 50: %v, want Invalid", err)
	}
}

func TestInformersAndListers(t *testing.T) {
	on := clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient)
	t.Logf("WatchListClient enabled: %v", on)
	if os.Getenv("KUBE_FEATURE_WatchListClient") == "" && !on {
		t.Error("client-go's WatchListClient is off by default; this test expects it on")
	}
	cs := kubernetes.NewForConfigOrDie(config)
	ctx := ctxT(t)
	ns := namespace(t, cs, "informed")
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 200*time.Millisecond, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps()
	var mu sync.Mutex
	adds, updates, deletes := map[string]int{}, 0, 0
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(o interface{}) { mu.Lock(); adds[o.(*corev1.ConfigMap).Name]++; mu.Unlock() },
		UpdateFunc: func(_, _ interface{}) {
			mu.Lock()
			updates++
			mu.Unlock()
		},
		DeleteFunc: func(interface{}) { mu.Lock(); deletes++; mu.Unlock() },
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	if !cache.WaitForCacheSync(ctx.Done(), inf.Informer().HasSynced) {
		t.Fatal("informer did not sync")
	}
	if _, err := inf.Lister().ConfigMaps(ns).Get("before"); err != nil {
		t.Errorf("lister after sync: %v", err)
	}
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"x": "1"}
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "before", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Resyncs (every 200 ms) are updates too: wait for the events and at least one resync.
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		l, _ := inf.Lister().ConfigMaps(ns).Get("after")
		return adds["before"] == 1 && adds["after"] == 1 && deletes == 1 && updates >= 2 && l != nil && l.Data["x"] == "1", nil
	}); err != nil {
		mu.Lock()
		t.Errorf("informer events: adds %v updates %d deletes %d", adds, updates, deletes)
		mu.Unlock()
	}
}

func TestLeaderElectionWithALeaseLock(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(config)
	ctx, cancel := context.WithCancel(ctxT(t))
	ns := namespace(t, cs, "election")
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: ns, Name: "operator"},
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: "replica-1"},
	}
	led := make(chan struct{})
	stopped := make(chan struct{})
	go leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 200 * time.Millisecond,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { close(led) },
			OnStoppedLeading: func() { close(stopped) },
		},
	})
	select {
	case <-led:
	case <-time.After(20 * time.Second):
		t.Fatal("did not become leader")
	}
	l, err := cs.CoordinationV1().Leases(ns).Get(context.Background(), "operator", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != "replica-1" {
		t.Fatalf("lease: %v %+v", err, l)
	}
	cancel()
	<-stopped
	// Released on cancel: the holder is cleared.
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := cs.CoordinationV1().Leases(ns).Get(ctx, "operator", metav1.GetOptions{})
		return err == nil && (l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == ""), nil
	}); err != nil {
		t.Errorf("the lease was not released")
	}
}

func TestEventRecorder(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(config)
	ctx := ctxT(t)
	ns := namespace(t, cs, "events")
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "subject"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := record.NewBroadcaster()
	defer b.Shutdown()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events(ns)})
	rec := b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "clientgo-test"})
	rec.Eventf(cm, corev1.EventTypeNormal, "Tested", "seen %d times", 1)
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=subject,reason=Tested"})
		return err == nil && len(l.Items) == 1 && l.Items[0].Message == "seen 1 times" && l.Items[0].Source.Component == "clientgo-test", nil
	}); err != nil {
		t.Errorf("the recorded Event was not listed: %v", err)
	}
	// And through events.k8s.io/v1.
	l, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 1 || l.Items[0].Note != "seen 1 times" || l.Items[0].Regarding.Name != "subject" {
		t.Errorf("events.k8s.io/v1 view: %v %+v", err, l)
	}
}

// TestInformersWithWatchListOff runs TestInformersAndListers again in a child process with
// client-go's WatchListClient gate off (a LIST then a WATCH, instead of the default
// sendInitialEvents watch).
func TestInformersWithWatchListOff(t *testing.T) {
	if os.Getenv("KUBE_FEATURE_WatchListClient") != "" {
		t.Skip("the child process itself")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestInformersAndListers$", "-test.count", "1", "-test.v")
	cmd.Env = append(os.Environ(), "KUBE_FEATURE_WatchListClient=false")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestInformersAndListers") ||
		!strings.Contains(string(out), "WatchListClient enabled: false") {
		t.Fatalf("with WatchListClient off: %v\n%s", err, out)
	}
}

func TestAnExpiredResourceVersionIsGoneAndBookmarksEndTheInitialEvents(t *testing.T) {
	// A server of its own whose history is compacted after a second.
	cfg, stop, err := serve("--history-retention-seconds", "1")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := ctxT(t)
	cm, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "churn"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old := cm.ResourceVersion
	for i := 0; i < 5; i++ {
		cm.Data = map[string]string{"i": fmt.Sprint(i)}
		if cm, err = cs.CoreV1().ConfigMaps("default").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Once compacted past it, a watch from the old resourceVersion gets one ERROR event: 410
	// Expired, which a reflector answers with a relist.
	var gone error
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{ResourceVersion: old})
		if err != nil {
			gone = err
			return apierrors.IsResourceExpired(err) || apierrors.IsGone(err), nil
		}
		defer w.Stop()
		select {
		case ev := <-w.ResultChan():
			if ev.Type == "ERROR" {
				gone = apierrors.FromObject(ev.Object)
				return true, nil
			}
		case <-time.After(2 * time.Second):
		}
		return false, nil
	}); err != nil {
		t.Fatalf("the old resourceVersion never expired (last: %v)", gone)
	}
	if !apierrors.IsResourceExpired(gone) {
		t.Errorf("watch from a compacted resourceVersion: %v, want 410 Expired", gone)
	}
	// A list at exactly that resourceVersion is 410 too.
	_, err = cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{ResourceVersion: old, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("list at a compacted resourceVersion: %v, want 410", err)
	}
	// The WatchList protocol: initial events, then a bookmark annotated as their end.
	w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{
		SendInitialEvents:    ptr.To(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks:  true,
	})
	if err != nil {
		t.Fatalf("watch-list: %v", err)
	}
	defer w.Stop()
	seen := map[string]bool{}
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch ended before the bookmark")
			}
			o, _ := meta.Accessor(ev.Object)
			if ev.Type == "BOOKMARK" {
				if o.GetAnnotations()["k8s.io/initial-events-end"] != "true" {
					t.Fatalf("a bookmark without initial-events-end: %v", o.GetAnnotations())
				}
				if !seen["churn"] {
					t.Errorf("initial events before the bookmark: %v", seen)
				}
				return
			}
			if ev.Type != "ADDED" {
				t.Fatalf("initial event %s", ev.Type)
			}
			seen[o.GetName()] = true
		case <-time.After(10 * time.Second):
			t.Fatal("no initial-events-end bookmark")
		}
	}
}

func TestTheEventsV1BroadcasterAndUnstructuredApply(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(config)
	ctx := ctxT(t)
	ns := namespace(t, cs, "events-v1")
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "regarding"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := eventsv1.NewBroadcaster(&eventsv1.EventSinkImpl{Interface: cs.EventsV1()})
	stop := make(chan struct{})
	defer close(stop)
	b.StartRecordingToSink(stop)
	rec := b.NewRecorder(scheme.Scheme, "clientgo-events-v1")
	rec.Eventf(cm, nil, corev1.EventTypeWarning, "Checked", "Checking", "checked %s", cm.Name)
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) == 1 && l.Items[0].Reason == "Checked" && l.Items[0].Action == "Checking" &&
			l.Items[0].ReportingController == "clientgo-events-v1" && l.Items[0].Regarding.Name == "regarding", nil
	}); err != nil {
		t.Errorf("the events/v1 Event was not listed: %v", err)
	}
	// The core/v1 view of it.
	core, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(core.Items) != 1 || core.Items[0].Message != "checked regarding" || core.Items[0].Type != corev1.EventTypeWarning {
		t.Errorf("core/v1 view: %v %+v", err, core)
	}

	// Server-side apply of an unstructured object through the dynamic client.
	dyn := dynamic.NewForConfigOrDie(config)
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]interface{}{"name": "applied", "namespace": ns},
		"data":     map[string]interface{}{"a": "1"},
	}}
	got, err := dyn.Resource(gvr).Namespace(ns).Apply(ctx, "applied", u, metav1.ApplyOptions{FieldManager: "dyn"})
	if err != nil {
		t.Fatalf("dynamic apply: %v", err)
	}
	mf := got.GetManagedFields()
	if len(mf) != 1 || mf[0].Manager != "dyn" || mf[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Errorf("managedFields after apply: %+v", mf)
	}
	u.Object["data"] = map[string]interface{}{"a": "2"}
	_, err = dyn.Resource(gvr).Namespace(ns).Apply(ctx, "applied", u, metav1.ApplyOptions{FieldManager: "other"})
	if !apierrors.IsConflict(err) {
		t.Errorf("a second manager's apply: %v, want Conflict", err)
	}
}
