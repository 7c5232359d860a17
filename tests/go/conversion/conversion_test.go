package conversion

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/crest-dev/crest/tests/go/internal/crest"
)

func TestMain(m *testing.M) { os.Exit(crest.RunWithAssets(m)) }

func TestAHubAndSpokeCRDConvertsThroughEnvtestsWebhookWiring(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	env := &envtest.Environment{
		Scheme:                scheme,
		CRDDirectoryPaths:     []string{filepath.Join("testdata")},
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
	wo := env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: wo.LocalServingHost, Port: wo.LocalServingPort, CertDir: wo.LocalServingCertDir,
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &CronTabV1{}).Complete(); err != nil {
		t.Fatalf("conversion webhook: %v", err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &CronTabV2{}).Complete(); err != nil {
		t.Fatalf("conversion webhook: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	// envtest rewrote the CRD's conversion to its webhook server, with its CA.
	// Written as v2, stored as v1, read back in both.
	v2 := &CronTabV2{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "spoke"}, Spec: SpecV2{Schedule: "0 5 * * *", Replicas: 3}}
	deadline := time.Now().Add(20 * time.Second)
	for {
		err = c.Create(ctx, v2)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond) // the webhook server starting
	}
	if err != nil {
		t.Fatalf("create as v2: %v", err)
	}
	var hub CronTabV1
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "spoke"}, &hub); err != nil {
		t.Fatalf("get as v1: %v", err)
	}
	if hub.Spec.CronSpec != "0 5 * * *" || hub.Spec.Replicas != 3 {
		t.Errorf("read as v1: %+v", hub)
	}
	var back CronTabV2
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "spoke"}, &back); err != nil {
		t.Fatalf("get as v2: %v", err)
	}
	if back.Spec.Schedule != "0 5 * * *" {
		t.Errorf("read as v2: %+v", back)
	}
	var list CronTabV2List
	if err := c.List(ctx, &list, client.InNamespace("default")); err != nil || len(list.Items) != 1 || list.Items[0].Spec.Schedule != "0 5 * * *" {
		t.Errorf("list as v2: %v %+v", err, list)
	}
}
