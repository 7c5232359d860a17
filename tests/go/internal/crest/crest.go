// Package crest finds the crest binary the Go tests run and lays out envtest's assets from it.
package crest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Binary is the crest binary under test: CREST_BIN, else the workspace's debug build.
func Binary() string {
	if bin := os.Getenv("CREST_BIN"); bin != "" {
		return bin
	}
	_, here, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(here), "..", "..", "..", "..", "target", "debug", "crest")
}

// RunWithAssets runs the tests with KUBEBUILDER_ASSETS pointing at a directory laid out by
// `crest envtest-assets`, unless it is set already, and returns m.Run's code.
func RunWithAssets(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") != "" {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "crest-envtest-assets-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if out, err := exec.Command(Binary(), "envtest-assets", dir).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "%s envtest-assets: %v\n%s", Binary(), err, out)
		return 1
	}
	os.Setenv("KUBEBUILDER_ASSETS", dir)
	return m.Run()
}
