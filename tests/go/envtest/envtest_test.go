// Package envtest_test runs controller-runtime's envtest, unchanged, with Crest's binaries as
// its control plane: KUBEBUILDER_ASSETS is a directory laid out by `crest envtest-assets`.
package envtest_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/crest-dev/crest/tests/go/internal/crest"
)

// TestMain points KUBEBUILDER_ASSETS at Crest's binaries unless it is set already.
func TestMain(m *testing.M) { os.Exit(crest.RunWithAssets(m)) }

var cronTabGVK = schema.GroupVersionKind{Group: "stable.example.com", Version: "v1", Kind: "CronTab"}

func cronTab(name string, replicas int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(cronTabGVK)
	u.SetNamespace("default")
	u.SetName(name)
	_ = unstructured.SetNestedField(u.Object, "* * * * */5", "spec", "cronSpec")
	_ = unstructured.SetNestedField(u.Object, replicas, "spec", "replicas")
	return u
}

func start(t *testing.T) (*envtest.Environment, client.Client) {
	t.Helper()
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("testdata")},
		ErrorIfCRDPathMissing: true,
	}
	began := time.Now()
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest Start: %v", err)
	}
	t.Logf("envtest Start with Crest's binaries: %v", time.Since(began))
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("envtest Stop: %v", err)
		}
	})
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return env, c
}

func TestEnvironmentStartsAndServesTheCRD(t *testing.T) {
	env, c := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// The CRD envtest installed is established and served.
	if err := c.Create(ctx, cronTab("first", 3)); err != nil {
		t.Fatalf("create CronTab: %v", err)
	}
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(cronTabGVK)
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "first"}, got); err != nil {
		t.Fatalf("get CronTab: %v", err)
	}
	if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); r != 3 {
		t.Errorf("spec.replicas = %d, want 3", r)
	}
	// The schema is enforced: replicas above the maximum is Invalid.
	err := c.Create(ctx, cronTab("too-many", 11))
	if !apierrors.IsInvalid(err) {
		t.Errorf("create with replicas 11: got %v, want an Invalid error", err)
	}

	// Typed clientset (protobuf, as client-go negotiates for built-ins).
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"a": "1"}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ConfigMap: %v", err)
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second create: got %v, want AlreadyExists", err)
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "absent", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get absent: got %v, want NotFound", err)
	}
}

func TestObjectsSurviveAnAPIServerRestart(t *testing.T) {
	env, c := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.Create(ctx, cronTab("kept", 2)); err != nil {
		t.Fatalf("create: %v", err)
	}
	// Tests stop and start the API server while etcd keeps running.
	if err := env.ControlPlane.APIServer.Stop(); err != nil {
		t.Fatalf("stop the API server: %v", err)
	}
	if err := env.ControlPlane.APIServer.Start(); err != nil {
		t.Fatalf("start the API server again: %v", err)
	}
	// A restarted API server with a temporary cert dir serves a new certificate from a new CA
	// (envtest regenerates them, as for kube-apiserver): a client of the new configuration.
	admin, err := env.ControlPlane.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := client.New(admin.Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(cronTabGVK)
	if err := c2.Get(ctx, client.ObjectKey{Namespace: "default", Name: "kept"}, got); err != nil {
		t.Fatalf("get after the restart: %v", err)
	}
	if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); r != 2 {
		t.Errorf("spec.replicas after the restart = %d, want 2", r)
	}
}

func TestUsersAddedWithAddUserAreAuthorizedByRBAC(t *testing.T) {
	env, _ := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	user, err := env.AddUser(envtest.User{Name: "alice", Groups: []string{"dev"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(user.Config())
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("alice lists ConfigMaps: got %v, want Forbidden", err)
	}
	want := `configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "default"`
	if err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
}

func TestEnvironmentsStartedInParallelAreIsolated(t *testing.T) {
	_, a := start(t)
	_, b := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Create(ctx, cronTab("only-in-a", 1)); err != nil {
		t.Fatal(err)
	}
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(cronTabGVK)
	if err := b.Get(ctx, client.ObjectKey{Namespace: "default", Name: "only-in-a"}, got); !apierrors.IsNotFound(err) {
		t.Fatalf("the second environment sees the first's object: %v", err)
	}
}

func TestTheAPIServerStopsWithinASecondWithAWatchOpen(t *testing.T) {
	env, _ := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"}
	w, err := dyn.Resource(gvr).Namespace("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	began := time.Now()
	// SIGTERM, then envtest waits (up to 20 s before it kills).
	if err := env.ControlPlane.APIServer.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if took := time.Since(began); took > time.Second {
		t.Errorf("the API server took %v to stop with a watch open, want at most 1s", took)
	}
	// The watch ends with the server.
	select {
	case _, open := <-w.ResultChan():
		for open {
			_, open = <-w.ResultChan()
		}
	case <-time.After(5 * time.Second):
		t.Error("the watch did not end when the server stopped")
	}
}

func TestServiceAccountTokensAreSignedWithEnvtestsKey(t *testing.T) {
	env, _ := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ServiceAccount: %v", err)
	}
	tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, "robot", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest: %v", err)
	}
	// Signed with --service-account-signing-key-file (envtest's sa-signer.key) for the issuer
	// envtest gives, and verified with --service-account-key-file (its certificate).
	cfg := rest.AnonymousClientConfig(env.Config)
	cfg.BearerToken = tr.Status.Token
	robot, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review, err := robot.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectReview with the token: %v", err)
	}
	if got := review.Status.UserInfo.Username; got != "system:serviceaccount:default:robot" {
		t.Errorf("the token authenticates as %q", got)
	}
}
