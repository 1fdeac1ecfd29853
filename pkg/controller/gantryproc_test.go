package controller

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// gantryProc is `gantry controller` running as a child process against the test
// control plane, as a user runs it: the chaos test kills it, the binding benchmark
// runs it beside kube-scheduler, each binder a process of its own.
type gantryProc struct {
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
}

// buildGantry builds the gantry binary for the test.
func buildGantry(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gantry")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/gantry").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startGantry runs `gantry controller` with the test's kubeconfig, metrics off, and
// flags; its output goes to a log file in the test's temporary directory.
func startGantry(t testing.TB, bin string, flags ...string) *gantryProc {
	t.Helper()
	args := append([]string{"controller", "--kubeconfig", testEnv.Kubeconfig, "--metrics-bind-address=0"}, flags...)
	cmd := exec.Command(bin, args...)
	path := filepath.Join(t.TempDir(), "controller.log")
	log, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := &gantryProc{cmd: cmd, log: path, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(g.exited)
	}()
	return g
}

// waitReady polls the controller's /readyz on addr (its --health-probe-bind-address)
// until it answers 200 (the informers synced), the process exits, or timeout passes.
func (g *gantryProc) waitReady(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-g.exited:
			return fmt.Errorf("gantry controller exited before it was ready (log: %s)", g.log)
		default:
		}
		if resp, err := client.Get("http://" + addr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("gantry controller not ready after %s (log: %s)", timeout, g.log)
}

// kill stops the controller at once, as a crash would.
func (g *gantryProc) kill() {
	_ = g.cmd.Process.Signal(syscall.SIGKILL)
	<-g.exited
}

// stop asks the controller to shut down, and kills it if it has not within 30 s.
func (g *gantryProc) stop() {
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.exited:
	case <-time.After(30 * time.Second):
		g.kill()
	}
}
