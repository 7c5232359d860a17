package envtest_test

import (
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// BenchmarkEnvironmentStart times envtest's Environment.Start() (etcd, kube-apiserver, the
// seed's CRD installed and established) and Stop() with the binaries of KUBEBUILDER_ASSETS:
//
//	go test ./envtest -run '^$' -bench EnvironmentStart -benchtime 20x
func BenchmarkEnvironmentStart(b *testing.B) {
	for i := 0; i < b.N; i++ {
		env := &envtest.Environment{
			CRDDirectoryPaths:     []string{filepath.Join("testdata")},
			ErrorIfCRDPathMissing: true,
		}
		if _, err := env.Start(); err != nil {
			b.Fatalf("Start: %v", err)
		}
		b.StopTimer()
		if err := env.Stop(); err != nil {
			b.Fatalf("Stop: %v", err)
		}
		b.StartTimer()
	}
}
