package kubeenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Options choose what Start runs.
type Options struct {
	// ControllerManager also runs kube-controller-manager with the Job,
	// garbage-collector, namespace and resourceclaim controllers (Jobs then create
	// their pods; a pod's ResourceClaimTemplates become its ResourceClaims, and a
	// claim whose pods are gone is released, as in a cluster with DRA).
	ControllerManager bool
	// StartTimeout bounds the wait for readiness; 0 means 90 seconds.
	StartTimeout time.Duration
	// CRDDirs are directories of CRD YAML files (e.g. "../../config/crd/bases")
	// installed and established before Start returns.
	CRDDirs []string
}

// Env is a running control plane. Stop it with Stop.
type Env struct {
	// Config reaches the API server as a member of system:masters.
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file for the same identity (for
	// kubectl or `gantry controller --kubeconfig` against the test cluster).
	Kubeconfig string

	dir      string
	procs    []*process // in start order; stopped in reverse
	restarts int        // numbers the logs of restarted programs (Crash)
}

// Start runs etcd and kube-apiserver (and kube-controller-manager when asked) and
// waits until the API server is ready. On error nothing is left running.
func Start(opts Options) (env *Env, err error) {
	bins, err := FindBinaries(opts.ControllerManager)
	if err != nil {
		return nil, err
	}
	timeout := opts.StartTimeout
	if timeout == 0 {
		timeout = 90 * time.Second
	}
	dir, err := os.MkdirTemp("", "gantry-kubeenv-")
	if err != nil {
		return nil, fmt.Errorf("kubeenv: %w", err)
	}
	env = &Env{dir: dir}
	defer func() {
		if err != nil {
			env.Stop()
			env = nil
		}
	}()
	ports, err := freePorts(3)
	if err != nil {
		return env, err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	if err := env.startEtcd(bins.Etcd, etcdURL, ports[1]); err != nil {
		return env, err
	}
	token, err := newToken()
	if err != nil {
		return env, err
	}
	api, err := env.startAPIServer(bins.APIServer, etcdURL, ports[2], token)
	if err != nil {
		return env, err
	}
	env.Config = &rest.Config{
		Host:            "https://127.0.0.1:" + strconv.Itoa(ports[2]),
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: filepath.Join(dir, "certs", "apiserver.crt")},
		QPS:             1000,
		Burst:           2000,
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := waitReady(ctx, env.Config, api); err != nil {
		return env, err
	}
	if env.Kubeconfig, err = writeKubeconfig(dir, env.Config); err != nil {
		return env, err
	}
	if opts.ControllerManager {
		if err := env.startControllerManager(bins.ControllerManager); err != nil {
			return env, err
		}
	}
	for _, d := range opts.CRDDirs {
		if err := env.InstallCRDs(ctx, d); err != nil {
			return env, err
		}
	}
	return env, nil
}

// Stop terminates the control plane and removes its temporary directory. It is
// safe to call more than once and on a nil Env.
func (e *Env) Stop() {
	if e == nil {
		return
	}
	for i := len(e.procs) - 1; i >= 0; i-- {
		e.procs[i].stop(10 * time.Second)
	}
	e.procs = nil
	if e.dir != "" && os.Getenv("GANTRY_KUBEENV_KEEP") == "" {
		_ = os.RemoveAll(e.dir)
	}
}

// Dir is the temporary directory holding the logs, keys and etcd data.
func (e *Env) Dir() string { return e.dir }

func (e *Env) startEtcd(bin, clientURL string, peerPort int) error {
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	p, err := startProcess(e.dir, "etcd", bin, []string{
		"--data-dir=" + filepath.Join(e.dir, "etcd"),
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=default=" + peerURL,
	})
	if err != nil {
		return err
	}
	e.procs = append(e.procs, p)
	return nil
}

func (e *Env) startAPIServer(bin, etcdURL string, port int, token string) (*process, error) {
	keyPath, pubPath, err := writeServiceAccountKeys(e.dir)
	if err != nil {
		return nil, err
	}
	tokens := filepath.Join(e.dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(token+",gantry-test-admin,1,\"system:masters\"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("kubeenv: %w", err)
	}
	// No node lifecycle controller runs (not even with the controller manager, which
	// gets only the Job, GC, namespace and resourceclaim controllers), so nothing would remove the
	// not-ready taint TaintNodesByCondition adds; and no token controller serves the
	// ServiceAccount plugin. Disable both so plain Node and Pod objects work.
	disabled := "ServiceAccount,TaintNodesByCondition"
	p, err := startProcess(e.dir, "kube-apiserver", bin, []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(e.dir, "certs"),
		"--service-account-issuer=https://localhost",
		"--service-account-key-file=" + pubPath,
		"--service-account-signing-key-file=" + keyPath,
		"--token-auth-file=" + tokens,
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--disable-admission-plugins=" + disabled,
		"--allow-privileged=true",
	})
	if err != nil {
		return nil, err
	}
	e.procs = append(e.procs, p)
	return p, nil
}

func (e *Env) startControllerManager(bin string) error {
	p, err := startProcess(e.dir, "kube-controller-manager", bin, []string{
		"--kubeconfig=" + e.Kubeconfig,
		"--controllers=job-controller,garbage-collector-controller,namespace-controller,resourceclaim-controller",
		"--leader-elect=false",
		"--secure-port=0",
		// The default 20 QPS would make pod creation, not Gantry, the bottleneck of
		// the scale test.
		"--kube-api-qps=1000",
		"--kube-api-burst=2000",
	})
	if err != nil {
		return err
	}
	e.procs = append(e.procs, p)
	// Give it a moment to fail on bad flags, so that surfaces here and not as a
	// Job that never creates pods.
	time.Sleep(300 * time.Millisecond)
	if !p.running() {
		return p.failure("failed to start")
	}
	return nil
}

// waitReady polls /readyz until it answers ok, the API server exits, or ctx ends. The
// client is made once the server has written its self-signed certificate.
func waitReady(ctx context.Context, cfg *rest.Config, api *process) error {
	var cs *kubernetes.Clientset
	var last error
	for {
		if !api.running() {
			return api.failure("exited before it was ready")
		}
		if cs == nil {
			if _, err := os.Stat(cfg.CAFile); err == nil {
				if cs, err = kubernetes.NewForConfig(cfg); err != nil {
					return fmt.Errorf("kubeenv: client: %w", err)
				}
			}
		}
		if cs != nil {
			body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
			if err == nil && string(body) == "ok" {
				return nil
			}
			last = err
		}
		select {
		case <-ctx.Done():
			return errors.Join(api.failure("not ready in time"), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// writeKubeconfig writes a kubeconfig for cfg's identity and returns its path.
func writeKubeconfig(dir string, cfg *rest.Config) (string, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["kubeenv"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthority: cfg.CAFile}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["kubeenv"] = &clientcmdapi.Context{Cluster: "kubeenv", AuthInfo: "admin"}
	kc.CurrentContext = "kubeenv"
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return "", fmt.Errorf("kubeenv: kubeconfig: %w", err)
	}
	return path, nil
}
