package kubeenv

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// SchedulerOptions configure StartScheduler.
type SchedulerOptions struct {
	// QPS and Burst limit kube-scheduler's API client (clientConnection in its config
	// file); 0 keeps the upstream defaults (50 and 100).
	QPS   int
	Burst int
	// ReadyTimeout bounds the wait for /readyz; 0 means 60 seconds.
	ReadyTimeout time.Duration
}

// StartScheduler runs kube-scheduler (from hack/bench-env.sh) with the default profile
// against the API server, without leader election, and waits until its /readyz answers
// ok, that is until its informers synced and it schedules. Stop it with
// StopProgram("kube-scheduler").
func (e *Env) StartScheduler(opts SchedulerOptions) error {
	bins, err := FindBenchBinaries()
	if err != nil {
		return err
	}
	config, err := e.writeSchedulerConfig(opts)
	if err != nil {
		return err
	}
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	p, err := startProcess(e.dir, "kube-scheduler", bins.Scheduler, []string{
		"--config=" + config,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports[0]),
		"--cert-dir=" + filepath.Join(e.dir, "scheduler-certs"),
		// Delegated authentication and authorization ask the API server; /readyz is on
		// the always-allowed paths, so the readiness poll below needs no credentials.
		"--authentication-kubeconfig=" + e.Kubeconfig,
		"--authorization-kubeconfig=" + e.Kubeconfig,
	})
	if err != nil {
		return err
	}
	e.procs = append(e.procs, p)
	timeout := opts.ReadyTimeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return waitHTTPSReady(ctx, "https://127.0.0.1:"+strconv.Itoa(ports[0])+"/readyz", p)
}

// writeSchedulerConfig writes the KubeSchedulerConfiguration StartScheduler passes
// with --config (client limits can only be set there) and returns its path.
func (e *Env) writeSchedulerConfig(opts SchedulerOptions) (string, error) {
	conf := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" +
		"leaderElection:\n  leaderElect: false\n" +
		"clientConnection:\n  kubeconfig: " + strconv.Quote(e.Kubeconfig) + "\n"
	if opts.QPS > 0 {
		conf += "  qps: " + strconv.Itoa(opts.QPS) + "\n"
	}
	if opts.Burst > 0 {
		conf += "  burst: " + strconv.Itoa(opts.Burst) + "\n"
	}
	path := filepath.Join(e.dir, "kube-scheduler.yaml")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		return "", fmt.Errorf("kubeenv: kube-scheduler config: %w", err)
	}
	return path, nil
}

// waitHTTPSReady polls url (a self-signed endpoint of p) until it answers 200 ok, p
// exits, or ctx ends.
func waitHTTPSReady(ctx context.Context, url string, p *process) error {
	// The program's serving certificate is self-signed on the spot; nothing but the
	// readiness answer travels over this connection.
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // local readiness probe only
	}}
	var last error
	for {
		if !p.running() {
			return p.failure("exited before it was ready")
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("kubeenv: %s: %w", url, err)
		}
		resp, err := hc.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && string(body) == "ok" {
				return nil
			}
			err = fmt.Errorf("%s: %s: %s", url, resp.Status, body)
		}
		last = err
		select {
		case <-ctx.Done():
			return errors.Join(p.failure("not ready in time"), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
