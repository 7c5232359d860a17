// Package clientgo drives `crest serve` with client-go: typed clientsets (protobuf), the dynamic
// client, discovery and the RESTMapper, informers, pager, optimistic concurrency, server-side
// apply, leader election and event recorders.
package clientgo

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/crest-dev/crest/tests/go/internal/crest"
)

var config *rest.Config

// serve starts `crest serve` on a free loopback port in a new directory with extra flags, and
// returns its client configuration and a function that stops it by PID.
func serve(extra ...string) (*rest.Config, func(), error) {
	dir, err := os.MkdirTemp("", "crest-clientgo-")
	if err != nil {
		return nil, nil, err
	}
	data := filepath.Join(dir, "data")
	args := append([]string{"serve", "--data-dir", data, "--listen", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(crest.Binary(), args...)
	cmd.Stderr, cmd.Stdout = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_, _ = cmd.Process.Wait()
		os.RemoveAll(dir)
	}
	kubeconfig := filepath.Join(data, "kubeconfig")
	for i := 0; i < 500; i++ {
		if _, err := os.Stat(kubeconfig); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		stop()
		return nil, nil, err
	}
	return cfg, stop, nil
}

// TestMain starts one `crest serve` for the package and stops it by PID.
func TestMain(m *testing.M) {
	cfg, stop, err := serve()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	config = cfg
	code := m.Run()
	stop()
	os.Exit(code)
}
