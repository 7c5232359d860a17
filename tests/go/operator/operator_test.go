package operator

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/crest-dev/crest/tests/go/internal/crest"
)

// TestMain points KUBEBUILDER_ASSETS at Crest's binaries unless it is set already.
func TestMain(m *testing.M) { os.Exit(crest.RunWithAssets(m)) }

// eventually polls cond every 50 ms until it holds or 20 s pass.
func eventually(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: not within 20s (last error: %v)", what, last)
}

func TestTheOperatorReconcilesCronTabs(t *testing.T) {
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "envtest", "testdata")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest Start: %v", err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			t.Errorf("envtest Stop: %v", err)
		}
	}()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatalf("manager: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cleaned := make(chan string, 4)
	r := &CronTabReconciler{Client: mgr.GetClient(), CleanedUp: cleaned}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		t.Fatalf("setup: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

	// A direct client, not the manager's cache.
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ct := &CronTab{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nightly"},
		Spec:       CronTabSpec{CronSpec: "0 3 * * *", Image: "backup:1", Replicas: 2},
	}
	if err := c.Create(ctx, ct); err != nil {
		t.Fatalf("create: %v", err)
	}

	// The reconciler adds its finalizer, owns a ConfigMap and reports Ready.
	var got CronTab
	eventually(t, "Ready with the finalizer", func() (bool, error) {
		if err := c.Get(ctx, Key("default", "nightly"), &got); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(got.Status.Conditions, "Ready") &&
			len(got.Finalizers) == 1 && got.Finalizers[0] == Finalizer && got.Status.Replicas == 2, nil
	})
	var cm corev1.ConfigMap
	if err := c.Get(ctx, Key("default", "nightly-config"), &cm); err != nil {
		t.Fatalf("the owned ConfigMap: %v", err)
	}
	owner := metav1.GetControllerOf(&cm)
	if owner == nil || owner.Kind != "CronTab" || owner.Name != "nightly" || owner.UID != got.UID ||
		owner.BlockOwnerDeletion == nil || !*owner.BlockOwnerDeletion {
		t.Fatalf("the ConfigMap's controller reference: %+v", owner)
	}

	// The field index on the manager's cache finds it.
	eventually(t, "the owner index", func() (bool, error) {
		var cms corev1.ConfigMapList
		if err := mgr.GetClient().List(ctx, &cms, client.InNamespace("default"), client.MatchingFields{OwnerIndex: "nightly"}); err != nil {
			return false, err
		}
		return len(cms.Items) == 1 && cms.Items[0].Name == "nightly-config", nil
	})

	// A merge patch of the spec (a new generation) is reconciled into the ConfigMap and status.
	before := got.DeepCopy()
	got.Spec.CronSpec = "0 4 * * *"
	got.Spec.Replicas = 4
	if err := c.Patch(ctx, &got, client.MergeFrom(before)); err != nil {
		t.Fatalf("merge patch: %v", err)
	}
	if got.Generation != before.Generation+1 {
		t.Errorf("generation %d after a spec change, want %d", got.Generation, before.Generation+1)
	}
	eventually(t, "the new schedule reconciled", func() (bool, error) {
		if err := c.Get(ctx, Key("default", "nightly-config"), &cm); err != nil {
			return false, err
		}
		var now CronTab
		if err := c.Get(ctx, Key("default", "nightly"), &now); err != nil {
			return false, err
		}
		cond := meta.FindStatusCondition(now.Status.Conditions, "Ready")
		return cm.Data["cronSpec"] == "0 4 * * *" && now.Status.Replicas == 4 &&
			cond != nil && cond.ObservedGeneration == now.Generation, nil
	})

	// A ConfigMap changed behind the controller's back is put right (Owns()).
	cm.Data["cronSpec"] = "tampered"
	if err := c.Update(ctx, &cm); err != nil {
		t.Fatalf("update the ConfigMap: %v", err)
	}
	eventually(t, "the ConfigMap restored", func() (bool, error) {
		if err := c.Get(ctx, Key("default", "nightly-config"), &cm); err != nil {
			return false, err
		}
		return cm.Data["cronSpec"] == "0 4 * * *", nil
	})

	// Server-side apply of a label with client.Apply, as an unstructured object.
	apply := &unstructured.Unstructured{}
	apply.SetGroupVersionKind(GroupVersion.WithKind("CronTab"))
	apply.SetNamespace("default")
	apply.SetName("nightly")
	apply.SetLabels(map[string]string{"team": "ops"})
	if err := c.Patch(ctx, apply, client.Apply, client.FieldOwner("labeller"), client.ForceOwnership); err != nil { //nolint:staticcheck
		t.Fatalf("apply: %v", err)
	}
	if apply.GetLabels()["team"] != "ops" {
		t.Errorf("labels after apply: %v", apply.GetLabels())
	}

	// Deleting waits for the finalizer, which the reconciler removes; then the owned
	// ConfigMap is garbage-collected.
	if err := c.Delete(ctx, &CronTab{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nightly"}}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	select {
	case name := <-cleaned:
		if name != "nightly" {
			t.Errorf("cleaned up %q", name)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the finalizer was not removed")
	}
	eventually(t, "the CronTab gone", func() (bool, error) {
		err := c.Get(ctx, Key("default", "nightly"), &got)
		return apierrors.IsNotFound(err), err
	})
	eventually(t, "the owned ConfigMap garbage-collected", func() (bool, error) {
		err := c.Get(ctx, Key("default", "nightly-config"), &cm)
		return apierrors.IsNotFound(err), err
	})
}
