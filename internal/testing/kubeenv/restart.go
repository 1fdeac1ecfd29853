package kubeenv

import (
	"context"
	"fmt"
	"time"
)

// Crash kills one control-plane program (etcd, kube-apiserver or
// kube-controller-manager) with SIGKILL, starts it again with the same flags and data,
// and waits until the API server is ready again: the chaos tests' crash and restart.
// Its log goes on in a new file (<name>-restart<N>.log).
func (e *Env) Crash(name string, timeout time.Duration) error {
	i, p := e.find(name)
	if p == nil {
		return fmt.Errorf("kubeenv: no process %q to crash", name)
	}
	p.kill()
	e.restarts++
	np, err := startProcess(e.dir, fmt.Sprintf("%s-restart%d", name, e.restarts), p.bin, p.args)
	if err != nil {
		return err
	}
	np.name = name
	e.procs[i] = np
	_, api := e.find("kube-apiserver")
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return waitReady(ctx, e.Config, api)
}

func (e *Env) find(name string) (int, *process) {
	for i, p := range e.procs {
		if p.name == name {
			return i, p
		}
	}
	return -1, nil
}
