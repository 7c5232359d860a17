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

// TestMain starts one `crest serve` on a free loopback port for the package (the binary of
// CREST_BIN, else the workspace's debug build) and stops it by PID.
func TestMain(m *testing.M) {
	bin := crest.Binary()
	dir, err := os.MkdirTemp("", "crest-clientgo-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	data := filepath.Join(dir, "data")
	cmd := exec.Command(bin, "serve", "--data-dir", data, "--listen", "127.0.0.1:0")
	cmd.Stderr, cmd.Stdout = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_, _ = cmd.Process.Wait()
			os.RemoveAll(dir)
		}()
		kubeconfig := filepath.Join(data, "kubeconfig")
		for i := 0; i < 300; i++ {
			if _, err := os.Stat(kubeconfig); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		config = cfg
		return m.Run()
	}()
	os.Exit(code)
}
